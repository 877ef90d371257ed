"""Tests for kernels/isin.cl against numpy.isin."""

import numpy as np
import pytest
from cl_tags import STORE, f32_to_bf16

cl = pytest.importorskip("pyopencl")

LWS = 64


def run_isin(ctx, queue, build, tag, e, t, invert, offs=(0, 0, 0)):
    prg = build("isin", [f"-DT={tag}"])
    mf = cl.mem_flags
    e_off, t_off, o_off = offs
    dtype = STORE[tag]
    e_h = np.concatenate([np.zeros(e_off, dtype), e.astype(dtype)])
    t_h = np.concatenate([np.zeros(t_off, dtype), t.astype(dtype), np.zeros(1, dtype)])
    out = np.full(o_off + e.size + 2, 7, dtype=np.uint8)
    e_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=e_h)
    t_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=t_h)
    o_b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    n = e.size
    cl.Kernel(prg, "isin")(
        queue, ((n + LWS - 1) // LWS * LWS,), (LWS,), e_b, np.uint64(e_off), np.uint64(n), t_b,
        np.uint64(t_off), np.uint64(t.size), o_b, np.uint64(o_off), np.int32(invert),
    )  # fmt: skip
    cl.enqueue_copy(queue, out, o_b)
    queue.finish()
    assert (out[:o_off] == 7).all() and (out[o_off + n :] == 7).all()
    return out[o_off : o_off + n]


@pytest.mark.parametrize("tag", ["float", "long", "int", "uchar", "char", "half"])
@pytest.mark.parametrize(("n", "m"), [(1, 1), (100, 7), (65, 0), (3, 50)])
@pytest.mark.parametrize("invert", [0, 1])
def test_isin_matches_numpy(ctx, queue, build, rng, tag, n, m, invert):
    e = rng.integers(0, 20, n)
    t = rng.integers(0, 20, m)
    got = run_isin(ctx, queue, build, tag, e, t, invert, offs=(3, 2, 5))
    np.testing.assert_array_equal(got, np.isin(e, t, invert=bool(invert)).astype(np.uint8))


def test_isin_nan_and_bfloat16(ctx, queue, build):
    e = np.array([1.0, np.nan, np.inf, -0.0, 2.5], np.float32)
    t = np.array([np.nan, np.inf, 0.0], np.float32)
    want = np.array([0, 0, 1, 1, 0], np.uint8)
    np.testing.assert_array_equal(run_isin(ctx, queue, build, "float", e, t, 0), want)
    got = run_isin(ctx, queue, build, "bfloat16", f32_to_bf16(e), f32_to_bf16(t), 0)
    np.testing.assert_array_equal(got, want)
