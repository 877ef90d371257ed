"""The index family (csrc/ops/Index.cpp, Embedding.cpp, kernels/index.cl, embedding.cl) against
CPU torch: index_select and nn.Embedding's forward; advanced indexing x[idx] (index.Tensor) with
tensors, masks, None, slices and non-adjacent indices; index_put_ with and without accumulate
(duplicate indices summed in every dtype); take and put_ (accumulate too); masked_scatter_;
embedding_dense_backward (deterministic, padding_idx, scale_grad_by_freq) and the gradients of
indexing. Every dim, dtype and index dtype, repeated and empty indices, 0-dim tensors, strided
inputs, out=, the CPU's argument errors, and out-of-range indices raised at the next wait."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import (
    ALL_DTYPES,
    DEVICE,
    LARGE,
    TOLERANCES,
    assert_ocl_close,
    dtype_id,
    make_cpu,
    skip_unsupported,
)

BAD_INDEX = "index is out of range in self"


def _index(n_src, count, dtype=torch.int64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, n_src, (count,), generator=g, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32], ids=str)
def test_dims_and_index_dtypes(dim, index_dtype):
    x = make_cpu((5, 7, 3), torch.float32, seed=1)
    idx = _index(x.shape[dim], 11, index_dtype, seed=2)  # repeats, any order
    assert_ocl_close(
        x.to(DEVICE).index_select(dim, idx.to(DEVICE)), x.index_select(dim, idx), exact=True
    )


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_dtypes_bit_exact(dtype):
    skip_unsupported(dtype)
    x = make_cpu((6, 4), dtype, seed=3)
    if dtype.is_floating_point:
        x[0] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0])
    idx = torch.tensor([0, 5, 0, 2])
    got = x.to(DEVICE).index_select(0, idx.to(DEVICE)).cpu()
    expected = x.index_select(0, idx)
    assert got.dtype == expected.dtype
    assert torch.equal(got.view(torch.uint8), expected.view(torch.uint8))


def test_shapes_that_break_kernels():
    x = make_cpu((4, 3), torch.float32, seed=4)
    cases = [
        (x, 1, torch.tensor([], dtype=torch.int64)),  # empty index
        (make_cpu((0, 3), torch.float32), 1, torch.tensor([2, 0])),  # empty self
        (x, 0, torch.tensor(3)),  # 0-dim index
        (make_cpu((), torch.float32, seed=5), 0, torch.tensor([0])),  # 0-dim self
        (make_cpu((), torch.float32, seed=5), 0, torch.tensor(0)),
        (x.t(), 1, torch.tensor([3, 1])),  # non-contiguous self
        (x, 0, torch.tensor([3, 9, 1, 9, 0, 9])[::2]),  # strided index
        (make_cpu((1,), torch.float32, seed=6), 0, torch.tensor([0, 0, 0])),
    ]
    for src, dim, idx in cases:
        assert_ocl_close(
            src.to(DEVICE).index_select(dim, idx.to(DEVICE)), src.index_select(dim, idx), exact=True
        )


@pytest.mark.slow
def test_large():
    x = make_cpu((LARGE,), torch.float32, seed=7)
    idx = _index(LARGE, 3000, seed=8)
    assert_ocl_close(
        x.to(DEVICE).index_select(0, idx.to(DEVICE)), x.index_select(0, idx), exact=True
    )
    w = make_cpu((1000, 257), torch.float32, seed=9)
    idx = _index(1000, 4099, seed=10)
    assert_ocl_close(
        w.to(DEVICE).index_select(0, idx.to(DEVICE)), w.index_select(0, idx), exact=True
    )


def test_out():
    x = make_cpu((5, 6), torch.float32, seed=11)
    idx = torch.tensor([4, 1])
    out = torch.empty(1, device=DEVICE)
    r = torch.index_select(x.to(DEVICE), 1, idx.to(DEVICE), out=out)
    assert r is out
    assert_ocl_close(out, x.index_select(1, idx), exact=True)


def test_argument_errors_like_cpu():
    x = make_cpu((4, 3), torch.float32).to(DEVICE)
    with pytest.raises(IndexError, match="supposed to be a vector"):
        x.index_select(0, torch.tensor([[1]]).to(DEVICE))
    with pytest.raises(RuntimeError, match="int32 or int64"):
        x.index_select(0, torch.tensor([1.0]).to(DEVICE))
    with pytest.raises(IndexError):
        x.index_select(2, torch.tensor([0]).to(DEVICE))


@pytest.mark.parametrize("bad", [4, -1, 100])
def test_out_of_range_index_raises_at_the_next_wait(bad):
    x = make_cpu((4, 3), torch.float32, seed=12)
    r = x.to(DEVICE).index_select(0, torch.tensor([0, bad, 1]).to(DEVICE))
    with pytest.raises(RuntimeError, match=BAD_INDEX):
        r.cpu()
    idx = torch.tensor([3, 0])  # the device stays usable
    assert_ocl_close(
        x.to(DEVICE).index_select(0, idx.to(DEVICE)), x.index_select(0, idx), exact=True
    )


@pytest.mark.parametrize("padding_idx", [None, 0])
def test_embedding_forward(padding_idx):
    w = make_cpu((10, 4), torch.float32, seed=13)
    ids = torch.tensor([[1, 2, 0], [9, 0, 9]])
    got = F.embedding(ids.to(DEVICE), w.to(DEVICE), padding_idx=padding_idx)
    assert_ocl_close(got, F.embedding(ids, w, padding_idx=padding_idx), exact=True)


# --------------------------------------------------------------------------------------------
# Helpers for the ops below


def _dev(t):
    return t.to(DEVICE) if isinstance(t, torch.Tensor) else t


def _bits_equal(actual, expected):
    """Same dtype, shape and bits (NaN payloads and -0.0 included): ops that move elements."""
    got = actual.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert torch.equal(got.reshape(-1).view(torch.uint8), expected.reshape(-1).view(torch.uint8))


def _special(x):
    """x (float) with NaN, infinities and -0.0 among its values."""
    if x.dtype.is_floating_point and x.numel() >= 4:
        flat = x.view(-1)
        flat[:4] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0])
    return x


def _close_to_sum(actual, expected64, dtype):
    """An accumulated result against a float64 CPU reference (integers exactly)."""
    if dtype.is_floating_point:
        rtol, atol = TOLERANCES[dtype]
        torch.testing.assert_close(
            actual.cpu().double(), expected64.to(dtype).double(), rtol=rtol * 4, atol=atol * 4
        )
    else:
        torch.testing.assert_close(actual.cpu(), expected64.to(dtype), rtol=0, atol=0)


# --------------------------------------------------------------------------------------------
# x[idx]: index.Tensor

X = make_cpu((5, 6, 7), torch.float32, seed=20)
I5 = torch.tensor([4, 0, -1, 2, 0])
I6 = torch.tensor([[1, 5], [-6, 0]])


INDEXINGS = {
    "first": lambda x: x[I5],
    "middle": lambda x: x[:, I6[0]],
    "last": lambda x: x[..., torch.tensor([6, 0, 3])],
    "two_adjacent": lambda x: x[I5[:2], I6[0]],
    "non_adjacent": lambda x: x[I5[:2], :, torch.tensor([1, 2])],  # transposed to the front
    "broadcast": lambda x: x[I5.view(5, 1), I6.view(1, 4)],
    "all_three": lambda x: x[I5[:2], I6[0], torch.tensor([[6], [0]])],
    "none_and_slice": lambda x: x[None, 1:4, I6, ::2],
    "ellipsis_none": lambda x: x[..., None, torch.tensor([3])],
    "int32": lambda x: x[I5.int(), :, torch.tensor([1, 2, 3, 4, 5]).int()],
    "mask_dim": lambda x: x[:, torch.tensor([True, False, True, True, False, True])],
    "mask_2d": lambda x: x[(x[:, :, 0] > 0)],
    "mask_all": lambda x: x[x > 0],
    "mask_and_index": lambda x: x[torch.tensor([True, False, True, False, True]), :, I5[:3]],
    "empty": lambda x: x[torch.tensor([], dtype=torch.int64)],
    "scalar_index": lambda x: x[torch.tensor(3)],
    "transposed": lambda x: x.transpose(0, 2)[torch.tensor([6, 1])],
    "strided_index": lambda x: x[torch.tensor([4, 9, 0, 9, 3, 9])[::2]],
}


@pytest.mark.parametrize("case", list(INDEXINGS), ids=str)
def test_advanced_indexing_patterns(case):
    fn = INDEXINGS[case]
    x = _special(X.clone())
    idx_on_dev = fn(_dev_indices(x))
    _bits_equal(idx_on_dev, fn(x))


def _dev_indices(x):
    """x on the device, whose indexing converts the CPU index tensors (also a supported form)."""
    return x.to(DEVICE)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_indexing_dtypes_bit_exact(dtype):
    skip_unsupported(dtype)
    x = _special(make_cpu((6, 5), dtype, seed=21))
    idx = torch.tensor([5, 0, -1, 0])
    _bits_equal(x.to(DEVICE)[idx.to(DEVICE)], x[idx])
    cols = torch.tensor([4, 0, 1, 3])
    _bits_equal(x.to(DEVICE)[idx.to(DEVICE), cols.to(DEVICE)], x[idx, cols])
    mask = make_cpu((6,), torch.bool, seed=22)
    _bits_equal(x.to(DEVICE)[mask.to(DEVICE)], x[mask])


def test_indexing_out_and_shapes():
    x = make_cpu((4, 3), torch.float32, seed=23)
    idx = torch.tensor([3, 1])
    out = torch.empty(7, device=DEVICE)  # resized, as the CPU does
    r = torch.ops.aten.index.Tensor_out(x.to(DEVICE), [idx.to(DEVICE)], out=out)
    assert r is out
    _bits_equal(out, x[idx])
    out_t = torch.empty(3, 2, device=DEVICE).t()  # a strided out keeps its strides
    torch.ops.aten.index.Tensor_out(x.to(DEVICE), [idx.to(DEVICE)], out=out_t)
    _bits_equal(out_t, x[idx])
    empty_self = make_cpu((0, 3), torch.float32)
    _bits_equal(empty_self.to(DEVICE)[:, torch.tensor([2, 0]).to(DEVICE)], empty_self[:, [2, 0]])
    zero_dim = make_cpu((), torch.float32, seed=24)
    mask = torch.tensor(True)
    _bits_equal(zero_dim.to(DEVICE)[mask.to(DEVICE)], zero_dim[mask])


def test_indexing_errors_like_cpu():
    x = make_cpu((4, 3), torch.float32)
    cases = [
        lambda t, d: t[torch.tensor([1.0]).to(d)],  # float indices
        lambda t, d: t[torch.tensor([0]).to(d), torch.tensor([0, 1, 2]).to(d)[:2].view(2, 1), 0],
        lambda t, d: t[torch.tensor([True, False]).to(d)],  # mask shape
        lambda t, d: torch.ops.aten.index.Tensor_out(
            t, [torch.tensor([1]).to(d)], out=torch.empty(0, dtype=torch.float64, device=d)
        ),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_exc:
            fn(x, "cpu")
        with pytest.raises(type(cpu_exc.value)):
            fn(x.to(DEVICE), DEVICE)


@pytest.mark.parametrize("bad", [4, -5, 100])
def test_indexing_out_of_range_raises_at_the_next_wait(bad):
    x = make_cpu((4, 3), torch.float32, seed=25)
    r = x.to(DEVICE)[torch.tensor([0, bad]).to(DEVICE)]
    with pytest.raises(RuntimeError, match="out of bounds"):
        r.cpu()
    _bits_equal(x.to(DEVICE)[torch.tensor([3, -4]).to(DEVICE)], x[[3, -4]])


@pytest.mark.slow
def test_indexing_large():
    x = make_cpu((1024, 1025), torch.float32, seed=26)
    idx = torch.randint(-1024, 1024, (3001,), generator=torch.Generator().manual_seed(27))
    _bits_equal(x.to(DEVICE)[idx.to(DEVICE)], x[idx])
    _bits_equal(x.to(DEVICE)[:, idx.to(DEVICE)], x[:, idx])


# --------------------------------------------------------------------------------------------
# index_put_ (x[idx] = v), with and without accumulate


def test_index_put_patterns():
    # Without accumulate, duplicate indices keep an unspecified one of their values on every
    # device (CUDA too), so the targets here are distinct.
    x = make_cpu((5, 6, 7), torch.float32, seed=30)
    rows = torch.tensor([4, 0, -3])
    cases = [
        (lambda t, d: t.index_put_((rows.to(d),), torch.tensor(2.5).to(d))),
        (lambda t, d: t.index_put_((rows.to(d),), make_cpu((3, 6, 7), torch.float32).to(d))),
        (
            lambda t, d: t.index_put_(
                (I5[:2].to(d), I6[0].to(d)), make_cpu((7,), torch.float32).to(d)
            )
        ),
        (
            lambda t, d: t.__setitem__(
                (I5[:2].to(d), slice(None), torch.tensor([1, 2]).to(d)),
                make_cpu((2, 6), torch.float32).to(d),
            )
        ),  # non-adjacent
        (lambda t, d: t.__setitem__((slice(None), torch.tensor([5, 0]).to(d)), -1.0)),
        (lambda t, d: t.__setitem__(t > 1, 0.5)),  # masked_fill path (CPU scalar value)
        (lambda t, d: t.__setitem__(t[:, :, 0] > 1, make_cpu((7,), torch.float32).to(d))),
        (lambda t, d: t.index_put_((torch.tensor([]).long().to(d),), torch.tensor(1.0).to(d))),
    ]
    for fn in cases:
        cpu = x.clone()
        dev = x.to(DEVICE)
        fn(cpu, "cpu")
        fn(dev, DEVICE)
        _bits_equal(dev, cpu)


_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _word(t):
    """t's elements as integers of the same width (bitwise comparisons, NaN included)."""
    return t.view(_BITS[t.element_size()])


