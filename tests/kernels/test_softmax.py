"""Tests for kernels/softmax.cl against a NumPy float64 reference.

Every launch follows the geometry stated at the top of softmax.cl: one work-group per row,
global = {M*LWS}, local = {LWS}; build options -DIN_T, -DOUT_T, -DACC_T (double only for a double
input, as csrc/ops/Softmax.cpp picks it), -DLWS and optionally -DLOG. Arguments:
  softmax_forward(M, K, in, in_off, out, out_off)
  softmax_backward(M, K, g, g_off, y, y_off, gin, gin_off)   (g and y share IN_T)
Buffers are padded in front (non-zero offsets) and behind, and the padding of the output must
come back untouched. The reference is computed in float64 from the stored input values.
"""

import numpy as np
import pytest
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

LWS = 256
# row lengths: one element, odd, < LWS, == LWS, > LWS (not a multiple)
SIZES = (1, 7, 63, 256, 1000)
# relative tolerance for a value stored in (or accumulated in) each type
RTOL = {"float": 1e-5, "double": 1e-12, "half": 2e-3, "bfloat16": 1.6e-2}
# absolute rounding error of a stored subnormal (half subnormals start at 6e-5)
ATOL = {"float": 2.0**-150, "double": 2.0**-1075, "half": 2.0**-25, "bfloat16": 2.0**-134}
# (IN_T, OUT_T) pairs the host uses: same type, or half/bfloat16 -> float (half_to_float)
FWD_TAGS = [
    ("float", "float"),
    ("double", "double"),
    ("half", "half"),
    ("bfloat16", "bfloat16"),
    ("half", "float"),
    ("bfloat16", "float"),
]
# backward: grad (and y) dtype -> input dtype, e.g. float gradients of a half_to_float softmax
BWD_TAGS = [
    ("float", "float"),
    ("double", "double"),
    ("half", "half"),
    ("bfloat16", "bfloat16"),
    ("float", "half"),
    ("float", "bfloat16"),
]
IN_PAD, OUT_PAD, TAIL = 3, 5, 4
FILL = 77.0  # what the output buffer holds before the launch


@pytest.fixture(scope="module")
def slow(ctx):
    """True on Oclgrind (a simulator): keep the number of rows small there."""
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


def acc_of(in_tag):
    return "double" if in_tag == "double" else "float"


def padded(tag, data, pad):
    """Flat buffer with data after `pad` elements of FILL and TAIL more behind."""
    flat = np.full(pad + data.size + TAIL, store(tag, FILL), dtype=STORE[tag])
    flat[pad : pad + data.size] = data.ravel()
    return flat


def _opts(in_tag, out_tag, log, lws):
    opts = [f"-DIN_T={in_tag}", f"-DOUT_T={out_tag}", f"-DACC_T={acc_of(in_tag)}", f"-DLWS={lws}"]
    return opts + (["-DLOG"] if log else [])


def _read_output(queue, buf, out_tag, n):
    """Reads the output buffer, checks its padding and returns the n values as float64."""
    res = np.empty(OUT_PAD + n + TAIL, dtype=STORE[out_tag])
    cl.enqueue_copy(queue, res, buf)
    queue.finish()
    pad = np.concatenate([res[:OUT_PAD], res[OUT_PAD + n :]])
    assert np.all(pad == store(out_tag, FILL)), "wrote outside the output"
    return to_f64(out_tag, res[OUT_PAD : OUT_PAD + n])


def run_forward(ctx, queue, build, in_tag, out_tag, log, data, lws=LWS):
    """data: stored values [M, K] of in_tag; returns the output [M, K] as float64."""
    M, K = data.shape
    prg = build("softmax", _opts(in_tag, out_tag, log, lws))
    in_buf = buffer(ctx, padded(in_tag, data, IN_PAD))
    out_buf = buffer(ctx, padded(out_tag, np.zeros(0, STORE[out_tag]), OUT_PAD + M * K))
    u64 = np.uint64
    cl.Kernel(prg, "softmax_forward")(
        queue, (M * lws,), (lws,), u64(M), u64(K), in_buf, u64(IN_PAD), out_buf, u64(OUT_PAD)
    )
    return _read_output(queue, out_buf, out_tag, M * K).reshape(M, K)


