"""Inductor's code generator for ocl: fused OpenCL C kernels.

Inductor lowers a captured graph to loop bodies of ``ops.*`` calls; ``SIMDScheduling`` groups
them into kernels over flattened index ranges. This module prints those kernels as OpenCL C:

- ``OclOverrides``: one OpenCL C expression per Inductor op (math, casts, bitcasts, where and
  masked bodies, index expressions). float16 and bfloat16 are stored as 16-bit patterns and
  computed in float (kernels/common.clh's helpers convert them), bool is stored as uchar.
- ``OclKernel``: a kernel's loads and stores (each tensor is a buffer plus an element offset,
  as a cl_mem cannot be offset), its signature (size variables are ``long`` arguments, so new
  sizes do not recompile), pointwise kernels with one work-item per element, and reductions as
  work-group trees (each work-group reduces one row: its work-items stride over the row, then
  combine their partial results in local memory).
- ``OclScheduling``: de-duplicates kernels and writes ``compile_ocl_kernel('''...''')`` into the
  wrapper, which the wrapper calls through ``torch.ops.ocl._launch_source``.

What is not generated raises ``OclCodegenError`` naming the op and the way out
(``backend="aot_eager"``); heavy ops (matmul, convolution, attention, ...) never come here:
Inductor calls them as extern kernels, our native aten ops.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import sympy
import torch
from torch._inductor.codegen.common import (
    CSE,
    CSEVariable,
    DeferredLine,
    IndentedBuffer,
    OpOverrides,
    PythonPrinter,
)
from torch._inductor.codegen.simd import IterationRangesEntry, SIMDKernel, SIMDScheduling
from torch._inductor.ops_handler import OpsHandler
from torch._inductor.utils import get_bounds_index_expr
from torch._inductor.virtualized import V, ops
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.printers import ExprPrinter

from .runtime import POINTWISE_GROUP, RBLOCK_MAX, rblock

_WAY_OUT = (
    "Use torch.compile(..., backend='aot_eager') to run this model on ocl without generated "
    "kernels (its ops run one by one, natively)."
)


class OclCodegenError(NotImplementedError):
    """Something the OpenCL code generator does not generate (yet)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"torch-ocl: torch.compile's OpenCL code generator {what}. {_WAY_OUT}")


# How each dtype is stored in memory (the pointer's element type) and computed in registers.
_STORE_TYPE = {
    torch.bool: "uchar",
    torch.int8: "char",
    torch.uint8: "uchar",
    torch.int16: "short",
    torch.uint16: "ushort",
    torch.int32: "int",
    torch.uint32: "uint",
    torch.int64: "long",
    torch.uint64: "ulong",
    torch.float16: "ushort",
    torch.bfloat16: "ushort",
    torch.float32: "float",
    torch.float64: "double",
}
_COMPUTE_TYPE = {**_STORE_TYPE, torch.bool: "bool", torch.float16: "float", torch.bfloat16: "float"}


def device_has_fp64(index: int) -> bool:
    return torch.ocl.get_device_properties(index).supports_fp64


def _check_fp64(dtype: torch.dtype | None) -> None:
    """float64 in a kernel for a device without cl_khr_fp64 is refused before anything is
    built (the OpenCL compiler would reject `double`)."""
    if dtype != torch.float64:
        return
    device = V.graph.get_current_device_or_throw() if V.graph else None
    index = device.index if device is not None and device.index is not None else None
    index = torch.ocl.current_device() if index is None else index
    if not device_has_fp64(index):
        raise OclCodegenError(
            f"cannot compute float64 on ocl:{index}, which has no float64 support "
            "(cl_khr_fp64); use float32 tensors"
        )


def store_type(dtype: torch.dtype) -> str:
    _check_fp64(dtype)
    try:
        return _STORE_TYPE[dtype]
    except KeyError:
        raise OclCodegenError(f"has no {dtype} tensors") from None


def compute_type(dtype: torch.dtype | None) -> str:
    if dtype is None:
        return "__auto_type"  # not expected: every value Inductor makes has a dtype
    _check_fp64(dtype)
    try:
        return _COMPUTE_TYPE[dtype]
    except KeyError:
        raise OclCodegenError(f"has no {dtype} values") from None


def _is_float(x: Any) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and dtype.is_floating_point


def _literal(value: bool | float | int, dtype: torch.dtype | None) -> str:
    """An OpenCL C literal of `value` for a `dtype` computation (floats carry their precision:
    a bare 1.0 is a double, which devices without fp64 refuse)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if dtype is not None and dtype.is_floating_point or isinstance(value, float):
        value = float(value)
        wide = dtype == torch.float64
        if math.isnan(value):
            return "NAN"
        if math.isinf(value):
            return ("" if value > 0 else "-") + "INFINITY"
        text = repr(value)
        if "e" not in text and "." not in text:
            text += ".0"
        return text if wide else text + "f"
    value = int(value)
    if dtype in (torch.uint64,):
        return f"{value}UL"
    if dtype == torch.int64 or not -(2**31) <= value < 2**31:
        return f"{value}L"
    return str(value)


# Helpers every generated kernel may use (beside kernels/common.clh): integer floor division
# and modulo with Python's signs, float remainder with the divisor's sign, NaN-propagating
# max/min, and the type of floating scalar arguments.
_PREAMBLE = r"""
#ifdef TORCH_OCL_FP64
#define OCL_SCALAR_T double
#else
#define OCL_SCALAR_T float
#endif
#define OCL_IFLOORDIV(a, b) (((a) / (b)) - ((((a) % (b)) != 0) && (((a) < 0) != ((b) < 0))))
#define OCL_IMOD(a, b) \
  ((((a) % (b)) != 0 && ((((a) % (b)) < 0) != ((b) < 0))) ? ((a) % (b)) + (b) : ((a) % (b)))
