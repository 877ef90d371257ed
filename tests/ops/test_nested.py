"""Nested tensors on ocl (csrc/ops/nested/, kernels/nested.cl): torch.nested construction and
round trips (strided and jagged layouts) over awkward component shapes, the ops users call on
them, and nn.TransformerEncoder's nested fast path with src_key_padding_mask (the BERT-style
inference default), each against the CPU with the CPU fallback raising (tests/conftest.py).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
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


def _components(shapes, dtype=torch.float32, seed=0, transposed=False):
    out = []
    for i, s in enumerate(shapes):
        if transposed and len(s) == 2:
            out.append(make_cpu((s[1], s[0]), dtype, seed=seed + i).t())
        else:
            out.append(make_cpu(s, dtype, seed=seed + i))
    return out


def _same_nested(got, expected_components, exact=True, device=DEVICE):
    parts = got.unbind()
    assert len(parts) == len(expected_components)
    for g, e in zip(parts, expected_components, strict=True):
        assert g.device.type == torch.device(device).type
        if exact:
            torch.testing.assert_close(g.cpu(), e, rtol=0, atol=0)
        else:
            torch.testing.assert_close(g.cpu().double(), e.double(), rtol=1e-5, atol=1e-5)


SHAPES = [
    pytest.param([(3, 4), (1, 4), (5, 4)], id="lengths"),
    pytest.param([(2, 5)], id="one"),
    pytest.param([(3, 4), (0, 4), (2, 4)], id="empty-component"),
    pytest.param([(1, 1), (1, 1)], id="ones"),
    pytest.param([(2, 3, 4), (1, 2, 4), (3, 1, 4)], id="3d"),
    pytest.param([(5,), (2,), (7,)], id="1d"),
    pytest.param([(37, 9), (64, 9), (1, 9)], id="odd"),
]


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16], ids=str)
def test_nested_tensor_round_trip(shapes, dtype):
    comps = _components(shapes, dtype)
    nt = torch.nested.nested_tensor([c.to(DEVICE) for c in comps], device=DEVICE)
    assert nt.is_nested and nt.device.type == DEVICE.type
    _same_nested(nt, comps)
    ref = torch.nested.nested_tensor(comps).to_padded_tensor(-3)
    got = nt.to_padded_tensor(-3)
    torch.testing.assert_close(got.cpu(), ref, rtol=0, atol=0)
    # back to CPU and to the device again
    _same_nested(nt.cpu(), comps, device="cpu")
    _same_nested(torch.nested.nested_tensor(comps).to(DEVICE), comps)


@pytest.mark.parametrize("shapes", [SHAPES[0], SHAPES[2], SHAPES[6]])
def test_as_nested_tensor_of_noncontiguous_components(shapes):
    comps = _components(shapes, transposed=True)
    assert not comps[0].is_contiguous() or comps[0].numel() <= 1
    nt = torch.nested.as_nested_tensor([c.to(DEVICE) for c in comps])
    _same_nested(nt, comps)
    torch.testing.assert_close(
        torch.nested.to_padded_tensor(nt, 0.5).cpu(),
        torch.nested.to_padded_tensor(torch.nested.as_nested_tensor(comps), 0.5),
        rtol=0,
        atol=0,
    )


def test_to_padded_tensor_output_size_and_errors():
    comps = _components([(2, 3), (4, 3)])
    nt = torch.nested.nested_tensor(comps).to(DEVICE)
    ref = torch.nested.nested_tensor(comps).to_padded_tensor(1.5, (3, 6, 5))
    torch.testing.assert_close(nt.to_padded_tensor(1.5, (3, 6, 5)).cpu(), ref, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="Truncation is not supported"):
        nt.to_padded_tensor(0.0, (2, 3, 3))
    with pytest.raises(RuntimeError, match="Broadcasting is not supported"):
        nt.to_padded_tensor(0.0, (2, 4))
    # the device stays usable
    torch.testing.assert_close(nt.to_padded_tensor(0.0).cpu()[1], comps[1])


def test_to_padded_of_a_transposed_view():
    comps = _components([(2, 3), (4, 3), (1, 3)])
    nt = torch.nested.nested_tensor(comps).to(DEVICE).transpose(1, 2)  # strided, not contiguous
    ref = torch.nested.nested_tensor([c.t() for c in comps]).to_padded_tensor(0.0)
    torch.testing.assert_close(nt.to_padded_tensor(0.0).cpu(), ref, rtol=0, atol=0)


def test_conversions_do_not_wait():
    comps = _components([(3, 4), (1, 4), (5, 4)])
    nt = torch.nested.nested_tensor(comps).to(DEVICE)
    torch.ocl.synchronize()
    waits = torch.ocl.host_wait_count()
    padded = nt.to_padded_tensor(0.0)
    back = torch.ops.aten._nested_from_padded(padded, nt._nested_tensor_size())
    assert torch.ocl.host_wait_count() == waits
    _same_nested(back, comps)


@pytest.mark.parametrize("fuse", [False, True])
def test_nested_from_padded(fuse):
    sizes = torch.tensor([[3, 8], [1, 8], [0, 8], [4, 8]])
    if fuse:  # [B, heads, T, head_dim] packed as [T_b, heads * head_dim]
        padded = make_cpu((4, 2, 5, 4), torch.float32, seed=3)
    else:
        padded = make_cpu((4, 5, 8), torch.float32, seed=3)
    ref = torch.ops.aten._nested_from_padded(padded, sizes, fuse)
    got = torch.ops.aten._nested_from_padded(padded.to(DEVICE), sizes, fuse)
    _same_nested(got, list(ref.unbind()))


@pytest.mark.parametrize("lengths", [[7, 5, 2], [4, 4], [1], [3, 0, 6]], ids=str)
def test_nested_tensor_from_mask(lengths):
    t = make_cpu((len(lengths), 7, 6), torch.float32, seed=4)
    mask = torch.arange(7).view(1, 7) < torch.tensor(lengths).view(-1, 1)
    ref = torch._nested_tensor_from_mask(t, mask)
    got = torch._nested_tensor_from_mask(t.to(DEVICE), mask.to(DEVICE))
    _same_nested(got, list(ref.unbind()))
    assert torch._nested_tensor_from_mask_left_aligned(t.to(DEVICE), mask.to(DEVICE))


def test_nested_tensor_from_mask_with_gaps():
    t = make_cpu((2, 4, 3), torch.float32)
    mask = torch.tensor([[True, False, True, False], [True, True, False, False]])
    assert not torch._nested_tensor_from_mask_left_aligned(t.to(DEVICE), mask.to(DEVICE))
    with pytest.raises(RuntimeError, match="left-aligned"):
        torch._nested_tensor_from_mask(t.to(DEVICE), mask.to(DEVICE))
    ok = torch._nested_tensor_from_mask(t.to(DEVICE), mask.to(DEVICE), mask_check=False)
    assert ok.size(0) == 2  # the device stays usable


def _pair(shapes, seed=0):
    comps = _components(shapes, seed=seed)
    return torch.nested.nested_tensor(comps), torch.nested.nested_tensor(comps).to(DEVICE)


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(lambda a, b: a + b, id="add"),
        pytest.param(lambda a, b: a * b, id="mul"),
        pytest.param(lambda a, b: a - 2 * b, id="sub-scalar"),
        pytest.param(lambda a, b: a / (b.abs() + 1), id="div"),
        pytest.param(lambda a, b: F.relu(a), id="relu"),
        pytest.param(lambda a, b: F.gelu(a), id="gelu"),
        pytest.param(lambda a, b: F.silu(a), id="silu"),
        pytest.param(lambda a, b: torch.tanh(a), id="tanh"),
        pytest.param(lambda a, b: a.softmax(-1), id="softmax"),
        pytest.param(lambda a, b: a.transpose(1, 2).contiguous(), id="transpose"),
        pytest.param(lambda a, b: torch.matmul(a, b.transpose(1, 2)), id="matmul"),
        pytest.param(lambda a, b: torch.bmm(a, b.transpose(1, 2)), id="bmm"),
        pytest.param(lambda a, b: a.sum(-1, keepdim=True), id="sum"),
        pytest.param(lambda a, b: a.masked_fill(a > 0.5, -1.0), id="masked_fill"),
        pytest.param(lambda a, b: a.clone(), id="clone"),
    ],
)
def test_nested_ops(op):
    shapes = [(3, 6), (1, 6), (5, 6)]
    a_cpu, a = _pair(shapes, seed=0)
    b_cpu, b = _pair(shapes, seed=10)
    ref = op(a_cpu, b_cpu)
    got = op(a, b)
    _same_nested(got, list(ref.unbind()), exact=False)


def test_nested_layer_norm():
    a_cpu, a = _pair([(3, 6), (1, 6), (5, 6)])
    ln = nn.LayerNorm(6)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
        ref = ln(a_cpu)
        got = ln.to(DEVICE)(a)
    _same_nested(got, list(ref.unbind()), exact=False)


def test_nested_linear():
    a_cpu, a = _pair([(3, 6), (1, 6), (5, 6)])
    lin = nn.Linear(6, 5)
    ref = lin(a_cpu)
    got = lin.to(DEVICE)(a)
    _same_nested(got, list(ref.detach().unbind()), exact=False)


def test_nested_layer_norm_of_ragged_last_dim_is_an_error():
    nt = torch.nested.nested_tensor([torch.ones(2, 3), torch.ones(2, 4)]).to(DEVICE)
    w, b = torch.ones(3, device=DEVICE), torch.zeros(3, device=DEVICE)
    with pytest.raises(RuntimeError, match="last dimensions differ"):
        F.layer_norm(nt, (3,), w, b)
    assert F.layer_norm(nt.unbind()[0], (3,), w, b).shape == (2, 3)  # still usable


# ---- nn.TransformerEncoder / nn.MultiheadAttention fast paths -------------------------------


def _encoder(activation, layers=2, d_model=16, heads=4):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        d_model, heads, 32, dropout=0.0, activation=activation, batch_first=True
    )
    return nn.TransformerEncoder(layer, layers).eval()  # enable_nested_tensor=True


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize(
    "lengths", [[7, 5, 2], [7, 7], [1, 6, 3, 7], [4, 0, 7]], ids=lambda v: "-".join(map(str, v))
)
def test_encoder_nested_fast_path(activation, lengths):
    enc = _encoder(activation)
    x = make_cpu((len(lengths), 7, 16), torch.float32, seed=1)
    pad = torch.arange(7).view(1, 7) >= torch.tensor(lengths).view(-1, 1)
    with torch.no_grad():
        ref = enc.double()(x.double(), src_key_padding_mask=pad)
        dev = enc.float().to(DEVICE)
        with _Ops() as ops:
            out = dev(x.to(DEVICE), src_key_padding_mask=pad.to(DEVICE))
    assert "aten._nested_tensor_from_mask" in ops.names, "the nested fast path was not taken"
    assert "aten._transformer_encoder_layer_fwd" in ops.names
    out = out.cpu().double()
    keep = ~pad
    torch.testing.assert_close(out[keep], ref[keep], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(out[pad], ref[pad], rtol=0, atol=0)  # zeros, as on the CPU


def test_encoder_example_from_issue():
    enc = _encoder("relu")
    x = make_cpu((2, 5, 16), torch.float32, seed=2)
    mask = torch.tensor([[False] * 5, [False, False, False, True, True]])
    with torch.no_grad():
        ref = enc(x, src_key_padding_mask=mask)
        out = enc.to(DEVICE)(x.to(DEVICE), src_key_padding_mask=mask.to(DEVICE))
    torch.testing.assert_close(out.cpu()[~mask], ref[~mask], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_on_nested_query(need_weights):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    comps = _components([(5, 16), (2, 16), (7, 16)], seed=5)
    with torch.no_grad():
        ref = [
            mha.double()(c.double()[None], c.double()[None], c.double()[None])[0][0] for c in comps
        ]
        nt = torch.nested.nested_tensor(comps).to(DEVICE)
        dev = mha.float().to(DEVICE)
        out, _ = torch._native_multi_head_attention(
            nt,
            nt,
            nt,
            16,
            4,
            dev.in_proj_weight,
            dev.in_proj_bias,
            dev.out_proj.weight,
            dev.out_proj.bias,
            need_weights=need_weights,
        )
    for g, e in zip(out.unbind(), ref, strict=True):
        torch.testing.assert_close(g.cpu().double(), e, rtol=1e-4, atol=1e-4)


# ---- jagged layout (torch.nested's Python NJT over dense ops) ---------------------------------


@pytest.mark.parametrize(
    "shapes", [[(3, 4), (1, 4), (5, 4)], [(2, 5)], [(3, 4), (0, 4), (2, 4)], [(6, 2, 3), (1, 2, 3)]]
)
def test_jagged_round_trip(shapes):
    comps = _components(shapes, seed=7)
    nt = torch.nested.nested_tensor([c.to(DEVICE) for c in comps], layout=torch.jagged)
    assert nt.layout == torch.jagged and nt.device.type == DEVICE.type
    _same_nested(nt, comps)
    ref = torch.nested.to_padded_tensor(
        torch.nested.nested_tensor(comps, layout=torch.jagged), -1.0
    )
    padded = torch.nested.to_padded_tensor(nt, -1.0)
    torch.testing.assert_close(padded.cpu(), ref, rtol=0, atol=0)
    back = torch.nested.narrow(
        padded, 1, 0, torch.tensor([c.shape[0] for c in comps]).to(DEVICE), layout=torch.jagged
    )
    _same_nested(back.contiguous() if hasattr(back, "contiguous") else back, comps)


def test_jagged_from_padded_and_ops():
    comps = _components([(3, 4), (1, 4), (5, 4)], seed=8)
    nt = torch.nested.nested_tensor([c.to(DEVICE) for c in comps], layout=torch.jagged)
    ref = torch.nested.nested_tensor(comps, layout=torch.jagged)
    for op in (lambda t: t * 2 + 1, lambda t: F.relu(t), lambda t: t.softmax(-1)):
        _same_nested(op(nt), list(op(ref).unbind()), exact=False)
    padded = torch.nested.to_padded_tensor(nt, 0.0)
    offsets = nt.offsets()
    values = torch.ops.aten._padded_dense_to_jagged_forward(padded, [offsets], nt.values().size(0))
    torch.testing.assert_close(values.cpu(), torch.cat(comps), rtol=0, atol=0)


def test_jagged_sdpa():
    comps_q = _components([(3, 2, 8), (5, 2, 8), (1, 2, 8)], seed=9)  # [T_b, heads, head_dim]
    q = torch.nested.nested_tensor([c.to(DEVICE) for c in comps_q], layout=torch.jagged)
    q = q.transpose(1, 2)  # [B, heads, T*, head_dim]
    out = F.scaled_dot_product_attention(q, q, q)
    for got, c in zip(out.transpose(1, 2).unbind(), comps_q, strict=True):
        t = c.transpose(0, 1).double()
        e = F.scaled_dot_product_attention(t, t, t).transpose(0, 1)
        torch.testing.assert_close(got.cpu().double(), e, rtol=1e-4, atol=1e-4)


def test_nested_autograd_through_linear_relu_and_padding():
    comps = _components([(2, 3), (4, 3), (1, 3)], dtype=torch.float64, seed=12)
    torch.manual_seed(0)
    lin = nn.Linear(3, 2).double()
    grads = []
    for dev in ("cpu", DEVICE):
        layer = lin.to(dev)
        layer.zero_grad()
        a = torch.nested.nested_tensor([c.to(dev) for c in comps], requires_grad=True)
        F.relu(layer(a)).to_padded_tensor(0.0).pow(2).sum().backward()
        grads.append((layer.weight.grad.cpu().clone(), layer.bias.grad.cpu().clone()))
    for got, expected in zip(grads[1], grads[0], strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
