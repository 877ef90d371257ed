"""The _foreach_* ops on ocl against the CPU: every overload (Scalar, ScalarList, List, Tensor,
functional and in place), float32/float16/bfloat16/float64 and integer lists, lists with empty
and 0-dim tensors, NaN and Inf, non-contiguous tensors, mixed dtypes and devices, tensors that
share memory, and the errors of bad arguments. References are the CPU op on float64 copies,
rounded to the dtype (the CPU's own half/bfloat16 result where an op's rounding steps matter).
torch.ops.ocl.multi_tensor_counts() shows that one launch covers many tensors."""

from __future__ import annotations

import math

import pytest
import torch
from ocl_testing import DEVICE, TOLERANCES, assert_ocl_close, make_cpu, skip_unsupported

FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
# Ops the optimizers call run in every dtype by default; the others in float32 (every dtype in
# the slow run), and float64 always in the slow run: each (op, dtype, variant) is a kernel build.
OPTIMIZER_OPS = (
    "add", "sub", "mul", "div", "maximum", "addcmul", "addcdiv", "lerp",
    "abs", "neg", "sign", "sqrt", "rsqrt", "reciprocal", "exp",
)  # fmt: skip


def dtypes_for(op=None):
    """pytest params over FLOATS, marked slow where the default run leaves them out."""
    out = []
    for dtype in FLOATS:
        slow = dtype == torch.float64 or (dtype != torch.float32 and op not in OPTIMIZER_OPS)
        out.append(pytest.param(dtype, id=str(dtype), marks=(pytest.mark.slow,) if slow else ()))
    return out


def op_dtype_params(ops):
    return [
        pytest.param(op, p.values[0], id=f"{op}-{p.id}", marks=p.marks)
        for op in ops
        for p in dtypes_for(op)
    ]


# Several chunks per tensor (the CPU's chunk is 4096 elements), tails, empty and 0-dim tensors.
SHAPES = ((3, 4), (5000,), (7, 2, 3), (1,), (0,), (), (4097,), (2, 0, 3))
NAN, INF = float("nan"), float("inf")


def make_list(dtype, seed=0, shapes=SHAPES, special=True, **kwargs):
    """(cpu list, ocl list) with equal values; with `special`, the first tensor holds NaN, Inf,
    -Inf, -0.0 (floating dtypes)."""
    cpu = []
    for i, s in enumerate(shapes):
        t = make_cpu(s, dtype, seed=seed * 100 + i, **kwargs)
        if special and i == 0 and dtype.is_floating_point:
            t.view(-1)[:4] = torch.tensor([NAN, INF, -INF, -0.0], dtype=dtype)
        cpu.append(t)
    return cpu, [t.to(DEVICE) for t in cpu]


def up(x):
    """float64 copies of floating tensors (lists and tuples recursively)."""
    if isinstance(x, torch.Tensor):
        return x.double() if x.is_floating_point() else x
    if isinstance(x, (list, tuple)):
        return type(x)(up(v) for v in x)
    return x


def reference(fn, *args, ref64=True):
    """fn on the CPU arguments; with ref64 computed on float64 copies, rounded to the dtypes of
    the CPU's own result."""
    expected = fn(*args)
    if not ref64:
        return expected
    precise = fn(*up(args))
    return [p.to(e.dtype) for p, e in zip(precise, expected, strict=True)]


def assert_lists_close(actual, expected, rtol=None, atol=None):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert_ocl_close(a, e, rtol=rtol, atol=atol)


def counts():
    launches, rows = torch.ops.ocl.multi_tensor_counts()
    return launches, rows


# --------------------------------------------------------------------------------------------
# Binary ops

BINARY = ("add", "sub", "mul", "div", "clamp_min", "clamp_max", "maximum", "minimum", "pow")
WITH_ALPHA = ("add", "sub")
WITH_TENSOR = ("add", "mul", "div")