# Every op that copies values to indexed positions: (name, fn(x, rows, v)) where row rows[k] of x
# receives row k of v. Without accumulate, repeated targets keep an unspecified one of their
# values (CUDA too); the kernel stores them with atomic exchanges, so there is no data race
# (Oclgrind checks that) and no torn or mixed value - checked here in every element width.
_COPY_OPS = {
    "index_put_": lambda x, rows, v: x.index_put_((rows,), v),
    "setitem": lambda x, rows, v: x.__setitem__(rows, v),
    "index_copy_": lambda x, rows, v: x.index_copy_(0, rows, v),
    "scatter_": lambda x, rows, v: x.scatter_(0, rows[:, None].expand(v.shape).contiguous(), v),
    "put_": lambda x, rows, v: x.put_(
        (rows[:, None] * x.shape[1] + torch.arange(x.shape[1], device=rows.device)).reshape(-1),
        v.reshape(-1),
    ),
}


@pytest.mark.parametrize("op", list(_COPY_OPS))
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_repeated_targets_get_one_of_their_values(op, dtype):
    skip_unsupported(dtype)
    x = make_cpu((9, 5), dtype, seed=33)
    rows = torch.tensor([1, 4, 1, 1, 0, 4, 7, 7, 8, 1, 7])  # 1 four times, 4 and 7 twice or more
    v = make_cpu((rows.numel(), 5), dtype, seed=34)
    if dtype.is_floating_point:
        v[0, 0], v[2, 1], v[5, 2] = float("nan"), float("inf"), -0.0
    dev = x.to(DEVICE)
    _COPY_OPS[op](dev, rows.to(DEVICE), v.to(DEVICE))
    got = _word(dev.cpu())
    xw, vw = _word(x), _word(v)
    for r in range(x.shape[0]):
        ks = (rows == r).nonzero().flatten().tolist()
        for c in range(x.shape[1]):
            if not ks:  # untouched, also the neighbours that share a 32-bit word
                assert got[r, c] == xw[r, c], (r, c)
            else:
                assert got[r, c].item() in {vw[k, c].item() for k in ks}, (r, c)


