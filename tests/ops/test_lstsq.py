"""torch.linalg.lstsq on the ocl device (csrc/ops/Lstsq.cpp: ATen's linalg_lstsq with the 'gels'
driver on the native QR kernels, as on CUDA) against PyTorch on the CPU in float64: tall, square
and wide full-rank systems, batches with broadcasting, vector right-hand sides, empty sizes,
float32, the gradient, a single host wait (ATen's info check, as on CUDA); and the CPU-only
drivers handed to the CPU fallback, which tests/ops sets to raise.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, make_cpu


@pytest.mark.parametrize("shape", [(7, 3), (5, 5), (3, 6), (2, 9, 4), (1, 1)])
def test_lstsq_gels_shapes(shape):
    a = make_cpu(shape, torch.float64, seed=1)
    b = make_cpu((*shape[:-1], 2), torch.float64, seed=2)
    got = torch.linalg.lstsq(a.to(DEVICE), b.to(DEVICE))
    ref = torch.linalg.lstsq(a, b, driver="gels")
    assert_ocl_close(got.solution, ref.solution, rtol=1e-10, atol=1e-10)
    assert_ocl_close(got.residuals, ref.residuals, rtol=1e-10, atol=1e-10)


def test_lstsq_broadcast_vector_float32_grad_and_empty():
    a = make_cpu((3, 6, 4), torch.float64, seed=3)
    b = make_cpu((1, 6, 2), torch.float64, seed=4)  # broadcast over the batch
    got = torch.linalg.lstsq(a.to(DEVICE), b.to(DEVICE)).solution
    assert_ocl_close(got, torch.linalg.lstsq(a, b, driver="gels").solution, rtol=1e-10, atol=1e-10)
    f = a.float()
    got = torch.linalg.lstsq(f.to(DEVICE), b.float().to(DEVICE)).solution
    ref = torch.linalg.lstsq(a, b, driver="gels").solution.float()
    assert_ocl_close(got, ref, rtol=1e-4, atol=1e-5)
    ad = a.to(DEVICE).requires_grad_()
    ac = a.clone().requires_grad_()
    torch.linalg.lstsq(ad, b.to(DEVICE)).solution.sum().backward()
    torch.linalg.lstsq(ac, b, driver="gels").solution.sum().backward()
    assert_ocl_close(ad.grad, ac.grad, rtol=1e-9, atol=1e-9)
    e = torch.empty(0, 3, dtype=torch.float64)
    got = torch.linalg.lstsq(e.to(DEVICE), torch.empty(0, 2, dtype=torch.float64).to(DEVICE))
    ref = torch.linalg.lstsq(e, torch.empty(0, 2, dtype=torch.float64), driver="gels")
    assert_ocl_close(got.solution, ref.solution)


def test_lstsq_one_host_wait_and_cpu_drivers():
    a = make_cpu((8, 3), torch.float32).to(DEVICE)
    b = make_cpu((8, 2), torch.float32, seed=5).to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.linalg.lstsq(a, b)
    # ATen's check of the factorisation's info flags (as on CUDA), nothing else
    assert torch.ocl.host_wait_count() == before + 1
    # the CPU's rank-revealing and SVD drivers are not native: the fallback (raising here)
    for driver in ("gelsy", "gelsd", "gelss"):
        with pytest.raises(NotImplementedError, match="linalg_lstsq.out"):
            torch.linalg.lstsq(a, b, driver=driver)