def binary_inputs(op, dtype):
    kwargs = dict(low=0.5, high=2.0) if op == "pow" else {}
    a = make_list(dtype, seed=1, **kwargs)
    b = make_list(dtype, seed=2, special=False, nonzero=op == "div", **kwargs)
    return a, b


@pytest.mark.parametrize("op,dtype", op_dtype_params(BINARY))
@pytest.mark.parametrize("inplace", [False, True], ids=["functional", "inplace"])
def test_binary_scalar_and_scalarlist(op, dtype, inplace):
    skip_unsupported(dtype)
    (a, da), _ = binary_inputs(op, dtype)
    name = f"_foreach_{op}{'_' if inplace else ''}"
    fn = getattr(torch, name)
    scalars = [0.5 + 0.25 * i for i in range(len(a))]

    for arg in (1.75, scalars):

        def call(x, arg=arg):
            x = [t.clone() for t in x]
            r = fn(x, arg)
            return x if inplace else r

        assert_lists_close(call(da), reference(call, a))


@pytest.mark.parametrize("op,dtype", op_dtype_params(BINARY))
def test_binary_list(op, dtype):
    skip_unsupported(dtype)
    (a, da), (b, db) = binary_inputs(op, dtype)
    kwargs = {"alpha": 0.75} if op in WITH_ALPHA else {}
    fn = getattr(torch, f"_foreach_{op}")
    fn_ = getattr(torch, f"_foreach_{op}_")
    expected = reference(lambda x, y: fn(x, y, **kwargs), a, b)
    assert_lists_close(fn(da, db, **kwargs), expected)
    fn_(da, db, **kwargs)
    assert_lists_close(da, expected)


@pytest.mark.parametrize("op,dtype", op_dtype_params(WITH_TENSOR))
@pytest.mark.parametrize("where", ["ocl", "cpu"])
def test_binary_tensor_scalar(op, dtype, where):
    """The Tensor overloads: a 0-dim tensor on the device (read by the kernel, no host wait) or
    on the CPU; add's alpha."""
    skip_unsupported(dtype)
    (a, da), _ = binary_inputs(op, dtype)
    s = torch.tensor(1.375, dtype=dtype)
    ds = s.to(DEVICE) if where == "ocl" else s
    kwargs = {"alpha": -0.5} if op == "add" else {}
    fn = getattr(torch, f"_foreach_{op}")
    fn_ = getattr(torch, f"_foreach_{op}_")
    expected = reference(lambda x, y: fn(x, y, **kwargs), a, s)
    waits = torch.ocl.host_wait_count()
    got = fn(da, ds, **kwargs)
    fn_(da, ds, **kwargs)
    assert torch.ocl.host_wait_count() == waits
    assert_lists_close(got, expected)
    assert_lists_close(da, expected)


def test_tensor_scalar_of_another_dtype():
    """lr-like float32 tensors scale float16 lists; the result keeps the lists' dtype."""
    a, da = make_list(torch.float16, seed=3)
    s = torch.tensor(0.3, dtype=torch.float32)
    expected = reference(torch._foreach_mul, a, s)
    assert_lists_close(torch._foreach_mul(da, s.to(DEVICE)), expected)


# --------------------------------------------------------------------------------------------
# Unary ops

UNARY_DOMAIN = {
    "abs": {},
    "acos": dict(low=-1, high=1),
    "asin": dict(low=-1, high=1),
    "atan": {},
    "ceil": {},
    "cos": {},
    "cosh": {},
    "erf": {},
    "erfc": {},
    "exp": {},
    "expm1": {},
    "floor": {},
    "frac": {},
    "lgamma": dict(low=0.1, high=6),
    "log": dict(low=0.1, high=6),
    "log10": dict(low=0.1, high=6),
    "log1p": dict(low=-0.9, high=6),
    "log2": dict(low=0.1, high=6),
    "neg": {},
    "reciprocal": dict(nonzero=True),
    "round": {},
    "rsqrt": dict(low=0.1, high=6),
    "sigmoid": {},
    "sign": {},
    "sin": {},
    "sinh": {},
    "sqrt": dict(low=0, high=6),
    "tan": dict(low=-1.4, high=1.4),
    "tanh": {},
    "trunc": {},
}


