"""Tests for kernels/mm_tiled.cl (the GPU profile's GEMM) against a float64 numpy reference.

The kernel takes the same arguments as mm.cl's `mm`; the layouts, the padding (NaN or integer
maximum around every operand, so a stray read or write shows) and the reference come from
test_mm.py. Every tile shape the tuner may pick is legal here; a few cover the corners
(one work-item per column, k tiles larger than K, padding on and off, wide and tall blocks)."""

import itertools

import numpy as np
import pytest
from test_mm import CL_TYPE, _fill, _is_fill, _store, check, rand, reference

cl = pytest.importorskip("pyopencl")

# (TILE_M, TILE_N, TILE_K, WG_M, WG_N, TILE_PAD): the profile defaults and corners.
TILES = [
    (64, 64, 16, 16, 16, 1),  # desktop GPU medium
    (32, 32, 16, 8, 8, 1),  # desktop GPU small
    (128, 128, 16, 16, 16, 1),  # desktop GPU large (8x8 per work-item)
    (16, 16, 8, 4, 4, 0),  # the fallback of small devices
    (32, 64, 8, 8, 16, 0),  # unequal tile sides, no padding
    (64, 32, 32, 32, 8, 1),  # tall work-group, k tile larger than most K here
    (16, 16, 16, 16, 16, 0),  # one element per work-item
    (16, 64, 32, 4, 16, 1),  # the skinny tile (few rows)
    (64, 16, 32, 16, 4, 1),  # transposed (few columns)
]


def _ceil(a, b):
    return (a + b - 1) // b


def tile_id(t):
    return "{}x{}x{}_{}x{}_p{}".format(*t)


def run_tiled(
    ctx,
    queue,
    build,
    a,
    b,
    tile,
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
    batches=1,
    batch_strides=None,
    vec=(1, 1),
):
    """Run mm_tiled on a ([B x] M x K) and b ([B x] K x N); returns the [B x] M x N result.

    With batches > 1, a and b are 3-D (a batch stride of 0 is passed for a 2-D operand: every
    batch reads the same matrix)."""
    tm, tn, tk, wm, wn, tpad = tile
    dtype = a.dtype.type
    a3 = a if a.ndim == 3 else a[None]
    b3 = b if b.ndim == 3 else b[None]
    M, K = a3.shape[1:]
    N = b3.shape[2]
    a_off, b_off, c_off, bias_off = offs
    lda = (M if a_trans else K) + pad[0]
    ldb = (K if b_trans else N) + pad[1]
    ldc = N + pad[2]
    fill = _fill(dtype)
    # Each batch's matrix stored at its own stride (a whole padded matrix apart).
    a_sb = _store(a3[0], a_trans, lda, 0, M, K, fill).size if a.ndim == 3 else 0
    b_sb = _store(b3[0], b_trans, ldb, 0, K, N, fill).size if b.ndim == 3 else 0
    a_flat = np.concatenate(
        [np.full(a_off, fill, dtype=dtype)] + [_store(x, a_trans, lda, 0, M, K, fill) for x in a3]
    )
    b_flat = np.concatenate(
        [np.full(b_off, fill, dtype=dtype)] + [_store(x, b_trans, ldb, 0, K, N, fill) for x in b3]
    )
    c_sb = M * ldc if batches > 1 else 0
    c_flat = np.full(c_off + batches * M * ldc, fill, dtype=dtype)

    opts = ["-DT=" + CL_TYPE[dtype]]
    opts += [
        f"-DTILE_M={tm}",
        f"-DTILE_N={tn}",
        f"-DTILE_K={tk}",
        f"-DWG_M={wm}",
        f"-DWG_N={wn}",
        f"-DTILE_PAD={tpad}",
    ]
    if vec[0] > 1:
        opts.append(f"-DVEC_A={vec[0]}")
    if vec[1] > 1:
        opts.append(f"-DVEC_B={vec[1]}")
    if a_trans:
        opts.append("-DA_TRANS")
    if b_trans:
        opts.append("-DB_TRANS")
    bias_flat = None
    if bias is not None:
        opts.append("-DHAS_BIAS")
        bias_flat = np.concatenate([np.full(bias_off, fill, dtype=dtype), bias.ravel()])
    prg = build("mm_tiled", opts)

    mf = cl.mem_flags

    def buf(x):
        host = x if x.size else np.zeros(1, dtype=dtype)
        return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)

    a_buf, b_buf, c_buf = buf(a_flat), buf(b_flat), buf(c_flat)
    bias_buf = c_buf if bias_flat is None else buf(bias_flat)
    scalar = np.float32 if dtype is np.float16 else dtype
    gsize = (_ceil(N, tn) * wn, _ceil(M, tm) * wm, batches)
    kernel = cl.Kernel(prg, "mm_tiled")
    # A device may allow this kernel fewer work-items per group than the tile has: Intel's CPU
    # runtime (opencl-rt 2021.2) allows 160 for the 128x128 tile (16x16 work-items, 3 KB of
    # private memory each) and fails the launch with CL_OUT_OF_RESOURCES. That is the device's
    # limit, not a wrong kernel: the tile does not fit this device.
    allowed = kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, ctx.devices[0])
    if allowed < wm * wn:
        pytest.skip(
            f"{ctx.devices[0].platform.name}: CL_KERNEL_WORK_GROUP_SIZE {allowed} < the tile's "
            f"{wm}x{wn} work-items"
        )
    kernel(
        queue,
        gsize,
        (wn, wm, 1),
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
        np.int64(a_sb),
        np.int64(b_sb),
        np.int64(c_sb),
        np.int64(0),
    )
    cl.enqueue_copy(queue, c_flat, c_buf)
    queue.finish()
    assert _is_fill(c_flat[:c_off]).all()
    c = c_flat[c_off:].reshape(batches, M, ldc)
    assert _is_fill(c[:, :, N:]).all(), "padding columns of C were written"
    out = c[:, :, :N].copy()
    return out if batches > 1 else out[0]


