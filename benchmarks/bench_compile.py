"""torch.compile on ocl: eager ocl against compiled ocl (Inductor's generated OpenCL kernels),
with CPU eager and CPU Inductor (its C++ code generator) in the same run.

    python benchmarks/bench_compile.py [--quick] [--cases transformer,mlp,...] [--no-cpu]
                                       [--json out.json] [--png out.png]

Cases (issue 23's): a transformer block forward+backward (b4 s128 d256), a LayerNorm+GELU MLP
training step, a small CNN and torchvision's resnet18 training steps, GPT-2-small forward
(transformers, built from its config: no download). --quick runs the first three.

For each case and each of the four variants: the first call's time (compilation included, cold:
Inductor's caches are pointed at a fresh directory first), the time after torch._dynamo.reset()
and a second compilation (warm: Inductor's FX graph cache and torch-ocl's program cache hit), the
best time per step over repeats (the variants take turns within each repeat; each device is
synchronised around every timed loop), and on ocl the kernel launches of one step (counted with
torch.profiler: clEnqueueNDRangeKernel events; a batch of tiny ops is one launch). Writes JSON and
a PNG chart (step time relative to eager ocl, launches); progress goes to stderr.
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
from bench_nn import best_times  # the fns take turns within each repeat; best per call
from torch import nn

VARIANTS = (("ocl", False), ("ocl", True), ("cpu", False), ("cpu", True))


def label(device: str, compiled: bool) -> str:
    return f"{device} {'compiled' if compiled else 'eager'}"


def log(msg: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


def synchronize(device: str) -> None:
    if device == "ocl":
        torch.ocl.synchronize()


# ---- cases: build(device) -> (model, fn, args); fn(*args) runs a forward (and backward) ----


def transformer_block(device: str):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True).to(device)
    x = torch.randn(4, 128, 256, device=device)

    def fwd_bwd(x):
        out = layer(x)
        out.square().mean().backward()
        return out

    return layer, fwd_bwd, (x,)


def mlp(device: str):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.LayerNorm(512), nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512), nn.LayerNorm(512)
    ).to(device)
    x = torch.randn(64, 512, device=device)
    y = torch.randn(64, 512, device=device)

    def fwd_bwd(x, y):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    return model, fwd_bwd, (x, y)


def small_cnn(device: str):
    torch.manual_seed(0)
    blocks = []
    for cin, cout in ((3, 32), (32, 64), (64, 64)):
        blocks += [
            nn.Conv2d(cin, cout, 3, padding=1),
            nn.BatchNorm2d(cout),
            nn.ReLU(),
            nn.MaxPool2d(2),
        ]
    model = nn.Sequential(*blocks, nn.Flatten(), nn.Linear(64 * 4 * 4, 10)).to(device)
    x = torch.randn(16, 3, 32, 32, device=device)
    y = torch.randint(10, (16,), device=device)

    def fwd_bwd(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    return model, fwd_bwd, (x, y)


def resnet18(device: str):
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).to(device)
    x = torch.randn(8, 3, 64, 64, device=device)
    y = torch.randint(10, (8,), device=device)

    def fwd_bwd(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    return model, fwd_bwd, (x, y)


def gpt2_forward(device: str):
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    model = GPT2Model(GPT2Config(n_layer=12, n_embd=768, n_head=12)).eval().to(device)
    ids = torch.randint(50257, (1, 128), device=device)

    def forward(ids):
        with torch.no_grad():
            return model(ids).last_hidden_state

    return model, forward, (ids,)


CASES = {
    "transformer": ("transformer block fwd+bwd b4 s128 d256", transformer_block, True),
    "mlp": ("LayerNorm+GELU MLP step b64 d512", mlp, True),
    "cnn": ("small CNN step b16 32x32", small_cnn, True),
    "resnet18": ("resnet18 step b8 64x64", resnet18, True),
    "gpt2": ("GPT-2-small forward b1 s128", gpt2_forward, False),
}
QUICK = ("transformer", "mlp", "cnn")


def with_update(model: nn.Module, fn, training: bool):
    """One step: fn (compiled or not) and, when training, an SGD update outside the compiled
    region (the optimizer's foreach kernels are the same for both variants)."""
    if not training:
        return fn
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step(*args):
        opt.zero_grad(set_to_none=True)
        out = fn(*args)
        opt.step()
        return out

    return step


def count_launches(step, args) -> int:
    from torch.profiler import ProfilerActivity, profile

    torch.ocl.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        step(*args)
        torch.ocl.synchronize()
    return sum(e.name == "clEnqueueNDRangeKernel" for e in prof.events())


def timed_first_call(step, args, device: str) -> float:
    start = time.perf_counter()
    step(*args)
    synchronize(device)
    return time.perf_counter() - start


def run_case(key: str, iters: int, repeats: int, variants) -> dict:
    title, build, training = CASES[key]
    runs = []
    for device, compiled in variants:
        name = label(device, compiled)
        log(f"{title}: {name}: build and first call")
        torch._dynamo.reset()
        model, fn, args = build(device)
        step = with_update(model, torch.compile(fn) if compiled else fn, training)
        first = timed_first_call(step, args, device)
        entry = {"variant": name, "first_call_s": round(first, 3)}
        if compiled:
            # Warm: Dynamo's in-memory state dropped, the on-disk caches kept (FX graph cache,
            # Inductor's code cache, torch-ocl's program cache).
            torch._dynamo.reset()
            model_w, fn_w, args_w = build(device)
            step_w = with_update(model_w, torch.compile(fn_w), training)
            entry["warm_first_call_s"] = round(timed_first_call(step_w, args_w, device), 3)
        if device == "ocl":
            entry["launches_per_step"] = count_launches(step, args)
        runs.append((entry, step, args, device))
    log(f"{title}: timing {iters} steps x {repeats} repeats")
    best = best_times(
        [((lambda s=step, a=args: s(*a)), torch.device(d)) for _, step, args, d in runs],
        iters,
        repeats,
    )
    result = {"case": key, "title": title, "runs": []}
    for (entry, *_), t in zip(runs, best, strict=True):
        entry["ms_per_step"] = round(t * 1e3, 3)
        result["runs"].append(entry)
    by = {r["variant"]: r for r in result["runs"]}
    eager, comp = by.get("ocl eager"), by.get("ocl compiled")
    if eager and comp:
        result["ocl_speedup_compiled"] = round(eager["ms_per_step"] / comp["ms_per_step"], 3)
        if comp.get("launches_per_step"):
            result["ocl_launch_reduction"] = round(
                eager["launches_per_step"] / comp["launches_per_step"], 2
            )
    log(
        f"{title}: "
        + ", ".join(f"{r['variant']} {r['ms_per_step']:.2f} ms" for r in result["runs"])
    )
    return result


def chart(results: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [label(d, c) for d, c in VARIANTS]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 0.9 * len(results) + 2.5))
    height = 0.8 / len(names)
    for v, name in enumerate(names):
        ratios = []
        for r in results:
            by = {x["variant"]: x for x in r["runs"]}
            ref = by.get("ocl eager")
            ratios.append(by[name]["ms_per_step"] / ref["ms_per_step"] if name in by and ref else 0)
        ax.barh([i + v * height for i in range(len(results))], ratios, height, label=name)
    ax.set_yticks(
        [i + 0.4 - height / 2 for i in range(len(results))], [r["title"] for r in results]
    )
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("time per step / eager ocl (lower is faster)")
    ax.invert_yaxis()
    ax.legend(fontsize=8)
    launches = [
        [x.get("launches_per_step", 0) for x in r["runs"] if x["variant"].startswith("ocl")]
        for r in results
    ]
    for v, name in enumerate(("ocl eager", "ocl compiled")):
        bx.barh(
            [i + v * 0.4 for i in range(len(results))],
            [row[v] if v < len(row) else 0 for row in launches],
            0.4,
            label=name,
        )
    bx.set_yticks([i + 0.2 for i in range(len(results))], ["" for _ in results])
    bx.set_xlabel("kernel launches per step on ocl")
    bx.invert_yaxis()
    bx.legend(fontsize=8)
    fig.suptitle(
        f"torch.compile on ocl ({torch.ocl.get_device_name(0)}) vs CPU, torch {torch.__version__}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", default="benchmarks/results/bench_compile.json")
    parser.add_argument("--png", default="benchmarks/results/bench_compile.png")
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--cases", help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU variants")
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    keys = args.cases.split(",") if args.cases else (QUICK if args.quick else tuple(CASES))
    unknown = [k for k in keys if k not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {unknown}; choose from {', '.join(CASES)}")
    variants = [v for v in VARIANTS if not (args.no_cpu and v[0] == "cpu")]
    # Cold compilation: Inductor's caches in a fresh directory (torch-ocl's program cache is
    # left alone: its kernels compiled once are shared with eager ocl).
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="bench_compile_"))

    results = []
    for i, key in enumerate(keys):
        log(f"case {i + 1}/{len(keys)}: {key}")
        try:
            results.append(run_case(key, args.iters, args.repeats, variants))
        except Exception as e:  # a case that fails is reported, the others still run
            log(f"{key}: FAILED: {type(e).__name__}: {e}")
            results.append(
                {"case": key, "title": CASES[key][0], "error": f"{type(e).__name__}: {e}"}
            )
    out = {
        "benchmark": "bench_compile",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "device": torch.ocl.get_device_name(0),
        "cpu": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
        "iters": args.iters,
        "repeats": args.repeats,
        "results": results,
    }
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=2)
    ok = [r for r in results if "runs" in r]
    if ok:
        try:
            chart(ok, args.png)
        except ImportError:
            log("matplotlib is not installed: no chart (pip install matplotlib)")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
