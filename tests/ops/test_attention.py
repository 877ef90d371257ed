"""torch.nn.functional.scaled_dot_product_attention on ocl against the CPU.

Two native paths (csrc/ops/Attention.cpp): the fused kernel of kernels/attention.cl, reached
through PyTorch's PrivateUse1 entry points (the _fused_sdp_choice_stub picks
SDPBackend.OVERRIDEABLE), and ATen's math path (matmul, _safe_softmax, dropout, tril) for what
the fused kernel does not take (head dims > 128, float64, inputs that are not 3-D or 4-D, ...).
Results and gradients of q, k, v (and of a float mask) are compared with the float64 CPU
result; tests/ops runs with the CPU fallback raising, so every test here runs natively.
Dropout is checked through its statistics and through a forward + backward whose mask is
recovered from the output and fed to ATen's math reference.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, make_cpu, skip_unsupported
from torch.nn.attention import SDPBackend, sdpa_kernel

FUSED = "ScaledDotProductFusedAttentionOverrideableBackward0"
BACKEND = {int(b.value): b for b in SDPBackend.__members__.values()}

# Results of sums over up to a few hundred products of values in [-2, 2): float32 accumulates
# in float on both sides of the comparison with float64; half/bfloat16 round q, k, v and the
# result (inputs are rounded to the dtype before the float64 reference sees them).
TOL = {
    torch.float32: dict(rtol=2e-5, atol=2e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float16: dict(rtol=2e-3, atol=4e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=3e-2),
}


def _ran_fused(out, depth=3):
    """Whether the fused kernel's autograd node made `out` (torch 2.15 wraps 3-D inputs in an
    unsqueeze / squeeze around it)."""
    nodes = [out.grad_fn]
    for _ in range(depth):
        if any(n is not None and n.name() == FUSED for n in nodes):
            return True
        nodes = [m for n in nodes if n is not None for m, _ in n.next_functions]
    return False


def _inputs(shapes, dtype, seed=0):
    """CPU tensors of `dtype` (rounded there, so the float64 reference sees the same values)."""
    return [
        make_cpu(s, torch.float64, low=-2, high=2, seed=seed + i).to(dtype)
        for i, s in enumerate(shapes)
    ]


def _leaves(ts, device, dtype=None):
    return [t.to(device, dtype).detach().requires_grad_() for t in ts]


def _close(actual, expected, dtype, scale=1.0):
    tol = TOL[dtype]
    assert_ocl_close(actual, expected.to(actual.dtype), rtol=tol["rtol"], atol=tol["atol"] * scale)


def check_sdpa(
    q, k, v, *, dtype=torch.float32, mask=None, mask_grad=False, fused=True, view=None, **kwargs
):
    """SDPA of CPU tensors q, k, v (and mask) on ocl in `dtype` against float64 on the CPU:
    output and gradients; `fused` says whether the fused kernel must have run. `view` is applied
    to the inputs on both sides (layouts, slices)."""
    skip_unsupported(dtype)
    qd, kd, vd = _leaves([q, k, v], DEVICE, dtype)
    qc, kc, vc = _leaves([q, k, v], "cpu", dtype)
    qr, kr, vr = _leaves([qc, kc, vc], "cpu", torch.float64)
    md = mc = None
    if mask is not None:
        md = mask.to(DEVICE)
        mc = mask if mask.dtype == torch.bool else mask.double()
        if mask_grad:
            md, mc = md.requires_grad_(), mc.detach().requires_grad_()
    view = view or (lambda t: t)
    out = F.scaled_dot_product_attention(*map(view, (qd, kd, vd)), attn_mask=md, **kwargs)
    with sdpa_kernel([SDPBackend.MATH]):  # the CPU's math path (its flash kernel gives NaN
        # for a negative scale with is_causal, torch 2.13)
        ref = F.scaled_dot_product_attention(*map(view, (qr, kr, vr)), attn_mask=mc, **kwargs)
    assert _ran_fused(out) == fused, out.grad_fn.name()
    _close(out, ref.detach(), dtype)
    g = make_cpu(ref.shape, torch.float64, seed=99).to(dtype)
    out.backward(g.to(DEVICE))
    ref.backward(g.double())
    scale = 4.0 if dtype in (torch.float16, torch.bfloat16) else 1.0
    for a, b in ((qd, qr), (kd, kr), (vd, vr)):
        _close(a.grad, b.grad, dtype, scale)
    if mask_grad:
        assert_ocl_close(md.grad, mc.grad.to(md.grad.dtype), rtol=1e-4, atol=1e-5 * 4)
    return out


def _qkv(B, H, L, S, D, DV=None, HK=None, dtype=torch.float32, seed=0):
    HK = H if HK is None else HK
    return _inputs([(B, H, L, D), (B, HK, S, D), (B, HK, S, DV or D)], dtype, seed)


# ---- fused kernel: shapes, causal, head dims, dtypes ----


@pytest.mark.parametrize(
    "L,S", [(1, 1), (7, 7), (33, 33), (129, 129), (7, 33), (33, 7), (1, 129)], ids=str
)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_sequence_lengths(L, S, causal):
    check_sdpa(*_qkv(2, 3, L, S, 16), is_causal=causal)


# Every head dim pair is a kernel build (tens of seconds on a loaded 2-core PoCL machine): the
# default run takes two, one with odd padding (24 -> 3 float8, 40 -> 5) and one at the limit.
@pytest.mark.parametrize(
    "D,DV",
    [
        (24, 40),
        (128, 128),
        pytest.param(1, 1, marks=pytest.mark.slow),
        pytest.param(8, 8, marks=pytest.mark.slow),
        pytest.param(64, 64, marks=pytest.mark.slow),
        pytest.param(100, 7, marks=pytest.mark.slow),
    ],
    ids=str,
)
def test_head_dims(D, DV):
    check_sdpa(*_qkv(1, 2, 19, 21, D, DV), is_causal=D == 64)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_half_dtypes(dtype, causal):
    check_sdpa(*_qkv(2, 2, 33, 33, 16, dtype=dtype), dtype=dtype, is_causal=causal)


def test_half_dtypes_with_mask():
    q, k, v = _qkv(1, 2, 9, 13, 16, dtype=torch.float16)
    mask = make_cpu((9, 13), torch.float64, seed=5).to(torch.float16)
    check_sdpa(q, k, v, dtype=torch.float16, mask=mask)
    # a float32 mask with half q, k, v (allowed by PyTorch: the mask is added in float)
    check_sdpa(q, k, v, dtype=torch.float16, mask=mask.float())


def test_batch_and_heads_large():
    check_sdpa(*_qkv(3, 5, 70, 45, 16, seed=3))


def test_scale():
    check_sdpa(*_qkv(2, 2, 11, 13, 16), scale=0.37)
    check_sdpa(*_qkv(2, 2, 11, 13, 16), scale=-0.8, is_causal=True)


def test_three_dim_inputs():
    q, k, v = _inputs([(4, 9, 16), (4, 11, 16), (4, 11, 16)], torch.float32)
    check_sdpa(q, k, v)
    check_sdpa(q, k, v, mask=make_cpu((9, 11), torch.bool, seed=2) | torch.eye(9, 11).bool())


# ---- masks ----


@pytest.mark.parametrize(
    "mshape", [(7, 9), (2, 1, 7, 9), (1, 3, 1, 9), (3, 7, 9), (2, 3, 7, 9)], ids=str
)
def test_bool_masks(mshape):
    mask = make_cpu(mshape, torch.bool, seed=4)
    mask[..., 0] = True  # no fully masked row here (see test_fully_masked_rows)
    check_sdpa(*_qkv(2, 3, 7, 9, 16), mask=mask)


@pytest.mark.parametrize("mshape", [(7, 9), (2, 1, 1, 9), (3, 7, 9), (2, 3, 7, 9)], ids=str)
def test_float_masks_and_their_gradient(mshape):
    mask = make_cpu(mshape, torch.float64, seed=6).float()
    check_sdpa(*_qkv(2, 3, 7, 9, 16), mask=mask, mask_grad=True)


@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.float32], ids=str)
def test_mask_with_is_causal(mask_dtype):
    """As the CPU: torch 2.13 applies both (its flash kernel does; the fused kernel too), later
    versions raise (ATen checks before choosing a backend)."""
    q, k, v = _qkv(2, 3, 7, 9, 16)
    mask = make_cpu((7, 9), mask_dtype, seed=8)  # CPU torch 2.13 raises for a 3-D one
    if mask_dtype == torch.bool:
        mask[..., 0] = True
    qd, kd, vd = _leaves([q, k, v], DEVICE)
    try:
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError, match="should not be set when is_causal"):
            F.scaled_dot_product_attention(qd, kd, vd, attn_mask=mask.to(DEVICE), is_causal=True)
        assert "should not be set when is_causal" in str(exc)
        return
    out = F.scaled_dot_product_attention(qd, kd, vd, attn_mask=mask.to(DEVICE), is_causal=True)
    assert _ran_fused(out)
    assert_ocl_close(out, ref, rtol=2e-5, atol=2e-5)
    above = torch.ones(7, 9, dtype=torch.bool).triu(1)
    both = (mask & ~above) if mask_dtype == torch.bool else mask.masked_fill(above, -torch.inf)
    check_sdpa(q, k, v, mask=both)


def test_float_mask_with_inf_and_padding_mask():
    """A BERT-style padding mask: -inf for the last keys of each sequence."""
    mask = torch.zeros(2, 1, 1, 9)
    mask[0, ..., 6:] = float("-inf")
    mask[1, ..., 3:] = float("-inf")
    check_sdpa(*_qkv(2, 3, 7, 9, 16), mask=mask)


def test_fully_masked_rows():
    """Rows whose keys are all masked give 0 (and zero gradients), as on the CPU."""
    mask = make_cpu((2, 3, 7, 9), torch.bool, seed=7)
    mask[:, :, 2] = False
    mask[1, 2] = False
    out = check_sdpa(*_qkv(2, 3, 7, 9, 16), mask=mask)
    assert (out[:, :, 2] == 0).all().item()
    fmask = torch.zeros(7, 9)
    fmask[4] = float("-inf")
    check_sdpa(*_qkv(2, 3, 7, 9, 16), mask=fmask)


def test_nan_and_inf_inputs():
    q, k, v = _qkv(1, 2, 6, 8, 16)
    q[0, 0, 2, 3] = float("nan")
    k[0, 1, 5, 0] = float("nan")
    v[0, 0, 1, 1] = float("inf")
    qd, kd, vd = (t.to(DEVICE) for t in (q, k, v))
    out = F.scaled_dot_product_attention(qd, kd, vd)
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
    assert_ocl_close(out, ref.float(), rtol=2e-5, atol=2e-5, equal_nan=True)


# ---- grouped-query attention and layouts ----


def test_grouped_query_attention():
    check_sdpa(*_qkv(2, 6, 9, 11, 16, HK=2), enable_gqa=True)
    check_sdpa(*_qkv(2, 6, 9, 11, 16, HK=3), enable_gqa=True, is_causal=True)
    # one key/value head broadcast over every query head (no enable_gqa needed)
    check_sdpa(*_qkv(2, 4, 9, 11, 16, HK=1))


def test_grouped_query_attention_errors_like_cpu():
    q, k, v = _qkv(1, 6, 5, 5, 8, HK=4)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(*(t.to(DEVICE) for t in (q, k, v)), enable_gqa=True)
    q, k, v = _qkv(1, 6, 5, 5, 8, HK=2)
    with pytest.raises(RuntimeError):  # heads differ without enable_gqa
        F.scaled_dot_product_attention(q, k, v)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(*(t.to(DEVICE) for t in (q, k, v)))


def test_noncontiguous_layouts():
    """q, k, v as [B, L, H, D] transposed to [B, H, L, D] (how attention modules call it), and
    a head dim that is not contiguous."""
    q, k, v = _inputs([(2, 7, 3, 16), (2, 9, 3, 16), (2, 9, 3, 16)], torch.float32)
    out = check_sdpa(
        q.transpose(1, 2),
        k.transpose(1, 2),
        v.transpose(1, 2),
        view=lambda t: t.transpose(1, 2).contiguous().transpose(1, 2),
    )
    assert out.stride(-1) == 1
    check_sdpa(
        *_qkv(2, 3, 7, 9, 16), view=lambda t: t.transpose(-1, -2).contiguous().transpose(-1, -2)
    )
    check_sdpa(*_qkv(2, 6, 7, 9, 16), view=lambda t: t[:, ::2])


# ---- dropout ----


def _dropout_probs(q, k, p, seed, causal=False):
    """The dropped, rescaled attention matrix: SDPA with value = identity (S x S; S = 16 = the
    head dim keeps to the kernel build of the other tests)."""
    B, H, _, _ = q.shape
    S = k.shape[-2]
    eye = torch.eye(S).expand(B, H, S, S).contiguous()
    torch.ocl.manual_seed(seed)
    return F.scaled_dot_product_attention(
        q.to(DEVICE), k.to(DEVICE), eye.to(DEVICE), dropout_p=p, is_causal=causal
    ).cpu()


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_statistics(p):
    q, k, _ = _qkv(4, 8, 128, 16, 16)
    probs = _dropout_probs(q, k, p, seed=11)
    ref = torch.softmax(q.double() @ k.double().transpose(-1, -2) / 4.0, -1)
    kept = probs != 0
    n = kept.numel()
    frac = kept.double().mean().item()
    # kept fraction within 5 standard deviations of 1 - p
    assert abs(frac - (1 - p)) < 5 * (p * (1 - p) / n) ** 0.5, frac
    torch.testing.assert_close(probs[kept].double(), ref[kept] / (1 - p), rtol=1e-5, atol=1e-7)
    # a different seed gives a different mask, the same seed the same one
    assert not torch.equal(kept, _dropout_probs(q, k, p, seed=12) != 0)
    assert torch.equal(probs, _dropout_probs(q, k, p, seed=11))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("HK", [3, 1])
def test_dropout_forward_backward_use_one_mask(causal, HK):
    """Forward and backward with a seed whose mask is recovered first (value = identity) agree
    with ATen's math path given that mask, in float64 on the CPU."""
    p = 0.3
    q, k, v = _qkv(2, 3, 33, 16, 16, HK=HK)
    kk = k.expand(2, 3, 16, 16)
    keep = _dropout_probs(q, kk, p, seed=5, causal=causal) != 0
    if causal:  # keys after the query are 0 anyway: whether they were dropped does not matter
        keep |= torch.ones(33, 16, dtype=torch.bool).triu(1)
    torch.ocl.manual_seed(5)
    qd, kd, vd = _leaves([q, k, v], DEVICE)
    out = F.scaled_dot_product_attention(qd, kd, vd, dropout_p=p, is_causal=causal)
    assert _ran_fused(out)
    qr, kr, vr = _leaves([q, k, v], "cpu", torch.float64)
    ref, _ = torch.ops.aten._scaled_dot_product_attention_math(
        qr, kr.expand(2, 3, 16, 16), vr.expand(2, 3, 16, 16), None, p, causal, dropout_mask=keep
    )
    _close(out, ref.detach(), torch.float32)
    g = make_cpu(ref.shape, torch.float64, seed=8)
    out.backward(g.float().to(DEVICE))
    ref.backward(g)
    for a, b in ((qd, qr), (kd, kr), (vd, vr)):
        _close(a.grad, b.grad, torch.float32)


