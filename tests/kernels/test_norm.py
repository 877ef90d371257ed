"""Tests for kernels/norm.cl against NumPy float64 references.

Launch geometry as stated at the top of norm.cl: norm_stats and norm_sums one group of LWS per row
(global = rows*LWS), norm_apply and norm_dx 3-d over (s in runs of spt, c, n) with the host's local
sizes (elements_launch). Tensors are [N, C, S] at a non-zero offset, x in a channels-last order
(strides (C*S, 1, C)), the others contiguous. Configurations: batch norm (per_channel, rows = C),
group norm (G groups), layer norm (the view [M, K, 1], G = 1) and RMS norm (-DRMS).
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

KERNEL_DIR = pathlib.Path(__file__).resolve().parents[2] / "kernels"

LWS = 128
OFF = 2
EPS = 1e-5
RTOL = {"float": 2e-5, "double": 1e-11, "half": 2e-3, "bfloat16": 1.6e-2}

# name, (N, C, S, G, per_channel)
CONFIGS = [
    ("batch", (3, 4, 37, 4, 1)),
    ("group", (2, 6, 11, 3, 0)),
    ("layer", (5, 300, 1, 1, 0)),
    ("single", (1, 1, 1, 1, 0)),
    ("batch1d", (7, 3, 1, 3, 1)),
    ("batch_long_rows", (2, 3, 300, 3, 1)),
]


def elements_launch(N, C, S, spt):
    """(global, local) of norm_apply / norm_dx as csrc/ops/Norm.cpp launches them: work-item
    (s-run, c, n), L0 the power of two covering the runs along S (at most LWS), L1 the one
    covering C within LWS / L0."""

    def cover(v, cap):
        p = 1
        while p < cap and p < v:
            p *= 2
        return p

    runs = -(-S // spt)
    l0 = cover(runs, LWS)
    l1 = cover(C, LWS // l0)
    return (-(-runs // l0) * l0, -(-C // l1) * l1, N), (l0, l1, 1)


def flat(tag, data, strides=None):
    """data [N, C, S] at OFF with the given strides (default contiguous), padded behind."""
    N, C, S = data.shape
    st = strides or (C * S, S, 1)
    buf = np.full(OFF + data.size + 3, store(tag, 9.0), dtype=STORE[tag])
    n, c, s = np.meshgrid(range(N), range(C), range(S), indexing="ij")
    buf[OFF + n * st[0] + c * st[1] + s * st[2]] = store(tag, data)
    return buf, st


def read(tag, buf, shape, st):
    N, C, S = shape
    n, c, s = np.meshgrid(range(N), range(C), range(S), indexing="ij")
    return to_f64(tag, buf[OFF + n * st[0] + c * st[1] + s * st[2]])


def t3(b, st):
    return [b, np.uint64(OFF)] + [np.int64(v) for v in st]


def rows_of(x, G, per_channel):
    """[rows, elements] of x [N, C, S] and the statistics row of every element."""
    N, C, S = x.shape
    if per_channel:
        return x.transpose(1, 0, 2).reshape(C, -1)
    return x.reshape(N * G, -1)


def stat_index(shape, G, per_channel):
    N, C, S = shape
    n, c, _ = np.meshgrid(range(N), range(C), range(S), indexing="ij")
    return c if per_channel else n * G + c // (C // G)


@pytest.mark.parametrize("tag", FLOAT_TAGS)
@pytest.mark.parametrize("name,cfg", CONFIGS, ids=[c[0] for c in CONFIGS])
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("spt", [1, 3, 64])
def test_norm_forward_backward(ctx, queue, build, has_fp64, rng, tag, name, cfg, rms, spt):
    need_fp64(has_fp64, tag)
    if rms and cfg[4]:
        pytest.skip("RMS norm has no per-channel form")
    N, C, S, G, per_channel = cfg
    acc = "double" if tag == "double" else "float"
    acc_np = np.float64 if acc == "double" else np.float32
    wtag = tag
    running = bool(per_channel)
    opts = [f"-DX_T={tag}", f"-DACC_T={acc}", f"-DW_T={wtag}", "-DHAS_W", "-DHAS_B"]
    opts += ["-DRMS"] if rms else []
    stat_opts = opts + (["-DRUNNING", f"-DRUN_T={tag}"] if running else [])
    prg_stats, prg = build("norm", stat_opts), build("norm", opts)
    x = to_f64(tag, store(tag, rng.uniform(-3, 5, (N, C, S))))
    w = to_f64(wtag, store(wtag, rng.uniform(0.5, 1.5, C)))
    b = to_f64(wtag, store(wtag, rng.uniform(-1, 1, C)))
    xb, xs = flat(tag, x, (C * S, 1, C))
    bx = buffer(ctx, xb)
    rows = C if per_channel else N * G
    mean_b = buffer(ctx, np.zeros(OFF + rows, acc_np))
    rstd_b = buffer(ctx, np.zeros(OFF + rows, acc_np))
    shape_args = [np.int64(N), np.int64(C), np.int64(S), np.int64(G), np.int32(per_channel)]
    eps = acc_np(EPS)
    args = shape_args + [np.int32(spt), eps] + t3(bx, xs)
    args += [mean_b, np.uint64(OFF), rstd_b, np.uint64(OFF)]
    args += [np.uint64(1), np.uint64(2**62), mean_b, np.uint64(0)]  # one part per row
    rm0 = to_f64(tag, store(tag, rng.uniform(-1, 1, rows)))
    rv0 = to_f64(tag, store(tag, rng.uniform(0.5, 2, rows)))
    if running:
        rmb, rvb = store(tag, rm0), store(tag, rv0)
        brm, brv = buffer(ctx, rmb), buffer(ctx, rvb)
        args += [acc_np(0.1), brm, np.uint64(0), brv, np.uint64(0)]
    cl.Kernel(prg_stats, "norm_stats")(queue, (rows * LWS,), (LWS,), *args)
    # reference statistics
    r = rows_of(x, G, per_channel)
    mu = np.zeros(rows) if rms else r.mean(axis=1)
    var = ((r - mu[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + EPS)
    got_mean, got_rstd = np.zeros(OFF + rows, acc_np), np.zeros(OFF + rows, acc_np)
    cl.enqueue_copy(queue, got_mean, mean_b)
    cl.enqueue_copy(queue, got_rstd, rstd_b)
    tol = 1e-11 if acc == "double" else 2e-5
    np.testing.assert_allclose(got_mean[OFF:], mu, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_rstd[OFF:], rstd, rtol=tol)
    if running:
        cl.enqueue_copy(queue, rmb, brm)
        cl.enqueue_copy(queue, rvb, brv)
        n = r.shape[1]
        unb = var * n / (n - 1)
        np.testing.assert_allclose(
            to_f64(tag, rmb), 0.1 * mu + 0.9 * rm0, rtol=RTOL[tag], atol=1e-3
        )
        np.testing.assert_allclose(to_f64(tag, rvb), 0.1 * unb + 0.9 * rv0, rtol=RTOL[tag])
    # apply
    idx = stat_index(x.shape, G, per_channel)
    xhat = (x - mu[idx]) * rstd[idx]
    ref_y = xhat * w[None, :, None] + b[None, :, None]
    yb, ys = flat(tag, np.zeros_like(x))
    by = buffer(ctx, yb)
    wb, bb = buffer(ctx, store(wtag, w)), buffer(ctx, store(wtag, b))
    stats = [mean_b, np.uint64(OFF), rstd_b, np.uint64(OFF)]
    total = N * C * S
    gsz, lsz = elements_launch(N, C, S, spt)
    cl.Kernel(prg, "norm_apply")(
        queue, gsz, lsz, *shape_args, np.int32(spt), eps, *t3(bx, xs), *stats,
        wb, np.uint64(0), bb, np.uint64(0), *t3(by, ys),
    )  # fmt: skip
    cl.enqueue_copy(queue, yb, by)
    np.testing.assert_allclose(read(tag, yb, x.shape, ys), ref_y, rtol=RTOL[tag], atol=RTOL[tag])
    assert (yb[:OFF] == store(tag, 9.0)).all() and (yb[OFF + total :] == store(tag, 9.0)).all()
    # backward: sums over statistics rows (weighted unless per channel) and dx
    dy = to_f64(tag, store(tag, rng.uniform(-1, 1, x.shape)))
    dyb, dys = flat(tag, dy)
    bdy = buffer(ctx, dyb)
    A, B = buffer(ctx, np.zeros(rows, acc_np)), buffer(ctx, np.zeros(rows, acc_np))
    sums_prg = build("norm", [o for o in opts if not (per_channel and o == "-DHAS_W")])
    cl.Kernel(sums_prg, "norm_sums")(
        queue, (rows * LWS,), (LWS,), *shape_args, np.int32(spt), np.int32(0), eps, *t3(bx, xs),
        *t3(bdy, dys),
        *stats, wb, np.uint64(0), A, np.uint64(0), B, np.uint64(0),
        np.uint64(1), np.uint64(2**62),
    )  # fmt: skip
    dxb, dxs = flat(tag, np.zeros_like(x))
    bdx = buffer(ctx, dxb)
    cl.Kernel(prg, "norm_dx")(
        queue, gsz, lsz, *shape_args, np.int32(spt), np.int32(1), eps, *t3(bx, xs), *t3(bdy, dys),
        *stats, wb, np.uint64(0), A, np.uint64(0), B, np.uint64(0), *t3(bdx, dxs),
    )  # fmt: skip
    cl.enqueue_copy(queue, dxb, bdx)
    g = dy * w[None, :, None]
    cnt = rows_of(x, G, per_channel).shape[1]
    sa = np.zeros(rows)
    sb = np.zeros(rows)
    np.add.at(sa, idx, g)
    np.add.at(sb, idx, g * xhat)
    a_term = 0 if rms else sa[idx] / cnt
    ref_dx = rstd[idx] * (g - a_term - xhat * sb[idx] / cnt)
    got_dx = read(tag, dxb, x.shape, dxs)
    scale = np.abs(ref_dx).max() + 1
    np.testing.assert_allclose(got_dx, ref_dx, rtol=RTOL[tag], atol=RTOL[tag] * scale * 4)
    # weight gradients: sums by channel without the weight
    Ac, Bc = buffer(ctx, np.zeros(C, acc_np)), buffer(ctx, np.zeros(C, acc_np))
    nw_prg = build("norm", [o for o in opts if o != "-DHAS_W"])
    cl.Kernel(nw_prg, "norm_sums")(
        queue, (C * LWS,), (LWS,), *shape_args, np.int32(spt), np.int32(1), eps, *t3(bx, xs),
        *t3(bdy, dys),
        *stats, wb, np.uint64(0), Ac, np.uint64(0), Bc, np.uint64(0),
        np.uint64(1), np.uint64(2**62),
    )  # fmt: skip
    got_a, got_b = np.zeros(C, acc_np), np.zeros(C, acc_np)
    cl.enqueue_copy(queue, got_a, Ac)
    cl.enqueue_copy(queue, got_b, Bc)
    np.testing.assert_allclose(got_a, dy.sum(axis=(0, 2)), rtol=tol, atol=tol * 100)
    np.testing.assert_allclose(got_b, (dy * xhat).sum(axis=(0, 2)), rtol=tol, atol=tol * 100)


@pytest.mark.parametrize("tag", ["float", "half"])
def test_eval_mode_var_in(ctx, queue, build, rng, tag):
    """-DVAR_IN with running statistics of the data's dtype: y and dx = rstd * w * dy."""
    N, C, S = 2, 3, 5
    opts = [f"-DX_T={tag}", "-DACC_T=float", f"-DSTAT_T={tag}", f"-DW_T={tag}", "-DHAS_W"]
    prg = build("norm", opts + ["-DVAR_IN"])
    x = to_f64(tag, store(tag, rng.uniform(-2, 2, (N, C, S))))
    rm = to_f64(tag, store(tag, rng.uniform(-1, 1, C)))
    rv = to_f64(tag, store(tag, rng.uniform(0.5, 2, C)))
    w = to_f64(tag, store(tag, rng.uniform(0.5, 1.5, C)))
    xb, xs = flat(tag, x)
    bx, bm, bv, bw = (buffer(ctx, a) for a in (xb, store(tag, rm), store(tag, rv), store(tag, w)))
    yb, ys = flat(tag, np.zeros_like(x))
    by = buffer(ctx, yb)
    shape_args = [np.int64(N), np.int64(C), np.int64(S), np.int64(C), np.int32(1)]
    stats = [bm, np.uint64(0), bv, np.uint64(0)]
    gsz, lsz = elements_launch(N, C, S, 2)
    cl.Kernel(prg, "norm_apply")(
        queue, gsz, lsz, *shape_args, np.int32(2), np.float32(EPS), *t3(bx, xs), *stats,
        bw, np.uint64(0), bw, np.uint64(0), *t3(by, ys),
    )  # fmt: skip
    cl.enqueue_copy(queue, yb, by)
    rstd = 1 / np.sqrt(rv + EPS)
    ref = (x - rm[None, :, None]) * rstd[None, :, None] * w[None, :, None]
    np.testing.assert_allclose(read(tag, yb, x.shape, ys), ref, rtol=RTOL[tag], atol=RTOL[tag])
    cl.Kernel(prg, "norm_dx")(
        queue, gsz, lsz, *shape_args, np.int32(2), np.int32(0), np.float32(EPS), *t3(bx, xs),
        *t3(bx, xs), *stats, bw, np.uint64(0), bw, np.uint64(0), bw, np.uint64(0), *t3(by, ys),
    )  # fmt: skip
    cl.enqueue_copy(queue, yb, by)
    ref_dx = rstd[None, :, None] * w[None, :, None] * x
    np.testing.assert_allclose(read(tag, yb, x.shape, ys), ref_dx, rtol=RTOL[tag], atol=RTOL[tag])


