"""The short route of tiny elementwise calls (csrc/ops/ElementwiseTiny.cpp): a small call with
same-shape, default-contiguous ocl operands of one float dtype goes from the op straight into the
stream's batch, skipping ATen's TensorIterator. Every op registered for it, in its functional,
in-place and out= forms, must give the CPU's result and take the route
(torch.ocl.batch_stats()["short_route"]); calls it must not take (broadcasting, mixed dtypes,
strides, neg views, overlapping outputs, CPU scalars, out= needing a resize, NaN bounds) must
take ATen's route and still give the CPU's result, errors included."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, TOLERANCES, assert_ocl_close, make_cpu

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
SHAPES = [(), (1,), (37,), (3, 5, 7)]

# op name -> (function(a[, b], **out) on any device, number of tensor operands)
UNARY = {
    name: (getattr(torch, name), 1)
    for name in (
        "neg sign ceil floor round trunc exp log sqrt rsqrt sigmoid tanh sin cos reciprocal erf"
    ).split()
}
OPS = {
    **UNARY,
    "add": (lambda a, b, **kw: torch.add(a, b, **kw), 2),
    "add_alpha": (lambda a, b, **kw: torch.add(a, b, alpha=-2.5, **kw), 2),
    "sub": (lambda a, b, **kw: torch.sub(a, b, **kw), 2),
    "sub_alpha": (lambda a, b, **kw: torch.sub(a, b, alpha=3, **kw), 2),
    "mul": (lambda a, b, **kw: torch.mul(a, b, **kw), 2),
    "div": (lambda a, b, **kw: torch.div(a, b, **kw), 2),
    "clamp_min": (lambda a, **kw: torch.clamp_min(a, -0.25, **kw), 1),
    "clamp_max": (lambda a, **kw: torch.clamp_max(a, 0.5, **kw), 1),
    "relu": (lambda a: torch.relu(a), 1),
}
INPLACE = {
    "add": lambda a, b: a.add_(b),
    "add_alpha": lambda a, b: a.add_(b, alpha=-2.5),
    "sub": lambda a, b: a.sub_(b),
    "sub_alpha": lambda a, b: a.sub_(b, alpha=3),
    "mul": lambda a, b: a.mul_(b),
    "div": lambda a, b: a.div_(b),
    "clamp_min": lambda a: a.clamp_min_(-0.25),
    "clamp_max": lambda a: a.clamp_max_(0.5),
    "relu": lambda a: a.relu_(),
    **{name: (lambda a, name=name: getattr(a, name + "_")()) for name in UNARY},
}


def _operands(n_in, shape, dtype):
    """Random operands with NaN, +-Inf and signed zeros among them (where there is room)."""
    out = []
    for k in range(n_in):
        t = make_cpu(shape, dtype, seed=11 + k, low=-3, high=3, nonzero=k == 1)
        if k == 0 and t.numel() >= 5:
            t.view(-1)[:5] = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0])
        out.append(t)
    return out


def _ref(fn, cpu):
    """fn on float64 copies, rounded to the inputs' dtype."""
    return fn(*[c.double() for c in cpu]).to(cpu[0].dtype)


def _short(fn):
    """Runs fn; returns (result, calls that took the short route meanwhile)."""
    before = torch.ocl.batch_stats()["short_route"]
    out = fn()
    return out, torch.ocl.batch_stats()["short_route"] - before


def _tol(dtype):
    rtol, atol = TOLERANCES[dtype]
    return {"rtol": rtol, "atol": atol}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", sorted(OPS))
