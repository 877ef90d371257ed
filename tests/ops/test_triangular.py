"""tril / triu (functional, out= and in-place) against the CPU: every dtype, diagonals inside and
outside the matrix, batches, empty and one-element matrices, non-contiguous inputs and outputs,
gradients, and the CPU's errors."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import ALL_DTYPES, DEVICE, assert_ocl_close, make_cpu, skip_unsupported

SHAPES = [(5, 7), (3, 6, 4), (2, 1, 5, 5), (1, 1), (0, 4), (3, 0, 2)]


@pytest.mark.parametrize("op", [torch.tril, torch.triu], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dtypes_and_diagonals(op, dtype):
    skip_unsupported(dtype)
    for shape in SHAPES:
        x = make_cpu(shape, dtype, seed=len(shape))
        for k in (-7, -2, -1, 0, 1, 3, 8):
            assert_ocl_close(op(x.to(DEVICE), k), op(x, k), exact=True)


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_out_inplace_and_layouts(name):
    op = getattr(torch, name)
    x = make_cpu((4, 6, 5), torch.float32, seed=1)
    xd = x.to(DEVICE)
    # non-contiguous inputs
    assert_ocl_close(op(xd.transpose(1, 2), 1), op(x.transpose(1, 2), 1), exact=True)
    assert_ocl_close(op(xd[:, ::2], -1), op(x[:, ::2], -1), exact=True)
    # out=, including a non-contiguous out and out aliasing the input
    out = torch.empty(4, 5, 6, device=DEVICE).transpose(1, 2)
    op(xd, 2, out=out)
    assert_ocl_close(out, op(x, 2), exact=True)
    y, yc = xd.clone(), x.clone()
    op(y, 0, out=y)
    assert_ocl_close(y, op(yc, 0), exact=True)
    # in-place, contiguous and transposed
    for view in (lambda t: t, lambda t: t.transpose(1, 2)):
        y, yc = view(xd.clone()), view(x.clone())
        getattr(y, name + "_")(-1)
        getattr(yc, name + "_")(-1)
        assert_ocl_close(y, yc, exact=True)


def test_nan_inf_kept_and_gradients():
    x = make_cpu((5, 5), torch.float32, seed=2)
    x[1, 0], x[0, 3] = float("nan"), float("inf")
    assert_ocl_close(torch.tril(x.to(DEVICE)), torch.tril(x), exact=True)
    assert_ocl_close(torch.triu(x.to(DEVICE)), torch.triu(x), exact=True)
    xd = x.to(DEVICE).requires_grad_()
    xc = x.clone().requires_grad_()
    g = make_cpu((5, 5), torch.float32, seed=3)
    (torch.tril(xd, 1) * g.to(DEVICE)).sum().backward()
    (torch.tril(xc, 1) * g).sum().backward()
    assert_ocl_close(xd.grad, xc.grad, exact=True)


def test_errors_like_cpu():
    for name in ("tril", "triu"):
        op = getattr(torch, name)
        with pytest.raises(RuntimeError):
            op(torch.ones(3))
        with pytest.raises(RuntimeError):
            op(torch.ones(3, device=DEVICE))
        with pytest.raises(RuntimeError):
            op(torch.ones(2, 2), out=torch.ones(2, 2, dtype=torch.int64))
        with pytest.raises(RuntimeError):
            op(
                torch.ones(2, 2, device=DEVICE),
                out=torch.ones(2, 2, dtype=torch.int64, device=DEVICE),
            )
