"""Native elementwise ops (the TensorIterator engine) against PyTorch on the CPU.

Every op runs in its functional, in-place and out= forms, over the layouts in `shapes` (float32)
and over a representative dtype matrix (contiguous 7x13 operands): the full product of ops,
dtypes and layouts would compile several hundred kernel variants. Float results are compared
with a float64 CPU reference rounded to the result dtype. The CPU fallback is an error here.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch
from ocl_testing import (
    ALL_DTYPES,
    DEVICE,
    assert_ocl_close,
    check_op,
    cpu_reference,
    dtype_id,
    make_cpu,
    shape_params,
    shapes,
    skip_unsupported,
)

ODD = next(s for s in shapes if s.id == "odd_7x13")
STEP = next(s for s in shapes if s.id == "step_slice")
NAN, INF = float("nan"), float("inf")
# Every float class: NaN, both infinities, signed zeros, halves (rounding ties), ordinary values.
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 1.0, -1.0, 3.75, -1e-3, 100.0]


def cpu_supports(fn, dtypes, n=1) -> bool:
    """Whether PyTorch on the CPU accepts fn for operands of these dtypes (a dtype or a tuple)."""
    if not isinstance(dtypes, tuple):
        dtypes = (dtypes,) * n
    try:
        fn(*[make_cpu((3,), d, nonzero=True) for d in dtypes])
    except (RuntimeError, TypeError):
        return False
    return True


def ocl_pair(values, dtype):
    cpu = torch.tensor(values, dtype=dtype)
    return cpu, cpu.to(DEVICE)


# ------------------------------------------------------------------------------------------
# Unary ops

# name -> (function, float input range, integer input range)
UNARY = {
    "neg": (torch.neg, None, None),
    "abs": (torch.abs, None, None),
    "sign": (torch.sign, None, None),
    "relu": (torch.relu, None, None),
    "ceil": (torch.ceil, None, None),
    "floor": (torch.floor, None, None),
    "round": (torch.round, None, None),
    "trunc": (torch.trunc, None, None),
    "exp": (torch.exp, (-4, 4), None),
    "log": (torch.log, (0.05, 8), (1, 9)),
    "sqrt": (torch.sqrt, (0, 9), (0, 9)),
    "rsqrt": (torch.rsqrt, (0.05, 9), (1, 9)),
    "sigmoid": (torch.sigmoid, (-8, 8), None),
    "tanh": (torch.tanh, (-4, 4), None),
    "sin": (torch.sin, (-6, 6), None),
    "cos": (torch.cos, (-6, 6), None),
    "reciprocal": (torch.reciprocal, (0.1, 4), (1, 9)),
    "logical_not": (torch.logical_not, None, None),
}
# Ops whose result is always floating: integer inputs are promoted.
FLOAT_RESULT = ("exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "cos", "reciprocal")
# PyTorch has no out= overload for these.
NO_OUT = ("relu",)

# Beyond float32 (which `shapes` covers), each op gets a few dtypes so that together they cover
# every dtype's loads, stores and conversions without compiling every (op, dtype) variant.
UNARY_DTYPES = {
    "neg": (torch.bfloat16, torch.int64, torch.int8, torch.uint8),
    "abs": (torch.float16, torch.int16),
    "sign": (torch.int32, torch.bool),
    "relu": (torch.int64,),
    "ceil": (torch.float64, torch.int32),
    "floor": (torch.bfloat16, torch.uint8),
    "round": (torch.float16, torch.int64),
    "trunc": (torch.float16, torch.int8),
    "exp": (torch.float16, torch.int64),
    "log": (torch.float64, torch.uint8),
    "sqrt": (torch.float16, torch.int32),
    "rsqrt": (torch.bfloat16, torch.int16),
    "sigmoid": (torch.float64, torch.bool),
    "tanh": (torch.bfloat16,),
    "sin": (torch.int64,),
    "cos": (torch.float64,),
    "reciprocal": (torch.int32,),
    "logical_not": (torch.float16, torch.int64, torch.bool),
}


def _unary_dtypes(name):
    return (torch.float32,) + UNARY_DTYPES[name]


def _unary_input(name, shape, dtype, **kw):
    _, frange, irange = UNARY[name]
    rng = frange if dtype.is_floating_point else irange
    low, high = rng if rng is not None else (None, None)
    return shape.make(dtype, low=low, high=high, **kw)[0]


def _unary_dtype_params():
    params = []
    for name, (fn, _, _) in UNARY.items():
        for dtype in _unary_dtypes(name):
            if cpu_supports(fn, dtype):
                params.append(pytest.param(name, dtype, id=f"{name}-{dtype_id(dtype)}"))
    return params


# Layouts that iterate as one flat array, and strided ones (each strided layout compiles another
# variant per op and dtype, so a representative subset of ops runs them).
DENSE_SHAPES = [s for s in shapes if s.id not in ("step_slice", "broadcast_5x1_1x7")]
STRIDED_SHAPES = [s for s in shapes if s.id in ("transposed", "step_slice", "broadcast_5x1_1x7")]
UNARY_STRIDED = ("neg", "abs", "relu", "round", "exp", "sqrt", "sigmoid", "logical_not")


@pytest.mark.parametrize("shape", shape_params(DENSE_SHAPES))
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_shapes(name, shape):
    x, xo = _unary_input(name, shape, torch.float32)
    check_op(UNARY[name][0], [x], [xo])


@pytest.mark.parametrize("shape", shape_params(STRIDED_SHAPES))
@pytest.mark.parametrize("name", UNARY_STRIDED)
def test_unary_strided(name, shape):
    x, xo = _unary_input(name, shape, torch.float32)
    assert shape.id == "broadcast_5x1_1x7" or not xo.is_contiguous()
    check_op(UNARY[name][0], [x], [xo])


@pytest.mark.parametrize(("name", "dtype"), _unary_dtype_params())
def test_unary_dtypes(name, dtype):
    skip_unsupported(dtype)
    x, xo = _unary_input(name, ODD, dtype)
    check_op(UNARY[name][0], [x], [xo])


# In place on int32 only for the ops whose result keeps the dtype (PyTorch refuses to write a
# float result into an integer tensor).
INPLACE_PARAMS = [
    pytest.param(name, dtype, id=f"{name}-{dtype_id(dtype)}")
    for name in UNARY
    for dtype in (torch.float32, torch.int32)
    if dtype == torch.float32 or name not in FLOAT_RESULT
]


@pytest.mark.parametrize(("name", "dtype"), INPLACE_PARAMS)
def test_unary_inplace(name, dtype):
    for shape in (ODD, STEP) if name in UNARY_STRIDED or dtype != torch.float32 else (ODD,):
        x, xo = _unary_input(name, shape, dtype)
        expected = cpu_reference(UNARY[name][0], [x])
        ptr, strides = xo.data_ptr(), xo.stride()
        ret = getattr(xo, name + "_")()
        assert ret is xo
        assert xo.data_ptr() == ptr and xo.stride() == strides
        assert_ocl_close(xo, expected.to(dtype))


@pytest.mark.parametrize("name", [n for n in UNARY if n not in NO_OUT])
def test_unary_out(name):
    fn = UNARY[name][0]
    x, xo = _unary_input(name, ODD, torch.float32)
    expected = cpu_reference(fn, [x])
    # A contiguous out, and (for the ops that run strided layouts) a non-contiguous one: the
    # transpose of a 13x7 tensor.
    outs = [torch.empty(7, 13, dtype=expected.dtype, device=DEVICE)]
    if name in UNARY_STRIDED:
        outs.append(torch.empty(13, 7, dtype=expected.dtype, device=DEVICE).t())
    for out in outs:
        strides = out.stride()
        ret = fn(xo, out=out)
        assert ret is out
        assert out.stride() == strides
        assert_ocl_close(out, expected)
    # An empty out is resized.
    out = torch.empty(0, dtype=expected.dtype, device=DEVICE)
    fn(xo, out=out)
    assert_ocl_close(out, expected)


def test_unary_out_int_to_float():
    x, xo = ODD.make(torch.int32, low=1, high=9)[0]
    out = torch.empty(7, 13, device=DEVICE)
    torch.sqrt(xo, out=out)
    assert_ocl_close(out, cpu_reference(torch.sqrt, [x]))


def test_round_half_to_even():
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x, xo = ocl_pair([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 4.5, 1e7 + 0.5, 0.49999997], dtype)
        assert_ocl_close(torch.round(xo), torch.round(x), exact=True)


def _special_params(table):
    return [
        pytest.param(name, dtype, id=f"{name}-{dtype_id(dtype)}")
        for name, dtypes in table.items()
        for dtype in dtypes
        if dtype.is_floating_point
    ]


@pytest.mark.parametrize(("name", "dtype"), _special_params({n: _unary_dtypes(n) for n in UNARY}))
def test_unary_special_values(name, dtype):
    skip_unsupported(dtype)
    x, xo = ocl_pair(SPECIAL, dtype)
    check_op(UNARY[name][0], [x], [xo])


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64], ids=dtype_id)
def test_abs_neg_sign_integer_extremes(dtype):
    info = torch.iinfo(dtype)
    x, xo = ocl_pair([info.min + 1, info.max, -1, 0, 1, info.min], dtype)
    for fn in (torch.abs, torch.neg, torch.sign):
        assert_ocl_close(fn(xo), fn(x))


# ------------------------------------------------------------------------------------------
# Binary ops

BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
}
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")


BINARY_DTYPES = {
    "add": ALL_DTYPES,
    "mul": (torch.float16, torch.int8, torch.bool),
    "sub": (torch.bfloat16, torch.uint8),
    "div": (torch.float64, torch.int32, torch.bool),
    "maximum": (torch.float16, torch.int64, torch.bool),
    "minimum": (torch.uint8,),
    "bitwise_and": (torch.int64, torch.bool),
    "bitwise_or": (torch.uint8,),
    "bitwise_xor": (torch.bool,),
    "eq": (torch.bfloat16, torch.int64, torch.bool),
    "ne": (),
    "lt": (torch.int16, torch.float16),
    "le": (),
    "gt": (),
    "ge": (),
}


def _binary_dtypes(name):
    """float32 (int32 for bitwise ops, which `shapes` covers) and a spread of other dtypes."""
    return tuple(dict.fromkeys((_base_dtype(name),) + BINARY_DTYPES[name]))


def _binary_dtype_params():
    params = []
    for name, fn in BINARY.items():
        for dtype in _binary_dtypes(name):
            if cpu_supports(fn, dtype, n=2):
                params.append(pytest.param(name, dtype, id=f"{name}-{dtype_id(dtype)}"))
    return params


def _binary_inputs(name, shape, dtype):
    """Operands with ties (integral floats) so that eq/maximum see equal values, and a divisor
    without zeros."""
    a, b = shape.make(dtype, n=2, integral=True, low=-3, high=4)
    if name == "div":
        b = shape.make(dtype, n=2, nonzero=True, seed=7)[1]
    return a, b


def _base_dtype(name):
    return torch.int32 if name in BITWISE else torch.float32


BINARY_STRIDED = ("add", "mul", "div", "maximum", "bitwise_and", "eq", "lt")


@pytest.mark.parametrize("shape", shape_params(DENSE_SHAPES))
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_shapes(name, shape):
    (a, ao), (b, bo) = _binary_inputs(name, shape, _base_dtype(name))
    check_op(BINARY[name], [a, b], [ao, bo])


@pytest.mark.parametrize("shape", shape_params(STRIDED_SHAPES))
@pytest.mark.parametrize("name", BINARY_STRIDED)
def test_binary_strided(name, shape):
    (a, ao), (b, bo) = _binary_inputs(name, shape, _base_dtype(name))
    check_op(BINARY[name], [a, b], [ao, bo])
    # A contiguous operand with a strided one.
    ((c, co),) = ODD.make(_base_dtype(name), integral=True, nonzero=True, seed=11)
    if shape.id != "broadcast_5x1_1x7":
        check_op(BINARY[name], [a, c], [ao, co])


@pytest.mark.parametrize(("name", "dtype"), _binary_dtype_params())
def test_binary_dtypes(name, dtype):
    skip_unsupported(dtype)
    (a, ao), (b, bo) = _binary_inputs(name, ODD, dtype)
    check_op(BINARY[name], [a, b], [ao, bo])


@pytest.mark.parametrize("name", [n for n in BINARY if hasattr(torch.Tensor, n + "_")])
def test_binary_inplace(name):
    dtype = _base_dtype(name)
    (a, ao), (b, bo) = _binary_inputs(name, ODD, dtype)
    method = getattr(torch.Tensor, name + "_")
    expected = cpu_reference(BINARY[name], [a, b])
    ptr = ao.data_ptr()
    ret = method(ao, bo)
    assert ret is ao and ao.data_ptr() == ptr
    assert_ocl_close(ao, expected.to(dtype))
    if name not in BINARY_STRIDED:
        return
    # In place into a non-contiguous tensor, with a broadcast (1, 13) operand.
    (c, co), (d, do) = _binary_inputs(name, STEP, dtype)
    d, do = d[:1], do[:1]
    expected = cpu_reference(BINARY[name], [c, d]).to(dtype)
    method(co, do)
    assert not co.is_contiguous()
    assert_ocl_close(co, expected)


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_out(name):
    dtype = _base_dtype(name)
    fn = BINARY[name]
    (a, ao), (b, bo) = _binary_inputs(name, ODD, dtype)
    expected = cpu_reference(fn, [a, b])
    outs = [torch.empty(7, 13, dtype=expected.dtype, device=DEVICE)]
    if name in BINARY_STRIDED:
        outs.append(torch.empty(13, 7, dtype=expected.dtype, device=DEVICE).t())
        outs.append(torch.empty(7, 26, dtype=expected.dtype, device=DEVICE)[:, ::2])
    for out in outs:
        strides = out.stride()
        ret = fn(ao, bo, out=out)
        assert ret is out and out.stride() == strides
        assert_ocl_close(out, expected)


def test_binary_out_with_cast():
    """out= of a wider dtype than the computation (float32 into float64 is allowed)."""
    (a, ao), (b, bo) = ODD.make(torch.int32, n=2)
    out = torch.empty(7, 13, dtype=torch.float32, device=DEVICE)
    torch.add(ao, bo, out=out)
    assert_ocl_close(out, torch.add(a, b).float())
    outb = torch.empty(7, 13, dtype=torch.int64, device=DEVICE)
    torch.lt(ao, bo, out=outb)
    assert_ocl_close(outb, torch.lt(a, b).long())


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16], ids=dtype_id)
def test_add_sub_alpha(dtype):
    (a, ao), (b, bo) = ODD.make(dtype, n=2)
    check_op(lambda x, y: torch.add(x, y, alpha=3), [a, b], [ao, bo])
    check_op(lambda x, y: torch.sub(x, y, alpha=2), [a, b], [ao, bo])
    if dtype.is_floating_point:
        check_op(lambda x, y: torch.add(x, y, alpha=-0.5), [a, b], [ao, bo])
    check_op(lambda x, y: x.clone().add_(y, alpha=2), [a, b], [ao, bo])
    out = torch.empty_like(ao)
    torch.sub(ao, bo, alpha=3, out=out)
    assert_ocl_close(out, torch.sub(a, b, alpha=3))


SCALAR_CASES = {
    "x*2": lambda x: x * 2,
    "2*x": lambda x: 2 * x,
    "2-x": lambda x: 2 - x,
    "x/3": lambda x: x / 3,
    "x+2.5": lambda x: x + 2.5,
    "x<1": lambda x: x < 1,
    "cpu0dim*x": lambda x: torch.tensor(3.0, dtype=torch.float64) * x,
    "x-cpu0dim": lambda x: x - torch.tensor(2, dtype=torch.int64),
    "maximum(x,cpu0dim)": lambda x: torch.maximum(x, torch.tensor(1, dtype=x.dtype)),
    "minimum(cpu0dim,x)": lambda x: torch.minimum(torch.tensor(1, dtype=x.dtype), x),
    "div(x,2,floor)": lambda x: torch.div(x, 2, rounding_mode="floor"),
    "x.mul_(cpu0dim)": lambda x: x.clone().mul_(torch.tensor(2, dtype=x.dtype)),
}


INT_SCALAR_CASES = ("x*2", "2-x", "x/3", "div(x,2,floor)")


def _scalar_params():
    return [
        pytest.param(case, dtype, id=f"{case}-{dtype_id(dtype)}")
        for case in SCALAR_CASES
        for dtype in (torch.float32, torch.int32)
        if dtype == torch.float32 or case in INT_SCALAR_CASES
    ]


@pytest.mark.parametrize(("case", "dtype"), _scalar_params())
def test_scalar_operands(case, dtype):
    ((x, xo),) = ODD.make(dtype)
    check_op(SCALAR_CASES[case], [x], [xo])


@pytest.mark.parametrize("dtype", [torch.int32, torch.bool], ids=dtype_id)
def test_bitwise_scalar(dtype):
    ((x, xo),) = ODD.make(dtype)
    other = True if dtype == torch.bool else 6
    for name in BITWISE:
        fn = getattr(torch, name)
        check_op(lambda t, fn=fn: fn(t, other), [x], [xo])
        check_op(lambda t, name=name: getattr(t.clone(), name + "_")(other), [x], [xo])
        out = torch.empty_like(xo)
        fn(xo, other, out=out)
        assert_ocl_close(out, fn(x, other))
    check_op(lambda t: t & other, [x], [xo])
    check_op(lambda t: t | other, [x], [xo])
    check_op(lambda t: t ^ other, [x], [xo])


@pytest.mark.parametrize("name", COMPARE)
def test_compare_scalar_forms(name):
    ((x, xo),) = ODD.make(torch.float32, integral=True, low=-2, high=3)
    fn = getattr(torch, name)
    check_op(lambda t: fn(t, 1), [x], [xo])
    out = torch.empty(7, 13, dtype=torch.bool, device=DEVICE)
    fn(xo, 1, out=out)
    assert_ocl_close(out, fn(x, 1))
    if name not in ("eq", "lt"):
        return
    check_op(lambda t: fn(t, 0.5), [x], [xo])
    check_op(lambda t: getattr(t.clone(), name + "_")(1), [x], [xo])
    # In-place Tensor form: the result is written in the input's dtype.
    ((y, yo),) = ODD.make(torch.float32, integral=True, low=-2, high=3, seed=5)
    check_op(lambda s, t: getattr(s.clone(), name + "_")(t), [x, y], [xo, yo])


PROMOTION_CASES = [
    ("int32+float32", torch.int32, torch.float32),
    ("float32+float64", torch.float32, torch.float64),
    ("bool+int64", torch.bool, torch.int64),
    ("int8+uint8", torch.int8, torch.uint8),
    ("float16+bfloat16", torch.float16, torch.bfloat16),
    ("bool+float16", torch.bool, torch.float16),
    ("uint8+int64", torch.uint8, torch.int64),
    ("int16+float32", torch.int16, torch.float32),
]


@pytest.mark.parametrize(("case", "ta", "tb"), PROMOTION_CASES, ids=[c[0] for c in PROMOTION_CASES])
def test_type_promotion(case, ta, tb):
    skip_unsupported(ta)
    skip_unsupported(tb)
    ((a, ao),) = ODD.make(ta)
    ((b, bo),) = ODD.make(tb, seed=3)
    check_op(torch.add, [a, b], [ao, bo])
    k = [c[0] for c in PROMOTION_CASES].index(case)
    # Every other case one more op (rotating), to keep the number of compiled variants down.
    if k % 2 == 0:
        other = (torch.mul, torch.maximum, torch.eq, torch.div)[k // 2]
        check_op(other, [b, a], [bo, ao])


def test_promotion_with_zero_dim_and_scalars():
    ((i, io),) = ODD.make(torch.int64)
    ((h, ho),) = ODD.make(torch.float16)
    cases = [
        (lambda t: t * 2.5, i, io),  # int tensor, Python float -> default float dtype
        (lambda t: t + torch.tensor(1.5, dtype=torch.float64), i, io),  # 0-dim CPU float64
        (lambda t: t + torch.tensor(1.5, dtype=torch.float64), h, ho),  # stays float16
        (lambda t: t + True, i, io),
        (lambda t: t / 2, i, io),
    ]
    for fn, x, xo in cases:
        check_op(fn, [x], [xo])
    # A 0-dim *device* tensor is also a lower-priority operand.
    z = torch.tensor(0.25, dtype=torch.float32)
    check_op(torch.add, [i, z], [io, z.to(DEVICE)])
    check_op(torch.add, [z, h], [z.to(DEVICE), ho])


def test_inplace_promotion_errors_like_cpu():
    ((i, io),) = ODD.make(torch.int32)
    with pytest.raises(RuntimeError):
        i.add_(0.5)
    with pytest.raises(RuntimeError):
        io.add_(0.5)
    with pytest.raises(RuntimeError):
        io.div_(2)


def test_unsupported_dtypes_raise_like_cpu():
    ((b, bo),) = ODD.make(torch.bool)
    ((f, fo),) = ODD.make(torch.float32)
    cases = [
        (lambda x: x - x, b, bo),
        (lambda x: -x, b, bo),
        (lambda x: x & x, f, fo),
        (lambda x: torch.bitwise_xor(x, 1), f, fo),
    ]
    for fn, x, xo in cases:
        with pytest.raises(RuntimeError):
            fn(x)
        # The same error as on the CPU, from checking the dtypes: not a kernel that happens to
        # fail to compile, nor a silently computed result.
        with pytest.raises(RuntimeError) as info:
            fn(xo)
        assert "failed to build" not in str(info.value)


# ------------------------------------------------------------------------------------------
# NaN, infinities, division


@pytest.mark.parametrize(
    ("name", "dtype"),
    _special_params({n: _binary_dtypes(n) for n in BINARY if n not in BITWISE}),
)
def test_binary_special_values(name, dtype):
    """Every pair of special values (NaN, infinities, signed zeros, ...)."""
    skip_unsupported(dtype)
    n = len(SPECIAL)
    a, ao = ocl_pair([v for v in SPECIAL for _ in range(n)], dtype)
    b, bo = ocl_pair(SPECIAL * n, dtype)
    check_op(BINARY[name], [a, b], [ao, bo])


def test_nan_propagation_examples():
    x, xo = ocl_pair([NAN, 1.0, -INF, INF, NAN, -1.0], torch.float32)
    y, yo = ocl_pair([0.0, NAN, 0.0, NAN, NAN, -2.0], torch.float32)
    assert_ocl_close(torch.maximum(xo, yo), torch.maximum(x, y))
    assert_ocl_close(torch.minimum(xo, yo), torch.minimum(x, y))
    assert torch.isnan(torch.maximum(xo, yo).cpu()[:2]).all()
    assert_ocl_close(torch.relu(xo), torch.relu(x))
    assert torch.isnan(torch.relu(xo).cpu()[0])
    assert_ocl_close(torch.clamp(xo, -0.5, 0.5), torch.clamp(x, -0.5, 0.5))
    assert torch.isnan(torch.clamp(xo, -0.5, 0.5).cpu()[0])
    assert_ocl_close(xo != xo, x != x)
    assert_ocl_close(xo == xo, x == x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
def test_float_division_by_zero(dtype):
    skip_unsupported(dtype)
    a, ao = ocl_pair([1.0, -1.0, 0.0, NAN, INF, -3.0, 2.0], dtype)
    z, zo = ocl_pair([0.0, 0.0, 0.0, 0.0, 0.0, -0.0, -0.0], dtype)
    out = torch.div(ao, zo).cpu()
    assert out[0] == INF and out[1] == -INF and torch.isnan(out[2])
    for mode in (None, "trunc", "floor"):
        check_op(
            lambda x, y, m=mode: torch.div(x, y, rounding_mode=m), [a, z], [ao, zo], exact=True
        )
    check_op(lambda x: x / 0, [a], [ao], exact=True)
    check_op(torch.reciprocal, [z], [zo], exact=True)


def test_integer_true_division_by_zero_gives_float_inf_nan():
    a, ao = ocl_pair([3, -3, 0], torch.int64)
    z, zo = ocl_pair([0, 0, 0], torch.int64)
    check_op(torch.div, [a, z], [ao, zo], exact=True)


def test_integer_division_by_zero_raises_at_the_next_wait(subprocess_env):
    """As on the CPU, integer division by zero raises (ZeroDivisionError); the kernel finds it
    and the host raises it at its next wait. The process must survive the division itself (a
    native x86 division traps), so it runs in a child process."""
    code = textwrap.dedent(
        """
        import torch, torch_ocl
        torch.ocl.set_fallback_mode("error")
        for dt in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
            a = torch.tensor([5, 7, 0, 3, 100], dtype=dt)
            z = torch.tensor([1, 2, 0, 3, 9], dtype=dt)
            for f in (
                lambda x, y: torch.div(x, y, rounding_mode="trunc"),
                lambda x, y: torch.div(x, y, rounding_mode="floor"),
                lambda x, y: x // y,
                lambda x, y: x // 0,
                lambda x, y: x.clone().floor_divide_(y),
                lambda x, y: torch.div(x[::2], y[::2], rounding_mode="floor"),
                lambda x, y: torch.fmod(x, y),
                lambda x, y: x % y,
                lambda x, y: torch.remainder(x, 0),
            ):
                try:
                    f(a, z)
                    raise AssertionError("the CPU did not raise")
                except RuntimeError as e:
                    assert "ZeroDivisionError" in str(e), e
                r = f(a.to("ocl"), z.to("ocl"))
                try:
                    r.cpu()
                    raise AssertionError(f"{dt}: ocl did not raise")
                except RuntimeError as e:
                    assert "ZeroDivisionError" in str(e), e
                # the device stays usable and the next op is right
                assert torch.equal((a.to("ocl") + 1).cpu(), a + 1)
            nz = torch.tensor([1, 2, 5, 3, 9], dtype=dt)
            for mode in ("trunc", "floor"):
                got = torch.div(a.to("ocl"), nz.to("ocl"), rounding_mode=mode).cpu()
                assert torch.equal(got, torch.div(a, nz, rounding_mode=mode)), (dt, mode)
        # The most negative value divided by -1 overflows (and traps on x86): it must not crash.
        for dt in (torch.int64, torch.int32):
            lo = torch.iinfo(dt).min
            m = torch.tensor([lo, lo, 6, -6], dtype=dt).to("ocl")
            d = torch.tensor([-1, -1, -1, 4], dtype=dt).to("ocl")
            for mode in ("trunc", "floor"):
                torch.div(m, d, rounding_mode=mode).cpu()
        torch.ocl.synchronize()
        print("survived")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, f"child exited with {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert "survived" in proc.stdout


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8, torch.float32], ids=dtype_id)
def test_floor_divide_is_native(dtype):
    ((a, ao),) = ODD.make(dtype, low=-50, high=50)
    ((b, bo),) = ODD.make(dtype, nonzero=True, seed=9)
    check_op(lambda x, y: x // y, [a, b], [ao, bo], exact=dtype != torch.float32, ref64=False)
    check_op(lambda x, y: x.clone().floor_divide_(y), [a, b], [ao, bo], ref64=False)


DIV_A = [-7.0, -6.5, -5.0, -0.5, 0.5, 5.0, 6.5, 7.0, -3.0, 3.0, 9.0, -9.0, 0.0, 1.0]
DIV_B = [2.0, -2.0, 3.0, -3.0, 2.0, -2.0, 4.0, -4.0, 2.0, -2.0, -4.0, 4.0, -3.0, 3.0]


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.int64, torch.int8], ids=dtype_id
)
@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_modes_negative(dtype, mode):
    skip_unsupported(dtype)
    if not dtype.is_floating_point:
        a_vals = [int(v) for v in DIV_A]
        b_vals = [int(v) for v in DIV_B]
    else:
        a_vals, b_vals = DIV_A, DIV_B
    a, ao = ocl_pair(a_vals, dtype)
    b, bo = ocl_pair(b_vals, dtype)
    fn = lambda x, y: torch.div(x, y, rounding_mode=mode)  # noqa: E731
    check_op(fn, [a, b], [ao, bo], exact=True, ref64=False)
    # In place (float results of true division cannot go into an integer tensor).
    if mode is not None or dtype.is_floating_point:
        check_op(
            lambda x, y: x.clone().div_(y, rounding_mode=mode),
            [a, b],
            [ao, bo],
            exact=True,
            ref64=False,
        )
        out = torch.empty_like(ao)
        torch.div(ao, bo, rounding_mode=mode, out=out)
        assert_ocl_close(out, fn(a, b), exact=True)
    # Scalar divisor.
    if dtype in (torch.float32, torch.int64):
        check_op(lambda x: torch.div(x, -2, rounding_mode=mode), [a], [ao], exact=True, ref64=False)


