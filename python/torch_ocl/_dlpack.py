"""PyTorch's own DLPack export refuses ocl tensors, pointing at torch_ocl.interop.

PyTorch exports a PrivateUse1 tensor as ``kDLExtDev`` with ``data`` = ``data_ptr()``. For an ocl
tensor that is an opaque torch-ocl device address (runtime/DeviceAddress.h): not host memory, not a
``cl_mem``, meaningless to any other library, and a consumer that dereferences it faults. The
sound description of an OpenCL buffer in DLPack is ``kDLOpenCL`` with the ``cl_mem`` as ``data``
and the tensor's offset as ``byte_offset``: ``torch_ocl.interop.to_dlpack`` / ``from_dlpack``.
So ``Tensor.__dlpack__``, ``Tensor.__dlpack_device__``, ``torch.utils.dlpack.to_dlpack`` and
``torch.to_dlpack`` raise ``BufferError`` for ocl tensors and behave as before for every other
tensor. (docs/interop.md, "DLPack".)
"""

from __future__ import annotations

import functools

import torch
import torch.utils.dlpack

_MESSAGE = (
    "torch-ocl: PyTorch's DLPack export would describe this ocl tensor as kDLExtDev with "
    "data_ptr() as its address, but an ocl data_ptr() is an opaque torch-ocl device address, not "
    "memory another library can use. Use torch_ocl.interop.to_dlpack(t) (kDLOpenCL: the cl_mem "
    "handle and byte offset), torch_ocl.interop.handles(t) or as_pyopencl_array(t), or copy to "
    "the CPU first (t.cpu())."
)


def _is_ocl(t) -> bool:
    return isinstance(t, torch.Tensor) and t.device.type == "ocl"


def _refusing(original):
    @functools.wraps(original)
    def wrapper(tensor, *args, **kwargs):
        if _is_ocl(tensor):
            raise BufferError(_MESSAGE)
        return original(tensor, *args, **kwargs)

    wrapper._torch_ocl_original = original
    return wrapper


def install() -> None:
    if hasattr(torch.Tensor.__dlpack__, "_torch_ocl_original"):
        return
    torch.Tensor.__dlpack__ = _refusing(torch.Tensor.__dlpack__)
    torch.Tensor.__dlpack_device__ = _refusing(torch.Tensor.__dlpack_device__)
    exporter = _refusing(torch.utils.dlpack.to_dlpack)
    torch.utils.dlpack.to_dlpack = exporter
    if getattr(torch, "to_dlpack", None) is exporter.__wrapped__:
        torch.to_dlpack = exporter
