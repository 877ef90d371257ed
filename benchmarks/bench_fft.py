"""FFTs on torch-ocl against torch.fft on the CPU (pocketfft / MKL), in one run.

    python benchmarks/bench_fft.py [--json FILE] [--png FILE] [--repeats N] [--quick]

Cases: rfft of 2^20 float32 points, a batched 2-d FFT of 64x256x256 complex64 values, and
smaller ones (batched 1-d complex FFTs of power-of-two, mixed-radix and prime (Bluestein)
lengths; irfft; an stft of one second of 16 kHz audio). Each row times the same call on the ocl
device and on the CPU, taking turns within each repeat; the reported time is the best repeat,
the ratio ocl time / CPU time (below 1: ocl faster). Each ocl result is also checked against the
CPU's (the largest error relative to the largest value), so a fast wrong answer shows.
Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from collections.abc import Callable

import torch

# The timing loop of the other benchmarks (the fns take turns within each repeat; best per call).
from bench_nn import best_times  # noqa: E402


def cases(quick: bool) -> list[tuple[str, tuple, torch.dtype, Callable]]:
    """(name, input shape, input dtype, function) for every row."""
    stft_win = {}

    def stft(x):
        w = stft_win.setdefault(x.device.type, torch.hann_window(512, device=x.device))
        return torch.stft(x, n_fft=512, hop_length=128, window=w, return_complex=True)

    rows = [
        ("rfft 2^20", (1 << 20,), torch.float32, torch.fft.rfft),
        ("fft2 64x256x256", (64, 256, 256), torch.complex64, torch.fft.fft2),
        ("fft 256x4096", (256, 4096), torch.complex64, torch.fft.fft),
        ("fft 1024x1000", (1024, 1000), torch.complex64, torch.fft.fft),
        ("fft 64x4099 (prime)", (64, 4099), torch.complex64, torch.fft.fft),
        ("irfft 64x8193->16384", (64, 8193), torch.complex64, lambda x: torch.fft.irfft(x)),
        ("stft 16 kHz 1 s", (16000,), torch.float32, stft),
    ]
    if quick:
        rows[1] = ("fft2 16x256x256", (16, 256, 256), torch.complex64, torch.fft.fft2)
    return rows


def make(shape, dtype) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    if dtype.is_complex:
        return torch.view_as_complex(torch.randn((*shape, 2), generator=g)).to(dtype)
    return torch.randn(shape, generator=g).to(dtype)


def metadata(device: torch.device) -> dict:
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": str(device),
        "device_name": torch.ocl.get_device_name(device.index or 0),
        "device_profile": torch.ocl.device_profile().name,
    }
    try:
        import torch_ocl

        meta["torch_ocl"] = getattr(torch_ocl, "__version__", "unknown")
    except ImportError:
        pass
    return meta


def chart(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["name"] for r in rows]
    ratios = [r["ratio"] for r in rows]
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.5))
    bars = ax.barh(names, ratios, color=["tab:green" if r <= 2 else "tab:red" for r in ratios])
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(2.0, color="tab:red", linewidth=0.8, linestyle="--", label="target: 2x")
    for bar, r in zip(bars, rows, strict=True):
        ax.text(
            bar.get_width(),
            bar.get_y() + bar.get_height() / 2,
            f" {r['ratio']:.2f}x ({r['ocl_ms']:.2f} / {r['cpu_ms']:.2f} ms)",
            va="center",
            fontsize=8,
        )
    ax.invert_yaxis()
    ax.set_xlabel("ocl time / CPU torch.fft time (lower is better)")
    ax.set_title("torch.fft on ocl vs CPU, same run")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default="benchmarks/results/bench_fft.json")
    parser.add_argument("--png", default="benchmarks/results/bench_fft.png")
    parser.add_argument("--repeats", type=int, default=5, help="timed loops per row and side")
    parser.add_argument("--iters", type=int, default=3, help="calls per timed loop")
    parser.add_argument("--quick", action="store_true", help="a smaller 2-d case, 2 repeats")
    args = parser.parse_args()
    if not hasattr(torch, "ocl") or not torch.ocl.is_available():
        print("torch-ocl is not installed or found no OpenCL device", file=sys.stderr)
        return 1
    if args.quick:
        args.repeats = min(args.repeats, 2)
    device = torch.device("ocl")
    cpu = torch.device("cpu")
    results = {"meta": metadata(device), "rows": []}
    print(f"torch {torch.__version__}, {results['meta']['device_name']}")
    print(f"{torch.get_num_threads()} CPU threads for torch, {os.cpu_count()} cores\n")
    print(f"{'case':28s} {'ocl ms':>9s} {'cpu ms':>9s} {'ratio':>7s} {'max rel err':>12s}")
    rows = cases(args.quick)
    for i, (name, shape, dtype, fn) in enumerate(rows):
        print(f"[{i + 1}/{len(rows)}] {name} ...", file=sys.stderr, flush=True)
        xc = make(shape, dtype)
        xo = xc.to(device)
        calls = [(lambda f=fn, x=xo: f(x), device), (lambda f=fn, x=xc: f(x), cpu)]
        ocl_s, cpu_s = best_times(calls, args.iters, args.repeats)
        expected = fn(xc)
        got = fn(xo).cpu()
        err = ((got - expected).abs().max() / expected.abs().max().clamp_min(1e-30)).item()
        row = {
            "name": name,
            "shape": list(shape),
            "dtype": str(dtype).removeprefix("torch."),
            "ocl_ms": ocl_s * 1e3,
            "cpu_ms": cpu_s * 1e3,
            "ratio": ocl_s / cpu_s,
            "max_rel_err": err,
        }
        results["rows"].append(row)
        print(
            f"{name:28s} {row['ocl_ms']:9.2f} {row['cpu_ms']:9.2f} {row['ratio']:7.2f} {err:12.2e}"
        )
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        print(f"\nwrote {args.json}")
    if args.png:
        chart(results["rows"], args.png)
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
