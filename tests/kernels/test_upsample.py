"""Tests for kernels/upsample.cl against NumPy references (loops over small sizes).

Launch geometry as stated at the top of upsample.cl: one work-item per element of the result
(the output for upsample_forward, grad_input for upsample_backward), global = total rounded up
to LWS, local = LWS. Arguments: total, spatial, C, D, H, W (input extents), OD, OH, OW (output
extents), rD, rH, rW (scales: float for the nearest modes, else ACC_T), align_corners, then the
source and the result tensor as buffer, offset and [N, C, D, H, W] strides. Tensors sit at a
non-zero offset in padded buffers, one case in a channels-last order.

The reference follows ATen's UpSample.h: source positions in float32 (the kernel's precision for
float data), weights and sums in float64; the backward reference scatters (what the CPU does),
the kernel gathers.
"""

import itertools

import numpy as np
import pytest
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

LWS = 64
OFF = 5
RTOL = {"float": 2e-6, "double": 1e-13, "half": 2e-3, "bfloat16": 1.6e-2}
MODES = {
    "nearest": "MODE_NEAREST",
    "exact": "MODE_NEAREST_EXACT",
    "linear": "MODE_LINEAR",
    "cubic": "MODE_CUBIC",
}


def scale_of(mode, i, o, align, given, f=np.float32):
    """The kernel's scale argument for a dim (UpSample.h: compute_scales_value and
    area_pixel_compute_scale) in precision f (the nearest modes: always float32)."""
    if mode in ("nearest", "exact"):
        f = np.float32
    if mode in ("linear", "cubic") and align:
        return f(i - 1) / f(o - 1) if o > 1 else f(0)
    return f(1.0 / given) if given else f(i) / f(o)


def taps(mode, o, i_size, o_size, r, align, f=np.float32):
    """[(input index, weight)] of output position o along a dim, as the CPU computes them
    (positions in precision f; floored in float32, as the CPU's floorf)."""
    if mode == "nearest":
        if o_size == i_size:
            return [(o, 1.0)]
        if o_size == 2 * i_size:
            return [(o >> 1, 1.0)]
        return [(min(int(np.floor(f(o) * r)), i_size - 1), 1.0)]
    if mode == "exact":
        return [(min(int(np.floor((f(o) + f(0.5)) * r)), i_size - 1), 1.0)]
    if mode == "linear" and o_size == i_size:
        return [(o, 1.0), (o, 0.0)]
    real = r * f(o) if align else r * (f(o) + f(0.5)) - f(0.5)
    if mode == "linear" and not align and real < 0:
        real = f(0)
    idx = min(int(np.floor(np.float32(real))), i_size - 1)
    lam = float(min(max(real - f(idx), f(0)), f(1)))
    if mode == "linear":
        return [(idx, 1.0 - lam), (idx + (1 if idx < i_size - 1 else 0), lam)]
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    w = [far(lam + 1), near(lam), near(1 - lam), far(2 - lam)]
    return [(min(max(idx - 1 + k, 0), i_size - 1), w[k]) for k in range(4)]


class Case:
    def __init__(self, mode, spatial, inp, out, align=False, given=None, N=2, C=3):
        self.mode, self.spatial, self.align = mode, spatial, align
        pad = (1,) * (3 - spatial)
        self.inp, self.out = pad + tuple(inp), pad + tuple(out)
        self.given = (None,) * (3 - spatial) + tuple(given or (None,) * spatial)
        self.N, self.C = N, C
        self.set_precision(np.float32)

    def set_precision(self, f):
        """Positions in f: float64 for double data in the linear and cubic modes."""
        self.f = f
        self.r = [
            scale_of(self.mode, i, o, self.align, g, f)
            for i, o, g in zip(self.inp, self.out, self.given, strict=True)
        ]

    def dim_taps(self, k, o):
        if k < 3 - self.spatial:  # absent dim
            return [(0, 1.0)]
        return taps(self.mode, o, self.inp[k], self.out[k], self.r[k], self.align, self.f)

    def args(self, total, scale_dtype):
        vals = [np.uint64(total), np.int32(self.spatial), np.int64(self.C)]
        vals += [np.int64(v) for v in (*self.inp, *self.out)]
        vals += [scale_dtype(v) for v in self.r] + [np.int32(self.align)]
        return vals


def strides_of(shape, channels_last):
    N, C, D, H, W = shape
    if channels_last:
        return (D * H * W * C, 1, H * W * C, W * C, C)
    return (C * D * H * W, D * H * W, H * W, W, 1)


def pack(tag, data, channels_last):
    st = strides_of(data.shape, channels_last)
    flat = np.full(OFF + data.size + 4, store(tag, 0.0), dtype=STORE[tag])
    for idx in itertools.product(*map(range, data.shape)):
        flat[OFF + sum(i * s for i, s in zip(idx, st, strict=True))] = store(tag, data[idx])
    return flat, st