@pytest.fixture(scope="module")
def slow(ctx):
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


TRANS = list(itertools.product([False, True], repeat=2))
SHAPES = [
    (1, 1, 1),
    (7, 13, 5),
    (33, 65, 17),
    (64, 64, 16),
    (65, 63, 40),
    (2, 130, 3),
    (129, 2, 33),
]


def _grid(tiles, shapes, quick_tiles, quick_shapes):
    """(tile, shape) pairs: the quick ones by default, the rest marked slow (nox -s slow)."""
    out = []
    for t in tiles:
        for sh in shapes:
            quick = t in quick_tiles and sh in quick_shapes
            marks = () if quick else (pytest.mark.slow,)
            name = tile_id(t) + "-" + "x".join(map(str, sh))
            out.append(pytest.param(t, sh, marks=marks, id=name))
    return out


@pytest.mark.parametrize(
    "tile,shape", _grid(TILES, SHAPES, TILES, [SHAPES[0], SHAPES[2], SHAPES[4], SHAPES[6]])
)
@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_tiled_shapes_layouts(ctx, queue, build, rng, slow, tile, shape, a_trans, b_trans):
    M, N, K = shape
    if slow and M * N * K > 40000:
        pytest.skip("Oclgrind: the smaller shapes cover the same paths")
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    out = run_tiled(ctx, queue, build, a, b, tile, a_trans=a_trans, b_trans=b_trans, pad=(3, 2, 1))
    check(out, reference(a, b), np.float32, K)


@pytest.mark.parametrize("tile", [TILES[0], TILES[3]], ids=tile_id)
def test_tiled_k_zero_and_offsets(ctx, queue, build, rng, tile):
    a, b = rand(rng, (5, 0), np.float32), rand(rng, (0, 9), np.float32)
    bias = rand(rng, (5, 9), np.float32)
    out = run_tiled(
        ctx, queue, build, a, b, tile, alpha=2.0, beta=0.5, bias=bias, bias_sm=9, bias_sn=1
    )
    np.testing.assert_allclose(out, 0.5 * bias, rtol=1e-6)
    a, b = rand(rng, (19, 23), np.float32), rand(rng, (23, 11), np.float32)
    out = run_tiled(ctx, queue, build, a, b, tile, offs=(5, 7, 3, 0), pad=(1, 4, 2))
    check(out, reference(a, b), np.float32, 23)


