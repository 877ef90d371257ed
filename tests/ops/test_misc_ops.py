"""isin (both of ATen's paths: the pairwise kernel of kernels/isin.cl and the sorting one),
nonzero_static, equal, unfold's backward (overlapping windows), sgn's backward (zero gradients
from _efficientzerotensor) and what uses them (cov, corrcoef), against the CPU.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu

NAN, INF = float("nan"), float("inf")
ISIN_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
               torch.int32, torch.int16, torch.int8, torch.uint8]  # fmt: skip


# --- isin ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ISIN_DTYPES, ids=dtype_id)
@pytest.mark.parametrize(("n", "m"), [(1, 1), (37, 3), (1000, 5), (10, 400), (0, 3), (5, 0)])
@pytest.mark.parametrize("invert", [False, True])
def test_isin(dtype, n, m, invert):
    # Few distinct values, so that about half of the elements are in the test set.
    e = make_cpu((n,), dtype, low=0, high=12, integral=True)
    t = make_cpu((m,), dtype, low=0, high=12, seed=1, integral=True)
    eo, to = e.to(DEVICE), t.to(DEVICE)
    assert_ocl_close(torch.isin(eo, to, invert=invert), torch.isin(e, t, invert=invert))
    if n > 1:
        # Non-contiguous elements of another shape, test elements as a 2-D tensor.
        e2 = make_cpu((n, 3), dtype, low=0, high=12, seed=2, integral=True).t()
        assert_ocl_close(
            torch.isin(e2.to(DEVICE), to.reshape(1, -1), invert=invert),
            torch.isin(e2, t.reshape(1, -1), invert=invert),
        )


def test_isin_nan_inf_mixed_dtypes_and_out():
    e = torch.tensor([1.0, NAN, INF, -INF, 2.5, 3.0])
    t = torch.tensor([NAN, INF, 3.0])
    assert_ocl_close(torch.isin(e.to(DEVICE), t.to(DEVICE)), torch.isin(e, t))
    ti = torch.tensor([3, 1])
    assert_ocl_close(torch.isin(e.to(DEVICE), ti.to(DEVICE)), torch.isin(e, ti))
    out = torch.empty(0, dtype=torch.bool, device=DEVICE)
    torch.isin(e.to(DEVICE), t.to(DEVICE), out=out)
    assert_ocl_close(out, torch.isin(e, t))
    # The scalar forms.
    assert_ocl_close(torch.isin(e.to(DEVICE), 3.0), torch.isin(e, 3.0))
    assert_ocl_close(torch.isin(e.to(DEVICE), 3.0, invert=True), torch.isin(e, 3.0, invert=True))
    assert_ocl_close(torch.isin(3.0, t.to(DEVICE)), torch.isin(3.0, t))
    with pytest.raises(RuntimeError):
        torch.isin(torch.ones(3, dtype=torch.bool, device=DEVICE), torch.ones(2, device=DEVICE))


# --- nonzero_static --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.int64, torch.bool, torch.uint8, torch.float16], ids=dtype_id
)
@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5), (), (0, 3), (1,)])
@pytest.mark.parametrize("size", [0, 1, 4, 200])
def test_nonzero_static(dtype, shape, size):
    x = make_cpu(shape, dtype, low=-1, high=2, integral=True)
    xo = x.to(DEVICE)
    assert_ocl_close(torch.nonzero_static(xo, size=size), torch.nonzero_static(x, size=size))
    assert_ocl_close(
        torch.nonzero_static(xo, size=size, fill_value=-7),
        torch.nonzero_static(x, size=size, fill_value=-7),
    )
    if x.dim() >= 2:
        xt = x.transpose(0, 1)
        assert_ocl_close(
            torch.nonzero_static(xo.transpose(0, 1), size=size), torch.nonzero_static(xt, size=size)
        )


def test_nonzero_static_nan_out_and_errors():
    x = torch.tensor([[0.0, NAN], [INF, 0.0]])
    assert_ocl_close(torch.nonzero_static(x.to(DEVICE), size=3), torch.nonzero_static(x, size=3))
    out = torch.empty(0, dtype=torch.int64, device=DEVICE)
    torch.nonzero_static(x.to(DEVICE), size=3, out=out)
    assert_ocl_close(out, torch.nonzero_static(x, size=3))
    for kwargs in ({"size": -1}, {"size": 2, "out": torch.empty(0)}):
        with pytest.raises(RuntimeError) as cpu:
            torch.nonzero_static(x, **kwargs)
        dev_kwargs = {
            k: (v.to(DEVICE) if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()
        }
        with pytest.raises(RuntimeError) as dev:
            torch.nonzero_static(x.to(DEVICE), **dev_kwargs)
        assert str(dev.value) == str(cpu.value)


# --- equal -----------------------------------------------------------------------------------


def test_equal():
    a = make_cpu((5, 7), torch.float32)
    ao = a.to(DEVICE)
    b = a.clone()
    b[2, 3] += 1
    c = a.clone()
    c[0, 0] = NAN
    cases = [(a, a), (a, b), (a, a[:4]), (a, a.t().contiguous().t()), (a, a.double()), (c, c),
             (torch.empty(0, 3), torch.empty(0, 3)), (a, a.reshape(7, 5))]  # fmt: skip
    for x, y in cases:
        assert torch.equal(x.to(DEVICE), y.to(DEVICE)) == torch.equal(x, y)
    assert torch.equal(ao, ao)


def test_cov_corrcoef():
    x = make_cpu((4, 9), torch.float32)
    w = make_cpu((9,), torch.int64, low=1, high=5, seed=1)
    aw = make_cpu((9,), torch.float32, low=0.1, high=1, seed=2)
    xo = x.to(DEVICE)
    tol = {"atol": 1e-4, "rtol": 1e-4}
    assert_ocl_close(torch.cov(xo), torch.cov(x), **tol)
    assert_ocl_close(torch.corrcoef(xo), torch.corrcoef(x), **tol)
    assert_ocl_close(
        torch.cov(xo, fweights=w.to(DEVICE), aweights=aw.to(DEVICE)),
        torch.cov(x, fweights=w, aweights=aw),
        **tol,
    )


# --- backward --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "dim", "size", "step"),
    [
        ((10,), 0, 3, 1),
        ((10,), 0, 4, 2),
        ((6, 11), 1, 5, 3),
        ((6, 11), -2, 2, 1),
        ((7, 3), 0, 7, 1),
        ((5,), 0, 2, 5),
        ((), 0, 1, 1),
        ((4, 0), 0, 2, 1),
    ],  # fmt: skip
)
def test_unfold_backward(shape, dim, size, step):
    x = make_cpu(shape, torch.float32)
    xo = x.to(DEVICE).requires_grad_()
    xc = x.clone().requires_grad_()
    yc = xc.unfold(dim, size, step)
    g = make_cpu(tuple(yc.shape), torch.float32, seed=1)
    (gc,) = torch.autograd.grad(yc, xc, g)
    (gd,) = torch.autograd.grad(xo.unfold(dim, size, step), xo, g.to(DEVICE))
    assert_ocl_close(gd, gc, atol=1e-5, rtol=1e-5)


def test_sgn_backward_and_efficientzerotensor():
    x = make_cpu((5, 3), torch.float32)
    xo = x.to(DEVICE).requires_grad_()
    (g,) = torch.autograd.grad(torch.sgn(xo).sum(), xo)
    assert_ocl_close(g, torch.zeros(5, 3))
    z = torch._efficientzerotensor((2, 3), dtype=torch.float16, device=DEVICE)
    assert_ocl_close(z, torch.zeros(2, 3, dtype=torch.float16))


# --- repeat_interleave -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=dtype_id)
@pytest.mark.parametrize("n", [0, 1, 9, 300])
def test_repeat_interleave_tensor(dtype, n):
    r = make_cpu((n,), dtype, low=0, high=5)
    ro = r.to(DEVICE)
    assert_ocl_close(torch.repeat_interleave(ro), torch.repeat_interleave(r))
    total = int(r.sum())
    assert_ocl_close(
        torch.repeat_interleave(ro, output_size=total),
        torch.repeat_interleave(r, output_size=total),
    )
    x = make_cpu((n, 3), torch.float32)
    assert_ocl_close(
        torch.repeat_interleave(x.to(DEVICE), ro, dim=0), torch.repeat_interleave(x, r, dim=0)
    )
    if n > 1:
        assert_ocl_close(torch.repeat_interleave(ro[::2]), torch.repeat_interleave(r[::2]))


def test_repeat_interleave_errors_like_cpu():
    for bad in (torch.tensor([1, -1, 2]), torch.ones(2, 2, dtype=torch.int64), torch.ones(3)):
        with pytest.raises(RuntimeError) as cpu:
            torch.repeat_interleave(bad)
        with pytest.raises(cpu.type) as dev:
            torch.repeat_interleave(bad.to(DEVICE))
        if cpu.type is not NotImplementedError:  # that one names the CPU's kernel
            assert str(dev.value) == str(cpu.value)