def test_div_floor_random_floats():
    ((a, ao),) = ODD.make(torch.float32, low=-50, high=50)
    ((b, bo),) = ODD.make(torch.float32, nonzero=True, seed=9)
    for mode in ("trunc", "floor"):
        check_op(
            lambda x, y, m=mode: torch.div(x, y, rounding_mode=m), [a, b], [ao, bo], ref64=False
        )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_modes_of_half_types_round_like_cpu(dtype, mode):
    """The CPU computes half/bfloat16 floor and trunc division in the dtype itself (the quotient
    rounded first): about 1% of random pairs differed when it was computed in float."""
    g = torch.Generator().manual_seed(17)
    a = (torch.randn(20_000, generator=g) * torch.rand(20_000, generator=g) * 200).to(dtype)
    b = (torch.randn(20_000, generator=g) * 3).to(dtype)
    b[::97] = 0
    a[::101] = NAN
    b[::103] = INF
    want = torch.div(a, b, rounding_mode=mode)
    got = torch.div(a.to(DEVICE), b.to(DEVICE), rounding_mode=mode).cpu()
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(got.signbit() | got.isnan(), want.signbit() | want.isnan())


@pytest.mark.parametrize(
    "fn",
    [torch.abs, torch.floor, torch.ceil, torch.round, torch.trunc, torch.relu, torch.neg,
     lambda x: x.clone().abs_(), lambda x: torch.floor(x, out=torch.empty_like(x))],
    ids=["abs", "floor", "ceil", "round", "trunc", "relu", "neg", "abs_", "floor-out"],
)  # fmt: skip
def test_unary_ops_without_bool_support_raise_like_cpu(fn):
    b = make_cpu((5,), torch.bool, seed=8)
    with pytest.raises(Exception) as cpu_err:
        fn(b)
    with pytest.raises(cpu_err.type) as ocl_err:
        fn(b.to(DEVICE))
    assert str(ocl_err.value) == str(cpu_err.value)


