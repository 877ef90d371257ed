"""Optimizer steps on torch-ocl against CPU torch, in one run: resnet18's parameter list.

    python benchmarks/bench_optim.py [--json results.json] [--steps N]

The parameters are resnet18's (62 tensors, 11.7M float32 values; random values, random
gradients). Each row times one optimizer step: on ocl with the foreach implementation PyTorch
picks for the device (our multi-tensor kernels: one launch covers many tensors), with
fused=True, and with foreach=False (one launch per op per tensor, for comparison); on the CPU
with its default (a per-tensor loop) and with fused=True (its fastest). The ratio is ocl time /
CPU default time. Also: multi-tensor launches and host waits per step, clip_grad_norm_, and the
same Adam step over a small model's parameters (many small tensors: launch overhead dominates).

Times are the best of several repeats, ocl and CPU taking turns within each repeat; the device is
synchronised before and after each timed loop.
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


def resnet18_shapes(num_classes: int = 1000) -> list[tuple[int, ...]]:
    """The shapes of torchvision's resnet18 parameters, in its order."""
    shapes: list[tuple[int, ...]] = [(64, 3, 7, 7), (64,), (64,)]
    inplanes = 64
    for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            cin = inplanes if block == 0 else planes
            shapes += [(planes, cin, 3, 3), (planes,), (planes,)]
            shapes += [(planes, planes, 3, 3), (planes,), (planes,)]
            if block == 0 and (stride != 1 or inplanes != planes):
                shapes += [(planes, inplanes, 1, 1), (planes,), (planes,)]
        inplanes = planes
    return shapes + [(num_classes, 512), (num_classes,)]


def small_model_shapes() -> list[tuple[int, ...]]:
    """A small CNN's parameters: 3 conv-BN blocks and a classifier (16 tensors, 24k values)."""
    shapes: list[tuple[int, ...]] = []
    for cin, cout in ((3, 16), (16, 32), (32, 64)):
        shapes += [(cout, cin, 3, 3), (cout,), (cout,), (cout,)]
    return shapes + [(10, 64 * 4 * 4), (10,)] + [(10,), (10,)]


def synchronize(device: torch.device) -> None:
    if device.type == "ocl":
        torch.ocl.synchronize()


def best_times(
    fns: list[tuple[Callable[[], None], torch.device]], iters: int, repeats: int
) -> list[float]:
    """Best wall time in seconds of `iters` calls of each fn, the fns taking turns per repeat."""
    for fn, device in fns:
        for _ in range(2):
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


def make_params(shapes, device: torch.device) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    params = []
    for s in shapes:
        p = torch.randn(s, generator=g).to(device).requires_grad_()
        p.grad = torch.randn(s, generator=g).to(device)
        params.append(p)
    return params


def optimizer_step(make, shapes, device: torch.device):
    params = make_params(shapes, device)
    opt = make(params)
    return opt.step


def step_stats(step, device: torch.device, steps: int = 3) -> dict:
    """Multi-tensor launches, table rows and host waits per step."""
    step()
    synchronize(device)
    launches, rows = torch.ops.ocl.multi_tensor_counts()
    waits = torch.ocl.host_wait_count()
    for _ in range(steps):
        step()
    launches2, rows2 = torch.ops.ocl.multi_tensor_counts()
    return {
        "multi_tensor_launches_per_step": (launches2 - launches) / steps,
        "tensors_per_launch": (rows2 - rows) / max(launches2 - launches, 1),
        "host_waits_per_step": (torch.ocl.host_wait_count() - waits) / steps,
    }


CONFIGS = {
    "adam": lambda fused, foreach: (
        lambda ps: torch.optim.Adam(ps, lr=1e-3, fused=fused, foreach=foreach)
    ),
    "adamw_amsgrad": lambda fused, foreach: (
        lambda ps: torch.optim.AdamW(ps, lr=1e-3, amsgrad=True, fused=fused, foreach=foreach)
    ),
    "sgd_momentum": lambda fused, foreach: (
        lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, fused=fused, foreach=foreach)
    ),
}


