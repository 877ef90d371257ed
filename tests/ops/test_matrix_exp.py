"""torch.linalg.matrix_exp on the ocl device (csrc/ops/MatrixExp.cpp: ATen's algorithm over
native ops) against PyTorch on the CPU in float64: small and large norms (every approximation
degree and squarings), batches, 0x0 and 1x1, non-contiguous input, NaN, and the gradient.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, make_cpu


@pytest.mark.parametrize("scale", [1e-4, 0.05, 0.5, 1.5, 4.0, 30.0])
def test_matrix_exp_norms(scale):
    a = make_cpu((5, 5), torch.float64) * scale / 4
    assert_ocl_close(
        torch.linalg.matrix_exp(a.to(DEVICE)), torch.linalg.matrix_exp(a), rtol=1e-10, atol=1e-10
    )


def test_matrix_exp_batches_layouts_and_grad():
    a = make_cpu((3, 2, 4, 4), torch.float64) * torch.tensor([0.01, 0.3, 2.0]).view(3, 1, 1, 1)
    assert_ocl_close(torch.matrix_exp(a.to(DEVICE)), torch.matrix_exp(a), rtol=1e-10, atol=1e-10)
    t = a.transpose(-1, -2)
    assert_ocl_close(torch.matrix_exp(t.to(DEVICE)), torch.matrix_exp(t), rtol=1e-10, atol=1e-10)
    for n in (0, 1):
        e = make_cpu((2, n, n), torch.float64)
        assert_ocl_close(torch.matrix_exp(e.to(DEVICE)), torch.matrix_exp(e))
    f = make_cpu((3, 3), torch.float32)
    assert_ocl_close(
        torch.matrix_exp(f.to(DEVICE)), torch.matrix_exp(f.double()).float(), rtol=1e-5, atol=1e-5
    )
    x = make_cpu((4, 4), torch.float64) * 0.5
    xd = x.to(DEVICE).requires_grad_()
    xc = x.clone().requires_grad_()
    torch.matrix_exp(xd).sum().backward()
    torch.matrix_exp(xc).sum().backward()
    assert_ocl_close(xd.grad, xc.grad, rtol=1e-10, atol=1e-10)


def test_matrix_exp_nan_and_errors():
    a = make_cpu((3, 3), torch.float64)
    a[1, 1] = float("nan")
    assert_ocl_close(torch.matrix_exp(a.to(DEVICE)), torch.matrix_exp(a))
    with pytest.raises(RuntimeError, match="square"):
        torch.linalg.matrix_exp(make_cpu((2, 3), torch.float32).to(DEVICE))