# ------------------------------------------------------------------------------------------
# where, clamp, backward helpers


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.int64, torch.bool, torch.float16], ids=dtype_id
)
def test_where(dtype):
    c, co = ODD.make(torch.bool)[0]
    (a, ao), (b, bo) = ODD.make(dtype, n=2, seed=4)
    check_op(torch.where, [c, a, b], [co, ao, bo])
    out = torch.empty(13, 7, dtype=dtype, device=DEVICE).t()
    torch.where(co, ao, bo, out=out)
    assert_ocl_close(out, torch.where(c, a, b))


def test_where_broadcasting():
    c = torch.tensor([[True], [False], [True], [False], [True]])
    co = c.to(DEVICE)
    bc = next(s for s in shapes if s.id == "broadcast_5x1_1x7")
    (a, ao), (b, bo) = bc.make(torch.float32, n=2)
    check_op(torch.where, [c, b, a], [co, bo, ao])  # (5,1), (1,7), (5,1) -> (5,7)
    c7 = torch.tensor([[True, False, False, True, True, False, True]])
    check_op(torch.where, [c7, a, b], [c7.to(DEVICE), ao, bo])  # (1,7), (5,1), (1,7)
    z = torch.tensor(-1.0)
    check_op(torch.where, [c, a, z], [co, ao, z.to(DEVICE)])  # 0-dim device operand
    check_op(lambda cc, x: torch.where(cc, x, 0.0), [c, b], [co, bo])  # Python scalar
    check_op(lambda cc, x: torch.where(cc, 2.0, x), [c, b], [co, bo])
    # Mixed dtypes promote.
    ((i, io),) = bc.make(torch.int32, seed=2)
    check_op(torch.where, [c, i, b], [co, io, bo])
    # NaNs pass through where.
    n, no = ocl_pair([[NAN], [1.0], [INF], [NAN], [-INF]], torch.float32)
    check_op(torch.where, [c, n, a], [co, no, ao])


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.int32, torch.float16], ids=dtype_id
)
def test_clamp(dtype):
    skip_unsupported(dtype)
    ((x, xo),) = ODD.make(dtype)
    lo, hi = (-1, 2) if not dtype.is_floating_point else (-1.5, 2.25)
    check_op(lambda t: torch.clamp(t, lo, hi), [x], [xo], exact=True)
    if dtype != torch.float32:
        return
    cases = [
        lambda t: torch.clamp(t, lo, hi),
        lambda t: torch.clamp(t, min=lo),
        lambda t: torch.clamp(t, max=hi),
        lambda t: torch.clamp(t, hi, lo),  # min > max: every element becomes max
        lambda t: torch.clamp_min(t, lo),
        lambda t: torch.clamp_max(t, hi),
        lambda t: t.clone().clamp_(lo, hi),
        lambda t: t.clone().clamp_min_(lo),
        lambda t: t.clone().clamp_max_(hi),
        lambda t: t.clamp(min=lo, max=None),
    ]
    for fn in cases:
        check_op(fn, [x], [xo], exact=True)
    out = torch.empty(13, 7, dtype=dtype, device=DEVICE).t()
    torch.clamp(xo, lo, hi, out=out)
    assert_ocl_close(out, torch.clamp(x, lo, hi), exact=True)


