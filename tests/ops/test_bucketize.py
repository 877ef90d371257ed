"""searchsorted and bucketize on the ocl device, against PyTorch on the CPU: left and right
(right= and side=), a sorter, N-D boundaries, scalar values, int32 output, NaN and infinities,
mixed dtypes (promoted as on the CPU), out=, and the CPU's errors (a sorter entry out of range is
found by the kernel and raised at the next wait)."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")


def sorted_boundaries(shape, dtype, seed=0):
    """Sorted along the last dim, with repeated values."""
    return torch.sort(make_cpu(shape, dtype, low=-5, high=6, integral=True, seed=seed), -1)[0]


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
     torch.uint8],
    ids=dtype_id,
)  # fmt: skip
def test_searchsorted_1d(dtype):
    skip_unsupported(dtype)
    bd = sorted_boundaries((9,), dtype)
    v = make_cpu((4, 6), dtype, low=-7, high=8, integral=True, seed=1)
    for right in (False, True):
        for out_int32 in (False, True):
            got = torch.searchsorted(bd.to(DEVICE), v.to(DEVICE), right=right, out_int32=out_int32)
            assert_ocl_close(got, torch.searchsorted(bd, v, right=right, out_int32=out_int32))
            got = torch.bucketize(v.to(DEVICE), bd.to(DEVICE), right=right, out_int32=out_int32)
            assert_ocl_close(got, torch.bucketize(v, bd, right=right, out_int32=out_int32))


def test_searchsorted_nd_side_and_sorter():
    bd = sorted_boundaries((3, 4, 11), torch.float32)
    v = make_cpu((3, 4, 5), torch.float32, low=-7, high=8, integral=True, seed=2)
    for side in ("left", "right"):
        assert_ocl_close(torch.searchsorted(bd.to(DEVICE), v.to(DEVICE), side=side),
                         torch.searchsorted(bd, v, side=side))  # fmt: skip
    unsorted = make_cpu((3, 4, 11), torch.float32, low=-5, high=6, integral=True, seed=3)
    sorter = torch.argsort(unsorted, dim=-1, stable=True)
    for right in (False, True):
        got = torch.searchsorted(unsorted.to(DEVICE), v.to(DEVICE), right=right,
                                 sorter=sorter.to(DEVICE))  # fmt: skip
        assert_ocl_close(got, torch.searchsorted(unsorted, v, right=right, sorter=sorter))


@pytest.mark.filterwarnings("ignore:torch.searchsorted.*non-contiguous:UserWarning")
def test_specials_scalars_mixed_dtypes_and_layouts():
    bd = torch.tensor([-INF, -1.0, 0.0, 0.0, 2.0, INF, NAN])
    v = torch.tensor([NAN, -INF, -1.0, 0.0, -0.0, 1.5, INF, 3.0])
    for right in (False, True):
        assert_ocl_close(torch.searchsorted(bd.to(DEVICE), v.to(DEVICE), right=right),
                         torch.searchsorted(bd, v, right=right))  # fmt: skip
    # Python scalars promote like operands of a binary op
    bi = torch.tensor([1, 3, 5, 7])
    for s in (4, 4.5, 7):
        assert_ocl_close(torch.searchsorted(bi.to(DEVICE), s), torch.searchsorted(bi, s))
        assert_ocl_close(torch.bucketize(s, bi.to(DEVICE)), torch.bucketize(s, bi))
    # int values, float boundaries (and the reverse); non-contiguous operands
    vi = make_cpu((5, 8), torch.int64, low=-3, high=9).t()
    bf = torch.tensor([-1.5, 0.5, 2.0, 6.25])
    assert_ocl_close(torch.searchsorted(bf.to(DEVICE), vi.to(DEVICE)), torch.searchsorted(bf, vi))
    assert_ocl_close(torch.bucketize(bf.to(DEVICE), bi.to(DEVICE)), torch.bucketize(bf, bi))
    strided_bd = torch.tensor([0.0, 9, 1, 9, 2, 9, 3, 9])[::2]
    assert_ocl_close(torch.searchsorted(strided_bd.to(DEVICE), v.to(DEVICE)),
                     torch.searchsorted(strided_bd, v))  # fmt: skip


def test_out_and_empty():
    bd = sorted_boundaries((9,), torch.float32)
    v = make_cpu((4, 6), torch.float32, low=-7, high=8)
    out = torch.empty(6, 4, dtype=torch.long, device=DEVICE).t()
    torch.searchsorted(bd.to(DEVICE), v.to(DEVICE), out=out)
    assert out.stride() == (1, 4)
    assert_ocl_close(out, torch.searchsorted(bd, v))
    out32 = torch.empty(0, dtype=torch.int32, device=DEVICE)
    torch.bucketize(v.to(DEVICE), bd.to(DEVICE), out_int32=True, out=out32)
    assert_ocl_close(out32, torch.bucketize(v, bd, out_int32=True))
    e = torch.empty(0, 3)
    assert_ocl_close(torch.bucketize(e.to(DEVICE), bd.to(DEVICE)), torch.bucketize(e, bd))
    assert_ocl_close(torch.searchsorted(torch.empty(0).to(DEVICE), v.to(DEVICE)),
                     torch.searchsorted(torch.empty(0), v))  # fmt: skip


def test_errors_match_the_cpu():
    bd = torch.tensor([1.0, 2.0, 3.0])
    v = torch.tensor([2.0, 0.5])
    for dev in ("cpu", DEVICE):
        with pytest.raises(RuntimeError, match="side can only be 'left' or 'right'"):
            torch.searchsorted(bd.to(dev), v.to(dev), side="middle")
        with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
            torch.searchsorted(bd.to(dev), v.to(dev), side="left", right=True)
        with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension"):
            torch.searchsorted(torch.ones(2, 3, device=dev), torch.ones(3, 2, device=dev))
        with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
            torch.bucketize(v.to(dev), torch.ones(2, 3, device=dev))
        with pytest.raises(RuntimeError, match="sorter must be a tensor of long dtype"):
            torch.searchsorted(bd.to(dev), v.to(dev), sorter=torch.zeros(3, device=dev))
        with pytest.raises(RuntimeError, match="boundary and sorter must have the same size"):
            torch.searchsorted(bd.to(dev), v.to(dev),
                               sorter=torch.zeros(2, dtype=torch.long, device=dev))  # fmt: skip
    # An entry of sorter out of range: the CPU raises at once; ocl at the next wait.
    bad = torch.tensor([0, 1, 5])
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        torch.searchsorted(bd, v, sorter=bad)
    r = torch.searchsorted(bd.to(DEVICE), v.to(DEVICE), sorter=bad.to(DEVICE))
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        r.cpu()
    assert_ocl_close(torch.searchsorted(bd.to(DEVICE), v.to(DEVICE)), torch.searchsorted(bd, v))


def test_no_host_wait():
    bd = sorted_boundaries((2, 50), torch.float32).to(DEVICE)
    v = make_cpu((2, 300), torch.float32).to(DEVICE)
    sorter = torch.arange(50).expand(2, 50).contiguous().to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.searchsorted(bd, v, sorter=sorter)
    torch.bucketize(v, bd[0])
    assert torch.ocl.host_wait_count() == before
