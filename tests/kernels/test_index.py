"""Tests for kernels/index.cl against NumPy, run through pyopencl without torch:
- index_select: out[o, j, i] = src[o, index[j], i] over a source viewed as [outer, src_dim,
  inner], one work-item per output element (global rounded up to the local size), non-zero
  offsets and an index stride; out-of-range indices set the error word and write zeros.
- index_elements: gathers and scatters over a strided iteration space with one or two index
  tensors, wrapping, values, and the atomic read-modify-write reductions on every element size
  (1- and 2-byte elements share 32-bit words with their neighbours: every update must land);
  out-of-range indices set the error word and leave the element alone.
- masked_count / masked_scatter: self[i] = source[k] for the k-th set flag, over several groups
  and tiles; a short source sets the error word.
"""

import numpy as np
import pytest
from cl_tags import STORE, f32_to_bf16, to_f64

cl = pytest.importorskip("pyopencl")

LOCAL = 64


def run(ctx, queue, build, tag, idx_tag, src, index, stride=1, code=5):
    outer, src_dim, inner = src.shape
    n_idx = len(index[::stride])
    total = outer * n_idx * inner
    prg = build("index", ["-DINDEX_SELECT", f"-DT={tag}", f"-DIDX_T={idx_tag}"])
    mf = cl.mem_flags
    src_pad = np.concatenate([np.zeros(3, src.dtype), src.ravel()])
    idx_pad = np.concatenate([np.zeros(2, index.dtype), index])
    out = np.zeros(total + 1, src.dtype)
    err = np.zeros(1, np.int32)
    bufs = [
        cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
        for a in (out, src_pad, idx_pad, err)
    ]
    glob = (-(-total // LOCAL) * LOCAL,)
    cl.Kernel(prg, "index_select")(
        queue,
        glob,
        (LOCAL,),
        np.uint64(total),
        np.uint64(inner),
        np.uint64(n_idx),
        np.int64(src_dim),
        bufs[0],
        np.uint64(1),
        bufs[1],
        np.uint64(3),
        bufs[2],
        np.uint64(2),
        np.int64(stride),
        bufs[3],
        np.int32(code),
    )
    cl.enqueue_copy(queue, out, bufs[0])
    cl.enqueue_copy(queue, err, bufs[3])
    queue.finish()
    return out[1:].reshape(outer, n_idx, inner), int(err[0])


@pytest.mark.parametrize("tag", ["uchar", "short", "int", "long"])
@pytest.mark.parametrize("idx_tag", ["long", "int"])
@pytest.mark.parametrize("shape", [(1, 7, 1), (3, 5, 4), (2, 9, 65)])
def test_select(ctx, queue, build, rng, tag, idx_tag, shape):
    src = rng.integers(-100, 100, shape).astype(STORE[tag])
    index = rng.integers(0, shape[1], 13).astype(STORE[idx_tag])
    for stride in (1, 2):
        out, err = run(ctx, queue, build, tag, idx_tag, src, index, stride)
        np.testing.assert_array_equal(out, src[:, index[::stride], :])
        assert err == 0


def test_out_of_range_sets_error_and_writes_zeros(ctx, queue, build, rng):
    src = rng.integers(1, 100, (2, 4, 3)).astype(np.int32)
    index = np.array([1, 4, -1, 0], np.int64)
    out, err = run(ctx, queue, build, "int", "long", src, index, code=9)
    assert err == 9
    np.testing.assert_array_equal(out[:, [0, 3], :], src[:, [1, 0], :])
    assert not out[:, [1, 2], :].any()


# --------------------------------------------------------------------------------------------
# index_elements

WG = 256


def _long8(vals):
    out = np.zeros(8, np.int64)
    out[: len(vals)] = vals
    return out.view(cl.cltypes.long8)[0]


def _buf(ctx, a):
    mf = cl.mem_flags
    # Padded to a multiple of 512 bytes, as the device allocator rounds its blocks: word-wide
    # updates of the last elements stay inside the buffer.
    raw = np.zeros(-(-max(a.nbytes, 1) // 512) * 512, np.uint8)
    raw[: a.nbytes] = a.view(np.uint8).ravel()
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=raw)


def _read(queue, buf, like):
    raw = np.empty(-(-max(like.nbytes, 1) // 512) * 512, np.uint8)
    cl.enqueue_copy(queue, raw, buf)
    queue.finish()
    return raw[: like.nbytes].view(like.dtype).reshape(like.shape)


def elements(
    ctx,
    queue,
    build,
    options,
    sizes,
    a,
    a_off,
    a_st,
    b,
    b_off,
    b_st,
    indices,
    isizes,
    istrides,
    value=None,
    alpha=None,
    code=3,
    chunk=3,
):
    """Runs index_elements; sizes and strides innermost first; `chunk` positions per work-item
    (3: runs that cross the end of dimension 0). Returns (a, b, err)."""
    prg = build("index", options)
    n = int(np.prod(sizes)) if sizes else 1
    abuf = _buf(ctx, a)
    err = np.zeros(1, np.int32)
    ebuf = _buf(ctx, err)
    args = [
        np.uint64(n),
        np.uint64(chunk),
        np.int32(len(sizes)),
        _long8(sizes),
        abuf,
        np.uint64(a_off),
        _long8(a_st),
    ]
    bbuf = None
    if value is not None:
        args.append(value)
    else:
        bbuf = _buf(ctx, b)
        args += [bbuf, np.uint64(b_off), _long8(b_st)]
    for idx, off, st in indices:
        args += [_buf(ctx, idx), np.uint64(off), _long8(st)]
    args += [_long8(isizes), _long8(istrides)]
    if alpha is not None:
        args.append(alpha)
    args += [ebuf, np.int32(code)]
    groups = (n + chunk - 1) // chunk
    glob = ((groups + WG - 1) // WG * WG,)
    cl.Kernel(prg, "index_elements")(queue, glob, (WG,), *args)
    a_out = _read(queue, abuf, a)
    b_out = _read(queue, bbuf, b) if bbuf is not None else None
    return a_out, b_out, int(_read(queue, ebuf, err)[0])


@pytest.mark.parametrize("tag", ["uchar", "short", "int", "long"])
def test_gather_two_indices_with_wrap(ctx, queue, build, rng, tag):
    # out[p, q] = a[rows[p, q], 2, cols[q]] from a (4, 3, 5) source: the indexed dims 0 and 2
    # (strides 15 and 1), the iteration space (3, 6) with the indices broadcast over it.
    a = rng.integers(-100, 100, (4, 3, 5)).astype(STORE[tag])
    rows = rng.integers(-4, 4, (3, 6)).astype(np.int64)
    cols = rng.integers(-5, 5, (6,)).astype(np.int64)
    out = np.zeros((3, 6), STORE[tag])
    opts = [f"-DT={tag}", "-DIDX_T=long", "-DNIDX=2", "-DGATHER", "-DWRAP"]
    for chunk in (1, 4, 100):
        _, got, err = elements(
            ctx,
            queue,
            build,
            opts,
            [6, 3],
            a,
            2 * 5,
            [0, 0],
            out,
            0,
            [1, 6],
            [(rows, 0, [1, 6]), (cols, 0, [1, 0])],
            [4, 5],
            [15, 1],
            chunk=chunk,
        )
        assert err == 0
        np.testing.assert_array_equal(got, a[rows, 2, cols[None, :]])


def test_scatter_copy_value_and_errors(ctx, queue, build, rng):
    a = rng.integers(1, 50, (6,)).astype(np.int32)
    idx = np.array([5, 0, 9, 2], np.int32)  # 9 is out of range
    src = np.array([-1, -2, -3, -4], np.int32)
    opts = ["-DT=int", "-DIDX_T=int", "-DNIDX=1"]
    got, _, err = elements(
        ctx, queue, build, opts, [4], a, 0, [0], src, 0, [1], [(idx, 0, [1])], [6], [1], code=7
    )
    expected = a.copy()
    expected[[5, 0, 2]] = [-1, -2, -4]
    np.testing.assert_array_equal(got, expected)
    assert err == 7
    got, _, err = elements(
        ctx,
        queue,
        build,
        opts + ["-DVALUE", "-DWRAP"],
        [3],
        a,
        0,
        [0],
        None,
        0,
        None,
        [(np.array([-1, 1, -6], np.int32), 0, [1])],
        [6],
        [1],
        value=np.int32(42),
    )
    expected = a.copy()
    expected[[5, 1, 0]] = 42
    np.testing.assert_array_equal(got, expected)
    assert err == 0


REDUCE_TAGS = [
    "float",
    "double",
    "half",
    "bfloat16",
    "long",
    "int",
    "short",
    "char",
    "uchar",
    "bool",
]


def _values(rng, tag, n):
    if tag in ("float", "double", "half"):
        return rng.uniform(-2, 2, n).astype(STORE[tag])
    if tag == "bfloat16":
        return f32_to_bf16(rng.uniform(-2, 2, n).astype(np.float32))
    if tag == "bool":
        return rng.integers(0, 2, n).astype(np.uint8)
    if tag == "uchar":
        return rng.integers(0, 4, n).astype(np.uint8)
    return rng.integers(-3, 4, n).astype(STORE[tag])


@pytest.mark.parametrize("op", ["ADD", "MUL", "MAX", "MIN"])
@pytest.mark.parametrize("tag", REDUCE_TAGS)
def test_reduce_every_element_size(ctx, queue, build, rng, has_fp64, op, tag):
    if tag == "double" and not has_fp64:
        pytest.skip("no fp64")
    # 7 targets, each hit 40 times, from an offset that is not word-aligned for small types.
    n_target, hits, off = 7, 40, 3
    a = _values(rng, tag, n_target + off + 2)
    idx = np.tile(np.arange(n_target), hits).astype(np.int64)
    rng.shuffle(idx)
    src = _values(rng, tag, idx.size)
    if op == "MUL" and tag not in ("bool",):
        src = np.where(to_f64(tag, src) == 0, _values(rng, tag, 1)[0], src).astype(src.dtype)
    opts = [f"-DT={tag}", "-DIDX_T=long", "-DNIDX=1", f"-DREDUCE_{op}"]
    if tag in ("float", "double", "half", "bfloat16"):
        opts.append("-DT_FLOAT")
    got, _, err = elements(
        ctx,
        queue,
        build,
        opts,
        [idx.size],
        a,
        off,
        [0],
        src,
        0,
        [1],
        [(idx, 0, [1])],
        [n_target],
        [1],
    )
    assert err == 0
    # Neighbours of the targets (sharing their words) are untouched.
    np.testing.assert_array_equal(got[:off], a[:off])
    np.testing.assert_array_equal(got[off + n_target :], a[off + n_target :])
    base, vals = to_f64(tag, a[off : off + n_target]), to_f64(tag, src)
    for t in range(n_target):
        contrib = vals[idx == t]
        if op == "ADD":
            expected = base[t] + contrib.sum()
        elif op == "MUL":
            expected = base[t] * np.prod(contrib)
        elif op == "MAX":
            expected = max(base[t], contrib.max())
        else:
            expected = min(base[t], contrib.min())
        actual = to_f64(tag, got[off + t : off + t + 1])[0]
        if tag == "bool":
            assert actual == (expected != 0)
        elif tag in ("long", "int", "short", "char", "uchar"):
            bits = np.dtype(STORE[tag]).itemsize * 8
            wrapped = int(expected) % (1 << bits)
            if tag != "uchar" and wrapped >= 1 << (bits - 1):
                wrapped -= 1 << bits
            assert actual == wrapped, (t, actual, expected)
        elif op in ("MAX", "MIN"):
            assert actual == expected
        else:
            # Rounded to the element type after every update, in some order.
            tol = {"float": 1e-5, "double": 1e-12, "half": 4e-2, "bfloat16": 3e-1}[tag]
            scale = max(1.0, abs(expected)) if op == "ADD" else max(1e-3, abs(expected))
            assert abs(actual - expected) <= tol * scale * (hits if op == "ADD" else 4), (
                t,
                actual,
                expected,
            )


def test_reduce_nan_wins_and_alpha(ctx, queue, build):
    a = np.array([1.0, np.nan, 3.0, 0.0], np.float32)
    src = np.array([np.nan, 5.0, -7.0, 2.0, np.inf], np.float32)
    idx = np.array([0, 1, 2, 3, 2], np.int64)
    opts = ["-DT=float", "-DT_FLOAT", "-DIDX_T=long", "-DNIDX=1", "-DREDUCE_MAX"]
    got, _, _ = elements(
        ctx, queue, build, opts, [5], a, 0, [0], src, 0, [1], [(idx, 0, [1])], [4], [1]
    )
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == np.inf and got[3] == 2.0
    opts = ["-DT=float", "-DT_FLOAT", "-DIDX_T=long", "-DNIDX=1", "-DREDUCE_ADD", "-DALPHA"]
    a = np.zeros(4, np.float32)
    got, _, _ = elements(
        ctx,
        queue,
        build,
        opts,
        [4],
        a,
        0,
        [0],
        src[1:],
        0,
        [1],
        [(np.array([0, 0, 1, 3], np.int64), 0, [1])],
        [4],
        [1],
        alpha=np.float32(-2.0),
    )
    np.testing.assert_array_equal(got, [-2 * (5 - 7), -4.0, 0.0, -np.inf])


# --------------------------------------------------------------------------------------------
# masked_count / masked_scatter


@pytest.mark.parametrize("n", [1, 300, 5000])
@pytest.mark.parametrize("lws", [64, 256])
def test_masked_scatter(ctx, queue, build, rng, n, lws):
    flags = (rng.random(n) < 0.4).astype(np.uint8)
    self_ = rng.integers(-100, 100, n).astype(np.int32)
    ones = int(flags.sum())
    src = rng.integers(1000, 2000, ones + 3).astype(np.int32)
    groups = max(1, min(9, -(-n // (lws * 2))))
    chunk = -(-n // groups)
    prg = build("index", ["-DMASKED", "-DT=int", f"-DLWS={lws}"])
    fbuf, sbuf, srcbuf = _buf(ctx, flags), _buf(ctx, self_), _buf(ctx, src)
    counts = np.zeros(groups, np.int64)
    cbuf, ebuf = _buf(ctx, counts), _buf(ctx, np.zeros(1, np.int32))
    glob = (groups * lws,)
    cl.Kernel(prg, "masked_count")(
        queue, glob, (lws,), np.uint64(n), np.uint64(chunk), fbuf, np.uint64(0), cbuf, np.uint64(0)
    )
    for src_n, want_err in ((ones, 0), (max(ones - 1, 0), 5)):
        sbuf = _buf(ctx, self_)
        ebuf = _buf(ctx, np.zeros(1, np.int32))
        cl.Kernel(prg, "masked_scatter")(
            queue,
            glob,
            (lws,),
            np.uint64(n),
            np.uint64(chunk),
            fbuf,
            np.uint64(0),
            cbuf,
            np.uint64(0),
            sbuf,
            np.uint64(0),
            srcbuf,
            np.uint64(0),
            np.uint64(src_n),
            ebuf,
            np.int32(5),
        )
        got = _read(queue, sbuf, self_)
        err = int(_read(queue, ebuf, np.zeros(1, np.int32))[0])
        expected = self_.copy()
        expected[flags != 0] = src[:ones]
        if want_err and ones:
            assert err == 5
            expected[np.flatnonzero(flags)[-1]] = self_[np.flatnonzero(flags)[-1]]
        else:
            assert err == 0
        np.testing.assert_array_equal(got, expected)
