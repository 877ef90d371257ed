"""Tests for kernels/scan.cl against NumPy: the sequential (per column) and tile (per row
work-group) scans, each with and without chunks, for sum, product, log-add-exp and max/min with
indices, driven as csrc/ops/Scan.cpp drives them (see the header of scan.cl):

    C == 1:  scan_seq / scan_tile (use_carry = 0)
    C >  1:  reduce_seq / reduce_tile -> totals, scan_totals (in place), scan_* (use_carry = 1)

Inputs live at a non-zero offset in their buffers, so offsets are exercised too.
"""

import numpy as np
import pytest
from cl_tags import STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

LWS, E = 64, 4
TILE = LWS * E
OFF = 3  # elements before the data in every buffer

ACC = {"float": "float", "double": "double", "half": "float", "bfloat16": "float",
       "long": "long", "int": "long", "uchar": "long"}  # fmt: skip


def acc_tag(op, tag):
    return tag if op in ("MAX", "MIN") else ACC[tag]


def padded(arr):
    return np.concatenate([np.zeros(OFF, arr.dtype), arr.ravel()])


def run(ctx, queue, build, tag, op, x, outer, n, inner, chunk, tile):
    """The scan of x (storage of tag, (outer, n, inner) contiguous) along n: (values, indices)."""
    acc = acc_tag(op, tag)
    opts = [f"-DT={tag}", f"-DACC_T={acc}", f"-DOP_{op}", f"-DLWS={LWS}", f"-DE={E}"]
    prg = build("scan", opts)
    with_idx = op in ("MAX", "MIN")
    C = -(-n // chunk)
    total = outer * n * inner
    inb = buffer(ctx, padded(x))
    out = np.zeros(total + OFF, STORE[tag])
    outb = buffer(ctx, out)
    idx = np.full(total + OFF, -7, np.int64)
    idxb = buffer(ctx, idx)
    tot = np.zeros(outer * C * inner + OFF, STORE[acc])
    totb = buffer(ctx, tot)
    toti = np.zeros(outer * C * inner + OFF, np.int64)
    totib = buffer(ctx, toti)
    u = np.uint64
    o_args = [outb, u(OFF)] + ([idxb, u(OFF)] if with_idx else [])
    t_args = [totb, u(OFF)] + ([totib, u(OFF)] if with_idx else [])

    def launch(name, groups, local, *args):
        cl.Kernel(prg, name)(queue, (-(-groups // local) * local,), (local,), *args)

    if tile:
        assert inner == 1
        if C > 1:
            launch("reduce_tile", outer * C * LWS, LWS, u(outer), u(n), u(chunk), inb, u(OFF),
                   *t_args)  # fmt: skip
    elif C > 1:
        launch("reduce_seq", outer * C * inner, 64, u(outer), u(n), u(inner), u(chunk), inb,
               u(OFF), *t_args)  # fmt: skip
    if C > 1:
        launch("scan_totals", outer * inner, 64, u(outer), u(C), u(inner), *t_args)
    if tile:
        launch("scan_tile", outer * C * LWS, LWS, u(outer), u(n), u(chunk), inb, u(OFF),
               *o_args, *t_args, np.int32(C > 1))  # fmt: skip
    else:
        launch("scan_seq", outer * C * inner, 64, u(outer), u(n), u(inner), u(chunk), inb,
               u(OFF), *o_args, *t_args, np.int32(C > 1))  # fmt: skip
    cl.enqueue_copy(queue, out, outb)
    cl.enqueue_copy(queue, idx, idxb)
    queue.finish()
    return out[OFF:].reshape(outer, n, inner), idx[OFF:].reshape(outer, n, inner)


def reference(op, x64, axis=1):
    """NumPy scan along axis (float64/int64) and, for MAX/MIN, torch's indices."""
    if op == "SUM":
        return np.cumsum(x64, axis), None
    if op == "PROD":
        return np.cumprod(x64, axis), None
    if op == "LOGADDEXP":
        return np.logaddexp.accumulate(x64, axis), None
    # The CPU's rule: take x if x is NaN or (the running value is not NaN and x >= / <= it).
    xs = np.moveaxis(x64, axis, -1)
    vals = np.empty_like(xs)
    idx = np.empty(xs.shape, np.int64)
    for pos in np.ndindex(xs.shape[:-1]):
        row = xs[pos]
        best, bi = row[0], 0
        for j, v in enumerate(row):
            take = np.isnan(v) or (not np.isnan(best) and (v >= best if op == "MAX" else v <= best))
            if take:
                best, bi = v, j
            vals[pos + (j,)] = best
            idx[pos + (j,)] = bi
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def values(rng, tag, op, shape):
    if op == "PROD":
        x = rng.uniform(0.9, 1.1, shape) if tag not in ("long", "int", "uchar") else \
            rng.integers(-2, 3, shape)  # fmt: skip
    elif op in ("MAX", "MIN"):
        x = rng.integers(-4, 5, shape).astype(np.float64)  # ties
        if tag in ("float", "double", "half", "bfloat16") and x.size > 10:
            x.flat[[2, 7]] = np.nan
    else:
        x = rng.uniform(-5, 5, shape) if tag not in ("long", "int", "uchar") else \
            rng.integers(0, 100, shape)  # fmt: skip
    if tag == "uchar":
        x = np.abs(x)
    return store(tag, x)


# (outer, n, inner, chunk, tile): each route, with and without chunks (tile chunks are a
# multiple of TILE).
GEOMETRIES = [
    (3, 7, 5, 7, False),
    (2, 300, 3, 37, False),
    (5, 1, 1, 1, False),
    (2, 700, 1, 700, True),
    (3, 1500, 1, 2 * TILE, True),
    (1, 3 * TILE + 5, 1, TILE, True),
]


@pytest.mark.parametrize("geom", GEOMETRIES, ids=lambda g: "x".join(map(str, g[:4])) +
                         ("_tile" if g[4] else "_seq"))  # fmt: skip
@pytest.mark.parametrize("op", ["SUM", "PROD", "LOGADDEXP", "MAX", "MIN"])
def test_float(ctx, queue, build, rng, op, geom):
    outer, n, inner, chunk, tile = geom
    x = values(rng, "float", op, (outer, n, inner))
    got, idx = run(ctx, queue, build, "float", op, x, outer, n, inner, chunk, tile)
    want, want_idx = reference(op, x.astype(np.float64))
    if op in ("MAX", "MIN"):
        np.testing.assert_array_equal(got.astype(np.float64), want)
        np.testing.assert_array_equal(idx, want_idx)
    elif op == "LOGADDEXP":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * n)
    else:
        scale = np.cumsum(np.abs(x.astype(np.float64)), 1) if op == "SUM" else np.abs(want)
        assert np.all(np.abs(got - want) <= 4 * n * 2.0**-24 * scale + 1e-30)


@pytest.mark.parametrize("tag", ["double", "half", "bfloat16", "long", "int", "uchar"])
@pytest.mark.parametrize("op", ["SUM", "MAX"])
def test_dtypes(ctx, queue, build, rng, has_fp64, tag, op):
    need_fp64(has_fp64, tag, acc_tag(op, tag))
    for outer, n, inner, chunk, tile in (GEOMETRIES[1], GEOMETRIES[4]):
        x = values(rng, tag, op, (outer, n, inner))
        got, idx = run(ctx, queue, build, tag, op, x, outer, n, inner, chunk, tile)
        x64 = to_f64(tag, x)
        want, want_idx = reference(op, x64)
        if op == "MAX":
            np.testing.assert_array_equal(to_f64(tag, got), want)
            np.testing.assert_array_equal(idx, want_idx)
        elif tag in ("long", "int", "uchar"):
            # accumulated in int64, stored with wrap-around like the CPU
            np.testing.assert_array_equal(got, want.astype(np.int64).astype(STORE[tag]))
        else:
            # float accumulation, rounded once to the tag
            rel = {"double": 2.0**-50, "half": 2.0**-10, "bfloat16": 2.0**-7}[tag]
            scale = np.cumsum(np.abs(x64), 1)
            err = np.abs(to_f64(tag, got) - want)
            assert np.all(err <= rel * np.abs(want) + 4 * n * 2.0**-24 * scale)
