"""Inductor's code generator for ocl: fused OpenCL C kernels (OclScheduling, the entry point).

Inductor lowers a captured graph to loop bodies of ``ops.*`` calls; ``SIMDScheduling`` groups
them into kernels over flattened index ranges. These modules print those kernels as OpenCL C:

- ``OclOverrides`` (overrides.py; dtypes.py for the types, printer.py for index expressions,
  preamble.py for the helpers every kernel gets): one OpenCL C expression per Inductor op
  (math, casts, bitcasts, where and masked bodies, index expressions, random numbers). float16
  and bfloat16 are stored as 16-bit patterns and computed in float (kernels/common.clh's
  helpers convert them), bool is stored as uchar.
- ``OclKernel`` (kernel.py): a kernel's loads and stores (each tensor is a buffer plus an
  element offset, as a cl_mem cannot be offset; atomic adds for scatter stores), its signature
  (size variables are ``long`` arguments, so new sizes do not recompile), pointwise kernels
  with one work-item per element, and reductions as work-group trees (each work-group reduces
  one row: its work-items stride over the row, then combine their partial results in local
  memory).
- ``OclScheduling`` (this module): de-duplicates kernels and writes
  ``compile_ocl_kernel(r'''...''')`` into the wrapper, which calls them through
  ``torch.ops.ocl._launch_source``.

What is not generated raises ``OclCodegenError`` (errors.py) naming the op and the way out
(``backend="aot_eager"``); heavy ops (matmul, convolution, attention, ...) never come here:
Inductor calls them as extern kernels, our native aten ops.
"""

from __future__ import annotations

from typing import Any

import sympy
from torch._inductor.codegen.simd import SIMDScheduling
from torch._inductor.virtualized import V

from .kernel import OclKernel


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
