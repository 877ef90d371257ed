"""Convolutions in compiled graphs get the memory formats torch-ocl's native kernels give
(python/torch_ocl/_inductor/fake_conv.py): FakeTensor's convolution must predict the real
result's strides, or the compiled wrapper's stride check fails on the real result (it did for
every torchvision CNN: Inductor makes CNN operands channels-last)."""

from __future__ import annotations

import copy
import itertools

import pytest
import torch
from ocl_testing import DEVICE
from torch._subclasses.fake_tensor import FakeTensorMode

CL = torch.channels_last
ARGS = ([1], [1], [1], False, [0], 1)  # stride, padding, dilation, transposed, out pad, groups


@pytest.mark.parametrize(("x_cl", "w_cl"), list(itertools.product([False, True], repeat=2)))
def test_fake_convolution_strides_match_the_native_kernels(x_cl, w_cl):
    x = torch.randn(2, 3, 9, 7)
    w = torch.randn(5, 3, 3, 3)
    x, w = (t.to(memory_format=CL) if cl else t for t, cl in ((x, x_cl), (w, w_cl)))
    gy = torch.randn(2, 5, 9, 7)
    real = torch.ops.aten.convolution(x.to(DEVICE), w.to(DEVICE), None, *ARGS)
    real_grads = torch.ops.aten.convolution_backward(
        gy.to(DEVICE), x.to(DEVICE), w.to(DEVICE), [5], *ARGS, [True, True, True]
    )
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fx, fw, fgy = (mode.from_tensor(t.to(DEVICE)) for t in (x, w, gy))
        fake = torch.ops.aten.convolution(fx, fw, None, *ARGS)
        fake_grads = torch.ops.aten.convolution_backward(fgy, fx, fw, [5], *ARGS, [True] * 3)
    assert fake.stride() == real.stride()
    for f, r in zip(fake_grads, real_grads, strict=True):
        assert f.shape == r.shape and f.stride() == r.stride()


def test_compiled_cnn_step_with_channels_last_input():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 4, 1),
    )
    x = torch.randn(2, 3, 16, 16).to(memory_format=CL)
    dev = copy.deepcopy(model).to(DEVICE)
    ref = copy.deepcopy(model).double()
    torch._dynamo.reset()
    step = torch.compile(lambda m, x: m(x).square().mean())
    with torch.ocl.fallback_mode("error"):
        loss = step(dev, x.to(DEVICE))
        loss.backward()
    expected = ref(x.double()).square().mean()
    expected.backward()
    torch.testing.assert_close(loss.cpu().double(), expected.detach(), rtol=1e-5, atol=1e-6)
    for p, q in zip(dev.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu().double(), q.grad, rtol=1e-4, atol=1e-5)