@pytest.mark.parametrize("tile", [TILES[0], TILES[4]], ids=tile_id)
@pytest.mark.parametrize("bias_kind", ["full", "row", "col", "beta0_nan"])
def test_tiled_bias_alpha_beta(ctx, queue, build, rng, tile, bias_kind):
    M, N, K = 37, 41, 29
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    full = rand(rng, (M, N), np.float32)
    beta = 0.75
    if bias_kind == "full":
        bias, sm, sn, ref_bias = full, N, 1, full
    elif bias_kind == "row":  # one value per column, broadcast over rows (Linear's bias)
        bias, sm, sn, ref_bias = full[0], 0, 1, full[0][None, :]
    elif bias_kind == "col":
        bias, sm, sn, ref_bias = full[:, 0].copy(), 1, 0, full[:, :1]
    else:  # beta == 0 reads no bias: its NaN must not reach the result
        bias, sm, sn, ref_bias, beta = np.full((M, N), np.nan, np.float32), N, 1, None, 0.0
    out = run_tiled(
        ctx, queue, build, a, b, tile, alpha=-1.5, beta=beta, bias=bias, bias_sm=sm, bias_sn=sn
    )
    ref = reference(a, b, alpha=-1.5, beta=beta, bias=ref_bias)
    check(out, ref, np.float32, K)


@pytest.mark.parametrize("tile", [TILES[0], TILES[1]], ids=tile_id)
@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_tiled_batches(ctx, queue, build, rng, tile, a_trans, b_trans):
    B, M, N, K = 3, 21, 34, 18
    a, b = rand(rng, (B, M, K), np.float32), rand(rng, (B, K, N), np.float32)
    out = run_tiled(ctx, queue, build, a, b, tile, a_trans=a_trans, b_trans=b_trans, batches=B)
    for i in range(B):
        check(out[i], reference(a[i], b[i]), np.float32, K)
    # A broadcast operand (batch stride 0): every batch reads the same B.
    b2 = rand(rng, (K, N), np.float32)
    out = run_tiled(ctx, queue, build, a, b2, tile, a_trans=a_trans, b_trans=b_trans, batches=B)
    for i in range(B):
        check(out[i], reference(a[i], b2), np.float32, K)


@pytest.mark.parametrize("tile", [TILES[0], TILES[3]], ids=tile_id)
@pytest.mark.parametrize("a_trans,b_trans", [(False, False), (True, True)])
def test_tiled_half_storage(ctx, queue, build, rng, tile, a_trans, b_trans):
    M, N, K = 45, 70, 38
    a, b = rand(rng, (M, K), np.float16), rand(rng, (K, N), np.float16)
    bias = rand(rng, (M, N), np.float16)
    out = run_tiled(
        ctx,
        queue,
        build,
        a,
        b,
        tile,
        a_trans=a_trans,
        b_trans=b_trans,
        bias=bias,
        bias_sm=N,
        bias_sn=1,
        beta=0.5,
    )
    # Summed in float32 and rounded once to float16.
    ref = reference(a, b, beta=0.5, bias=bias).astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("dtype", [np.float64, np.uint8, np.uint32, np.uint64])
