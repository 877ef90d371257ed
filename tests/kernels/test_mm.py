"""Tests for kernels/mm.cl against a float64 numpy reference."""

import itertools

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

# Defaults from the top of kernels/mm.cl (the launch geometry depends on them).
LX, LY, TM = 2, 4, 6
TN = {
    np.float16: 16,
    np.float32: 16,
    np.float64: 8,
    np.uint8: 16,
    np.uint16: 16,
    np.uint32: 16,
    np.uint64: 8,
}
# The kernel's T for each numpy dtype (integers are unsigned: the host runs signed integer
# matrices through the unsigned type of their size).
CL_TYPE = {
    np.float16: "float -DMM_S=half",  # stored as half, computed in float
    np.float32: "float",
    np.float64: "double",
    np.uint8: "uchar",
    np.uint16: "ushort",
    np.uint32: "uint",
    np.uint64: "ulong",
}


def _fill(dtype):
    """A padding value that a stray read or write would show: NaN, or the integer maximum."""
    return dtype(np.nan) if issubclass(dtype, np.floating) else np.iinfo(dtype).max


def _is_fill(x):
    return np.isnan(x) if np.issubdtype(x.dtype, np.floating) else x == np.iinfo(x.dtype).max


def _ceil(a, b):
    return (a + b - 1) // b


def _roundup(a, b):
    return _ceil(a, b) * b


def _store(a, trans, ld, off, rows, cols, fill):
    """Lay out logical matrix a (rows x cols) in a flat buffer.

    Not transposed: a[r, c] at off + r*ld + c.  Transposed: at off + c*ld + r.
    Padding elements are set to `fill` so that reading them would be noticed.
    """
    outer, inner = (cols, rows) if trans else (rows, cols)
    assert ld >= inner
    flat = np.full(off + max(outer, 1) * ld, fill, dtype=a.dtype)
    view = flat[off : off + outer * ld].reshape(outer, ld)[:, :inner]
    view[...] = a.T if trans else a
    return flat


def run_mm(
    ctx,
    queue,
    build,
    a,
    b,
    *,
    a_trans=False,
    b_trans=False,
    alpha=1.0,
    beta=1.0,
    bias=None,
    bias_sm=0,
    bias_sn=0,
    pad=(0, 0, 0),
    offs=(0, 0, 0, 0),
    bias_flat=None,
    bias_is_c=False,
):
    """Run the mm kernel on a (M x K) and b (K x N); returns the M x N result."""
    dtype = a.dtype.type
    M, K = a.shape
    N = b.shape[1]
    a_off, b_off, c_off, bias_off = offs
    lda = (M if a_trans else K) + pad[0]
    ldb = (K if b_trans else N) + pad[1]
    ldc = N + pad[2]
    fill = _fill(dtype)
    a_flat = _store(a, a_trans, lda, a_off, M, K, fill)
    b_flat = _store(b, b_trans, ldb, b_off, K, N, fill)
    c_flat = np.full(c_off + M * ldc, fill, dtype=dtype)
    if bias_is_c:  # in-place addmm_: the bias is C itself (same offset and strides)
        c_flat[c_off:].reshape(M, ldc)[:, :N] = bias
        bias_off, bias_sm, bias_sn = c_off, ldc, 1

    opts = ["-DT=" + CL_TYPE[dtype]]
    if a_trans:
        opts.append("-DA_TRANS")
    if b_trans:
        opts.append("-DB_TRANS")
    if bias is not None or bias_flat is not None:
        opts.append("-DHAS_BIAS")
        if bias_flat is None and not bias_is_c:
            bias_flat = np.concatenate([np.full(bias_off, fill, dtype=dtype), bias.ravel()])
    prg = build("mm", opts)

    mf = cl.mem_flags

    def buf(x):
        # Zero-size buffers are not allowed; K = 0 still passes a (never read) buffer.
        host = x if x.size else np.zeros(1, dtype=dtype)
        return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)

    a_buf, b_buf, c_buf = buf(a_flat), buf(b_flat), buf(c_flat)
    bias_buf = c_buf if bias_is_c or bias_flat is None else buf(bias_flat)
    tn = TN[dtype]
    scalar = np.float32 if dtype is np.float16 else dtype  # alpha and beta in the compute type
    gsize = (_roundup(_ceil(N, tn), LX), _roundup(_ceil(M, TM), LY))
    kernel = cl.Kernel(prg, "mm")
    kernel(
        queue,
        gsize,
        (LX, LY),
        np.int32(M),
        np.int32(N),
        np.int32(K),
        a_buf,
        np.uint64(a_off),
        np.int64(lda),
        b_buf,
        np.uint64(b_off),
        np.int64(ldb),
        c_buf,
        np.uint64(c_off),
        np.int64(ldc),
        scalar(alpha),
        scalar(beta),
        bias_buf,
        np.uint64(bias_off),
        np.int64(bias_sm),
        np.int64(bias_sn),
        *(np.int64(0),) * 4,  # batch strides: a single matrix
    )
    cl.enqueue_copy(queue, c_flat, c_buf)
    queue.finish()
    c = c_flat[c_off:].reshape(M, ldc)
    # Padding columns of C must be untouched.
    assert _is_fill(c[:, N:]).all()
    assert _is_fill(c_flat[:c_off]).all()
    return c[:, :N].copy()


