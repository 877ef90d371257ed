"""histc and bincount on the ocl device, against PyTorch on the CPU.

histc never waits for the device: with min == max (the default) the data range comes from the
device's own amin/amax, read by the kernel; a data range that is not finite is raised at the next
wait. bincount reads the input's minimum and maximum back once (the result's size is max + 1).

The CPU's histc accumulates counts in the input's dtype (float16 and bfloat16 counts stop being
exact above 2048 and 256) and, with many bins, can compute a bin past the end in those dtypes and
write out of bounds, so half-precision cases here keep counts and bins small.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("n", [1, 17, 5000])
def test_histc(dtype, n):
    skip_unsupported(dtype)
    x = make_cpu((n,), dtype, low=-3, high=3)
    for bins, lo, hi in [(10, 0, 0), (7, -1, 2), (2000, 0, 0), (5, -2.5, 2.5), (3, 3, 3)]:
        assert_ocl_close(torch.histc(x.to(DEVICE), bins, lo, hi), torch.histc(x, bins, lo, hi))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
def test_histc_half(dtype):
    x = make_cpu((200,), dtype, low=-3, high=3)
    for bins, lo, hi in [(10, 0, 0), (7, -1, 2), (5, -2.5, 2.5)]:
        assert_ocl_close(torch.histc(x.to(DEVICE), bins, lo, hi), torch.histc(x, bins, lo, hi))


def test_histc_edges_specials_and_layouts():
    # elements on the edges, outside the range, NaN and infinities (skipped)
    x = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, -0.5, 4.5, NAN, INF, -INF, 2.5])
    assert_ocl_close(torch.histc(x.to(DEVICE), 4, 0, 4), torch.histc(x, 4, 0, 4))
    # constant data: the range becomes [v - 1, v + 1]
    c = torch.full((5,), 2.5)
    assert_ocl_close(torch.histc(c.to(DEVICE), 4), torch.histc(c, 4))
    # empty input, 2-D and non-contiguous input, out=
    e = torch.empty(0)
    assert_ocl_close(torch.histc(e.to(DEVICE), 3), torch.histc(e, 3))
    y = make_cpu((9, 40), torch.float32)[:, ::3]
    assert_ocl_close(torch.histc(y.to(DEVICE), 6), torch.histc(y, 6))
    out = torch.empty(0, device=DEVICE)
    torch.histc(y.to(DEVICE), 6, -1, 1, out=out)
    assert_ocl_close(out, torch.histc(y, 6, -1, 1))


def test_histc_errors_match_the_cpu():
    x = make_cpu((10,), torch.float32)
    for dev in ("cpu", DEVICE):
        xd = x.to(dev)
        with pytest.raises(RuntimeError, match="bins must be > 0"):
            torch.histc(xd, 0)
        with pytest.raises(RuntimeError, match="max must be larger than min"):
            torch.histc(xd, 3, 2, 1)
        with pytest.raises(RuntimeError, match=r"range of \[-inf, inf\] is not finite"):
            torch.histc(xd, 3, -INF, INF)
        with pytest.raises(RuntimeError, match="should have the same dtype"):
            torch.histc(xd, 3, out=torch.empty(3, dtype=torch.float64, device=dev))
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            torch.histc(torch.tensor([0, 1, 2], device=dev), 3)
    # a data range that is not finite: the CPU raises at once, ocl at the next wait
    bad = torch.tensor([1.0, INF])
    with pytest.raises(RuntimeError, match="is not finite"):
        torch.histc(bad, 3)
    h = torch.histc(bad.to(DEVICE), 3)
    with pytest.raises(RuntimeError, match="is not finite"):
        h.cpu()
    assert_ocl_close(torch.histc(x.to(DEVICE), 3), torch.histc(x, 3))


def test_histc_no_host_wait():
    x = make_cpu((3000,), torch.float32).to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.histc(x, 10)
    torch.histc(x, 10, -1, 1)
    assert torch.ocl.host_wait_count() == before


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8], ids=dtype_id)
@pytest.mark.parametrize("n", [1, 100, 20000])
def test_bincount(dtype, n):
    x = make_cpu((n,), dtype, low=0, high=60)
    xo = x.to(DEVICE)
    assert_ocl_close(torch.bincount(xo), torch.bincount(x))
    assert_ocl_close(torch.bincount(xo, minlength=100), torch.bincount(x, minlength=100))
    w = make_cpu((n,), torch.float32, low=0, high=1, seed=1)
    # sums in another order than the CPU's (atomics): float32 rounding
    assert_ocl_close(torch.bincount(xo, w.to(DEVICE)), torch.bincount(x, w), rtol=1e-5, atol=1e-4)
    for wt in (torch.float64, torch.float16, torch.int32):
        skip_unsupported(torch.float64)
        ww = w.to(wt) if wt.is_floating_point else (w * 10).to(wt)
        assert_ocl_close(torch.bincount(xo, ww.to(DEVICE)), torch.bincount(x, ww), rtol=1e-12)


def test_bincount_many_bins_empty_and_one_wait():
    x = make_cpu((3000,), torch.int64, low=0, high=5000)  # more bins than a local histogram
    assert_ocl_close(torch.bincount(x.to(DEVICE)), torch.bincount(x))
    e = torch.empty(0, dtype=torch.long)
    assert_ocl_close(torch.bincount(e.to(DEVICE), minlength=4), torch.bincount(e, minlength=4))
    xo = x.to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.bincount(xo)
    assert torch.ocl.host_wait_count() == before + 1


def test_bincount_errors_match_the_cpu():
    for dev in ("cpu", DEVICE):
        with pytest.raises(RuntimeError, match="1-d non-negative integral inputs"):
            torch.bincount(torch.tensor([1, -1], device=dev))
        with pytest.raises(RuntimeError, match="1-d non-negative integral inputs"):
            torch.bincount(torch.tensor([[1, 1]], device=dev))
        with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
            torch.bincount(torch.tensor([1.0, 2.0], device=dev))
        with pytest.raises(RuntimeError, match="weights should be 1-d"):
            torch.bincount(torch.tensor([1, 2], device=dev), torch.ones(3, device=dev))
        with pytest.raises(RuntimeError, match="minlength should be >= 0"):
            torch.bincount(torch.tensor([1, 2], device=dev), minlength=-1)
    assert_ocl_close(torch.bincount(torch.tensor([1, 2], device=DEVICE)), torch.tensor([0, 1, 1]))


def test_deterministic_mode_orders_weighted_bincount():
    """Weighted bincount sums floats by atomic updates in no fixed order; with deterministic
    algorithms requested it sums through index_add_'s ordered form, in the input's order, and
    equals the CPU's bits. Counting (bincount without weights, histc) adds integers."""
    x = torch.tensor([0, 2, 2, 5, 2], device=DEVICE)
    w = torch.tensor([1.0, 1e8, 1.0, 3.0, -1e8]).to(DEVICE)
    torch.use_deterministic_algorithms(True)
    try:
        assert torch.equal(torch.bincount(x, w).cpu(), torch.bincount(x.cpu(), w.cpu()))
        assert torch.bincount(x).cpu().tolist() == [1, 0, 3, 0, 0, 1]
        h = torch.histc(x.float(), bins=3, min=0, max=6).cpu()
        assert h.tolist() == torch.histc(x.cpu().float(), bins=3, min=0, max=6).tolist()
    finally:
        torch.use_deterministic_algorithms(False)
    torch.testing.assert_close(torch.bincount(x, w).cpu(), torch.bincount(x.cpu(), w.cpu()))
