"""torch.compile on ocl (python/torch_ocl/_compile.py, _inductor/): the default backend
(inductor) runs with generated OpenCL kernels, what it cannot serve refuses with the way out,
aot_eager runs the captured graph natively, and other devices keep inductor. The generated
kernels themselves are tested in tests/inductor."""

from __future__ import annotations

import copy

import pytest
import torch
from ocl_testing import DEVICE


def _fn(a):
    return (a * 2).sin().sum()


def test_inductor_runs_on_ocl():
    torch._dynamo.reset()
    x = torch.randn(4, 8, dtype=torch.float64)
    out = torch.compile(_fn)(x.float().to(DEVICE))
    torch.testing.assert_close(out.cpu(), _fn(x).float(), rtol=1e-5, atol=1e-5)
    torch._dynamo.reset()


def test_cpp_wrapper_refuses_with_the_way_out():
    torch._dynamo.reset()
    with torch._inductor.config.patch(cpp_wrapper=True):
        with pytest.raises(Exception, match="C\\+\\+ wrapper .* has no ocl version") as info:
            torch.compile(_fn)(torch.randn(4, 8, device=DEVICE))
    assert "backend='aot_eager'" in str(info.value)
    torch._dynamo.reset()


def test_aot_eager_trains_like_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.GELU(),
        torch.nn.Flatten(),
        torch.nn.Linear(8 * 6 * 6, 5),
    ).to(DEVICE)
    eager = copy.deepcopy(model)
    x = torch.randn(4, 3, 6, 6).to(DEVICE)
    y = torch.randint(5, (4,)).to(DEVICE)
    compiled = torch.compile(model, backend="aot_eager")
    with torch.ocl.fallback_mode("error"):
        for m in (compiled, eager):
            torch.nn.functional.cross_entropy(m(x), y).backward()
    for (name, p), q in zip(model.named_parameters(), eager.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu(), q.grad.cpu(), rtol=1e-5, atol=1e-6, msg=name)
    torch._dynamo.reset()


def test_cpu_keeps_inductor():
    torch._dynamo.reset()
    x = torch.randn(4, 8)
    torch.testing.assert_close(torch.compile(_fn)(x), _fn(x))
    torch._dynamo.reset()