def reference(a, b, alpha=1.0, beta=1.0, bias=None):
    ref = alpha * (a.astype(np.float64) @ b.astype(np.float64))
    if bias is not None and beta != 0:
        ref = ref + beta * np.broadcast_to(bias.astype(np.float64), ref.shape)
    return ref


def check(out, ref, dtype, k):
    rtol = 1e-4 if dtype is np.float32 else 1e-11
    # Absolute tolerance scaled by the magnitude of the summands (data is in [-1, 1)).
    atol = rtol * max(1, k) ** 0.5 * max(1.0, float(np.abs(ref).max(initial=0.0)))
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)


@pytest.fixture(scope="module")
def slow(ctx):
    """True on Oclgrind (a simulator): keep shapes small there."""
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


TRANS = list(itertools.product([False, True], repeat=2))
SHAPES = [
    (1, 1, 1),
    (7, 13, 5),
    (33, 65, 17),
    (6, 16, 8),
    (12, 32, 9),
    (5, 17, 23),
    (25, 31, 64),
    (13, 8, 300),
    (70, 3, 19),
    (2, 100, 33),
]


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_mm_shapes(ctx, queue, build, rng, shape, a_trans, b_trans):
    M, N, K = shape
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    out = run_mm(ctx, queue, build, a, b, a_trans=a_trans, b_trans=b_trans)
    check(out, reference(a, b), np.float32, K)


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 13, 5), (33, 65, 17), (13, 8, 300)],
                         ids=lambda s: "x".join(map(str, s)))  # fmt: skip