#define OCL_FREM(a, b) \
  ((fmod(a, b) != 0 && ((fmod(a, b) < 0) != ((b) < 0))) ? fmod(a, b) + (b) : fmod(a, b))
#define OCL_MAXP(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))
#define OCL_MINP(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))
// Atomic float add for scatter stores (index_put with accumulate, embedding backward): a
// compare-and-swap loop that compares bit patterns as integers (a NaN in memory never makes a
// float comparison succeed, so comparing floats would spin forever).
inline void ocl_atomic_add_float(__global float* p, float v) {
  volatile __global uint* u = (volatile __global uint*)p;
  uint old = *u, seen;
  do {
    seen = old;
    old = atomic_cmpxchg(u, seen, as_uint(as_float(seen) + v));
  } while (old != seen);
}
// Random numbers of Inductor's ops.rand/randn/randint64: Philox4x32-10 (kernels/common.clh)
// keyed by the seed, with the element's offset as the counter.
inline uint4 ocl_philox(long seed, long offset) {
  uint x0, x1, x2, x3;
  PHILOX4X32_10((ulong)offset, (uint)seed, (uint)((ulong)seed >> 32), x0, x1, x2, x3);
  return (uint4)(x0, x1, x2, x3);
}
inline float ocl_rand(long seed, long offset) {  // uniform in [0, 1)
  return (float)(ocl_philox(seed, offset).x >> 8) * 5.9604644775390625e-8f;
}
inline float ocl_randn(long seed, long offset) {  // standard normal (Box-Muller)
  const uint4 r = ocl_philox(seed, offset);
  const float u1 = (float)((r.x >> 8) + 1u) * 5.9604644775390625e-8f;  // (0, 1]
  const float u2 = (float)(r.y >> 8) * 5.9604644775390625e-8f;
  return sqrt(-2.0f * log(u1)) * cos(6.283185307179586f * u2);
}
inline long ocl_randint64(long seed, long offset, long low, long high) {
  const uint4 r = ocl_philox(seed, offset);
  const ulong bits = ((ulong)r.y << 32) | (ulong)r.x;
  return low + (long)(bits % (ulong)(high - low));
}
"""


class OclExprPrinter(ExprPrinter):
    """Index and size expressions as OpenCL C (integers are long unless small)."""

    def _print_Integer(self, expr: sympy.Expr) -> str:
        v = int(expr)
        return f"{v}L" if not -(2**31) <= v < 2**31 else str(v)

    def _print_Float(self, expr: sympy.Expr) -> str:
        if expr.is_integer:
            return str(int(expr))
        return repr(float(expr)) + "f"

    def _print_FloorDiv(self, expr: sympy.Expr) -> str:
        x, div = expr.args
        xs, ds = self.doprint(x), self.doprint(div)
        if x.is_nonnegative and div.is_positive:
            return f"(({xs}) / ({ds}))"
        return f"OCL_IFLOORDIV((long)({xs}), (long)({ds}))"

    def _print_ModularIndexing(self, expr: sympy.Expr) -> str:
        x, div, mod = expr.args
        xs = self.doprint(x)
        if div != 1:
            xs = f"(({xs}) / ({self.doprint(div)}))"
        return f"(({xs}) % ({self.doprint(mod)}))"

    def _print_PythonMod(self, expr: sympy.Expr) -> str:
        x, m = expr.args
        xs, ms = self.doprint(x), self.doprint(m)
        if x.is_nonnegative and m.is_positive:
            return f"(({xs}) % ({ms}))"
        return f"OCL_IMOD((long)({xs}), (long)({ms}))"

    def _print_CleanDiv(self, expr: sympy.Expr) -> str:
        return self._print_FloorDiv(expr)

    def _print_Where(self, expr: sympy.Expr) -> str:
        c, p, q = (self.doprint(a) for a in expr.args)
        return f"(({c}) ? ({p}) : ({q}))"

    def _minmax(self, expr: sympy.Expr, op: str) -> str:
        args = [self.doprint(a) for a in expr.args]
        out = args[0]
        for a in args[1:]:
            out = f"(({out}) {op} ({a}) ? ({out}) : ({a}))"
        return out

    def _print_Min(self, expr: sympy.Expr) -> str:
        return self._minmax(expr, "<")

    def _print_Max(self, expr: sympy.Expr) -> str:
        return self._minmax(expr, ">")

    def _print_Abs(self, expr: sympy.Expr) -> str:
        (x,) = expr.args
        xs = self.doprint(x)
        return f"(({xs}) < 0 ? -({xs}) : ({xs}))"

    def _print_ToFloat(self, expr: sympy.Expr) -> str:
        return f"((float)({self.doprint(expr.args[0])}))"

    def _print_IntTrueDiv(self, expr: sympy.Expr) -> str:
        a, b = expr.args
        return f"((float)({self.doprint(a)}) / (float)({self.doprint(b)}))"

    def _print_FloatTrueDiv(self, expr: sympy.Expr) -> str:
        a, b = expr.args
        return f"(({self.doprint(a)}) / ({self.doprint(b)}))"

    def _print_PowByNatural(self, expr: sympy.Expr) -> str:
        base, exp = expr.args
        if isinstance(exp, sympy.Integer) and 0 <= int(exp) <= 8:
            b = self.doprint(base)
            return "(" + " * ".join([f"({b})"] * int(exp)) + ")" if int(exp) else "1"
        return f"((long)pown((float)({self.doprint(base)}), (int)({self.doprint(exp)})))"

    def _print_Pow(self, expr: sympy.Expr) -> str:
        base, exp = expr.args
        if isinstance(exp, sympy.Integer) and 0 < int(exp) <= 8:
            b = self.doprint(base)
            return "(" + " * ".join([f"({b})"] * int(exp)) + ")"
        return f"pow((float)({self.doprint(base)}), (float)({self.doprint(exp)}))"

    def _print_FloorToInt(self, expr: sympy.Expr) -> str:
        return f"((long)floor((float)({self.doprint(expr.args[0])})))"

    _print_floor = _print_FloorToInt

    def _print_CeilToInt(self, expr: sympy.Expr) -> str:
        return f"((long)ceil((float)({self.doprint(expr.args[0])})))"

    _print_ceiling = _print_CeilToInt

    def _print_TruncToInt(self, expr: sympy.Expr) -> str:
        return f"((long)trunc((float)({self.doprint(expr.args[0])})))"

    def _print_RoundToInt(self, expr: sympy.Expr) -> str:
        return f"((long)rint((float)({self.doprint(expr.args[0])})))"

    def _print_And(self, expr: sympy.Expr) -> str:
        return " && ".join(f"({self.doprint(a)})" for a in expr.args)

    def _print_Or(self, expr: sympy.Expr) -> str:
        return " || ".join(f"({self.doprint(a)})" for a in expr.args)

    def _print_Not(self, expr: sympy.Expr) -> str:
        return f"!({self.doprint(expr.args[0])})"

    def _print_BooleanTrue(self, expr: sympy.Expr) -> str:
        return "true"

    def _print_BooleanFalse(self, expr: sympy.Expr) -> str:
        return "false"


def _load_expr(ptr: str, index: str, dtype: torch.dtype) -> str:
    """Element `index` of `ptr` as its compute type."""
    if dtype == torch.float16:
        return f"ocl_half_to_float({ptr}[{index}])"
    if dtype == torch.bfloat16:
        return f"as_float(((uint){ptr}[{index}]) << 16)"
    if dtype == torch.bool:
        return f"({ptr}[{index}] != 0)"
    return f"{ptr}[{index}]"


def _convert(value: Any, dtype: torch.dtype) -> str:
    """`value` converted to `dtype`'s storage representation (C cast semantics; narrow integers
    go through a wider integer and wrap, as in kernels/common.clh's CONVERT)."""
    if dtype == torch.float16:
        return f"ocl_float_to_half((float)({value}))"
    if dtype == torch.bfloat16:
        return f"ocl_float_to_bf16((float)({value}))"
    if dtype == torch.bool:
        return f"(uchar)(({value}) != 0)"
    if dtype in (torch.int8, torch.int16):
        return f"({store_type(dtype)})(int)({value})"
    if dtype == torch.uint8:
        return f"(uchar)(long)({value})"
    return f"({store_type(dtype)})({value})"