def run_backward(ctx, queue, build, in_tag, out_tag, log, g, y, lws=LWS):
    """g, y: stored values [M, K] of in_tag; returns grad_in [M, K] as float64."""
    M, K = g.shape
    prg = build("softmax", _opts(in_tag, out_tag, log, lws))
    g_buf = buffer(ctx, padded(in_tag, g, IN_PAD))
    y_off = IN_PAD + 2  # a different offset for each operand
    y_buf = buffer(ctx, padded(in_tag, y, y_off))
    gin_buf = buffer(ctx, padded(out_tag, np.zeros(0, STORE[out_tag]), OUT_PAD + M * K))
    u64 = np.uint64
    cl.Kernel(prg, "softmax_backward")(
        queue, (M * lws,), (lws,), u64(M), u64(K), g_buf, u64(IN_PAD), y_buf, u64(y_off),
        gin_buf, u64(OUT_PAD),
    )  # fmt: skip
    return _read_output(queue, gin_buf, out_tag, M * K).reshape(M, K)


def ref_forward(x, log):
    """float64 softmax / log_softmax of rows, written like the definition (NaN max like torch)."""
    with np.errstate(all="ignore"):
        mx = np.max(x, axis=1, keepdims=True)
        e = np.exp(x - mx)
        s = np.sum(e, axis=1, keepdims=True)
        if log:
            ref = x - (mx + np.log(s))
            mag = np.abs(x) + np.abs(mx) + np.abs(np.log(s))
        else:
            ref = e / s
            mag = np.abs(ref)
    return ref, mag


def ref_backward(g, y, log):
    with np.errstate(all="ignore"):
        if log:
            ey = np.exp(y)
            ref = g - ey * np.sum(g, axis=1, keepdims=True)
            mag = np.abs(g) + ey * np.sum(np.abs(g), axis=1, keepdims=True)
        else:
            ref = y * (g - np.sum(g * y, axis=1, keepdims=True))
            mag = np.abs(y) * (np.abs(g) + np.sum(np.abs(g * y), axis=1, keepdims=True))
    return ref, mag


def check(got, ref, mag, acc_tag, out_tag, what=""):
    """NaN where the reference is NaN, equal infinities, finite values within
    RTOL[acc] * mag (rounding while accumulating) + RTOL[out] * |ref| + ATOL[out] (rounding of
    the store)."""
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"{what}: NaN positions differ")
    inf = np.isinf(ref)
    np.testing.assert_array_equal(got[inf], ref[inf], err_msg=f"{what}: infinities differ")
    ok = ~nan & ~inf
    err = np.abs(got[ok] - ref[ok])
    tol = RTOL[acc_tag] * mag[ok] + RTOL[out_tag] * np.abs(ref[ok]) + ATOL[out_tag]
    if err.size:
        worst = int(np.argmax(err - tol))
        assert np.all(err <= tol), f"{what}: err {err[worst]:g} > tol {tol[worst]:g}"


def rows_of(slow, K):
    return 2 if slow else (9 if K < LWS else 4)


@pytest.mark.parametrize("K", SIZES)
@pytest.mark.parametrize("log", (False, True), ids=("softmax", "log_softmax"))
@pytest.mark.parametrize("in_tag,out_tag", FWD_TAGS)
def test_forward(ctx, queue, build, has_fp64, rng, slow, in_tag, out_tag, log, K):
    need_fp64(has_fp64, in_tag, out_tag)
    M = rows_of(slow, K)
    # a different scale and shift per row; exp(x - max) stays far from float underflow
    x = rng.standard_normal((M, K)) * rng.uniform(0.5, 4, (M, 1)) + rng.uniform(-30, 30, (M, 1))
    data = store(in_tag, x)
    got = run_forward(ctx, queue, build, in_tag, out_tag, log, data)
    ref, mag = ref_forward(to_f64(in_tag, data), log)
    check(got, ref, mag, acc_of(in_tag), out_tag, f"M={M} K={K}")
    assert np.isfinite(got).all()
    if not log:
        # each row is a distribution: sums to one up to the rounding of each stored element
        np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=2 * RTOL[out_tag])
    if K == 1:
        np.testing.assert_array_equal(got, np.zeros((M, 1)) if log else np.ones((M, 1)))


@pytest.mark.parametrize("K", SIZES)
@pytest.mark.parametrize("log", (False, True), ids=("softmax", "log_softmax"))
@pytest.mark.parametrize("in_tag,out_tag", BWD_TAGS)
def test_backward(ctx, queue, build, has_fp64, rng, slow, in_tag, out_tag, log, K):
    need_fp64(has_fp64, in_tag, out_tag)
    M = rows_of(slow, K)
    # y is a real forward output (of random logits), g a random gradient
    y, _ = ref_forward(rng.standard_normal((M, K)) * 2, log)
    y_st = store(in_tag, y)
    g_st = store(in_tag, rng.standard_normal((M, K)))
    got = run_backward(ctx, queue, build, in_tag, out_tag, log, g_st, y_st)
    ref, mag = ref_backward(to_f64(in_tag, g_st), to_f64(in_tag, y_st), log)
    check(got, ref, mag, acc_of(in_tag), out_tag, f"M={M} K={K}")
    assert np.isfinite(got).all()


