"""Small networks trained one step with torch.compile (Inductor) on ocl against float64 on the
CPU: a CNN (convolutions extern, batch norm and pooling around generated kernels) and a
transformer encoder layer with an embedding (attention, layer norm, dropout-free). Slow: tens of
seconds of Inductor compilation each (``pytest -m slow``)."""

from __future__ import annotations

import copy

import pytest
import torch
from ocl_testing import DEVICE

pytestmark = pytest.mark.slow


def check_training_step(model, x, y):
    ref = copy.deepcopy(model).double()
    expected = torch.nn.functional.cross_entropy(ref(x.double() if x.is_floating_point() else x), y)
    expected.backward()
    dev = copy.deepcopy(model).to(DEVICE)
    torch._dynamo.reset()
    step = torch.compile(lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y))
    with torch.ocl.fallback_mode("error"):
        loss = step(dev, x.to(DEVICE), y.to(DEVICE))
        loss.backward()
    torch.testing.assert_close(loss.cpu().double(), expected.detach(), rtol=1e-5, atol=1e-6)
    for (name, p), q in zip(dev.named_parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu().double(), q.grad, rtol=1e-4, atol=1e-5, msg=name)


def test_cnn_training_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1),
        torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 10),
    )
    check_training_step(model, torch.randn(4, 3, 16, 16), torch.randint(10, (4,)))


class _Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 32)
        self.layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.head = torch.nn.Linear(32, 5)

    def forward(self, i):
        return self.head(self.layer(self.emb(i)).mean(1))


def test_transformer_encoder_training_step():
    torch.manual_seed(0)
    check_training_step(_Encoder(), torch.randint(50, (3, 7)), torch.randint(5, (3,)))


def test_attention_training_with_dynamic_shapes():
    # ATen's composite scaled_dot_product_attention asks the device's backend choice with fake
    # tensors of symbolic sizes here: the choice must read SymInts (it once called numel()).
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    dev = copy.deepcopy(mha).to(DEVICE)
    torch._dynamo.reset()
    step = torch.compile(lambda m, x: m(x, x, x, need_weights=False)[0], dynamic=True)
    for shape in [(2, 5, 16), (3, 7, 16)]:
        x = torch.randn(*shape)
        ref_x = x.double().requires_grad_()
        ref = copy.deepcopy(mha).double()
        expected = ref(ref_x, ref_x, ref_x, need_weights=False)[0]
        expected.square().sum().backward()
        dev_x = x.to(DEVICE).requires_grad_()
        dev.zero_grad()
        with torch.ocl.fallback_mode("error"):
            out = step(dev, dev_x)
            out.square().sum().backward()
        torch.testing.assert_close(
            out.detach().cpu().double(), expected.detach(), rtol=1e-4, atol=1e-5
        )
        torch.testing.assert_close(dev_x.grad.cpu().double(), ref_x.grad, rtol=1e-4, atol=1e-5)
        for (name, p), q in zip(dev.named_parameters(), ref.parameters(), strict=True):
            torch.testing.assert_close(
                p.grad.cpu().double(), q.grad, rtol=1e-4, atol=1e-4, msg=name
            )
