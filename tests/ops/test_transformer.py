"""The inference fast path of nn.TransformerEncoderLayer / nn.MultiheadAttention on ocl
(csrc/ops/Transformer.cpp): eval mode without autograd calls fused ATen ops
(_transformer_encoder_layer_fwd, _native_multi_head_attention, _transform_bias_rescale_qkv,
_masked_softmax, _addmm_activation). Each is checked against the CPU (float64 where rounding
matters), and the modules are checked to take the fast path on ocl (the ops reach the dispatcher)
with the CPU fallback raising (tests/conftest.py).
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, make_cpu
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode


class _Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.add(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


def _close(got, expected, tol=1e-5):
    torch.testing.assert_close(got.cpu().double(), expected.double(), rtol=tol, atol=tol)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("mask", ["none", "padding", "attention"])
def test_encoder_fast_path(norm_first, activation, mask):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        d_model=16,
        nhead=4,
        dim_feedforward=24,
        dropout=0.0,
        activation=activation,
        batch_first=True,
        norm_first=norm_first,
    )
    enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    x = make_cpu((3, 7, 16), torch.float32, seed=1)
    kwargs = {}
    if mask == "padding":
        pad = torch.zeros(3, 7, dtype=torch.bool)
        pad[1, 5:] = True
        pad[2, 2:] = True
        kwargs["src_key_padding_mask"] = pad
    elif mask == "attention":
        kwargs["mask"] = torch.triu(torch.ones(7, 7, dtype=torch.bool), 1)
    ref = enc.double()(x.double(), **{k: v for k, v in kwargs.items()})  # the regular path
    dev = enc.float().to(DEVICE)
    with torch.no_grad(), _Ops() as ops:
        out = dev(x.to(DEVICE), **{k: v.to(DEVICE) for k, v in kwargs.items()})
    assert "aten._transformer_encoder_layer_fwd" in ops.names, "the fast path was not taken"
    _close(out, ref, 1e-4)


def test_multihead_attention_fast_path():
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x = make_cpu((2, 5, 16), torch.float32, seed=2)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    pad[1, 3:] = True
    ref = mha.double()(x.double(), x.double(), x.double(), key_padding_mask=pad)[0]
    dev = mha.float().to(DEVICE)
    xd = x.to(DEVICE)
    with torch.no_grad(), _Ops() as ops:
        out = dev(xd, xd, xd, key_padding_mask=pad.to(DEVICE), need_weights=False)[0]
    assert "aten._native_multi_head_attention" in ops.names, "the fast path was not taken"
    _close(out, ref, 1e-4)


@pytest.mark.parametrize(
    "shape, mask_shape, mask_type, dim",
    [
        ((2, 3, 5, 5), (2, 3, 5, 5), 2, 3),
        ((2, 3, 5, 5), (2, 5), 1, 3),
        ((2, 3, 5, 5), (2, 5), 1, 1),  # not the last dim: the mask is expanded
        ((2, 3, 5, 5), (5, 5), 0, 3),
        ((4, 7), (4, 7), None, 1),
        ((3, 4, 6), (3, 4, 6), None, 0),
        ((0, 3), (0, 3), None, 1),
    ],
)
def test_masked_softmax(shape, mask_shape, mask_type, dim):
    x = make_cpu(shape, torch.float32, seed=3)
    g = torch.Generator().manual_seed(4)
    mask = torch.rand(mask_shape, generator=g) < 0.4
    if x.numel():
        x.view(-1)[0] = float("nan")
        x.view(-1)[-1] = float("inf")
    if len(mask_shape) == 2 and mask.numel():
        mask[0] = True  # a row masked everywhere: NaN on the CPU
    expected = torch._masked_softmax(x, mask, dim, mask_type)
    got = torch._masked_softmax(x.to(DEVICE), mask.to(DEVICE), dim, mask_type)
    torch.testing.assert_close(got.cpu(), expected, equal_nan=True, rtol=1e-5, atol=1e-6)


def test_masked_softmax_backward():
    x = make_cpu((3, 4, 6), torch.float32, seed=5)
    mask = torch.rand(3, 4, 6, generator=torch.Generator().manual_seed(6)) < 0.3
    grad = make_cpu((3, 4, 6), torch.float32, seed=7)
    out = torch._masked_softmax(x, mask, 2)
    expected = torch.ops.aten._masked_softmax_backward(grad, out, mask, 2)
    got = torch.ops.aten._masked_softmax_backward(
        grad.to(DEVICE), out.to(DEVICE), mask.to(DEVICE), 2
    )
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-5, atol=1e-6)


def test_masked_softmax_errors():
    x = torch.randn(2, 3, 4, 4)
    for device in ("cpu", DEVICE):
        with pytest.raises(RuntimeError, match="Mask should be a boolean tensor"):
            torch._masked_softmax(x.to(device), torch.ones(2, 3, 4, 4).to(device), 3, 2)
        with pytest.raises(RuntimeError, match="mask shape should be"):
            torch._masked_softmax(x.to(device), torch.ones(3, 4, dtype=torch.bool).to(device), 3, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_transform_bias_rescale_qkv(dtype):
    qkv = make_cpu((2, 5, 3 * 12), dtype, seed=8)
    bias = make_cpu((3 * 12,), dtype, seed=9)
    expected = torch._transform_bias_rescale_qkv(qkv, bias, 3)
    got = torch._transform_bias_rescale_qkv(qkv.to(DEVICE), bias.to(DEVICE), 3)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g.cpu(), e, rtol=0, atol=0)


@pytest.mark.parametrize("use_gelu", [False, True])
def test_addmm_activation(use_gelu):
    bias, a, b = (
        make_cpu(s, torch.float32, seed=10 + i) for i, s in enumerate([(7,), (5, 9), (9, 7)])
    )
    expected = torch._addmm_activation(bias.double(), a.double(), b.double(), use_gelu=use_gelu)
    got = torch._addmm_activation(bias.to(DEVICE), a.to(DEVICE), b.to(DEVICE), use_gelu=use_gelu)
    _close(got, expected)
    out = torch.empty(0, device=DEVICE)
    torch._addmm_activation(bias.to(DEVICE), a.to(DEVICE), b.to(DEVICE), use_gelu=use_gelu, out=out)
    _close(out, expected)
