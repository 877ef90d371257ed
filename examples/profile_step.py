"""Profile a few training steps of the demo CNN on the OpenCL device with torch.profiler.

    python examples/profile_step.py                  # writes profile/ (trace + PNG), prints tables
    python examples/profile_step.py --out /tmp/prof  # somewhere else
    python examples/profile_step.py --no-item        # without the per-step loss.item()

The network and data are examples/train_cnn.py's (scikit-learn's bundled digits). The profiler
waits one step, warms up one, records three; each step calls ``loss.item()``, as training loops
that log the loss do, so that the trace shows the host waiting for the device once per step.

It writes:
  <out>/<host>_<pid>.<time>.pt.trace.json   the trace (kernels per stream, ocl::host_wait events)
  <out>/profile_step.png                    device time per kernel family, host waits per step
and prints the top ops by device time and the host waits with their reasons.

Open the trace in https://ui.perfetto.dev (drag the file in) or chrome://tracing, or with
TensorBoard: pip install torch-tb-profiler; tensorboard --logdir <out>.
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from train_cnn import load_digits, make_model  # noqa: E402

WAIT, WARMUP, ACTIVE = 1, 1, 3


def step(model, opt, loss_fn, x, y, item: bool) -> None:
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    if item:
        loss.item()  # a host wait: the loss value is needed on the host


def family(name: str) -> str:
    """'elementwise[add]' -> 'elementwise', 'Memcpy HtoD (ocl)' -> 'Memcpy HtoD'."""
    return name.split("[")[0].replace(" (ocl)", "")


def summarise(trace_file: pathlib.Path) -> tuple[dict, list]:
    """Device time per kernel family (us) and, per recorded step, its host waits' reasons."""
    events = json.loads(trace_file.read_text())["traceEvents"]
    per_family: dict[str, float] = collections.Counter()
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            per_family[family(e["name"])] += e["dur"]
    steps = sorted(
        (e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"]
    )
    waits = [e for e in events if e["name"] == "ocl::host_wait"]
    per_step = []
    for s in steps:
        inside = [w for w in waits if s["ts"] <= w["ts"] <= s["ts"] + s["dur"]]
        per_step.append((s["name"], [w["args"].get("reason", "?") for w in inside]))
    return dict(per_family), per_step


def plot(per_family: dict, per_step: list, path: pathlib.Path, device_name: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG (pip install matplotlib)")
        return False
    top = sorted(per_family.items(), key=lambda kv: kv[1])[-12:]
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [2.2, 1]}
    )
    left.barh([k for k, _ in top], [v / 1000 / ACTIVE for _, v in top], color="tab:blue")
    left.set_xlabel("device time per step (ms)")
    left.set_title("Device time by kernel family")
    right.bar(
        [s.replace("ProfilerStep", "step ") for s, _ in per_step],
        [len(w) for _, w in per_step],
        color="tab:red",
    )
    right.set_ylabel("ocl::host_wait events")
    right.set_title("Host waits per step")
    right.yaxis.get_major_locator().set_params(integer=True)
    fig.suptitle(f"examples/profile_step.py: demo CNN, batch 64, on {device_name}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="profile", help="output folder (default ./profile)")
    parser.add_argument("--device", default="ocl")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--no-item", action="store_true", help="do not call loss.item()")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "ocl" and not torch.ocl.is_available():
        sys.exit(f"no OpenCL device: {torch.ocl.why_unavailable()}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.pt.trace.json"):
        old.unlink()

    images, labels = load_digits()
    x, y = images[: args.batch_size].to(device), labels[: args.batch_size].to(device)
    torch.manual_seed(0)
    model = make_model().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    step(model, opt, loss_fn, x, y, item=True)  # builds the kernels before profiling
    torch.ocl.synchronize()

    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
        schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
        on_trace_ready=torch.profiler.tensorboard_trace_handler(str(out)),
        record_shapes=True,
        profile_memory=True,
    ) as prof:
        for _ in range(WAIT + WARMUP + ACTIVE):
            with record_function("train_step"):
                step(model, opt, loss_fn, x, y, item=not args.no_item)
            prof.step()
    torch.ocl.synchronize()

    print(prof.key_averages().table(sort_by="device_time_total", row_limit=15))
    trace_file = next(out.glob("*.pt.trace.json"))
    per_family, per_step = summarise(trace_file)
    print(f"trace: {trace_file}  (open it in https://ui.perfetto.dev)")
    print("host waits per step:")
    for name, reasons in per_step:
        print(f"  {name}: {len(reasons)}  {sorted(set(reasons))}")
    name = torch.ocl.get_device_name() if device.type == "ocl" else str(device)
    png = out / "profile_step.png"
    if plot(per_family, per_step, png, name):
        print(f"chart: {png}")


if __name__ == "__main__":
    main()