@pytest.mark.parametrize("tile", [TILES[0], TILES[3]], ids=tile_id)
def test_tiled_other_dtypes(ctx, queue, build, rng, has_fp64, dtype, tile):
    if dtype is np.float64 and not has_fp64:
        pytest.skip("the device has no fp64")
    M, N, K = 29, 37, 45
    if dtype is np.float64:
        a, b = rand(rng, (M, K), dtype), rand(rng, (K, N), dtype)
        out = run_tiled(ctx, queue, build, a, b, tile, b_trans=True)
        check(out, reference(a, b), dtype, K)
    else:
        # Wrap-around: the exact product modulo 2^bits, as the host's unsigned route gives.
        info = np.iinfo(dtype)
        a = rng.integers(0, info.max, size=(M, K), dtype=dtype, endpoint=True)
        b = rng.integers(0, info.max, size=(K, N), dtype=dtype, endpoint=True)
        out = run_tiled(ctx, queue, build, a, b, tile, a_trans=True)
        with np.errstate(over="ignore"):
            ref = np.zeros((M, N), dtype=dtype)
            for k in range(K):
                ref = ref + np.outer(a[:, k], b[k, :]).astype(dtype)
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("tile", [TILES[0], TILES[1]], ids=tile_id)
@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_tiled_nan_inf(ctx, queue, build, rng, tile, a_trans, b_trans):
    """NaN and Inf reach exactly the outputs whose row of A or column of B holds them, and the
    zero padding of partial tiles (k past K, rows past M) adds no NaN anywhere else."""
    M, N, K = 35, 47, 21  # partial tiles along every dimension
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    a[3, 7] = np.nan
    a[20, K - 1] = np.inf
    b[K - 1, 5] = -np.inf
    b[0, N - 1] = np.nan
    out = run_tiled(ctx, queue, build, a, b, tile, a_trans=a_trans, b_trans=b_trans)
    with np.errstate(invalid="ignore"):
        ref = reference(a, b)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(ref))
    np.testing.assert_array_equal(np.sign(out[np.isinf(out)]), np.sign(ref[np.isinf(ref)]))
    finite = np.isfinite(ref)
    np.testing.assert_allclose(out[finite], ref[finite], rtol=1e-4, atol=1e-4 * K**0.5)


# Vector tile loads (VEC_A / VEC_B): the host passes them only for aligned operands (offset,
# leading dimension and batch stride multiples of the width); the edges of the matrix are read
# element by element.
VEC_TILES = [(64, 64, 16, 16, 16, 1), (32, 32, 16, 8, 8, 0), (128, 128, 16, 16, 16, 1)]


VEC_SHAPES = [(5, 7, 3), (37, 70, 45), (64, 64, 16), (130, 9, 66)]
SLOW = pytest.mark.slow


@pytest.mark.parametrize("tile,shape", _grid(VEC_TILES, VEC_SHAPES, VEC_TILES[:2], VEC_SHAPES[:2]))
@pytest.mark.parametrize(
    "vec",
    [(4, 4), (2, 1), pytest.param((4, 1), marks=SLOW), pytest.param((1, 2), marks=SLOW)],
    ids=lambda v: f"va{v[0]}_vb{v[1]}",
)
@pytest.mark.parametrize("a_trans,b_trans", TRANS)
def test_tiled_vector_loads(ctx, queue, build, rng, slow, tile, vec, a_trans, b_trans, shape):
    M, N, K = shape
    if slow and M * N * K > 40000:
        pytest.skip("Oclgrind: the smaller shapes cover the same paths")
    a, b = rand(rng, (M, K), np.float32), rand(rng, (K, N), np.float32)
    # Leading dimensions padded up to a multiple of 4 (and one more vector), offsets of 4 and 8.
    pad_a = -(M if a_trans else K) % 4 + 4
    pad_b = -(K if b_trans else N) % 4
    out = run_tiled(
        ctx,
        queue,
        build,
        a,
        b,
        tile,
        a_trans=a_trans,
        b_trans=b_trans,
        pad=(pad_a, pad_b, 1),
        offs=(4, 8, 0, 0),
        vec=vec,
    )
    check(out, reference(a, b), np.float32, K)


@pytest.mark.parametrize("vec", [(4, 4), (2, 2)], ids=lambda v: f"v{v[0]}")
def test_tiled_vector_loads_batches_nan(ctx, queue, build, rng, vec):
    B, M, N, K = 3, 21, 36, 28  # batch strides multiples of 4 (M * K, K * N with K % 4 == 0)
    a, b = rand(rng, (B, M, K), np.float32), rand(rng, (B, K, N), np.float32)
    a[1, 3, 27], b[2, 27, 35] = np.nan, np.inf
    out = run_tiled(ctx, queue, build, a, b, VEC_TILES[0], batches=B, vec=vec)
    for i in range(B):
        with np.errstate(invalid="ignore"):
            ref = reference(a[i], b[i])
        np.testing.assert_array_equal(np.isnan(out[i]), np.isnan(ref))
        fin = np.isfinite(ref)
        np.testing.assert_allclose(out[i][fin], ref[fin], rtol=1e-4, atol=1e-4 * K**0.5)
