"""Tests for kernels/embedding.cl against NumPy, through pyopencl without torch: the keys
(padding_idx and out-of-range indices become num_weights), the stable one-bit radix passes (the
same order as NumPy's stable argsort, over several groups and tiles), the runs of each row, and
the sums in ascending position (bit-exact against a sequential float32 sum)."""

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")


def _buf(ctx, a):
    mf = cl.mem_flags
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))


def _read(queue, buf, like):
    out = np.empty_like(like)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    return out


def _u64(v):
    return np.uint64(v)


def embedding_backward(ctx, queue, build, idx, grad, num_weights, padding_idx, scale, lws, groups):
    n, dim = grad.shape
    idx_tag = "long" if idx.dtype == np.int64 else "int"
    keys = np.zeros(n, np.uint32)
    vals = np.zeros(n, np.uint32)
    kbuf, vbuf = _buf(ctx, keys), _buf(ctx, vals)
    k2buf, v2buf = _buf(ctx, keys), _buf(ctx, vals)
    prg = build("embedding", [f"-DIDX_T={idx_tag}"])
    cl.Kernel(prg, "embedding_keys")(
        queue,
        (-(-n // 64) * 64,),
        (64,),
        _u64(n),
        _buf(ctx, idx),
        _u64(0),
        np.int64(num_weights),
        np.int64(padding_idx),
        kbuf,
        _u64(0),
        vbuf,
        _u64(0),
    )
    prg = build("embedding", [f"-DLWS={lws}"])
    chunk = -(-n // groups)
    zeros = np.zeros(groups, np.uint32)
    zbuf = _buf(ctx, zeros)
    for bit in range(int(num_weights).bit_length()):
        cl.Kernel(prg, "radix_count")(
            queue,
            (groups * lws,),
            (lws,),
            _u64(n),
            _u64(chunk),
            kbuf,
            _u64(0),
            np.uint32(bit),
            zbuf,
            _u64(0),
        )
        cl.Kernel(prg, "radix_split")(
            queue,
            (groups * lws,),
            (lws,),
            _u64(n),
            _u64(chunk),
            np.uint32(groups),
            zbuf,
            _u64(0),
            np.uint32(bit),
            kbuf,
            _u64(0),
            vbuf,
            _u64(0),
            k2buf,
            _u64(0),
            v2buf,
            _u64(0),
        )
        kbuf, k2buf = k2buf, kbuf
        vbuf, v2buf = v2buf, vbuf
    sorted_keys, sorted_vals = _read(queue, kbuf, keys), _read(queue, vbuf, vals)
    runs = np.zeros(num_weights, np.uint32)
    sbuf, ebuf = _buf(ctx, runs), _buf(ctx, runs)
    cl.Kernel(prg, "embedding_runs")(
        queue,
        (-(-n // 64) * 64,),
        (64,),
        _u64(n),
        np.uint32(num_weights),
        kbuf,
        _u64(0),
        sbuf,
        _u64(0),
        ebuf,
        _u64(0),
    )
    prg = build("embedding", ["-DT=float"])
    out = np.zeros((num_weights, dim), np.float32)
    obuf = _buf(ctx, out)
    total = out.size
    cl.Kernel(prg, "embedding_sum")(
        queue,
        (-(-total // 64) * 64,),
        (64,),
        _u64(total),
        _u64(dim),
        sbuf,
        _u64(0),
        ebuf,
        _u64(0),
        vbuf,
        _u64(0),
        _buf(ctx, grad),
        _u64(0),
        obuf,
        _u64(0),
        np.int32(1 if scale else 0),
    )
    return sorted_keys, sorted_vals, _read(queue, obuf, out)


@pytest.mark.parametrize(
    "n, num_weights, lws, groups",
    [(1, 1, 64, 1), (37, 5, 64, 3), (1000, 300, 64, 7), (5000, 70, 256, 4)],
)
@pytest.mark.parametrize("idx_dtype", [np.int64, np.int32])
def test_sort_runs_and_sums(ctx, queue, build, rng, n, num_weights, lws, groups, idx_dtype):
    idx = rng.integers(-2, num_weights + 2, n).astype(idx_dtype)  # some out of range
    padding_idx = num_weights // 2
    grad = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    keys, vals, out = embedding_backward(
        ctx, queue, build, idx, grad, num_weights, padding_idx, False, lws, groups
    )
    ignored = (idx < 0) | (idx >= num_weights) | (idx == padding_idx)
    expected_keys = np.where(ignored, num_weights, idx).astype(np.uint32)
    order = np.argsort(expected_keys, kind="stable")
    np.testing.assert_array_equal(keys, expected_keys[order])
    np.testing.assert_array_equal(vals, order)
    expected = np.zeros((num_weights, 3), np.float32)
    for j in range(n):  # the CPU's order: ascending positions, float32 adds
        if not ignored[j]:
            expected[idx[j]] += grad[j]
    np.testing.assert_array_equal(out, expected)


def test_scale_by_frequency(ctx, queue, build):
    idx = np.array([2, 0, 2, 2], np.int64)
    grad = np.array([[1.0], [2.0], [3.0], [6.0]], np.float32)
    _, _, out = embedding_backward(ctx, queue, build, idx, grad, 4, -1, True, 64, 1)
    np.testing.assert_allclose(out[:, 0], [2.0, 0.0, 10.0 / 3.0, 0.0], rtol=1e-6)
