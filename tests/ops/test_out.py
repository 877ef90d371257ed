# ruff: noqa: E501  (the XFAIL reasons below are long strings)
"""The out= and in-place class test: every `.out` overload and in-place `_` variant with a native
ocl (PrivateUse1) kernel, against CPU torch on the same inputs.

Overloads are found in the dispatcher (`torch._C._dispatch_get_all_op_names()` with
`_dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1")`); inputs come from PyTorch's OpInfo
database (float32 samples, a couple per op; the overload a sample reaches is recorded on the CPU
with a dispatch mode), or from a small table below for internal overloads that no public function
reaches with out= (`_softmax.out`, `nll_loss_forward.output`, ...). For each overload:

  test_out_dtype:  an out of another dtype raises exactly when the CPU raises (same exception type
                   and first line of the message), and gives the CPU's values when it does not;
  test_out_resize: an out of the right dtype and the wrong shape (empty, or with elements: the
                   CPU's "was resized" warning) is resized as on the CPU; a strided out of the right
                   shape keeps its strides;
  test_out_alias:  out= one of the inputs (where shape and dtype allow) gives the result of the
                   unaliased call (or the CPU's error where the CPU refuses the overlap);
  test_inplace:    the in-place variant as on the CPU, with self of another dtype (an error where
                   the result cannot be cast), and with self passed again as another operand.

Values are compared with a float64 CPU reference where the inputs are floating. Overloads whose
out= handling lives in files this test does not own are marked xfail with the reason (see XFAIL).
"""

# The closures in the loops below are called within the iteration that defines them.
# ruff: noqa: B023

from __future__ import annotations

import itertools
import re
import warnings

import pytest
import torch
from ocl_testing import DEVICE, make_cpu
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

try:
    from torch.testing._internal.common_methods_invocations import op_db
except Exception as e:  # noqa: BLE001 (op_db needs `expecttest`; without it the table alone)
    op_db = []
    OP_DB_ERROR = f"{type(e).__name__}: {e}"
else:
    OP_DB_ERROR = None

SAMPLES_PER_OP = 2
SELF_POS = 0  # in-place variants: the first leaf of a case's args (an OpInfo sample's input)
WRONG_DTYPES = (torch.float64, torch.int64, torch.float16, torch.bool)
# In-place variants that draw random numbers or change metadata: nothing to compare values with.
NOT_COMPUTED = {
    "bernoulli_.Tensor",
    "bernoulli_.float",
    "cauchy_",
    "exponential_",
    "geometric_",
    "log_normal_",
    "normal_",
    "random_",
    "random_.from",
    "random_.to",
    "uniform_",
    "resize_",
    "set_",
    "set_.source_Storage",
    "set_.source_Storage_storage_offset",
    "set_.source_Tensor",
}


# ---------------------------------------------------------------------------------------------
# The overloads with native kernels


def _overload(name):
    """aten::add.out -> torch.ops.aten.add.out"""
    base, _, ovl = name.removeprefix("aten::").partition(".")
    return getattr(getattr(torch.ops.aten, base), ovl or "default")


def _native_overloads():
    outs, inplace = [], []
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        if not name.startswith("aten::"):
            continue
        if not torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"):
            continue
        short = name.removeprefix("aten::")
        schema = _overload(name)._schema
        if any(a.is_out for a in schema.arguments):
            outs.append(short)
        elif short.split(".")[0].endswith("_") and short not in NOT_COMPUTED:
            first = schema.arguments[0] if schema.arguments else None
            if first is not None and first.alias_info is not None and first.alias_info.is_write:
                inplace.append(short)
    return outs, inplace


OUT_OVERLOADS, INPLACE_OVERLOADS = _native_overloads()


def _key(func):
    """torch.ops.aten.add.out -> "add.out"; ...abs_.default -> "abs_"."""
    name = func._schema.name.removeprefix("aten::")
    return name + ("." + func._overloadname if func._overloadname != "default" else "")


# ---------------------------------------------------------------------------------------------
# Cases: an overload with CPU inputs and how to call it


class Case:
    """args: a pytree of CPU inputs; functional(*args) -> result(s); with_out(args, out) calls the
    out= variant (out: a tensor or a tuple); inplace(args) calls the in-place variant on args[0]."""

    def __init__(self, label, args, functional=None, with_out=None, inplace=None):
        self.label, self.args = label, args
        self.functional, self.with_out, self.inplace = functional, with_out, inplace


class _Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append(func)
        return func(*args, **(kwargs or {}))


def _top_level_overload(fn):
    """The first aten overload that fn() dispatches (on the CPU), or None if fn raises."""
    rec = _Recorder()
    try:
        with rec:
            fn()
    except Exception:  # noqa: BLE001
        return None
    return _key(rec.calls[0]) if rec.calls else None


def _clone(tree):
    return tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, tree)


def _sample_dtype(info):
    supported = info.supported_dtypes("cpu")
    for dtype in (torch.float32, torch.int64, torch.bool):
        if dtype in supported:
            return dtype
    return None