def test_repeated_targets_many_writers_sub_word():
    # 1- and 2-byte elements: thousands of writers per element over neighbours in one word.
    for dtype in (torch.uint8, torch.int16, torch.float16, torch.bool):
        x = make_cpu((8,), dtype, seed=35)
        idx = torch.arange(0, 8, 2).repeat(500)  # even elements only; odd ones must keep x
        v = make_cpu((idx.numel(),), dtype, seed=36)
        got = _word(x.to(DEVICE).index_put_((idx.to(DEVICE),), v.to(DEVICE)).cpu())
        xw, vw = _word(x), _word(v)
        for e in range(8):
            if e % 2:
                assert got[e] == xw[e]
            else:
                assert got[e].item() in set(vw[idx == e].tolist())


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_index_put_accumulate_sums_every_duplicate(dtype):
    skip_unsupported(dtype)
    x = make_cpu((6, 5), dtype, seed=31)
    idx = torch.tensor([1, 4, 1, 1, -2, 0, 4])  # 1 three times, 4 twice (-2 is 4)
    v = make_cpu((7, 5), dtype, seed=32)
    got = x.to(DEVICE).index_put_((idx.to(DEVICE),), v.to(DEVICE), accumulate=True)
    if dtype == torch.bool:
        expected = x.index_put((idx,), v, accumulate=True)
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0)
        return
    wide = torch.float64 if dtype.is_floating_point else torch.int64
    expected = x.to(wide).index_put((idx,), v.to(wide), accumulate=True)
    _close_to_sum(got, expected, dtype)


