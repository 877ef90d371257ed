"""Nested and sparse tensors on ocl against CPU torch on the same machine, in one run.

    python benchmarks/bench_nested_sparse.py [--json out.json] [--png out.png] [--quick]

Cases (each timed on ocl and on the CPU, taking turns within every repeat; the device is
synchronised around each timed loop; the figure is the best repeat):
  - nn.TransformerEncoder inference (eval, no_grad, 2 layers, d_model 256, 8 heads, batch 16,
    sequences up to 128 tokens, lengths uniform in [16, 128]) with src_key_padding_mask: the
    nested fast path (the default), and on ocl also the dense path (enable_nested_tensor=False)
    for the nested path's gain on the device;
  - to_padded_tensor of that batch's packed tokens;
  - torch.sparse.mm of a 4096 x 4096 matrix at 1% density (COO coalesced, COO uncoalesced,
    CSR) by a dense 4096 x 64, and coalesce() of 200k entries with duplicates.
Writes JSON and a PNG bar chart of the ocl/CPU time ratios (1.0 = as fast as the CPU; lower is
better). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time

import torch
from torch import nn

DEV = torch.device("ocl")
CPU = torch.device("cpu")


def sync(device):
    if device.type == "ocl":
        torch.ocl.synchronize()


def best_times(fns, iters, repeats):
    for fn, device in fns:
        fn()
        sync(device)
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for k, (fn, device) in enumerate(fns):
            sync(device)
            start = time.perf_counter()
            for _ in range(iters):
                fn()
            sync(device)
            best[k] = min(best[k], (time.perf_counter() - start) / iters)
    return best


def encoder_cases(quick):
    torch.manual_seed(0)
    d, heads, batch, t = (128, 4, 8, 64) if quick else (256, 8, 16, 128)
    layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
    enc_cpu = nn.TransformerEncoder(layer, 2).eval()
    enc_dev = nn.TransformerEncoder(layer, 2).eval()
    enc_dev.load_state_dict(enc_cpu.state_dict())
    enc_dev = enc_dev.to(DEV)
    enc_dense = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    enc_dense.load_state_dict(enc_cpu.state_dict())
    enc_dense = enc_dense.to(DEV)
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(t // 8, t + 1, (batch,), generator=g)
    x = torch.randn(batch, t, d, generator=g)
    pad = torch.arange(t).view(1, t) >= lengths.view(-1, 1)
    xd, padd = x.to(DEV), pad.to(DEV)
    cases = []
    with torch.no_grad():
        ocl_nested, cpu_nested, ocl_dense = best_times(
            [
                (lambda: enc_dev(xd, src_key_padding_mask=padd), DEV),
                (lambda: enc_cpu(x, src_key_padding_mask=pad), CPU),
                (lambda: enc_dense(xd, src_key_padding_mask=padd), DEV),
            ],
            iters=3 if quick else 5,
            repeats=3,
        )
        cases.append(("encoder nested path", ocl_nested, cpu_nested))
        cases.append(("encoder dense path (ocl) vs nested (cpu)", ocl_dense, cpu_nested))
        nt_cpu = torch._nested_tensor_from_mask(x, ~pad)
        nt_dev = torch._nested_tensor_from_mask(xd, ~padd)
        ocl_pad, cpu_pad = best_times(
            [
                (lambda: nt_dev.to_padded_tensor(0.0), DEV),
                (lambda: nt_cpu.to_padded_tensor(0.0), CPU),
            ],
            iters=20,
            repeats=3,
        )
        cases.append(("to_padded_tensor", ocl_pad, cpu_pad))
    extra = {"encoder_ocl_dense_over_nested": ocl_dense / ocl_nested}
    return cases, extra


def sparse_cases(quick):
    n, k, density = (1024, 32, 0.01) if quick else (4096, 64, 0.01)
    g = torch.Generator().manual_seed(2)
    nnz = int(n * n * density)
    idx = torch.randint(0, n, (2, nnz), generator=g)
    vals = torch.randn(nnz, generator=g)
    unc = torch.sparse_coo_tensor(idx, vals, (n, n))
    coo = unc.coalesce()
    csr = coo.to_sparse_csr()
    b = torch.randn(n, k, generator=g)
    bd = b.to(DEV)
    cases = []
    for name, s in (("sparse.mm COO", coo), ("sparse.mm COO uncoalesced", unc), ("mm CSR", csr)):
        sd = s.to(DEV)
        t_dev, t_cpu = best_times(
            [(lambda sd=sd: torch.mm(sd, bd), DEV), (lambda s=s: torch.mm(s, b), CPU)],
            iters=5,
            repeats=3,
        )
        cases.append((name, t_dev, t_cpu))
    m = 50_000 if quick else 200_000
    idx2 = torch.randint(0, 300, (2, m), generator=g)
    big = torch.sparse_coo_tensor(idx2, torch.randn(m, generator=g), (300, 300))
    bigd = big.to(DEV)
    t_dev, t_cpu = best_times(
        [(lambda: bigd.coalesce(), DEV), (lambda: big.coalesce(), CPU)], iters=3, repeats=3
    )
    cases.append(("coalesce", t_dev, t_cpu))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="benchmarks/results/bench_nested_sparse.json")
    ap.add_argument("--png", default="benchmarks/results/bench_nested_sparse.png")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    print("encoder ...", file=sys.stderr)
    enc, extra = encoder_cases(args.quick)
    print("sparse ...", file=sys.stderr)
    sp = sparse_cases(args.quick)
    rows = [
        {"case": name, "ocl_ms": 1e3 * t_dev, "cpu_ms": 1e3 * t_cpu, "ratio": t_dev / t_cpu}
        for name, t_dev, t_cpu in enc + sp
    ]
    for r in rows:
        print(
            f"{r['case']:44s} ocl {r['ocl_ms']:9.3f} ms  cpu {r['cpu_ms']:9.3f} ms  "
            f"ocl/cpu {r['ratio']:6.2f}"
        )
    print(f"ocl dense encoder path / nested path: {extra['encoder_ocl_dense_over_nested']:.2f}")
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "device": torch.ocl.get_device_name(0),
        "cpu": platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "quick": args.quick,
        "cases": rows,
        **extra,
    }
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    ax.barh([r["case"] for r in rows], [r["ratio"] for r in rows], color="tab:blue")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.invert_yaxis()
    ax.set_xlabel("ocl time / CPU time (lower is better)")
    ax.set_title(f"nested and sparse tensors: {result['device']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)
    print(f"wrote {args.json} and {args.png}", file=sys.stderr)


if __name__ == "__main__":
    main()