def _opinfo_cases():
    out_cases, inplace_cases = {}, {}
    wanted = {k.split(".")[0].rstrip("_") for k in OUT_OVERLOADS + INPLACE_OVERLOADS}
    for info in op_db:
        # (torch.special.x is aten::special_x)
        if not {info.name, info.aten_name, info.name.replace(".", "_")} & wanted:
            continue
        dtype = _sample_dtype(info)
        if dtype is None:
            continue
        try:
            samples = list(itertools.islice(info.sample_inputs("cpu", dtype), 6))
        except Exception:  # noqa: BLE001
            continue
        label = info.name + ("." + info.variant_test_name if info.variant_test_name else "")
        for k, s in enumerate(samples):
            args = (s.input, s.args, s.kwargs)
            if info.supports_out:

                def functional(x, a, kw, op=info.op):
                    return op(x, *a, **kw)

                def with_out(args, out, op=info.op):
                    x, a, kw = args
                    return op(x, *a, **kw, out=out)

                try:
                    result = functional(*_clone(args))
                    out = _empty_outs(result, [r.dtype for r in _results(result)], empty=False)
                    copy = _clone(args)
                    key = _top_level_overload(lambda: with_out(copy, out))
                except Exception:  # noqa: BLE001
                    key = None
                if key in OUT_OVERLOADS and len(out_cases.get(key, [])) < SAMPLES_PER_OP:
                    c = Case(f"{label}[{k}]", args, functional=functional, with_out=with_out)
                    out_cases.setdefault(key, []).append(c)
            if info.inplace_variant is not None and isinstance(s.input, torch.Tensor):

                def inplace(args, op=info.inplace_variant):
                    x, a, kw = args
                    return op(x, *a, **kw)

                copy = _clone(args)
                key = _top_level_overload(lambda: inplace(copy))
                if key in INPLACE_OVERLOADS and len(inplace_cases.get(key, [])) < SAMPLES_PER_OP:
                    inplace_cases.setdefault(key, []).append(
                        Case(f"{label}[{k}]", args, inplace=inplace)
                    )
    return out_cases, inplace_cases


# Internal overloads that no public function reaches with out= (and scalar/integer overloads the
# float32 OpInfo samples miss): (overload, CPU args, functional overload or None).
def _x(seed=0, shape=(4, 5)):
    return make_cpu(shape, torch.float32, low=-2, high=2, seed=seed)


def _spd(seed=0):
    """A well-conditioned 4x4 matrix."""
    return torch.eye(4) + 0.1 * _x(seed, (4, 4))


def _i(seed=0, shape=(4, 5)):
    return make_cpu(shape, torch.int64, low=-20, high=20, seed=seed)