def test_index_put_accumulate_many_duplicates_sub_word():
    # int8/half elements share 32-bit words with their neighbours: all updates must land.
    for dtype in (torch.int8, torch.float16, torch.bfloat16, torch.int16):
        x = torch.zeros(7, dtype=dtype)
        idx = torch.arange(7).repeat(300)
        v = torch.ones(idx.numel(), dtype=dtype)
        got = x.to(DEVICE).index_put_((idx.to(DEVICE),), v.to(DEVICE), accumulate=True).cpu()
        expected = x.index_put((idx,), v, accumulate=True)  # bfloat16 stops at 256, as here
        assert expected[0] >= 256
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_index_put_broadcast_and_2d_accumulate():
    x = make_cpu((4, 5), torch.float32, seed=33)
    rows = torch.tensor([[0, 3], [3, 3]])
    cols = torch.tensor([[1], [1]])
    v = make_cpu((2, 2), torch.float32, seed=34)
    got = x.to(DEVICE).index_put_((rows.to(DEVICE), cols.to(DEVICE)), v.to(DEVICE), accumulate=True)
    expected = x.double().index_put_((rows, cols), v.double(), accumulate=True)
    _close_to_sum(got, expected, torch.float32)


def test_index_put_deterministic_mode():
    # ATen takes another route (index_put_with_sort_stub) for deterministic algorithms. Integer
    # indices may repeat: under the flag the copies run in order (ops/IndexOrdered.cpp), the
    # last value at a repeated index wins as on the CPU. put_ without accumulate refuses by its
    # own name, as on the CPU (ATen's check). Boolean masks name every element once and run.
    # (tests/ops/test_determinism.py covers the accumulating ops.)
    x = make_cpu((6, 3), torch.float32, seed=35)
    v = make_cpu((4, 3), torch.float32, seed=36)
    idx = torch.tensor([5, 0, 2, 0])
    mask = torch.tensor([True, False, True, False, False, True])
    with torch.ocl.fallback_mode("error"):
        torch.use_deterministic_algorithms(True)
        try:
            got = x.to(DEVICE).index_put_((idx.to(DEVICE),), v.to(DEVICE))
            _bits_equal(got, x.index_put((idx,), v))
            for copy in (
                lambda t, d: t.index_copy_(0, idx.to(d), v.to(d)),
                lambda t, d: t.scatter_(0, idx.view(4, 1).expand(4, 3).to(d), v.to(d)),
            ):
                _bits_equal(copy(x.to(DEVICE), DEVICE), copy(x.clone(), "cpu"))
            with pytest.raises(RuntimeError, match="^put_ does not have a deterministic"):
                x.to(DEVICE).put_(idx.to(DEVICE), v[0, :4].to(DEVICE))
            got = x.to(DEVICE).index_put_((mask.to(DEVICE),), v[:3].to(DEVICE))
            _bits_equal(got, x.index_put((mask,), v[:3]))
            got = x.to(DEVICE).masked_fill_(mask.view(6, 1).to(DEVICE), 2.0)
            _bits_equal(got, x.masked_fill(mask.view(6, 1), 2.0))
        finally:
            torch.use_deterministic_algorithms(False)


