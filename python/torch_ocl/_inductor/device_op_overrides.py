"""The strings Inductor's Python wrapper writes for ocl device operations."""

from __future__ import annotations

from torch._inductor.codegen.common import DeviceOpOverrides


class OclDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_ocl._inductor.runtime import get_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.ocl.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.ocl.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.ocl.device({device_idx})"

    def current_stream(self) -> str:
        return "torch.ocl.current_stream()"
