"""channel_shuffle / native_channel_shuffle (csrc/ops/ChannelShuffle.cpp) and rrelu_with_noise
(csrc/ops/RReLU.cpp) on the ocl device against PyTorch on the CPU, with the CPU fallback set to
raise. RReLU's training slopes come from the ocl generator, so they are checked by their
properties (range, noise = 1 for positive inputs, output = input * noise, gradient = noise) and
by reproducibility under a seeded torch.Generator(device="ocl").
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import ALL_DTYPES, DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_channel_shuffle_dtypes(dtype):
    skip_unsupported(dtype)
    x = make_cpu((2, 6, 3, 5), dtype)
    for g in (1, 2, 3, 6):
        assert_ocl_close(torch.channel_shuffle(x.to(DEVICE), g), torch.channel_shuffle(x, g))
        got = torch.native_channel_shuffle(x.to(DEVICE), g)
        assert_ocl_close(got, torch.native_channel_shuffle(x, g))


def test_channel_shuffle_layouts_grad_and_errors():
    x = make_cpu((3, 8, 4, 5), torch.float64)
    cl = x.to(memory_format=torch.channels_last)
    got = torch.channel_shuffle(cl.to(DEVICE), 4)
    assert got.is_contiguous(memory_format=torch.channels_last)
    assert_ocl_close(got, torch.channel_shuffle(cl, 4))
    t = x.transpose(2, 3)
    assert_ocl_close(torch.channel_shuffle(t.to(DEVICE), 2), torch.channel_shuffle(t, 2))
    one = make_cpu((1, 1, 1), torch.float64)
    assert_ocl_close(torch.channel_shuffle(one.to(DEVICE), 1), torch.channel_shuffle(one, 1))
    e = torch.empty(0, 4, 3)
    assert_ocl_close(torch.channel_shuffle(e.to(DEVICE), 2), torch.channel_shuffle(e, 2))
    xd = x.to(DEVICE).requires_grad_()
    xc = x.clone().requires_grad_()
    g = make_cpu(x.shape, torch.float64, seed=3)
    torch.nn.ChannelShuffle(4)(xd).backward(g.to(DEVICE))
    torch.nn.ChannelShuffle(4)(xc).backward(g)
    assert_ocl_close(xd.grad, xc.grad)
    for dev in ("cpu", DEVICE):
        with pytest.raises(RuntimeError, match="divisible by groups"):
            torch.channel_shuffle(x.to(dev), 3)
        with pytest.raises(RuntimeError, match="must be positive"):
            torch.channel_shuffle(x.to(dev), 0)
        with pytest.raises(RuntimeError, match="expects input with > 2 dims"):
            torch.channel_shuffle(x[0, 0].to(dev), 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
def test_rrelu_eval_matches_cpu(dtype):
    skip_unsupported(dtype)
    x = make_cpu((7, 13), dtype)
    got = F.rrelu(x.to(DEVICE), 0.1, 0.3, training=False)
    assert_ocl_close(got, F.rrelu(x.double(), 0.1, 0.3, training=False).to(dtype))
    xd = x.double().to(DEVICE).requires_grad_()
    xc = x.double().requires_grad_()
    F.rrelu(xd, 0.1, 0.3).sum().backward()
    F.rrelu(xc, 0.1, 0.3).sum().backward()
    assert_ocl_close(xd.grad, xc.grad)


def test_rrelu_training_properties_and_generator():
    x = make_cpu((50, 41), torch.float64)
    x[0, :5] = torch.tensor([0.0, -0.0, float("nan"), float("inf"), -float("inf")])
    xd = x.to(DEVICE).requires_grad_()
    noise = torch.empty(0, dtype=torch.float64, device=DEVICE)
    out = torch.ops.aten.rrelu_with_noise(xd, noise, 0.1, 0.3, True)
    out.backward(torch.ones_like(out))
    n = noise.cpu()
    assert n.shape == x.shape
    pos = x > 0
    assert torch.all(n[pos] == 1)
    neg = ~pos & ~x.isnan()
    assert torch.all((n[neg] >= 0.1) & (n[neg] <= 0.3))
    assert n[neg].std() > 0.04  # drawn, not a constant
    torch.testing.assert_close(out.detach().cpu(), x * n, equal_nan=True)
    torch.testing.assert_close(xd.grad.cpu(), n)
    # the ocl generator: the same seed gives the same slopes, another seed others
    outs = []
    for seed in (5, 5, 6):
        g = torch.Generator(device=DEVICE).manual_seed(seed)
        noise = torch.empty_like(x, device=DEVICE)
        outs.append(torch.ops.aten.rrelu_with_noise(x.to(DEVICE), noise, 0.125, 1 / 3, True, g))
    outs = [o.cpu() for o in outs]
    torch.testing.assert_close(outs[0], outs[1], equal_nan=True)
    assert not torch.equal(outs[0][x < 0], outs[2][x < 0])


def test_rrelu_inplace_module_and_no_wait():
    x = make_cpu((8, 9), torch.float32).to(DEVICE)
    m = torch.nn.RReLU(0.2, 0.4).train()
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    y = m(x)
    z = x.clone()
    F.rrelu_(z, 0.2, 0.4, training=True)
    assert torch.ocl.host_wait_count() == before
    for r in (y, z):
        ratio = (r.cpu() / x.cpu())[x.cpu() < 0]
        assert torch.all((ratio >= 0.2 - 1e-6) & (ratio <= 0.4 + 1e-6))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.1, training=True)
