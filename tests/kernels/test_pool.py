"""Tests for kernels/pool.cl against NumPy float64 references (loops over small sizes).

Launch geometry as stated at the top of pool.cl: one work-item per element of the result, as the
grid (w, h, (n, c, t)) with the host's local sizes (grid_launch). Arguments: POOL_GEOM (total, C,
T, H, W, OT, OH, OW, kT, kH, kW, sT, sH, sW, pT, pH, pW, dT, dH, dW, adaptive), [count_include_pad,
divisor for the average kernels], then per tensor buffer, offset and [N, C, T, H, W] strides.
Tensors are stored at a non-zero offset in buffers with padding behind, one case in a channels-last
order.
"""

import itertools

import numpy as np
import pytest
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

LWS = 64
OFF = 3
RTOL = {"float": 1e-6, "double": 1e-13, "half": 1e-3, "bfloat16": 8e-3}


def out_size(i, k, s, p, d, ceil):
    n = i + 2 * p - d * (k - 1) - 1
    o = (n + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def adaptive_range(o, i, osz):
    return (o * i) // osz, -((-(o + 1) * i) // osz)


class Geo:
    def __init__(
        self,
        N,
        C,
        T,
        H,
        W,
        k=(1, 1, 1),
        s=None,
        p=(0, 0, 0),
        d=(1, 1, 1),
        ceil=False,
        adaptive=None,
    ):
        self.N, self.C, self.inp = N, C, (T, H, W)
        self.k, self.s, self.p, self.d = k, s or k, p, d
        self.adaptive = adaptive is not None
        if self.adaptive:
            self.out = adaptive
        else:
            self.out = tuple(
                out_size(i, *a, ceil) for i, *a in zip(self.inp, k, self.s, p, d, strict=True)
            )

    def windows(self, o):
        """Per dim the input positions of output o (fixed: on the dilation grid, in range)."""
        res = []
        for dim in range(3):
            if self.adaptive:
                a, b = adaptive_range(o[dim], self.inp[dim], self.out[dim])
                res.append(list(range(a, b)))
            else:
                start = o[dim] * self.s[dim] - self.p[dim]
                pos = [start + j * self.d[dim] for j in range(self.k[dim])]
                res.append([x for x in pos if 0 <= x < self.inp[dim]])
        return res

    def args(self, total):
        T, H, W = self.inp
        OT, OH, OW = self.out
        vals = [self.C, T, H, W, OT, OH, OW, *self.k, *self.s, *self.p, *self.d]
        return [np.uint64(total)] + [np.int64(v) for v in vals] + [np.int32(self.adaptive)]


def strides_of(shape, channels_last):
    N, C, T, H, W = shape
    if channels_last:  # N, T, H, W, C in memory
        return (T * H * W * C, 1, H * W * C, W * C, C)
    return (C * T * H * W, T * H * W, H * W, W, 1)


def pack(tag, data, channels_last=False):
    """A padded flat buffer holding data (float64 [N, C, T, H, W]) at OFF with the layout's
    strides; returns (flat, strides)."""
    st = strides_of(data.shape, channels_last)
    flat = np.full(OFF + data.size + 4, store(tag, 0.0), dtype=STORE[tag])
    for idx in itertools.product(*map(range, data.shape)):
        flat[OFF + sum(i * s for i, s in zip(idx, st, strict=True))] = store(tag, data[idx])
    return flat, st


def unpack(flat, shape, st, conv):
    out = np.empty(shape)
    for idx in itertools.product(*map(range, shape)):
        out[idx] = conv(flat[OFF + sum(i * s for i, s in zip(idx, st, strict=True))])
    return out


def tensor_args(buf, st):
    return [buf, np.uint64(OFF)] + [np.int64(s) for s in st]


def run(ctx, queue, build, tag, kernel, geo, total, extra, tensors):
    acc = "double" if tag == "double" else "float"
    prg = build("pool", [f"-DT_={tag}", f"-DACC_T={acc}"])
    args = geo.args(total) + extra
    for buf, st in tensors:
        args += tensor_args(buf, st)
    # the result: grad_input for the gathers, else the output (grad_output for the scatter)
    _, H, W = geo.inp if kernel in ("pool_max_backward", "pool_avg_backward") else geo.out
    if total:
        gsz, lsz = grid_launch(W, H, total // (H * W))
        cl.Kernel(prg, kernel)(queue, gsz, lsz, *args)
    queue.finish()


def grid_launch(n0, n1, n2, lws=LWS):
    """(global, local) of KernelLaunch::enqueue_grid (csrc/runtime/Launch.h)."""

    def cover(v, cap):
        p = 1
        while p < cap and p < v:
            p *= 2
        return p

    l0 = cover(n0, lws)
    l1 = cover(n1, lws // l0)
    return (-(-n0 // l0) * l0, -(-n1 // l1) * l1, n2), (l0, l1, 1)


def ref_max(x, geo):
    N, C = geo.N, geo.C
    out = np.zeros((N, C, *geo.out))
    idx = np.zeros((N, C, *geo.out), np.int64)
    T, H, W = geo.inp
    for n, c, *o in itertools.product(range(N), range(C), *map(range, geo.out)):
        ts, hs, ws = geo.windows(o)
        best, bi = -np.inf, (ts[0] * H + hs[0]) * W + ws[0]
        for t, h, w in itertools.product(ts, hs, ws):
            v = x[n, c, t, h, w]
            if v > best or np.isnan(v):
                best, bi = v, (t * H + h) * W + w
        out[(n, c, *o)], idx[(n, c, *o)] = best, bi
    return out, idx


def avg_divisor(geo, o, cip, divisor):
    ts, hs, ws = geo.windows(o)
    if geo.adaptive:
        return len(ts) * len(hs) * len(ws)
    if divisor:
        return divisor
    if not cip:
        return len(ts) * len(hs) * len(ws)
    pool = 1
    for dim in range(3):
        a = o[dim] * geo.s[dim] - geo.p[dim]
        pool *= min(a + geo.k[dim], geo.inp[dim] + geo.p[dim]) - a
    return pool


def ref_avg(x, geo, cip, divisor):
    out = np.zeros((geo.N, geo.C, *geo.out))
    for n, c, *o in itertools.product(range(geo.N), range(geo.C), *map(range, geo.out)):
        ts, hs, ws = geo.windows(o)
        vals = [x[n, c, t, h, w] for t, h, w in itertools.product(ts, hs, ws)]
        out[(n, c, *o)] = sum(vals) / avg_divisor(geo, o, cip, divisor) if vals else 0.0
    return out


def ref_avg_backward(go, geo, cip, divisor):
    gi = np.zeros((geo.N, geo.C, *geo.inp))
    for n, c, *o in itertools.product(range(geo.N), range(geo.C), *map(range, geo.out)):
        ts, hs, ws = geo.windows(o)
        for t, h, w in itertools.product(ts, hs, ws):
            gi[n, c, t, h, w] += go[(n, c, *o)] / avg_divisor(geo, o, cip, divisor)
    return gi


CASES = [
    ("2d_k3s2p1", dict(N=2, C=3, T=1, H=7, W=9, k=(1, 3, 3), s=(1, 2, 2), p=(0, 1, 1))),
    (
        "2d_dil_ceil",
        dict(
            N=1, C=2, T=1, H=8, W=7, k=(1, 3, 2), s=(1, 2, 1), p=(0, 1, 1), d=(1, 2, 2), ceil=True
        ),
    ),
    ("3d", dict(N=1, C=2, T=4, H=5, W=3, k=(2, 3, 2), s=(2, 1, 2), p=(1, 1, 0))),
    ("adaptive", dict(N=2, C=2, T=1, H=7, W=9, adaptive=(1, 3, 4))),
    ("adaptive_up", dict(N=1, C=2, T=1, H=3, W=4, adaptive=(1, 5, 6))),
]


def _inputs(rng, tag, shape):
    x = rng.uniform(-4, 4, shape)
    return to_f64(tag, store(tag, x))


@pytest.mark.parametrize("tag", FLOAT_TAGS)
@pytest.mark.parametrize("name,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("channels_last", [False, True])
def test_max_forward_backward(ctx, queue, build, has_fp64, rng, tag, name, kw, channels_last):
    need_fp64(has_fp64, tag)
    geo = Geo(**kw)
    shape = (geo.N, geo.C, *geo.inp)
    oshape = (geo.N, geo.C, *geo.out)
    x = _inputs(rng, tag, shape)
    if tag == "float":
        x.flat[0] = np.nan
        x.flat[5] = -np.inf
        x.flat[7] = np.inf
    xf, xs = pack(tag, x, channels_last)
    of, os_ = pack(tag, np.zeros(oshape))
    idxf = np.full(OFF + int(np.prod(oshape)) + 4, -7, np.int64)
    bx, bo, bi = buffer(ctx, xf), buffer(ctx, of), buffer(ctx, idxf)
    total = int(np.prod(oshape))
    run(
        ctx, queue, build, tag, "pool_max_forward", geo, total, [], [(bx, xs), (bo, os_), (bi, os_)]
    )
    cl.enqueue_copy(queue, of, bo)
    cl.enqueue_copy(queue, idxf, bi)
    ref, ref_idx = ref_max(x, geo)
    got = unpack(of, oshape, os_, lambda v: to_f64(tag, np.array([v]))[0])
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(unpack(idxf, oshape, os_, int), ref_idx)
    assert (idxf[:OFF] == -7).all() and (idxf[OFF + total :] == -7).all()
    # backward: gather of grad_out through the indices
    go = _inputs(rng, tag, oshape)
    gof, gos = pack(tag, go)
    gif, gis = pack(tag, np.zeros(shape), channels_last)
    bgo, bgi = buffer(ctx, gof), buffer(ctx, gif)
    run(
        ctx,
        queue,
        build,
        tag,
        "pool_max_backward",
        geo,
        int(np.prod(shape)),
        [],
        [(bgo, gos), (bi, os_), (bgi, gis)],
    )
    cl.enqueue_copy(queue, gif, bgi)
    ref_gi = np.zeros(shape)
    T, H, W = geo.inp
    for n, c, *o in itertools.product(range(geo.N), range(geo.C), *map(range, geo.out)):
        i = ref_idx[(n, c, *o)]
        ref_gi[n, c, i // (H * W), (i // W) % H, i % W] += go[(n, c, *o)]
    got_gi = unpack(gif, shape, gis, lambda v: to_f64(tag, np.array([v]))[0])
    np.testing.assert_allclose(got_gi, ref_gi, rtol=RTOL[tag], atol=RTOL[tag])


@pytest.mark.parametrize("tag", FLOAT_TAGS)
@pytest.mark.parametrize("name,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("cip,divisor", [(True, 0), (False, 0), (True, 5)])
def test_avg_forward_backward(ctx, queue, build, has_fp64, rng, tag, name, kw, cip, divisor):
    need_fp64(has_fp64, tag)
    geo = Geo(**{**kw, "d": (1, 1, 1)})  # average pooling has no dilation
    shape = (geo.N, geo.C, *geo.inp)
    oshape = (geo.N, geo.C, *geo.out)
    x = _inputs(rng, tag, shape)
    xf, xs = pack(tag, x, True)
    of, os_ = pack(tag, np.zeros(oshape))
    bx, bo = buffer(ctx, xf), buffer(ctx, of)
    extra = [np.int32(cip), np.int64(divisor)]
    run(
        ctx,
        queue,
        build,
        tag,
        "pool_avg_forward",
        geo,
        int(np.prod(oshape)),
        extra,
        [(bx, xs), (bo, os_)],
    )
    cl.enqueue_copy(queue, of, bo)
    got = unpack(of, oshape, os_, lambda v: to_f64(tag, np.array([v]))[0])
    np.testing.assert_allclose(got, ref_avg(x, geo, cip, divisor), rtol=RTOL[tag], atol=RTOL[tag])
    go = _inputs(rng, tag, oshape)
    gof, gos = pack(tag, go)
    gif, gis = pack(tag, np.zeros(shape))
    bgo, bgi = buffer(ctx, gof), buffer(ctx, gif)
    run(
        ctx,
        queue,
        build,
        tag,
        "pool_avg_backward",
        geo,
        int(np.prod(shape)),
        extra,
        [(bgo, gos), (bgi, gis)],
    )
    cl.enqueue_copy(queue, gif, bgi)
    got_gi = unpack(gif, shape, gis, lambda v: to_f64(tag, np.array([v]))[0])
    ref_gi = ref_avg_backward(go, geo, cip, divisor)
    np.testing.assert_allclose(got_gi, ref_gi, rtol=RTOL[tag], atol=RTOL[tag])