def test_dropout_advances_the_generator():
    q, k, v = (t.to(DEVICE) for t in _qkv(1, 2, 16, 16, 8))
    torch.ocl.manual_seed(3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert not torch.equal(a.cpu(), b.cpu())
    torch.ocl.manual_seed(3)
    assert torch.equal(F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).cpu(), a.cpu())


# ---- the math path and the choice of backend ----


def _choice(q, k, v, **kwargs):
    return BACKEND[torch._fused_sdp_choice(q, k, v, **kwargs)]


def test_backend_choice():
    q, k, v = (t.to(DEVICE) for t in _qkv(1, 2, 5, 7, 16))
    assert _choice(q, k, v) == SDPBackend.OVERRIDEABLE
    assert _choice(q, k, v, is_causal=True, dropout_p=0.2) == SDPBackend.OVERRIDEABLE
    big = torch.zeros(1, 2, 5, 160, device=DEVICE)
    assert _choice(big, big, big) == SDPBackend.MATH
    assert _choice(q.double(), k.double(), v.double()) == SDPBackend.MATH
    five = q.unsqueeze(0)
    assert _choice(five, five, five) == SDPBackend.MATH
    mask = torch.ones(5, 7, dtype=torch.bool, device=DEVICE)
    assert _choice(q, k, v, attn_mask=mask) == SDPBackend.OVERRIDEABLE
    assert _choice(q, k, v, attn_mask=mask, is_causal=True) == SDPBackend.OVERRIDEABLE
    with sdpa_kernel([SDPBackend.MATH]):
        assert _choice(q, k, v) == SDPBackend.MATH
    with sdpa_kernel([SDPBackend.OVERRIDEABLE]):
        assert _choice(big, big, big) == SDPBackend.ERROR
        with pytest.raises(RuntimeError, match="No viable backend"):
            F.scaled_dot_product_attention(big, big, big)


