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


# memory_summary's rows: (statistic, label, is a size in bytes), in torch.cuda.memory_summary's
# order and meaning (see csrc/runtime/Allocator.cpp, struct Stats).
_SUMMARY_ROWS = (
    ("allocated_bytes", "Allocated memory", True),
    ("active_bytes", "Active memory", True),
    ("requested_bytes", "Requested memory", True),
    ("reserved_bytes", "Device reserved memory", True),
    ("inactive_split_bytes", "Non-releasable memory", True),
    ("allocation", "Allocations", False),
    ("active", "Active allocs", False),
    ("segment", "Device reserved segments", False),
    ("inactive_split", "Non-releasable allocs", False),
)


def _scaled(value: int, scale_by: int, as_bytes: bool) -> str:
    """``value`` in the unit that suits ``scale_by`` (the row's first figure, so a row's pools
    share one unit): bytes in B/KiB/MiB/GiB/TiB stepping at 768 of a unit, counts in
    units/K/M stepping at 750 thousand; 13 characters wide."""
    units, step, limit = (
        (("B", "KiB", "MiB", "GiB", "TiB"), 1024, 768 * 1024)
        if as_bytes
        else (
            ("", "K", "M"),
            1000,
            750 * 1000,
        )
    )
    unit = 0
    while unit + 1 < len(units) and scale_by >= limit:
        value //= step
        scale_by /= step
        unit += 1
    return f"{value:9d} {units[unit]:<3}"


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """The caching allocator's statistics as a table in ``torch.cuda.memory_summary()``'s layout:
    for memory held by tensors (allocated, active, requested), held from the driver (reserved),
    free but not releasable (inactive split blocks), and the matching counts, the current and peak
    values and the totals allocated and freed, each split by pool (blocks up to 1 MiB share small
    2 MiB segments, larger ones get their own) unless ``abbreviated``. CUDA's "oversize" rows have
    no counterpart: this allocator never keeps a block from being split."""
    index = _index(device)
    stats = memory_stats(index)
    width = 82  # the metric column (26) and four of 13, with their separators
    rule, heavy = "-" * width, "=" * width
    lines = [
        heavy,
        f"{'PyTorch ocl memory summary, device ocl:' + str(index):^{width}}",
        rule,
        f"{'Out-of-memory errors: ' + str(stats['num_ooms']):^40}|"
        f"{'Retries after emptying the cache: ' + str(stats['num_alloc_retries']):^41}",
        heavy,
        f"{'Metric':^26}|{'Cur Usage':^13}|{'Peak Usage':^13}|{'Tot Alloc':^13}|{'Tot Freed':^13}",
    ]
    pools = (
        [("all", None)]
        if abbreviated
        else [
            ("all", None),
            ("large_pool", "  from large pool"),
            ("small_pool", "  from small pool"),
        ]
    )
    columns = ("current", "peak", "allocated", "freed")
    for key, label, as_bytes in _SUMMARY_ROWS:
        lines.append(rule)
        first = [stats[f"{key}.all.{c}"] for c in columns]
        for pool, pool_label in pools:
            cells = [
                _scaled(stats[f"{key}.{pool}.{c}"], ref, as_bytes)
                for c, ref in zip(columns, first, strict=True)
            ]
            lines.append(f" {pool_label or label:<25}|" + "|".join(cells))
    lines.append(heavy)
    return "|" + "|\n|".join(lines) + "|\n"


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