@pytest.mark.parametrize("lws", (1, 2, 32, 128))
@pytest.mark.parametrize("log", (False, True), ids=("softmax", "log_softmax"))
def test_local_sizes(ctx, queue, build, rng, log, lws):
    """Other work-group sizes (128 is the one the host uses): the strided loops and the
    tree reduction must cover every element for K below, at and above LWS."""
    for K in sorted({1, 5, lws, lws + 1, 3 * lws + 7, 300}):
        M = 3
        data = store("float", rng.standard_normal((M, K)) * 3)
        got = run_forward(ctx, queue, build, "float", "float", log, data, lws=lws)
        ref, mag = ref_forward(to_f64("float", data), log)
        check(got, ref, mag, "float", "float", f"forward lws={lws} K={K}")
        y, _ = ref_forward(rng.standard_normal((M, K)), log)
        y_st, g_st = store("float", y), store("float", rng.standard_normal((M, K)))
        got = run_backward(ctx, queue, build, "float", "float", log, g_st, y_st, lws=lws)
        ref, mag = ref_backward(to_f64("float", g_st), to_f64("float", y_st), log)
        check(got, ref, mag, "float", "float", f"backward lws={lws} K={K}")


def special_rows(rng, K):
    """Rows with NaN / +-Inf (K >= 7) and a finite row; values as float64."""
    x = rng.standard_normal((10, K)) * 2
    inf, nan = np.inf, np.nan
    x[0, K // 2] = nan  # NaN in the middle
    x[1, 0] = nan  # NaN first
    x[2, 3] = inf  # one +Inf: inf - inf = NaN, torch gives NaN for the whole row
    x[3, 5] = -inf  # one -Inf: probability 0 (log: -Inf), the rest finite
    x[4, 1], x[4, K - 2] = inf, -inf  # +Inf and -Inf: NaN
    x[5, :] = -inf  # all -Inf: -inf - -inf = NaN
    x[6, :] = nan  # all NaN
    x[7, 2], x[7, K - 1] = inf, inf  # two +Inf: NaN
    x[8, :] = -inf  # all -Inf but one: that one gets probability 1
    x[8, K - 3] = rng.standard_normal()
    # row 9 stays finite
    return x


def special_cases(rng):
    """(K, rows) for the special-value tests: one-element rows, and K < LWS and K > LWS."""
    one = np.array([[np.nan], [np.inf], [-np.inf], [rng.standard_normal()]])
    return [(1, one), (7, special_rows(rng, 7)), (300, special_rows(rng, 300))]


@pytest.mark.parametrize("log", (False, True), ids=("softmax", "log_softmax"))
@pytest.mark.parametrize("tag", FLOAT_TAGS)
def test_forward_nan_inf(ctx, queue, build, has_fp64, rng, tag, log):
    need_fp64(has_fp64, tag)
    for K, x in special_cases(rng):
        data = store(tag, x)
        got = run_forward(ctx, queue, build, tag, tag, log, data)
        vals = to_f64(tag, data)
        ref, mag = ref_forward(vals, log)
        check(got, ref, mag, acc_of(tag), tag, f"K={K}")
        # explicit expectations (the reference could share a misconception with the kernel)
        if K == 1:
            assert np.isnan(got[:3]).all()
            assert got[3, 0] == (0.0 if log else 1.0)
            continue
        assert np.isnan(got[[0, 1, 2, 4, 5, 6, 7]]).all()
        assert np.isfinite(got[9]).all()
        row3 = np.delete(got[3], 5)
        assert np.isfinite(row3).all()
        assert got[3, 5] == (-np.inf if log else 0.0)
        hot = np.full(K, -np.inf if log else 0.0)
        hot[K - 3] = 0.0 if log else 1.0
        np.testing.assert_array_equal(got[8], hot)


@pytest.mark.parametrize("log", (False, True), ids=("softmax", "log_softmax"))
def test_forward_special_values_match_torch(ctx, queue, build, rng, log):
    """The special-value semantics of the NumPy reference, checked against torch on the CPU
    (float64): the kernel must agree with torch itself."""
    torch = pytest.importorskip("torch", reason="torch (CPU) is the reference for this test")
    fn = torch.log_softmax if log else torch.softmax
    for K, x in special_cases(rng):
        data = store("float", x)
        got = run_forward(ctx, queue, build, "float", "float", log, data)
        vals = to_f64("float", data)
        want = fn(torch.from_numpy(vals), dim=1).numpy()
        _, mag = ref_forward(vals, log)
        check(got, want, mag, "float", "float", f"K={K}")