def test_clamp_min_max_out():
    ((x, xo),) = ODD.make(torch.float32)
    out = torch.empty_like(xo)
    torch.clamp_min(xo, 0.5, out=out)
    assert_ocl_close(out, torch.clamp_min(x, 0.5), exact=True)
    torch.clamp_max(xo, 0.5, out=out)
    assert_ocl_close(out, torch.clamp_max(x, 0.5), exact=True)


def test_clamp_int_tensor_float_bounds():
    """An integer tensor clamped with float bounds gives a float result (type promotion)."""
    ((x, xo),) = ODD.make(torch.int64)
    check_op(lambda t: torch.clamp(t, -1.5, 2.5), [x], [xo], exact=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
def test_clamp_special_values(dtype):
    skip_unsupported(dtype)
    x, xo = ocl_pair(SPECIAL, dtype)
    for lo, hi in ((-1.0, 1.0), (0.0, INF), (-INF, 0.25)):
        check_op(lambda t, lo=lo, hi=hi: torch.clamp(t, lo, hi), [x], [xo], exact=True)
    check_op(lambda t: torch.clamp(t, min=NAN), [x], [xo], exact=True)
    check_op(lambda t: torch.clamp(t, max=NAN), [x], [xo], exact=True)


BACKWARD = {
    "threshold_backward": lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.5),
    "sigmoid_backward": torch.ops.aten.sigmoid_backward,
    "tanh_backward": torch.ops.aten.tanh_backward,
}


