"""Tests for kernels/index.cl against NumPy: out[o, j, i] = src[o, index[j], i] over a source
viewed as [outer, src_dim, inner], one work-item per output element (global rounded up to the
local size), non-zero offsets and an index stride; out-of-range indices set the error word and
write zeros."""

import numpy as np
import pytest
from cl_tags import STORE

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
