"""Memory statistics and the caching allocator, like torch.cuda.memory."""

from __future__ import annotations

import collections
import json
import pickle
import sys

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


def _format_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A table of the caching allocator's statistics, like ``torch.cuda.memory_summary()``:
    current, peak, allocated in all and freed in all, for tensor memory (allocated, requested),
    memory held from the driver (reserved) and counts (allocations, segments); ``abbreviated``
    leaves out the counts."""
    stats = memory_stats(device)
    rows = [
        ("Allocated memory", "allocated_bytes", True),
        ("Requested memory", "requested_bytes", True),
        ("Reserved memory", "reserved_bytes", True),
    ]
    if not abbreviated:
        rows += [("Allocations", "active", False), ("Segments", "segment", False)]
    head = f"{'Metric':<20}{'Current':>14}{'Peak':>14}{'Tot. alloc':>14}{'Tot. freed':>14}"
    lines = [
        f"torch-ocl memory summary, device ocl:{_index(device)}",
        "=" * len(head),
        head,
        "-" * len(head),
    ]
    for label, key, as_bytes in rows:
        cells = [stats.get(f"{key}.all.{k}", 0) for k in ("current", "peak", "allocated", "freed")]
        text = [_format_bytes(c) if as_bytes else str(c) for c in cells]
        lines.append(f"{label:<20}" + "".join(f"{t:>14}" for t in text))
    lines.append("-" * len(head))
    lines.append(
        f"Out-of-memory errors: {stats.get('num_ooms', 0)}    "
        f"Retries after freeing the cache: {stats.get('num_alloc_retries', 0)}"
    )
    lines.append("=" * len(head))
    return "\n".join(lines) + "\n"


def _record_memory_history(
    enabled: str | None = "all",
    context: str | None = "all",
    stacks: str = "python",
    max_entries: int = sys.maxsize,
    device=None,
) -> None:
    """Records the ocl allocator's history, like ``torch.cuda.memory._record_memory_history``:
    every allocation, free, segment allocation/free and out-of-memory error (at most
    ``max_entries``, the oldest dropped), with the Python stack that caused it unless ``context``
    is None. ``enabled=None`` stops and forgets. ``stacks="all"`` is taken as ``"python"`` (C++
    frames are not recorded). Covers every ocl device (``device`` is accepted for compatibility).
    """
    if enabled not in (None, "state", "all"):
        raise ValueError(f"enabled must be None, 'state' or 'all', not {enabled!r}")
    if stacks not in ("python", "all"):
        raise ValueError(f"stacks must be 'python' or 'all', not {stacks!r}")
    limit = max(0, min(int(max_entries), 2**62))
    torch.ops.ocl._record_memory_history(enabled is not None, limit, context is not None)


def _snapshot(device=None) -> dict:
    """The allocator's segments and blocks now, and the history recorded so far, in the format of
    ``torch.cuda.memory._snapshot()``: PyTorch's memory visualiser
    (https://pytorch.org/memory_viz) and ``torch.cuda._memory_viz`` read it."""
    return json.loads(torch.ops.ocl._memory_snapshot_json())


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """Writes :func:`_snapshot` as a pickle, to drag into https://pytorch.org/memory_viz."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)