def bench_config(name: str, shapes, device: torch.device, iters: int, repeats: int) -> dict:
    cpu = torch.device("cpu")
    make = CONFIGS[name]
    variants = {
        "ocl_foreach": (optimizer_step(make(None, None), shapes, device), device),
        "ocl_fused": (optimizer_step(make(True, None), shapes, device), device),
        "ocl_per_tensor": (optimizer_step(make(None, False), shapes, device), device),
        "cpu_default": (optimizer_step(make(None, None), shapes, cpu), cpu),
        "cpu_fused": (optimizer_step(make(True, None), shapes, cpu), cpu),
    }
    times = best_times(list(variants.values()), iters, repeats)
    result = {k: t / iters * 1e3 for k, t in zip(variants, times, strict=True)}
    out = {f"{k}_ms": v for k, v in result.items()}
    out["ratio_foreach"] = result["ocl_foreach"] / result["cpu_default"]
    out["ratio_fused"] = result["ocl_fused"] / result["cpu_default"]
    out["ratio_fused_vs_cpu_fused"] = result["ocl_fused"] / result["cpu_fused"]
    out["ocl_foreach_stats"] = step_stats(variants["ocl_foreach"][0], device)
    out["ocl_fused_stats"] = step_stats(variants["ocl_fused"][0], device)
    return out


def bench_clip(shapes, device: torch.device, iters: int, repeats: int) -> dict:
    cpu = torch.device("cpu")
    pd, pc = make_params(shapes, device), make_params(shapes, cpu)
    t = best_times(
        [
            (lambda: torch.nn.utils.clip_grad_norm_(pd, 1e9, foreach=True), device),
            (lambda: torch.nn.utils.clip_grad_norm_(pc, 1e9), cpu),
        ],
        iters,
        repeats,
    )
    ocl, cpu_ms = (x / iters * 1e3 for x in t)
    return {"ocl_ms": ocl, "cpu_ms": cpu_ms, "ratio": ocl / cpu_ms}


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
    }
    try:
        import torch_ocl

        meta["torch_ocl"] = getattr(torch_ocl, "__version__", "unknown")
    except ImportError:
        pass
    return meta


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    parser.add_argument("--steps", type=int, default=5, help="steps per timed loop")
    parser.add_argument("--repeats", type=int, default=3, help="timed loops per variant")
    args = parser.parse_args()
    if not hasattr(torch, "ocl") or not torch.ocl.is_available():
        print("torch-ocl is not installed or found no OpenCL device", file=sys.stderr)
        return 1
    device = torch.device("ocl")
    results = {"meta": metadata(device)}
    print(f"torch {torch.__version__}, {results['meta']['device_name']}")
    print(f"{torch.get_num_threads()} CPU threads for torch, {os.cpu_count()} cores\n")

    big = resnet18_shapes()
    numel = sum(torch.Size(s).numel() for s in big)
    results["resnet18"] = {"tensors": len(big), "numel": numel}
    for name in CONFIGS:
        results["resnet18"][name] = bench_config(name, big, device, args.steps, args.repeats)
    results["resnet18"]["clip_grad_norm"] = bench_clip(big, device, args.steps, args.repeats)
    small = small_model_shapes()
    results["small_cnn"] = {
        "tensors": len(small),
        "numel": sum(torch.Size(s).numel() for s in small),
        "adam": bench_config("adam", small, device, args.steps * 10, args.repeats),
    }
    results["fallback_counts_total"] = dict(torch.ocl.fallback_counts())

    head = ("", "ocl foreach", "ocl fused", "ocl per-tensor", "cpu", "cpu fused", "ocl/cpu")
    print(f"{head[0]:<28}" + "".join(f"{h:>15}" for h in head[1:]))
    rows = [(f"resnet18 {n} (ms)", results["resnet18"][n]) for n in CONFIGS]
    rows.append(("small CNN adam (ms)", results["small_cnn"]["adam"]))
    for label, r in rows:
        cells = [
            r["ocl_foreach_ms"],
            r["ocl_fused_ms"],
            r["ocl_per_tensor_ms"],
            r["cpu_default_ms"],
            r["cpu_fused_ms"],
            r["ratio_foreach"],
        ]
        print(f"{label:<28}" + "".join(f"{c:>15.2f}" for c in cells))
    clip = results["resnet18"]["clip_grad_norm"]
    print(
        f"\nclip_grad_norm_ over resnet18's grads: ocl {clip['ocl_ms']:.2f} ms, "
        f"cpu {clip['cpu_ms']:.2f} ms (ratio {clip['ratio']:.2f})"
    )
    st = results["resnet18"]["adam"]["ocl_foreach_stats"]
    print(
        f"resnet18 Adam (foreach): {st['multi_tensor_launches_per_step']:.0f} multi-tensor "
        f"launches per step, {st['tensors_per_launch']:.1f} tensors per launch, "
        f"{st['host_waits_per_step']:.0f} host waits"
    )
    if results["fallback_counts_total"]:
        print(f"ops that ran on the CPU: {results['fallback_counts_total']}")
    else:
        print("ops that ran on the CPU: none")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2, sort_keys=True)
            f.write("\n")
        print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
