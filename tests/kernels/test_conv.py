"""Tests for kernels/conv.cl against NumPy float64: im2col, the gathering col2im (with and without
bias) and the three depthwise kernels, over odd sizes, stride/padding/dilation combinations,
1d/2d/3d geometries (missing leading dims passed as size 1), strided (channels-last) and offset
buffers, partial work-groups, and NaN/Inf inputs."""

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")
from pyopencl import cltypes  # noqa: E402

LOCAL = 64
DW_LWS = 64

# (input spatial (D, H, W), kernel, stride, padding, dilation): every case is 3d; 1d and 2d
# cases have leading size-1 dims like the host passes them.
GEOMS = [
    ((1, 1, 7), (1, 1, 3), (1, 1, 1), (0, 0, 1), (1, 1, 1)),  # 1d, pad 1
    ((1, 1, 9), (1, 1, 2), (1, 1, 3), (0, 0, 2), (1, 1, 2)),  # 1d, stride 3, dilation 2
    ((1, 5, 7), (1, 3, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1)),  # 2d 3x3 same
    ((1, 6, 5), (1, 3, 2), (1, 2, 3), (0, 2, 0), (1, 2, 1)),  # 2d strided, dilated, odd pads
    ((1, 4, 4), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1)),  # 1x1
    ((1, 3, 3), (1, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1)),  # kernel = input: 1 output
    ((1, 2, 3), (1, 3, 3), (1, 1, 1), (0, 2, 2), (1, 1, 1)),  # padding larger than the input
    ((3, 4, 5), (2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 1, 2)),  # 3d
    ((4, 3, 3), (3, 1, 2), (1, 2, 1), (2, 0, 1), (2, 1, 1)),  # 3d, dilated depth
]


def out_size(isz, ks, st, pd, dl):
    return tuple(
        (i + 2 * p - d * (k - 1) - 1) // s + 1
        for i, k, s, p, d in zip(isz, ks, st, pd, dl, strict=True)
    )


def i4(v):
    return cltypes.make_int4(*v, 0)


def l4(v):
    return cltypes.make_long4(*v, 0)


def ref_cols(x, ks, st, pd, dl):
    """cols [C, kvol, N, L] of x [N, C, D, H, W] (float64)."""
    N, C = x.shape[:2]
    osz = out_size(x.shape[2:], ks, st, pd, dl)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pd])
    out = np.zeros((C, *ks, N, *osz))
    for kd in range(ks[0]):
        for kh in range(ks[1]):
            for kw in range(ks[2]):
                sl = xp[
                    :,
                    :,
                    kd * dl[0] : kd * dl[0] + st[0] * (osz[0] - 1) + 1 : st[0],
                    kh * dl[1] : kh * dl[1] + st[1] * (osz[1] - 1) + 1 : st[1],
                    kw * dl[2] : kw * dl[2] + st[2] * (osz[2] - 1) + 1 : st[2],
                ]
                out[:, kd, kh, kw] = sl.transpose(1, 0, 2, 3, 4)
    return out.reshape(C, int(np.prod(ks)), N, int(np.prod(osz)))


def ref_col2im(cols, C, N, isz, ks, st, pd, dl):
    """The adjoint of ref_cols: cols [C, kvol, N, L] -> [N, C, D, H, W]."""
    osz = out_size(isz, ks, st, pd, dl)
    c = cols.reshape(C, *ks, N, *osz)
    xp = np.zeros((N, C, *[i + 2 * p for i, p in zip(isz, pd, strict=True)]))
    for kd in range(ks[0]):
        for kh in range(ks[1]):
            for kw in range(ks[2]):
                xp[
                    :,
                    :,
                    kd * dl[0] : kd * dl[0] + st[0] * (osz[0] - 1) + 1 : st[0],
                    kh * dl[1] : kh * dl[1] + st[1] * (osz[1] - 1) + 1 : st[1],
                    kw * dl[2] : kw * dl[2] + st[2] * (osz[2] - 1) + 1 : st[2],
                ] += c[:, kd, kh, kw].transpose(1, 0, 2, 3, 4)
    return xp[:, :, pd[0] : pd[0] + isz[0], pd[1] : pd[1] + isz[1], pd[2] : pd[2] + isz[2]]


def place(arr, dtype, order, off):
    """A flat buffer holding arr [N, C, D, H, W] at element offset off with its dims stored in
    `order` (outermost first): returns (flat, strides in elements of (N, C, D, H, W))."""
    stored = np.ascontiguousarray(arr.transpose(order)).astype(dtype)
    flat = np.concatenate([np.full(off, -7, dtype), stored.ravel(), np.full(3, -7, dtype)])
    st_stored = [int(np.prod(stored.shape[i + 1 :])) for i in range(5)]
    strides = [0] * 5
    for pos, dim in enumerate(order):
        strides[dim] = st_stored[pos]
    return flat, strides