def test_mm_half_storage(ctx, queue, build, rng, shape, a_trans, b_trans):
    # -DMM_S=half: half matrices read into float, accumulated in float and rounded once, as CPU
    # torch's half GEMM; NaN/Inf rows propagate.
    M, N, K = shape
    a, b = rand(rng, (M, K), np.float16), rand(rng, (K, N), np.float16)
    bias = rand(rng, (M, N), np.float16)
    if M > 2:
        a[1, 0], a[2, K - 1] = np.nan, np.inf
    out = run_mm(ctx, queue, build, a, b, a_trans=a_trans, b_trans=b_trans, alpha=0.5,
                 beta=2.0, bias=bias, bias_sm=N, bias_sn=1)  # fmt: skip
    ref = reference(a, b, 0.5, 2.0, bias)
    tol = 2.0**-11 * np.abs(ref) + 2.0**-22 * (max(K, 1) ** 0.5 + 4) * (
        np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + 2
    )
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(out[~finite], ref[~finite])
    assert (np.abs(out[finite] - ref[finite]) <= tol[finite]).all()


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_mm_k_zero(ctx, queue, build, rng, a_trans, b_trans):
    a = np.zeros((9, 0), np.float32)
    b = np.zeros((0, 19), np.float32)
    out = run_mm(ctx, queue, build, a, b, a_trans=a_trans, b_trans=b_trans, alpha=2.0)
    assert (out == 0).all()
    bias = rand(rng, (1, 19), np.float32)
    out = run_mm(
        ctx, queue, build, a, b, a_trans=a_trans, b_trans=b_trans, beta=0.5, bias=bias, bias_sn=1
    )
    np.testing.assert_array_equal(out, np.broadcast_to(np.float32(0.5) * bias, (9, 19)))


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
@pytest.mark.parametrize("kind", ["row", "col", "full", "scalar"])
@pytest.mark.parametrize("shape", [(7, 13, 5), (33, 65, 17), (1, 1, 1)])
def test_mm_bias(ctx, queue, build, rng, shape, kind, a_trans, b_trans):
    M, N, K = shape
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    if kind == "row":  # bias of shape (N,), broadcast over rows
        bias, sm, sn = rand(rng, (1, N), np.float32), 0, 1
    elif kind == "col":  # bias of shape (M, 1), broadcast over columns
        bias, sm, sn = rand(rng, (M, 1), np.float32), 1, 0
    elif kind == "scalar":
        bias, sm, sn = rand(rng, (1, 1), np.float32), 0, 0
    else:
        bias, sm, sn = rand(rng, (M, N), np.float32), N, 1
    out = run_mm(
        ctx,
        queue,
        build,
        a,
        b,
        a_trans=a_trans,
        b_trans=b_trans,
        alpha=0.75,
        beta=-1.5,
        bias=bias,
        bias_sm=sm,
        bias_sn=sn,
        offs=(0, 0, 0, 3),
    )
    check(out, reference(a, b, 0.75, -1.5, bias), np.float32, K)


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_mm_bias_aliases_c(ctx, queue, build, rng, a_trans, b_trans):
    # addmm_ in place: C = beta * C + alpha * A @ B, with padded C and an offset.
    M, N, K = 31, 45, 12
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    bias = rand(rng, (M, N), np.float32)
    out = run_mm(
        ctx,
        queue,
        build,
        a,
        b,
        a_trans=a_trans,
        b_trans=b_trans,
        alpha=0.5,
        beta=-2.0,
        bias=bias,
        bias_is_c=True,
        pad=(0, 0, 3),
        offs=(0, 0, 7, 0),
    )
    check(out, reference(a, b, 0.5, -2.0, bias), np.float32, K)


