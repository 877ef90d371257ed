"""Autograd through native ocl ops: gradients match PyTorch on the CPU (float64 reference).

Backward passes here are seeded with an explicit gradient instead of .sum().backward() where
the op under test does not need a reduction, so they only depend on the elementwise kernels;
the MLP tests need mm/addmm/sum as well. The CPU fallback is an error here.
"""

from __future__ import annotations

import copy

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, make_cpu


def _grads(fn, inputs, grad_out):
    """Gradients of fn at `inputs` (CPU tensors) on the CPU in float64 and on the device in the
    inputs' dtype; returns [(ocl_grad, expected)] with expected rounded to the input dtype."""
    cpu_in = [t.detach().double().requires_grad_() for t in inputs]
    dev_in = [t.detach().to(DEVICE).requires_grad_() for t in inputs]
    fn(*cpu_in).backward(grad_out.double())
    out = fn(*dev_in)
    assert out.device.type == "ocl"
    out.backward(grad_out.to(DEVICE))
    pairs = []
    for c, d, t in zip(cpu_in, dev_in, inputs, strict=True):
        assert d.grad is not None, "no gradient reached a device input"
        assert d.grad.device.type == "ocl"
        pairs.append((d.grad, c.grad.to(t.dtype)))
    return pairs


GRAD_CASES = {
    "add": (lambda a, b: a + b, 2),
    "sub": (lambda a, b: a - b, 2),
    "mul": (lambda a, b: a * b, 2),
    "div": (lambda a, b: a / b, 2),
    "exp": (lambda a: torch.exp(a), 1),
    "tanh": (lambda a: torch.tanh(a), 1),
    "sigmoid": (lambda a: torch.sigmoid(a), 1),
    "relu": (lambda a: torch.relu(a), 1),
    "where": (lambda a, b: torch.where(a > 0, a * b, b), 2),
    "clamp": (lambda a: torch.clamp(a, -0.5, 0.75), 1),
    "clamp_min": (lambda a: torch.clamp(a, min=-0.5), 1),
    "neg_abs": (lambda a: -torch.abs(a), 1),
    "maximum": (lambda a, b: torch.maximum(a, b), 2),
    "chain": (lambda a, b: torch.sigmoid(torch.tanh(a * b) + torch.relu(b - a)), 2),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_elementwise_gradients(name):
    fn, nin = GRAD_CASES[name]
    inputs = [make_cpu((7, 13), torch.float32, nonzero=True, seed=k) for k in range(nin)]
    grad_out = make_cpu((7, 13), torch.float32, seed=10)
    for got, expected in _grads(fn, inputs, grad_out):
        assert_ocl_close(got, expected)


def test_gradient_through_views_and_inplace():
    def fn(a):
        b = a.t().clone(memory_format=torch.contiguous_format)
        b.mul_(2)
        b[1:3].add_(1)
        return torch.relu(b).view(-1)

    a = make_cpu((5, 4), torch.float32, seed=1)
    g = make_cpu((20,), torch.float32, seed=2)
    for got, expected in _grads(fn, [a], g):
        assert_ocl_close(got, expected)


def test_gradient_accumulates():
    a = make_cpu((6, 6), torch.float32).to(DEVICE).requires_grad_()
    g = torch.ones(6, 6, device=DEVICE)
    (a * 3).backward(g)
    (a * a).backward(g)
    expected = 3 + 2 * a.detach().cpu()
    assert_ocl_close(a.grad, expected)


def test_gradient_with_broadcasting():
    """Gradients of broadcast operands are summed over the broadcast dimensions (needs sum)."""
    fn = lambda a, b: a * b + b  # noqa: E731
    a = make_cpu((5, 1), torch.float32)
    b = make_cpu((1, 7), torch.float32, seed=1)
    g = make_cpu((5, 7), torch.float32, seed=2)
    for got, expected in _grads(fn, [a, b], g):
        assert_ocl_close(got, expected)


# ------------------------------------------------------------------------------------------
# A small MLP (needs mm, addmm and sum)


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(10, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 16),
        torch.nn.Tanh(),
        torch.nn.Linear(16, 3),
    )


def test_mlp_gradients_match_cpu():
    model = _mlp()
    ref = copy.deepcopy(model).double()
    dev = copy.deepcopy(model).to(DEVICE)
    x = make_cpu((8, 10), torch.float32)
    ref(x.double()).sum().backward()
    loss = dev(x.to(DEVICE)).sum()
    assert loss.device.type == "ocl" and loss.dim() == 0
    loss.backward()
    for (name, p_ref), p_dev in zip(ref.named_parameters(), dev.parameters(), strict=True):
        assert p_dev.grad is not None, name
        assert_ocl_close(p_dev.grad, p_ref.grad.float(), rtol=1e-4, atol=1e-5)


def test_mlp_training_step_without_host_sync():
    """Forward, backward and an SGD step under sync debug mode 'error': nothing may wait for
    the device (no .item(), no host copies)."""
    dev = _mlp().to(DEVICE)
    ref = _mlp().double()
    opt = torch.optim.SGD(dev.parameters(), lr=0.1, momentum=0.9, foreach=False)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9, foreach=False)
    x = make_cpu((8, 10), torch.float32)
    y = make_cpu((8, 3), torch.float32, seed=1)
    xo, yo = x.to(DEVICE), y.to(DEVICE)
    before = torch.ocl.get_sync_debug_mode()
    torch.ocl.set_sync_debug_mode("error")
    try:
        for _ in range(2):
            opt.zero_grad()
            diff = dev(xo) - yo
            loss = (diff * diff).mean()
            loss.backward()
            opt.step()
    finally:
        torch.ocl.set_sync_debug_mode(before)
    assert torch.ocl.get_sync_debug_mode() == before
    for _ in range(2):
        ref_opt.zero_grad()
        d = ref(x.double()) - y.double()
        (d * d).mean().backward()
        ref_opt.step()
    for p_dev, p_ref in zip(dev.parameters(), ref.parameters(), strict=True):
        assert_ocl_close(p_dev.detach(), p_ref.detach().float(), rtol=1e-4, atol=1e-5)


def test_no_grad_and_detach():
    a = make_cpu((4,), torch.float32).to(DEVICE).requires_grad_()
    with torch.no_grad():
        b = a * 2
    assert not b.requires_grad
    c = (a * 2).detach()
    assert not c.requires_grad and c.device.type == "ocl"
