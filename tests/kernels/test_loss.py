"""Tests for kernels/loss.cl (nll_loss_forward / nll_loss_backward) against NumPy float64.

Launch as stated at the top of loss.cl and done by csrc/ops/Loss.cpp: global = {roundup(N, 64)},
local = {64}; build options -DT=<tag> -DACC_T=<float|double> [-DHAS_WEIGHT] [-DMEAN]. Arguments:
  nll_loss_forward(N, C, in, in_off, in_sn, in_sc, target, t_off, t_stride, weight, w_off,
                   ignore_index, loss, loss_off, wsum, wsum_off, err, err_code)
  nll_loss_backward(N, C, gin, gin_off, gin_sn, gin_sc, target, t_off, t_stride, weight, w_off,
                    ignore_index, gout, gout_off, gout_stride, total_weight, tw_off, err, err_code)
Without a weight the host passes the input buffer as `weight` (never read); so do these tests.
A target outside [0, C) that is not ignore_index stores err_code in *err if it is still 0; the
forward then writes NaN for that row, the backward leaves the row alone.
"""

import numpy as np
import pytest
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

LWS = 64
RTOL = {"float": 1e-5, "double": 1e-12, "half": 2e-3, "bfloat16": 1.6e-2}
# absolute rounding error of a stored subnormal
ATOL = {"float": 2.0**-150, "double": 2.0**-1075, "half": 2.0**-25, "bfloat16": 2.0**-134}
FILL = 77.0  # every element of a buffer that the kernel must not write
# (N, C): one row / one class, N < LWS, N == LWS, N > LWS (global rounded up), larger C
SHAPES = [(1, 1), (1, 6), (7, 3), (64, 10), (65, 33), (200, 5)]


def acc_of(tag):
    return "double" if tag == "double" else "float"


def strided(flat, off, shape, strides):
    isz = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[off:], shape=shape, strides=tuple(s * isz for s in strides), writeable=True
    )


def matrix_buffer(tag, data, off, sn, sc):
    """FILL-filled flat buffer holding the stored data[i, c] at off + i*sn + c*sc."""
    N, C = data.shape
    flat = np.full(off + (N - 1) * sn + (C - 1) * sc + 3, store(tag, FILL), dtype=STORE[tag])
    strided(flat, off, (N, C), (sn, sc))[...] = data
    return flat


def vector_buffer(dtype, data, off, stride, fill):
    n = len(data)
    flat = np.full(off + max(n - 1, 0) * max(stride, 0) + 3, fill, dtype=dtype)
    strided(flat, off, (n,), (stride,))[...] = data
    return flat


def layouts(N, C):
    """(name, in_off, in_sn, in_sc, t_off, t_stride); a single row also as the host's 1-D input
    (row stride 0)."""
    out = [
        ("contiguous", 3, C, 1, 2, 1),
        ("padded_rows", 5, C + 3, 1, 1, 3),
        ("transposed", 2, 1, N + 2, 4, 2),
        ("strided", 4, 2 * C + 1, 2, 0, 1),
    ]
    if N == 1:
        out.append(("1-D", 1, 0, 1, 3, 1))
    return out


def ignore_choices(rng, C):
    """ignore_index values: torch's default, a valid class (those rows are ignored) and one past
    the classes (no error for it)."""
    return (-100, int(rng.integers(0, C)), C + 2)


def make_case(rng, tag, N, C, ignore_index, invalid=()):
    """Stored log-probabilities [N, C], int64 targets with some rows ignored, stored weight [C]."""
    logits = rng.standard_normal((N, C)) * 2
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    logp = np.minimum(logp, 0.0)  # log(1) may round to a tiny positive value
    x = store(tag, logp)
    t = rng.integers(0, C, N)
    t[rng.random(N) < 0.25] = ignore_index
    for row, value in invalid:
        t[row] = value
    w = store(tag, rng.uniform(0.25, 2.0, C))
    return x, t.astype(np.int64), w


def ref_forward(xv, t, wv, ignore_index, has_weight):
    """float64 (loss, wsum); NaN for a target outside [0, C)."""
    N, C = xv.shape
    loss, wsum = np.zeros(N), np.zeros(N)
    for i in range(N):
        if t[i] == ignore_index:
            continue
        if not 0 <= t[i] < C:
            loss[i] = wsum[i] = np.nan
            continue
        w = wv[t[i]] if has_weight else 1.0
        loss[i], wsum[i] = -w * xv[i, t[i]], w
    return loss, wsum