def test_mm_bias_transposed_strides(ctx, queue, build, rng):
    # A full bias stored column-major: bias[m, n] at m*1 + n*M.
    M, N, K = 11, 21, 7
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    bias = rand(rng, (M, N), np.float32)
    out = run_mm(
        ctx, queue, build, a, b, beta=2.0, bias_flat=bias.T.ravel().copy(), bias_sm=1, bias_sn=M
    )
    check(out, reference(a, b, 1.0, 2.0, bias), np.float32, K)


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_mm_alpha(ctx, queue, build, rng, a_trans, b_trans):
    a, b = rand(rng, (19, 23), np.float32), rand(rng, (23, 35), np.float32)
    out = run_mm(ctx, queue, build, a, b, a_trans=a_trans, b_trans=b_trans, alpha=-2.5)
    check(out, reference(a, b, -2.5), np.float32, 23)


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_mm_padded_and_offsets(ctx, queue, build, rng, a_trans, b_trans):
    M, N, K = 29, 37, 41
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    bias = rand(rng, (1, N), np.float32)
    out = run_mm(
        ctx,
        queue,
        build,
        a,
        b,
        a_trans=a_trans,
        b_trans=b_trans,
        alpha=1.25,
        beta=0.5,
        bias=bias,
        bias_sn=1,
        pad=(3, 5, 7),
        offs=(5, 11, 13, 2),
    )
    check(out, reference(a, b, 1.25, 0.5, bias), np.float32, K)


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_mm_nan_inf_rows(ctx, queue, build, rng, a_trans, b_trans):
    M, N, K = 20, 27, 15
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    a[3, 4] = np.nan
    a[8, 0] = np.inf
    a[19, 14] = -np.inf
    b = np.abs(b) + 0.1  # keep signs fixed so the infinities do not cancel into NaN
    out = run_mm(ctx, queue, build, a, b, a_trans=a_trans, b_trans=b_trans)
    assert np.isnan(out[3]).all()
    assert np.isposinf(out[8]).all()
    assert np.isneginf(out[19]).all()
    good = np.setdiff1d(np.arange(M), [3, 8, 19])
    assert np.isfinite(out[good]).all()
    check(out[good], reference(a[good], b), np.float32, K)


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_mm_nan_in_b_column(ctx, queue, build, rng, a_trans, b_trans):
    M, N, K = 14, 33, 10
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    b[2, 31] = np.nan
    out = run_mm(ctx, queue, build, a, b, a_trans=a_trans, b_trans=b_trans)
    assert np.isnan(out[:, 31]).all()
    assert np.isfinite(np.delete(out, 31, axis=1)).all()


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_mm_beta_zero_ignores_nan_bias(ctx, queue, build, rng, a_trans, b_trans):
    M, N, K = 9, 18, 6
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    bias = np.full((M, N), np.nan, np.float32)
    bias[0, 0] = np.inf
    out = run_mm(
        ctx,
        queue,
        build,
        a,
        b,
        a_trans=a_trans,
        b_trans=b_trans,
        alpha=2.0,
        beta=0.0,
        bias=bias,
        bias_sm=N,
        bias_sn=1,
    )
    assert np.isfinite(out).all()
    check(out, reference(a, b, 2.0), np.float32, K)


def test_mm_nan_bias_propagates_when_beta_nonzero(ctx, queue, build, rng):
    a, b = rand(rng, (7, 5), np.float32), rand(rng, (5, 9), np.float32)
    bias = np.zeros((1, 9), np.float32)
    bias[0, 4] = np.nan
    out = run_mm(ctx, queue, build, a, b, beta=1.0, bias=bias, bias_sn=1)
    assert np.isnan(out[:, 4]).all()
    assert np.isfinite(np.delete(out, 4, axis=1)).all()


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
@pytest.mark.parametrize(
    "shape", [(64, 64, 64), (100, 130, 257)], ids=lambda s: "x".join(map(str, s))
)
def test_mm_larger(ctx, queue, build, rng, slow, shape, a_trans, b_trans):
    M, N, K = shape
    if slow and M * N * K > 64**3:
        pytest.skip("too slow on Oclgrind")
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    out = run_mm(ctx, queue, build, a, b, a_trans=a_trans, b_trans=b_trans)
    check(out, reference(a, b), np.float32, K)


@pytest.mark.parametrize("a_trans,b_trans", TRANS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 13, 5), (33, 65, 17), (20, 9, 70)])
def test_mm_float64(ctx, queue, build, has_fp64, rng, shape, a_trans, b_trans):
    if not has_fp64:
        pytest.skip("device has no cl_khr_fp64")
    M, N, K = shape
    a, b = rand(rng, (M, K), np.float64), rand(rng, (K, N), np.float64)
    bias = rand(rng, (1, N), np.float64)
    out = run_mm(
        ctx,
        queue,
        build,
        a,
        b,
        a_trans=a_trans,
        b_trans=b_trans,
        alpha=0.5,
        beta=3.0,
        bias=bias,
        bias_sn=1,
        pad=(1, 2, 3),
        offs=(1, 2, 3, 4),
    )
    check(out, reference(a, b, 0.5, 3.0, bias), np.float64, K)


# ------------------------------------------------------------------------------------------
# Integer T: wrap-around modulo 2^bits (the host's signed integers use these unsigned types).

