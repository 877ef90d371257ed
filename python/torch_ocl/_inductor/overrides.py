"""OclOverrides: an OpenCL C expression for each Inductor op."""

from __future__ import annotations

import itertools
from typing import Any

import sympy
import torch
from torch._inductor.codegen.common import IndentedBuffer, OpOverrides
from torch._inductor.ops_handler import OpsHandler
from torch._inductor.utils import get_bounds_index_expr
from torch._inductor.virtualized import V, ops

from .dtypes import compute_type, convert, is_float, literal, store_type
from .errors import OclCodegenError


class OclOverrides(OpOverrides):
    """An OpenCL C expression for each Inductor op."""

    def _default(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        raise OclCodegenError(f"does not implement ops.{name} yet")

    @staticmethod
    def constant(value: bool | float | int, dtype: torch.dtype) -> str:
        return literal(value, dtype)

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
            return convert(x, dtype)
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
        other_str = literal(other, result.dtype) if isinstance(other, (bool, int, float)) else other
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
        if is_float(a) or is_float(b):
            return f"floor(({a}) / ({b}))"
        return f"OCL_IFLOORDIV({a}, {b})"

    @staticmethod
    def truncdiv(a: Any, b: Any) -> str:
        if is_float(a) or is_float(b):
            return f"trunc(({a}) / ({b}))"
        return f"({a}) / ({b})"

    @staticmethod
    def mod(a: Any, b: Any) -> str:
        if is_float(a) or is_float(b):
            return f"fmod({a}, {b})"
        return f"({a}) % ({b})"

    @staticmethod
    def remainder(a: Any, b: Any) -> str:
        if is_float(a) or is_float(b):
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
        if is_float(a) or is_float(b):
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
        return f"fabs({x})" if is_float(x) else f"(({x}) < 0 ? -({x}) : ({x}))"

    @staticmethod
    def sign(x: Any) -> str:
        return f"(({x}) > 0) - (({x}) < 0)" if not is_float(x) else f"sign({x})"

    @staticmethod
    def signbit(x: Any) -> str:
        return f"(signbit({x}) != 0)" if is_float(x) else f"(({x}) < 0)"

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
        return f"OCL_MAXP({x}, 0)" if not is_float(x) else f"OCL_MAXP({x}, 0.0f)"

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


# Special functions: kernels/special.clh's, the same code as the eager ops (so results, NaN/Inf
# handling and rounding match eager ocl and the CPU). The kernel includes the header when one
# of these is used (kernel.py, preamble.special_header). Argument order is Inductor's: for
# polygamma (n, x), for the polynomials (x, n), for igamma/gammainc (a, x).
_SPECIAL = {
    "digamma": "ew_digamma({0})",
    "erfinv": "ew_erfinv({0})",
    "polygamma": "ew_polygamma({1}, {0})",
    "zeta": "ew_zeta({0}, {1})",
    "i0": "ew_bessel_i({0}, 0, false)",
    "i0e": "ew_bessel_i({0}, 0, true)",
    "i1": "ew_bessel_i({0}, 1, false)",
    "i1e": "ew_bessel_i({0}, 1, true)",
    "modified_bessel_i0": "ew_bessel_i({0}, 0, false)",
    "modified_bessel_i1": "ew_bessel_i({0}, 1, false)",
    "spherical_bessel_j0": "ew_spherical_bessel_j0({0})",
    "bessel_j0": "(COMP)ew_bessel_j((ew_wide)({0}), 0)",
    "bessel_j1": "(COMP)ew_bessel_j((ew_wide)({0}), 1)",
    "bessel_y0": "(COMP)ew_bessel_y((ew_wide)({0}), 0)",
    "bessel_y1": "(COMP)ew_bessel_y((ew_wide)({0}), 1)",
    "modified_bessel_k0": "(COMP)ew_bessel_k((ew_wide)({0}), 0, false)",
    "modified_bessel_k1": "(COMP)ew_bessel_k((ew_wide)({0}), 1, false)",
    "scaled_modified_bessel_k0": "(COMP)ew_bessel_k((ew_wide)({0}), 0, true)",
    "scaled_modified_bessel_k1": "(COMP)ew_bessel_k((ew_wide)({0}), 1, true)",
    "airy_ai": "(COMP)ew_airy_ai((ew_wide)({0}))",
    "igamma": "(COMP)ew_igamma((ew_wide)({0}), (ew_wide)({1}), false)",
    "igammac": "(COMP)ew_igamma((ew_wide)({0}), (ew_wide)({1}), true)",
    "gammainc": "(COMP)ew_igamma((ew_wide)({0}), (ew_wide)({1}), false)",
    "gammaincc": "(COMP)ew_igamma((ew_wide)({0}), (ew_wide)({1}), true)",
    "ndtr": "((COMP)0.5 * erfc(-(COMP)({0}) * (COMP)0.70710678118654752440))",
    "log_ndtr": "ew_log_ndtr({0})",
    "erfcx": "ew_erfcx({0})",
    "ndtri": "ew_ndtri({0})",
    "chebyshev_polynomial_t": "ew_chebyshev({0}, {1}, 0, false)",
    "chebyshev_polynomial_u": "ew_chebyshev({0}, {1}, 1, false)",
    "chebyshev_polynomial_v": "ew_chebyshev({0}, {1}, 2, false)",
    "chebyshev_polynomial_w": "ew_chebyshev({0}, {1}, 3, false)",
    "shifted_chebyshev_polynomial_t": "ew_chebyshev({0}, {1}, 0, true)",
    "shifted_chebyshev_polynomial_u": "ew_chebyshev({0}, {1}, 1, true)",
    "shifted_chebyshev_polynomial_v": "ew_chebyshev({0}, {1}, 2, true)",
    "shifted_chebyshev_polynomial_w": "ew_chebyshev({0}, {1}, 3, true)",
    "hermite_polynomial_h": "ew_hermite({0}, {1}, false)",
    "hermite_polynomial_he": "ew_hermite({0}, {1}, true)",
    "laguerre_polynomial_l": "ew_laguerre({0}, {1})",
    "legendre_polynomial_p": "ew_legendre({0}, {1})",
}


def _special(template: str) -> Any:
    def special(*args: Any) -> str:
        types = {compute_type(getattr(a, "dtype", None) or torch.float32) for a in args}
        V.kernel.special_types.add("double" if "double" in types else "float")
        return template.format(*(f"(COMP)({a})" for a in args))

    return staticmethod(special)


for _name, _template in _SPECIAL.items():
    setattr(OclOverrides, _name, _special(_template))


def _refuse(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OclCodegenError(f"does not implement ops.{name} yet")

    return staticmethod(refuse)


# Every op of Inductor's handler interface that is not implemented above refuses by name (the
# interface's own default is a bare NotImplementedError).
for _name in dir(OpsHandler):
    if not _name.startswith("_") and OclOverrides._is_unimplemented(_name):
        setattr(OclOverrides, _name, _refuse(_name))
