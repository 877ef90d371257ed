"""Graph passes Inductor runs on ocl graphs (``register_backend_for_device``'s custom pass)."""

from __future__ import annotations

import functools
import hashlib
import pathlib

import torch
from torch._inductor.custom_graph_pass import CustomGraphModulePass


def _is_cpu_scalar(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "cpu" and value.dim() == 0


def _is_ocl(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "ocl"


class CpuScalarsToDevice(CustomGraphModulePass):
    """Copies the 0-dim CPU tensors a pointwise op mixes with ocl tensors to the ocl device.

    Eager PyTorch lets such an op (``cpu_scalar * ocl_tensor``) run on the device. Inductor
    places a pointwise op on the device of its first GPU input, else of its first input; ocl is
    not one of Inductor's GPU types (see __init__.py), so with the CPU scalar first the op would
    become a CPU kernel reading device memory. After this pass the scalar reaches the op as an
    ocl tensor (a 4- or 8-byte copy that does not wait), as Inductor does for GPUs by loading
    the scalar in the kernel.
    """

    def __call__(self, gm: torch.fx.GraphModule) -> None:
        graph = gm.graph
        changed = False
        for node in list(graph.nodes):
            if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
                continue
            if torch.Tag.pointwise not in node.target.tags:
                continue
            inputs = [a for a in node.all_input_nodes if "val" in a.meta]
            devices = [a.meta["val"] for a in inputs]
            ocl = next((v.device for v in devices if _is_ocl(v)), None)
            if ocl is None:
                continue
            for arg in inputs:
                val = arg.meta["val"]
                if not _is_cpu_scalar(val):
                    continue
                with graph.inserting_before(node):
                    moved = graph.call_function(torch.ops.prims.device_put.default, (arg, ocl))
                mode = getattr(val, "fake_mode", None)
                if mode is not None:
                    with mode:
                        moved.meta["val"] = val.to(ocl)
                else:
                    moved.meta["val"] = torch.empty((), dtype=val.dtype, device="meta")
                node.replace_input_with(arg, moved)
                changed = True
        if changed:
            graph.lint()
            gm.recompile()

    def uuid(self) -> str:
        # Inductor keys its FX graph cache on the uuids of the backends' passes, and on nothing
        # else of an out-of-tree code generator: the generator's own source is part of this one,
        # so a changed torch-ocl never gets wrapper code cached by another version.
        return f"torch_ocl.CpuScalarsToDevice.v1:{_generator_digest()}"


@functools.cache
def _generator_digest() -> str:
    """sha256 of torch_ocl/_inductor/*.py and the package's version."""
    from .._version import __version__

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(pathlib.Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
