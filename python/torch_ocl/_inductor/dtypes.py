"""How each dtype is stored and computed in generated OpenCL C: pointer and register types,
literals, loads into and stores from the register type."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch._inductor.virtualized import V

from .errors import OclCodegenError

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


def check_fp64(dtype: torch.dtype | None) -> None:
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
    check_fp64(dtype)
    try:
        return _STORE_TYPE[dtype]
    except KeyError:
        raise OclCodegenError(f"has no {dtype} tensors") from None


def compute_type(dtype: torch.dtype | None) -> str:
    if dtype is None:
        return "__auto_type"  # not expected: every value Inductor makes has a dtype
    check_fp64(dtype)
    try:
        return _COMPUTE_TYPE[dtype]
    except KeyError:
        raise OclCodegenError(f"has no {dtype} values") from None


def is_float(x: Any) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and dtype.is_floating_point


def literal(value: bool | float | int, dtype: torch.dtype | None) -> str:
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


def load_expr(ptr: str, index: str, dtype: torch.dtype) -> str:
    """Element `index` of `ptr` as its compute type."""
    if dtype == torch.float16:
        return f"ocl_half_to_float({ptr}[{index}])"
    if dtype == torch.bfloat16:
        return f"as_float(((uint){ptr}[{index}]) << 16)"
    if dtype == torch.bool:
        return f"({ptr}[{index}] != 0)"
    return f"{ptr}[{index}]"


def convert(value: Any, dtype: torch.dtype) -> str:
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
