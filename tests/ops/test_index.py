"""index_select (csrc/ops/Index.cpp, kernels/index.cl) and nn.Embedding's forward against CPU
torch: every dim, dtype and index dtype, repeated and empty indices, 0-dim tensors, strided
inputs, out=, the CPU's argument errors, and out-of-range indices raised at the next wait."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import (
    ALL_DTYPES,
    DEVICE,
    LARGE,
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
