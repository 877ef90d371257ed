"""Complex tensors (complex64, complex128) on the ocl device, against the CPU: copies and dtype
conversions, views (view_as_real / view_as_complex, real / imag, conj and neg bits), fill and
random fill, printing, the elementwise ops of the op table's complex forms, reductions, matrix
products and a Llama-style rotary embedding. complex128 results are compared with the CPU's
complex128; complex64 ones with the CPU computing in complex128 (rounded)."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, cpu_reference, dtype_id, skip_unsupported

CDTYPES = [torch.complex64, torch.complex128]
NAN, INF = float("nan"), float("inf")


def make_complex(shape, dtype, seed=0, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    real = torch.randn((*shape, 2), generator=g, dtype=torch.float64) * scale
    return torch.view_as_complex(real).to(dtype)


# Layouts: the same values on both sides, then the same view.
LAYOUTS = {
    "empty": ((0,), lambda t: t),
    "one": ((1,), lambda t: t),
    "zero_dim": ((), lambda t: t),
    "odd_7x13": ((7, 13), lambda t: t),
    "transposed": ((13, 7), lambda t: t.t()),
    "step_slice": ((7, 26), lambda t: t[:, ::2]),
}


def pairs(layout, dtype, n=1):
    shape, view = LAYOUTS[layout]
    out = []
    for k in range(n):
        c = make_complex(shape, dtype, seed=k)
        out.append((view(c), view(c.to(DEVICE))))
    return out


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_round_trip_and_device_copy(dtype, layout):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    ((c, o),) = pairs(layout, dtype)
    assert o.dtype == dtype and o.device.type == "ocl"
    assert_ocl_close(o, c, exact=True)
    assert_ocl_close(o.clone(), c, exact=True)  # device-to-device copy of a strided view
    assert_ocl_close(o.contiguous(), c.contiguous(), exact=True)


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        (torch.complex64, torch.complex128),
        (torch.complex128, torch.complex64),
        (torch.float32, torch.complex64),
        (torch.int64, torch.complex64),
        (torch.bool, torch.complex64),
        (torch.float64, torch.complex128),
        (torch.float16, torch.complex64),
        (torch.complex64, torch.float32),
        (torch.complex64, torch.int32),
        (torch.complex64, torch.bool),
        (torch.complex128, torch.float64),
    ],
    ids=lambda d: dtype_id(d),
)
def test_dtype_conversions(src, dst):
    for d in (src, dst):
        skip_unsupported(torch.float64 if d in (torch.complex128, torch.float64) else d)
    if src.is_complex:
        c = make_complex((5, 6), src)
        c[0, 0] = complex(0, 1)  # bool: a non-zero imaginary part alone is true
        c[0, 1] = 0
    else:
        c = (torch.randn(5, 6) * 3).to(src)
    o = c.to(DEVICE)
    with warnings.catch_warnings():  # complex -> real: "discards the imaginary part", once
        warnings.simplefilter("ignore")
        expected = c.to(dst)
        assert_ocl_close(o.to(dst), expected, exact=True)
        assert_ocl_close(o.t().to(dst), expected.t(), exact=True)  # a strided source


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_views_alias(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((4, 5), dtype)
    o = c.to(DEVICE)
    r = torch.view_as_real(o)
    assert r.shape == (4, 5, 2) and r.data_ptr() == o.data_ptr()
    r[1, 2, 1] = 7.0  # writes through to the complex tensor
    c[1, 2] = complex(c[1, 2].real.item(), 7.0)
    assert_ocl_close(o, c, exact=True)
    assert_ocl_close(o.real, c.real, exact=True)
    assert_ocl_close(o.imag, c.imag, exact=True)
    o.imag.mul_(2)
    c.imag.mul_(2)
    assert_ocl_close(o, c, exact=True)
    back = torch.view_as_complex(torch.view_as_real(o))
    assert back.data_ptr() == o.data_ptr()
    assert_ocl_close(back, c, exact=True)
    # reshape / transpose / select / expand stay views of complex tensors
    assert_ocl_close(o.t()[1:3], c.t()[1:3], exact=True)
    assert_ocl_close(
        o[:, 1].unsqueeze(1).expand(4, 3), c[:, 1].unsqueeze(1).expand(4, 3), exact=True
    )


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_conj_and_neg_bits(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((6, 7), dtype)
    o = c.to(DEVICE)
    oc = o.conj()
    assert oc.is_conj()
    assert_ocl_close(oc.resolve_conj(), c.conj().resolve_conj(), exact=True)
    assert not oc.resolve_conj().is_conj()
    torch.testing.assert_close(oc.cpu(), c.conj(), rtol=0, atol=0)  # device-to-host, conj view
    assert_ocl_close(oc.t().contiguous(), c.conj().t().contiguous(), exact=True)
    assert_ocl_close(torch.conj_physical(o), torch.conj_physical(c), exact=True)
    # host-to-device copy of a CPU conj view, copy into a conj view
    assert_ocl_close(c.conj().to(DEVICE), c.conj().resolve_conj(), exact=True)
    dst = torch.zeros_like(o)
    dst.conj().copy_(o)
    assert_ocl_close(dst, c.conj().resolve_conj(), exact=True)
    # neg views
    n = torch._neg_view(o)
    assert n.is_neg()
    assert_ocl_close(n.resolve_neg(), -c, exact=True)
    assert_ocl_close(torch._neg_view(oc).resolve_neg().resolve_conj(), -c.conj(), exact=True)
    # conj of a real tensor is a no-op
    x = torch.randn(5).to(DEVICE)
    assert x.conj() is x or not x.conj().is_conj()


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_fill_factories_and_item(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    z = complex(1.5, -2.25)
    assert_ocl_close(
        torch.full((3, 4), z, dtype=dtype, device=DEVICE),
        torch.full((3, 4), z, dtype=dtype),
        exact=True,
    )
    assert_ocl_close(
        torch.zeros(5, dtype=dtype, device=DEVICE), torch.zeros(5, dtype=dtype), exact=True
    )
    assert_ocl_close(
        torch.ones(2, 3, dtype=dtype, device=DEVICE), torch.ones(2, 3, dtype=dtype), exact=True
    )
    o = torch.empty(4, 6, dtype=dtype, device=DEVICE)
    o[:, ::2].fill_(z)
    o[:, 1::2].fill_(3)
    c = torch.empty(4, 6, dtype=dtype)
    c[:, ::2].fill_(z)
    c[:, 1::2].fill_(3)
    assert_ocl_close(o, c, exact=True)
    assert o[1, 2].item() == z
    assert o.conj()[0, 0].item() == z.conjugate()
    assert torch.tensor(z, device=DEVICE).item() == z
    assert torch.tensor([z, 2j], device=DEVICE).tolist() == [z, 2j]


def test_printing():
    c = torch.tensor([[1 + 2j, -0.5j], [3.25, complex(NAN, INF)]], dtype=torch.complex64)
    o = c.to(DEVICE)
    assert str(o).replace(", device='ocl:0'", "") == str(c)
    assert str(o.conj()).replace(", device='ocl:0'", "") == str(c.conj())
    assert str(torch.zeros(0, dtype=torch.complex64, device=DEVICE)).startswith("tensor([]")


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_random_fill(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    torch.manual_seed(0)
    z = torch.randn(200_000, dtype=dtype, device=DEVICE)
    parts = torch.view_as_real(z).cpu().double()
    # Two normals of variance 1/2, as on the CPU: E|z|^2 = 1.
    assert abs(parts.mean().item()) < 0.01
    assert abs(parts[:, 0].var().item() - 0.5) < 0.01
    assert abs(parts[:, 1].var().item() - 0.5) < 0.01
    assert abs(z.abs().pow(2).mean().item() - 1.0) < 0.02
    u = torch.rand(100_000, dtype=dtype, device=DEVICE)
    up = torch.view_as_real(u).cpu()
    assert up.min().item() >= 0 and up.max().item() < 1
    assert abs(up.double().mean().item() - 0.5) < 0.01
    # normal_ with mean and std, and a non-contiguous target
    w = torch.zeros(400, 300, dtype=dtype, device=DEVICE)[:, ::3]
    w.normal_(2.0, 3.0)
    wp = torch.view_as_real(w).cpu().double()
    assert abs(wp.mean().item() - 2.0) < 0.1
    assert abs(wp.std().item() - 3.0 / math.sqrt(2)) < 0.1


# --- elementwise -------------------------------------------------------------------------

UNARY = {
    "neg": torch.neg,
    "conj_physical": torch.conj_physical,
    "abs": torch.abs,
    "angle": torch.angle,
    "sgn": torch.sgn,
    "exp": torch.exp,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    "sin": torch.sin,
    "cos": torch.cos,
    "tan": torch.tan,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "square": torch.square,
    "pow_2_5": lambda x: torch.pow(x, 2.5),
    "pow_complex": lambda x: torch.pow(x, 0.5 - 1.5j),
    "pow_half": lambda x: torch.pow(x, 0.5),
    "isnan": torch.isnan,
    "isfinite": torch.isfinite,
    "isinf": torch.isinf,
    "real": lambda x: torch.real(x).clone(),
    "imag": lambda x: torch.imag(x).clone(),
    "asin": torch.asin,
    "acos": torch.acos,
    "atan": torch.atan,
    "asinh": torch.asinh,
    "acosh": torch.acosh,
    "atanh": torch.atanh,
    "expm1": torch.expm1,
    "log1p": torch.log1p,
    "exp2": torch.exp2,
    "sinc": torch.sinc,
    "silu": torch.nn.functional.silu,
    "logical_not": torch.logical_not,
    "small_expm1": lambda x: torch.expm1(x * 1e-4),
    "small_log1p": lambda x: torch.log1p(x * 1e-4),
    "small_asin": lambda x: torch.asin(x * 1e-4),
    "small_atanh": lambda x: torch.atanh(x * 1e-4),
    "large_asinh": lambda x: torch.asinh(x * 1e3),
    "large_acosh": lambda x: torch.acosh(x * 1e3),
}
BINARY = {
    "add": torch.add,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=2 - 1j),
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "pow": torch.pow,
    "eq": torch.eq,
    "ne": torch.ne,
    "mul_scalar": lambda a, b: a * (0.5 + 2j),
    "add_real_tensor": lambda a, b: a + b.real,
    "rsub_scalar": lambda a, b: 3 - a,
    "where": lambda a, b: torch.where(a.real > 0, a, b),
    "addcmul": lambda a, b: torch.addcmul(a, a, b, value=0.5j),
    "addcdiv": lambda a, b: torch.addcdiv(a, a, b, value=2),
    "logaddexp": torch.logaddexp,
    "lerp_scalar": lambda a, b: torch.lerp(a, b, 0.3 + 0.2j),
    "lerp_scalar_far": lambda a, b: torch.lerp(a, b, 0.9 - 0.1j),
    "lerp_tensor": lambda a, b: torch.lerp(a, b, b * 0.3),
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": lambda a, b: torch.logical_xor(a, b * (b.real > 0)),
}


def _close(got, expected, dtype):
    tol = {torch.complex64: (2e-5, 2e-5), torch.complex128: (1e-10, 1e-10)}[dtype]
    if expected.dtype.is_complex or expected.dtype.is_floating_point:
        assert_ocl_close(got, expected, rtol=tol[0], atol=tol[1])
    else:
        assert_ocl_close(got, expected)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, layout, dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    fn = UNARY[name]
    ((c, o),) = pairs(layout, dtype)
    expected = cpu_reference(fn, [c])
    _close(fn(o), expected, dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, layout, dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    fn = BINARY[name]
    (c0, o0), (c1, o1) = pairs(layout, dtype, 2)
    expected = cpu_reference(fn, [c0, c1])
    _close(fn(o0, o1), expected, dtype)


SPECIAL = torch.tensor(
    [0, 1, -1, 1j, complex(NAN, 0), complex(0, NAN), complex(INF, 0), complex(-INF, 1),
     complex(1, INF), complex(INF, INF), 1e30 + 1e30j, 1e-30j, complex(-0.0, 0.0)],
    dtype=torch.complex128,
)  # fmt: skip


@pytest.mark.parametrize("name", ["neg", "conj_physical", "abs", "angle", "isnan", "isfinite",
                                  "isinf", "real", "imag", "sgn", "exp", "sqrt",
                                  "logical_not"])  # fmt: skip
def test_unary_nan_inf(name):
    fn = UNARY[name]
    c = SPECIAL
    assert_ocl_close(fn(c.to(DEVICE)), fn(c), equal_nan=True, rtol=1e-12, atol=1e-300)


def test_binary_nan_inf():
    a = SPECIAL
    b = SPECIAL.flip(0)
    for fn in (torch.add, torch.sub, torch.eq, torch.ne):
        assert_ocl_close(fn(a.to(DEVICE), b.to(DEVICE)), fn(a, b), equal_nan=True)
    # mul of finite values by inf / nan: where the CPU's naive product gives NaN parts, ours too
    fin = make_complex((13,), torch.complex128)
    assert_ocl_close(torch.mul(a.to(DEVICE), fin.to(DEVICE)), torch.mul(a, fin), equal_nan=True)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_polar_complex_inplace_and_out(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    rdt = torch.float32 if dtype == torch.complex64 else torch.float64
    r = torch.rand(7, 9, dtype=rdt) * 3
    t = (torch.rand(7, 9, dtype=rdt) - 0.5) * 8
    assert_ocl_close(
        torch.polar(r.to(DEVICE), t.to(DEVICE)), torch.polar(r, t), rtol=2e-6, atol=2e-6
    )
    assert_ocl_close(torch.complex(r.to(DEVICE), t.to(DEVICE)), torch.complex(r, t), exact=True)
    assert_ocl_close(
        torch.complex(r.t().to(DEVICE), t.to(DEVICE).t()), torch.complex(r.t(), t.t()), exact=True
    )
    c = make_complex((5, 4), dtype)
    o = c.to(DEVICE)
    o.mul_(1 - 2j).add_(3j).div_(o.clone().add_(1))
    c.mul_(1 - 2j).add_(3j).div_(c.clone().add_(1))
    _close(o, c, dtype)
    out = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.mul(o, o, out=out)
    _close(out, c * c, dtype)
    # real and complex operands mixed: type promotion to complex
    x = torch.randn(5, 4, dtype=rdt)
    _close(x.to(DEVICE) * o, x * c, dtype)
    _close(o - x.to(DEVICE), c - x, dtype)


def test_unsupported_op_error_is_clear():
    o = make_complex((3,), torch.complex64).to(DEVICE)
    with pytest.raises(NotImplementedError, match="not implemented for complex dtype"):
        torch.logit(o)  # the CPU has no complex form either, and the message names complex
    with pytest.raises(NotImplementedError, match="logcumsumexp of a complex tensor"):
        torch.logcumsumexp(o, 0)
    with pytest.raises(NotImplementedError, match="reduction of a complex tensor"):
        torch.amax(o)
    assert_ocl_close(o + 1, o.cpu() + 1)  # the process stays usable


# --- reductions and products ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_sum_mean(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((6, 9, 5), dtype)
    o = c.to(DEVICE)
    for fn in (
        lambda x: x.sum(),
        lambda x: x.sum(1),
        lambda x: x.sum((0, 2), keepdim=True),
        lambda x: x.mean(),
        lambda x: x.mean(-1),
        lambda x: x.transpose(0, 2).sum(0),
        lambda x: x.conj().sum(1),
        lambda x: x[:, ::2].mean((1,)),
        lambda x: x[:0].sum(0),
    ):
        _close(fn(o), cpu_reference(fn, [c]), dtype)
    x = torch.randn(4, 5)
    assert_ocl_close(x.to(DEVICE).sum(1, dtype=torch.complex64), x.sum(1, dtype=torch.complex64))


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
@pytest.mark.parametrize(
    ("m", "k", "n"), [(1, 1, 1), (7, 13, 5), (33, 17, 65), (0, 3, 4), (3, 0, 4)]
)
def test_matmul(dtype, m, k, n):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    a, b = make_complex((m, k), dtype), make_complex((k, n), dtype, seed=1)
    ao, bo = a.to(DEVICE), b.to(DEVICE)
    tol = (1e-5, 1e-5) if dtype == torch.complex64 else (1e-12, 1e-12)
    ref = cpu_reference(torch.mm, [a, b])
    assert_ocl_close(ao @ bo, ref, rtol=tol[0], atol=tol[1])
    assert_ocl_close(
        ao.conj() @ bo, cpu_reference(lambda x, y: x.conj() @ y, [a, b]), rtol=tol[0], atol=tol[1]
    )
    bias = make_complex((m, n), dtype, seed=2)
    ref = cpu_reference(lambda c, x, y: torch.addmm(c, x, y, beta=0.5j, alpha=2 - 1j), [bias, a, b])
    got = torch.addmm(bias.to(DEVICE), ao, bo, beta=0.5j, alpha=2 - 1j)
    assert_ocl_close(got, ref, rtol=tol[0], atol=tol[1])
    # batched, non-contiguous B
    a3 = make_complex((3, m, k), dtype, seed=3)
    b3 = make_complex((3, n, k), dtype, seed=4).transpose(1, 2)
    ref = cpu_reference(torch.bmm, [a3, b3])
    assert_ocl_close(torch.bmm(a3.to(DEVICE), b3.to(DEVICE)), ref, rtol=tol[0], atol=tol[1])
    ref = cpu_reference(torch.matmul, [a3, b])
    assert_ocl_close(torch.matmul(a3.to(DEVICE), bo), ref, rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_dot_vdot_mv(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    a, b = make_complex((37,), dtype), make_complex((37,), dtype, seed=1)
    m = make_complex((5, 37), dtype, seed=2)
    for fn in (torch.dot, torch.vdot, lambda x, y: torch.inner(x, y)):
        assert_ocl_close(
            fn(a.to(DEVICE), b.to(DEVICE)), cpu_reference(fn, [a, b]), rtol=1e-5, atol=1e-5
        )
    assert_ocl_close(
        torch.mv(m.to(DEVICE), a.to(DEVICE)), cpu_reference(torch.mv, [m, a]), rtol=1e-5, atol=1e-5
    )


# --- a model's use: rotary embeddings (Llama's reference code) ----------------------------------


def _precompute_freqs_cis(dim, end, theta=10000.0, device="cpu"):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=device, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)


def _apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def test_llama_rotary_embedding_forward_and_backward():
    bsz, seqlen, heads, head_dim = 2, 11, 3, 16
    g = torch.Generator().manual_seed(0)
    xq = torch.randn(bsz, seqlen, heads, head_dim, generator=g, requires_grad=True)
    xk = torch.randn(bsz, seqlen, heads, head_dim, generator=g, requires_grad=True)
    xqo = xq.detach().to(DEVICE).requires_grad_()
    xko = xk.detach().to(DEVICE).requires_grad_()
    fc = _precompute_freqs_cis(head_dim, seqlen)
    fco = _precompute_freqs_cis(head_dim, seqlen, device=DEVICE)
    assert_ocl_close(fco, fc, rtol=1e-5, atol=1e-5)
    q, k = _apply_rotary_emb(xq, xk, fc)
    qo, ko = _apply_rotary_emb(xqo, xko, fco)
    assert_ocl_close(qo, q, rtol=1e-5, atol=1e-5)
    assert_ocl_close(ko, k, rtol=1e-5, atol=1e-5)
    (q * k).sum().backward()
    (qo * ko).sum().backward()
    assert_ocl_close(xqo.grad, xq.grad, rtol=1e-5, atol=1e-5)
    assert_ocl_close(xko.grad, xk.grad, rtol=1e-5, atol=1e-5)


def test_complex_ops_add_no_host_wait():
    o = make_complex((64, 64), torch.complex64).to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    y = (o * o.conj() + 1j).exp().abs() + torch.view_as_real(o).sum(-1)
    z = (o @ o).sum(0).mean()
    _ = torch.polar(y, y)
    assert torch.ocl.host_wait_count() == before
    assert z.is_complex()


# --- ops that reach complex tensors through their real view or their magnitude --------------


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_zero_dim_reductions_over_dim(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((), dtype)
    for fn in (
        lambda x: x.sum(0),
        lambda x: x.sum(-1, keepdim=True),
        lambda x: x.mean(0),
        lambda x: torch.logsumexp(x, 0),
    ):
        _close(fn(c.to(DEVICE)), fn(c), dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_nonzero_count_and_norms(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((6, 9), dtype)
    c[1, 2] = 0
    c[3] = 0
    c[4, 4] = complex(0, 2)  # real part 0: still nonzero
    c[5, 5] = complex(-1.5, 0)
    o = c.to(DEVICE)
    assert_ocl_close(torch.nonzero(o), torch.nonzero(c), exact=True)
    assert_ocl_close(torch.argwhere(o.t()), torch.argwhere(c.t()), exact=True)
    assert_ocl_close(torch.count_nonzero(o, 1), torch.count_nonzero(c, 1), exact=True)
    for ord in (0, 1, 2, 3.5, float("inf"), -float("inf")):
        _close(torch.linalg.vector_norm(o, ord, dim=1), torch.linalg.vector_norm(c, ord, dim=1),
               dtype)  # fmt: skip
    _close(torch.linalg.matrix_norm(o), torch.linalg.matrix_norm(c), dtype)
    _close(torch.nn.functional.normalize(o, dim=0), torch.nn.functional.normalize(c, dim=0), dtype)
    nan = c.clone()
    nan[0, 0] = complex(NAN, 1)
    nan[2, 1] = complex(INF, 0)
    expected = torch.linalg.vector_norm(nan, dim=1)
    got = torch.linalg.vector_norm(nan.to(DEVICE), dim=1)
    assert_ocl_close(got, expected, equal_nan=True, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_prod_cumprod(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((4, 9), dtype, scale=0.8)
    c[1, 3] = 0  # a zero factor
    c[2, 0] = complex(-1.25, 0)  # on the negative real axis
    o = c.to(DEVICE)
    expected = c.to(torch.complex128)
    _close(torch.prod(o), torch.prod(expected).to(dtype), dtype)
    for dim in (0, 1):
        _close(torch.prod(o, dim), torch.prod(expected, dim).to(dtype), dtype)
        _close(torch.cumprod(o, dim), torch.cumprod(expected, dim).to(dtype), dtype)
    _close(torch.cumprod(o.conj(), 1), torch.cumprod(expected.conj(), 1).to(dtype), dtype)
    _close(torch.linalg.vander(o[0], N=5), torch.linalg.vander(expected[0], N=5).to(dtype), dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_cumsum(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((5, 37), dtype)
    for dim in (0, 1):
        _close(torch.cumsum(c.to(DEVICE), dim), torch.cumsum(c, dim), dtype)
    _close(torch.cumsum(c.to(DEVICE).conj(), 1), torch.cumsum(c.conj(), 1), dtype)
    _close(torch.cumsum(c.to(DEVICE).t(), 0), torch.cumsum(c.t(), 0), dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_indexed_sums_and_fills(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((7, 5), dtype)
    src = make_complex((4, 5), dtype, seed=3)
    idx = torch.tensor([0, 6, 0, 3])  # a repeated index
    o = c.to(DEVICE)
    _close(o.index_add(0, idx.to(DEVICE), src.to(DEVICE), alpha=2),
           c.index_add(0, idx, src, alpha=2), dtype)  # fmt: skip
    _close(o.index_fill(1, torch.tensor([1, 3]).to(DEVICE), 2 - 1j),
           c.index_fill(1, torch.tensor([1, 3]), 2 - 1j), dtype)  # fmt: skip
    sidx = torch.randint(0, 7, (4, 5), generator=torch.Generator().manual_seed(1))
    _close(o.scatter_add(0, sidx.to(DEVICE), src.to(DEVICE)), c.scatter_add(0, sidx, src), dtype)
    _close(o.scatter(0, sidx.to(DEVICE), 0.5j), c.scatter(0, sidx, 0.5j), dtype)
    flat = torch.tensor([1, 33, 1, 7])
    _close(o.put(flat.to(DEVICE), src[0, :4].to(DEVICE), accumulate=True),
           c.put(flat, src[0, :4], accumulate=True), dtype)  # fmt: skip
    v = o.clone()
    v[torch.tensor([2, 2, 5]).to(DEVICE)] += 1j
    w = c.clone()
    w[torch.tensor([2, 2, 5])] += 1j
    _close(v, w, dtype)
    with pytest.raises(NotImplementedError, match="complex alpha"):
        o.index_add(0, idx.to(DEVICE), src.to(DEVICE), alpha=1j)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_unfold_fold(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((2, 3, 6, 7), dtype)
    cols = torch.nn.functional.unfold(c, 3, padding=1, stride=2)
    _close(torch.nn.functional.unfold(c.to(DEVICE).conj(), 3, padding=1, stride=2), cols.conj(),
           dtype)  # fmt: skip
    _close(torch.nn.functional.fold(cols.to(DEVICE), (6, 7), 3, padding=1, stride=2),
           torch.nn.functional.fold(cols, (6, 7), 3, padding=1, stride=2), dtype)  # fmt: skip


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_shape_ops_of_16_byte_elements(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((3, 5, 6), dtype)
    o = c.to(DEVICE)
    for fn in (
        torch.tril,
        lambda x: torch.triu(x.mT, 1),
        lambda x: torch.flip(x, [1]),
        lambda x: torch.roll(x, 2, 2),
        lambda x: torch.cat([x, x[:, :2]], 1),
        lambda x: torch.nn.functional.pad(x, (1, 2)),
    ):
        assert_ocl_close(fn(o), fn(c), exact=True)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_matrix_exp(dtype):
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    c = make_complex((3, 4, 4), dtype, scale=0.7)
    expected = torch.linalg.matrix_exp(c.to(torch.complex128)).to(dtype)
    _close(torch.linalg.matrix_exp(c.to(DEVICE)), expected, dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_lu_family_native(dtype):
    """LU, its solves, triangular solves (conjugate transposes too), det/slogdet, inverse, and the
    Cholesky solves from a given factor: kernels/linalg.cl's complex forms."""
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    a = make_complex((3, 6, 6), dtype) + 3 * torch.eye(6, dtype=dtype)
    b = make_complex((3, 6, 2), dtype, seed=1)
    o, ob = a.to(DEVICE), b.to(DEVICE)
    lu, piv = torch.linalg.lu_factor(a)
    olu, opiv = torch.linalg.lu_factor(o)
    assert_ocl_close(opiv, piv, exact=True)  # the same pivots as LAPACK (|re| + |im|)
    _close(olu, lu, dtype)
    for adjoint in (False, True):
        _close(torch.linalg.lu_solve(olu, opiv, ob, adjoint=adjoint),
               torch.linalg.lu_solve(lu, piv, b, adjoint=adjoint), dtype)  # fmt: skip
    _close(torch.linalg.solve(o, ob), torch.linalg.solve(a, b), dtype)
    _close(torch.linalg.solve(o, ob.mT, left=False), torch.linalg.solve(a, b.mT, left=False), dtype)
    _close(torch.linalg.inv(o), torch.linalg.inv(a), dtype)
    _close(torch.linalg.det(o), torch.linalg.det(a), dtype)
    sign, logabs = torch.linalg.slogdet(o)
    esign, elogabs = torch.linalg.slogdet(a)
    _close(sign, esign, dtype)
    tol = 2e-5 if dtype == torch.complex64 else 1e-10
    assert_ocl_close(logabs, elogabs, rtol=tol, atol=tol)
    for upper in (False, True):
        t = a.triu() if upper else a.tril()
        for left in (False, True):
            rhs = b if left else b.mT
            got = torch.linalg.solve_triangular(
                t.to(DEVICE), rhs.to(DEVICE), upper=upper, left=left
            )
            _close(got, torch.linalg.solve_triangular(t, rhs, upper=upper, left=left), dtype)
        # the conjugate transpose of a factor, as a view: ATen passes it as ConjTranspose
        _close(torch.linalg.solve_triangular(t.to(DEVICE).mH, b.to(DEVICE), upper=not upper),
               torch.linalg.solve_triangular(t.mH, b, upper=not upper), dtype)  # fmt: skip
    h = a @ a.mH
    fac = torch.linalg.cholesky(h)
    for upper in (False, True):
        f = fac.mH if upper else fac
        _close(torch.cholesky_solve(ob, f.to(DEVICE), upper=upper),
               torch.cholesky_solve(b, f, upper=upper), dtype)  # fmt: skip
        _close(torch.cholesky_inverse(f.to(DEVICE), upper=upper),
               torch.cholesky_inverse(f, upper=upper), dtype)  # fmt: skip
    singular = a.clone()
    singular[0, :, 2] = 0
    info = torch.linalg.lu_factor_ex(singular.to(DEVICE)).info
    assert_ocl_close(info, torch.linalg.lu_factor_ex(singular).info, exact=True)