@pytest.mark.parametrize("op,dtype", op_dtype_params(UNARY_DOMAIN))
def test_unary(op, dtype):
    skip_unsupported(dtype)
    a, da = make_list(dtype, seed=4, **UNARY_DOMAIN[op])
    fn = getattr(torch, f"_foreach_{op}")
    fn_ = getattr(torch, f"_foreach_{op}_")
    expected = reference(fn, a)
    rtol, atol = TOLERANCES[dtype]
    if op in ("lgamma", "tan", "cosh", "sinh", "expm1", "erfc", "acos", "asin"):
        rtol, atol = rtol * 4, atol * 10  # OpenCL's built-ins are within a few ulp
    assert_lists_close(fn(da), expected, rtol=rtol, atol=atol)
    fn_(da)
    assert_lists_close(da, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", ["sqrt", "exp", "acos", "sigmoid"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
def test_unary_promotes_integer_lists(op, dtype):
    """Float ops of integer lists compute in the default dtype, as on the CPU."""
    a, da = make_list(dtype, seed=5, low=0, high=2, special=False)
    fn = getattr(torch, f"_foreach_{op}")
    assert_lists_close(fn(da), reference(fn, a, ref64=False))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8, torch.uint8], ids=str)
def test_integer_lists(dtype):
    """add, sub, mul, the max/min family, neg, abs and sign of integer lists (wrapping like the
    CPU); ops that would change the dtype take the CPU's route and result."""
    a, da = make_list(dtype, seed=6, special=False)
    b, db = make_list(dtype, seed=7, special=False)
    cases = [
        lambda x, y: torch._foreach_add(x, y, alpha=3),
        lambda x, y: torch._foreach_sub(x, 2),
        lambda x, y: torch._foreach_mul(x, [i + 1 for i in range(len(x))]),
        lambda x, y: torch._foreach_maximum(x, y),
        lambda x, y: torch._foreach_clamp_max(x, 3),
        lambda x, y: torch._foreach_clamp_min(x, [i - 3 for i in range(len(x))]),
        lambda x, y: torch._foreach_mul(x, y),
        lambda x, y: torch._foreach_div(x, 2),  # int / int is float: the CPU's slow route
    ]
    if dtype != torch.uint8:
        cases += [
            lambda x, y: torch._foreach_neg(x),
            lambda x, y: torch._foreach_abs(x),
            lambda x, y: torch._foreach_sign(x),
        ]
    for fn in cases:
        assert_lists_close(fn(da, db), fn(a, b))


# --------------------------------------------------------------------------------------------
# addcmul, addcdiv, lerp, pow(Scalar, list)


@pytest.mark.parametrize("op,dtype", op_dtype_params(["addcmul", "addcdiv"]))
@pytest.mark.parametrize("kind", ["Scalar", "ScalarList", "Tensor"])
def test_pointwise(op, dtype, kind):
    skip_unsupported(dtype)
    a, da = make_list(dtype, seed=8)
    b, db = make_list(dtype, seed=9, special=False)
    c, dc = make_list(dtype, seed=10, special=False, nonzero=True)
    n = len(a)
    value = {
        "Scalar": -0.625,
        "ScalarList": [0.25 * (i - 3) for i in range(n)],
        "Tensor": torch.tensor([0.5 * (i + 1) for i in range(n)], dtype=torch.float64),
    }[kind]
    fn = getattr(torch, f"_foreach_{op}")
    fn_ = getattr(torch, f"_foreach_{op}_")
    expected = reference(lambda x, y, z: fn(x, y, z, value), a, b, c)
    assert_lists_close(fn(da, db, dc, value), expected)
    fn_(da, db, dc, value)
    assert_lists_close(da, expected)


