"""OclKernel: one generated OpenCL C kernel (loads, stores, reductions, signature, launch)."""

from __future__ import annotations

import itertools
from typing import Any

import sympy
import torch
from torch._inductor.codegen.common import (
    CSE,
    CSEVariable,
    DeferredLine,
    IndentedBuffer,
    PythonPrinter,
)
from torch._inductor.codegen.simd import IterationRangesEntry, SIMDKernel
from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet

from .dtypes import compute_type, convert, literal, load_expr, store_type
from .errors import OclCodegenError
from .overrides import OclOverrides
from .preamble import PREAMBLE, atomic_helpers, special_header
from .printer import OclExprPrinter
from .runtime import POINTWISE_GROUP, RBLOCK_MAX, rblock


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
        # Compute types of the special functions this kernel calls ("float", "double"): the
        # kernel then includes kernels/special.clh (overrides.py, special_header()).
        self.special_types: set[str] = set()
        self.atomic_kinds: set[str] = set()  # preamble.atomic_helpers() this kernel needs
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
        line = load_expr(var, self.index_to_str(index), dtype)
        if dtype in (torch.float16, torch.bfloat16):
            dtype = torch.float32
        return self.cse.generate(self.loads, line, dtype=dtype)

    def store(self, name: str, index: sympy.Expr, value: CSEVariable, mode: Any = None) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        where = f"{var}[{self.index_to_str(index)}]"
        if mode is None:
            line = f"{where} = {convert(value, dtype)};"
        elif mode == "atomic_add" and dtype == torch.float32:
            line = f"ocl_atomic_add_float(&{where}, (float)({value}));"
        elif mode == "atomic_add" and dtype == torch.int32:
            line = f"atomic_add((volatile __global int*)&{where}, (int)({value}));"
        elif mode == "atomic_add" and dtype in (torch.float16, torch.bfloat16):
            self.atomic_kinds.add("half16")
            helper = "ocl_atomic_add_half" if dtype == torch.float16 else "ocl_atomic_add_bf16"
            line = f"{helper}(&{where}, (float)({value}));"
        elif mode == "atomic_add" and dtype in (torch.int64, torch.float64):
            self._require_int64_atomics(dtype)
            self.atomic_kinds.add("int64")
            if dtype == torch.int64:
                line = f"atom_add((volatile __global long*)&{where}, (long)({value}));"
            else:
                self.atomic_kinds.add("double")
                line = f"ocl_atomic_add_double(&{where}, (double)({value}));"
        else:
            raise OclCodegenError(f"does not generate {dtype} stores with mode {mode!r} yet")
        if self.is_reduction_kernel and not self.inside_reduction:
            line = f"if (r0_lane == 0) {line}"
        self.stores.writeline(DeferredLine(name, line))

    def _require_int64_atomics(self, dtype: torch.dtype) -> None:
        device = V.graph.get_current_device_or_throw()
        index = device.index if device.index is not None else torch.ocl.current_device()
        if "cl_khr_int64_base_atomics" not in torch.ocl.get_device_properties(index).extensions:
            raise OclCodegenError(
                f"cannot add {dtype} values atomically on ocl:{index}, which lacks "
                "cl_khr_int64_base_atomics (scatter stores with accumulation: index_put_, "
                "embedding backward)"
            )

    def store_reduction(self, name: str, index: sympy.Expr, value: CSEVariable) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        line = f"if (r0_lane == 0) {var}[{self.index_to_str(index)}] = {convert(value, dtype)};"
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
            init, step = literal(0, acc_dtype), "{a} + {b}"
        elif reduction_type == "prod":
            init, step = literal(1, acc_dtype), "{a} * {b}"
        elif reduction_type in ("max", "min"):
            if acc_dtype.is_floating_point:
                init = ("-" if reduction_type == "max" else "") + "INFINITY"
            elif acc_dtype == torch.bool:
                init = "false" if reduction_type == "max" else "true"
            else:
                info = torch.iinfo(acc_dtype)
                init = literal(info.min if reduction_type == "max" else info.max, acc_dtype)
            step = "OCL_MAXP({a}, {b})" if reduction_type == "max" else "OCL_MINP({a}, {b})"
        elif reduction_type == "any":
            init, step = "false", "({a}) || ({b})"
        elif reduction_type == "xor_sum":
            init, step = literal(0, acc_dtype), "({a}) ^ ({b})"
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
            init = literal(info.min if reduction_type == "argmax" else info.max, src_dtype)
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
        code.splice(PREAMBLE)
        if self.special_types:
            code.splice(special_header(self.special_types))
        if self.atomic_kinds:
            code.splice(atomic_helpers(self.atomic_kinds))
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
