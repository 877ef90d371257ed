"""Train a small ResNet-style CNN on handwritten digits on the OpenCL device.

    python examples/train_cnn.py                  # 10 epochs on "ocl", then the same on the CPU
    python examples/train_cnn.py --epochs 2       # the CI smoke test
    python examples/train_cnn.py --no-cpu         # skip the CPU comparison run
    python examples/train_cnn.py --amp float16    # mixed precision: autocast + GradScaler

The data are scikit-learn's bundled digits (1,797 8x8 grey images, part of the scikit-learn
package: no download), split into a training and a held-out set. The network has convolutions,
batch norm, a residual connection, max pooling, adaptive average pooling and dropout, and trains
with SGD (momentum). The script prints a progress bar per epoch, the held-out accuracy, images per
second on the device and on the CPU (the same run, same seed), and the ops that ran on the CPU
instead of the device (TORCH_OCL_FALLBACK=warn|silent|error decides whether each one also warns
or fails).
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
from torch import nn


def load_digits() -> tuple[torch.Tensor, torch.Tensor]:
    try:
        from sklearn.datasets import load_digits as sk_load_digits
    except ImportError:
        sys.exit("this demo needs scikit-learn for its bundled digits: pip install scikit-learn")
    digits = sk_load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    return (images - 0.5) / 0.5, torch.tensor(digits.target, dtype=torch.long)


class Block(nn.Module):
    """conv-BN-ReLU-conv-BN with an identity shortcut."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        Block(32),
        nn.MaxPool2d(2),  # 8x8 -> 4x4
        nn.Conv2d(32, 64, 3, padding=1, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        Block(64),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(64, 10),
    )


def get_device(name: str) -> torch.device:
    if not name.startswith("ocl"):
        return torch.device(name)
    if not hasattr(torch, "ocl"):
        sys.exit("torch-ocl is not installed (pip install torch-ocl), or it failed to load")
    if not torch.ocl.is_available():
        sys.exit(
            "torch-ocl found no OpenCL device. Install a driver, or PoCL for the CPU "
            "(pip install 'pyopencl[pocl]'), or run with --device cpu"
        )
    return torch.device(name)


def synchronize(device: torch.device) -> None:
    if device.type == "ocl":
        torch.ocl.synchronize()


def progress(epoch: int, epochs: int, done: int, total: int, loss: float | None) -> None:
    """A bar that redraws itself on a terminal; elsewhere only the finished line is printed."""
    if not sys.stdout.isatty() and done < total:
        return
    width = 30
    filled = width * done // total
    bar = "#" * filled + "." * (width - filled)
    text = f"epoch {epoch}/{epochs} [{bar}] {done}/{total}"
    if loss is not None:
        text += f" loss {loss:.4f}"
    end = "\n" if done == total else ""
    print(("\r" if sys.stdout.isatty() else "") + text, end=end, flush=True)


def warm_up(device: torch.device, data, args) -> float:
    """One training step and one evaluation batch on a throwaway model: on a fresh machine this
    compiles the device's kernels (cached on disk for later runs), which the timed run should not
    count. Returns its seconds."""
    x_train, y_train, x_test, _ = (t[: args.batch_size].to(device) for t in data)
    start = time.perf_counter()
    model = make_model().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    amp_dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(args.amp)
    autocast = lambda: torch.autocast(  # noqa: E731
        device.type, dtype=amp_dtype, enabled=amp_dtype is not None and device.type != "cpu"
    )
    with autocast():
        loss = nn.CrossEntropyLoss()(model(x_train), y_train)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad(), autocast():
        model(x_test).argmax(1)
    synchronize(device)
    return time.perf_counter() - start


def train(device: torch.device, data, args, show: bool) -> tuple[float, float]:
    """Trains from a fixed seed; returns (held-out accuracy, training images per second)."""
    x_train, y_train, x_test, y_test = (t.to(device) for t in data)
    torch.manual_seed(args.seed)
    model = make_model().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    amp = args.amp if device.type != "cpu" else None
    amp_dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(amp)
    scaler = torch.amp.GradScaler(device.type, enabled=amp == "float16")
    n = x_train.shape[0]
    steps = (n + args.batch_size - 1) // args.batch_size
    seconds = 0.0
    g = torch.Generator().manual_seed(args.seed)
    for epoch in range(1, args.epochs + 1):
        model.train()
        order = torch.randperm(n, generator=g).to(device)
        synchronize(device)
        start = time.perf_counter()
        loss = None
        for step in range(steps):
            idx = order[step * args.batch_size : (step + 1) * args.batch_size]
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
                loss = loss_fn(model(x_train[idx]), y_train[idx])
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            if show and sys.stdout.isatty():
                progress(epoch, args.epochs, step + 1, steps, None)
        synchronize(device)
        seconds += time.perf_counter() - start
        if show:
            progress(epoch, args.epochs, steps, steps, loss.item())
    model.eval()
    with (
        torch.no_grad(),
        torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None),
    ):
        predicted = model(x_test).argmax(1)
        accuracy = (predicted == y_test).float().mean().item()
    return accuracy, args.epochs * n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--device", default="ocl", help="ocl (default), ocl:1, cpu, ...")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU comparison run")
    parser.add_argument(
        "--amp",
        choices=["float16", "bfloat16"],
        help="train on the device with torch.autocast in this dtype (float16: with a GradScaler)",
    )
    args = parser.parse_args()

    device = get_device(args.device)
    images, labels = load_digits()
    split = torch.randperm(len(labels), generator=torch.Generator().manual_seed(42))
    test_idx, train_idx = split[:360], split[360:]
    data = (images[train_idx], labels[train_idx], images[test_idx], labels[test_idx])
    print(f"digits: {len(train_idx)} training and {len(test_idx)} held-out 8x8 images")

    if device.type == "ocl":
        index = device.index or 0
        print(f"device: ocl:{index} = {torch.ocl.get_device_name(index)}")
        before = dict(torch.ocl.fallback_counts())
    warm = warm_up(device, data, args)
    print(
        f"warm-up step: {warm:.1f} s (on a fresh machine this compiles the kernels; cached on disk)"
    )
    accuracy, speed = train(device, data, args, show=True)
    mode = f", autocast {args.amp}" if args.amp and device.type != "cpu" else ""
    print(f"held-out accuracy on {device}{mode}: {accuracy:.1%}  ({speed:,.0f} training images/s)")

    if device.type == "ocl":
        after = torch.ocl.fallback_counts()
        ran_on_cpu = {op: c - before.get(op, 0) for op, c in after.items() if c > before.get(op, 0)}
        listing = ", ".join(f"{op} x{c}" for op, c in sorted(ran_on_cpu.items())) or "none"
        print(f"ops that ran on the CPU: {listing}")
        if not args.no_cpu:
            warm_up(torch.device("cpu"), data, args)
            cpu_accuracy, cpu_speed = train(torch.device("cpu"), data, args, show=False)
            print(
                f"same run on the CPU: accuracy {cpu_accuracy:.1%}, {cpu_speed:,.0f} images/s "
                f"(ocl/CPU time ratio {cpu_speed / speed:.2f})"
            )


if __name__ == "__main__":
    main()