@pytest.mark.parametrize(
    "case",
    ["head_dim_160", "float64", "five_dim", "forced_math_causal_dropout", "empty"],
)
def test_math_path_is_native(case):
    if case == "head_dim_160":
        check_sdpa(*_qkv(1, 2, 9, 11, 160), fused=False, is_causal=True)
    elif case == "float64":
        check_sdpa(
            *_qkv(2, 2, 9, 11, 16),
            dtype=torch.float64,
            fused=False,
            mask=make_cpu((9, 11), torch.bool, seed=1) | torch.eye(9, 11).bool(),
        )
    elif case == "five_dim":
        q, k, v = _inputs([(2, 2, 3, 7, 8), (2, 2, 3, 9, 8), (2, 2, 3, 9, 8)], torch.float32)
        check_sdpa(q, k, v, fused=False)
    elif case == "forced_math_causal_dropout":
        with sdpa_kernel([SDPBackend.MATH]):
            check_sdpa(*_qkv(2, 2, 9, 11, 16), fused=False, is_causal=True)
            q, k, v = (t.to(DEVICE).requires_grad_() for t in _qkv(2, 2, 9, 11, 16))
            F.scaled_dot_product_attention(q, k, v, dropout_p=0.3).sum().backward()
            assert q.grad.isfinite().all().item()
    else:
        q, k, v = _qkv(2, 2, 0, 11, 16)
        out = F.scaled_dot_product_attention(q.to(DEVICE), k.to(DEVICE), v.to(DEVICE))
        assert out.shape == (2, 2, 0, 16)
        q, k, v = _qkv(2, 2, 5, 0, 16)
        out = F.scaled_dot_product_attention(q.to(DEVICE), k.to(DEVICE), v.to(DEVICE))
        ref = F.scaled_dot_product_attention(q, k, v)
        assert_ocl_close(out, ref)


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_safe_softmax(dim):
    x = make_cpu((5, 6, 7), torch.float32, seed=9)
    x[1, 2] = float("-inf")
    x[:, 3, 4] = float("-inf")
    x[0, 0, 0] = float("nan")
    ref = torch.ops.aten._safe_softmax(x.double(), dim).float()
    xd = x.to(DEVICE).requires_grad_()
    out = torch.ops.aten._safe_softmax(xd, dim)
    assert_ocl_close(out, ref, equal_nan=True)
    xc = x.double().requires_grad_()
    g = make_cpu(x.shape, torch.float64, seed=10)
    torch.ops.aten._safe_softmax(xc, dim).backward(g)
    out.backward(g.float().to(DEVICE))
    assert_ocl_close(xd.grad, xc.grad.float(), rtol=1e-5, atol=1e-6, equal_nan=True)
    half = torch.ops.aten._safe_softmax(x.half().to(DEVICE), dim, dtype=torch.float32)
    assert half.dtype == torch.float32


