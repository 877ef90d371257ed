"""multi_margin_loss forward and backward against a float64 CPU reference: p = 1 and 2, margins,
with and without class weights, every reduction, batched, 1-d (a scalar loss) and 0-d inputs,
one class, empty batches, non-contiguous inputs, float64, NaN/Inf, out-of-range targets (raised at
the next wait) and the CPU's errors. Runs with the CPU fallback set to raise."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, make_cpu

SHAPES = [(5, 7), (7,), (1, 1), (3, 1), (13, 33)]


def check(x, t, dtype=torch.float32, w=None, **kw):
    xr = x.double().requires_grad_()
    ref = F.multi_margin_loss(xr, t, weight=None if w is None else w.double(), **kw)
    xd = x.to(dtype).to(DEVICE).requires_grad_()
    wd = None if w is None else w.to(dtype).to(DEVICE)
    got = F.multi_margin_loss(xd, t.to(DEVICE), weight=wd, **kw)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert_ocl_close(got, ref.detach().to(dtype), atol=tol, rtol=tol)
    go = make_cpu(tuple(ref.shape), torch.float64, seed=3)
    (gr,) = torch.autograd.grad(ref, xr, go)
    (gd,) = torch.autograd.grad(got, xd, go.to(dtype).to(DEVICE))
    assert_ocl_close(gd, gr.to(dtype), atol=tol, rtol=tol)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(shape, p, reduction, weighted):
    x = make_cpu(shape, torch.float64, seed=1)
    t = make_cpu(shape[:-1], torch.int64, low=0, high=shape[-1], seed=2)
    w = make_cpu((shape[-1],), torch.float64, low=0, high=2, seed=4) if weighted else None
    check(x, t, w=w, p=p, margin=0.7, reduction=reduction)


def test_zero_dim_empty_noncontiguous_float64():
    check(make_cpu((), torch.float64, seed=5), torch.tensor(0), reduction="none")
    check(make_cpu((), torch.float64, seed=5), torch.tensor(0), reduction="sum", margin=2.0)
    x = make_cpu((6, 10), torch.float64, seed=6)[:, ::2]
    t = make_cpu((6,), torch.int64, low=0, high=5, seed=7)
    check(x, t, reduction="mean")
    check(x.t().contiguous().t(), t, reduction="none", p=2)
    check(x, t, torch.float64, reduction="sum", p=2, margin=1.3)
    e = torch.empty(0, 4)
    got = F.multi_margin_loss(
        e.to(DEVICE), torch.empty(0, dtype=torch.long, device=DEVICE), reduction="none"
    )
    assert got.shape == (0,)


def test_special_values():
    x = make_cpu((4, 5), torch.float32, seed=8)
    x[0, 1], x[1, 2], x[2, 3] = float("nan"), float("inf"), -float("inf")
    t = torch.tensor([1, 0, 3, 4])
    for red in ("none", "sum"):
        assert_ocl_close(
            F.multi_margin_loss(x.to(DEVICE), t.to(DEVICE), reduction=red),
            F.multi_margin_loss(x, t, reduction=red),
        )


def test_bad_target_raises_at_the_next_wait():
    x = make_cpu((3, 4), torch.float32, seed=9)
    t = torch.tensor([0, 4, 1])
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, t)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x.to(DEVICE), t.to(DEVICE)).cpu()
    t[1] = 3
    assert_ocl_close(F.multi_margin_loss(x.to(DEVICE), t.to(DEVICE)), F.multi_margin_loss(x, t))


def test_errors():
    x = make_cpu((3, 4), torch.float32, seed=10)
    t = torch.tensor([0, 2, 1])
    cases = [
        lambda a, b: F.multi_margin_loss(a, b, p=3),
        lambda a, b: F.multi_margin_loss(a, b[:2]),
        lambda a, b: F.multi_margin_loss(a[:, :0], b),
        lambda a, b: F.multi_margin_loss(a[None], b),
        lambda a, b: F.multi_margin_loss(a, b, weight=torch.ones(3, device=a.device)),
        lambda a, b: F.multi_margin_loss(a.half(), b),
        lambda a, b: F.multi_margin_loss(a.long(), b),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_err:  # noqa: PT011 (the CPU's type, checked below)
            fn(x, t)
        with pytest.raises(cpu_err.type):
            fn(x.to(DEVICE), t.to(DEVICE))


def _labels(shape, seed):
    """Targets: class indices with -1 ending each row's list (and junk after it)."""
    t = make_cpu(shape, torch.int64, low=-1, high=shape[-1] if shape else 1, seed=seed)
    if len(shape) == 2:
        t[:, 0] = make_cpu((shape[0],), torch.int64, low=0, high=shape[1], seed=seed + 1)
    return t


@pytest.mark.parametrize("shape", [(5, 7), (7,), (1, 1), (3, 1), (13, 33), ()], ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss(shape, reduction):
    x = make_cpu(shape, torch.float64, seed=11)
    t = _labels(shape, 12) if shape else torch.tensor(0)
    xr = x.clone().requires_grad_()
    ref = F.multilabel_margin_loss(xr, t, reduction=reduction)
    xd = x.float().to(DEVICE).requires_grad_()
    got = F.multilabel_margin_loss(xd, t.to(DEVICE), reduction=reduction)
    assert_ocl_close(got, ref.detach().float(), atol=1e-5)
    go = make_cpu(tuple(ref.shape), torch.float64, seed=13)
    (gr,) = torch.autograd.grad(ref, xr, go)
    (gd,) = torch.autograd.grad(got, xd, go.float().to(DEVICE))
    assert_ocl_close(gd, gr.float(), atol=1e-5)
    is_t = torch.ops.aten.multilabel_margin_loss_forward(x, t, 0)[1]
    got_t = torch.ops.aten.multilabel_margin_loss_forward(x.to(DEVICE), t.to(DEVICE), 0)[1]
    assert_ocl_close(got_t, is_t, exact=True)


def test_multilabel_noncontiguous_float64_and_bad_target():
    x = make_cpu((4, 12), torch.float64, seed=14)[:, ::2]
    t = _labels((4, 12), 15)[:, ::2].clamp(max=5)
    ref = F.multilabel_margin_loss(x, t, reduction="sum")
    assert_ocl_close(F.multilabel_margin_loss(x.to(DEVICE), t.to(DEVICE), reduction="sum"), ref)
    t[2, 1] = 6
    with pytest.raises(RuntimeError, match="out of range"):
        F.multilabel_margin_loss(x, t)
    with pytest.raises(RuntimeError, match="out of range"):
        F.multilabel_margin_loss(x.to(DEVICE), t.to(DEVICE)).cpu()
    for bad in (
        lambda a, b: F.multilabel_margin_loss(a, b[:2]),
        lambda a, b: F.multilabel_margin_loss(a.half(), b),
        lambda a, b: F.multilabel_margin_loss(a[:, :0], b[:, :0]),
    ):
        with pytest.raises(Exception) as cpu_err:  # noqa: PT011 (the CPU's type, checked below)
            bad(x, t)
        with pytest.raises(cpu_err.type):
            bad(x.to(DEVICE), t.to(DEVICE))
