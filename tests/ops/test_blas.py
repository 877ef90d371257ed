"""BLAS-1/2 ops on the ocl device (gemv kernel of kernels/mm.cl): dot, vdot, mv, addmv, and what
is built on them or on mm/bmm (addr, addbmm, inner, matmul and @ with 1-D operands, tensordot,
einsum, trace), against a float64 CPU reference (the tolerance of test_matmul: a fraction of
k * eps * |A| @ |x|), integer dtypes against the CPU exactly, gradients, and the CPU's errors.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu

from .test_matmul import assert_mm_close

INF, NAN = float("inf"), float("nan")
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def _dev(*ts):
    return [t.to(DEVICE) for t in ts]


def check_mv_like(out, a, x, bias=None, beta=1, alpha=1):
    """out (ocl) against beta * bias + alpha * a @ x computed in float64 on the CPU."""
    a64, x64 = a.double(), x.double()
    ref = alpha * (a64 @ x64)
    bound = abs(alpha) * (a64.abs() @ x64.abs())
    if bias is not None and beta != 0:
        ref = ref + beta * bias.double()
        bound = bound + abs(beta) * bias.double().abs()
    assert_mm_close(out, a.dtype, ref.reshape(out.shape), bound.reshape(out.shape), a.shape[-1])


# --- dot / vdot ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 7, 64, 65, 1000, pytest.param(300001, marks=pytest.mark.slow)])
def test_dot_sizes(n):
    a = make_cpu((n,), torch.float32, low=-1, high=1)
    b = make_cpu((n,), torch.float32, low=-1, high=1, seed=1)
    ao, bo = _dev(a, b)
    out = torch.dot(ao, bo)
    assert out.shape == ()
    check_mv_like(out, a.unsqueeze(0), b)
    check_mv_like(torch.vdot(ao, bo), a.unsqueeze(0), b)
    check_mv_like(ao @ bo, a.unsqueeze(0), b)
    check_mv_like(torch.inner(ao, bo), a.unsqueeze(0), b)


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_dot_dtypes_and_strides(dtype):
    a = make_cpu((2, 301), dtype, low=-1, high=1)
    b = make_cpu((903,), dtype, low=-1, high=1, seed=1)
    ao, bo = _dev(a, b)
    # Non-contiguous (a row of a transposed matrix, every third element) and with offsets.
    out = torch.dot(ao.t().contiguous().t()[1], bo[::3])
    check_mv_like(out, a[1].unsqueeze(0), b[::3])
    out = torch.dot(ao[0, 1:], bo[2:302])
    check_mv_like(out, a[0, 1:].unsqueeze(0), b[2:302])


def test_dot_nan_inf():
    a = torch.tensor([1.0, INF, 2.0, 3.0])
    b = torch.tensor([1.0, 1.0, NAN, 0.0])
    for x, y in [(a, b), (a, torch.ones(4)), (a, -a), (torch.ones(4), torch.full((4,), NAN))]:
        assert_ocl_close(torch.dot(*_dev(x, y)), torch.dot(x, y), equal_nan=True)


@pytest.mark.parametrize("dtype", INTS, ids=dtype_id)
def test_dot_and_mv_integers_like_cpu(dtype):
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -(2**40)), min(info.max, 2**40)  # products and sums wrap around
    a = make_cpu((77,), dtype, low=lo, high=hi)
    b = make_cpu((77,), dtype, low=lo, high=hi, seed=1)
    m = make_cpu((9, 77), dtype, low=lo, high=hi, seed=2)
    c = make_cpu((9,), dtype, seed=3)
    ao, bo, mo, co = _dev(a, b, m, c)
    assert_ocl_close(torch.dot(ao, bo), torch.dot(a, b))
    assert_ocl_close(torch.vdot(ao, bo), torch.vdot(a, b))
    assert_ocl_close(torch.mv(mo, bo), torch.mv(m, b))
    assert_ocl_close(
        torch.addmv(co, mo, bo, beta=3, alpha=2), torch.addmv(c, m, b, beta=3, alpha=2)
    )
    assert_ocl_close(torch.trace(mo[:, :9]), torch.trace(m[:, :9]))


def test_dot_errors_like_cpu():
    def both(fn, *ts):
        with pytest.raises(Exception) as cpu:
            fn(*ts)
        with pytest.raises(cpu.type) as dev:
            fn(*_dev(*ts))
        if cpu.type is not NotImplementedError:  # those name the CPU's kernel
            assert str(dev.value).split("\n")[0] == str(cpu.value).split("\n")[0]

    f, d = torch.ones(3), torch.ones(3, dtype=torch.float64)
    both(torch.dot, f, d)
    both(torch.dot, torch.ones(3, 3), torch.ones(3, 3))
    both(torch.dot, f, torch.ones(4))
    both(torch.vdot, f, d)
    both(torch.dot, torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool))
    both(torch.mv, torch.ones(3, 3), d)
    both(torch.mv, torch.ones(3, 4), f)
    both(torch.mv, torch.ones(3, 3, dtype=torch.bool), torch.ones(3, dtype=torch.bool))
    both(lambda s, m, v: torch.addmv(s, m, v), d, torch.ones(3, 3), f)
    both(lambda s, m, v: torch.addmv(s, m, v), torch.ones(2), torch.ones(3, 3), f)
    both(torch.trace, torch.ones(3, 3, 3))
    both(torch.trace, torch.ones(3, 3, dtype=torch.bool))
    both(
        torch.addbmm,
        torch.ones(3, 3),
        torch.ones(2, 3, 3, dtype=torch.float64),
        torch.ones(2, 3, 3),
    )
    both(torch.addbmm, torch.ones(3, 3), torch.ones(2, 3, 4), torch.ones(2, 3, 3))
    # The process stays usable.
    assert_ocl_close(torch.dot(*_dev(f, f)), torch.dot(f, f))


# --- mv / addmv ------------------------------------------------------------------------------

MV_SHAPES = [(1, 1), (7, 13), (64, 64), (65, 129), (1, 500), (500, 1), (0, 4), (4, 0)]


@pytest.mark.parametrize("mk", MV_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_mv_shapes_and_layouts(mk, layout):
    m, k = mk
    a = make_cpu((m, k), torch.float32, low=-1, high=1)
    x = make_cpu((2 * k,), torch.float32, low=-1, high=1, seed=1)[::2]
    ao, xo = _dev(a, x.contiguous())
    xo = torch.empty(2 * k, device=DEVICE)[::2].copy_(xo) if layout == "strided" else xo
    if layout == "transposed":
        ao = a.t().contiguous().to(DEVICE).t()
    elif layout == "strided":
        ao = make_cpu((m, 3 * k), torch.float32).to(DEVICE)[:, ::3].copy_(ao)
    out = torch.mv(ao, xo)
    assert out.shape == (m,)
    check_mv_like(out, a, x)
    check_mv_like(ao @ xo, a, x)
    check_mv_like(torch.matmul(ao, xo), a, x)


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize(("beta", "alpha"), [(1, 1), (0.5, -2), (0, 1)])
@pytest.mark.parametrize("bias_shape", [(37,), (1,), ()])
def test_addmv(dtype, beta, alpha, bias_shape):
    a = make_cpu((37, 53), dtype, low=-1, high=1)
    x = make_cpu((53,), dtype, low=-1, high=1, seed=1)
    c = make_cpu(bias_shape, dtype, seed=2)
    ao, xo, co = _dev(a, x, c)
    out = torch.addmv(co, ao, xo, beta=beta, alpha=alpha)
    check_mv_like(out, a, x, c.expand(37), beta, alpha)


def test_addmv_inplace_out_and_beta_zero_ignores_nan():
    a = make_cpu((19, 23), torch.float32)
    x = make_cpu((23,), torch.float32, seed=1)
    c = make_cpu((19,), torch.float32, seed=2)
    ao, xo, co = _dev(a, x, c)
    ref = torch.addmv(c.double(), a.double(), x.double(), beta=2)
    y = co.clone()
    y.addmv_(ao, xo, beta=2)
    assert_ocl_close(y, ref.float(), atol=1e-4, rtol=1e-4)
    out = torch.empty(3, device=DEVICE)
    torch.addmv(co, ao, xo, beta=2, out=out)
    assert_ocl_close(out, ref.float(), atol=1e-4, rtol=1e-4)
    # Non-contiguous out.
    out = torch.zeros(38, device=DEVICE)[::2]
    torch.mv(ao, xo, out=out)
    assert_ocl_close(out, (a.double() @ x.double()).float(), atol=1e-4, rtol=1e-4)
    nan = torch.full((19,), NAN, device=DEVICE)
    assert not torch.isnan(torch.addmv(nan, ao, xo, beta=0)).any().item()
    assert torch.isnan(torch.addmv(nan, ao, xo, beta=1)).all().item()


def test_mv_nan_inf_propagate():
    a = make_cpu((4, 5), torch.float32)
    a[1, 2], a[3, 0] = NAN, INF
    x = make_cpu((5,), torch.float32, seed=1)
    assert_ocl_close(torch.mv(*_dev(a, x)), torch.mv(a, x), equal_nan=True, atol=1e-5, rtol=1e-5)


@pytest.mark.slow
def test_mv_large():
    a = make_cpu((1500, 2100), torch.float32, low=-1, high=1)
    x = make_cpu((2100,), torch.float32, low=-1, high=1, seed=1)
    check_mv_like(torch.mv(*_dev(a, x)), a, x)
    check_mv_like(torch.mv(*_dev(a.t(), x[:1500])), a.t(), x[:1500])


# --- ops built on them -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=dtype_id)
def test_addr_outer_ger(dtype):
    c = make_cpu((7, 9), dtype)
    u, v = make_cpu((7,), dtype, seed=1), make_cpu((9,), dtype, seed=2)
    co, uo, vo = _dev(c, u, v)
    assert_ocl_close(torch.addr(co, uo, vo, beta=2, alpha=3), torch.addr(c, u, v, beta=2, alpha=3))
    assert_ocl_close(torch.outer(uo, vo), torch.outer(u, v))
    assert_ocl_close(torch.ger(uo, vo), torch.ger(u, v))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32], ids=dtype_id)
@pytest.mark.parametrize("shape", [(3, 7, 5, 9), (1, 1, 1, 1), (0, 4, 3, 5), (4, 5, 0, 3)])
def test_addbmm(dtype, shape):
    b, m, k, n = shape
    c = make_cpu((m, n), dtype)
    x, y = make_cpu((b, m, k), dtype, seed=1), make_cpu((b, k, n), dtype, seed=2)
    co, xo, yo = _dev(c, x, y)
    out = torch.addbmm(co, xo, yo, beta=2, alpha=0.5 if dtype.is_floating_point else 3)
    if dtype.is_floating_point:
        ref = 2 * c.double() + 0.5 * (x.double() @ y.double()).sum(0)
        bound = 2 * c.double().abs() + 0.5 * (x.double().abs() @ y.double().abs()).sum(0)
        if dtype == torch.float16:
            # One addmm_ per batch (ATen's addbmm, as on the CPU): a float16 rounding each.
            assert out.dtype == dtype
            got = out.cpu().double()
            assert ((got - ref).abs() <= (b + 1) * 2.0**-11 * bound + 1e-6).all()
        else:
            assert_mm_close(out, dtype, ref, bound, b * k)
    else:
        assert_ocl_close(out, torch.addbmm(c, x, y, beta=2, alpha=3))
    co2 = co.clone()
    co2.addbmm_(xo, yo)
    ref = torch.addbmm(c.double(), x.double(), y.double()).to(dtype)
    assert_ocl_close(co2, ref, atol=2e-2, rtol=2e-2)


def test_inner_tensordot_einsum_matmul_1d():
    a = make_cpu((4, 5, 6), torch.float32)
    b = make_cpu((6, 3), torch.float32, seed=1)
    v = make_cpu((6,), torch.float32, seed=2)
    w = make_cpu((5,), torch.float32, seed=3)
    ao, bo, vo, wo = _dev(a, b, v, w)
    tol = {"atol": 1e-4, "rtol": 1e-4}
    assert_ocl_close(torch.inner(ao, vo), torch.inner(a, v), **tol)
    assert_ocl_close(torch.inner(ao, bo.t()), torch.inner(a, b.t()), **tol)
    assert_ocl_close(
        torch.tensordot(ao, bo, dims=([2], [0])), torch.tensordot(a, b, dims=([2], [0])), **tol
    )
    assert_ocl_close(torch.tensordot(ao, ao, dims=3), torch.tensordot(a, a, dims=3), **tol)
    assert_ocl_close(torch.einsum("ijk,k->ij", ao, vo), torch.einsum("ijk,k->ij", a, v), **tol)
    assert_ocl_close(torch.einsum("i,i->", vo, vo), torch.einsum("i,i->", v, v), **tol)
    assert_ocl_close(torch.einsum("ii->", bo[:3]), torch.einsum("ii->", b[:3]), **tol)
    assert_ocl_close(torch.einsum("bij,jk->bik", ao, bo), torch.einsum("bij,jk->bik", a, b), **tol)
    # matmul / __rmatmul__ with 1-D operands: vector @ matrix, matrix @ vector, batched.
    assert_ocl_close(vo @ bo, v @ b, **tol)
    assert_ocl_close(ao @ vo, a @ v, **tol)
    assert_ocl_close(wo @ ao, w @ a, **tol)
    assert_ocl_close(vo.__rmatmul__(bo.t()), v.__rmatmul__(b.t()), **tol)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.int64, torch.int32, torch.uint8], ids=dtype_id
)
@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (1, 1), (0, 3)])
def test_trace(dtype, shape):
    a = make_cpu(shape, dtype)
    ao = a.to(DEVICE)
    expected = (
        torch.trace(a.double()).to(torch.trace(a).dtype)
        if dtype.is_floating_point
        else torch.trace(a)
    )
    assert_ocl_close(torch.trace(ao), expected, atol=1e-2, rtol=1e-2)
    assert_ocl_close(torch.trace(ao.t()), expected, atol=1e-2, rtol=1e-2)


def test_gradients():
    a = make_cpu((6, 5), torch.float64)
    x = make_cpu((5,), torch.float64, seed=1)
    c = make_cpu((6,), torch.float64, seed=2)
    y = make_cpu((6,), torch.float64, seed=3)
    b3 = make_cpu((2, 6, 4), torch.float64, seed=4)
    b4 = make_cpu((2, 4, 5), torch.float64, seed=5)
    cases = [
        (lambda a, x, c, y, b3, b4: torch.dot(x, a[0]), "dot"),
        (lambda a, x, c, y, b3, b4: torch.vdot(c, y), "vdot"),
        (lambda a, x, c, y, b3, b4: torch.addmv(c, a, x, beta=0.5, alpha=2).sum(), "addmv"),
        (lambda a, x, c, y, b3, b4: (torch.mv(a, x) * y).sum(), "mv"),
        (lambda a, x, c, y, b3, b4: torch.addr(a, y, x, alpha=2).pow(2).sum(), "addr"),
        (lambda a, x, c, y, b3, b4: torch.trace(a[:5]), "trace"),
        (lambda a, x, c, y, b3, b4: torch.addbmm(a, b3, b4).pow(2).sum(), "addbmm"),
    ]
    cpu = [t.float().requires_grad_() for t in (a, x, c, y, b3, b4)]
    dev = [t.float().to(DEVICE).requires_grad_() for t in (a, x, c, y, b3, b4)]
    for fn, name in cases:
        gc = torch.autograd.grad(fn(*cpu), cpu, allow_unused=True)
        gd = torch.autograd.grad(fn(*dev), dev, allow_unused=True)
        for u, v in zip(gc, gd, strict=True):
            assert (u is None) == (v is None), name
            if u is not None:
                assert_ocl_close(v, u, atol=1e-4, rtol=1e-4)
