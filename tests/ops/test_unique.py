"""unique (dim=None: sorted values, inverse, counts) and unique_consecutive on the ocl device,
against PyTorch on the CPU. The number of unique values is the one thing read back to the host
(the result's size depends on the data); nothing else waits."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

NAN = float("nan")


def inputs(dtype):
    cases = [
        make_cpu((0,), dtype),
        make_cpu((), dtype),
        make_cpu((1,), dtype),
        make_cpu((7, 13), dtype, low=-3, high=4, integral=True),
        make_cpu((20, 3), dtype, low=0, high=2, integral=True).t(),  # non-contiguous
        make_cpu((3000,), dtype, low=-50, high=50, integral=True),  # sorted by merging
    ]
    if dtype.is_floating_point:
        cases.append(torch.tensor([3.0, NAN, 1.0, -0.0, 0.0, NAN, 1.0]).to(dtype))
    return cases


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float16, torch.float64, torch.int64, torch.int32, torch.uint8,
     torch.bool],
    ids=dtype_id,
)  # fmt: skip
def test_unique(dtype):
    skip_unsupported(dtype)
    for x in inputs(dtype):
        xo = x.to(DEVICE)
        for inverse in (False, True):
            for counts in (False, True):
                got = torch.unique(xo, return_inverse=inverse, return_counts=counts)
                want = torch.unique(x, return_inverse=inverse, return_counts=counts)
                got = got if isinstance(got, tuple) else (got,)
                want = want if isinstance(want, tuple) else (want,)
                assert len(got) == len(want)
                for g, w in zip(got, want, strict=True):
                    assert_ocl_close(g, w, exact=True)


def test_unique_unsorted_and_internal_overloads():
    """sorted=False gives sorted values (as on CUDA; the CPU's order is unspecified)."""
    x = make_cpu((50,), torch.int64, low=0, high=9)
    xo = x.to(DEVICE)
    assert_ocl_close(torch.unique(xo, sorted=False), torch.unique(x, sorted=True))
    for g, w in zip(torch._unique2(xo, True, True, True), torch._unique2(x, True, True, True),
                    strict=True):  # fmt: skip
        assert_ocl_close(g, w)
    for g, w in zip(torch._unique(xo, True, True), torch._unique(x, True, True), strict=True):
        assert_ocl_close(g, w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=dtype_id)
def test_unique_consecutive(dtype):
    for x in inputs(dtype):
        xo = x.to(DEVICE)
        for inverse in (False, True):
            for counts in (False, True):
                got = torch.ops.aten.unique_consecutive(xo, inverse, counts)
                want = torch.ops.aten.unique_consecutive(x, inverse, counts)
                for g, w in zip(got, want, strict=True):
                    assert_ocl_close(g, w, exact=True)
        flat = torch.unique_consecutive(xo.reshape(-1), return_counts=True, dim=0)
        for g, w in zip(flat, torch.unique_consecutive(x.reshape(-1), return_counts=True, dim=0),
                        strict=True):  # fmt: skip
            assert_ocl_close(g, w, exact=True)


def test_unique_consecutive_along_a_dim_is_not_native():
    """Along a dimension of a 2-D tensor (whole slices compared) it is unique_dim_consecutive,
    which has no native kernel: the CPU fallback, which tests/ops sets to raise."""
    x = make_cpu((4, 3), torch.int64, low=0, high=2).to(DEVICE)
    with pytest.raises(NotImplementedError, match="unique_dim_consecutive"):
        torch.unique_consecutive(x, dim=0)


def test_one_host_wait():
    x = make_cpu((5000,), torch.int64, low=0, high=100).to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.unique(x, return_inverse=True, return_counts=True)
    assert torch.ocl.host_wait_count() == before + 1