def test_functional(op, dtype, shape):
    fn, n_in = OPS[op]
    cpu = _operands(n_in, shape, dtype)
    dev = [c.to(DEVICE) for c in cpu]
    out, short = _short(lambda: fn(*dev))
    assert short == 1
    assert out.shape == shape and out.dtype == dtype and out.is_contiguous()
    assert_ocl_close(out, _ref(fn, cpu), **_tol(dtype))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace(op, dtype, shape):
    fn = INPLACE[op]
    cpu = _operands(OPS[op][1], shape, dtype)
    dev = [c.to(DEVICE) for c in cpu]
    self_ptr = dev[0].data_ptr()
    out, short = _short(lambda: fn(*dev))
    assert short == 1
    assert out is dev[0] and out.data_ptr() == self_ptr
    assert_ocl_close(dev[0], _ref(lambda *x: fn(*[t.clone() for t in x]), cpu), **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", sorted(set(OPS) - {"relu"}))
def test_out(op, dtype):
    fn, n_in = OPS[op]
    cpu = _operands(n_in, (5, 7), dtype)
    dev = [c.to(DEVICE) for c in cpu]
    out = make_cpu((5, 7), dtype, seed=99).to(DEVICE)
    ptr = out.data_ptr()
    res, short = _short(lambda: fn(*dev, out=out))
    assert short == 1
    assert res is out and out.data_ptr() == ptr
    assert_ocl_close(out, _ref(fn, cpu), **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_python_numbers(dtype):
    """x op number (a wrapped-number CPU tensor): on the short route, the number converted like
    the CPU's scalar operands (beyond the dtype's range it becomes inf)."""
    a = _operands(1, (3, 11), dtype)[0]
    calls = {
        "x * 0.5": lambda x: x * 0.5,
        "x + 1": lambda x: x + 1,
        "x - 3.25": lambda x: x - 3.25,
        "x / 7": lambda x: x / 7,
        "x * 1e6": lambda x: x * 1e6,
        "x / 0": lambda x: x / 0,
        "x * nan": lambda x: x * float("nan"),
        "2 * x": lambda x: 2 * x,
        "x.mul_(-1.5)": lambda x: x.clone().mul_(-1.5),
        "add(x, 2, alpha=3)": lambda x: torch.add(x, 2, alpha=3),
        "sub(x, 2.5, out=)": lambda x: torch.sub(x, 2.5, out=torch.empty_like(x)),
    }
    for name, fn in calls.items():
        expected = fn(a)
        got, short = _short(lambda fn=fn: fn(a.to(DEVICE)))
        assert short == 1, name
        assert got.dtype == expected.dtype, name
        assert_ocl_close(got, expected, **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_out_is_an_input(dtype):
    """out= the first or second operand (the same elements): allowed on the short route."""
    a, b = (c.to(DEVICE) for c in _operands(2, (33,), dtype))
    expected = (a.cpu().double() * b.cpu().double()).to(dtype)
    res, short = _short(lambda: torch.mul(a, b, out=b))
    assert short == 1 and res is b
    assert_ocl_close(b, expected, **_tol(dtype))
    x = a.clone()
    _, short = _short(lambda: x.add_(x))
    assert short == 1
    assert_ocl_close(x, (a.cpu().double() * 2).to(dtype), **_tol(dtype))


def _x(shape=(6, 8), dtype=torch.float32, seed=1):
    return make_cpu(shape, dtype, seed=seed, low=-2, high=2)


# Calls that must go through ATen's route: name -> fn(cpu_or_device) building operands from
# the CPU tensors given (so the same expression runs on both devices).
OTHER_ROUTE = {
    "broadcast": lambda d: d(_x()) + d(_x((8,), seed=2)),
    "mixed dtypes": lambda d: d(_x()) + d(_x(dtype=torch.float16, seed=2)),
    "float64": lambda d: d(_x(dtype=torch.float64)) * d(_x(dtype=torch.float64, seed=2)),
    "int64": lambda d: d(_x().long()) + d(_x(seed=2).long()),
    "transposed": lambda d: d(_x()).t() + d(_x((8, 6), seed=2)),
    "sliced": lambda d: d(_x((6, 9)))[:, :8] * d(_x(seed=2)),
    "size-1 dim odd stride": lambda d: (
        d(_x((4, 1))).as_strided((4, 1), (1, 7)).mul(d(_x((4, 1), seed=2)))
    ),
    "python bool": lambda d: d(_x()) * True,
    "0-dim cpu tensor": lambda d: d(_x()) * torch.tensor(1.5),
    "large": lambda d: d(_x((100, 101))) + d(_x((100, 101), seed=2)),
    "clamp NaN bound": lambda d: torch.clamp_min(d(_x()), float("nan")),
}


@pytest.mark.parametrize("case", sorted(OTHER_ROUTE))
def test_other_calls_take_atens_route(case):
    fn = OTHER_ROUTE[case]
    expected = fn(lambda t: t)
    out, short = _short(lambda: fn(lambda t: t.to(DEVICE)))
    assert short == 0
    assert out.dtype == expected.dtype and out.shape == expected.shape
    assert out.stride() == expected.stride()
    assert_ocl_close(out, expected)


OVERLAPS = {
    "in-place, other a shifted view of self": lambda x, y: x[:-1].add_(x[1:]),
    "out= a shifted view of an input": lambda x, y: torch.mul(x[1:], y[1:], out=x[:-1]),
    "out= an expanded tensor": lambda x, y: torch.mul(x[:4], y[:4], out=x[:1].expand(4)),
}


@pytest.mark.parametrize("case", sorted(OVERLAPS))
def test_partial_overlaps_raise_the_cpus_error(case):
    """An output sharing memory with an input at other elements: the batch could read an
    element after writing it, so the call takes ATen's route, which raises as the CPU does."""
    fn = OVERLAPS[case]
    x, y = _x((40,)), _x((40,), seed=2)
    with pytest.raises(RuntimeError) as cpu_err:
        fn(x.clone(), y)
    xo, yo = x.to(DEVICE), y.to(DEVICE)
    with pytest.raises(RuntimeError) as ocl_err:
        fn(xo, yo)
    assert str(ocl_err.value) == str(cpu_err.value)
    assert_ocl_close(xo, x)  # nothing written


def test_out_of_another_shape_is_resized_by_atens_route():
    a, b = _x((5,)), _x((5,), seed=2)
    out = torch.empty(3, device=DEVICE)
    with pytest.warns(UserWarning, match="resized"):
        _, short = _short(lambda: torch.add(a.to(DEVICE), b.to(DEVICE), out=out))
    assert short == 0
    assert_ocl_close(out, a + b)


@pytest.mark.parametrize("out_dtype", [torch.float16, torch.float64, torch.int32], ids=str)
def test_out_of_another_dtype_is_atens(out_dtype):
    """out= of another dtype: ATen's route casts where the CPU does and raises where it does."""
    a, b = _x((5,)), _x((5,), seed=2)
    try:
        expected = torch.add(a, b, out=torch.empty(5, dtype=out_dtype))
    except RuntimeError as e:
        out = torch.empty(5, dtype=out_dtype, device=DEVICE)
        with pytest.raises(RuntimeError) as ocl_err:
            torch.add(a.to(DEVICE), b.to(DEVICE), out=out)
        assert str(ocl_err.value) == str(e)
        return
    out = torch.empty(5, dtype=out_dtype, device=DEVICE)
    _, short = _short(lambda: torch.add(a.to(DEVICE), b.to(DEVICE), out=out))
    assert short == 0
    assert_ocl_close(out, expected)


@pytest.mark.parametrize(
    "call",
    [
        lambda a: torch.add(a, a, alpha=1e10),
        lambda a: torch.sub(a, a, alpha=1e10),
        lambda a: torch.clamp_min(a, 1e10),
        lambda a: torch.add(a, a, alpha=True),
        lambda a: a.add_(a, alpha=1e10),
    ],
    ids=["add alpha", "sub alpha", "clamp_min bound", "bool alpha", "add_ alpha"],
)
def test_parameter_errors_are_the_cpus(call):
    """A parameter the dtype cannot hold raises the CPU's error on the short route too."""
    a = _x((9,), dtype=torch.float16)
    with pytest.raises(RuntimeError) as cpu_err:
        call(a.clone())
    with pytest.raises(RuntimeError) as ocl_err:
        call(a.to(DEVICE))
    assert str(ocl_err.value) == str(cpu_err.value)
    torch.ocl.synchronize()  # the process stays usable
    assert_ocl_close(a.to(DEVICE) + 1, a + 1)


def test_autograd_through_the_short_route():
    a, b = _x((17,)), _x((17,), seed=2)
    ac, bc = a.double().requires_grad_(), b.double().requires_grad_()
    ad, bd = a.to(DEVICE).requires_grad_(), b.to(DEVICE).requires_grad_()
    before = torch.ocl.batch_stats()["short_route"]
    (torch.sigmoid(ad * bd - ad) / (bd.exp() + 1)).sum().backward()
    assert torch.ocl.batch_stats()["short_route"] - before >= 5
    (torch.sigmoid(ac * bc - ac) / (bc.exp() + 1)).sum().backward()
    assert_ocl_close(ad.grad, ac.grad.float())
    assert_ocl_close(bd.grad, bc.grad.float())
