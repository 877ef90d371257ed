"""Train a small MLP on the OpenCL device: a synthetic, deterministic classification task.

    python examples/train_mlp.py                 # 5 epochs on device "ocl"
    python examples/train_mlp.py --epochs 1      # the CI smoke test
    python examples/train_mlp.py --device cpu    # the same on the CPU, for comparison

The data are Gaussian blobs made here with torch on the CPU (no download). Ops that torch-ocl does
not implement yet run on the CPU; the script ends by listing them (TORCH_OCL_FALLBACK=warn|silent|
error decides whether each one also warns or fails).
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
from torch import nn

FEATURES = 16
CLASSES = 4


def make_blobs(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n points in FEATURES dimensions around CLASSES fixed centres, with their labels."""
    centres = torch.randn(CLASSES, FEATURES, generator=torch.Generator().manual_seed(1234)) * 1.2
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(CLASSES, (n,), generator=g)
    points = centres[labels] + torch.randn(n, FEATURES, generator=g)
    return points, labels


def get_device(name: str) -> torch.device:
    if not name.startswith("ocl"):
        return torch.device(name)
    if not hasattr(torch, "ocl"):
        sys.exit("torch-ocl is not installed (pip install torch-ocl), or it failed to load")
    device = torch.device(name)
    if not torch.ocl.is_available():
        sys.exit(
            "torch-ocl found no OpenCL device. Install a driver, or PoCL for the CPU "
            "(pip install 'pyopencl[pocl]'), or run with --device cpu"
        )
    index = device.index or 0
    print(f"device: ocl:{index} = {torch.ocl.get_device_name(index)}")
    return device


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--device", default="ocl", help="ocl (default), cpu, ...")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    device = get_device(args.device)

    x_train, y_train = make_blobs(4096, seed=1)
    x_test, y_test = make_blobs(1024, seed=2)

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(FEATURES, 64),
        nn.ReLU(),
        nn.Linear(64, 64),
        nn.ReLU(),
        nn.Linear(64, CLASSES),
    ).to(device)
    loss_fn = nn.CrossEntropyLoss()
    # foreach=False: one update per parameter with plain add_/mul_ (torch would otherwise pick the
    # multi-tensor _foreach_* kernels for an accelerator).
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, foreach=False)

    start = time.perf_counter()
    shuffle = torch.Generator().manual_seed(3)
    steps = 0
    for epoch in range(1, args.epochs + 1):
        epoch_start = time.perf_counter()
        # Shuffle on the CPU, then copy the epoch's data to the device once.
        order = torch.randperm(len(x_train), generator=shuffle)
        xs, ys = x_train[order].to(device), y_train[order].to(device)
        total = torch.zeros((), device=device)
        batches = 0
        for i in range(0, len(xs), args.batch_size):
            loss = loss_fn(model(xs[i : i + args.batch_size]), ys[i : i + args.batch_size])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()  # summed on the device: no host wait per step
            batches += 1
        steps += batches
        mean_loss = total.item() / batches  # one host wait per epoch
        print(f"epoch {epoch}: loss {mean_loss:.4f} ({time.perf_counter() - epoch_start:.2f} s)")

    with torch.no_grad():
        predicted = model(x_test.to(device)).argmax(dim=1)
        accuracy = (predicted == y_test.to(device)).float().mean().item()
    wall = time.perf_counter() - start

    print(f"held-out accuracy: {accuracy:.1%}")
    print(f"wall time: {wall:.2f} s for {steps} steps ({steps / wall:.0f} steps/s) on {device}")
    if device.type == "ocl":
        counts = torch.ocl.fallback_counts()
        if counts:
            ops = ", ".join(
                f"{op} ({n})" for op, n in sorted(counts.items(), key=lambda kv: -kv[1])
            )
            print(f"ops that ran on the CPU: {ops}")
        else:
            print("ops that ran on the CPU: none")


if __name__ == "__main__":
    main()