def buf(ctx, a):
    mf = cl.mem_flags
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))


def glob(count, local=LOCAL):
    return (-(-count // local) * local,)


def tol(tag):
    return dict(rtol=1e-12, atol=1e-12) if tag == "double" else dict(rtol=2e-5, atol=2e-5)


def dtype_of(tag, has_fp64):
    if tag == "double" and not has_fp64:
        pytest.skip("device has no cl_khr_fp64")
    return np.float64 if tag == "double" else np.float32


def geo_args(isz, osz, ks, st, pd, dl):
    return [i4(isz), i4(osz), i4(ks), i4(st), i4(pd), i4(dl)]


LAYOUTS = {"nchw": (0, 1, 2, 3, 4), "channels_last": (0, 2, 3, 4, 1), "cnhw": (1, 0, 2, 3, 4)}


def cols_geometry(rows, nb, L, per_image):
    """(ld, cn, size) of a cols buffer: [rows, nb * L] with padded rows (cn = L), or one padded
    [rows, L] matrix per image with a gap between images (ld = L + 1, cn = rows * ld + 2)."""
    if per_image:
        ld = L + 1
        cn = rows * ld + 2
        return ld, cn, nb * cn
    ld = nb * L + 3
    return ld, L, rows * ld


def cols_view(flat, rows, nb, L, ld, cn):
    """The [rows, nb, L] values of a cols buffer, and a mask of the elements outside them."""
    idx = np.arange(nb)[None, :, None] * cn + np.arange(rows)[:, None, None] * ld
    idx = idx + np.arange(L)[None, None, :]
    outside = np.ones(len(flat), bool)
    outside[idx.ravel()] = False
    return flat[idx], outside


def run_im2col(ctx, queue, build, tag, x, geom, layout, n0=0, nb=None, per_image=False):
    isz, ks, st, pd, dl = geom
    dt = np.float64 if tag == "double" else np.float32
    N, C = x.shape[:2]
    nb = N - n0 if nb is None else nb
    osz = out_size(isz, ks, st, pd, dl)
    L = int(np.prod(osz))
    kvol = int(np.prod(ks))
    flat, s = place(x, dt, LAYOUTS[layout], 5)
    ld, cn, size = cols_geometry(C * kvol, nb, L, per_image)
    cols = np.full(2 + size, -9, dt)
    b_cols = buf(ctx, cols)
    count = C * ks[0] * ks[1] * nb * osz[0] * osz[1]
    prg = build("conv", [f"-DT={tag}"])
    cl.Kernel(prg, "im2col")(
        queue,
        glob(count),
        (LOCAL,),
        np.int32(count),
        np.int32(nb),
        *geo_args(isz, osz, ks, st, pd, dl),
        buf(ctx, flat),
        np.uint64(5 + n0 * s[0]),
        np.int64(s[0]),
        np.int64(s[1]),
        l4(s[2:]),
        b_cols,
        np.uint64(2),
        np.int64(ld),
        np.int64(cn),
    )
    cl.enqueue_copy(queue, cols, b_cols)
    queue.finish()
    assert np.all(cols[:2] == -9)
    m, outside = cols_view(cols[2:], C * kvol, nb, L, ld, cn)
    assert np.all(cols[2:][outside] == -9)  # nothing written outside the matrices
    return m.reshape(C, kvol, nb, L)


@pytest.mark.parametrize("tag", ["float", "double"])
@pytest.mark.parametrize(
    "geom", GEOMS, ids=lambda g: "x".join(map(str, g[0])) + "k" + "".join(map(str, g[1]))
)
@pytest.mark.parametrize("layout", ["nchw", "channels_last", "cnhw"])
@pytest.mark.parametrize("per_image", [False, True], ids=["shared_rows", "per_image"])
def test_im2col(ctx, queue, build, rng, has_fp64, tag, geom, layout, per_image):
    dtype_of(tag, has_fp64)
    x = rng.standard_normal((3, 5, *geom[0]))
    got = run_im2col(ctx, queue, build, tag, x, geom, layout, per_image=per_image)
    dt = np.float64 if tag == "double" else np.float32
    np.testing.assert_array_equal(got, ref_cols(x.astype(dt).astype(np.float64), *geom[1:]))


def test_im2col_image_range_and_nonfinite(ctx, queue, build, rng):
    geom = GEOMS[3]
    x = rng.standard_normal((4, 3, *geom[0]))
    x[1, 0, 0, 2, 1] = np.nan
    x[2, 2, 0, 0, 0] = np.inf
    x[2, 1, 0, 5, 4] = -np.inf
    got = run_im2col(ctx, queue, build, "float", x, geom, "nchw", n0=1, nb=2)
    np.testing.assert_array_equal(
        got, ref_cols(x[1:3].astype(np.float32).astype(np.float64), *geom[1:])
    )


def run_col2im(ctx, queue, build, tag, cols, N, C, geom, layout, bias=None, per_image=False):
    isz, ks, st, pd, dl = geom
    dt = np.float64 if tag == "double" else np.float32
    osz = out_size(isz, ks, st, pd, dl)
    L = int(np.prod(osz))
    kvol = int(np.prod(ks))
    ld, cn, size = cols_geometry(C * kvol, N, L, per_image)
    cflat = np.full(1 + size, np.nan, dt)  # a read outside the matrices would show as NaN
    idx = np.arange(N)[None, :, None] * cn + np.arange(C * kvol)[:, None, None] * ld
    cflat[1 + idx + np.arange(L)] = cols.reshape(C * kvol, N, L)
    # output buffer in the requested layout, at offset 4, pre-filled with garbage
    out0 = np.full((N, C, *isz), -5.0)
    oflat, s = place(out0, dt, LAYOUTS[layout], 4)
    b_out = buf(ctx, oflat)
    bflat = (
        np.zeros(3 + C, dt) if bias is None else np.concatenate([np.zeros(3, dt), bias.astype(dt)])
    )
    count = N * C * isz[0] * isz[1]
    prg = build("conv", [f"-DT={tag}"])
    cl.Kernel(prg, "col2im")(
        queue,
        glob(count),
        (LOCAL,),
        np.int32(count),
        np.int32(N),
        np.int32(C),
        *geo_args(isz, osz, ks, st, pd, dl),
        buf(ctx, cflat),
        np.uint64(1),
        np.int64(ld),
        np.int64(cn),
        b_out,
        np.uint64(4),
        np.int64(s[0]),
        np.int64(s[1]),
        l4(s[2:]),
        np.int32(bias is not None),
        buf(ctx, bflat),
        np.uint64(3),
    )
    cl.enqueue_copy(queue, oflat, b_out)
    queue.finish()
    order = LAYOUTS[layout]
    stored = oflat[4 : 4 + out0.size].reshape([out0.shape[i] for i in order])
    return stored.transpose(np.argsort(order)).astype(np.float64)


@pytest.mark.parametrize("tag", ["float", "double"])
@pytest.mark.parametrize(
    "geom", GEOMS, ids=lambda g: "x".join(map(str, g[0])) + "k" + "".join(map(str, g[1]))
)
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("per_image", [False, True], ids=["shared_rows", "per_image"])
def test_col2im(ctx, queue, build, rng, has_fp64, tag, geom, layout, with_bias, per_image):
    dt = dtype_of(tag, has_fp64)
    N, C = 2, 3
    osz = out_size(*geom[:1], *geom[1:])
    cols = rng.standard_normal((C, int(np.prod(geom[1])), N, int(np.prod(osz)))).astype(dt)
    bias = rng.standard_normal(C).astype(dt) if with_bias else None
    got = run_col2im(ctx, queue, build, tag, cols, N, C, geom, layout, bias, per_image)
    want = ref_col2im(cols.astype(np.float64), C, N, *geom)
    if with_bias:
        want = want + bias.astype(np.float64)[None, :, None, None, None]
    np.testing.assert_allclose(got, want, **tol(tag))


def test_col2im_nonfinite(ctx, queue, build, rng):
    geom = GEOMS[2]
    N, C = 2, 2
    osz = out_size(*geom[:1], *geom[1:])
    cols = rng.standard_normal((C, 9, N, int(np.prod(osz)))).astype(np.float32)
    cols[0, 4, 0, 7] = np.nan
    cols[1, 0, 1, 3] = np.inf
    cols[1, 8, 0, 0] = -np.inf
    got = run_col2im(ctx, queue, build, "float", cols, N, C, geom, "nchw")
    want = ref_col2im(cols.astype(np.float64), C, N, *geom)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, equal_nan=True)
    assert np.isnan(got).sum() == np.isnan(want).sum() > 0


def dw_refs(x, w, gy, mult, geom):
    """Depthwise forward, input gradient and weight gradient in float64."""
    isz, ks, st, pd, dl = geom
    N, C = x.shape[:2]
    kvol = int(np.prod(ks))
    cols = ref_cols(x, ks, st, pd, dl)  # [C, kvol, N, L]
    CO = C * mult
    w2 = w.reshape(CO, kvol)
    cidx = np.arange(CO) // mult
    y = np.einsum("ckno,ck->nco", cols[cidx], w2)
    gcols = np.einsum("nco,ck->ckno", gy.reshape(N, CO, -1), w2)  # per co
    gcols_c = gcols.reshape(C, mult, kvol, N, -1).sum(1)
    gx = ref_col2im(gcols_c, C, N, isz, ks, st, pd, dl)
    gw = np.einsum("nco,ckno->ck", gy.reshape(N, CO, -1), cols[cidx])
    return y, gx, gw.reshape(w.shape)


# Rows wider than a DW_CHUNK of 64: chunks that end inside the row, taps whose valid range
# starts or ends inside a later chunk (strides 1 and 2, dilation, padding 4).
DW_GEOMS = GEOMS + [
    ((1, 2, 150), (1, 1, 5), (1, 1, 1), (0, 0, 4), (1, 1, 2)),
    ((1, 3, 141), (1, 3, 3), (1, 1, 2), (0, 1, 1), (1, 1, 1)),
]


def dw_count(rows, width, chunk):
    return rows * -(-width // chunk)


@pytest.mark.parametrize("tag", ["float", "double"])
@pytest.mark.parametrize(
    "geom", DW_GEOMS, ids=lambda g: "x".join(map(str, g[0])) + "k" + "".join(map(str, g[1]))
)
@pytest.mark.parametrize("mult", [1, 2])
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
@pytest.mark.parametrize("chunk", [1, 3, 64])  # DW_CHUNK: GPUs, an odd one, CPU devices
def test_depthwise(ctx, queue, build, rng, has_fp64, tag, geom, mult, layout, chunk):
    dt = dtype_of(tag, has_fp64)
    isz, ks, st, pd, dl = geom
    osz = out_size(isz, ks, st, pd, dl)
    N, C = 3, 5
    CO = C * mult
    kvol = int(np.prod(ks))
    x = rng.standard_normal((N, C, *isz)).astype(dt).astype(np.float64)
    w = rng.standard_normal((CO, 1, *ks)).astype(dt).astype(np.float64)
    gy = rng.standard_normal((N, CO, *osz)).astype(dt).astype(np.float64)
    bias = rng.standard_normal(CO).astype(dt)
    y_ref, gx_ref, gw_ref = dw_refs(x, w, gy, mult, geom)
    y_ref = y_ref.reshape(N, CO, *osz) + bias.astype(np.float64)[None, :, None, None, None]
    order = LAYOUTS[layout]
    prg = build("conv", [f"-DT={tag}", f"-DDW_CHUNK={chunk}"])
    xflat, xs = place(x, dt, order, 3)
    gflat, gs = place(gy, dt, order, 2)
    wflat = np.concatenate([np.zeros(1, dt), w.ravel().astype(dt)])
    bflat = np.concatenate([np.zeros(2, dt), bias])
    geo = geo_args(isz, osz, ks, st, pd, dl)

    def unplace(flat, shape, off):
        stored = flat[off : off + int(np.prod(shape))].reshape([shape[i] for i in order])
        return stored.transpose(np.argsort(order)).astype(np.float64)

    # forward
    yflat, ys = place(np.full((N, CO, *osz), -3.0), dt, order, 1)
    b_y = buf(ctx, yflat)
    count = dw_count(N * CO * osz[0] * osz[1], osz[2], chunk)
    cl.Kernel(prg, "dw_forward")(
        queue, glob(count), (LOCAL,), np.int32(count), np.int32(CO), np.int32(mult), *geo,
        buf(ctx, xflat), np.uint64(3), np.int64(xs[0]), np.int64(xs[1]), l4(xs[2:]),
        buf(ctx, wflat), np.uint64(1), np.int32(1), buf(ctx, bflat), np.uint64(2),
        b_y, np.uint64(1), np.int64(ys[0]), np.int64(ys[1]), l4(ys[2:]),
    )  # fmt: skip
    cl.enqueue_copy(queue, yflat, b_y)
    # input gradient
    gxflat, gxs = place(np.full((N, C, *isz), -3.0), dt, order, 2)
    b_gx = buf(ctx, gxflat)
    count = dw_count(N * C * isz[0] * isz[1], isz[2], chunk)
    cl.Kernel(prg, "dw_backward_input")(
        queue, glob(count), (LOCAL,), np.int32(count), np.int32(C), np.int32(mult), *geo,
        buf(ctx, gflat), np.uint64(2), np.int64(gs[0]), np.int64(gs[1]), l4(gs[2:]),
        buf(ctx, wflat), np.uint64(1),
        b_gx, np.uint64(2), np.int64(gxs[0]), np.int64(gxs[1]), l4(gxs[2:]),
    )  # fmt: skip
    cl.enqueue_copy(queue, gxflat, b_gx)
    # weight gradient
    gwflat = np.full(1 + CO * kvol + 2, -3.0, dt)
    b_gw = buf(ctx, gwflat)
    cl.Kernel(prg, "dw_backward_weight")(
        queue, (CO * kvol * DW_LWS,), (DW_LWS,), np.int32(N), np.int32(mult), *geo,
        buf(ctx, xflat), np.uint64(3), np.int64(xs[0]), np.int64(xs[1]), l4(xs[2:]),
        buf(ctx, gflat), np.uint64(2), np.int64(gs[0]), np.int64(gs[1]), l4(gs[2:]),
        b_gw, np.uint64(1),
    )  # fmt: skip
    cl.enqueue_copy(queue, gwflat, b_gw)
    queue.finish()
    np.testing.assert_allclose(unplace(yflat, (N, CO, *osz), 1), y_ref, **tol(tag))
    np.testing.assert_allclose(unplace(gxflat, (N, C, *isz), 2), gx_ref, **tol(tag))
    assert gwflat[0] == -3 and np.all(gwflat[-2:] == -3)
    np.testing.assert_allclose(gwflat[1:-2].reshape(w.shape), gw_ref, **tol(tag))


@pytest.mark.parametrize("chunk", [1, 64])
def test_depthwise_nonfinite(ctx, queue, build, rng, chunk):
    """NaN and Inf in the input reach exactly the outputs and weight gradients that read them."""
    geom = GEOMS[2]
    isz, ks, st, pd, dl = geom
    osz = out_size(isz, ks, st, pd, dl)
    N, C, mult = 2, 3, 1
    x = rng.standard_normal((N, C, *isz)).astype(np.float32)
    x[0, 1, 0, 2, 3] = np.nan
    x[1, 2, 0, 0, 0] = np.inf
    w = rng.standard_normal((C, 1, *ks)).astype(np.float32)
    gy = rng.standard_normal((N, C, *osz)).astype(np.float32)
    y_ref, _, gw_ref = dw_refs(
        x.astype(np.float64), w.astype(np.float64), gy.astype(np.float64), mult, geom
    )
    prg = build("conv", ["-DT=float", f"-DDW_CHUNK={chunk}"])
    geo = geo_args(isz, osz, ks, st, pd, dl)
    xs = [int(np.prod(x.shape[i + 1 :])) for i in range(5)]
    y = np.zeros((N, C, *osz), np.float32)
    ysd = [int(np.prod(y.shape[i + 1 :])) for i in range(5)]
    b_y = buf(ctx, y)
    count = dw_count(N * C * osz[0] * osz[1], osz[2], chunk)
    cl.Kernel(prg, "dw_forward")(
        queue, glob(count), (LOCAL,), np.int32(count), np.int32(C), np.int32(mult), *geo,
        buf(ctx, x), np.uint64(0), np.int64(xs[0]), np.int64(xs[1]), l4(xs[2:]),
        buf(ctx, w), np.uint64(0), np.int32(0), buf(ctx, w), np.uint64(0),
        b_y, np.uint64(0), np.int64(ysd[0]), np.int64(ysd[1]), l4(ysd[2:]),
    )  # fmt: skip
    gw = np.zeros(C * 9, np.float32)
    b_gw = buf(ctx, gw)
    cl.Kernel(prg, "dw_backward_weight")(
        queue, (C * 9 * DW_LWS,), (DW_LWS,), np.int32(N), np.int32(mult), *geo,
        buf(ctx, x), np.uint64(0), np.int64(xs[0]), np.int64(xs[1]), l4(xs[2:]),
        buf(ctx, gy), np.uint64(0), np.int64(ysd[0]), np.int64(ysd[1]), l4(ysd[2:]),
        b_gw, np.uint64(0),
    )  # fmt: skip
    cl.enqueue_copy(queue, y, b_y)
    cl.enqueue_copy(queue, gw, b_gw)
    queue.finish()
    np.testing.assert_allclose(y, y_ref.reshape(y.shape), rtol=2e-5, atol=2e-5, equal_nan=True)
    np.testing.assert_allclose(gw.reshape(C, 1, *ks), gw_ref, rtol=2e-5, atol=2e-5, equal_nan=True)
    assert np.isnan(y).any() and np.isinf(y).any()


@pytest.mark.parametrize("tag", ["float", "double"])
@pytest.mark.parametrize(
    "geom", GEOMS, ids=lambda g: "x".join(map(str, g[0])) + "k" + "".join(map(str, g[1]))
)
@pytest.mark.parametrize("layout", ["channels_last", "nchw"])
@pytest.mark.parametrize("groups", [1, 2])
def test_im2col_rows(ctx, queue, build, rng, has_fp64, tag, geom, layout, groups):
    dt = dtype_of(tag, has_fp64)
    isz, ks, st, pd, dl = geom
    N, C, n0, nb = 4, 6, 1, 2
    G, Cg = groups, 6 // groups
    x = rng.standard_normal((N, C, *isz))
    x[1, 0, 0, 0, 0] = np.nan
    x[2, C - 1, -1, -1, -1] = -np.inf
    osz = out_size(isz, ks, st, pd, dl)
    L, kvol = int(np.prod(osz)), int(np.prod(ks))
    flat, s = place(x, dt, LAYOUTS[layout], 5)
    ld = G * kvol * Cg + 2
    cols = np.full(3 + nb * L * ld, -9, dt)
    b_cols = buf(ctx, cols)
    count = nb * L * G * kvol
    prg = build("conv", [f"-DT={tag}"])
    cl.Kernel(prg, "im2col_rows")(
        queue, glob(count), (LOCAL,), np.int32(count), np.int32(G), np.int32(Cg),
        *geo_args(isz, osz, ks, st, pd, dl),
        buf(ctx, flat), np.uint64(5 + n0 * s[0]), np.int64(s[0]), np.int64(s[1]), l4(s[2:]),
        b_cols, np.uint64(3), np.int64(ld),
    )  # fmt: skip
    cl.enqueue_copy(queue, cols, b_cols)
    queue.finish()
    assert np.all(cols[:3] == -9)
    m = cols[3:].reshape(nb * L, ld)
    assert np.all(m[:, G * kvol * Cg :] == -9)
    ref = ref_cols(x[n0 : n0 + nb].astype(dt).astype(np.float64), ks, st, pd, dl)
    ref = ref.reshape(G, Cg, kvol, nb, L).transpose(3, 4, 0, 2, 1).reshape(nb * L, G * kvol * Cg)
    np.testing.assert_array_equal(m[:, : G * kvol * Cg], ref)


# --- Winograd F(2x2, 3x3): the three transforms, and the whole pipeline against a direct
# convolution -------------------------------------------------------------------------------


# The transforms as the kernels compute them, along one axis (written out rather than as matrix
# products: a product would multiply an Inf by a zero coefficient and give NaN where the kernels,
# which never multiply by 0, give Inf).
def _bt(d, axis):  # B^T (4 -> 4)
    d0, d1, d2, d3 = (np.take(d, i, axis) for i in range(4))
    return np.stack([d0 - d2, d1 + d2, d2 - d1, d1 - d3], axis)


def _g(k, axis):  # G (3 -> 4)
    k0, k1, k2 = (np.take(k, i, axis) for i in range(3))
    return np.stack([k0, 0.5 * (k0 + k1 + k2), 0.5 * (k0 - k1 + k2), k2], axis)


def _at(m, axis):  # A^T (4 -> 2)
    m0, m1, m2, m3 = (np.take(m, i, axis) for i in range(4))
    return np.stack([m0 + m1 + m2, m1 - m2 - m3], axis)


def wino_tiles(OH, OW):
    return -(-OH // 2), -(-OW // 2)


def run_wino_weight(ctx, queue, build, tag, w, flip):
    """U [16, CO, Cg] of w [CO, Cg, 3, 3] (stored at offset 2)."""
    dt = np.float64 if tag == "double" else np.float32
    CO, Cg = w.shape[:2]
    wflat = np.concatenate([np.full(2, np.nan, dt), w.astype(dt).ravel()])
    U = np.full(1 + 16 * CO * Cg, -9, dt)
    b_u = buf(ctx, U)
    count = CO * Cg
    prg = build("conv", [f"-DT={tag}"])
    cl.Kernel(prg, "wino_weight")(
        queue, glob(count), (LOCAL,), np.int32(count), np.int32(Cg), np.int32(flip),
        buf(ctx, wflat), np.uint64(2), b_u, np.uint64(1),
    )  # fmt: skip
    cl.enqueue_copy(queue, U, b_u)
    queue.finish()
    assert U[0] == -9
    return U[1:].reshape(16, CO, Cg)


def run_wino_input(ctx, queue, build, tag, x, pad, layout, n0=0, nb=None):
    """V [16, C, nb * TH * TW] of images n0 .. n0 + nb of x [N, C, H, W] for 3x3 outputs of
    size H + 2 pad - 2 (pad = (PH, PW))."""
    dt = np.float64 if tag == "double" else np.float32
    N, C, H, W = x.shape
    nb = N - n0 if nb is None else nb
    OH, OW = H + 2 * pad[0] - 2, W + 2 * pad[1] - 2
    TH, TW = wino_tiles(OH, OW)
    flat, s = place(x[:, :, None], dt, LAYOUTS[layout], 3)
    T = nb * TH * TW
    V = np.full(16 * C * T + 2, -9, dt)
    b_v = buf(ctx, V)
    count = nb * C * TH * TW
    prg = build("conv", [f"-DT={tag}"])
    cl.Kernel(prg, "wino_input")(
        queue, glob(count), (LOCAL,), np.int32(count), np.int32(C), np.int32(TH), np.int32(TW),
        i4((1, H, W)), i4((0, *pad)), buf(ctx, flat), np.uint64(3 + n0 * s[0]), np.int64(s[0]),
        np.int64(s[1]), l4(s[2:]), b_v, np.uint64(2),
    )  # fmt: skip
    cl.enqueue_copy(queue, V, b_v)
    queue.finish()
    assert np.all(V[:2] == -9)
    return V[2:].reshape(16, C, T)


def run_wino_output(ctx, queue, build, tag, M, N, CO, OH, OW, bias, layout):
    """y [N, CO, OH, OW] (stored in `layout`) from M [16, CO, N * TH * TW] (+ bias)."""
    dt = np.float64 if tag == "double" else np.float32
    TH, TW = wino_tiles(OH, OW)
    mflat = np.concatenate([np.zeros(1, dt), M.astype(dt).ravel()])
    out0 = np.full((N, CO, 1, OH, OW), -5.0)
    oflat, s = place(out0, dt, LAYOUTS[layout], 4)
    b_out = buf(ctx, oflat)
    bflat = np.concatenate([np.zeros(2, dt), (np.zeros(CO) if bias is None else bias).astype(dt)])
    count = N * CO * TH * TW
    prg = build("conv", [f"-DT={tag}"])
    cl.Kernel(prg, "wino_output")(
        queue, glob(count), (LOCAL,), np.int32(count), np.int32(CO), np.int32(TH), np.int32(TW),
        i4((1, OH, OW)), buf(ctx, mflat), np.uint64(1), np.int32(bias is not None),
        buf(ctx, bflat), np.uint64(2), b_out, np.uint64(4), np.int64(s[0]), np.int64(s[1]),
        l4(s[2:]),
    )  # fmt: skip
    cl.enqueue_copy(queue, oflat, b_out)
    queue.finish()
    order = LAYOUTS[layout]
    stored = oflat[4 : 4 + out0.size].reshape([out0.shape[i] for i in order])
    assert np.all(oflat[:4] == -7) and np.all(oflat[4 + out0.size :] == -7)
    return stored.transpose(np.argsort(order))[:, :, 0].astype(np.float64)


def ref_wino_input(x, pad, TH, TW):
    N, C, H, W = x.shape
    xp = np.zeros((N, C, 2 * TH + 2, 2 * TW + 2))
    ph, pw = pad
    # the padded input, cut or extended to exactly the tiles' extent
    src = np.pad(
        x, ((0, 0), (0, 0), (ph, max(0, 2 * TH + 2 - H - ph)), (pw, max(0, 2 * TW + 2 - W - pw)))
    )
    xp[:] = src[:, :, : 2 * TH + 2, : 2 * TW + 2]
    V = np.empty((4, 4, C, N, TH, TW))
    for ty in range(TH):
        for tx in range(TW):
            d = xp[:, :, 2 * ty : 2 * ty + 4, 2 * tx : 2 * tx + 4]  # N, C, 4, 4
            v = _bt(_bt(d, 2), 3)  # N, C, 4, 4
            V[:, :, :, :, ty, tx] = v.transpose(2, 3, 1, 0)
    return V.reshape(16, C, N * TH * TW)


@pytest.mark.parametrize("tag", ["float", "double"])
@pytest.mark.parametrize("flip", [0, 1])
def test_wino_weight(ctx, queue, build, rng, has_fp64, tag, flip):
    dt = dtype_of(tag, has_fp64)
    w = rng.standard_normal((5, 3, 3, 3)).astype(dt)
    w[1, 2, 0, 1] = np.inf
    got = run_wino_weight(ctx, queue, build, tag, w, flip)
    k = w.astype(np.float64)[:, :, ::-1, ::-1] if flip else w.astype(np.float64)
    want = _g(_g(k, 2), 3).transpose(2, 3, 0, 1).reshape(16, 5, 3)
    np.testing.assert_allclose(got, want, equal_nan=True, **tol(tag))


@pytest.mark.parametrize("tag", ["float", "double"])
@pytest.mark.parametrize(
    "shape,pad", [((2, 3, 6, 6), (1, 1)), ((1, 2, 5, 7), (0, 2)), ((3, 2, 1, 1), (1, 1)),
                  ((2, 1, 4, 9), (2, 0))], ids=["6x6p1", "5x7p02", "1x1p1", "4x9p20"],
)  # fmt: skip
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
def test_wino_input(ctx, queue, build, rng, has_fp64, tag, shape, pad, layout):
    dt = dtype_of(tag, has_fp64)
    x = rng.standard_normal(shape).astype(dt)
    x.flat[rng.integers(x.size)] = np.nan
    N, C, H, W = shape
    TH, TW = wino_tiles(H + 2 * pad[0] - 2, W + 2 * pad[1] - 2)
    got = run_wino_input(ctx, queue, build, tag, x, pad, layout)
    want = ref_wino_input(x.astype(np.float64), pad, TH, TW)
    np.testing.assert_allclose(got, want, equal_nan=True, **tol(tag))
    # an image range: the later images of the batch only
    if N > 1:
        got = run_wino_input(ctx, queue, build, tag, x, pad, layout, n0=1, nb=N - 1)
        want = ref_wino_input(x[1:].astype(np.float64), pad, TH, TW)
        np.testing.assert_allclose(got, want, equal_nan=True, **tol(tag))


@pytest.mark.parametrize("tag", ["float", "double"])
@pytest.mark.parametrize("OH,OW", [(4, 4), (5, 3), (1, 1), (2, 7)])
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_wino_output(ctx, queue, build, rng, has_fp64, tag, OH, OW, layout, with_bias):
    dt = dtype_of(tag, has_fp64)
    N, CO = 2, 3
    TH, TW = wino_tiles(OH, OW)
    M = rng.standard_normal((16, CO, N * TH * TW)).astype(dt)
    M[5, 1, 0] = np.inf
    bias = rng.standard_normal(CO).astype(dt) if with_bias else None
    got = run_wino_output(ctx, queue, build, tag, M, N, CO, OH, OW, bias, layout)
    m = M.astype(np.float64).reshape(4, 4, CO, N, TH, TW)
    r = _at(_at(m, 0), 1)  # 2, 2, CO, N, TH, TW
    y = r.transpose(2, 3, 4, 0, 5, 1).reshape(CO, N, 2 * TH, 2 * TW)
    want = y.transpose(1, 0, 2, 3)[:, :, :OH, :OW]
    if with_bias:
        want = want + bias.astype(np.float64)[None, :, None, None]
    np.testing.assert_allclose(got, want, equal_nan=True, **tol(tag))


@pytest.mark.parametrize("flip", [0, 1])
def test_wino_pipeline_is_a_convolution(ctx, queue, build, rng, has_fp64, flip):
    """Transforms + the 16 products summed over channels + output transform equal a direct 3x3
    convolution (float64 reference); flip reads the kernel rotated by 180 degrees, as the input
    gradient's convolution does."""
    tag = "double" if has_fp64 else "float"
    N, C, CO, H, W, pad = 2, 4, 3, 7, 6, (1, 1)
    x = rng.standard_normal((N, C, H, W))
    w = rng.standard_normal((CO, C, 3, 3))
    U = run_wino_weight(ctx, queue, build, tag, w, flip)
    V = run_wino_input(ctx, queue, build, tag, x, pad, "nchw")
    M = np.einsum("boc,bct->bot", U, V)
    OH, OW = H + 2 * pad[0] - 2, W + 2 * pad[1] - 2
    got = run_wino_output(ctx, queue, build, tag, M, N, CO, OH, OW, None, "nchw")
    k = w[:, :, ::-1, ::-1] if flip else w
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((N, CO, OH, OW))
    for ky in range(3):
        for kx in range(3):
            want += np.einsum(
                "nchw,oc->nohw", xp[:, :, ky : ky + OH, kx : kx + OW], k[:, :, ky, kx]
            )
    np.testing.assert_allclose(
        got, want, rtol=1e-4 if tag == "float" else 1e-10, atol=1e-4 if tag == "float" else 1e-10
    )
