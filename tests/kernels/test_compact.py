"""Tests for kernels/compact.cl against NumPy: count_blocks, the host's exclusive scan of the
counts, then compact, with the geometry stated at the top of the file (global = G * LWS,
local = LWS, group g owns flags [g * chunk, min(n, (g + 1) * chunk)))."""

import numpy as np
import pytest
from cl_tags import STORE

cl = pytest.importorskip("pyopencl")

LWS = 64


def run(ctx, queue, build, flags_tag, flags, groups, mode, src=None, shape=None, flags_off=3):
    n = flags.size
    chunk = -(-n // groups)
    opts = [f"-DFLAG_T={flags_tag}", f"-DLWS={LWS}"]
    opts += [f"-DSELECT_T={mode}"] if src is not None else [f"-DINDEX_NDIM={len(shape)}"]
    prg = build("compact", opts)
    mf = cl.mem_flags
    padded = np.concatenate([np.zeros(flags_off, flags.dtype), flags])  # a non-zero offset
    fbuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=padded)
    counts = np.full(groups + 2, -7, np.int64)  # written from offset 2
    cbuf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=counts)
    glob, loc = (groups * LWS,), (LWS,)
    cl.Kernel(prg, "count_blocks")(
        queue,
        glob,
        loc,
        np.uint64(n),
        np.uint64(chunk),
        fbuf,
        np.uint64(flags_off),
        cbuf,
        np.uint64(2),
    )
    cl.enqueue_copy(queue, counts, cbuf)
    queue.finish()
    per_group = counts[2:]
    offsets = np.concatenate([[0], np.cumsum(per_group)[:-1]]).astype(np.int64)
    total = int(per_group.sum())
    obuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=offsets)
    if src is not None:
        out = np.zeros(total + 1, src.dtype)
        tail = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src), np.uint64(0)]
    else:
        out = np.zeros(total * len(shape) + 1, np.int64)
        sizes = np.zeros(8, np.int64)
        sizes[: len(shape)] = shape[::-1]
        tail = [sizes.view(cl.cltypes.long8)[0]]
    outbuf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    head = [np.uint64(n), np.uint64(chunk), fbuf, np.uint64(flags_off), obuf, np.uint64(0)]
    cl.Kernel(prg, "compact")(queue, glob, loc, *head, outbuf, np.uint64(1), *tail)
    cl.enqueue_copy(queue, out, outbuf)
    queue.finish()
    return per_group, out[1:]


def flag_values(tag, rng, n, density):
    chosen = rng.random(n) < density
    if tag == "bool":
        return chosen.astype(np.uint8)
    vals = np.where(chosen, rng.uniform(0.5, 2, n), 0.0).astype(STORE[tag])
    if tag == "float" and n >= 4:
        vals[:4] = [np.nan, -0.0, np.inf, 0.0]  # NaN and Inf count, -0.0 does not
    return vals


@pytest.mark.parametrize("tag", ["bool", "float", "half", "int"])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000])
@pytest.mark.parametrize("groups", [1, 3, 16])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_select(ctx, queue, build, rng, tag, n, groups, density):
    flags = flag_values(tag, rng, n, density)
    src = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    per_group, out = run(ctx, queue, build, tag, flags, groups, "int", src=src)
    selected = flags.astype(np.float64) != 0
    chunk = -(-n // groups)
    want_counts = [int(selected[g * chunk : (g + 1) * chunk].sum()) for g in range(groups)]
    np.testing.assert_array_equal(per_group, want_counts)
    np.testing.assert_array_equal(out, src[selected])


@pytest.mark.parametrize("shape", [(70,), (5, 13), (3, 4, 11), (2, 1, 3, 1, 2, 3, 1, 5)])
@pytest.mark.parametrize("groups", [1, 4])
def test_index(ctx, queue, build, rng, shape, groups):
    flags = flag_values("float", rng, int(np.prod(shape)), 0.4)
    _, out = run(ctx, queue, build, "float", flags, groups, None, shape=shape)
    want = np.argwhere(flags.reshape(shape).astype(np.float64) != 0)
    np.testing.assert_array_equal(out.reshape(-1, len(shape)), want)
