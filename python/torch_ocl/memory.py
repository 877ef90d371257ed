"""Memory statistics and the caching allocator, like torch.cuda.memory."""

from __future__ import annotations

import collections

import torch

from ._device import _index


def memory_stats(device=None) -> dict:
    names, values = torch.ops.ocl.memory_stats(_index(device))
    return collections.OrderedDict(sorted(zip(names, values, strict=True)))


def memory_allocated(device=None) -> int:
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device=None) -> int:
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device=None) -> int:
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device=None) -> int:
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device=None) -> None:
    torch.ops.ocl.reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device=None) -> None:
    torch.ops.ocl.reset_accumulated_memory_stats(_index(device))


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of the device's global memory, like ``torch.cuda.mem_get_info``.
    OpenCL reports only the total; free is the total less what this process's caching
    allocator has reserved (memory other processes hold is not visible)."""
    return torch.ops.ocl.mem_get_info(_index(device))


def empty_cache() -> None:
    """Releases cached, unused device memory."""
    torch.ops.ocl.empty_cache()