INT_TYPES = [np.uint8, np.uint16, np.uint32, np.uint64]


def int_reference(a, b, alpha, beta, bias, dtype):
    """alpha * a @ b + beta * bias modulo 2^bits, exactly (uint64 arithmetic wraps modulo 2^64,
    which 2^bits divides)."""
    with np.errstate(over="ignore"):
        a64, b64 = a.astype(np.uint64), b.astype(np.uint64)
        ref = np.uint64(alpha) * (a64 @ b64)
        if bias is not None and beta != 0:
            ref = ref + np.uint64(beta) * np.broadcast_to(bias.astype(np.uint64), ref.shape)
    return ref.astype(dtype)


@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda t: t.__name__)
@pytest.mark.parametrize("a_trans,b_trans", TRANS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 13, 5), (33, 17, 40)])
def test_mm_integer_wraps(ctx, queue, build, rng, dtype, shape, a_trans, b_trans):
    M, N, K = shape
    info = np.iinfo(dtype)
    # Full-range values: products and sums overflow and must wrap.
    a = rng.integers(0, info.max, size=(M, K), dtype=dtype, endpoint=False)
    b = rng.integers(0, info.max, size=(K, N), dtype=dtype, endpoint=False)
    bias = rng.integers(0, info.max, size=(1, N), dtype=dtype, endpoint=False)
    # alpha = -3 and beta = 5 as the kernel gets them: the bits of the signed value.
    alpha, beta = int(info.max) - 2, 5
    out = run_mm(
        ctx,
        queue,
        build,
        a,
        b,
        a_trans=a_trans,
        b_trans=b_trans,
        alpha=alpha,
        beta=beta,
        bias=bias,
        bias_sn=1,
        pad=(1, 0, 2),
        offs=(2, 1, 3, 1),
    )
    np.testing.assert_array_equal(out, int_reference(a, b, alpha, beta, bias, dtype))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint64], ids=lambda t: t.__name__)
def test_mm_integer_no_bias_and_k_zero(ctx, queue, build, rng, dtype):
    a = rng.integers(0, 50, size=(9, 20), dtype=dtype)
    b = rng.integers(0, 50, size=(20, 18), dtype=dtype)
    out = run_mm(ctx, queue, build, a, b, alpha=1)
    np.testing.assert_array_equal(out, int_reference(a, b, 1, 0, None, dtype))
    z = run_mm(ctx, queue, build, a[:, :0], b[:0, :], alpha=1)
    np.testing.assert_array_equal(z, np.zeros((9, 18), dtype=dtype))