# ---- errors, modules, host waits ----


def test_errors_like_cpu():
    q, k, v = _qkv(1, 2, 5, 5, 8)
    qd, kd, vd = (t.to(DEVICE) for t in (q, k, v))
    mask = torch.ones(5, 5, dtype=torch.bool)
    for args, kw in [
        ((q, k.double(), v), {}),
        ((q, k[..., :4], v), {}),
        ((q, k, v), dict(attn_mask=mask.int())),
    ]:
        with pytest.raises(RuntimeError) as cpu_err:
            F.scaled_dot_product_attention(*args, **kw)
        dev_args = [a.to(DEVICE) for a in args]
        dev_kw = {n: (a.to(DEVICE) if isinstance(a, torch.Tensor) else a) for n, a in kw.items()}
        with pytest.raises(type(cpu_err.value)):
            F.scaled_dot_product_attention(*dev_args, **dev_kw)
    assert F.scaled_dot_product_attention(qd, kd, vd).isfinite().all().item()


def test_multihead_attention_module_trains_like_cpu():
    """nn.MultiheadAttention (causal, batch_first) forward, backward and an SGD step."""
    torch.manual_seed(0)
    cpu = torch.nn.MultiheadAttention(64, 4, batch_first=True).double()
    dev = torch.nn.MultiheadAttention(64, 4, batch_first=True).to(DEVICE)
    dev.load_state_dict(cpu.state_dict())
    x = make_cpu((3, 10, 64), torch.float64, seed=12)
    causal = torch.ones(10, 10, dtype=torch.bool).triu(1)

    def step(m, x, mask):
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        out, _ = m(x, x, x, attn_mask=mask, need_weights=False, is_causal=True)
        (out * out).sum().backward()  # not square(): pow is not native yet
        opt.step()
        return out

    ref = step(cpu, x, causal)
    with torch.ocl.sync_debug_mode("error"):
        out = step(dev, x.float().to(DEVICE), causal.to(DEVICE))
    assert_ocl_close(out.detach(), ref.detach().float(), rtol=1e-4, atol=1e-5)
    for p, r in zip(dev.parameters(), cpu.parameters(), strict=True):
        assert_ocl_close(p.detach(), r.detach().float(), rtol=1e-4, atol=1e-5)


