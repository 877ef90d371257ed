"""The fused LSTM and GRU cells (csrc/ops/RnnCell.cpp) against float64 on the CPU, in the cases
tests/ops/test_modules.py does not reach: a loss on only one of the LSTM's outputs (the other's
gradient undefined), no bias, one hidden unit, batch 1, NaN inputs, and multi-layer modules with
a sequence. The CPU fallback is set to raise for tests/ops, so these run natively."""

from __future__ import annotations

import copy

import pytest
import torch
from ocl_testing import DEVICE, make_cpu
from torch import nn


def _compare(make, inputs, loss_of, call=lambda m, xs: m(*xs)):
    torch.manual_seed(0)
    ref = make().double()
    dev = copy.deepcopy(ref).float().to(DEVICE)
    xs = [make_cpu(s, torch.float64, seed=i + 1) for i, s in enumerate(inputs)]
    xr = [x.clone().requires_grad_() for x in xs]
    xd = [x.float().to(DEVICE).requires_grad_() for x in xs]
    loss_of(call(ref, xr)).backward()
    loss_of(call(dev, xd)).backward()
    for a, b in zip(xd, xr, strict=True):
        torch.testing.assert_close(a.grad.cpu().double(), b.grad, rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(dev.named_parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu().double(), q.grad, rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("which", ["h", "c", "both"])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_losses_on_either_output(which, bias):
    def loss(out):
        h, c = out
        return {"h": h.sin().sum(), "c": c.cos().sum(), "both": (h * c).sum()}[which]

    _compare(
        lambda: nn.LSTMCell(5, 3, bias=bias),
        [(4, 5), (4, 3), (4, 3)],
        loss,
        call=lambda m, xs: m(xs[0], (xs[1], xs[2])),
    )


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(1, 5, 1), (3, 4, 6)], ids=["batch1-hidden1", "3x4-6"])
def test_gru_cell(bias, shape):
    B, n_in, H = shape
    _compare(lambda: nn.GRUCell(n_in, H, bias=bias), [(B, n_in), (B, H)], lambda h: h.exp().sum())


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_two_layer_sequence_batch_first(cls):
    def loss(out):
        y, _ = out
        return (y * y).sum()

    _compare(lambda: cls(4, 5, num_layers=2, batch_first=True), [(2, 7, 4)], loss)


def test_nan_input_reaches_the_outputs_it_feeds():
    cell = nn.LSTMCell(3, 2).to(DEVICE)
    x = torch.randn(2, 3)
    x[1, 0] = float("nan")
    h, c = cell(x.to(DEVICE))
    ref_h, ref_c = copy.deepcopy(cell).cpu()(x)
    assert torch.equal(h.isnan().cpu(), ref_h.isnan()) and torch.equal(
        c.isnan().cpu(), ref_c.isnan()
    )
    assert h[1].isnan().all() and not h[0].isnan().any()