def test_index_put_errors_like_cpu():
    x = make_cpu((4, 3), torch.float32)
    cases = [
        lambda t, d: t.index_put_((torch.tensor([0, 1]).to(d),), torch.ones(3, 3, device=d)),
        lambda t, d: t.index_put_(
            (torch.tensor([0]).to(d),), torch.ones(3, dtype=torch.int64, device=d)
        ),
        lambda t, d: t.index_put_((torch.tensor([0]).to(d),) * 3, torch.tensor(1.0, device=d)),
        lambda t, d: t.index_put_(
            (torch.tensor([0, 1]).to(d),), torch.ones(3, 3, device=d), accumulate=True
        ),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_exc:
            fn(x.clone(), "cpu")
        with pytest.raises(type(cpu_exc.value)):
            fn(x.to(DEVICE), DEVICE)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_out_of_range_raises_at_the_next_wait(accumulate):
    x = torch.zeros(4, 3, device=DEVICE)
    x.index_put_((torch.tensor([1, 7]).to(DEVICE),), torch.ones(3, device=DEVICE), accumulate)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.cpu()


# --------------------------------------------------------------------------------------------
# take and put_


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_take_dtypes(dtype):
    skip_unsupported(dtype)
    x = _special(make_cpu((4, 5), dtype, seed=40))
    idx = torch.tensor([[19, 0], [-1, -20], [7, 7]])
    _bits_equal(x.to(DEVICE).take(idx.to(DEVICE)), x.take(idx))
    _bits_equal(x.t().to(DEVICE).take(idx.to(DEVICE)), x.t().take(idx))  # non-contiguous self
    xt_dev = x.to(DEVICE).t()
    _bits_equal(xt_dev.take(idx.to(DEVICE)), x.t().take(idx))


def test_take_shapes_and_out():
    x = make_cpu((3, 4), torch.float32, seed=41)
    _bits_equal(
        x.to(DEVICE).take(torch.tensor([], dtype=torch.int64).to(DEVICE)),
        x.take(torch.tensor([], dtype=torch.int64)),
    )
    _bits_equal(x.to(DEVICE).take(torch.tensor(5).to(DEVICE)), x.take(torch.tensor(5)))
    out = torch.empty(0, device=DEVICE)
    torch.take(x.to(DEVICE), torch.tensor([1, 2]).to(DEVICE), out=out)
    _bits_equal(out, x.take(torch.tensor([1, 2])))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_put_dtypes(dtype):
    skip_unsupported(dtype)
    x = make_cpu((4, 5), dtype, seed=42)
    idx = torch.tensor([[19, 0], [-2, -19]])  # distinct targets (else any one of them wins)
    src = make_cpu((2, 2), dtype, seed=43)
    _bits_equal(x.to(DEVICE).put_(idx.to(DEVICE), src.to(DEVICE)), x.clone().put_(idx, src))
    dev_t = x.to(DEVICE).t()  # non-contiguous self is written in place
    cpu_t = x.clone().t()
    dev_t.put_(idx.to(DEVICE), src.to(DEVICE))
    cpu_t.put_(idx, src)
    _bits_equal(dev_t, cpu_t)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_put_accumulate_duplicates(dtype):
    skip_unsupported(dtype)
    x = make_cpu((3, 4), dtype, seed=44)
    idx = torch.tensor([0, 11, 0, -1, 5, 0])
    src = make_cpu((6,), dtype, seed=45)
    got = x.to(DEVICE).put_(idx.to(DEVICE), src.to(DEVICE), accumulate=True)
    if dtype == torch.bool:
        torch.testing.assert_close(got.cpu(), x.clone().put_(idx, src, accumulate=True))
        return
    wide = torch.float64 if dtype.is_floating_point else torch.int64
    _close_to_sum(got, x.to(wide).put_(idx, src.to(wide), accumulate=True), dtype)


@pytest.mark.parametrize("op", ["take", "put"])
def test_take_put_out_of_range_raises_at_the_next_wait(op):
    x = make_cpu((2, 3), torch.float32, seed=46).to(DEVICE)
    idx = torch.tensor([0, 6]).to(DEVICE)
    r = x.take(idx) if op == "take" else x.put_(idx, torch.ones(2, device=DEVICE))
    with pytest.raises(RuntimeError, match="out of range"):
        r.cpu()
    with pytest.raises(IndexError, match="out of range"):  # the CPU, for comparison
        x.cpu().take(torch.tensor([-7]))


# --------------------------------------------------------------------------------------------
# masked_scatter_


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_masked_scatter_dtypes(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 7), dtype, seed=50)
    mask = make_cpu((5, 7), torch.bool, seed=51)
    src = _special(make_cpu((40,), dtype, seed=52))
    _bits_equal(
        x.to(DEVICE).masked_scatter_(mask.to(DEVICE), src.to(DEVICE)),
        x.clone().masked_scatter_(mask, src),
    )


