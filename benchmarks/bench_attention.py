"""scaled_dot_product_attention on ocl against CPU torch, in one run.

    python benchmarks/bench_attention.py [--json results.json] [--png chart.png]
        [--shape B H S D] [--causal]

Times forward alone and forward + backward (gradients of q, k and v) of
`torch.nn.functional.scaled_dot_product_attention` at float32, by default b4 h8 s256 d64, on the
ocl device (the fused kernel of kernels/attention.cl, or whatever the backend's choice stub
picks: reported as "ocl_backend") and on the CPU (CPU torch's own choice: its flash-attention
kernel for these shapes). Also the math path on ocl (`sdpa_kernel(SDPBackend.MATH)`: matmul +
softmax kernels) for comparison. Times are the best of several repeats, the sides taking turns
within each repeat; the device is synchronised before and after each timed loop. The JSON
holds milliseconds per call and the ratios ocl / CPU (lower is better); --png draws them (the
default is beside --json, with .png).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def synchronize(device: torch.device) -> None:
    if device.type == "ocl":
        torch.ocl.synchronize()


def best_times(fns: list[tuple[Callable[[], None], torch.device]], iters: int, repeats: int):
    for fn, device in fns:  # warm up: kernels built, buffers cached
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
            best[k] = min(best[k], (time.perf_counter() - start) / iters)
    return best


def make_inputs(shape, device, requires_grad):
    gen = torch.Generator().manual_seed(0)
    b, h, s, d = shape
    ts = [torch.randn(b, h, s, d, generator=gen) for _ in range(3)]
    grad = torch.randn(b, h, s, d, generator=gen)
    ts = [t.to(device).requires_grad_(requires_grad) for t in ts]
    return ts, grad.to(device)


def fwd_fn(q, k, v, causal, backend=None):
    def run():
        if backend is None:
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            with sdpa_kernel([backend]):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return run


def fwd_bwd_fn(q, k, v, grad, causal, backend=None):
    def run():
        for t in (q, k, v):
            t.grad = None
        if backend is None:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            with sdpa_kernel([backend]):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        out.backward(grad)

    return run


def chosen_backend(q, k, v, causal) -> str:
    """The backend scaled_dot_product_attention picks for these inputs (torch._fused_sdp_choice)."""
    names = {int(b.value): name for name, b in SDPBackend.__members__.items()}
    return names[torch._fused_sdp_choice(q, k, v, is_causal=causal)]


def chart(result: dict, path: str) -> None:
    """Bars of ocl time / CPU time for the fused kernel and the math path, forward and
    forward + backward."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for key, label in (("forward", "forward"), ("forward_backward", "forward+backward")):
        part = result[key]
        rows.append((f"{label}, fused", part["ratio"], part["ocl_ms"], part["cpu_ms"]))
        math = (part["math_ratio"], part["ocl_math_ms"], part["cpu_ms"])
        rows.append((f"{label}, math path", *math))
    fig, ax = plt.subplots(figsize=(8, 3))
    bars = ax.barh([r[0] for r in rows], [r[1] for r in rows], color="tab:blue")
    ax.axvline(1.0, color="black", linewidth=0.8)
    for bar, (_, ratio, ocl_ms, cpu_ms) in zip(bars, rows, strict=True):
        ax.text(
            bar.get_width(),
            bar.get_y() + bar.get_height() / 2,
            f" {ratio:.2f}x ({ocl_ms:.1f} / {cpu_ms:.1f} ms)",
            va="center",
            fontsize=8,
        )
    ax.invert_yaxis()
    shape = result["shape"]
    ax.set_xlabel("ocl time / CPU torch time (lower is better)")
    ax.set_title(
        f"scaled_dot_product_attention b{shape['B']} h{shape['H']} s{shape['S']} d{shape['D']}"
        f"{' causal' if shape['causal'] else ''}, profile {result['meta']['profile']}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--png", help="draw the ratios into this PNG (default: beside --json)")
    parser.add_argument(
        "--shape", type=int, nargs=4, default=[4, 8, 256, 64], metavar=("B", "H", "S", "D")
    )
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    ocl, cpu = torch.device("ocl"), torch.device("cpu")
    shape, causal = tuple(args.shape), args.causal
    (qo, ko, vo), go = make_inputs(shape, ocl, True)
    (qc, kc, vc), gc = make_inputs(shape, cpu, True)
    fb_before = dict(torch.ocl.fallback_counts())
    t_fwd = best_times(
        [
            (fwd_fn(qo, ko, vo, causal), ocl),
            (fwd_fn(qc, kc, vc, causal), cpu),
            (fwd_fn(qo, ko, vo, causal, SDPBackend.MATH), ocl),
        ],
        args.iters,
        args.repeats,
    )
    t_bwd = best_times(
        [
            (fwd_bwd_fn(qo, ko, vo, go, causal), ocl),
            (fwd_bwd_fn(qc, kc, vc, gc, causal), cpu),
            (fwd_bwd_fn(qo, ko, vo, go, causal, SDPBackend.MATH), ocl),
        ],
        args.iters,
        args.repeats,
    )
    fallbacks = {
        op: n - fb_before.get(op, 0)
        for op, n in torch.ocl.fallback_counts().items()
        if n != fb_before.get(op, 0)
    }
    b, h, s, d = shape
    flops_fwd = 4 * b * h * s * s * d / (2 if causal else 1)
    result = {
        "meta": {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "device_name": torch.ocl.get_device_name(0),
            # which fused kernel ran: kernels/attention_flash.cl where attention_flash is 1
            # (TORCH_OCL_DEVICE_PROFILE / TORCH_OCL_DEVICE_PARAMS choose it), else attention.cl
            "profile": torch.ocl.device_profile().name,
            "attention_flash": torch.ocl.device_profile().params["attention_flash"],
        },
        "shape": {"B": b, "H": h, "S": s, "D": d, "causal": causal, "dtype": "float32"},
        "ocl_backend": chosen_backend(qo.detach(), ko.detach(), vo.detach(), causal),
        "cpu_backend": chosen_backend(qc.detach(), kc.detach(), vc.detach(), causal),
        "forward": {
            "ocl_ms": t_fwd[0] * 1e3,
            "cpu_ms": t_fwd[1] * 1e3,
            "ocl_math_ms": t_fwd[2] * 1e3,
            "ratio": t_fwd[0] / t_fwd[1],
            "math_ratio": t_fwd[2] / t_fwd[1],
            "ocl_gflops": flops_fwd / t_fwd[0] / 1e9,
        },
        "forward_backward": {
            "ocl_ms": t_bwd[0] * 1e3,
            "cpu_ms": t_bwd[1] * 1e3,
            "ocl_math_ms": t_bwd[2] * 1e3,
            "ratio": t_bwd[0] / t_bwd[1],
            "math_ratio": t_bwd[2] / t_bwd[1],
        },
        "fallbacks": fallbacks,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    png = args.png or (os.path.splitext(args.json)[0] + ".png" if args.json else None)
    if png:
        chart(result, png)
        print(f"chart: {png}")


if __name__ == "__main__":
    main()
