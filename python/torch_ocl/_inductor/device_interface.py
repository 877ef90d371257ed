"""Dynamo's and Inductor's view of the ocl device (``register_interface_for_device``)."""

from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface

from .. import _device, streams


def _exchange_device(device: int) -> int:
    previous = _device.current_device()
    if device >= 0 and device != previous:
        _device.set_device(device)
    return previous


class OclDeviceInterface(DeviceInterface):
    """torch.ocl seen through the interface torch.cuda offers Dynamo and Inductor."""

    device = _device.device  # type: ignore[assignment]
    Event = torch.Event  # type: ignore[assignment]
    Stream = streams.Stream  # type: ignore[assignment]

    class Worker:
        """Device queries for compile workers: answered from this process's device."""

        @staticmethod
        def set_device(device: int) -> None:
            _device.set_device(device)

        @staticmethod
        def current_device() -> int:
            return _device.current_device()

        @staticmethod
        def get_device_properties(device: Any = None) -> Any:
            return _device.get_device_properties(device)

    current_device = staticmethod(_device.current_device)
    set_device = staticmethod(_device.set_device)
    device_count = staticmethod(_device.device_count)
    stream = staticmethod(streams.stream)  # type: ignore[assignment]
    current_stream = staticmethod(streams.current_stream)  # type: ignore[assignment]
    set_stream = staticmethod(streams.set_stream)  # type: ignore[assignment]
    synchronize = staticmethod(_device.synchronize)
    get_device_properties = staticmethod(_device.get_device_properties)  # type: ignore[assignment]
    exchange_device = staticmethod(_exchange_device)
    maybe_exchange_device = staticmethod(_exchange_device)

    @staticmethod
    def is_available() -> bool:
        return _device.is_available()

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        streams.set_stream(
            streams.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type)
        )

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        # Generated code launches on the current stream itself (the native launch reads it), so
        # the "raw stream" Inductor threads through its wrapper is only the stream's id.
        return streams.current_stream(device_idx).stream_id

    @staticmethod
    def memory_allocated(device: Any = None) -> int:
        return torch.ocl.memory_allocated(device)

    @staticmethod
    def get_compute_capability(device: Any = None) -> str:
        return ""

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True  # bfloat16 is stored as 16-bit patterns and computed in float

    @classmethod
    def is_dtype_supported(cls, dtype: torch.dtype, including_emulation: bool = False) -> bool:
        if dtype in (torch.float64, torch.complex128):
            return _device.get_device_properties().supports_fp64
        return dtype not in (torch.complex32, torch.complex64)

    @staticmethod
    def is_triton_capable(device: Any = None) -> bool:
        return False