@pytest.mark.parametrize("a_trans,b_trans", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("bias_kind", ["none", "per-batch", "broadcast"])
def test_mm_batched(ctx, queue, build, rng, a_trans, b_trans, bias_kind):
    """Batches through get_global_id(2): each matrix at its operand's batch stride (padded, so a
    wrong stride reads the neighbour's data); a broadcast bias has batch stride 0."""
    nb, M, K, N = 3, 7, 5, 19
    a = rng.standard_normal((nb, M, K)).astype(np.float32)
    b = rng.standard_normal((nb, K, N)).astype(np.float32)
    bias = rng.standard_normal((nb if bias_kind == "per-batch" else 1, M, N)).astype(np.float32)
    alpha, beta = np.float32(0.75), np.float32(-1.5)
    a_st = np.swapaxes(a, 1, 2) if a_trans else a
    b_st = np.swapaxes(b, 1, 2) if b_trans else b
    a_sb, b_sb, c_sb = a_st[0].size + 5, b_st[0].size + 3, M * N + 2
    a_flat = np.full(nb * a_sb, np.nan, np.float32)
    b_flat = np.full(nb * b_sb, np.nan, np.float32)
    for i in range(nb):
        a_flat[i * a_sb : i * a_sb + a_st[i].size] = np.ascontiguousarray(a_st[i]).ravel()
        b_flat[i * b_sb : i * b_sb + b_st[i].size] = np.ascontiguousarray(b_st[i]).ravel()
    c_flat = np.full(nb * c_sb, -7.0, np.float32)
    opts = ["-DT=float"] + (["-DA_TRANS"] if a_trans else []) + (["-DB_TRANS"] if b_trans else [])
    if bias_kind != "none":
        opts.append("-DHAS_BIAS")
    prg = build("mm", opts)
    mf = cl.mem_flags

    def buf(x):
        return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)

    a_buf, b_buf, c_buf, bias_buf = buf(a_flat), buf(b_flat), buf(c_flat), buf(bias.ravel())
    lda = M if a_trans else K
    ldb = K if b_trans else N
    bias_sb = M * N if bias_kind == "per-batch" else 0
    gsize = (_roundup(_ceil(N, 16), LX), _roundup(_ceil(M, TM), LY), nb)
    cl.Kernel(prg, "mm")(
        queue, gsize, (LX, LY, 1), np.int32(M), np.int32(N), np.int32(K),
        a_buf, np.uint64(0), np.int64(lda), b_buf, np.uint64(0), np.int64(ldb),
        c_buf, np.uint64(0), np.int64(N), alpha, beta if bias_kind != "none" else np.float32(0),
        bias_buf, np.uint64(0), np.int64(N), np.int64(1),
        np.int64(a_sb), np.int64(b_sb), np.int64(c_sb), np.int64(bias_sb),
    )  # fmt: skip
    cl.enqueue_copy(queue, c_flat, c_buf)
    queue.finish()
    want = alpha * np.einsum("bmk,bkn->bmn", a.astype(np.float64), b.astype(np.float64))
    if bias_kind != "none":
        want = want + beta * np.broadcast_to(bias.astype(np.float64), want.shape)
    for i in range(nb):
        got = c_flat[i * c_sb : i * c_sb + M * N].reshape(M, N)
        np.testing.assert_allclose(got, want[i], rtol=1e-5, atol=1e-5)
        assert np.all(c_flat[i * c_sb + M * N : (i + 1) * c_sb] == -7.0), "wrote between matrices"


# --- gemv (mv / addmv / dot) -------------------------------------------------------------------

GLWS = 16  # the default of kernels/mm.cl


def run_gemv(ctx, queue, build, a, x, *, sa=None, sx=1, sy=1, alpha=1.0, beta=0.0, bias=None,
             sbias=1, offs=(0, 0, 0, 0), unit_k=None):  # fmt: skip
    """gemv on a (M x K, element (m, k) at a_off + m*sa[0] + k*sa[1]) and x; returns y (M).
    unit_k: build with -DUNIT_K (default: when the strides along k are 1, as the host does)."""
    dtype = a.dtype.type
    M, K = a.shape
    sa = sa or (K, 1)
    a_off, x_off, y_off, b_off = offs
    fill = _fill(dtype)
    a_flat = np.full(a_off + max((M - 1) * sa[0] + (K - 1) * sa[1] + 1, 1), fill, dtype=dtype)
    for m in range(M):
        for k in range(K):
            a_flat[a_off + m * sa[0] + k * sa[1]] = a[m, k]
    x_flat = np.full(x_off + max((K - 1) * sx + 1, 1), fill, dtype=dtype)
    x_flat[x_off : x_off + K * sx : sx] = x
    y_flat = np.full(y_off + (M - 1) * sy + 1 + 2, fill, dtype=dtype)
    opts = ["-DT=" + CL_TYPE[dtype]]
    if unit_k if unit_k is not None else (sa[1] == 1 and sx == 1):
        opts.append("-DUNIT_K")
    if bias is not None:
        opts.append("-DHAS_BIAS")
        b_flat = np.full(b_off + (M - 1) * sbias + 1, fill, dtype=dtype)
        b_flat[b_off : b_off + max(M * sbias, 1) : max(sbias, 1)] = bias if sbias else bias[0]
    prg = build("mm", opts)
    mf = cl.mem_flags

    def buf(h):
        return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=h)

    a_buf, x_buf, y_buf = buf(a_flat), buf(x_flat), buf(y_flat)
    bias_buf = buf(b_flat) if bias is not None else y_buf
    cl.Kernel(prg, "gemv")(
        queue, (M * GLWS,), (GLWS,), np.uint64(K), a_buf, np.uint64(a_off), np.int64(sa[0]),
        np.int64(sa[1]), x_buf, np.uint64(x_off), np.int64(sx), y_buf, np.uint64(y_off),
        np.int64(sy), dtype(alpha), dtype(beta), bias_buf, np.uint64(b_off), np.int64(sbias),
    )  # fmt: skip
    cl.enqueue_copy(queue, y_flat, y_buf)
    queue.finish()
    y = y_flat[y_off : y_off + (M - 1) * sy + 1 : sy].copy()
    # Nothing but the M results is written.
    mask = np.ones(y_flat.size, dtype=bool)
    mask[y_off : y_off + (M - 1) * sy + 1 : sy] = False
    assert _is_fill(y_flat[mask]).all()
    return y