@pytest.mark.parametrize(
    ("name", "dtype"),
    [(n, torch.float32) for n in BACKWARD]
    + [
        ("threshold_backward", torch.float16),
        ("sigmoid_backward", torch.float64),
        ("tanh_backward", torch.bfloat16),
    ],
)
def test_backward_helpers(name, dtype):
    skip_unsupported(dtype)
    (g, go), (x, xo) = ODD.make(dtype, n=2, low=-1, high=1)
    check_op(BACKWARD[name], [g, x], [go, xo])
    if dtype != torch.float32:
        return
    out = torch.empty(7, 13, dtype=dtype, device=DEVICE)
    overload = getattr(torch.ops.aten, name).grad_input
    if name == "threshold_backward":
        overload(go, xo, 0.5, grad_input=out)
    else:
        overload(go, xo, grad_input=out)
    assert_ocl_close(out, cpu_reference(BACKWARD[name], [g, x]))


@pytest.mark.slow
def test_large_chain():
    """A chain of ops over 2**20 + 7 elements (bigger than one work-group grid row)."""
    (x, xo), (y, yo) = next(s for s in shapes if s.id == "large").make(torch.float32, n=2)
    fn = lambda a, b: torch.where(a > 0, torch.exp(-a.abs()) * b, torch.tanh(b) - a / 3)  # noqa: E731
    check_op(fn, [x, y], [xo, yo])


@pytest.mark.parametrize("n", [7, 100_003])  # batched (tiny) and launched on its own
@pytest.mark.parametrize("scalar", [1e39, -1e300, 3.5e38])
def test_float_scalar_beyond_float_range_rounds_to_inf(n, scalar):
    """Like CPU torch, a Python float operand beyond float32's range is rounded (to +-inf), not
    refused (clamp's bounds are refused on the CPU too)."""
    x = make_cpu((n,), torch.float32, seed=31)
    for fn in (lambda t: t * scalar, lambda t: t + scalar, lambda t: t / scalar):
        assert_ocl_close(fn(x.to(DEVICE)), fn(x))


@pytest.mark.parametrize("n", [7, 100_003])
def test_subtracting_a_bool_scalar_raises_like_cpu(n):
    x = make_cpu((n,), torch.float32, seed=32).to(DEVICE)
    for fn in (lambda: x - True, lambda: True - x, lambda: x.sub_(False)):
        with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
            fn()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", shape_params([s for s in shapes if len(s.bases) == 1]))
