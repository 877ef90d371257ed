"""Runtime overheads of torch-ocl against CPU torch, in one run of a few seconds.

    python benchmarks/bench_runtime.py [--json results.json]

(a) bandwidth of `a + b` on 16M float32 elements, in GB/s counting 3 x 4 bytes per element, and
    of `torch.add(a, b, out=c)`: CPU torch's `a + b` pays for page faults on every fresh 64 MB
    output (glibc unmaps freed large blocks), while the device's caching allocator reuses blocks,
    so the `out=` row compares the kernels alone;
(b) time per op of `a + b` on 16 elements, in microseconds (host overhead + launch);
(c) host waits per training step of a small MLP (nn.Linear 64->128->10, SGD), without .item():
    the target is 0, since every kernel is enqueued asynchronously; plus the ops of that step that
    ran on the CPU (torch.ocl.fallback_counts()).

Times are the best of several repeats, ocl and CPU taking turns within each repeat; the device is
synchronised before and after each timed loop. Small elementwise ops are batched several to a
kernel launch (csrc/ops/ElementwiseBatch.cpp); run with TORCH_OCL_BATCH=0 to time one launch per op.
--device cpu runs everything on the CPU on both sides (a check of the script itself).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Callable

import torch
from torch import nn


def synchronize(device: torch.device) -> None:
    if device.type == "ocl":
        torch.ocl.synchronize()


def best_times(
    fns: list[tuple[Callable[[], None], torch.device]], iters: int, repeats: int
) -> list[float]:
    """Best wall time in seconds of `iters` calls of each fn over `repeats` repeats, after a
    warm-up. The fns take turns within each repeat, so that both sides of a ratio see the same
    state of a noisy machine."""
    for fn, device in fns:
        for _ in range(max(2, iters // 10)):
            fn()
        synchronize(device)
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for k, (fn, device) in enumerate(fns):
            synchronize(device)
            start = time.perf_counter()
            for _ in range(iters):
                fn()
            synchronize(device)
            best[k] = min(best[k], time.perf_counter() - start)
    return best


def bench_bandwidth(device: torch.device, numel: int, iters: int, repeats: int) -> dict:
    """`a + b` (a new output each time) and `torch.add(a, b, out=c)` (kernel alone)."""
    cpu = torch.device("cpu")
    a_cpu, b_cpu = torch.rand(numel), torch.rand(numel)
    c_cpu = torch.empty_like(a_cpu)
    a, b = a_cpu.to(device), b_cpu.to(device)
    c = torch.empty_like(a)
    t = best_times(
        [
            (lambda: a + b, device),
            (lambda: a_cpu + b_cpu, cpu),
            (lambda: torch.add(a, b, out=c), device),
            (lambda: torch.add(a_cpu, b_cpu, out=c_cpu), cpu),
        ],
        iters,
        repeats,
    )
    ocl, cpu_new, ocl_out, cpu_out = (3 * 4 * numel * iters / 1e9 / x for x in t)
    return {
        "numel": numel,
        "iters": iters,
        "ocl_gbps": ocl,
        "cpu_gbps": cpu_new,
        "ratio": ocl / cpu_new,
        "out": {"ocl_gbps": ocl_out, "cpu_gbps": cpu_out, "ratio": ocl_out / cpu_out},
    }


def bench_tiny_op(device: torch.device, iters: int, repeats: int) -> dict:
    a_cpu, b_cpu = torch.rand(16), torch.rand(16)
    a, b = a_cpu.to(device), b_cpu.to(device)
    batch_before = torch.ocl.batch_stats() if device.type == "ocl" else None
    t = best_times(
        [(lambda: a + b, device), (lambda: a_cpu + b_cpu, torch.device("cpu"))], iters, repeats
    )
    ocl, cpu = (x / iters * 1e6 for x in t)
    result = {
        "numel": 16,
        "iters": iters,
        "ocl_us": ocl,
        "cpu_us": cpu,
        "ratio": ocl / cpu,
        "driver_enqueue_us": driver_enqueue_us(iters, repeats) if device.type == "ocl" else None,
    }
    if batch_before is not None:
        after = torch.ocl.batch_stats()
        launches = after["launches"] - batch_before["launches"]
        ops = after["ops"] - batch_before["ops"]
        result["batched_ops"] = ops
        result["ops_per_launch"] = ops / launches if launches else None
    return result


def driver_enqueue_us(iters: int, repeats: int) -> float | None:
    """The OpenCL driver's own cost of enqueueing a 16-element kernel (through pyopencl, on the
    same device, without torch): the floor under the per-op time above."""
    try:
        import pyopencl as cl
    except ImportError:
        return None
    props = torch.ocl.get_device_properties()
    devices = [
        d
        for p in cl.get_platforms()
        if p.name == props.platform
        for d in p.get_devices()
        if d.name == props.name
    ]
    if not devices:
        return None
    ctx = cl.Context(devices[:1])
    queue = cl.CommandQueue(ctx)
    src = "__kernel void k(__global float* o, __global const float* a, __global const float* b)"
    src += " { size_t i = get_global_id(0); if (i < 16) o[i] = a[i] + b[i]; }"
    kernel = cl.Program(ctx, src).build().k
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64) for _ in range(3)]
    kernel.set_args(*bufs)
    best = float("inf")
    for _ in range(repeats):
        cl.enqueue_nd_range_kernel(queue, kernel, (64,), (64,))
        queue.finish()
        start = time.perf_counter()
        for _ in range(iters):
            cl.enqueue_nd_range_kernel(queue, kernel, (64,), (64,))
        queue.finish()
        best = min(best, time.perf_counter() - start)
    return best / iters * 1e6


def bench_train_step(device: torch.device, steps: int) -> dict:
    def setup(dev: torch.device):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, foreach=False)
        x = torch.randn(32, 64).to(dev)
        target = torch.randn(32, 10).to(dev)

        def step() -> None:
            optimizer.zero_grad(set_to_none=True)
            out = model(x)
            diff = out - target
            loss = (diff * diff).sum()  # not .pow(2): only native ops in the measured step
            loss.backward()
            optimizer.step()

        return step

    ocl_step = setup(device)
    cpu_step = setup(torch.device("cpu"))
    for _ in range(3):  # warm up: kernels are built, buffers cached
        ocl_step()
    synchronize(device)

    is_ocl = device.type == "ocl"
    waits_before = torch.ocl.host_wait_count() if is_ocl else 0
    fallbacks_before = dict(torch.ocl.fallback_counts()) if is_ocl else {}
    for _ in range(steps):
        ocl_step()
    waits = (torch.ocl.host_wait_count() - waits_before) if is_ocl else 0
    fallbacks_after = dict(torch.ocl.fallback_counts()) if is_ocl else {}
    synchronize(device)
    fallbacks = {
        op: n - fallbacks_before.get(op, 0)
        for op, n in fallbacks_after.items()
        if n != fallbacks_before.get(op, 0)
    }

    ocl_s, cpu_s = best_times([(ocl_step, device), (cpu_step, torch.device("cpu"))], steps, 3)
    ocl_ms, cpu_ms = ocl_s / steps * 1e3, cpu_s / steps * 1e3
    return {
        "steps": steps,
        "host_waits": waits,
        "host_waits_per_step": waits / steps,
        "fallbacks": fallbacks,
        "fallbacks_per_step": {op: n / steps for op, n in fallbacks.items()},
        "ocl_ms": ocl_ms,
        "cpu_ms": cpu_ms,
        "ratio": ocl_ms / cpu_ms,
    }


def metadata(device: torch.device) -> dict:
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": str(device),
    }
    if device.type == "ocl":
        meta["device_name"] = torch.ocl.get_device_name(device.index or 0)
        try:
            import torch_ocl

            meta["torch_ocl"] = getattr(torch_ocl, "__version__", "unknown")
        except ImportError:
            pass
        meta["fallback_mode"] = os.environ.get("TORCH_OCL_FALLBACK", "warn (default)")
    return meta


def print_table(results: dict) -> None:
    bw, tiny, train = results["bandwidth"], results["tiny_op"], results["train_step"]
    out = bw["out"]
    dev = results["meta"]["device"]
    big = f"{bw['numel'] >> 20}M float32"
    rows = [
        ("", dev, "cpu", f"{dev}/cpu"),
        (f"a + b, {big} (GB/s)", bw["ocl_gbps"], bw["cpu_gbps"], bw["ratio"]),
        (f"add(out=), {big} (GB/s)", out["ocl_gbps"], out["cpu_gbps"], out["ratio"]),
        ("a + b, 16 elements (us/op)", tiny["ocl_us"], tiny["cpu_us"], tiny["ratio"]),
        ("MLP training step (ms)", train["ocl_ms"], train["cpu_ms"], train["ratio"]),
    ]
    for name, *cells in rows:
        text = [c if isinstance(c, str) else f"{c:.2f}" for c in cells]
        print(f"{name:<34} {text[0]:>10} {text[1]:>10} {text[2]:>10}")
    print()
    if tiny.get("driver_enqueue_us") is not None:
        print(
            f"the OpenCL driver alone enqueues a 16-element kernel in "
            f"{tiny['driver_enqueue_us']:.2f} us (pyopencl, same device): the floor under "
            f"the ocl per-op time"
        )
    if tiny.get("ops_per_launch"):
        print(
            f"tiny ops batched: {tiny['ops_per_launch']:.1f} per kernel launch "
            f"(TORCH_OCL_BATCH=0 launches each op on its own)"
        )
    print(
        f"host waits per training step: {train['host_waits_per_step']:.2f} "
        f"({train['host_waits']} in {train['steps']} steps; target 0)"
    )
    if train["fallbacks"]:
        ops = ", ".join(f"{op} {n:g}" for op, n in sorted(train["fallbacks_per_step"].items()))
        print(f"ops of the training step that ran on the CPU (per step): {ops}")
    elif results["meta"]["device"].startswith("ocl"):
        print("ops of the training step that ran on the CPU: none")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    parser.add_argument("--device", default="ocl", help="device to measure (default ocl)")
    parser.add_argument("--numel", type=int, default=16 << 20, help="elements for (a)")
    parser.add_argument("--steps", type=int, default=20, help="training steps for (c)")
    args = parser.parse_args()

    if args.device.startswith("ocl"):
        if not hasattr(torch, "ocl"):
            print("torch-ocl is not installed, or it failed to load", file=sys.stderr)
            return 1
        if not torch.ocl.is_available():
            print("torch-ocl found no OpenCL device", file=sys.stderr)
            return 1
    device = torch.device(args.device)

    results = {"meta": metadata(device)}
    name = results["meta"].get("device_name")
    print(f"torch {torch.__version__}, device {device}" + (f": {name}" if name else ""))
    print(f"{torch.get_num_threads()} CPU threads for torch, {os.cpu_count()} cores\n")
    results["bandwidth"] = bench_bandwidth(device, args.numel, iters=10, repeats=5)
    results["tiny_op"] = bench_tiny_op(device, iters=2000, repeats=9)
    results["train_step"] = bench_train_step(device, args.steps)
    if device.type == "ocl":
        results["fallback_counts_total"] = dict(torch.ocl.fallback_counts())
        results["host_waits_total"] = torch.ocl.host_wait_count()

    print_table(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2, sort_keys=True)
            f.write("\n")
        print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