def _table():
    """out= overloads: key -> [(args, functional, {keyword-only args})...] (the dict optional);
    in-place variants: key -> [args...]."""
    logp = torch.log_softmax(_x(3), 1)
    target = torch.tensor([0, 4, 2, 1])
    y = torch.softmax(_x(1), 1)
    aten = torch.ops.aten
    nll_tw = aten.nll_loss_forward.default(logp, target, None, 1, -100)[1]
    out = {
        "_softmax.out": [((_x(), 1, False), aten._softmax.default)],
        "_log_softmax.out": [((_x(), 0, False), aten._log_softmax.default)],
        "_softmax_backward_data.out": [
            ((_x(2), y, 1, torch.float32), aten._softmax_backward_data.default)
        ],
        "_log_softmax_backward_data.out": [
            ((_x(2), torch.log(y), 1, torch.float32), aten._log_softmax_backward_data.default)
        ],
        "nll_loss_forward.output": [
            ((logp, target, None, 1, -100), aten.nll_loss_forward.default),
            ((logp, target, None, 0, -100), aten.nll_loss_forward.default),
        ],
        "nll_loss_backward.grad_input": [
            (
                (torch.tensor(1.5), logp, target, None, 1, -100, nll_tw),
                aten.nll_loss_backward.default,
            )
        ],
        "sigmoid_backward.grad_input": [((_x(2), y), aten.sigmoid_backward.default)],
        "tanh_backward.grad_input": [((_x(2), y), aten.tanh_backward.default)],
        "threshold_backward.grad_input": [((_x(2), _x(3), 0.5), aten.threshold_backward.default)],
        "threshold.out": [((_x(2), 0.5, -3.0), aten.threshold.default)],
        # linalg's internal overloads (well-conditioned matrices: eye + small noise)
        "_linalg_det.result": [((_spd(),), aten._linalg_det.default)],
        "_linalg_slogdet.sign": [((_spd(),), aten._linalg_slogdet.default)],
        "_linalg_solve_ex.result": [((_spd(), _x(5, (4, 2))), aten._linalg_solve_ex.default)],
        "_addmm_activation.out": [
            ((_x(1)[:, 0], _x(2), _x(3).t()), aten._addmm_activation.default, {"use_gelu": gelu})
            for gelu in (False, True)
        ],
        "sum.IntList_out": [
            ((_x(), [1], False), aten.sum.dim_IntList),
            ((_x(), [0, 1], True), aten.sum.dim_IntList),
        ],
        # Reductions (csrc/ops/Reduce.cpp) that OpInfo reaches only through other overloads.
        "prod.int_out": [
            ((_x(), 1, False), aten.prod.dim_int),
            ((_x(), 0, True), aten.prod.dim_int),
        ],
        "norm.out": [
            ((_x(), 2, [1], False), aten.norm.ScalarOpt_dim),
            ((_x(), 3.0, [0, 1], True), aten.norm.ScalarOpt_dim),
        ],
        "norm.dtype_out": [
            ((_x(), 1, [0], False), aten.norm.ScalarOpt_dim_dtype, {"dtype": torch.float64})
        ],
        "clamp.out": [((_x(), -1.0, 1.0), aten.clamp.default)],
        "clamp_max.out": [((_x(), 0.5), aten.clamp_max.default)],
        "clamp_min.out": [((_x(), -0.5), aten.clamp_min.default)],
    }
    # Pooling (csrc/ops/Pool.cpp): the structured overloads the nn functions reach internally.
    img, img3 = _x(4, (2, 3, 7, 6)), _x(5, (2, 2, 5, 6, 4))
    mp = aten.max_pool2d_with_indices.default(img, [3, 3], [2, 2], [1, 1], [1, 1], False)
    mp3 = aten.max_pool3d_with_indices.default(img3, [2, 2, 2], [2, 1, 2], [1, 0, 1], [1], False)
    amp = aten.adaptive_max_pool2d.default(img, [3, 4])
    amp3 = aten.adaptive_max_pool3d.default(img3, [3, 4, 2])
    ap = aten.avg_pool2d.default(img, [3, 3], [2, 2], [1, 1], False, True, None)
    ap3 = aten.avg_pool3d.default(img3, [2, 2, 2], [2, 2, 2], [1, 1, 1], False, True, None)
    out.update({
        "max_pool2d_with_indices.out": [
            ((img, [3, 3], [2, 2], [1, 1], [1, 1], False), aten.max_pool2d_with_indices.default)
        ],
        "max_pool2d_with_indices_backward.grad_input": [
            ((_x(6, mp[0].shape), img, [3, 3], [2, 2], [1, 1], [1, 1], False, mp[1]),
             aten.max_pool2d_with_indices_backward.default)
        ],
        "max_pool3d_with_indices.out": [
            ((img3, [2, 2, 2], [2, 1, 2], [1, 0, 1], [1], False),
             aten.max_pool3d_with_indices.default)
        ],
        "max_pool3d_with_indices_backward.grad_input": [
            ((_x(7, mp3[0].shape), img3, [2, 2, 2], [2, 1, 2], [1, 0, 1], [1], False, mp3[1]),
             aten.max_pool3d_with_indices_backward.default)
        ],
        "adaptive_max_pool2d.out": [((img, [3, 4]), aten.adaptive_max_pool2d.default)],
        "adaptive_max_pool2d_backward.grad_input": [
            ((_x(8, amp[0].shape), img, amp[1]), aten.adaptive_max_pool2d_backward.default)
        ],
        "adaptive_max_pool3d.out": [((img3, [3, 4, 2]), aten.adaptive_max_pool3d.default)],
        "adaptive_max_pool3d_backward.grad_input": [
            ((_x(8, amp3[0].shape), img3, amp3[1]), aten.adaptive_max_pool3d_backward.default)
        ],
        "avg_pool2d_backward.grad_input": [
            ((_x(9, ap.shape), img, [3, 3], [2, 2], [1, 1], False, True, None),
             aten.avg_pool2d_backward.default)
        ],
        "avg_pool3d_backward.grad_input": [
            ((_x(10, ap3.shape), img3, [2, 2, 2], [2, 2, 2], [1, 1, 1], False, True, None),
             aten.avg_pool3d_backward.default)
        ],
    })  # fmt: skip
    # Scans and selection (csrc/ops/Scan.cpp, Sort.cpp, Bucketize.cpp): overloads that the public
    # functions reach without out= (median(x, dim, out=...) goes through ATen's composite).
    bounds = torch.sort(_x(11, (7,)))[0]
    fx, f3 = _x(12, (2, 3, 7, 8)), _x(13, (1, 2, 5, 6, 7))
    fs = make_cpu((2, 3, 2), torch.float32, low=0, high=1, seed=14)
    fs3 = make_cpu((1, 2, 3), torch.float32, low=0, high=1, seed=15)
    fidx = aten.fractional_max_pool2d.default(fx, [2, 2], [3, 4], fs)[1]
    out.update({
        "fractional_max_pool2d.output": [((fx, [2, 2], [3, 4], fs), aten.fractional_max_pool2d.default)],
        "fractional_max_pool3d.output": [((f3, [2, 2, 2], [2, 3, 4], fs3), aten.fractional_max_pool3d.default)],
        "fractional_max_pool2d_backward.grad_input": [
            ((_x(16, (2, 3, 3, 4)), fx, [2, 2], [3, 4], fidx), aten.fractional_max_pool2d_backward.default)
        ],
    })  # fmt: skip
    out.update({
        "_logcumsumexp.out": [((_x(), 1), aten._logcumsumexp.default)],
        "median.dim_values": [((_x(), 1, False), aten.median.dim)],
        "nanmedian.dim_values": [((_x(), 0, True), aten.nanmedian.dim)],
        "searchsorted.Scalar_out": [((bounds, 0.25), aten.searchsorted.Scalar)],
    })  # fmt: skip
    # torch.special functions whose OpInfo samples call them without out=: x over [-2, 2] and
    # over [0.1, 4.1] for those defined for positive x only; the polynomials at degrees 0..5.
    special_unary = (
        "airy_ai",
        "bessel_j0",
        "bessel_j1",
        "modified_bessel_i0",
        "modified_bessel_i1",
        "spherical_bessel_j0",
    )
    special_positive = (
        "bessel_y0",
        "bessel_y1",
        "modified_bessel_k0",
        "modified_bessel_k1",
        "scaled_modified_bessel_k0",
        "scaled_modified_bessel_k1",
    )
    for name in special_unary + special_positive:
        x = _x(12) if name in special_unary else _x(12).abs() * 2 + 0.1
        out[f"special_{name}.out"] = [((x,), getattr(aten, f"special_{name}").default)]
    degrees = torch.arange(20, dtype=torch.float32).remainder(6).reshape(4, 5)
    for name in (
        "chebyshev_polynomial_t",
        "chebyshev_polynomial_u",
        "chebyshev_polynomial_v",
        "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u",
        "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w",
        "hermite_polynomial_h",
        "hermite_polynomial_he",
        "laguerre_polynomial_l",
        "legendre_polynomial_p",
    ):
        out[f"special_{name}.out"] = [((_x(13), degrees), getattr(aten, f"special_{name}").default)]
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
        out[f"{cmp}.Scalar_out"] = [((_x(), 0.5), getattr(aten, cmp).Scalar)]
    for bit in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        out[f"{bit}.Tensor_out"] = [((_i(), _i(1)), getattr(aten, bit).Tensor)]
        out[f"{bit}.Scalar_out"] = [((_i(), 6), getattr(aten, bit).Scalar)]
    inplace = {
        "relu_": [(_x(),)],
        "zero_": [(_x(),)],
        "fill_.Scalar": [(_x(), 2.5)],
        "fill_.Tensor": [(_x(), torch.tensor(2.5))],
        "clamp_": [(_x(), -1.0, 1.0)],
        "clamp_max_": [(_x(), 0.5)],
        "clamp_min_": [(_x(), -0.5)],
        "threshold_": [(_x(), 0.5, -3.0)],
        "masked_fill_.Scalar": [(_x(), _x(1) > 0, 7.0)],
        "masked_fill_.Tensor": [(_x(), _x(1) > 0, torch.tensor(7.0))],
        "add_.Tensor": [(_x(), _x(1))],
    }
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
        inplace[f"{cmp}_.Scalar"] = [(_x(), 0.5)]
        inplace[f"{cmp}_.Tensor"] = [(_x(), _x(1))]
    for bit in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        inplace[f"{bit}_.Tensor"] = [(_i(), _i(1))]
        inplace[f"{bit}_.Scalar"] = [(_i(), 6)]
    return out, inplace