def unpack(tag, flat, shape, st):
    out = np.empty(shape)
    for idx in itertools.product(*map(range, shape)):
        out[idx] = to_f64(tag, flat[OFF + sum(i * s for i, s in zip(idx, st, strict=True))])
    return out


def reference(case, x, backward):
    """Forward: out from x; backward: grad_input from grad_output x (scattered, float64)."""
    N, C = case.N, case.C
    result = np.zeros((N, C, *(case.inp if backward else case.out)))
    for o in itertools.product(*map(range, case.out)):
        for (d, wd), (h, wh), (w, ww) in itertools.product(
            *[case.dim_taps(k, o[k]) for k in range(3)]
        ):
            if backward:
                result[:, :, d, h, w] += wd * wh * ww * x[:, :, o[0], o[1], o[2]]
            else:
                result[:, :, o[0], o[1], o[2]] += wd * wh * ww * x[:, :, d, h, w]
    return result


def run(ctx, queue, build, tag, case, backward, channels_last, rng):
    acc = "double" if tag == "double" else "float"
    prg = build("upsample", [f"-DT_={tag}", f"-DACC_T={acc}", f"-D{MODES[case.mode]}"])
    src_shape = (case.N, case.C, *(case.out if backward else case.inp))
    dst_shape = (case.N, case.C, *(case.inp if backward else case.out))
    x = to_f64(tag, store(tag, rng.uniform(-4, 4, src_shape)))
    xf, xs = pack(tag, x, channels_last)
    yf, ys = pack(
        tag,
        np.full(dst_shape, np.nan) if tag in FLOAT_TAGS else np.zeros(dst_shape),
        not channels_last,
    )
    xb, yb = buffer(ctx, xf), buffer(ctx, yf)
    total = int(np.prod(dst_shape))
    precise = acc == "double" and case.mode in ("linear", "cubic")
    case.set_precision(np.float64 if precise else np.float32)
    scale_dtype = np.float64 if precise else np.float32
    args = case.args(total, scale_dtype)
    for b, st in ((xb, xs), (yb, ys)):
        args += [b, np.uint64(OFF)] + [np.int64(s) for s in st]
    kernel = "upsample_backward" if backward else "upsample_forward"
    cl.Kernel(prg, kernel)(queue, (-(-total // LWS) * LWS,), (LWS,), *args)
    cl.enqueue_copy(queue, yf, yb)
    queue.finish()
    got = unpack(tag, yf, dst_shape, ys)
    expected = reference(case, x, backward)
    return got, expected


CASES = [
    ("nearest-2d-up", Case("nearest", 2, (3, 4), (7, 9))),
    ("nearest-2d-x2", Case("nearest", 2, (3, 4), (6, 8))),
    ("nearest-3d-down", Case("nearest", 3, (4, 5, 6), (2, 3, 4), N=1, C=2)),
    ("exact-1d", Case("exact", 1, (7,), (12,))),
    ("exact-2d-given", Case("exact", 2, (5, 4), (8, 3), given=(1.7, 0.8))),
    ("linear-1d", Case("linear", 1, (6,), (11,))),
    ("linear-1d-align", Case("linear", 1, (6,), (11,), align=True)),
    ("bilinear-down", Case("linear", 2, (7, 9), (3, 4))),
    ("bilinear-same-h", Case("linear", 2, (4, 5), (4, 9), align=True)),
    ("trilinear", Case("linear", 3, (3, 4, 2), (5, 3, 4), N=1, C=2)),
    ("bicubic", Case("cubic", 2, (4, 5), (7, 8))),
    ("bicubic-align-down", Case("cubic", 2, (6, 7), (4, 3), align=True)),
    ("bicubic-given", Case("cubic", 2, (3, 4), (5, 9), given=(1.6, 2.1))),
    ("bicubic-one", Case("cubic", 2, (1, 4), (3, 1), align=True)),
]


@pytest.mark.parametrize("name,case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "nhwc"])
def test_upsample(ctx, queue, build, rng, name, case, backward, channels_last):
    got, expected = run(ctx, queue, build, "float", case, backward, channels_last, rng)
    np.testing.assert_allclose(got, expected, rtol=RTOL["float"], atol=2e-5)


DTYPE_CASES = [CASES[1], CASES[7], CASES[10]]


@pytest.mark.parametrize("tag", FLOAT_TAGS)
@pytest.mark.parametrize("name,case", DTYPE_CASES, ids=[c[0] for c in DTYPE_CASES])
def test_upsample_dtypes(ctx, queue, build, has_fp64, rng, tag, name, case):
    need_fp64(has_fp64, tag)
    for backward in (False, True):
        got, expected = run(ctx, queue, build, tag, case, backward, False, rng)
        expected = to_f64(tag, store(tag, expected))
        np.testing.assert_allclose(got, expected, rtol=RTOL[tag], atol=RTOL[tag] * 4)


def test_nearest_moves_integers_exactly(ctx, queue, build, rng):
    case = Case("nearest", 2, (3, 5), (7, 11))
    got, expected = run(ctx, queue, build, "uchar", case, False, True, rng)
    np.testing.assert_array_equal(got, expected)