# Build variants as csrc/ops/Norm.cpp forms them (-DHAS_W / -DHAS_B / -DRMS / -DVAR_IN /
# -DRUNNING, and statistics of the data's dtype): every program holds norm_dx, so a variant that
# the device's compiler cannot build breaks the forward ops too.
BUILD_VARIANTS = [
    [],
    ["-DHAS_B"],
    ["-DHAS_W"],
    ["-DHAS_W", "-DHAS_B"],
    ["-DRMS"],
    ["-DRMS", "-DHAS_W"],
    ["-DVAR_IN"],
    ["-DVAR_IN", "-DHAS_W", "-DSTAT_T={tag}"],
    ["-DRUNNING", "-DRUN_T={tag}"],
    ["-DRUNNING", "-DRUN_T={tag}", "-DHAS_W", "-DHAS_B"],
]

_BUILD_ALL = r"""
import json, sys
import pyopencl as cl
platform, device, source, variants = json.loads(sys.stdin.read())
dev = [d for p in cl.get_platforms() if p.name == platform
       for d in p.get_devices() if d.name == device][0]
ctx = cl.Context([dev])
for options in variants:
    print("building", " ".join(options), flush=True)
    cl.Program(ctx, source).build(options=options)
print("all built", flush=True)
"""


@pytest.mark.parametrize("tag", FLOAT_TAGS)
def test_build_variants(ctx, has_fp64, tag):
    """norm.cl builds for the variants the host builds, in a separate process: Intel's CPU
    runtime (opencl-rt 2021.2, vectoriser on) crashed the process with SIGSEGV while building
    the variants without -DHAS_W / -DVAR_IN before norm_dx computed its count outside
    `if (use_sums)` (ci/intel_norm_crash.py holds the minimal reproducer). pyopencl's binary
    cache is off in the child so that the device's compiler really runs."""
    need_fp64(has_fp64, tag)
    source = (KERNEL_DIR / "common.clh").read_text() + "\n" + (KERNEL_DIR / "norm.cl").read_text()
    acc = "double" if tag == "double" else "float"
    base = [f"-DX_T={tag}", f"-DACC_T={acc}"] + (["-DTORCH_OCL_FP64"] if has_fp64 else [])
    # float: every variant; the other types: those without -DHAS_W / -DVAR_IN (the ones Intel's
    # compiler crashed on), to keep the builds few.
    chosen = [v for v in BUILD_VARIANTS if tag == "float" or not {"-DHAS_W", "-DVAR_IN"} & set(v)]
    variants = [base + [o.format(tag=tag) for o in v] for v in chosen]
    dev = ctx.devices[0]
    proc = subprocess.run(
        [sys.executable, "-c", _BUILD_ALL],
        input=json.dumps([dev.platform.name, dev.name, source, variants]),
        capture_output=True,
        text=True,
        env=dict(os.environ, PYOPENCL_NO_CACHE="1"),
        timeout=600,
    )
    assert proc.returncode == 0 and "all built" in proc.stdout, (
        f"building norm.cl on {dev.platform.name} / {dev.name} failed "
        f"(exit {proc.returncode}); last variant tried: "
        f"{(proc.stdout.strip().splitlines() or ['none'])[-1]}\n{proc.stderr[-2000:]}"
    )