def test_isnan(dtype, shape):
    """NaN, +-Inf in the contiguous cases; every one-operand layout."""
    skip_unsupported(dtype)
    ((x_cpu, x),) = shape.make(dtype, 1, seed=33)
    if dtype.is_floating_point and x_cpu.numel() >= 3:
        flat = x_cpu.view(-1) if x_cpu.is_contiguous() else None
        if flat is not None:
            flat[:3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
            x = x_cpu.to(DEVICE)
    assert_ocl_close(torch.isnan(x), torch.isnan(x_cpu), exact=True)


# ------------------------------------------------------------------------------------------
# Math, activations and losses of the op table: what the OpInfo suite (tests/ops/test_opinfo.py)
# does not reach - every special value per op, integer edge cases, the CPU's errors and the
# tiny-op batch.

MATH_UNARY = {
    "erf": torch.erf,
    "erfc": torch.erfc,
    "erfinv": torch.erfinv,
    "expm1": torch.expm1,
    "log1p": torch.log1p,
    "log2": torch.log2,
    "log10": torch.log10,
    "exp2": torch.exp2,
    "lgamma": torch.lgamma,
    "digamma": torch.digamma,
    "trigamma": lambda x: torch.polygamma(1, x),
    "polygamma3": lambda x: torch.polygamma(3, x),
    "tan": torch.tan,
    "asin": torch.asin,
    "acos": torch.acos,
    "atan": torch.atan,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "asinh": torch.asinh,
    "acosh": torch.acosh,
    "atanh": torch.atanh,
    "sinc": torch.sinc,
    "logit": torch.logit,
    "logit_eps": lambda x: torch.logit(x, eps=0.25),
    "frac": torch.frac,
    "i0": torch.i0,
    "i0e": torch.special.i0e,
    "i1": torch.special.i1,
    "i1e": torch.special.i1e,
    "entr": torch.special.entr,
    "erfcx": torch.special.erfcx,
    "log_ndtr": torch.special.log_ndtr,
    "ndtri": torch.special.ndtri,
    "angle": torch.angle,
    "frexp_mantissa": lambda x: torch.frexp(x)[0],
    "frexp_exponent": lambda x: torch.frexp(x)[1],
    "airy_ai": torch.special.airy_ai,
    "bessel_j0": torch.special.bessel_j0,
    "bessel_j1": torch.special.bessel_j1,
    "bessel_y0": torch.special.bessel_y0,
    "bessel_y1": torch.special.bessel_y1,
    "modified_bessel_k0": torch.special.modified_bessel_k0,
    "modified_bessel_k1": torch.special.modified_bessel_k1,
    "scaled_modified_bessel_k0": torch.special.scaled_modified_bessel_k0,
    "scaled_modified_bessel_k1": torch.special.scaled_modified_bessel_k1,
    "signbit": torch.signbit,
    "isposinf": torch.isposinf,
    "isneginf": torch.isneginf,
    "nan_to_num": torch.nan_to_num,
    "nan_to_num_args": lambda x: torch.nan_to_num(x, nan=2.5, posinf=1e300, neginf=-7.0),
    "round_decimals": lambda x: torch.round(x, decimals=1),
    "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "silu": torch.nn.functional.silu,
    "mish": torch.nn.functional.mish,
    "hardswish": torch.nn.functional.hardswish,
    "hardsigmoid": torch.nn.functional.hardsigmoid,
    "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, 0.125),
    "elu": torch.nn.functional.elu,
    "selu": torch.nn.functional.selu,
    "softplus": lambda x: torch.nn.functional.softplus(x, beta=2.0, threshold=3.0),
    "hardtanh": torch.nn.functional.hardtanh,
    "hardshrink": torch.nn.functional.hardshrink,
    "softshrink": torch.nn.functional.softshrink,
    "logsigmoid": torch.nn.functional.logsigmoid,
}
# Each op's domain edges on top of SPECIAL.
MATH_EDGES = {
    "erfinv": [1.0, -1.0, 1.5, 0.999, -0.7, 0.7, 0.69],
    "log1p": [-1.0, -1.5, 1e-30, -1e-7],
    "expm1": [1e-30, -1e-7, 88.0, 89.0, -100.0],
    "lgamma": [-1.0, -2.0, -2.5, -0.5, 1e-30, 2.0, 1e30],
    "digamma": [-1.0, -2.0, -2.5, -0.5, 1e-30, 10.0, 1e20, -1e-30],
    "trigamma": [-1.0, -2.5, 1e-3, 10.0],
    "polygamma3": [-2.5, 1e-3, 0.5, 10.0],
    "acosh": [1.0, 0.5],
    "atanh": [1.0, -1.0, 0.99],
    "logit": [0.0, 1.0, 0.25, 0.75, 2.0],
    "logit_eps": [0.0, 1.0, 0.1, 0.9, 0.25, 0.75],
    "sinc": [1e-20, 2.0, 1e8],
    "i0": [19.5, 20.5, 88.0, 89.0, -90.0],
    "i1": [19.5, 20.5, 88.0, 89.0, -90.0],
    "i0e": [19.5, 20.5, 1e10],
    "i1e": [19.5, 20.5, -1e10],
    "exp2": [128.0, -150.0],
    # erfcx: our switch at 3, the CPU's branches at -6.1, -26.7, 50, 5e7
    "erfcx": [3.0, 2.999, -6.1, -6.2, -26.6, -26.8, 8.0, 50.5, 6e7, -9.0],
    "log_ndtr": [-1.0, -0.999, -20.0, -40.0, 6.0, 10.0],
    # ndtri: outside [0, 1], the ends, the central part's edges 0.25 and 0.75, deep tails
    "ndtri": [0.0, 1.0, -0.1, 1.1, 0.25, 0.75, 0.2499, 0.7501, 1e-30, 1e-7, 0.9999999, 0.5],
    "angle": [-1.0, -1e-30, 1e30],
    "frexp_mantissa": [1e-40, -3.0, 0.5, 1024.0, -1e30],
    "frexp_exponent": [1e-40, -3.0, 0.5, 1024.0, -1e30],
    # Bessel: near zeros, the series/integral/asymptotic switches (2, 17), large and negative x
    "airy_ai": [2.0, 2.001, -8.0, -8.001, -2.33811, 25.0, 103.0, 104.0, -1e3],
    "bessel_j0": [2.404825, 5.520078, 16.999, 17.0, 17.001, 1e-30, 1e4, -17.5],
    "bessel_j1": [3.831706, 16.999, 17.0, 17.001, 1e-30, -1e-30, 1e4, -17.5],
    "bessel_y0": [0.893577, 3.957678, 16.999, 17.001, 1e-30, 1e4, -1.0],
    "bessel_y1": [2.197141, 16.999, 17.001, 1e-3, 1e4, -1.0],
    "modified_bessel_k0": [1.999, 2.0, 2.001, 16.999, 17.001, 1e-30, 80.0, 120.0, -1.0],
    "modified_bessel_k1": [1.999, 2.0, 2.001, 16.999, 17.001, 1e-30, 80.0, 120.0, -1.0],
    "scaled_modified_bessel_k0": [1.999, 2.001, 16.999, 17.001, 1e-30, 1e4, -1.0],
    "scaled_modified_bessel_k1": [1.999, 2.001, 16.999, 17.001, 1e-30, 1e4, -1.0],
    "round_decimals": [0.25, 0.35, -0.35, 1e30],
    "softplus": [1.5, 1.6],
    "hardswish": [-3.0, 3.0],
    "hardsigmoid": [-3.0, 3.0],
    "hardshrink": [0.5, -0.5, 0.4999],
    "softshrink": [0.5, -0.5],
}
# Where the CPU's float32 is itself off, compare with the CPU in the same dtype (a float64
# reference would not judge it): polygamma at its poles gives huge finite values that differ by
# dtype, i0 and i1 overflow where exp(x) does, nan_to_num's defaults are the dtype's limits.
MATH_SAME_DTYPE = (
    "round_decimals",
    "nan_to_num",
    "nan_to_num_args",
    "trigamma",
    "polygamma3",
    "i0",
    "i1",
)


def _math_params():
    params = []
    for name in MATH_UNARY:
        params.append(pytest.param(name, torch.float32, id=f"{name}-float32"))
    for name, dtype in [
        ("erfinv", torch.float64),
        ("digamma", torch.float64),
        ("lgamma", torch.float16),
        ("polygamma3", torch.float64),
        ("nan_to_num", torch.float16),
        ("nan_to_num", torch.bfloat16),
        ("logit_eps", torch.float16),
        ("gelu", torch.bfloat16),
        ("signbit", torch.float16),
        ("isposinf", torch.bfloat16),
        ("i0", torch.float64),
        ("i1e", torch.float64),
        ("erfcx", torch.float64),
        ("log_ndtr", torch.float64),
        ("ndtri", torch.float64),
        ("angle", torch.float16),
        ("frexp_mantissa", torch.bfloat16),
        ("frexp_exponent", torch.float16),
        ("frexp_mantissa", torch.float64),
        ("modified_bessel_k1", torch.float64),
        ("scaled_modified_bessel_k0", torch.float64),
    ]:
        params.append(pytest.param(name, dtype, id=f"{name}-{dtype_id(dtype)}"))
    return params


@pytest.mark.parametrize(("name", "dtype"), _math_params())
def test_math_special_values(name, dtype):
    """NaN, infinities, signed zeros and each op's domain edges (poles, bounds, thresholds)."""
    skip_unsupported(dtype)
    x, xo = ocl_pair(SPECIAL + MATH_EDGES.get(name, []), dtype)
    check_op(MATH_UNARY[name], [x], [xo], ref64=name not in MATH_SAME_DTYPE)


BESSEL_MPMATH = {
    "airy_ai": ("airyai", None),
    "bessel_j0": ("besselj", 0),
    "bessel_j1": ("besselj", 1),
    "bessel_y0": ("bessely", 0),
    "bessel_y1": ("bessely", 1),
    "modified_bessel_k0": ("besselk", 0),
    "modified_bessel_k1": ("besselk", 1),
}


@pytest.mark.parametrize("name", list(BESSEL_MPMATH))
def test_bessel_float64_against_mpmath(name):
    """float64 Bessel functions close to mpmath's (the CPU's own float64 J and Y are off by up
    to 7e-7 just above x = 5, so the CPU is no reference there), on random x over the series,
    integral and asymptotic ranges (airy_ai also negative; the CPU's float64 airy_ai is off by up
    to 3e-6 on [-2.6, -2.09])."""
    mpmath = pytest.importorskip("mpmath")
    gen = torch.Generator().manual_seed(7)
    x = torch.cat(
        [
            torch.rand(60, generator=gen, dtype=torch.float64) * 30,
            torch.rand(20, generator=gen, dtype=torch.float64) * 2,
            torch.tensor([1e-8, 4.9, 5.1, 5.3, 16.999, 17.001, 40.0, 300.0], dtype=torch.float64),
        ]
    )
    if name == "airy_ai":
        x = torch.cat([x, -x])
    fn, nu = BESSEL_MPMATH[name]
    with mpmath.workdps(30):
        f = getattr(mpmath, fn)
        values = [f(v) if nu is None else f(nu, v) for v in x.tolist()]
        ref = torch.tensor([float(v) for v in values], dtype=torch.float64)
    got = getattr(torch.special, name)(x.to(DEVICE))
    # Y's series loses about 1e-9 to cancellation just below the asymptotic range (x < 17).
    # (airy_ai's series loses about 1e-11 near -8.)
    rtol, atol = {"bessely": (5e-9, 5e-10), "airyai": (1e-10, 1e-12)}.get(fn, (1e-13, 1e-15))
    assert_ocl_close(got, ref, rtol=rtol, atol=atol)


@pytest.mark.parametrize("upper", [False, True], ids=["igamma", "igammac"])
def test_igamma_float64_against_mpmath(upper):
    """float64 igamma/igammac to 1e-12 of mpmath over the series and continued-fraction ranges
    (the CPU's float64 is off by up to 2e-10 for a near x around 100: its large-a expansion)."""
    mpmath = pytest.importorskip("mpmath")
    gen = torch.Generator().manual_seed(3)
    a = torch.cat(
        [
            torch.rand(40, generator=gen, dtype=torch.float64) * 12,
            torch.rand(20, generator=gen, dtype=torch.float64) * 200,
        ]
    )
    x = torch.cat(
        [
            torch.rand(40, generator=gen, dtype=torch.float64) * 15,
            a[40:] * (0.8 + 0.4 * torch.rand(20, generator=gen, dtype=torch.float64)),
        ]
    )
    with mpmath.workdps(30):
        ref = [
            mpmath.gammainc(p, q, mpmath.inf, regularized=True)
            if upper
            else mpmath.gammainc(p, 0, q, regularized=True)
            for p, q in zip(a.tolist(), x.tolist(), strict=True)
        ]
    ref = torch.tensor([float(v) for v in ref], dtype=torch.float64)
    fn = torch.igammac if upper else torch.igamma
    assert_ocl_close(fn(a.to(DEVICE), x.to(DEVICE)), ref, rtol=1e-12, atol=1e-14)


MATH_BINARY = {
    "pow": torch.pow,
    "fmod": torch.fmod,
    "remainder": torch.remainder,
    "atan2": torch.atan2,
    "hypot": torch.hypot,
    "copysign": torch.copysign,
    "nextafter": torch.nextafter,
    "xlogy": torch.xlogy,
    "xlog1py": torch.special.xlog1py,
    "heaviside": torch.heaviside,
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "logaddexp": torch.logaddexp,
    "logaddexp2": torch.logaddexp2,
    "igamma": torch.igamma,
    "igammac": torch.igammac,
    "clamp_tensor": lambda a, b: torch.clamp(a, b, b + 1),
    "lerp_tensor": lambda a, b: torch.lerp(a, b, b),
    "mse": lambda a, b: torch.nn.functional.mse_loss(a, b, reduction="none"),
    "huber": lambda a, b: torch.nn.functional.huber_loss(a, b, reduction="none", delta=0.75),
    "smooth_l1": lambda a, b: torch.nn.functional.smooth_l1_loss(a, b, reduction="none", beta=2.0),
    "hardtanh_backward": lambda g, x: torch.ops.aten.hardtanh_backward(g, x, -0.5, 1.0),
    "gelu_backward": lambda g, x: torch.ops.aten.gelu_backward(g, x),
    "silu_backward": torch.ops.aten.silu_backward,
    "leaky_relu_backward": lambda g, x: torch.ops.aten.leaky_relu_backward(g, x, 0.25, False),
}
# Exact ops and ops whose float64 result rounded to float32 is not the float32 result.
MATH_BINARY_EXACT = ("fmod", "remainder", "copysign", "nextafter", "heaviside", "fmax", "fmin")


@pytest.mark.parametrize(
    ("name", "dtype"),
    [pytest.param(n, torch.float32, id=f"{n}-float32") for n in MATH_BINARY]
    + [
        pytest.param("pow", torch.float64, id="pow-float64"),
        pytest.param("nextafter", torch.float16, id="nextafter-float16"),
        pytest.param("nextafter", torch.bfloat16, id="nextafter-bfloat16"),
        pytest.param("remainder", torch.float16, id="remainder-float16"),
        pytest.param("logaddexp", torch.bfloat16, id="logaddexp-bfloat16"),
        pytest.param("igammac", torch.float16, id="igammac-float16"),
    ],
)
def test_math_binary_special_values(name, dtype):
    """Every pair of special values."""
    skip_unsupported(dtype)
    n = len(SPECIAL)
    a, ao = ocl_pair([v for v in SPECIAL for _ in range(n)], dtype)
    b, bo = ocl_pair(SPECIAL * n, dtype)
    exact = name in MATH_BINARY_EXACT
    check_op(MATH_BINARY[name], [a, b], [ao, bo], ref64=not exact, exact=exact)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8, torch.uint8], ids=dtype_id)