@pytest.mark.parametrize("dtype", dtypes_for("lerp"))
@pytest.mark.parametrize("kind", ["List", "Scalar", "ScalarList"])
def test_lerp(dtype, kind):
    skip_unsupported(dtype)
    a, da = make_list(dtype, seed=11)
    b, db = make_list(dtype, seed=12, special=False)
    w, dw = make_list(dtype, seed=13, special=False, low=-0.5, high=1.5)
    weight = {"List": (w, dw), "Scalar": (0.75, 0.75), "ScalarList": ([0.2, 0.7] * 4,) * 2}[kind]
    expected = reference(torch._foreach_lerp, a, b, weight[0])
    assert_lists_close(torch._foreach_lerp(da, db, weight[1]), expected)
    torch._foreach_lerp_(da, db, weight[1])
    assert_lists_close(da, expected)


@pytest.mark.parametrize("dtype", dtypes_for("add"))
def test_pow_scalar_base(dtype):
    """pow(Scalar, list), which Adam with capturable=True calls for its bias corrections."""
    skip_unsupported(dtype)
    a, da = make_list(dtype, seed=14, special=False, low=-3, high=5)
    expected = reference(lambda x: torch._foreach_pow(0.9, x), a)
    assert_lists_close(torch._foreach_pow(0.9, da), expected)


# --------------------------------------------------------------------------------------------
# copy_, zero_, norm


@pytest.mark.parametrize("dtype", FLOATS + (torch.int64, torch.int8, torch.bool), ids=str)
def test_copy_and_zero(dtype):
    """Elements move as bits: NaN payloads and -0.0 survive copy_."""
    skip_unsupported(dtype)
    a, da = make_list(dtype, seed=15)
    b, db = make_list(dtype, seed=16)
    if dtype.is_floating_point and dtype.itemsize == 2:
        b[0].view(torch.int16).view(-1)[0] = 0x7E01  # a NaN with a payload (float16: 0x7E01)
        db[0].copy_(b[0])
    torch._foreach_copy_(da, db)
    for x, y in zip(da, b, strict=True):
        assert torch.equal(x.cpu().reshape(-1).view(torch.uint8), y.reshape(-1).view(torch.uint8))
    torch._foreach_zero_(da)
    for x in da:
        assert_ocl_close(x, torch.zeros(x.shape, dtype=dtype), exact=True)


def test_copy_converting_or_from_the_cpu():
    """Other dtypes or a CPU source take per-tensor copies, as on the CPU."""
    a, da = make_list(torch.float32, seed=17)
    b, _ = make_list(torch.float16, seed=18)
    torch._foreach_copy_(da, b)
    assert_lists_close(da, [t.float() for t in b])


ORDS = (2, 1, 0, INF, -INF, 3, 0.5)


