"""Inductor's Python wrapper for ocl: the module that allocates buffers and calls kernels."""

from __future__ import annotations

from typing import Any

from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen
from torch._inductor.virtualized import V


class OclWrapperCodegen(PythonWrapperCodegen):
    """PythonWrapperCodegen that imports the ocl runtime and calls generated kernels as
    ``kernel([tensors], [ints], [floats], [global sizes], [local sizes])``."""

    @staticmethod
    def create(
        is_subgraph: bool,
        subgraph_name: str | None,
        parent_wrapper: PythonWrapperCodegen | None,
        partition_signatures: Any = None,
    ) -> PythonWrapperCodegen:
        if is_subgraph:
            assert subgraph_name is not None and parent_wrapper is not None
            return SubgraphPythonWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return OclWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.imports.splice(
            """
            import torch_ocl
            from torch_ocl._inductor.runtime import compile_ocl_kernel
            from torch_ocl._inductor.runtime import rblock as ocl_rblock
            """,
            strip=True,
        )

    def _generate_kernel_call_helper(
        self, kernel_name: str, call_args: Any, *, device: Any = None, **kwargs: Any
    ) -> None:
        device = device or V.graph.get_current_device_or_throw()
        if device.type != "ocl" or kwargs.get("triton", True):
            return super()._generate_kernel_call_helper(
                kernel_name, call_args, device=device, **kwargs
            )
        # The launch itself reads the current stream: no stream argument.
        self.writeline(self.wrap_kernel_call(kernel_name, call_args))
