"""Inductor's index and size expressions (sympy) printed as OpenCL C."""

from __future__ import annotations

import sympy
from torch.utils._sympy.printers import ExprPrinter


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