@pytest.mark.parametrize("dtype", dtypes_for("add"))
@pytest.mark.parametrize("ord", ORDS, ids=str)
def test_norm(dtype, ord):
    skip_unsupported(dtype)
    shapes = SHAPES if not math.isinf(ord) else tuple(s for s in SHAPES if 0 not in s)
    a, da = make_list(dtype, seed=19, shapes=shapes, special=False)
    a[1].view(-1)[7] = NAN  # a NaN propagates into its tensor's norm only
    da[1].copy_(a[1])
    expected = reference(lambda x: torch._foreach_norm(x, ord), a)
    rtol, atol = TOLERANCES[dtype]
    assert_lists_close(torch._foreach_norm(da, ord), expected, rtol=rtol * 4, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_norm_dtype_argument(dtype):
    a, da = make_list(dtype, seed=20, special=False)
    expected = [
        torch.linalg.vector_norm(t.double()).float() for t in a
    ]  # dtype=float32: computed from the exact half values
    assert_lists_close(torch._foreach_norm(da, 2, dtype=torch.float32), expected)


def test_norm_errors_like_the_cpu():
    a, da = make_list(torch.float32, seed=21, special=False)
    with pytest.raises(RuntimeError, match="infinity norm on an empty tensor"):
        torch._foreach_norm(a, INF)
    with pytest.raises(RuntimeError, match="infinity norm on an empty tensor"):
        torch._foreach_norm(da, INF)
    ints = [t.to(torch.int64) for t in da]
    with pytest.raises(RuntimeError) as cpu:
        torch._foreach_norm([t.cpu() for t in ints])
    with pytest.raises(type(cpu.value)):
        torch._foreach_norm(ints)


# --------------------------------------------------------------------------------------------
# One launch for many tensors


def test_one_launch_covers_many_tensors():
    shapes = [(64, 3, 3, 3), (64,), (64,), (128, 64, 3, 3), (128,), (10, 512)] * 5
    a, da = make_list(torch.float32, seed=22, shapes=shapes)
    b, db = make_list(torch.float32, seed=23, shapes=shapes)
    launches, rows = counts()
    torch._foreach_addcmul_(da, db, db, 0.5)
    launches2, rows2 = counts()
    assert rows2 - rows == len(shapes)
    assert launches2 - launches <= 2, f"{launches2 - launches} launches for {len(shapes)} tensors"
    assert_lists_close(da, reference(lambda x, y: torch._foreach_addcmul(x, y, y, 0.5), a, b))


def test_many_buffers_split_into_launches():
    """More distinct buffers than a launch takes (32): tensors over 1 MiB each own one."""
    need = 2 * 36 * 2**21  # 36 inputs and 36 results, each in a 2 MiB block
    if torch.ocl.get_device_properties(DEVICE).total_memory < 2 * need:
        pytest.skip(f"needs {need >> 20} MiB of device memory (Oclgrind has 128 MiB)")
    g = torch.Generator().manual_seed(24)
    a = [torch.rand(2**18 + 1, generator=g) for _ in range(36)]
    da = [t.to(DEVICE) for t in a]
    launches, _ = counts()
    got = torch._foreach_mul(da, 3.0)
    assert counts()[0] - launches >= 2
    assert_lists_close(got, [t * 3.0 for t in a])


@pytest.mark.slow
def test_large_tensors():
    a, da = make_list(torch.float32, seed=25, shapes=[(2**20 + 7,), (3 * 2**20 + 1,)])
    b, db = make_list(torch.float32, seed=26, shapes=[(2**20 + 7,), (3 * 2**20 + 1,)])
    assert_lists_close(
        torch._foreach_lerp(da, db, 0.3),
        reference(lambda x, y: torch._foreach_lerp(x, y, 0.3), a, b),
    )
    assert_lists_close(torch._foreach_norm(da), reference(torch._foreach_norm, a), rtol=1e-4)


# --------------------------------------------------------------------------------------------
# Lists the multi-tensor kernels do not take: the CPU's route (one op per tensor) and result


def test_non_contiguous_tensors():
    base, dbase = make_list(torch.float32, seed=27, shapes=[(6, 8), (5, 9)], special=False)
    # transposed tensors are dense (the kernels take them); strided slices are not
    for view in (lambda t: t.t(), lambda t: t[:, ::2]):
        a, da = [view(t) for t in base], [view(t) for t in dbase]
        assert_lists_close(
            torch._foreach_mul(da, da), reference(lambda x: torch._foreach_mul(x, x), a)
        )
        torch._foreach_add_(da, 1.5)
        for t in a:
            t.add_(1.5)
        assert_lists_close(da, a)


def test_mixed_dtypes_in_one_list():
    a = [make_cpu((5,), torch.float32, seed=1), make_cpu((3,), torch.float16, seed=2)]
    da = [t.to(DEVICE) for t in a]
    assert_lists_close(torch._foreach_add(da, 2.5), torch._foreach_add(a, 2.5))
    assert_lists_close(torch._foreach_norm(da), torch._foreach_norm(a))
    torch._foreach_mul_(da, da)
    assert_lists_close(da, [t * t for t in a])


def test_mixed_devices():
    """CPU tensors in an ocl list are computed where they live; mismatched devices at one index
    raise like the per-tensor op."""
    a = [make_cpu((5,), torch.float32, seed=1), make_cpu((3,), torch.float32, seed=2)]
    mixed = [a[0].to(DEVICE), a[1]]
    out = torch._foreach_add(mixed, 1.0)
    assert out[0].device.type == "ocl" and out[1].device.type == "cpu"
    torch.testing.assert_close(out[0].cpu(), a[0] + 1)
    torch.testing.assert_close(out[1], a[1] + 1)
    with pytest.raises(RuntimeError, match="same device"):
        torch._foreach_add([a[0].to(DEVICE)], [a[0]])


def test_shared_memory_in_place_matches_the_cpu():
    """Ops whose tensors overlap run one tensor after another, as on the CPU."""
    x = make_cpu((10,), torch.float32, seed=3)
    y = make_cpu((10,), torch.float32, seed=4)
    dx, dy = x.to(DEVICE), y.to(DEVICE)
    cases = [
        lambda p, q: torch._foreach_add_([p, p], [q, q]),  # the same tensor twice
        lambda p, q: torch._foreach_add_([p, q], [q, p]),  # reads what another tensor writes
        lambda p, q: torch._foreach_mul_([p[:6], p[4:]], 2.0),  # overlapping views
        lambda p, q: torch._foreach_mul_([p, q], [p, q]),  # its own input: the fast route
    ]
    for case in cases:
        cx, cy, ox, oy = x.clone(), y.clone(), dx.clone(), dy.clone()
        case(cx, cy)
        case(ox, oy)
        assert_ocl_close(ox, cx)
        assert_ocl_close(oy, cy)


def test_empty_tensors_and_lists():
    empties = [torch.empty(0, device=DEVICE), torch.empty(3, 0, device=DEVICE)]
    launches, _ = counts()
    out = torch._foreach_add(empties, 1.0)
    assert [t.shape for t in out] == [torch.Size([0]), torch.Size([3, 0])]
    assert counts()[0] == launches  # nothing to launch
    assert [n.item() for n in torch._foreach_norm(empties)] == [0.0, 0.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda L, M: torch._foreach_add([], 1.0),
        lambda L, M: torch._foreach_add_(L, M[:1]),
        lambda L, M: torch._foreach_mul(L, [1.0]),
        lambda L, M: torch._foreach_addcmul(L, L, M[:1]),
        lambda L, M: torch._foreach_add(L, [m.reshape(-1)[:2] for m in M]),
        lambda L, M: torch._foreach_mul(L, torch.ones(2, device=L[0].device)),
        lambda L, M: torch._foreach_addcdiv(L, L, L, torch.ones(3)),
        lambda L, M: torch._foreach_add_([t.long() for t in L], 1.5),
        lambda L, M: torch._foreach_sub([t.bool() for t in L], [t.bool() for t in L]),
        lambda L, M: torch._foreach_lerp(L, M, [0.5]),
    ],
    ids=[
        "empty_list",
        "list_lengths",
        "scalarlist_length",
        "pointwise_lengths",
        "sizes",
        "tensor_not_0dim",
        "scalars_tensor_length",
        "inplace_cast",
        "bool_sub",
        "lerp_weights_length",
    ],
)
def test_errors_like_the_cpu(call):
    shapes = [(2, 3), (4,)]
    L, dL = make_list(torch.float32, seed=30, shapes=shapes, special=False)
    M, dM = make_list(torch.float32, seed=31, shapes=shapes, special=False)
    with pytest.raises(Exception) as cpu:
        call(L, M)
    with pytest.raises(type(cpu.value)) as ocl:
        call(dL, dM)
    assert str(ocl.value).splitlines()[0] == str(cpu.value).splitlines()[0]
    # the process stays usable
    assert_lists_close(torch._foreach_add(dL, 1.0), torch._foreach_add(L, 1.0))