def _table_cases():
    out_table, inplace_table = _table()
    out_cases, inplace_cases = {}, {}
    for key, rows in out_table.items():
        ovl = _overload(key)
        names = [a.name for a in ovl._schema.arguments if a.is_out]
        for k, (args, fn, *more) in enumerate(rows):
            kwargs = more[0] if more else {}  # keyword-only arguments (not tensors)

            def with_out(args, out, ovl=ovl, names=names, kwargs=kwargs):
                outs = out if isinstance(out, tuple) else (out,)
                return ovl(*args, **kwargs, **dict(zip(names, outs, strict=True)))

            out_cases.setdefault(key, []).append(
                Case(
                    f"table[{k}]",
                    args,
                    functional=lambda *a, fn=fn, kwargs=kwargs: fn(*a, **kwargs),
                    with_out=with_out,
                )
            )
    for key, rows in inplace_table.items():
        ovl = _overload(key)
        for k, args in enumerate(rows):
            inplace_cases.setdefault(key, []).append(
                Case(f"table[{k}]", args, inplace=lambda a, ovl=ovl: ovl(*a))
            )
    return out_cases, inplace_cases


def _all_cases():
    out_cases, inplace_cases = _opinfo_cases()
    table_out, table_inplace = _table_cases()
    for key, cases in table_out.items():
        if key in OUT_OVERLOADS and key not in out_cases:
            out_cases[key] = cases
    for key, cases in table_inplace.items():
        if key in INPLACE_OVERLOADS and key not in inplace_cases:
            inplace_cases[key] = cases
    return out_cases, inplace_cases


# ---------------------------------------------------------------------------------------------
# Running a case on both devices


def _to_device(tree):
    """Tensors to ocl; a factory's device argument (OpInfo samples say "cpu") too."""

    def move(t):
        if isinstance(t, torch.Tensor):
            return t.to(DEVICE)
        if isinstance(t, dict) and "device" in t:
            return {**t, "device": DEVICE}
        return t

    return tree_map(move, tree, is_leaf=lambda t: isinstance(t, dict) and "device" in t)


