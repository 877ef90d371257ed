"""Ops for classifiers and optimizers: softmax, log_softmax, nll_loss / cross_entropy,
argmax/argmin and max/min along a dim, any/all, addcmul, addcdiv, lerp - against the CPU."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, LARGE, assert_ocl_close, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")

SOFTMAX_CASES = [
    ((7, 13), 1),
    ((7, 13), 0),
    ((3, 4, 5), 1),
    ((5,), 0),
    ((), 0),
    ((2, 300), -1),
    ((1, 1), 1),
    ((0, 4), 1),
]


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", SOFTMAX_CASES, ids=[f"{s}-{d}" for s, d in SOFTMAX_CASES])
def test_softmax_forward_backward(fn, shape, dim):
    x = make_cpu(shape, torch.float64, seed=1).requires_grad_()
    d = x.detach().float().to(DEVICE).requires_grad_()
    y, yd = fn(x, dim=dim), fn(d, dim=dim)
    assert_ocl_close(yd, y.detach().float())
    g = make_cpu(shape, torch.float64, seed=2)
    (y * g).sum().backward()
    (yd * g.float().to(DEVICE)).sum().backward()
    assert_ocl_close(d.grad, x.grad.float())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_softmax_dtypes(dtype):
    skip_unsupported(dtype)
    x = make_cpu((6, 33), dtype, seed=3)
    assert_ocl_close(F.softmax(x.to(DEVICE), dim=1), F.softmax(x.double(), dim=1).to(dtype))
    assert_ocl_close(
        F.log_softmax(x.to(DEVICE), dim=1, dtype=torch.float32),
        F.log_softmax(x.double(), dim=1).float(),
    )


def test_softmax_nan_inf_and_large_row():
    x = make_cpu((4, 9), torch.float32, seed=4)
    x[0, 3] = NAN
    x[1, 2] = INF
    x[2, :] = -INF
    x[3, 5] = -INF
    for fn in (F.softmax, F.log_softmax):
        assert_ocl_close(fn(x.to(DEVICE), dim=1), fn(x, dim=1))
    big = make_cpu((2, LARGE // 4), torch.float32, seed=5)
    assert_ocl_close(F.log_softmax(big.to(DEVICE), dim=1), F.log_softmax(big.double(), 1).float())


@pytest.mark.parametrize("offset", [100.0, 1e4, 1e6, 1e8, -1e8])
def test_log_softmax_and_cross_entropy_keep_precision_at_large_logits(offset):
    """(x - max) - log(sum) is exact where x - (max + log(sum)) cancelled: with logits near 1e8
    every log-probability came out 0 instead of about -log(K)."""
    x = make_cpu((5, 7), torch.float32, seed=6) + offset
    x[0] = offset  # a row of equal logits: every entry is -log(7)
    ref = F.log_softmax(x.double(), dim=1)
    got = F.log_softmax(x.to(DEVICE), dim=1).cpu().double()
    torch.testing.assert_close(got, ref, rtol=0, atol=2e-6)
    target = torch.randint(0, 7, (5,), generator=torch.Generator().manual_seed(7))
    loss = F.cross_entropy(x.to(DEVICE), target.to(DEVICE)).cpu().double()
    torch.testing.assert_close(loss, F.cross_entropy(x.double(), target), rtol=0, atol=2e-6)


LOSS_KWARGS = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"weight": True},
    {"weight": True, "reduction": "sum"},
    {"weight": True, "reduction": "none"},
    {"ignore_index": 2},
]


@pytest.mark.parametrize("kwargs", LOSS_KWARGS, ids=[str(k) for k in LOSS_KWARGS])
@pytest.mark.parametrize("n,c", [(9, 5), (1, 3), (64, 10)])
def test_cross_entropy_forward_backward(kwargs, n, c):
    x = make_cpu((n, c), torch.float64, seed=6).requires_grad_()
    t = torch.randint(0, c, (n,), generator=torch.Generator().manual_seed(7))
    t[0] = kwargs.get("ignore_index", -100)
    kw = dict(kwargs)
    kwd = dict(kwargs)
    if kw.get("weight"):
        w = make_cpu((c,), torch.float64, low=0.1, high=2, seed=8)
        kw["weight"], kwd["weight"] = w, w.float().to(DEVICE)
    d = x.detach().float().to(DEVICE).requires_grad_()
    loss, lossd = F.cross_entropy(x, t, **kw), F.cross_entropy(d, t.to(DEVICE), **kwd)
    assert_ocl_close(lossd, loss.detach().float())
    loss.sum().backward()
    lossd.sum().backward()
    assert_ocl_close(d.grad, x.grad.float())


def test_nll_loss_1d_input():
    x = F.log_softmax(make_cpu((6,), torch.float32, seed=9), 0)
    t = torch.tensor(4)
    assert_ocl_close(F.nll_loss(x.to(DEVICE), t.to(DEVICE)), F.nll_loss(x, t))


BAD_TARGET = "target class is out of bounds"


@pytest.mark.parametrize("bad_class", [7, -3])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_bad_target_raises_at_the_next_wait(bad_class, reduction):
    """A kernel cannot raise: it records the error and the host raises it when it next waits
    (here .cpu()), like a CUDA device-side assert; the device stays usable afterwards."""
    xb = make_cpu((3, 4), torch.float32, seed=10)
    bad = torch.tensor([1, bad_class, 2])
    loss = F.nll_loss(xb.to(DEVICE), bad.to(DEVICE), reduction=reduction)
    with pytest.raises(RuntimeError, match=BAD_TARGET):
        loss.cpu()
    good = torch.tensor([1, 3, 2])
    assert_ocl_close(
        F.nll_loss(xb.to(DEVICE), good.to(DEVICE), reduction=reduction),
        F.nll_loss(xb, good, reduction=reduction),
    )


def test_bad_target_in_backward_and_at_synchronize():
    x = make_cpu((5, 3), torch.float32, seed=12).to(DEVICE).requires_grad_()
    t = torch.tensor([0, 1, 3, 2, 0]).to(DEVICE)  # 3 is out of range
    F.cross_entropy(x, t).backward()  # forward and backward both find it; one error is raised
    with pytest.raises(RuntimeError, match=BAD_TARGET):
        torch.ocl.synchronize()
    torch.ocl.synchronize()  # reported once, then cleared
    assert_ocl_close(x.grad.isnan().any(), torch.tensor(True))  # the results are undefined (NaN)
    ignored = torch.tensor([0, 1, -100, 2, 0]).to(DEVICE)  # ignore_index is not an error
    assert torch.isfinite(F.cross_entropy(x, ignored)).item()


def test_bad_target_reported_on_its_own_stream():
    xb = make_cpu((3, 4), torch.float32, seed=13).to(DEVICE)
    s = torch.ocl.Stream()
    with torch.ocl.stream(s):
        loss = F.nll_loss(xb, torch.tensor([9, 0, 0]).to(DEVICE))
    torch.ocl.current_stream().synchronize()  # the default stream ran nothing wrong
    with pytest.raises(RuntimeError, match=BAD_TARGET):
        s.synchronize()
    assert torch.isnan(loss.cpu())


ARG_CASES = [((6, 9), None), ((6, 9), 1), ((6, 9), 0), ((1000, 37), 1), ((300,), 0), ((5,), None)]


@pytest.mark.parametrize("shape,dim", ARG_CASES, ids=[f"{s}-{d}" for s, d in ARG_CASES])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16, torch.uint8])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(shape, dim, dtype, keepdim):
    x = make_cpu(shape, dtype, integral=True, seed=11)  # ties: the first index must win
    d = x.to(DEVICE)
    for fn in (torch.argmax, torch.argmin):
        assert_ocl_close(fn(d, dim=dim, keepdim=keepdim), fn(x, dim=dim, keepdim=keepdim))


def test_argmax_nan_and_noncontiguous():
    x = make_cpu((6, 9), torch.float32, integral=True, seed=12)
    x[1, 3] = NAN
    x[4, 2] = NAN
    x[4, 7] = NAN
    x[5, 0] = INF
    d = x.to(DEVICE)
    for fn in (torch.argmax, torch.argmin):
        assert_ocl_close(fn(d, 1), fn(x, 1))
        assert_ocl_close(fn(d.t(), 1), fn(x.t(), 1))
        assert_ocl_close(fn(d), fn(x))


@pytest.mark.parametrize("fn", [torch.max, torch.min], ids=["max", "min"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False)])
def test_max_min_dim(fn, dim, keepdim):
    x = make_cpu((7, 13), torch.float32, integral=True, seed=13)
    x[2, 5] = NAN
    values, indices = fn(x.to(DEVICE), dim=dim, keepdim=keepdim)
    ev, ei = fn(x, dim=dim, keepdim=keepdim)
    assert_ocl_close(values, ev)
    assert_ocl_close(indices, ei)


@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.float32])
def test_any_all(dtype):
    x = make_cpu((5, 8), dtype, low=0, high=2, integral=True, seed=14)
    d = x.to(DEVICE)
    for fn in (torch.any, torch.all):
        assert_ocl_close(fn(d), fn(x))
        assert_ocl_close(fn(d, dim=1), fn(x, dim=1))
        assert_ocl_close(fn(d, dim=0, keepdim=True), fn(x, dim=0, keepdim=True))
        assert_ocl_close(fn(d.t(), dim=1), fn(x.t(), dim=1))
    empty = torch.empty(0, 3, dtype=dtype)
    for fn in (torch.any, torch.all):
        assert_ocl_close(fn(empty.to(DEVICE)), fn(empty))
        assert_ocl_close(fn(empty.to(DEVICE), dim=0), fn(empty, dim=0))


def test_any_all_nan():
    x = torch.tensor([0.0, NAN, 0.0])
    assert_ocl_close(torch.any(x.to(DEVICE)), torch.any(x))
    assert_ocl_close(torch.all(x.to(DEVICE)), torch.all(x))


@pytest.mark.parametrize("op", [torch.addcmul, torch.addcdiv], ids=["addcmul", "addcdiv"])
def test_addcmul_addcdiv(op):
    a, b = make_cpu((4, 7), torch.float32, seed=15), make_cpu((4, 7), torch.float32, seed=16)
    c = make_cpu((1, 7), torch.float32, nonzero=True, seed=17)  # broadcast divisor
    b[0, 0] = NAN
    ad, bd, cd = a.to(DEVICE), b.to(DEVICE), c.to(DEVICE)
    assert_ocl_close(
        op(ad, bd, cd, value=0.3), op(a.double(), b.double(), c.double(), value=0.3).float()
    )
    getattr(ad, op.__name__ + "_")(bd, cd, value=-2)
    assert_ocl_close(ad, op(a.double(), b.double(), c.double(), value=-2).float())


@pytest.mark.parametrize("weight", [0.0, 0.25, 0.5, 0.7, 1.0, 1.5])
def test_lerp_scalar(weight):
    a, b = make_cpu((3, 11), torch.float32, seed=18), make_cpu((3, 11), torch.float32, seed=19)
    b[1, 1] = INF
    assert_ocl_close(torch.lerp(a.to(DEVICE), b.to(DEVICE), weight), torch.lerp(a, b, weight))
    ad = a.to(DEVICE).t()  # in place into a non-contiguous tensor
    ad.lerp_(b.to(DEVICE).t(), weight)
    assert_ocl_close(ad, torch.lerp(a.t(), b.t(), weight))


@pytest.mark.parametrize("opt", ["Adam", "AdamW", "SGD"])
def test_optimizer_steps_match_cpu(opt):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    netd = copy.deepcopy(net).to(DEVICE)
    x = make_cpu((10, 6), torch.float32, seed=20)
    t = torch.randint(0, 3, (10,), generator=torch.Generator().manual_seed(21))
    kwargs = {"lr": 0.05, "momentum": 0.9} if opt == "SGD" else {"lr": 0.01}
    for model, xx, tt in ((net, x, t), (netd, x.to(DEVICE), t.to(DEVICE))):
        o = getattr(torch.optim, opt)(model.parameters(), **kwargs)
        for _ in range(3):
            o.zero_grad()
            F.cross_entropy(model(xx), tt).backward()
            o.step()
    for p, q in zip(net.parameters(), netd.parameters(), strict=True):
        assert_ocl_close(q.detach(), p.detach(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16, torch.bool])
def test_masked_fill(dtype):
    x = make_cpu((6, 7), dtype, seed=22)
    m = make_cpu((6, 7), torch.float32, seed=23) > 0
    values = [1, torch.tensor(0), torch.tensor(1).to(DEVICE)]  # number, CPU and device 0-dim
    for v in values:
        expected = x.clone().masked_fill_(m, v.cpu() if isinstance(v, torch.Tensor) else v)
        assert_ocl_close(x.to(DEVICE).masked_fill_(m.to(DEVICE), v), expected)
    # non-contiguous self, broadcast mask, NaN as the value
    if dtype.is_floating_point:
        row = m[:1]
        got = x.to(DEVICE).t().masked_fill_(row.to(DEVICE).t(), NAN)
        assert_ocl_close(got, x.t().clone().masked_fill_(row.t(), NAN))