def test_masked_scatter_shapes():
    x = make_cpu((4, 3, 5), torch.float32, seed=53)
    src = make_cpu((2, 40), torch.float32, seed=54)  # any shape, only its first elements count
    cases = [
        make_cpu((3, 5), torch.bool, seed=55),  # broadcast over the first dim
        make_cpu((4, 1, 5), torch.bool, seed=56),
        torch.zeros(4, 3, 5, dtype=torch.bool),
        torch.ones(4, 3, 5, dtype=torch.bool),
    ]
    for mask in cases:
        _bits_equal(
            x.to(DEVICE).masked_scatter(mask.to(DEVICE), src.to(DEVICE)),
            x.masked_scatter(mask, src),
        )
    mask = cases[0]
    dev = x.to(DEVICE).transpose(0, 2)  # non-contiguous self, written in place
    cpu = x.clone().transpose(0, 2)
    dev.masked_scatter_(mask.t().to(DEVICE)[..., None], src.to(DEVICE))
    cpu.masked_scatter_(mask.t()[..., None], src)
    _bits_equal(dev, cpu)
    empty = make_cpu((0, 3), torch.float32)
    _bits_equal(
        empty.to(DEVICE).masked_scatter(
            torch.ones(3, dtype=torch.bool, device=DEVICE), src.to(DEVICE)
        ),
        empty.masked_scatter(torch.ones(3, dtype=torch.bool), src),
    )


