"""The cost of deterministic algorithms on ocl, in one run.

    python benchmarks/bench_determinism.py [--out benchmarks/results] [--repeats 5]

Times accumulating index ops (index_add_, index_put_ with accumulate, scatter_add_) on ocl with
their default atomic kernel and with torch.use_deterministic_algorithms(True) (the ordered form
of csrc/ops/IndexOrdered.cpp: offsets pass, stable sort, ordered sums), and CPU torch's own
(serial, deterministic) kernel on the same data, plus empty() with and without the fill of new
memory. Times are the best of several repeats, the device synchronised around each call.
Writes bench_determinism.json (milliseconds, the ratios ordered / atomic and ordered / CPU) and
bench_determinism.png to --out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time

import torch

import torch_ocl  # noqa: F401

DEVICE = "ocl"


def best_ms(fn, device, repeats):
    fn()
    if device == DEVICE:
        torch.ocl.synchronize()
    best = float("inf")
    for _ in range(repeats):
        if device == DEVICE:
            torch.ocl.synchronize()
        start = time.perf_counter()
        fn()
        if device == DEVICE:
            torch.ocl.synchronize()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def cases():
    """(name, make(device) -> callable)."""

    def index_add(rows, cols, n, targets):
        def make(dev):
            g = torch.Generator().manual_seed(0)
            x = torch.zeros(rows, cols).to(dev)
            idx = torch.randint(0, targets, (n,), generator=g).to(dev)
            src = torch.randn(n, cols, generator=g).to(dev)
            return lambda: x.index_add_(0, idx, src)

        return f"index_add_ {n}x{cols} -> {rows}", make

    def index_put(rows, cols, n):
        def make(dev):
            g = torch.Generator().manual_seed(1)
            x = torch.zeros(rows, cols).to(dev)
            idx = torch.randint(0, rows, (n,), generator=g).to(dev)
            v = torch.randn(n, cols, generator=g).to(dev)
            return lambda: x.index_put_((idx,), v, accumulate=True)

        return f"index_put_ acc {n}x{cols} -> {rows}", make

    def scatter_add(rows, cols, n):
        def make(dev):
            g = torch.Generator().manual_seed(2)
            x = torch.zeros(rows, cols).to(dev)
            idx = torch.randint(0, rows, (n, cols), generator=g).to(dev)
            src = torch.randn(n, cols, generator=g).to(dev)
            return lambda: x.scatter_add_(0, idx, src)

        return f"scatter_add_ {n}x{cols} -> {rows}", make

    return [
        index_add(100000, 16, 200000, 100000),
        index_add(1000, 64, 100000, 1000),
        index_put(30000, 32, 100000),
        scatter_add(1000, 64, 20000),
    ]


def chart(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["case"] for r in results["ops"]]
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.27
    xs = range(len(names))
    for k, (key, label) in enumerate(
        [
            ("atomic_ms", "ocl atomic (default)"),
            ("ordered_ms", "ocl ordered (flag)"),
            ("cpu_ms", "CPU torch"),
        ]
    ):
        ax.bar(
            [x + (k - 1) * width for x in xs], [r[key] for r in results["ops"]], width, label=label
        )
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=12, fontsize=8)
    ax.set_ylabel("ms per call (lower is better)")
    ax.set_title("Deterministic algorithms on ocl: ordered form vs atomic kernel vs CPU")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": torch.ocl.get_device_name(0),
        "host": platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "ops": [],
    }
    for name, make in cases():
        fn_ocl, fn_cpu = make(DEVICE), make("cpu")
        atomic = best_ms(fn_ocl, DEVICE, args.repeats)
        torch.use_deterministic_algorithms(True)
        try:
            ordered = best_ms(fn_ocl, DEVICE, args.repeats)
        finally:
            torch.use_deterministic_algorithms(False)
        cpu = best_ms(fn_cpu, "cpu", args.repeats)
        row = {
            "case": name,
            "atomic_ms": atomic,
            "ordered_ms": ordered,
            "cpu_ms": cpu,
            "ordered_over_atomic": ordered / atomic,
            "ordered_over_cpu": ordered / cpu,
        }
        results["ops"].append(row)
        print(
            f"{name:34s} atomic {atomic:8.2f} ms  ordered {ordered:8.2f} ms  cpu {cpu:8.2f} ms  "
            f"ordered/atomic {ordered / atomic:5.2f}  ordered/cpu {ordered / cpu:5.2f}"
        )
    plain = best_ms(lambda: torch.empty(1 << 22, device=DEVICE), DEVICE, args.repeats * 4)
    torch.use_deterministic_algorithms(True)
    try:
        filled = best_ms(lambda: torch.empty(1 << 22, device=DEVICE), DEVICE, args.repeats * 4)
    finally:
        torch.use_deterministic_algorithms(False)
    results["empty_4M_floats"] = {"plain_ms": plain, "filled_ms": filled}
    print(f"empty(4M floats): {plain:.3f} ms, with the deterministic fill {filled:.3f} ms")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_determinism.json"), "w") as f:
        json.dump(results, f, indent=2)
    chart(results, os.path.join(args.out, "bench_determinism.png"))
    print(f"wrote {args.out}/bench_determinism.json and .png")


if __name__ == "__main__":
    main()
