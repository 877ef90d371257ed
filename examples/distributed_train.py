"""Data-parallel training (DistributedDataParallel) of the demo CNN on the ocl device.

    torchrun --nproc-per-node 2 examples/distributed_train.py           # 2 ranks on this machine
    python examples/distributed_train.py                                # the same: spawns 2 ranks
    python examples/distributed_train.py --world-size 3 --steps 50

    # Several machines (same script; Gloo's TCP transport): on each of N machines
    torchrun --nnodes N --nproc-per-node 1 --node-rank K \\
        --rdzv-backend c10d --rdzv-endpoint HOST0:29500 examples/distributed_train.py

Each rank trains the network of examples/train_cnn.py (convolutions, batch norm, a residual
block, dropout) on its share of scikit-learn's bundled digits (DistributedSampler; random images if
scikit-learn is missing), with DDP averaging the gradients over the ranks through torch-ocl's
``oclgloo`` backend. Rank LOCAL_RANK uses the ocl device LOCAL_RANK modulo the number of devices,
simulators (Oclgrind) left out: on a machine with one device all ranks share it
(TORCH_OCL_DEVICES=<name> selects which devices count). At the end the ranks compare their
parameters, which DDP keeps identical.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_cnn import make_model  # noqa: E402  (the demo's network)


def digits() -> TensorDataset:
    try:
        from sklearn.datasets import load_digits
    except ImportError:  # the network and the collectives are the point, not the data
        g = torch.Generator().manual_seed(0)
        return TensorDataset(
            torch.randn(1024, 1, 8, 8, generator=g), torch.randint(0, 10, (1024,), generator=g)
        )
    d = load_digits()
    images = (torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0 - 0.5) / 0.5
    return TensorDataset(images, torch.tensor(d.target, dtype=torch.long))


def train(args) -> None:
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    devices = [
        i
        for i in range(torch.ocl.device_count())
        if "oclgrind" not in torch.ocl.get_device_properties(i).platform.lower()
    ] or [0]
    device = torch.device("ocl", devices[local_rank % len(devices)])
    torch.ocl.set_device(device)
    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP broadcasts rank 0's)
    model = DDP(make_model().to(device))
    data = digits()
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, seed=args.seed)
    loader = DataLoader(data, batch_size=args.batch // world, sampler=sampler, drop_last=True)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    step, epoch, start = 0, 0, time.perf_counter()
    while step < args.steps:
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % args.log_every == 0 or step == args.steps:
                print(f"rank {rank}/{world} step {step} loss {loss.item():.4f}", flush=True)
            if step == args.steps:
                break
        epoch += 1
    seconds = time.perf_counter() - start
    # DDP keeps the replicas identical: check it (one number per rank, gathered everywhere).
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    same = all(torch.equal(g.cpu(), gathered[0].cpu()) for g in gathered)
    print(
        f"rank {rank}/{world} on {device}: {args.steps} steps in {seconds:.1f} s "
        f"({args.steps * args.batch / seconds:.0f} images/s over all ranks); "
        f"parameters equal on all ranks: {same}",
        flush=True,
    )


def run(rank: int, world: int, init_file: str, args) -> None:
    """One rank of a run this script started itself (no torchrun)."""
    os.environ["LOCAL_RANK"] = str(rank)
    dist.init_process_group(
        "cpu:gloo,ocl:oclgloo",
        init_method=f"file://{init_file}",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=args.timeout),
    )
    try:
        train(args)
    finally:
        dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64, help="global batch (split over ranks)")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-every", type=int, default=20)
    parser.add_argument(
        "--timeout", type=float, default=300, help="seconds; a dead rank's peers fail after it"
    )
    parser.add_argument("--world-size", type=int, default=2, help="ranks to spawn without torchrun")
    args = parser.parse_args()
    if "RANK" in os.environ:  # started by torchrun: one rank per process, env:// rendezvous
        dist.init_process_group(
            "cpu:gloo,ocl:oclgloo", timeout=datetime.timedelta(seconds=args.timeout)
        )
        try:
            train(args)
        finally:
            dist.destroy_process_group()
        return
    with tempfile.TemporaryDirectory() as tmp:
        torch.multiprocessing.spawn(
            run, args=(args.world_size, os.path.join(tmp, "init"), args), nprocs=args.world_size
        )


if __name__ == "__main__":
    main()