def test_no_host_waits_with_dropout():
    q, k, v = (t.to(DEVICE).requires_grad_() for t in _qkv(2, 2, 17, 19, 16))
    mask = torch.rand(17, 19, device=DEVICE) > 0.2
    with torch.ocl.sync_debug_mode("error"):
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.2, attn_mask=mask)
        out.sum().backward()
    assert q.grad.isfinite().all().item()


@pytest.mark.parametrize("with_mask", [False, True])
def test_backend_choice_with_symbolic_shapes(with_mask):
    # torch.compile(dynamic=True) runs ATen's composite scaled_dot_product_attention on fake
    # tensors of symbolic sizes, which asks the device's backend choice: it must read SymInts
    # (it once called numel() and failed with "Cannot call numel() on tensor with symbolic
    # sizes"). make_fx's symbolic tracing takes the same path without Inductor.
    from torch.fx.experimental.proxy_tensor import make_fx

    def attend(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    q, k, v = (make_cpu((2, 4, 5, 8), torch.float32, low=-1, high=1, seed=i) for i in range(3))
    mask = make_cpu((5, 5), torch.float32, seed=3) if with_mask else None
    dev = [t.to(DEVICE) if t is not None else None for t in (q, k, v, mask)]
    graph = make_fx(attend, tracing_mode="symbolic")(*dev)
    assert "_scaled_dot_product_fused_attention_overrideable" in graph.code
    assert_ocl_close(graph(*dev), attend(q, k, v, mask))