@pytest.mark.parametrize("dtype", CDTYPES, ids=dtype_id)
def test_linalg_runs_on_the_cpu_as_a_fallback(dtype):
    """Complex linear algebra runs the CPU's LAPACK kernels, as a counted fallback: refused when
    the fallback raises (tests/ops), equal to the CPU when it runs."""
    skip_unsupported(torch.float64 if dtype == torch.complex128 else dtype)
    a = make_complex((3, 5, 5), dtype) + 4 * torch.eye(5, dtype=dtype)
    b = make_complex((3, 5, 2), dtype, seed=1)
    o, ob = a.to(DEVICE), b.to(DEVICE)
    h = a @ a.mH
    with pytest.raises(NotImplementedError, match="has no native ocl kernel"):
        torch.linalg.cholesky(h.to(DEVICE))
    with torch.ocl.fallback_mode("silent"):
        _close(torch.linalg.lstsq(o, ob).solution, torch.linalg.lstsq(a, b).solution, dtype)
        _close(torch.linalg.cholesky(h.to(DEVICE)), torch.linalg.cholesky(h), dtype)
        _close(torch.linalg.svdvals(o), torch.linalg.svdvals(a), dtype)
        _close(torch.linalg.eigvalsh(h.to(DEVICE)), torch.linalg.eigvalsh(h), dtype)
        q, r = torch.linalg.qr(o)
        _close(q @ r, o.cpu(), dtype)
        counts = dict(torch.ocl.fallback_counts())
    assert any("complex" in name.lower() for name in counts), counts
