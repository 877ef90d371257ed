"""Tests for kernels/sort.cl against NumPy: sort_local (several short rows per tile, or tiles of a
long row into run buffers), merge_runs passes, median_pick and mode_pick, driven as
csrc/ops/Sort.cpp drives them (see the header of sort.cl).

The expected order is NumPy's stable argsort of the order key torch uses: NaN after everything
(all NaNs equal), -0.0 equal to 0.0, descending as the reverse key with ties still by position.
"""

import numpy as np
import pytest
from cl_tags import STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

LWS, TILE = 64, 256
OFF = 3
BITS = {"float": 32, "double": 64, "half": 16, "bfloat16": 16, "long": 64, "int": 32,
        "short": 16, "char": 8, "uchar": 8, "bool": 8}  # fmt: skip
INF_BITS = {"float": "0x7f800000u", "double": "0x7ff0000000000000UL", "half": "0x7c00u",
            "bfloat16": "0x7f80u"}  # fmt: skip
SIGNED = ("long", "int", "short", "char")


def options(tag):
    o = [f"-DT={tag}", f"-DKEY_BITS={BITS[tag]}", f"-DLWS={LWS}", f"-DTILE={TILE}"]
    if tag in INF_BITS:
        o += ["-DKEY_FLOAT", f"-DKEY_INF={INF_BITS[tag]}"]
    elif tag in SIGNED:
        o += ["-DKEY_SIGNED"]
    return o


def bits_dtype(tag):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[BITS[tag]]


def padded(arr):
    return np.concatenate([np.zeros(OFF, arr.dtype), arr.ravel()])