class OclOverrides(OpOverrides):
    """An OpenCL C expression for each Inductor op."""

    def _default(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        raise OclCodegenError(f"does not implement ops.{name} yet")

    @staticmethod
    def constant(value: bool | float | int, dtype: torch.dtype) -> str:
        return _literal(value, dtype)

    @staticmethod
    def to_dtype(
        x: Any,
        dtype: torch.dtype,
        src_dtype: torch.dtype | None = None,
        use_compute_types: bool = True,
    ) -> str:
        if dtype == torch.bool:
            return f"(({x}) != 0)"
        if dtype == torch.float16:
            return f"ocl_round_half((float)({x}))"
        if dtype == torch.bfloat16:
            return f"as_float(((uint)ocl_float_to_bf16((float)({x}))) << 16)"
        if dtype in (torch.int8, torch.int16, torch.uint8):
            return _convert(x, dtype)
        return f"(({compute_type(dtype)})({x}))"

    @staticmethod
    def to_dtype_bitcast(x: Any, dtype: torch.dtype, src_dtype: torch.dtype) -> str:
        if src_dtype == torch.float16:
            bits = f"ocl_float_to_half((float)({x}))"
        elif src_dtype == torch.bfloat16:
            bits = f"ocl_float_to_bf16((float)({x}))"
        else:
            bits = f"(({store_type(src_dtype)})({x}))"
        target = store_type(dtype)
        if dtype == torch.float16:
            return f"ocl_half_to_float(as_ushort({bits}))"
        if dtype == torch.bfloat16:
            return f"as_float(((uint)as_ushort({bits})) << 16)"
        return f"as_{target}({bits})"

    @staticmethod
    def index_expr(expr: sympy.Expr, dtype: torch.dtype) -> str:
        kernel = V.kernel
        index = kernel.index_to_str(kernel.prepare_indexing(expr))
        var = kernel.cse.generate(
            kernel.compute, index, bounds=get_bounds_index_expr(expr), dtype=torch.int64
        )
        return ops.to_dtype(var, dtype)

    @staticmethod
    def value_expr(expr: sympy.Expr, dtype: torch.dtype) -> str:
        # index_expr already computes in long and converts to the requested dtype.
        return OclOverrides.index_expr(expr, dtype)

    @staticmethod
    def masked(mask: Any, body: Any, other: Any) -> Any:
        kernel = V.kernel
        scoped = IndentedBuffer()
        with kernel.swap_buffers(scoped), scoped.indent():
            kernel.cse.iter_buffer_ids = itertools.count()
            kernel.cse.name_prefix += "_m"
            result = body()
        other_str = (
            _literal(other, result.dtype) if isinstance(other, (bool, int, float)) else other
        )
        key = f"{mask}:{scoped.getvalue()}:{other_str}"
        var = kernel.cse.try_get(key)
        if not var:
            var = kernel.cse.newvar(dtype=result.dtype)
            kernel.cse.put(key, var)
            kernel.compute.writelines([f"{compute_type(result.dtype)} {var};", f"if ({mask}) {{"])
            with kernel.compute.indent():
                kernel.compute.splice(scoped)
                kernel.compute.writeline(f"{var} = {result};")
            kernel.compute.writeline(f"}} else {{ {var} = {other_str}; }}")
        return var

    @staticmethod
    def where(a: Any, b: Any, c: Any) -> str:
        return f"(({a}) ? ({b}) : ({c}))"

    # Arithmetic: C's operators, with torch's meanings where they differ.
    @staticmethod
    def truediv(a: Any, b: Any) -> str:
        return f"({a}) / ({b})"

    @staticmethod
    def floordiv(a: Any, b: Any) -> str:
        if _is_float(a) or _is_float(b):
            return f"floor(({a}) / ({b}))"
        return f"OCL_IFLOORDIV({a}, {b})"

    @staticmethod
    def truncdiv(a: Any, b: Any) -> str:
        if _is_float(a) or _is_float(b):
            return f"trunc(({a}) / ({b}))"
        return f"({a}) / ({b})"

    @staticmethod
    def mod(a: Any, b: Any) -> str:
        if _is_float(a) or _is_float(b):
            return f"fmod({a}, {b})"
        return f"({a}) % ({b})"

    @staticmethod
    def remainder(a: Any, b: Any) -> str:
        if _is_float(a) or _is_float(b):
            return f"OCL_FREM({a}, {b})"
        return f"OCL_IMOD({a}, {b})"

    @staticmethod
    def fmod(a: Any, b: Any) -> str:
        return OclOverrides.mod(a, b)

    @staticmethod
    def neg(x: Any) -> str:
        return f"-({x})"

    @staticmethod
    def pow(a: Any, b: Any) -> str:
        if _is_float(a) or _is_float(b):
            return f"pow({a}, {b})"
        raise OclCodegenError("does not implement integer pow yet")

    @staticmethod
    def maximum(a: Any, b: Any) -> str:
        return f"OCL_MAXP({a}, {b})"

    @staticmethod
    def minimum(a: Any, b: Any) -> str:
        return f"OCL_MINP({a}, {b})"

    @staticmethod
    def abs(x: Any) -> str:
        return f"fabs({x})" if _is_float(x) else f"(({x}) < 0 ? -({x}) : ({x}))"

    @staticmethod
    def sign(x: Any) -> str:
        return f"(({x}) > 0) - (({x}) < 0)" if not _is_float(x) else f"sign({x})"

    @staticmethod
    def signbit(x: Any) -> str:
        return f"(signbit({x}) != 0)" if _is_float(x) else f"(({x}) < 0)"

    @staticmethod
    def logical_and(a: Any, b: Any) -> str:
        return f"({a}) && ({b})"

    @staticmethod
    def logical_or(a: Any, b: Any) -> str:
        return f"({a}) || ({b})"

    @staticmethod
    def logical_xor(a: Any, b: Any) -> str:
        return f"(({a}) != 0) != (({b}) != 0)"

    @staticmethod
    def logical_not(a: Any) -> str:
        return f"!({a})"

    @staticmethod
    def isnan(x: Any) -> str:
        return f"(({x}) != ({x}))"

    @staticmethod
    def isinf(x: Any) -> str:
        return f"(({x}) == INFINITY || ({x}) == -INFINITY)"

    @staticmethod
    def sigmoid(x: Any) -> str:
        return f"1.0f / (1.0f + exp(-({x})))"

    @staticmethod
    def relu(x: Any) -> str:
        return f"OCL_MAXP({x}, 0)" if not _is_float(x) else f"OCL_MAXP({x}, 0.0f)"

    @staticmethod
    def round(x: Any) -> str:
        return f"rint({x})"

    # Random numbers: Philox keyed by Inductor's per-graph seed (drawn on the device from the
    # ocl generator, so torch.manual_seed makes them repeatable); not eager's sequence, as on
    # every Inductor device.
    @staticmethod
    def rand(seed: Any, offset: Any) -> str:
        return f"ocl_rand({seed}, {offset})"

    @staticmethod
    def randn(seed: Any, offset: Any) -> str:
        return f"ocl_randn({seed}, {offset})"

    @staticmethod
    def randint64(seed: Any, offset: Any, low: Any, high: Any) -> str:
        return f"ocl_randint64({seed}, {offset}, {low}, {high})"


# Unary and binary math with the same name in OpenCL C (float arguments; integers are promoted
# by Inductor before these ops).
for _name in (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
    "erfc", "lgamma", "floor", "ceil", "trunc", "tgamma",
):  # fmt: skip
    setattr(OclOverrides, _name, staticmethod(lambda x, _f=_name: f"{_f}({x})"))
for _name in ("atan2", "hypot", "copysign", "nextafter"):
    setattr(OclOverrides, _name, staticmethod(lambda a, b, _f=_name: f"{_f}({a}, {b})"))
OclOverrides.fma = staticmethod(lambda a, b, c: f"fma({a}, {b}, {c})")


def _refuse(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OclCodegenError(f"does not implement ops.{name} yet")

    return staticmethod(refuse)


# Every op of Inductor's handler interface that is not implemented above refuses by name (the
# interface's own default is a bare NotImplementedError).
for _name in dir(OpsHandler):
    if not _name.startswith("_") and OclOverrides._is_unimplemented(_name):
        setattr(OclOverrides, _name, _refuse(_name))


class _OclCSE(CSE):
    """Inductor's common-subexpression table, declaring each new variable with its OpenCL C
    type (OpenCL C has no `auto`)."""

    def generate(self, buffer, expr, *, dtype=None, assignment=True, **kwargs):  # type: ignore[override]
        saved = self.prefix
        self.prefix = f"{compute_type(dtype)} " if assignment else ""
        try:
            return super().generate(buffer, expr, dtype=dtype, assignment=assignment, **kwargs)
        finally:
            self.prefix = saved


class OclKernel(SIMDKernel):
    """One fused OpenCL C kernel: pointwise over up to three range trees (x, y, z: one
    work-item per element), or a reduction (one work-group per x row, its work-items striding
    over the row r0_ and combining in local memory)."""

    overrides = OclOverrides  # type: ignore[assignment]
    suffix = ";"
    newvar_prefix = ""
    pexpr = PythonPrinter().doprint
    sexpr = OclExprPrinter().doprint
    kexpr = sexpr

    def __init__(self, tiling: dict[str, sympy.Expr], **kwargs: Any) -> None:
        super().__init__(tiling, **kwargs)
        self.cse = _OclCSE(self.newvar_prefix, self.suffix)
        self.local_decls = IndentedBuffer()  # __local arrays (kernel function scope)
        self.post_loop = IndentedBuffer()  # work-group combines after a reduction loop
        self.post_loop_stores = IndentedBuffer()
        self.outside_loop_vars: OrderedSet[Any] = OrderedSet()
        self.acc_ids = itertools.count()
        for tree in self.range_trees:
            if tree.is_reduction and tree.prefix != "r0_":
                raise OclCodegenError("does not generate reductions over several range trees")
        if self.features.is_reduction():
            if len([t for t in self.range_trees if not t.is_reduction]) > 1:
                raise OclCodegenError("does not generate tiled reductions")

    # SIMDKernel's choices: no persistent or cooperative reductions (every reduction loops over
    # its row), no Triton-style x dimension removal.
    def should_use_persistent_reduction(self) -> bool:
        return False

    def should_use_cooperative_reduction(self) -> bool:
        return False

    def dtype_to_str(self, dtype: torch.dtype) -> str:
        return compute_type(dtype)

    @property
    def is_reduction_kernel(self) -> bool:
        return self.features.is_reduction()

    # ------------------------------------------------------------------ loads and stores
    def load(self, name: str, index: sympy.Expr) -> CSEVariable:
        var = self.args.input(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        line = _load_expr(var, self.index_to_str(index), dtype)
        if dtype in (torch.float16, torch.bfloat16):
            dtype = torch.float32
        return self.cse.generate(self.loads, line, dtype=dtype)

    def store(self, name: str, index: sympy.Expr, value: CSEVariable, mode: Any = None) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        where = f"{var}[{self.index_to_str(index)}]"
        if mode is None:
            line = f"{where} = {_convert(value, dtype)};"
        elif mode == "atomic_add" and dtype == torch.float32:
            line = f"ocl_atomic_add_float(&{where}, (float)({value}));"
        elif mode == "atomic_add" and dtype == torch.int32:
            line = f"atomic_add((volatile __global int*)&{where}, (int)({value}));"
        else:
            raise OclCodegenError(f"does not generate {dtype} stores with mode {mode!r} yet")
        if self.is_reduction_kernel and not self.inside_reduction:
            line = f"if (r0_lane == 0) {line}"
        self.stores.writeline(DeferredLine(name, line))

    def store_reduction(self, name: str, index: sympy.Expr, value: CSEVariable) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        line = f"if (r0_lane == 0) {var}[{self.index_to_str(index)}] = {_convert(value, dtype)};"
        self.post_loop_stores.writeline(DeferredLine(name, line))

    def check_bounds(self, expr: sympy.Expr, size: sympy.Expr, lower: bool, upper: bool) -> None:
        # Indirect indices are not checked on the device (no device-side error reporting yet):
        # the eager ops Inductor replaced did check them.
        return

    # ------------------------------------------------------------------ reductions
    def _local_array(self, ctype: str) -> str:
        name = f"red{next(self.acc_ids)}"
        ctype = "uchar" if ctype == "bool" else ctype  # bool's size is the compiler's choice
        self.local_decls.writeline(f"__local {ctype} {name}[{RBLOCK_MAX}];")
        return name

    def _tree(self, arrays: list[str], combine: str) -> None:
        """Work-group tree over `arrays` (already filled per lane): `combine` is C code that
        merges lane `o` into lane `r0_lane` (it may use the arrays' names)."""
        self.post_loop.writelines(
            [
                "barrier(CLK_LOCAL_MEM_FENCE);",
                "for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {",
                "  if (r0_lane < s) {",
                "    const uint o = r0_lane + s;",
                f"    {combine}",
                "  }",
                "  barrier(CLK_LOCAL_MEM_FENCE);",
                "}",
            ]
        )

    def _result(self, expr: str, dtype: torch.dtype) -> CSEVariable:
        var = self.cse.newvar(dtype=dtype)
        self.post_loop.writeline(f"{compute_type(dtype)} {var} = {expr};")
        self.outside_loop_vars.add(var)
        return var

    def _accumulator(self, ctype: str, init: str) -> str:
        name = f"acc{next(self.acc_ids)}"
        self.body.writeline(f"{ctype} {name} = {init};")
        return name

    def reduction(self, dtype, src_dtype, reduction_type, value):  # type: ignore[override]
        cache_key = (src_dtype, reduction_type, value)
        if cache_key in self.cse.reduction_cache:
            return self.cse.reduction_cache[cache_key]
        result = self._reduction(dtype, src_dtype, reduction_type, value)
        self.cse.reduction_cache[cache_key] = result
        return result

    def _reduction(self, dtype, src_dtype, reduction_type, value):  # noqa: C901
        assert self.inside_reduction
        acc_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        if reduction_type in ("welford_reduce", "welford_combine"):
            return self._welford(reduction_type, value)
        if reduction_type in ("argmax", "argmin"):
            return self._argreduce(reduction_type, src_dtype, value)
        ctype = compute_type(acc_dtype)
        if reduction_type == "sum":
            init, step = _literal(0, acc_dtype), "{a} + {b}"
        elif reduction_type == "prod":
            init, step = _literal(1, acc_dtype), "{a} * {b}"
        elif reduction_type in ("max", "min"):
            if acc_dtype.is_floating_point:
                init = ("-" if reduction_type == "max" else "") + "INFINITY"
            elif acc_dtype == torch.bool:
                init = "false" if reduction_type == "max" else "true"
            else:
                info = torch.iinfo(acc_dtype)
                init = _literal(info.min if reduction_type == "max" else info.max, acc_dtype)
            step = "OCL_MAXP({a}, {b})" if reduction_type == "max" else "OCL_MINP({a}, {b})"
        elif reduction_type == "any":
            init, step = "false", "({a}) || ({b})"
        elif reduction_type == "xor_sum":
            init, step = _literal(0, acc_dtype), "({a}) ^ ({b})"
        else:
            raise OclCodegenError(f"does not generate {reduction_type} reductions yet")
        acc = self._accumulator(ctype, init)
        self.compute.writeline(f"{acc} = {step.format(a=acc, b=f'(({ctype})({value}))')};")
        red = self._local_array(ctype)
        self.post_loop.writeline(f"{red}[r0_lane] = {acc};")
        self._tree([red], f"{red}[r0_lane] = {step.format(a=f'{red}[r0_lane]', b=f'{red}[o]')};")
        return self._result(f"{red}[0]", acc_dtype)

    def _argreduce(self, reduction_type, src_dtype, value):
        vdtype = torch.float32 if src_dtype in (torch.float16, torch.bfloat16) else src_dtype
        vtype = compute_type(vdtype)
        better = ">" if reduction_type == "argmax" else "<"
        if src_dtype.is_floating_point:
            init = ("-" if reduction_type == "argmax" else "") + "INFINITY"
        elif src_dtype == torch.bool:
            init = "false" if reduction_type == "argmax" else "true"
        else:
            info = torch.iinfo(src_dtype)
            init = _literal(info.min if reduction_type == "argmax" else info.max, src_dtype)
        acc_v = self._accumulator(vtype, init)
        acc_i = self._accumulator("long", "-1")
        # (bv, bi) replaces (av, ai): b is a NaN and a is not (the first NaN wins), or neither
        # is and b is better, or equal with a smaller index; an empty side (index -1) loses.
        take = (
            "(({bi}) >= 0 && (({ai}) < 0 || "
            "((({bv}) != ({bv})) && !(({av}) != ({av}))) || "
            "(!(({av}) != ({av})) && (({bv}) {better} ({av}) || "
            "(({bv}) == ({av}) && ({bi}) < ({ai})))) || "
            "((({bv}) != ({bv})) && (({av}) != ({av})) && ({bi}) < ({ai}))))"
        )
        v = self.cse.generate(self.compute, f"(({vtype})({value}))", dtype=vdtype)
        cond = take.format(av=acc_v, ai=acc_i, bv=v, bi="r0_index", better=better)
        self.compute.writeline(f"if ({cond}) {{ {acc_v} = {v}; {acc_i} = r0_index; }}")
        rv, ri = self._local_array(vtype), self._local_array("long")
        self.post_loop.writelines([f"{rv}[r0_lane] = {acc_v};", f"{ri}[r0_lane] = {acc_i};"])
        cond = take.format(
            av=f"{rv}[r0_lane]", ai=f"{ri}[r0_lane]", bv=f"{rv}[o]", bi=f"{ri}[o]", better=better
        )
        self._tree([rv, ri], f"if ({cond}) {{ {rv}[r0_lane] = {rv}[o]; {ri}[r0_lane] = {ri}[o]; }}")
        return self._result(f"{ri}[0]", torch.int64)

    def _welford(self, reduction_type, value):
        mean, m2, weight = (self._accumulator("float", "0.0f") for _ in range(3))
        if reduction_type == "welford_reduce":
            x = self.cse.generate(self.compute, f"((float)({value}))", dtype=torch.float32)
            self.compute.writelines(
                [
                    "{",
                    f"  {weight} += 1.0f;",
                    f"  const float d_ = {x} - {mean};",
                    f"  {mean} += d_ / {weight};",
                    f"  {m2} += d_ * ({x} - {mean});",
                    "}",
                ]
            )
        else:
            bm, bm2, bw = value
            self.compute.writelines(self._merge(mean, m2, weight, str(bm), str(bm2), str(bw)))
        arrays = [self._local_array("float") for _ in range(3)]
        rm, rm2, rw = arrays
        self.post_loop.writelines(
            [f"{rm}[r0_lane] = {mean};", f"{rm2}[r0_lane] = {m2};", f"{rw}[r0_lane] = {weight};"]
        )
        merge = self._merge(
            f"{rm}[r0_lane]",
            f"{rm2}[r0_lane]",
            f"{rw}[r0_lane]",
            f"{rm}[o]",
            f"{rm2}[o]",
            f"{rw}[o]",
        )
        self._tree(arrays, " ".join(merge))
        return tuple(self._result(f"{a}[0]", torch.float32) for a in arrays)

    @staticmethod
    def _merge(am: str, am2: str, aw: str, bm: str, bm2: str, bw: str) -> list[str]:
        """Chan's merge of Welford states (b into a); an empty side leaves the other."""
        return [
            "{",
            f"  const float w_ = {aw} + {bw};",
            f"  const float d_ = {bm} - {am};",
            f"  const float f_ = w_ == 0.0f ? 0.0f : {bw} / w_;",
            f"  {am} += d_ * f_;",
            f"  {am2} += {bm2} + d_ * d_ * {aw} * f_;",
            f"  {aw} = w_;",
            "}",
        ]

    # ------------------------------------------------------------------ code assembly
    def codegen_iteration_ranges_entry(self, entry: IterationRangesEntry) -> None:
        line = f"const long {entry.name} = {self.sexpr(self.rename_indexing(entry.expr))};"
        if entry.root.is_loop:
            self.indexing_code.writeline(line)
        else:
            self.body.writeline(line)

    def codegen_body(self) -> None:
        if not (
            self.indexing_code
            or self.loads
            or self.compute
            or self.stores
            or self.post_loop
            or self.post_loop_stores
        ):
            return
        loop = [t for t in self.range_trees if t.is_loop]
        if self.inside_reduction and loop:
            (tree,) = loop
            self.body.writeline(
                "for (long r0_offset = 0; r0_offset < r0_numel; r0_offset += get_local_size(0)) {"
            )
            with self.body.indent():
                self.body.writeline("const long r0_index = r0_offset + r0_lane;")
                self.body.writeline("if (r0_index < r0_numel) {")
                with self.body.indent():
                    self.body.splice(self.indexing_code)
                    self.body.splice(self.loads)
                    self.body.splice(self.compute)
                    self.body.splice(self.stores)
                self.body.writeline("}")
            self.body.writeline("}")
            self.cse.invalidate(self.outside_loop_vars)
            tree.cache_clear()
        else:
            self.body.splice(self.indexing_code)
            self.body.splice(self.loads)
            self.body.splice(self.compute)
            self.body.splice(self.stores)
        self.body.splice(self.post_loop)
        self.body.splice(self.post_loop_stores)
        self.indexing_code.clear()
        self.loads.clear()
        self.compute.clear()
        self.stores.clear()
        self.post_loop.clear()
        self.post_loop_stores.clear()

    def _numel_is_static(self, tree: Any) -> bool:
        return isinstance(tree.numel, (sympy.Integer, int))

    def codegen_kernel(self, name: str | None = None) -> str:
        self.codegen_body()
        code = IndentedBuffer()
        code.splice(_PREAMBLE)
        params: list[str] = []
        prologue: list[str] = []
        arg_defs, _, _, arg_types = self.args.python_argdefs()
        for arg, arg_type in zip(arg_defs, arg_types, strict=True):
            inner = arg.name if hasattr(arg, "name") else str(arg)
            if isinstance(arg_type, torch.dtype):
                t = store_type(arg_type)
                params += [f"__global {t}* {inner}_base", f"const ulong {inner}_off"]
                prologue.append(f"__global {t}* {inner} = {inner}_base + {inner}_off;")
            else:
                params.append(f"const long {inner}")
        for tree in self.active_range_trees():
            numel = f"{tree.prefix}numel"
            if self._numel_is_static(tree):
                prologue.append(f"const long {numel} = {self.sexpr(tree.numel)};")
            else:
                params.append(f"const long {numel}")
        code.writeline(f"__kernel void {name or 'KERNEL_NAME'}(")
        with code.indent():
            for i, param in enumerate(params or ["void"]):
                code.writeline(param + ("," if i + 1 < len(params) else ""))
        code.writeline(") {")
        with code.indent():
            code.splice(self.local_decls)
            for line in prologue:
                code.writeline(line)
            if self.is_reduction_kernel:
                code.writeline("const uint r0_lane = get_local_id(0);")
                for tree in self.active_range_trees():
                    if not tree.is_reduction:
                        code.writeline(f"const long {tree.name} = get_global_id(1);")
            else:
                for dim, tree in enumerate(self._pointwise_trees()):
                    code.writeline(f"const long {tree.name} = get_global_id({dim});")
                    code.writeline(f"if ({tree.name} >= {tree.prefix}numel) return;")
            code.splice(self.body)
        code.writeline("}")
        return code.getvalue()

    def _pointwise_trees(self) -> list[Any]:
        """Pointwise range trees in launch-dimension order: x first (the fastest-moving one
        on dimension 0), then y, then z."""
        trees = [t for t in self.active_range_trees() if not t.is_reduction]
        order = {"x": 0, "y": 1, "z": 2}
        trees.sort(key=lambda t: order[t.prefix])
        if len(trees) > 3:
            raise OclCodegenError("does not generate kernels over more than three range trees")
        return trees

    def call_kernel(self, name: str, node: Any = None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        for v in self.args.sizevars:
            wrapper.ensure_size_computed(v)
        _, call_args, _, arg_types = self.args.python_argdefs()
        tensors = [
            str(a) for a, t in zip(call_args, arg_types, strict=True) if isinstance(t, torch.dtype)
        ]
        ints = [
            str(a)
            for a, t in zip(call_args, arg_types, strict=True)
            if not isinstance(t, torch.dtype)
        ]

        def size(tree: Any) -> str:
            if self._numel_is_static(tree):
                return str(int(tree.numel))
            if isinstance(tree.numel, sympy.Symbol):
                return str(tree.numel)
            return str(wrapper.generate_numel_expr(name, tree).inner)

        for tree in self.active_range_trees():
            if not self._numel_is_static(tree):
                ints.append(size(tree))
        if self.is_reduction_kernel:
            rtree = next(t for t in self.active_range_trees() if t.is_reduction)
            xtrees = [t for t in self.active_range_trees() if not t.is_reduction]
            rows = size(xtrees[0]) if xtrees else "1"
            if self._numel_is_static(rtree):
                block = str(rblock(int(rtree.numel)))
            else:
                block = f"ocl_rblock({size(rtree)})"
            global_size, local_size = [block, rows], [block, "1"]
        else:
            trees = self._pointwise_trees()
            global_size = [size(t) for t in trees] or ["1"]
            local_size = [str(POINTWISE_GROUP)] + ["1"] * (len(global_size) - 1)
        args = [
            f"[{', '.join(tensors)}]",
            f"[{', '.join(ints)}]",
            "[]",
            f"[{', '.join(global_size)}]",
            f"[{', '.join(local_size)}]",
        ]
        wrapper.generate_kernel_call(
            name, args, device=V.graph.get_current_device_or_throw(), triton=False
        )


class OclScheduling(SIMDScheduling):
    """Groups Inductor's nodes into OclKernels and writes them into the wrapper."""

    kernel_type = OclKernel  # type: ignore[assignment]

    def __init__(self, scheduler: Any) -> None:
        super().__init__(scheduler)

    @classmethod
    def get_tiling_and_scores(
        cls, node_schedule, numel, reduction_numel=sympy.S.One, coalesce_analysis=None
    ):
        if reduction_numel != 1:  # reductions: one row tree and one reduction tree
            return cls.create_tiling([numel], [reduction_numel]), None
        return super().get_tiling_and_scores(
            node_schedule, numel, reduction_numel, coalesce_analysis
        )

    def define_kernel(self, src_code: str, node_schedule: Any, kernel: OclKernel) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        name = f"ocl_kernel_{wrapper.next_kernel_suffix()}"
        wrapper.src_to_kernel[src_code] = name
        source = src_code.replace("KERNEL_NAME", name)
        wrapper.header.writeline(f"{name} = compile_ocl_kernel(r'''")
        for line in source.splitlines():
            wrapper.header.writeline(line)
        wrapper.header.writeline(f"''', {name!r})")
        return name
