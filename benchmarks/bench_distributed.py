"""torch.distributed on ocl tensors against Gloo on CPU tensors, in one run on this machine.

    python benchmarks/bench_distributed.py [--sizes-mb 1 4 16 64 256] [--out benchmarks/results]

(a) all_reduce (sum, float32) bandwidth on 2 ranks for each size: ocl tensors (staged through
    pinned host memory by torch-ocl, then Gloo) against CPU tensors (Gloo alone), in the same
    processes and group, taking turns within each repeat; bandwidth = bytes / time of the call
    (the ocl time includes the copy back: the device is synchronised after each call). The ratio
    CPU time / ocl time is what the staging leaves of Gloo's speed (1.0 = free).
(b) DDP training step (the demo CNN of examples/train_cnn.py, batch 64 per rank, SGD) on 2 ranks
    against 1 rank (same per-rank batch): step time and images/s over all ranks. Both ranks share
    this machine's device and CPU cores, so this measures the overhead of the data-parallel step,
    not a speed-up.

Writes bench_distributed.json and bench_distributed.png to --out and prints progress and a table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))


def _init(rank, world, init_file):
    dist.init_process_group(
        "cpu:gloo,ocl:oclgloo",
        init_method=f"file://{init_file}",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=600),
    )


def _say(rank, text):
    if rank == 0:
        print(text, flush=True)


def bench_all_reduce(rank, sizes_mb, repeats):
    rows = []
    for mb in sizes_mb:
        numel = int(mb * 2**20) // 4
        cpu = torch.ones(numel)
        ocl = torch.ones(numel, device="ocl")
        times = {"cpu": [], "ocl": []}
        for rep in range(repeats + 1):  # the first round warms up (buffers, connections)
            for kind, t in (("cpu", cpu), ("ocl", ocl)):
                dist.barrier()
                if kind == "ocl":
                    torch.ocl.synchronize()
                start = time.perf_counter()
                dist.all_reduce(t)
                if kind == "ocl":
                    torch.ocl.synchronize()  # the copy back has landed
                if rep:
                    times[kind].append(time.perf_counter() - start)
                t.fill_(1.0)
        best = {k: min(v) for k, v in times.items()}
        # The staging's share: the device-to-host and host-to-device copies alone (no Gloo).
        host = torch.empty(numel, pin_memory=True)
        copies = []
        for _ in range(repeats):
            torch.ocl.synchronize()
            start = time.perf_counter()
            host.copy_(ocl, non_blocking=True)
            torch.ocl.synchronize()
            ocl.copy_(host, non_blocking=True)
            torch.ocl.synchronize()
            copies.append(time.perf_counter() - start)
        del host
        row = {
            "size_mb": mb,
            "cpu_s": best["cpu"],
            "ocl_s": best["ocl"],
            "cpu_gb_s": numel * 4 / best["cpu"] / 1e9,
            "ocl_gb_s": numel * 4 / best["ocl"] / 1e9,
            "ratio": best["cpu"] / best["ocl"],
            "staging_copies_s": min(copies),
            "copy_gb_s": 2 * numel * 4 / min(copies) / 1e9,
        }
        rows.append(row)
        _say(
            rank,
            f"  all_reduce {mb:6.1f} MB: Gloo on CPU tensors {row['cpu_gb_s']:6.2f} GB/s, "
            f"ocl {row['ocl_gb_s']:6.2f} GB/s, ratio {row['ratio']:.2f}; the two staging copies "
            f"alone {row['staging_copies_s'] * 1e3:.1f} ms ({row['copy_gb_s']:.1f} GB/s)",
        )
        del cpu, ocl
    return rows


def bench_ddp_step(rank, world, steps, batch):
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    from torch.nn.parallel import DistributedDataParallel as DDP
    from train_cnn import make_model

    torch.manual_seed(0)
    model = DDP(make_model().to("ocl"))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(batch, 1, 8, 8, generator=g).to("ocl")
    y = torch.randint(0, 10, (batch,), generator=g).to("ocl")

    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    torch.ocl.synchronize()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.ocl.synchronize()
    seconds = (time.perf_counter() - start) / steps
    return {"world": world, "step_s": seconds, "images_s": world * batch / seconds}


def _rank(rank, world, init_file, args, out_file):
    _init(rank, world, init_file)
    result = {}
    if world == 2 and not args.skip_all_reduce:
        _say(rank, f"(a) all_reduce, {world} ranks, best of {args.repeats}")
        result["all_reduce"] = bench_all_reduce(rank, args.sizes_mb, args.repeats)
    _say(rank, f"(b) DDP step on {world} rank(s), {args.steps} steps")
    result["ddp"] = bench_ddp_step(rank, world, args.steps, args.batch)
    _say(rank, f"  {result['ddp']['step_s'] * 1e3:.1f} ms per step")
    if rank == 0:
        with open(out_file, "w") as f:
            json.dump(result, f)
    dist.destroy_process_group()


def _spawn(world, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rank0.json")
        mp.spawn(_rank, args=(world, os.path.join(tmp, "init"), args, out), nprocs=world)
        with open(out) as f:
            return json.load(f)


def chart(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    rows = results["all_reduce"]
    sizes = [r["size_mb"] for r in rows]
    ax1.plot(sizes, [r["cpu_gb_s"] for r in rows], "o-", label="Gloo, CPU tensors")
    ax1.plot(sizes, [r["ocl_gb_s"] for r in rows], "s-", label="oclgloo, ocl tensors (staged)")
    ax1.set_xscale("log", base=2)
    ax1.set_xlabel("all_reduce size (MB, float32)")
    ax1.set_ylabel("GB/s (bytes / time of the call)")
    ax1.set_title("all_reduce, 2 ranks on one machine")
    ax1.legend()
    ax1.grid(alpha=0.3)
    ddp = [results["ddp_1"], results["ddp_2"]]
    ax2.bar(["1 rank", "2 ranks"], [d["step_s"] * 1e3 for d in ddp], color=["C0", "C1"])
    ax2.set_ylabel("ms per step (per-rank batch 64)")
    ax2.set_title("DDP step, demo CNN on ocl")
    ax2.set_ylim(0, max(d["step_s"] for d in ddp) * 1e3 * 1.15)
    for i, d in enumerate(ddp):
        ax2.text(i, d["step_s"] * 1e3, f"{d['images_s']:.0f} img/s", ha="center", va="bottom")
    fig.suptitle(results["meta"]["device_name"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[1, 4, 16, 64, 256])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64, help="per rank")
    parser.add_argument("--skip-all-reduce", action="store_true")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    import torch_ocl  # noqa: F401

    results = {
        "meta": {
            "device_name": torch.ocl.get_device_name(0),
            "torch": torch.__version__,
            "torch_ocl": torch_ocl.__version__,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
    }
    print(f"device: {results['meta']['device_name']}", flush=True)
    two = _spawn(2, args)
    args.skip_all_reduce = True
    one = _spawn(1, args)
    results["all_reduce"] = two.get("all_reduce", [])
    results["ddp_1"], results["ddp_2"] = one["ddp"], two["ddp"]
    results["ddp_step_ratio_2_vs_1"] = two["ddp"]["step_s"] / one["ddp"]["step_s"]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_distributed.json"), "w") as f:
        json.dump(results, f, indent=1)
    if results["all_reduce"]:
        chart(results, os.path.join(args.out, "bench_distributed.png"))
    print("\nall_reduce      Gloo/CPU GB/s   ocl GB/s   CPU time / ocl time   copies ms")
    for r in results["all_reduce"]:
        print(
            f"  {r['size_mb']:7.1f} MB  {r['cpu_gb_s']:10.2f}  {r['ocl_gb_s']:9.2f}  "
            f"{r['ratio']:14.2f}  {r['staging_copies_s'] * 1e3:14.1f}"
        )
    one_ms, two_ms = one["ddp"]["step_s"] * 1e3, two["ddp"]["step_s"] * 1e3
    print(
        f"DDP step: 1 rank {one_ms:.1f} ms, 2 ranks {two_ms:.1f} ms "
        f"(x{results['ddp_step_ratio_2_vs_1']:.2f}); images/s {one['ddp']['images_s']:.0f} -> "
        f"{two['ddp']['images_s']:.0f}"
    )
    print(f"wrote {args.out}/bench_distributed.json and .png")


if __name__ == "__main__":
    main()