@pytest.mark.slow
def test_masked_scatter_large():
    x = make_cpu((LARGE,), torch.float32, seed=57)
    mask = make_cpu((LARGE,), torch.bool, seed=58)
    src = make_cpu((LARGE,), torch.float32, seed=59)
    _bits_equal(
        x.to(DEVICE).masked_scatter(mask.to(DEVICE), src.to(DEVICE)), x.masked_scatter(mask, src)
    )


def test_masked_scatter_errors_like_cpu():
    x = make_cpu((2, 3), torch.float32)
    cases = [
        lambda t, d: t.masked_scatter_(
            torch.ones(3, dtype=torch.uint8, device=d), torch.ones(6, device=d)
        ),
        lambda t, d: t.masked_scatter_(
            torch.ones(3, dtype=torch.bool, device=d), torch.ones(6, dtype=torch.float64, device=d)
        ),
        lambda t, d: t.masked_scatter_(
            torch.ones(4, dtype=torch.bool, device=d), torch.ones(8, device=d)
        ),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_exc:
            fn(x.clone(), "cpu")
        with pytest.raises(type(cpu_exc.value)):
            fn(x.to(DEVICE), DEVICE)


def test_masked_scatter_short_source_raises_at_the_next_wait():
    x = torch.zeros(2, 3, device=DEVICE)
    x.masked_scatter_(
        torch.ones(2, 3, dtype=torch.bool, device=DEVICE), torch.ones(5, device=DEVICE)
    )
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        x.cpu()


# --------------------------------------------------------------------------------------------
# embedding_dense_backward and the gradients of indexing


def _embedding_backward(grad, ids, n, padding_idx=-1, scale=False):
    return torch.ops.aten.embedding_dense_backward(grad, ids, n, padding_idx, scale)


@pytest.mark.parametrize("padding_idx", [-1, 3])
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32], ids=str)
def test_embedding_backward(padding_idx, scale, index_dtype):
    g = torch.Generator().manual_seed(60)
    ids = torch.randint(0, 11, (4, 9), generator=g).to(index_dtype)
    ids[0, :5] = 3  # a long run, and the padding row when padding_idx == 3
    grad = make_cpu((4, 9, 6), torch.float32, seed=61)
    got = _embedding_backward(grad.to(DEVICE), ids.to(DEVICE), 13, padding_idx, scale)
    expected = _embedding_backward(grad, ids, 13, padding_idx, scale)
    if scale:
        assert_ocl_close(got, expected)
    else:
        # Summed in the CPU's order (ascending positions): bit-exact in float32.
        assert_ocl_close(got, expected, exact=True)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=dtype_id)
def test_embedding_backward_dtypes(dtype):
    skip_unsupported(dtype)
    ids = torch.tensor([2, 0, 2, 5, 2, 0])
    grad = make_cpu((6, 4), dtype, seed=62)
    got = _embedding_backward(grad.to(DEVICE), ids.to(DEVICE), 7)
    expected = _embedding_backward(grad.double(), ids, 7).to(dtype)
    assert_ocl_close(got, expected)


def test_embedding_backward_deterministic_and_edges():
    g = torch.Generator().manual_seed(63)
    ids = torch.randint(0, 50, (3000,), generator=g)
    grad = make_cpu((3000, 33), torch.float32, seed=64).to(DEVICE)
    first = _embedding_backward(grad, ids.to(DEVICE), 50).cpu()
    again = _embedding_backward(grad, ids.to(DEVICE), 50).cpu()
    assert torch.equal(first, again)
    assert torch.equal(first, _embedding_backward(grad.cpu(), ids, 50))
    # no indices, and indices outside [0, num_weights), which the CPU ignores
    empty = _embedding_backward(
        torch.ones(0, 4, device=DEVICE), torch.tensor([], dtype=torch.int64, device=DEVICE), 3
    )
    assert torch.equal(empty.cpu(), torch.zeros(3, 4))
    ids = torch.tensor([1, 5, -2, 1])
    grad = make_cpu((4, 2), torch.float32, seed=65)
    got = _embedding_backward(grad.to(DEVICE), ids.to(DEVICE), 3)
    expected = torch.zeros(3, 2)
    expected[1] = grad[0] + grad[3]
    assert_ocl_close(got, expected, exact=True)