@pytest.mark.parametrize(
    ("M", "K"), [(1, 1), (1, 1000), (5, 63), (7, 64), (3, 65), (40, 3), (2, 0), (3, 135)]
)
@pytest.mark.parametrize("unit_k", [True, False])
def test_gemv_shapes(ctx, queue, build, rng, M, K, unit_k):
    a = rand(rng, (M, K), np.float32)
    x = rand(rng, (K,), np.float32)
    y = run_gemv(ctx, queue, build, a, x, unit_k=unit_k)
    check(y, (a.astype(np.float64) @ x.astype(np.float64)), np.float32, K)


def test_gemv_strides_offsets_bias(ctx, queue, build, rng):
    M, K = 6, 37
    a = rand(rng, (M, K), np.float32)
    x = rand(rng, (K,), np.float32)
    c = rand(rng, (M,), np.float32)
    ref = 2.0 * (a.astype(np.float64) @ x) + 0.5 * c
    # Transposed A (unit row stride), strided x and y, offsets, strided bias.
    y = run_gemv(ctx, queue, build, a, x, sa=(1, M + 2), sx=3, sy=2, alpha=2.0, beta=0.5, bias=c,
                 sbias=2, offs=(3, 1, 4, 2))  # fmt: skip
    check(y, ref, np.float32, K)
    # A broadcast bias (stride 0).
    y = run_gemv(ctx, queue, build, a, x, beta=1.0, bias=c[:1].repeat(M), sbias=0)
    check(y, a.astype(np.float64) @ x + c[0], np.float32, K)


def test_gemv_beta_zero_ignores_nan_bias(ctx, queue, build, rng):
    a = rand(rng, (4, 9), np.float32)
    x = rand(rng, (9,), np.float32)
    # The host leaves HAS_BIAS out when beta == 0; with it, beta == 0 still reads nothing.
    y = run_gemv(ctx, queue, build, a, x, beta=0.0, bias=np.full(4, np.nan, np.float32))
    assert np.isfinite(y).all()


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.uint8])
def test_gemv_integers_wrap(ctx, queue, build, rng, dtype):
    info = np.iinfo(dtype)
    a = rng.integers(0, info.max, (5, 70), dtype=dtype, endpoint=True)
    x = rng.integers(0, info.max, (70,), dtype=dtype, endpoint=True)
    c = rng.integers(0, info.max, (5,), dtype=dtype, endpoint=True)
    y = run_gemv(ctx, queue, build, a, x, alpha=3, beta=2, bias=c)
    bits = 8 * np.dtype(dtype).itemsize
    mod = 1 << bits
    ref = [(3 * sum(int(a[m, k]) * int(x[k]) for k in range(70)) + 2 * int(c[m])) % mod
           for m in range(5)]  # fmt: skip
    np.testing.assert_array_equal(y.astype(object), np.array(ref, dtype=object))
