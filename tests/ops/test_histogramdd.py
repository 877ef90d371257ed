"""torch.histogram and torch.histogramdd on the ocl device (csrc/ops/HistogramDD.cpp,
kernels/histogramdd.cl) against PyTorch on the CPU: bin counts with and without a range, given
bin edges (uneven), weights, density, 1 to 3 dimensions, empty input, one element, constant
data, values on the edges, NaN/Inf (skipped), non-contiguous input, out=, no host wait, and the
CPU's errors. Unweighted counts are exact; weighted sums are compared with float64 references.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")


def _close(got, ref, weighted):
    if isinstance(ref, (tuple, list)):
        hist, edges = ref
        _close(got[0], hist, weighted)
        for g, r in zip(got[1], edges, strict=True):
            assert_ocl_close(g, r)
        return
    assert_ocl_close(got, ref, exact=not weighted and ref.dtype == torch.float64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("n", [1, 17, 3000])
def test_histogram_bin_ct(dtype, n):
    skip_unsupported(dtype)
    x = make_cpu((n,), dtype, low=-3, high=3)
    for bins, rng in [(10, None), (7, (-1.0, 2.0)), (1, None), (300, None), (5, (2.0, 2.0))]:
        got = torch.histogram(x.to(DEVICE), bins, range=rng)
        ref = torch.histogram(x, bins, range=rng)
        assert_ocl_close(got.hist, ref.hist)
        assert_ocl_close(got.bin_edges, ref.bin_edges)


def test_histogram_bins_tensor_weights_density():
    x = make_cpu((7, 11), torch.float64, low=-2, high=2)
    w = make_cpu((7, 11), torch.float64, low=0, high=3, seed=4)
    edges = torch.tensor([-2.0, -1.5, -0.1, 0.0, 0.3, 1.9, 2.0], dtype=torch.float64)
    for kw in [{}, {"weight": w}, {"density": True}, {"weight": w, "density": True}]:
        dkw = {k: (v.to(DEVICE) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        got = torch.histogram(x.to(DEVICE), edges.to(DEVICE), **dkw)
        ref = torch.histogram(x, edges, **kw)
        assert_ocl_close(got.hist, ref.hist)
        assert_ocl_close(got.bin_edges, ref.bin_edges)
        got = torch.histogram(x.to(DEVICE), 9, **dkw)
        ref = torch.histogram(x, 9, **kw)
        assert_ocl_close(got.hist, ref.hist)


def test_histogram_specials_layouts_and_empty():
    x = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, -0.5, 4.5, NAN, INF, -INF, 2.5, 4.0])
    for dtype in (torch.float32, torch.float64):
        xs = x.to(dtype)
        got = torch.histogram(xs.to(DEVICE), 4, range=(0.0, 4.0))
        ref = torch.histogram(xs, 4, range=(0.0, 4.0))
        assert_ocl_close(got.hist, ref.hist)
        e = torch.tensor([0.0, 1.0, 1.0, 4.0], dtype=dtype)  # a repeated edge
        got = torch.histogram(xs.to(DEVICE), e.to(DEVICE))
        assert_ocl_close(got.hist, torch.histogram(xs, e).hist)
    c = torch.full((5,), 2.5)
    assert_ocl_close(torch.histogram(c.to(DEVICE), 4).hist, torch.histogram(c, 4).hist)
    assert_ocl_close(torch.histogram(c.to(DEVICE), 4).bin_edges, torch.histogram(c, 4).bin_edges)
    empty = torch.empty(0)
    got = torch.histogram(empty.to(DEVICE), 3)
    ref = torch.histogram(empty, 3)
    assert_ocl_close(got.hist, ref.hist)
    assert_ocl_close(got.bin_edges, ref.bin_edges)
    y = make_cpu((9, 40), torch.float32)[:, ::3]
    assert_ocl_close(torch.histogram(y.to(DEVICE), 6).hist, torch.histogram(y, 6).hist)
    hist, edges = torch.empty(0, device=DEVICE), torch.empty(0, device=DEVICE)
    torch.histogram(y.to(DEVICE), 6, range=(-1.0, 1.0), out=(hist, edges))
    assert_ocl_close(hist, torch.histogram(y, 6, range=(-1.0, 1.0)).hist)


@pytest.mark.parametrize("D", [1, 2, 3])
def test_histogramdd(D):
    x = make_cpu((500, D), torch.float64, low=-1, high=1)
    w = make_cpu((500,), torch.float64, low=0, high=1, seed=3)
    bins = [3, 5, 2][:D]
    for kw in [{}, {"weight": w}, {"density": True}]:
        dkw = {k: (v.to(DEVICE) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        got = torch.histogramdd(x.to(DEVICE), bins, **dkw)
        ref = torch.histogramdd(x, bins, **kw)
        assert_ocl_close(got.hist, ref.hist)
        for g, r in zip(got.bin_edges, ref.bin_edges, strict=True):
            assert_ocl_close(g, r)
        rng = [-0.5, 0.5] * D
        got = torch.histogramdd(x.to(DEVICE), bins, range=rng, **dkw)
        ref = torch.histogramdd(x, bins, range=rng, **kw)
        assert_ocl_close(got.hist, ref.hist)
        edges = [torch.tensor([-1.0, -0.2, 0.1, 1.0], dtype=torch.float64)] * D
        got = torch.histogramdd(x.to(DEVICE), [e.to(DEVICE) for e in edges], **dkw)
        ref = torch.histogramdd(x, edges, **kw)
        assert_ocl_close(got.hist, ref.hist)


def test_histogram_float32_weights():
    skip_unsupported(torch.float32)
    x = make_cpu((4000,), torch.float32, low=-1, high=1)
    w = make_cpu((4000,), torch.float32, low=0, high=1, seed=2)
    got = torch.histogram(x.to(DEVICE), 16, weight=w.to(DEVICE))
    ref = torch.histogram(x.double(), 16, weight=w.double())
    assert_ocl_close(got.hist, ref.hist.float(), rtol=1e-5, atol=1e-4)


def test_histogram_no_host_wait():
    x = make_cpu((100, 2), torch.float32).to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.histogram(x, 8)
    torch.histogramdd(x, [3, 4], density=True)
    assert torch.ocl.host_wait_count() == before


def test_histogram_errors():
    x = make_cpu((10,), torch.float32)
    for dev in ("cpu", DEVICE):
        with pytest.raises(RuntimeError, match="bins must be > 0"):
            torch.histogram(x.to(dev), 0)
        with pytest.raises(RuntimeError, match="is not finite"):
            torch.histogram(x.to(dev), 3, range=(0.0, INF))
        with pytest.raises(RuntimeError, match="should have the same dtype"):
            torch.histogram(x.to(dev), torch.tensor([0.0, 1.0], dtype=torch.float64).to(dev))
    # a data range that is not finite: raised at the next wait on the device
    bad = torch.tensor([1.0, INF]).to(DEVICE)
    with pytest.raises(RuntimeError, match="is not finite"):
        torch.histogram(bad, 3).hist.cpu()
    assert_ocl_close(torch.histogram(x.to(DEVICE), 3).hist, torch.histogram(x, 3).hist)