def test_integer_pow_like_cpu(dtype):
    """Negative exponents truncate (1 and -1 alone give non-zero results), 0 ** 0 is 1, overflow
    wraps; exponents as tensors, as Python ints and as the base (2 ** t)."""
    info = torch.iinfo(dtype)
    base = [0, 1, 2, 3, 5, 7, 100, info.max, info.min]
    exps = [0, 1, 2, 3, 7, 13, 31, 63, 64]
    if info.min < 0:
        base += [-1, -2, -3, -1, -1]
        exps += [-1, -2, -3, -4, -5]
    b, bo = ocl_pair([v for v in base for _ in exps], dtype)
    e, eo = ocl_pair(exps * len(base), dtype)
    check_op(torch.pow, [b, e], [bo, eo], exact=True)
    for k in (0, 1, 2, 3, 5, 8):
        check_op(lambda t, k=k: t**k, [b], [bo], exact=True)
    check_op(lambda t: 2**t, [e.clamp(0, 7)], [eo.clamp(0, 7)], exact=True)
    if info.min < 0:
        with pytest.raises(RuntimeError, match="negative integer powers"):
            bo**-2
    with pytest.raises(RuntimeError, match="without overflow"):
        b ** (info.max + 10)
    with pytest.raises(RuntimeError, match="without overflow"):
        bo ** (info.max + 10)


def test_pow_scalar_exponent_forms():
    """The CPU's sqrt/rsqrt/reciprocal shortcuts (sign of zero, -inf), x**2/x**3/x**-2, half
    exponents rounded to the dtype, float32 exponents beyond float's range."""
    vals = SPECIAL + [4.0, 1e-20, 3e19]
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x, xo = ocl_pair(vals, dtype)
        for k in (0.5, -0.5, -1.0, 2, 3, -2, 0.1, 2.001, 1e300, -1e300):
            if dtype != torch.float32 and abs(k) > 1e5:
                with pytest.raises(RuntimeError, match="without overflow"):
                    xo**k
                continue
            check_op(lambda t, k=k: t**k, [x], [xo], ref64=False)
    ((i, io),) = ODD.make(torch.int64, low=-5, high=5)
    check_op(lambda t: t**2.5, [i.abs()], [io.abs()])  # promotes to float


@pytest.mark.parametrize("dtype", [torch.int64, torch.int16, torch.int8, torch.uint8], ids=dtype_id)
def test_integer_bit_ops_like_cpu(dtype):
    """gcd/lcm with zeros, negatives and the minimum; shifts by negative, zero and too-large
    amounts; bitwise_not; heaviside, fmax and remainder/fmod on integers."""
    info = torch.iinfo(dtype)
    vals = [0, 1, 2, 3, 6, 12, 35, info.max, info.min]
    if info.min < 0:
        vals += [-1, -6, -35, info.min + 1]
    a, ao = ocl_pair([v for v in vals for _ in vals], dtype)
    b, bo = ocl_pair(vals * len(vals), dtype)
    for fn in (torch.gcd, torch.lcm, torch.heaviside, torch.fmax, torch.fmin):
        check_op(fn, [a, b], [ao, bo], exact=True)
    nz = b != 0
    a_nz, b_nz = a[nz], b[nz]
    for fn in (
        torch.fmod,
        torch.remainder,
        lambda x, y: torch.div(x, y, rounding_mode="trunc"),
        lambda x, y: torch.div(x, y, rounding_mode="floor"),
    ):
        # uint8's 255 is an ordinary divisor (not -1)
        check_op(fn, [a_nz, b_nz], [a_nz.to(DEVICE), b_nz.to(DEVICE)], exact=True)
    bits = 8 * torch.tensor([], dtype=dtype).element_size()
    shifts = [0, 1, 3, bits - 1, bits, bits + 1, 100 % (info.max + 1)]
    if info.min < 0:
        shifts += [-1, -bits]
    s, so = ocl_pair([v for _ in vals for v in shifts], dtype)
    x, xo = ocl_pair([v for v in vals for _ in shifts], dtype)
    for fn in (torch.bitwise_left_shift, torch.bitwise_right_shift):
        check_op(fn, [x, s], [xo, so], exact=True)
    check_op(lambda t: t << 2, [x], [xo], exact=True)
    check_op(lambda t: t >> 1, [x], [xo], exact=True)
    check_op(torch.bitwise_not, [x], [xo], exact=True)
    y, yo = x.clone(), xo.clone()
    y <<= 1
    yo <<= 1
    assert_ocl_close(yo, y, exact=True)


def test_bool_bit_ops_like_cpu():
    x, xo = ocl_pair([True, False, True, False], torch.bool)
    y, yo = ocl_pair([True, True, False, False], torch.bool)
    check_op(torch.bitwise_not, [x], [xo], exact=True)
    check_op(torch.heaviside, [x, y], [xo, yo], exact=True)
    check_op(torch.fmax, [x, y], [xo, yo], exact=True)
    check_op(torch.signbit, [x], [xo], exact=True)


@pytest.mark.parametrize(
    ("fn", "dtype"),
    [
        (lambda x: torch.gcd(x, x), torch.float32),
        (lambda x: torch.lcm(x, x), torch.bool),
        (lambda x: torch.bitwise_right_shift(x, x), torch.float16),
        (lambda x: torch.bitwise_not(x), torch.float32),
        (torch.frac, torch.int64),
        (torch.nn.functional.gelu, torch.int32),
        (torch.nn.functional.silu, torch.int64),
        (torch.nn.functional.logsigmoid, torch.int64),
        (lambda x: torch.hypot(x, x), torch.int64),
        (lambda x: torch.logaddexp(x, x), torch.int32),
        (lambda x: torch.nextafter(x, x), torch.int64),
        (lambda x: torch.special.zeta(x, x), torch.float16),
        (lambda x: torch.pow(x, x), torch.bool),
        (lambda x: torch.clamp(x, x, x), torch.bool),
        (lambda x: torch.fmod(x, x), torch.bool),
        (lambda x: torch.lerp(x, x, x), torch.int64),
        (lambda x: torch.nn.functional.binary_cross_entropy(x, x), torch.int64),
    ],
    ids=lambda v: dtype_id(v) if isinstance(v, torch.dtype) else "",
)
def test_math_unsupported_dtypes_raise_like_cpu(fn, dtype):
    """The CPU's NotImplementedError ("<kernel>" not implemented for '<dtype>'), word for word."""
    ((x, xo),) = ODD.make(dtype, nonzero=True)
    with pytest.raises(NotImplementedError) as cpu_error:
        fn(x)
    with pytest.raises(NotImplementedError) as ocl_error:
        fn(xo)
    assert str(ocl_error.value) == str(cpu_error.value)


def test_activation_argument_errors_like_cpu():
    x = make_cpu((5,), torch.uint8).to(DEVICE)
    with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
        torch.nn.functional.hardtanh(x)
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        torch.nn.functional.hardtanh(x.bool())
    f = make_cpu((5,), torch.float32).to(DEVICE)
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        torch.nn.functional.softshrink(f, -1.0)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        torch.nn.functional.glu(f)
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        torch.nn.functional.celu(f, 0.0)
    with pytest.raises(RuntimeError, match="does not support non-positive values for delta"):
        torch.nn.functional.huber_loss(f, f, delta=0.0)
    # hardtanh keeps integers (relu6 on int64), as on the CPU
    ((i, io),) = ODD.make(torch.int64, low=-9, high=9)
    check_op(torch.nn.functional.relu6, [i], [io], exact=True)


def test_binary_cross_entropy_input_outside_0_1_raises_at_the_next_wait():
    """The CPU raises for inputs outside [0, 1] or NaN; the device finds them in a kernel and
    raises at the next wait, and stays usable."""
    t = torch.tensor([0.0, 1.0, 0.5]).to(DEVICE)
    for bad in (1.5, -0.25, NAN):
        x = torch.tensor([0.5, bad, 0.25])
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            torch.nn.functional.binary_cross_entropy(x, t.cpu())
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            torch.nn.functional.binary_cross_entropy(x.to(DEVICE), t).cpu()
    ok = torch.tensor([0.0, 1.0, 0.25])
    check_op(
        lambda a, b: torch.nn.functional.binary_cross_entropy(a, b, reduction="none"),
        [ok, t.cpu()],
        [ok.to(DEVICE), t],
    )


