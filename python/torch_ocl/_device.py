"""Device management: availability, count, current device, properties, synchronisation."""

from __future__ import annotations

import contextlib
import dataclasses

import torch

_TYPES = ("GPU", "ACCELERATOR", "CPU", "OTHER")


def _index(device=None) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "ocl":
            raise ValueError(f"expected an ocl device, got {device}")
        return current_device() if device.index is None else device.index
    raise TypeError(f"invalid device: {device!r}")


def is_available() -> bool:
    """True if at least one OpenCL device can be used."""
    return torch.ops.ocl.device_count() > 0


def device_count() -> int:
    return torch.ops.ocl.device_count()


def is_initialized() -> bool:
    return True


def init() -> None:
    """Enumerates devices now (it otherwise happens on first use)."""
    torch.ops.ocl.device_count()


def why_unavailable() -> str:
    """Why there is no device ('' if there is one)."""
    return torch.ops.ocl.init_error()


def current_device() -> int:
    return torch.ops.ocl.current_device()


def set_device(device) -> None:
    torch.ops.ocl.set_device(_index(device))


class device:  # noqa: N801 - mirrors torch.cuda.device
    """Context manager that changes the current ocl device."""

    def __init__(self, device):
        self.idx = _index(device) if device is not None else -1
        self.prev = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev = current_device()
            set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0:
            set_device(self.prev)
        return False


@dataclasses.dataclass(frozen=True)
class DeviceProperties:
    name: str
    vendor: str
    platform: str
    driver_version: str
    opencl_version: str
    opencl_c_version: str
    extensions: tuple
    type: str
    total_memory: int
    max_alloc: int
    multi_processor_count: int
    max_work_group_size: int
    local_memory: int
    supports_fp16: bool
    supports_fp64: bool


def get_device_properties(device=None) -> DeviceProperties:
    idx = _index(device)
    s = torch.ops.ocl.property_strings(idx)
    i = torch.ops.ocl.property_ints(idx)
    return DeviceProperties(
        name=s[0],
        vendor=s[1],
        platform=s[2],
        driver_version=s[3],
        opencl_version=s[4],
        opencl_c_version=s[5],
        extensions=tuple(s[6].split()),
        type=_TYPES[i[7]],
        total_memory=i[0],
        max_alloc=i[1],
        multi_processor_count=i[2],
        max_work_group_size=i[3],
        local_memory=i[4],
        supports_fp16=bool(i[5]),
        supports_fp64=bool(i[6]),
    )


def get_device_name(device=None) -> str:
    return torch.ops.ocl.property_strings(_index(device))[0]


def synchronize(device=None) -> None:
    """Waits for all work queued on every stream of the device."""
    torch.ops.ocl.synchronize(_index(device))


_SYNC_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode) -> None:
    """Like torch.cuda.set_sync_debug_mode: "default"/0, "warn"/1 or "error"/2.

    In "warn" or "error" mode every host wait for the device warns or raises, naming the op.
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_MODES:
            raise RuntimeError(
                'invalid value of debug_mode, expected one of "default", "warn", "error"'
            )
        debug_mode = _SYNC_MODES[debug_mode]
    torch.ops.ocl.set_sync_debug_mode(int(debug_mode))


def get_sync_debug_mode() -> int:
    return torch.ops.ocl.get_sync_debug_mode()


def host_wait_count() -> int:
    """How many times this process has waited for the device so far."""
    return torch.ops.ocl.host_wait_count()


def batch_stats() -> dict[str, int]:
    """Tiny-op batching so far: {"ops": ops recorded into batches, "launches": batch kernels
    enqueued, "short_route": those of the ops that came by the short route (same-shape
    contiguous operands of one float dtype, straight from the op to the batch without ATen's
    TensorIterator)}. Small contiguous elementwise ops run many to a launch; TORCH_OCL_BATCH=0
    turns batching off."""
    ops, launches, short_route = torch.ops.ocl.batch_counts()
    return {"ops": ops, "launches": launches, "short_route": short_route}


@contextlib.contextmanager
def sync_debug_mode(mode):
    old = get_sync_debug_mode()
    set_sync_debug_mode(mode)
    try:
        yield
    finally:
        set_sync_debug_mode(old)