def sort_rows(ctx, queue, build, tag, x, outer, n, inner, desc):
    """Sorted bits and indices of x (storage of tag, (outer, n, inner)) along n."""
    prg = build("sort", options(tag))
    rows = outer * inner
    u = np.uint64
    src = buffer(ctx, padded(x.view(bits_dtype(tag))))
    vals = np.zeros(rows * n + OFF, bits_dtype(tag))
    idx = np.full(rows * n + OFF, -7, np.int64)
    vb, ib = buffer(ctx, vals), buffer(ctx, idx)
    key_t = np.uint64 if BITS[tag] == 64 else np.uint32
    merge = n > TILE
    size = rows * n + OFF
    runs = [
        (buffer(ctx, np.zeros(size, key_t)), buffer(ctx, np.zeros(size, np.uint32)))
        for _ in range(2 if merge else 1)
    ]
    P = 1
    while P < min(n, TILE):
        P *= 2
    tiles = -(-n // TILE) if merge else 1
    groups = rows * tiles if merge else -(-rows // (TILE // P))
    cl.Kernel(prg, "sort_local")(
        queue, (groups * LWS,), (LWS,), u(rows), u(n), u(inner), u(P), u(tiles), np.int32(desc),
        src, u(OFF), vb, u(OFF), ib, u(OFF), runs[0][0], u(OFF), runs[0][1], u(OFF),
        np.int32(not merge),
    )  # fmt: skip
    run, cur = TILE, 0
    while merge and run < n:
        last = 2 * run >= n
        items = rows * -(-n // 8)
        cl.Kernel(prg, "merge_runs")(
            queue, (-(-items // 64) * 64,), (64,), u(rows), u(n), u(inner), u(run), np.int32(desc),
            runs[cur][0], u(OFF), runs[cur][1], u(OFF), runs[1 - cur][0], u(OFF),
            runs[1 - cur][1], u(OFF), vb, u(OFF), ib, u(OFF), np.int32(last),
        )  # fmt: skip
        run, cur = 2 * run, 1 - cur
    cl.enqueue_copy(queue, vals, vb)
    cl.enqueue_copy(queue, idx, ib)
    queue.finish()
    shape = (outer, n, inner)
    return vals[OFF:].view(STORE[tag]).reshape(shape), idx[OFF:].reshape(shape)


def key(tag, x):
    """(rank, value) keys with torch's order: NaN after everything (rank 1, all NaNs equal),
    -0.0 equal to 0.0."""
    v = to_f64(tag, x)
    if tag in INF_BITS:
        nan = np.isnan(v)
        return nan.astype(np.float64), np.where(nan, 0.0, v + 0.0)
    return np.zeros(v.shape), v


def expected(tag, x, desc):
    """(sorted storage, indices) along axis 1 of a (outer, n, inner) array."""
    xs = np.moveaxis(x, 1, -1)
    idx = np.empty(xs.shape, np.int64)
    for pos in np.ndindex(xs.shape[:-1]):
        rank, k = key(tag, xs[pos])
        if desc:
            rank, k = -rank, -k
        idx[pos] = np.lexsort((k, rank))
    vals = np.take_along_axis(xs, idx, -1)
    return np.moveaxis(vals, -1, 1), np.moveaxis(idx, -1, 1)


def gen(rng, tag, shape):
    """Values with ties; floats with NaN (both signs), -0.0 / 0.0 and infinities."""
    x = rng.integers(-5, 6, size=shape).astype(np.float64)
    if tag in INF_BITS:
        flat = x.reshape(-1)
        m = flat.size
        for v in (np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan):
            flat[rng.integers(0, m, size=max(1, m // 20))] = v
    elif tag in ("uchar", "bool"):
        x = np.abs(x) if tag == "uchar" else (x > 0)
    elif tag == "long":
        x = x.astype(np.int64) * (2**40)  # beyond float's precision
        return x
    return store(tag, x)


# (outer, n, inner): several rows per tile, one row per tile, merged rows, a strided dim
SHAPES = [(5, 1, 1), (7, 5, 3), (3, 100, 1), (2, TILE, 1), (2, 3 * TILE + 7, 1), (2, 600, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("tag", ["float", "int"])
@pytest.mark.parametrize("desc", [False, True], ids=["asc", "desc"])
def test_sort(ctx, queue, build, rng, tag, shape, desc):
    x = gen(rng, tag, shape)
    vals, idx = sort_rows(ctx, queue, build, tag, x, *shape, desc)
    want_vals, want_idx = expected(tag, x, desc)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(vals.view(bits_dtype(tag)), want_vals.view(bits_dtype(tag)))


@pytest.mark.parametrize("tag", ["double", "half", "bfloat16", "long", "short", "char", "uchar",
                                 "bool"])  # fmt: skip
def test_sort_dtypes(ctx, queue, build, rng, has_fp64, tag):
    need_fp64(has_fp64, tag)
    for shape in ((4, 37, 1), (1, 2 * TILE + 3, 2)):
        x = gen(rng, tag, shape)
        for desc in (False, True):
            vals, idx = sort_rows(ctx, queue, build, tag, x, *shape, desc)
            want_vals, want_idx = expected(tag, x, desc)
            np.testing.assert_array_equal(idx, want_idx)
            np.testing.assert_array_equal(vals.view(bits_dtype(tag)),
                                          want_vals.view(bits_dtype(tag)))  # fmt: skip


def pick(ctx, queue, build, tag, kernel, sorted_vals, idx, extra=()):
    outer, n, inner = sorted_vals.shape
    rows = outer * inner
    prg = build("sort", options(tag))
    u = np.uint64
    out = np.zeros(rows + OFF, STORE[tag])
    out_idx = np.full(rows + OFF, -7, np.int64)
    ob, oib = buffer(ctx, out), buffer(ctx, out_idx)
    cl.Kernel(prg, kernel)(
        queue, (-(-rows // 64) * 64,), (64,), u(rows), u(n), u(inner),
        buffer(ctx, padded(sorted_vals)), u(OFF), buffer(ctx, padded(idx)), u(OFF), ob, u(OFF),
        oib, u(OFF), *extra,
    )  # fmt: skip
    cl.enqueue_copy(queue, out, ob)
    cl.enqueue_copy(queue, out_idx, oib)
    queue.finish()
    return out[OFF:].reshape(outer, inner), out_idx[OFF:].reshape(outer, inner)


@pytest.mark.parametrize("ignore_nan", [0, 1])
def test_median_pick(ctx, queue, build, rng, ignore_nan):
    x = rng.integers(-5, 6, size=(4, 9, 3)).astype(np.float32)
    x[0, [1, 4], 0] = np.nan  # some NaN
    x[1, :, 1] = np.nan  # all NaN
    sv, si = expected("float", x, False)
    got, got_idx = pick(ctx, queue, build, "float", "median_pick", sv, si, (np.int32(ignore_nan),))
    for o in range(4):
        for i in range(3):
            col = sv[o, :, i]
            m = int(np.sum(~np.isnan(col)))
            if ignore_nan:
                j = 0 if m == 0 else (m - 1) // 2
            else:
                j = m if m < 9 else 4  # the first NaN, else the lower middle
            np.testing.assert_array_equal(got[o, i], col[j])
            assert got_idx[o, i] == si[o, j, i]


def test_mode_pick(ctx, queue, build, rng):
    x = rng.integers(0, 4, size=(5, 40, 2)).astype(np.int32)
    sv, si = expected("int", x, False)
    got, got_idx = pick(ctx, queue, build, "int", "mode_pick", sv, si)
    for o in range(5):
        for i in range(2):
            vals, counts = np.unique(x[o, :, i], return_counts=True)
            mode = vals[np.argmax(counts)]  # the smallest of the most frequent
            assert got[o, i] == mode
            assert got_idx[o, i] == np.nonzero(x[o, :, i] == mode)[0].max()