def _results(r):
    if isinstance(r, torch.Tensor):
        return [r]
    return [t for t in r if isinstance(t, torch.Tensor)]


def _empty_outs(result, dtypes, *, empty=True, device="cpu", shapes=None):
    """Out tensors for `result` (a tensor or a tuple of them) with the given dtypes."""
    rs = _results(result)
    outs = []
    for k, (r, dtype) in enumerate(zip(rs, dtypes, strict=True)):
        shape = (0,) if empty else r.shape
        if shapes is not None:
            shape = shapes[k]
        outs.append(torch.empty(shape, dtype=dtype, device=device))
    return outs[0] if isinstance(result, torch.Tensor) else tuple(outs)


def _normalise(msg):
    msg = str(msg).splitlines()[0] if str(msg) else ""
    msg = re.sub(r"ocl(:0)?", "cpu", msg)
    # ATen's checkSameType/checkScalarType name a tensor's type by its backend: torch.FloatTensor
    # (CPUBoolType for bool) on the CPU, oclFloatType on ocl.
    msg = re.sub(r"\btorch\.(\w+)Tensor\b", r"cpu\1Type", msg)
    return re.sub(r"\bCPU(\w+)Type\b", r"cpu\1Type", msg)


def _run(fn):
    """(value, exception, warnings) of fn()."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            return fn(), None, [str(x.message) for x in w]
        except Exception as e:  # noqa: BLE001
            return None, e, [str(x.message) for x in w]


def _upcast(tree):
    def up(t):
        if isinstance(t, torch.Tensor) and t.dtype == torch.float32:
            return t.double()
        return t

    return tree_map(up, tree)


def _close(got, expected, what, failures, *, strides=False, cpu=None):
    """got (ocl tensor) == expected (CPU tensor): dtype, shape, values (and strides). A value
    may instead match cpu, CPU torch's own result: an out of float64 for a float32 op gets the
    float32 computation, which at an ill-conditioned input (digamma near a pole) is further from
    the float64 reference than the tolerance, on the CPU as on ocl."""
    if not isinstance(got, torch.Tensor) or got.device.type != "ocl":
        failures.append(f"{what}: result {type(got).__name__} is not an ocl tensor")
        return
    if got.dtype != expected.dtype or got.shape != expected.shape:
        failures.append(
            f"{what}: {got.dtype}{list(got.shape)} != CPU {expected.dtype}{list(expected.shape)}"
        )
        return
    if strides and got.stride() != expected.stride():
        failures.append(f"{what}: strides {got.stride()} != CPU {expected.stride()}")
    g = got.cpu()
    if expected.dtype.is_floating_point:
        tol = 2e-3 if expected.dtype in (torch.float16, torch.bfloat16) else 1e-5
        ok = torch.isclose(g.double(), expected.double(), rtol=tol, atol=tol, equal_nan=True)
        if cpu is not None and cpu.shape == g.shape:
            ok |= torch.isclose(g.double(), cpu.double(), rtol=tol, atol=tol, equal_nan=True)
    else:
        ok = g == expected
    if not bool(ok.all()):
        failures.append(
            f"{what}: values differ: ocl {g.flatten()[:6].tolist()} CPU "
            f"{expected.flatten()[:6].tolist()}"
        )


def _reference(call, args, fallback):
    """call(args) on the CPU with float32 tensors computed in float64, rounded to the dtypes of
    `fallback` (the float32 CPU result); fallback itself if that does not work."""
    try:
        precise = call(_upcast(args))
        flat_p, _ = tree_flatten(precise)
        flat_f, spec = tree_flatten(fallback)
        if len(flat_p) != len(flat_f):
            return fallback
        out = []
        for p, f in zip(flat_p, flat_f, strict=True):
            if isinstance(p, torch.Tensor) and isinstance(f, torch.Tensor):
                if p.shape != f.shape:
                    return fallback
                out.append(p.to(f.dtype))
            else:
                out.append(f)
        return tree_unflatten(out, spec)
    except Exception:  # noqa: BLE001
        return fallback


def _same_error(cpu_err, ocl_err, what, failures):
    if cpu_err is None and ocl_err is None:
        return True
    if cpu_err is None:
        failures.append(
            f"{what}: ocl raised {type(ocl_err).__name__}: {_normalise(ocl_err)}"
            " where the CPU computes"
        )
    elif ocl_err is None:
        failures.append(
            f"{what}: the CPU raises {type(cpu_err).__name__}: {_normalise(cpu_err)}, ocl did not"
        )
    elif type(ocl_err) is not type(cpu_err):
        failures.append(
            f"{what}: ocl raised {type(ocl_err).__name__}: {_normalise(ocl_err)}; "
            f"the CPU {type(cpu_err).__name__}: {_normalise(cpu_err)}"
        )
    elif _normalise(ocl_err) != _normalise(cpu_err):
        failures.append(f"{what}: message '{_normalise(ocl_err)}' != CPU '{_normalise(cpu_err)}'")
    return False


def _check_out_call(case, make_outs, what, failures, *, strides=False):
    """with_out on both devices with outs from make_outs(device); compares errors, values,
    shapes (and strides) of the outs, and the resize warning."""
    cpu_args = _clone(case.args)
    cpu_outs = make_outs("cpu")
    _, cpu_err, cpu_warn = _run(lambda: case.with_out(cpu_args, cpu_outs))
    ocl_outs = make_outs(DEVICE)
    _, ocl_err, ocl_warn = _run(lambda: case.with_out(_to_device(case.args), ocl_outs))
    if not _same_error(cpu_err, ocl_err, what, failures):
        return
    resized = [any("was resized" in w for w in ws) for ws in (cpu_warn, ocl_warn)]
    if resized[0] != resized[1]:
        failures.append(f"{what}: resize warning on the CPU {resized[0]}, ocl {resized[1]}")

    def redo(args):
        outs = tree_map(
            lambda t: torch.empty_like(t) if isinstance(t, torch.Tensor) else t, cpu_outs
        )
        outs = tree_map(lambda t: t.double() if t.dtype == torch.float32 else t, outs)
        case.with_out(args, outs)
        return outs

    expected = _reference(redo, _clone(case.args), cpu_outs)
    for k, (g, e) in enumerate(zip(_results(ocl_outs), _results(expected), strict=True)):
        cpu_o = _results(cpu_outs)[k]
        _close(g, e, f"{what} out[{k}]", failures, cpu=cpu_o)
        if strides and g.stride() != cpu_o.stride():
            failures.append(f"{what} out[{k}]: strides {g.stride()} != CPU {cpu_o.stride()}")


def _cases_or_skip(table, key):
    cases = table.get(key)
    if not cases:
        extra = f" (OpInfo unavailable: {OP_DB_ERROR})" if OP_DB_ERROR else ""
        pytest.skip(f"no sample reaches aten::{key}{extra}")
    return cases


def _report(failures):
    assert not failures, "\n".join(failures[:20])


OUT_CASES, INPLACE_CASES = _all_cases()


# ---------------------------------------------------------------------------------------------
# Known failures in files this test does not own (the lead fixes them there).

XFAIL: dict = {
    # (none now: each entry is a bug to fix, (test, overload) -> the reason)
}

# Overloads whose CPU kernel cannot be run with an out of another dtype (no reference to compare
# with); test_out_dtype skips them.
CPU_UNSAFE_OUT_DTYPE = {
    "_logcumsumexp.out": "the CPU's kernel writes self's dtype into an out of another dtype "
    "(garbage values; a buffer overflow, and a crashed process, for a narrower out)",
}


def _params(keys, kind):
    out = []
    for key in keys:
        reason = XFAIL.get((kind, key))
        marks = (pytest.mark.xfail(reason=reason, strict=True),) if reason else ()
        out.append(pytest.param(key, id=key, marks=marks))
    return out


# ---------------------------------------------------------------------------------------------
# The tests


@pytest.mark.parametrize("key", _params(OUT_OVERLOADS, "dtype"))
def test_out_dtype(key):
    if key in CPU_UNSAFE_OUT_DTYPE:
        pytest.skip(CPU_UNSAFE_OUT_DTYPE[key])
    failures = []
    for case in _cases_or_skip(OUT_CASES, key):
        result = case.functional(*_clone(case.args))
        rs = _results(result)
        dtypes = [r.dtype for r in rs]
        for i, r in enumerate(rs):
            for wrong in WRONG_DTYPES:
                if wrong == r.dtype:
                    continue
                ds = list(dtypes)
                ds[i] = wrong

                def make(device, ds=ds):
                    return _empty_outs(result, ds, device=device)

                what = f"{case.label} out[{i}]={str(wrong).removeprefix('torch.')}"
                _check_out_call(case, make, what, failures)
    _report(failures)


@pytest.mark.parametrize("key", _params(OUT_OVERLOADS, "resize"))
def test_out_resize(key):
    failures = []
    for case in _cases_or_skip(OUT_CASES, key):
        result = case.functional(*_clone(case.args))
        rs = _results(result)
        dtypes = [r.dtype for r in rs]
        wrong_shapes = {
            "empty": [(0,) for _ in rs],
            "wrong shape": [(r.numel() + 3,) for r in rs],
            "2-D": [(2, 3) for _ in rs],
        }
        for name, shapes in wrong_shapes.items():

            def make(device, shapes=shapes):
                return _empty_outs(result, dtypes, device=device, shapes=shapes)

            _check_out_call(case, make, f"{case.label} {name} out", failures)
        if all(r.dim() >= 1 and r.numel() > 1 for r in rs):
            # Right shape, not contiguous: written in place, strides kept.
            def strided(device):
                outs = [
                    torch.empty(tuple(r.shape) + (2,), dtype=r.dtype, device=device)[..., 0]
                    for r in rs
                ]
                return outs[0] if isinstance(result, torch.Tensor) else tuple(outs)

            _check_out_call(case, strided, f"{case.label} strided out", failures, strides=True)
    _report(failures)


@pytest.mark.parametrize("key", _params(OUT_OVERLOADS, "alias"))
def test_out_alias(key):
    failures = []
    tried = 0
    for case in _cases_or_skip(OUT_CASES, key):
        result = case.functional(*_clone(case.args))
        if not isinstance(result, torch.Tensor):
            continue
        flat, spec = tree_flatten(case.args)
        for pos, t in enumerate(flat):
            if (
                not isinstance(t, torch.Tensor)
                or t.shape != result.shape
                or t.dtype != result.dtype
            ):
                continue
            if t.numel() == 0:
                continue
            tried += 1

            def aliased(device, pos=pos):
                leaves = [x.clone().to(device) if isinstance(x, torch.Tensor) else x for x in flat]
                args = tree_unflatten(leaves, spec)
                return case.with_out(args, leaves[pos]), leaves[pos]

            what = f"{case.label} out=input[{pos}]"
            cpu, cpu_err, _ = _run(lambda aliased=aliased: aliased("cpu"))
            ocl, ocl_err, _ = _run(lambda aliased=aliased: aliased(DEVICE))
            if not _same_error(cpu_err, ocl_err, what, failures):
                continue
            # The unaliased result (the CPU's own aliased result is not always that).
            expected = _reference(lambda a: case.functional(*a), _clone(case.args), result)
            _close(ocl[1], expected, what, failures, cpu=result)
    if not tried:
        pytest.skip("no input has the output's shape and dtype")
    _report(failures)


@pytest.mark.parametrize("key", _params(INPLACE_OVERLOADS, "inplace"))
def test_inplace(key):
    failures = []
    for case in _cases_or_skip(INPLACE_CASES, key):
        flat, spec = tree_flatten(case.args)

        variants = {"plain": flat}
        x = flat[SELF_POS]
        for dtype in (torch.float64, torch.int64):
            if x.dtype != dtype:
                variants[f"self {str(dtype).removeprefix('torch.')}"] = [x.to(dtype)] + flat[1:]
        for pos, t in enumerate(flat):
            if pos != SELF_POS and isinstance(t, torch.Tensor) and t.shape == x.shape:
                if t.dtype == x.dtype and t.numel() > 0:
                    variants[f"self as operand {pos}"] = ("alias", pos)
        for name, leaves in variants.items():
            alias = None
            if isinstance(leaves, tuple):
                alias, leaves = leaves[1], flat

            def call(device, leaves=leaves, alias=alias):
                ls = [t.clone().to(device) if isinstance(t, torch.Tensor) else t for t in leaves]
                if alias is not None:
                    ls[alias] = ls[SELF_POS]
                args = tree_unflatten(ls, spec)
                r = case.inplace(args)
                return r, ls[SELF_POS]

            what = f"{case.label} {name}"
            cpu, cpu_err, _ = _run(lambda call=call: call("cpu"))
            ocl, ocl_err, _ = _run(lambda call=call: call(DEVICE))
            if not _same_error(cpu_err, ocl_err, what, failures):
                continue
            if ocl[0] is not None and ocl[0] is not ocl[1]:
                failures.append(f"{what}: the in-place variant did not return self")

            # The float64 result of the same call with an unaliased copy of self as the operand
            # (the CPU's own aliased result is not always that: x.addmm_(a, x) at 5 x 5).
            def ref(_unused, leaves=leaves, alias=alias):
                ls = [t.clone() if isinstance(t, torch.Tensor) else t for t in leaves]
                if alias is not None:
                    ls[alias] = ls[SELF_POS].clone()
                ls = _upcast(ls)
                case.inplace(tree_unflatten(ls, spec))
                return ls[SELF_POS]

            expected = _reference(ref, None, cpu[1])
            _close(ocl[1], expected, what, failures, cpu=cpu[1] if alias is None else None)
    _report(failures)


# Native out= overloads added by the op families merged at the end of a session, not yet given a
# row in _table (their OpInfo samples reach them only through functional ops): a to-do list, each
# one to get a row; the test fails for any other overload without a sample.
NO_SAMPLE_YET = {
    # Native since 2026-11-28's merges, without an OpInfo sample that reaches the overload yet:
    # the FFT ops' out= forms run under torch.fft's out= (tests/ops/test_fft.py), the sparse index
    # conversions under to_sparse_csr/to_sparse (tests/ops/test_sparse.py), the antialiased
    # resizes under interpolate(antialias=True) (tests/ops/test_upsample_aa.py); matrix_exp's and
    # rrelu_with_noise's out= forms are not checked yet (their functional forms are:
    # test_matrix_exp.py, test_channel_shuffle_rrelu.py).
    "_convert_indices_from_coo_to_csr.out",
    "_convert_indices_from_csr_to_coo.out",
    "_fft_c2c.out",
    "_fft_c2r.out",
    "_fft_r2c.out",
    "_upsample_bicubic2d_aa.out",
    "_upsample_bicubic2d_aa_backward.grad_input",
    "_upsample_bilinear2d_aa.out",
    "_upsample_bilinear2d_aa_backward.grad_input",
    "linalg_matrix_exp.out",
    "rrelu_with_noise.out",
    # random outputs: their out= forms are checked in tests/ops/test_sampling.py
    "bernoulli.out",
    "normal.Tensor_Tensor_out",
    "normal.Tensor_float_out",
    "normal.float_Tensor_out",
    "randperm.generator_out",
    # eigen- and singular vectors are defined up to sign: compared in tests/ops/test_linalg.py
    "_linalg_eigh.eigenvalues",
    "_linalg_svd.U",
    "_upsample_nearest_exact1d.out",
    "_upsample_nearest_exact1d_backward.grad_input",
    "_upsample_nearest_exact2d.out",
    "_upsample_nearest_exact2d_backward.grad_input",
    "_upsample_nearest_exact3d.out",
    "_upsample_nearest_exact3d_backward.grad_input",
    "binary_cross_entropy.out",
    "binary_cross_entropy_backward.grad_input",
    "elu.out",
    "elu_backward.grad_input",
    "gelu_backward.grad_input",
    "glu.out",
    "glu_backward.grad_input",
    "hardshrink_backward.grad_input",
    "hardsigmoid.out",
    "hardsigmoid_backward.grad_input",
    "hardswish.out",
    "hardtanh.out",
    "hardtanh_backward.grad_input",
    "huber_loss.out",
    "huber_loss_backward.out",
    "index.Tensor_out",
    "isin.Scalar_Tensor_out",
    "isin.Tensor_Scalar_out",
    "leaky_relu.out",
    "leaky_relu_backward.grad_input",
    "log_sigmoid_backward.grad_input",
    "log_sigmoid_forward.output",
    "logit_backward.grad_input",
    "mish.out",
    "mse_loss.out",
    "mse_loss_backward.grad_input",
    "multinomial.out",
    "nll_loss2d_backward.grad_input",
    "nll_loss2d_forward.output",
    "nonzero_static.out",
    "pow.Scalar_out",
    "pow.Tensor_Scalar_out",
    "reflection_pad1d.out",
    "reflection_pad1d_backward.grad_input",
    "reflection_pad2d.out",
    "reflection_pad2d_backward.grad_input",
    "reflection_pad3d.out",
    "reflection_pad3d_backward.grad_input",
    "replication_pad1d.out",
    "replication_pad1d_backward.grad_input",
    "replication_pad2d.out",
    "replication_pad2d_backward.grad_input",
    "replication_pad3d.out",
    "replication_pad3d_backward.grad_input",
    "scatter.value_out",
    "scatter.value_reduce_out",
    "silu.out",
    "silu_backward.grad_input",
    "smooth_l1_loss.out",
    "smooth_l1_loss_backward.grad_input",
    "softplus.out",
    "softplus_backward.grad_input",
    "softshrink_backward.grad_input",
    "upsample_bicubic2d.out",
    "upsample_bicubic2d_backward.grad_input",
    "upsample_bilinear2d.out",
    "upsample_bilinear2d_backward.grad_input",
    "upsample_linear1d.out",
    "upsample_linear1d_backward.grad_input",
    "upsample_nearest1d.out",
    "upsample_nearest1d_backward.grad_input",
    "upsample_nearest2d.out",
    "upsample_nearest2d_backward.grad_input",
    "upsample_nearest3d.out",
    "upsample_nearest3d_backward.grad_input",
    "upsample_trilinear3d.out",
    "upsample_trilinear3d_backward.grad_input",
}


def test_every_native_out_overload_has_a_sample():
    """The class test covers every native out= overload (a new one needs an OpInfo sample or a
    row in _table)."""
    if OP_DB_ERROR:
        pytest.skip(f"OpInfo unavailable: {OP_DB_ERROR}")
    missing = [k for k in OUT_OVERLOADS if k not in OUT_CASES and k not in NO_SAMPLE_YET]
    assert not missing, f"no samples for {missing}"


def test_out_on_another_device_and_expanded_out_raise():
    x = make_cpu((3, 3), torch.float32)
    xo = x.to(DEVICE)
    with pytest.raises(RuntimeError, match="Expected out tensor to have device ocl:0, but got cpu"):
        torch.mm(xo, xo, out=torch.empty(3, 3))
    with pytest.raises(RuntimeError, match="Expected out tensor to have device ocl:0, but got cpu"):
        torch.sum(xo, 0, out=torch.empty(3))
    # An out whose elements overlap each other: the CPU's error for mm.
    with pytest.raises(RuntimeError) as cpu_err:
        torch.mm(x, x, out=torch.empty(1, 1).expand(3, 3))
    with pytest.raises(RuntimeError) as ocl_err:
        torch.mm(xo, xo, out=torch.empty(1, 1, device=DEVICE).expand(3, 3))
    assert str(ocl_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]
    # In-place with a self of the wrong shape: the CPU's "Bad in-place call".
    with pytest.raises(RuntimeError) as cpu_err:
        torch.zeros(3, 4).addmm_(x, x)
    with pytest.raises(RuntimeError) as ocl_err:
        torch.zeros(3, 4, device=DEVICE).addmm_(xo, xo)
    assert str(ocl_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]