@pytest.mark.slow
def test_embedding_backward_large():
    g = torch.Generator().manual_seed(66)
    ids = torch.randint(0, 30000, (8192,), generator=g)
    grad = make_cpu((8192, 64), torch.float32, seed=67)
    got = _embedding_backward(grad.to(DEVICE), ids.to(DEVICE), 30000)
    assert_ocl_close(got, _embedding_backward(grad, ids, 30000), exact=True)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_module_training_step(padding_idx):
    torch.manual_seed(68)
    emb = torch.nn.Embedding(10, 5, padding_idx=padding_idx)
    ids = torch.tensor([[1, 2, 2], [9, 1, 2]])
    emb_dev = torch.nn.Embedding(10, 5, padding_idx=padding_idx).to(DEVICE)
    emb_dev.load_state_dict(emb.state_dict())
    w = make_cpu((2, 3, 5), torch.float32, seed=71)
    (emb(ids) * w).sum().backward()
    (emb_dev(ids.to(DEVICE)) * w.to(DEVICE)).sum().backward()
    assert_ocl_close(emb_dev.weight.grad, emb.weight.grad)


def test_indexing_gradients():
    x = make_cpu((5, 4), torch.float32, seed=69)
    idx = torch.tensor([3, 0, 3, -1])
    fns = [
        lambda t, d: t[idx.to(d)] * 2,  # backward: index_put_ with accumulate
        lambda t, d: t[idx.to(d), 1:],
        lambda t, d: t.take(idx.to(d) + 4),  # backward: put_ with accumulate
        lambda t, d: t.masked_scatter(t > 0, t.flatten() * -3),
        lambda t, d: t.index_put((idx.to(d),), t[:4] * 3, accumulate=True),
    ]
    for fn in fns:
        grads = []
        for d in ("cpu", DEVICE):
            t = x.clone().to(d).requires_grad_()
            out = fn(t, d)
            w = make_cpu(tuple(out.shape), torch.float32, seed=70).to(d)
            (out * w).sum().backward()
            grads.append(t.grad)
        assert_ocl_close(grads[1], grads[0])


# --------------------------------------------------------------------------------------------
# embedding_renorm_ (nn.Embedding's max_norm)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 0.0, 3.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=dtype_id)
def test_embedding_renorm(norm_type, dtype):
    skip_unsupported(dtype)
    w = make_cpu((10, 7), dtype, seed=80) * 2
    w[4, :3] = 0  # a row with zeros (the 0-"norm" counts non-zeros)
    ids = torch.tensor([[1, 3, 1], [9, 4, 3]], dtype=torch.int64)  # duplicates: once per row
    dev = w.to(DEVICE)
    torch.embedding_renorm_(dev, ids.to(DEVICE), 1.5, norm_type)
    expected = w.double()
    torch.embedding_renorm_(expected, ids, 1.5, norm_type)
    assert_ocl_close(dev, expected.to(dtype))


def test_embedding_renorm_layouts_module_and_errors():
    w = make_cpu((7, 10), torch.float32, seed=81) * 3
    dev = w.to(DEVICE).t()  # a non-contiguous weight, rows strided
    cpu = w.clone().t()
    ids = torch.tensor([2, 5, 9], dtype=torch.int32)
    torch.embedding_renorm_(dev, ids.to(DEVICE), 1.0, 2.0)
    torch.embedding_renorm_(cpu, ids, 1.0, 2.0)
    assert_ocl_close(dev, cpu)
    torch.manual_seed(82)
    emb = torch.nn.Embedding(10, 4, max_norm=1.0)
    emb_dev = torch.nn.Embedding(10, 4, max_norm=1.0).to(DEVICE)
    emb_dev.load_state_dict(emb.state_dict())
    x = torch.tensor([[1, 2, 2, 7]])
    assert_ocl_close(emb_dev(x.to(DEVICE)), emb(x))
    assert_ocl_close(emb_dev.weight.detach(), emb.weight.detach())
    cases = [
        lambda t, d: torch.embedding_renorm_(t[0], torch.tensor([1], device=d), 1.0, 2.0),
        lambda t, d: torch.embedding_renorm_(t.long(), torch.tensor([1], device=d), 1.0, 2.0),
        lambda t, d: torch.embedding_renorm_(t, torch.tensor([1.0], device=d), 1.0, 2.0),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_exc:
            fn(w.clone(), "cpu")
        with pytest.raises(type(cpu_exc.value)):
            fn(w.to(DEVICE), DEVICE)
    dev = w.to(DEVICE)
    torch.embedding_renorm_(dev, torch.tensor([1, 70], device=DEVICE), 1.0, 2.0)
    with pytest.raises(RuntimeError, match="out of range"):
        dev.cpu()
