"""Network building blocks on ocl against CPU torch (or CUDA) on the same machine, in one run.

    python benchmarks/bench_nn.py [--json out.json] [--png out.png] [--quick] [--baseline cuda]

Cases (each timed on ocl and on the CPU, taking turns within every repeat; the device is
synchronised around each timed loop; the figure is the best repeat; --suite gpu replaces them
with the GPU measurement's: GEMM 1024/4096 fp32/fp16, resnet50's convolutions and training step
b32 224x224, causal attention b8 s1024 at head dims 64 and 128, a transformer block b8 s512 d768):
  - conv2d forward (and forward+backward) at shapes of resnet18, resnet50 and mobilenet_v2
    (depthwise), including the issue's 8x64x56x56 3x3;
  - fp32 GEMM (mm) at 256, 512, 1024, in GFLOP/s;
  - a transformer block (attention + MLP, forward + backward);
  - a training step (forward, backward, SGD) of a small CNN (3 conv-BN-ReLU blocks, b16 32x32)
    and of torchvision's resnet18 (b8, 64x64).
Writes the results as JSON and a PNG bar chart of the ocl/CPU time ratios (1.0 = as fast as the
CPU; lower is better). Progress goes to stderr.

--baseline cuda times the same cases on CUDA torch instead of the CPU (ocl on the same NVIDIA GPU
through its OpenCL driver against CUDA/cuBLAS/cuDNN), with TF32 off so that both sides compute
float32 products; the JSON then holds cuda_ms where it holds cpu_ms otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
import types
from collections.abc import Callable

import torch
from torch import nn

BASELINE = torch.device("cpu")  # --baseline cuda replaces it


def synchronize(device: torch.device) -> None:
    if device.type == "ocl":
        torch.ocl.synchronize()
    elif device.type == "cuda":
        torch.cuda.synchronize()


def best_times(fns: list[tuple[Callable[[], object], torch.device]], iters: int, repeats: int):
    """Best wall time per call of each fn; the fns take turns within each repeat."""
    for fn, device in fns:
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


def compare(name: str, make: Callable[[torch.device], Callable[[], object]], iters, repeats):
    """Times make(ocl)() against make(BASELINE)(); returns the result row."""
    print(f"  {name} ...", file=sys.stderr, flush=True)
    ocl_fn, ref_fn = make(torch.device("ocl")), make(BASELINE)
    t_ocl, t_ref = best_times([(ocl_fn, torch.device("ocl")), (ref_fn, BASELINE)], iters, repeats)
    ref = BASELINE.type
    return {"case": name, "ocl_ms": t_ocl * 1e3, f"{ref}_ms": t_ref * 1e3, "ratio": t_ocl / t_ref}


# ---- cases ----

CONV_SHAPES = {
    # name: (batch, in channels, size, out channels, kernel, stride, groups)
    "conv 8x64x56x56 3x3 (resnet18)": (8, 64, 56, 64, 3, 1, 1),
    "conv 8x128x28x28 3x3 s2 (resnet18)": (8, 128, 28, 256, 3, 2, 1),
    "conv 8x256x14x14 1x1 (resnet50)": (8, 256, 14, 1024, 1, 1, 1),
    "conv 8x64x56x56 1x1 (resnet50)": (8, 64, 56, 256, 1, 1, 1),
    "conv 8x96x56x56 3x3 depthwise (mobilenet_v2)": (8, 96, 56, 96, 3, 1, 96),
}


def conv_case(shape, backward: bool):
    n, c, size, k, ks, stride, groups = shape

    def make(device):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(n, c, size, size, generator=g).to(device).requires_grad_(backward)
        w = torch.randn(k, c // groups, ks, ks, generator=g).to(device).requires_grad_(backward)

        def run():
            y = nn.functional.conv2d(x, w, None, stride, ks // 2, 1, groups)
            if backward:
                y.sum().backward()

        return run

    return make


def gemm_case(size: int, dtype: torch.dtype = torch.float32):
    def make(device):
        g = torch.Generator().manual_seed(0)
        a = torch.randn(size, size, generator=g).to(device, dtype)
        b = torch.randn(size, size, generator=g).to(device, dtype)
        return lambda: torch.mm(a, b)

    return make


def transformer_block_case(batch: int, seq: int, dim: int, heads: int):
    def make(device):
        torch.manual_seed(0)
        block = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True)
        block = block.to(device)
        x = torch.randn(batch, seq, dim).to(device)
        mask = nn.Transformer.generate_square_subsequent_mask(seq).to(device)

        def run():
            block(x, src_mask=mask, is_causal=True).sum().backward()

        return run

    return make


def attention_case(batch: int, heads: int, seq: int, dim: int):
    """Causal scaled_dot_product_attention forward + backward (q, k, v gradients): the fused
    kernel (on GPUs the flash-attention-2 variant, kernels/attention_flash.cl)."""

    def make(device):
        g = torch.Generator().manual_seed(0)
        q, k, v = (
            torch.randn(batch, heads, seq, dim, generator=g).to(device).requires_grad_()
            for _ in range(3)
        )

        def run():
            nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()

        return run

    return make


def reduce_norm_case(kind: str, shape: tuple[int, ...]):
    """The memory-bound families that GPUs need shaped for them: a sum over the batch (a bias
    gradient), batch norm (training) and layer norm forward+backward, softmax over a row."""

    def make(device):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(shape, generator=g).to(device)
        if kind == "sum0":
            return lambda: x.sum(0)
        if kind == "softmax":
            return lambda: torch.softmax(x, -1)
        x.requires_grad_()
        if kind == "batchnorm":
            norm = nn.BatchNorm2d(shape[1]).to(device)
        else:
            norm = nn.LayerNorm(shape[-1]).to(device)
        return lambda: norm(x).sum().backward()

    return make


# resnet50's convolution layers (batch 32, 224x224 input): (batch, in, size, out, kernel, stride,
# groups), each forward and forward+backward.
RESNET50_CONVS = {
    "resnet50 conv1 7x7 s2 b32": (32, 3, 224, 64, 7, 2, 1),
    "resnet50 3x3 64 @56 b32": (32, 64, 56, 64, 3, 1, 1),
    "resnet50 1x1 64->256 @56 b32": (32, 64, 56, 256, 1, 1, 1),
    "resnet50 3x3 256 s2 @28 b32": (32, 256, 28, 256, 3, 2, 1),
    "resnet50 1x1 1024->256 @14 b32": (32, 1024, 14, 256, 1, 1, 1),
    "resnet50 3x3 512 @7 b32": (32, 512, 7, 512, 3, 1, 1),
}


def resnet50():
    sys.modules.setdefault(
        "torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations")
    )
    import torchvision

    return torchvision.models.resnet50(num_classes=1000)


def gpu_suite() -> list[tuple[str, Callable, int]]:
    """The GPU measurement of issue 25: GEMM 1024 and 4096 in float32 and float16, resnet50's
    convolutions, the reduction and normalisation families, a resnet50 training step (b32,
    224x224) and a transformer block."""
    cases: list[tuple[str, Callable, int]] = []
    for size in (1024, 4096):
        for dtype, tag in ((torch.float32, "fp32"), (torch.float16, "fp16")):
            cases.append((f"mm {size} {tag}", gemm_case(size, dtype), 2))
    for name, shape in RESNET50_CONVS.items():
        cases.append((name + " fwd", conv_case(shape, False), 2))
        cases.append((name + " fwd+bwd", conv_case(shape, True), 1))
    cases.append(
        ("sum over the batch 16384x4096 dim 0", reduce_norm_case("sum0", (16384, 4096)), 2)
    )
    cases.append(
        (
            "batch norm train fwd+bwd 32x64x112x112",
            reduce_norm_case("batchnorm", (32, 64, 112, 112)),
            1,
        )
    )
    cases.append(("layer norm fwd+bwd 4096x768", reduce_norm_case("layernorm", (4096, 768)), 2))
    cases.append(("softmax 8192x50257", reduce_norm_case("softmax", (8192, 50257)), 1))
    for heads, dim in ((16, 64), (8, 128)):
        name = f"attention causal b8 h{heads} s1024 d{dim} fwd+bwd"
        cases.append((name, attention_case(8, heads, 1024, dim), 1))
    cases.append(
        ("transformer block b8 s512 d768 fwd+bwd", transformer_block_case(8, 512, 768, 12), 1)
    )
    cases.append(("resnet50 training step b32 224x224", training_case(resnet50, 32, 224), 1))
    return cases


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        layers, c = [], 3
        for width in (32, 64, 128):
            layers += [nn.Conv2d(c, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU()]
            layers.append(nn.MaxPool2d(2))
            c = width
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(128 * 4 * 4, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def training_case(build: Callable[[], nn.Module], batch: int, size: int):
    def make(device):
        torch.manual_seed(0)
        model = build().to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = torch.randn(batch, 3, size, size).to(device)
        y = torch.randint(10, (batch,)).to(device)

        def step():
            opt.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()

        return step

    return make


def resnet18():
    sys.modules.setdefault(
        "torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations")
    )
    import torchvision

    return torchvision.models.resnet18(num_classes=10)


def chart(rows: list[dict], path: str, baseline: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.5))
    names = [r["case"] for r in rows]
    ratios = [r["ratio"] for r in rows]
    colors = ["tab:green" if r <= 1 else "tab:orange" if r <= 2 else "tab:red" for r in ratios]
    ax.barh(names, ratios, color=colors)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(2.0, color="grey", linewidth=0.8, linestyle="--")
    for k, r in enumerate(ratios):
        ax.text(r, k, f" {r:.2f}", va="center")
    ax.invert_yaxis()
    ax.set_xlabel(f"ocl time / {baseline} torch time (lower is better; dashed: 2.0x)")
    device = torch.ocl.get_device_name(0)
    ax.set_title(f"torch-ocl on {device} vs {baseline} torch {torch.__version__}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default="benchmarks/results/bench_nn.json")
    parser.add_argument("--png", default="benchmarks/results/bench_nn.png")
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke test)")
    parser.add_argument("-k", dest="only", default="", help="run only cases whose name has this")
    parser.add_argument(
        "--baseline", choices=("cpu", "cuda"), default="cpu", help="what ocl is compared with"
    )
    parser.add_argument(
        "--suite",
        choices=("default", "gpu"),
        default="default",
        help="gpu: GEMM 1024/4096 fp32/fp16, resnet50 convs and training step, a transformer block",
    )
    args = parser.parse_args()
    if not torch.ocl.is_available():
        sys.exit("no ocl device: " + torch.ocl.why_unavailable())
    global BASELINE
    BASELINE = torch.device(args.baseline)
    baseline_name = "CPU"
    if args.baseline == "cuda":
        if not torch.cuda.is_available():
            sys.exit("--baseline cuda: this torch has no CUDA device")
        # Both sides compute float32 products (cuBLAS and cuDNN would otherwise use TF32 in convs).
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
        baseline_name = "CUDA " + torch.cuda.get_device_name(0)
    repeats = 2 if args.quick else 5

    cases: list[tuple[str, Callable, int]] = []
    for name, shape in CONV_SHAPES.items() if args.suite == "default" else ():
        cases.append((name + " fwd", conv_case(shape, False), 2))
    if args.suite == "default":
        first = CONV_SHAPES[next(iter(CONV_SHAPES))]
        cases.append(("conv 8x64x56x56 3x3 fwd+bwd", conv_case(first, True), 1))
        for size in (256, 512, 1024):
            cases.append((f"mm {size}", gemm_case(size), 3))
        block = transformer_block_case(4, 128, 256, 8)
        cases.append(("transformer block b4 s128 d256 fwd+bwd", block, 2))
        cases.append(("small CNN training step b16 32x32", training_case(SmallCNN, 16, 32), 2))
        cases.append(("resnet18 training step b8 64x64", training_case(resnet18, 8, 64), 1))
    else:
        cases = gpu_suite()

    cases = [c for c in cases if args.only in c[0]]
    if args.baseline == "cuda":  # a GPU's case takes microseconds: more calls per timed loop
        cases = [(name, make, iters * 10) for name, make, iters in cases]
    rows = []
    for k, (name, make, iters) in enumerate(cases, 1):
        print(f"[{k}/{len(cases)}] {name}", file=sys.stderr, flush=True)
        try:
            row = compare(name, make, iters, repeats)
        except Exception as e:  # noqa: BLE001 (a case that fails is reported, the rest still run)
            print(f"    failed: {type(e).__name__}: {e}", file=sys.stderr)
            rows.append({"case": name, "error": f"{type(e).__name__}: {e}"})
            continue
        if name.startswith("mm "):
            size = int(name.split()[1])
            row["ocl_gflops"] = 2 * size**3 / row["ocl_ms"] / 1e6
            row[f"{args.baseline}_gflops"] = 2 * size**3 / row[f"{args.baseline}_ms"] / 1e6
        ocl_ms, ref_ms, ratio = row["ocl_ms"], row[f"{args.baseline}_ms"], row["ratio"]
        print(
            f"    ocl {ocl_ms:.2f} ms, {args.baseline} {ref_ms:.2f} ms, ratio {ratio:.2f}",
            file=sys.stderr,
        )
        rows.append(row)

    props = torch.ocl.get_device_properties(0)
    profile = torch.ocl.device_profile(0)
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": torch.ocl.get_device_name(0),
        "platform": props.platform,
        "driver": props.driver_version,
        "profile": {"name": profile.name, "vendor": profile.vendor, **profile.params},
        "baseline": baseline_name,
        "torch": torch.__version__,
        "host": platform.processor() or platform.machine(),
        "cpu_threads": torch.get_num_threads(),
        "repeats": repeats,
        "results": rows,
    }
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)
    ok = [r for r in rows if "ratio" in r]
    if ok:
        chart(ok, args.png, baseline_name)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