# The ops the table lets the tiny-op batch run (kBatch), each in the form that reaches it.
BATCH_OPS = {
    "pow_scalar": lambda x, y: x**2,
    "erf": lambda x, y: torch.erf(x),
    "gelu": lambda x, y: torch.nn.functional.gelu(x),
    "gelu_backward": lambda x, y: torch.ops.aten.gelu_backward(y, x),
    "silu": lambda x, y: torch.nn.functional.silu(x),
    "silu_backward": lambda x, y: torch.ops.aten.silu_backward(y, x),
    "leaky_relu": lambda x, y: torch.nn.functional.leaky_relu(x, 0.25),
    "leaky_relu_backward": lambda x, y: torch.ops.aten.leaky_relu_backward(y, x, 0.25, False),
    "hardtanh_backward": lambda x, y: torch.ops.aten.hardtanh_backward(y, x, -0.5, 0.5),
    "mse": lambda x, y: torch.nn.functional.mse_loss(x, y, reduction="none"),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("name", list(BATCH_OPS))
def test_batched_math_ops(name, dtype):
    """Tiny calls of the ops flagged kBatch run in the stream's batch kernel, NaN and Inf
    included, with the results of their own kernels."""
    fn = BATCH_OPS[name]
    x = make_cpu((37,), dtype, seed=41)
    x[:5] = torch.tensor([NAN, INF, -INF, 0.0, -0.0])
    y = make_cpu((37,), dtype, seed=42)
    with torch.ocl.fallback_mode("error"):
        before = torch.ocl.batch_stats()["ops"]
        out = fn(x.to(DEVICE), y.to(DEVICE))
        recorded = torch.ocl.batch_stats()["ops"] - before
    assert recorded == 1, f"{name}: {recorded} ops batched"
    assert_ocl_close(out, cpu_reference(fn, [x, y]))


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8],
    ids=dtype_id,
)
@pytest.mark.parametrize("shape", [(4, 6), (7, 3), (0, 3), (1, 1)])
def test_trace(dtype, shape):
    """trace: the diagonal's sum (integers accumulate into int64), also of a transposed view."""
    skip_unsupported(dtype)
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(1)) * 10).to(dtype)
    assert_ocl_close(torch.trace(x.to(DEVICE)), torch.trace(x))
    assert_ocl_close(torch.trace(x.t().to(DEVICE)), torch.trace(x.t()))


def test_trace_errors():
    for bad, exc in (
        (torch.randn(3), RuntimeError),
        (torch.randn(2, 2, 2), RuntimeError),
        (torch.ones(2, 2, dtype=torch.bool), NotImplementedError),
    ):
        with pytest.raises(exc) as cpu_err:
            torch.trace(bad)
        with pytest.raises(exc) as ocl_err:
            torch.trace(bad.to(DEVICE))
        assert str(ocl_err.value) == str(cpu_err.value)


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8],
    ids=dtype_id,
)
def test_cross(dtype):
    """linalg.cross / cross: a middle dim, broadcast operands, transposed views, empty."""
    skip_unsupported(dtype)
    gen = torch.Generator().manual_seed(2)

    def rnd(*shape):
        return (torch.randn(shape, generator=gen) * 5).to(dtype)

    a, b = rnd(4, 3, 5), rnd(4, 3, 5)
    assert_ocl_close(
        torch.linalg.cross(a.to(DEVICE), b.to(DEVICE), dim=1), torch.linalg.cross(a, b, dim=1)
    )
    a, b = rnd(2, 1, 3), rnd(1, 4, 3)
    assert_ocl_close(torch.linalg.cross(a.to(DEVICE), b.to(DEVICE)), torch.linalg.cross(a, b))
    a, b = rnd(3, 6).t(), rnd(3, 6).t()
    assert_ocl_close(torch.cross(a.to(DEVICE), b.to(DEVICE), dim=1), torch.cross(a, b, dim=1))
    a = rnd(0, 3)
    assert_ocl_close(torch.linalg.cross(a.to(DEVICE), a.to(DEVICE)), torch.linalg.cross(a, a))


def test_cross_errors():
    cases = (
        (torch.randn(3, 2), torch.randn(3, 2), RuntimeError),
        (torch.randn(3), torch.randn(3, dtype=torch.float64), RuntimeError),
        (torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool), NotImplementedError),
    )
    for a, b, exc in cases:
        with pytest.raises(exc) as cpu_err:
            torch.linalg.cross(a, b)
        with pytest.raises(exc) as ocl_err:
            torch.linalg.cross(a.to(DEVICE), b.to(DEVICE))
        assert str(ocl_err.value) == str(cpu_err.value)


# ---- The vectorised contiguous path (EW_VEC, ops flagged kVec: float32 calls on CPU devices run a
# work-item's chunk as float8) and the contiguous kernel for operands next to a CPU scalar.

VEC_UNARY = (
    "exp log sqrt rsqrt sigmoid sin cos reciprocal erf erfc expm1 log1p log2 log10 exp2 tan asin "
    "acos atan sinh cosh asinh acosh atanh"
).split()


def _vec_input(n, seed):
    """Random values over the ops' interesting ranges, every special value among them."""
    x = make_cpu((n,), torch.float32, seed=seed, low=-4, high=4)
    x[: len(SPECIAL)] = torch.tensor(SPECIAL)
    return x


@pytest.mark.parametrize("name", VEC_UNARY + ["gelu", "silu"])
def test_vectorised_unary_ops(name):
    """Sizes beyond the tiny-op batch (8192) that end inside a chunk (64) and inside a vector (8),
    at offsets into the buffer: every element is computed once, with the scalar path's NaN/Inf
    handling."""
    fn = getattr(torch.nn.functional, name, None) if name in ("gelu", "silu") else None
    fn = fn or getattr(torch, name)
    base = _vec_input(64 * 200 + 13, seed=3)
    on_device = base.to(DEVICE)
    for start, n in ((0, base.numel()), (0, 64 * 150), (5, 64 * 150 - 1), (3, 8 * 64 * 20 + 7)):
        view = base[start : start + n]
        x = on_device[start : start + n]  # at an offset into the buffer
        expected = fn(view.double()).float()
        assert_ocl_close(fn(x), expected, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["mul", "add", "div", "sub"])
def test_contiguous_with_a_python_scalar(op):
    """x op 2.5 on a large contiguous tensor runs the contiguous kernel (the CPU scalar's zero
    stride does not count against it), with the CPU's results."""
    x = _vec_input(100_003, seed=4)
    fn = getattr(torch, op)
    for s in (2.5, -3, 0.0):
        expected = fn(x.double(), s).float()
        assert_ocl_close(fn(x.to(DEVICE), s), expected)
        assert_ocl_close(fn(x.to(DEVICE)[1::2], s), fn(x[1::2].double(), s).float())


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
def test_max_min_signed_zeros_and_nan(name, dtype):
    """NaN propagation (maximum/minimum) and NaN skipping (fmax/fmin) as on the CPU, at sizes
    of the batch and of the kernel. A tie of -0.0 and 0.0 gives a zero of either sign: the CPU's
    own vectorised loop returns the second operand and its scalar loop the first."""
    a = torch.tensor([-0.0, 0.0, NAN, 1.0, NAN, 2.0, -1.0, -INF, INF], dtype=dtype)
    b = torch.tensor([0.0, -0.0, 1.0, NAN, NAN, 1.0, 3.0, INF, -INF], dtype=dtype)
    fn = getattr(torch, name)
    for x, y in ((a, b), (a.repeat(300), b.repeat(300)), (a.repeat(1000), b.repeat(1000))):
        got = fn(x.to(DEVICE), y.to(DEVICE)).cpu()
        expected = fn(x, y)
        assert torch.equal(got.isnan(), expected.isnan())
        ok = ~expected.isnan()
        assert torch.equal(got[ok], expected[ok])  # -0.0 == 0.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_hardsigmoid_backward_scales_like_cpu(dtype):
    """CPU and CUDA torch multiply hardsigmoid's gradient by 1/6 rounded to float in every dtype;
    float64 gradients matched them only to 3e-8 with an exact 1/6 (found by the zoo's float64
    step of mobilenet_v3). Now bit for bit."""
    skip_unsupported(dtype)
    x = make_cpu((1000,), dtype, seed=41) * 4
    g = make_cpu((1000,), dtype, seed=42)
    x[:4] = torch.tensor([-3.0, 3.0, float("nan"), 0.0], dtype=dtype)
    got_g = torch.ops.aten.hardsigmoid_backward(g.to(DEVICE), x.to(DEVICE)).cpu()
    assert torch.equal(got_g, torch.ops.aten.hardsigmoid_backward(g, x))