def run_forward(ctx, queue, build, tag, has_weight, x, lay, t, w, ignore_index, code, err0=0):
    _, in_off, sn, sc, t_off, t_stride = lay
    N, C = x.shape
    prg = build("loss", [f"-DT={tag}", f"-DACC_T={acc_of(tag)}"] + ["-DHAS_WEIGHT"] * has_weight)
    in_buf = buffer(ctx, matrix_buffer(tag, x, in_off, sn, sc))
    t_buf = buffer(ctx, vector_buffer(np.int64, t, t_off, t_stride, -7))
    w_off = 1
    w_buf = buffer(ctx, vector_buffer(STORE[tag], w, w_off, 1, store(tag, FILL)))
    loss_off, wsum_off = 4, 2
    fill = store(tag, FILL)
    loss0 = np.full(loss_off + N + 2, fill, dtype=STORE[tag])
    wsum0 = np.full(wsum_off + N + 2, fill, dtype=STORE[tag])
    loss_buf, wsum_buf = buffer(ctx, loss0), buffer(ctx, wsum0)
    err = np.array([err0], np.int32)
    err_buf = buffer(ctx, err)
    u64, i64 = np.uint64, np.int64
    cl.Kernel(prg, "nll_loss_forward")(
        queue, (-(-N // LWS) * LWS,), (LWS,), u64(N), u64(C), in_buf, u64(in_off), i64(sn),
        i64(sc), t_buf, u64(t_off), i64(t_stride), w_buf if has_weight else in_buf,
        u64(w_off), i64(ignore_index), loss_buf, u64(loss_off), wsum_buf, u64(wsum_off),
        err_buf, np.int32(code),
    )  # fmt: skip
    loss, wsum = np.empty_like(loss0), np.empty_like(wsum0)
    cl.enqueue_copy(queue, loss, loss_buf)
    cl.enqueue_copy(queue, wsum, wsum_buf)
    cl.enqueue_copy(queue, err, err_buf)
    queue.finish()
    for got, off, init in ((loss, loss_off, loss0), (wsum, wsum_off, wsum0)):
        assert np.all(got[:off] == init[:off]) and np.all(got[off + N :] == init[off + N :]), (
            "wrote outside the outputs"
        )
    return to_f64(tag, loss[loss_off : loss_off + N]), to_f64(tag, wsum[wsum_off:][:N]), err[0]


def check_forward(tag, has_weight, x, t, w, ignore_index, got_loss, got_wsum, what):
    want_loss, want_wsum = ref_forward(to_f64(tag, x), t, to_f64(tag, w), ignore_index, has_weight)
    # -w * x of two stored values is exact in ACC_T (at most 2 x 24 bits in float, 2 x 53 bits
    # rounded once in double), so the stored result is the reference rounded once to T
    for name, got, want in (("loss", got_loss, want_loss), ("wsum", got_wsum, want_wsum)):
        np.testing.assert_array_equal(
            got, to_f64(tag, store(tag, want)), err_msg=f"{what}: {name} differs"
        )


@pytest.mark.parametrize("has_weight", (False, True), ids=("no_weight", "weight"))
@pytest.mark.parametrize("tag", FLOAT_TAGS)
def test_forward(ctx, queue, build, has_fp64, rng, tag, has_weight):
    need_fp64(has_fp64, tag)
    code = int(rng.integers(1, 1000))
    for N, C in SHAPES:
        for k, lay in enumerate(layouts(N, C)):
            ignore_index = ignore_choices(rng, C)[k % 3]
            x, t, w = make_case(rng, tag, N, C, ignore_index)
            loss, wsum, err = run_forward(
                ctx, queue, build, tag, has_weight, x, lay, t, w, ignore_index, code
            )
            what = f"N={N} C={C} layout={lay[0]} ignore_index={ignore_index}"
            assert err == 0, f"{what}: a valid batch set the error word"
            check_forward(tag, has_weight, x, t, w, ignore_index, loss, wsum, what)
            ignored = t == ignore_index
            assert np.all(loss[ignored] == 0) and np.all(wsum[ignored] == 0), what
            assert np.all(loss[~ignored] >= 0), f"{what}: -w * log p must be >= 0"
            if not has_weight:
                assert np.all(wsum[~ignored] == 1), what


def invalid_rows(rng, N, C):
    """(row, target) pairs with targets below 0 and at or above C (never the ignore_index)."""
    rows = rng.choice(N, size=min(N, 3), replace=False)
    values = (-1, C, int(rng.integers(C + 1, C + 50)))
    return list(zip(rows.tolist(), values[: len(rows)], strict=True))


@pytest.mark.parametrize("has_weight", (False, True), ids=("no_weight", "weight"))
@pytest.mark.parametrize("tag", FLOAT_TAGS)
def test_forward_invalid_target(ctx, queue, build, has_fp64, rng, tag, has_weight):
    need_fp64(has_fp64, tag)
    for N, C in ((1, 4), (9, 5), (70, 12)):
        lay = layouts(N, C)[1]
        code = int(rng.integers(1, 1000))
        bad = invalid_rows(rng, N, C)
        x, t, w = make_case(rng, tag, N, C, -100, bad)
        loss, wsum, err = run_forward(ctx, queue, build, tag, has_weight, x, lay, t, w, -100, code)
        what = f"N={N} C={C}"
        assert err == code, f"{what}: error word {err}, expected the code {code}"
        rows = [r for r, _ in bad]
        assert np.isnan(loss[rows]).all() and np.isnan(wsum[rows]).all(), what
        valid = np.ones(N, bool)
        valid[rows] = False
        assert np.isfinite(loss[valid]).all(), what
        check_forward(tag, has_weight, x, t, w, -100, loss, wsum, what)
        # a negative target equal to ignore_index is ignored, not an error
        t2 = t.copy()
        t2[rows[0]] = -1
        loss, _, err = run_forward(ctx, queue, build, tag, has_weight, x, lay, t2, w, -1, code)
        assert loss[rows[0]] == 0
        assert err == (code if len(rows) > 1 else 0), what
        # an error already recorded is kept (the first error wins)
        first = code + 1
        _, _, err = run_forward(
            ctx, queue, build, tag, has_weight, x, lay, t, w, -100, code, err0=first
        )
        assert err == first, what


# backward modes: (name, gout stride, MEAN): reduction none (per-row gradient), sum and mean
# (one reduced gradient, stride 0)
MODES = [("none", 2, False), ("sum", 0, False), ("mean", 0, True)]
# gin layouts (off, sn, sc): contiguous and transposed, both at a non-zero offset
GIN_LAYOUTS = [(3, "row"), (2, "col")]


def run_backward(
    ctx, queue, build, tag, has_weight, mode, N, C, gin_lay, t, t_off, t_stride, w, ignore_index,
    gout, tw, code, err0=0,
):  # fmt: skip
    """Returns (the whole gin buffer as stored, its initial content, gin_off, sn, sc, err)."""
    _, gout_stride, mean = mode
    gin_off, order = gin_lay
    sn, sc = (C, 1) if order == "row" else (1, N)
    opts = [f"-DT={tag}", f"-DACC_T={acc_of(tag)}"]
    opts += ["-DHAS_WEIGHT"] * has_weight + ["-DMEAN"] * mean
    prg = build("loss", opts)
    fill = store(tag, FILL)
    gin0 = matrix_buffer(tag, np.zeros((N, C), STORE[tag]), gin_off, sn, sc)  # zero-filled
    gin_buf = buffer(ctx, gin0)
    t_buf = buffer(ctx, vector_buffer(np.int64, t, t_off, t_stride, -7))
    w_off, gout_off, tw_off = 2, 3, 1
    w_buf = buffer(ctx, vector_buffer(STORE[tag], w, w_off, 1, fill))
    n_g = N if gout_stride else 1
    gout_buf = buffer(ctx, vector_buffer(STORE[tag], gout[:n_g], gout_off, gout_stride or 1, fill))
    tw_buf = buffer(ctx, vector_buffer(STORE[tag], [tw], tw_off, 1, fill))
    err = np.array([err0], np.int32)
    err_buf = buffer(ctx, err)
    u64, i64 = np.uint64, np.int64
    cl.Kernel(prg, "nll_loss_backward")(
        queue, (-(-N // LWS) * LWS,), (LWS,), u64(N), u64(C), gin_buf, u64(gin_off), i64(sn),
        i64(sc), t_buf, u64(t_off), i64(t_stride), w_buf if has_weight else gin_buf, u64(w_off),
        i64(ignore_index), gout_buf, u64(gout_off), i64(gout_stride), tw_buf, u64(tw_off),
        err_buf, np.int32(code),
    )  # fmt: skip
    gin = np.empty_like(gin0)
    cl.enqueue_copy(queue, gin, gin_buf)
    cl.enqueue_copy(queue, err, err_buf)
    queue.finish()
    return gin, gin0, gin_off, sn, sc, err[0]


def check_backward(tag, has_weight, mode, t, w, ignore_index, gout, tw, res, what):
    """Only gin[i, t_i] of valid rows may change, to -w[t_i] * g_i (/ total_weight for MEAN)."""
    gin, gin0, gin_off, sn, sc, _ = res
    N, C = len(t), len(w)
    _, gout_stride, mean = mode
    wv, gv, twv = to_f64(tag, w), to_f64(tag, gout), float(to_f64(tag, [tw])[0])
    written = np.zeros(gin.size, bool)
    want = np.zeros(gin.size)
    for i in range(N):
        if t[i] == ignore_index or not 0 <= t[i] < C:
            continue
        pos = gin_off + i * sn + t[i] * sc
        g = gv[i] if gout_stride else gv[0]
        want[pos] = -(wv[t[i]] if has_weight else 1.0) * (g / twv if mean else g)
        written[pos] = True
    np.testing.assert_array_equal(
        gin[~written], gin0[~written], err_msg=f"{what}: wrote outside the target elements"
    )
    got = to_f64(tag, gin[written])
    # ACC_T rounds the quotient and the product (MEAN), the store rounds to T
    tol = 3 * RTOL[acc_of(tag)] * np.abs(want[written]) + RTOL[tag] * np.abs(want[written])
    err = np.abs(got - want[written])
    assert np.all(err <= tol + ATOL[tag]), f"{what}: max err {err.max():g}"
    return written


@pytest.mark.parametrize("mode", MODES, ids=[m[0] for m in MODES])
@pytest.mark.parametrize("has_weight", (False, True), ids=("no_weight", "weight"))
@pytest.mark.parametrize("tag", FLOAT_TAGS)
def test_backward(ctx, queue, build, has_fp64, rng, tag, has_weight, mode):
    need_fp64(has_fp64, tag)
    code = int(rng.integers(1, 1000))
    for N, C in SHAPES:
        for k, (t_off, t_stride) in enumerate(((1, 1), (3, 2))):
            gin_lay = GIN_LAYOUTS[k]
            ignore_index = ignore_choices(rng, C)[(k + N) % 3]
            _, t, w = make_case(rng, tag, N, C, ignore_index)
            if not (t != ignore_index).any():
                t[0] = (ignore_index + 1) % C  # total_weight of a mean must not be zero
            gout = store(tag, rng.standard_normal(N))
            wv = to_f64(tag, w) if has_weight else np.ones(C)
            tw = store(tag, [wv[t[t != ignore_index]].sum()])[0]
            res = run_backward(
                ctx, queue, build, tag, has_weight, mode, N, C, gin_lay, t, t_off, t_stride, w,
                ignore_index, gout, tw, code,
            )  # fmt: skip
            what = f"N={N} C={C} gin={gin_lay[1]} ignore_index={ignore_index}"
            assert res[-1] == 0, f"{what}: a valid batch set the error word"
            written = check_backward(tag, has_weight, mode, t, w, ignore_index, gout, tw, res, what)
            assert written.sum() == np.sum(t != ignore_index), what


@pytest.mark.parametrize("mode", MODES, ids=[m[0] for m in MODES])
@pytest.mark.parametrize("tag", ("float", "half"))
def test_backward_invalid_target(ctx, queue, build, rng, tag, mode):
    for N, C in ((1, 4), (9, 5), (70, 12)):
        code = int(rng.integers(1, 1000))
        bad = invalid_rows(rng, N, C)
        _, t, w = make_case(rng, tag, N, C, -100, bad)
        gout = store(tag, rng.standard_normal(N))
        tw = store(tag, [rng.uniform(1, 5)])[0]
        for has_weight in (False, True):
            res = run_backward(
                ctx, queue, build, tag, has_weight, mode, N, C, (2, "row"), t, 1, 1, w, -100,
                gout, tw, code,
            )  # fmt: skip
            what = f"N={N} C={C} weight={has_weight}"
            assert res[-1] == code, f"{what}: error word {res[-1]}, expected the code {code}"
            written = check_backward(tag, has_weight, mode, t, w, -100, gout, tw, res, what)
            gin, _, gin_off, sn, sc, _ = res
            rows = strided(gin, gin_off, (N, C), (sn, sc))[[r for r, _ in bad]]
            assert not rows.any(), f"{what}: a row with an invalid target was written"
            assert written.sum() == N - len(bad) - np.sum(t == -100)
        # an error already recorded is kept (the first error wins)
        first = code + 1
        res = run_backward(
            ctx, queue, build, tag, True, mode, N, C, (0, "col"), t, 2, 1, w, -100, gout, tw,
            code, err0=first,
        )  # fmt: skip
        assert res[-1] == first, f"N={N} C={C}: the first error code was overwritten"
