"""torch.ocl.memory._record_memory_history / _snapshot / _dump_snapshot / memory_summary: the
allocator's history and state in torch.cuda.memory._snapshot()'s format, read by PyTorch's own
memory visualiser functions (torch.cuda._memory_viz reads the format, not the device)."""

from __future__ import annotations

import gc
import pickle

import pytest
import torch
from ocl_testing import DEVICE
from torch.cuda import _memory_viz

NBYTES = 1000 * 1000 * 4


@pytest.fixture
def history():
    # Tensors of earlier tests in this process that only the garbage collector frees would be
    # freed at any moment (between the snapshot and memory_allocated()): collect them first and
    # keep the collector off while the test compares.
    gc.collect()
    gc.disable()
    torch.ocl.synchronize()
    torch.ocl.empty_cache()  # cached free segments of earlier tests in this process go
    torch.ocl.memory._record_memory_history(max_entries=100000)
    try:
        yield
    finally:
        torch.ocl.memory._record_memory_history(enabled=None)
        gc.enable()


def allocate_here():
    return torch.empty(1000, 1000, device=DEVICE)


def test_snapshot_matches_the_allocator_and_the_program(history, tmp_path):
    kept = allocate_here()
    dropped = allocate_here()
    # Larger than the free space any segment that earlier tests in this process left (with live
    # blocks) can have: a segment allocation of its own, which the visualiser names cudaMalloc.
    fresh = torch.empty((256 << 20) + 4096, dtype=torch.uint8, device=DEVICE)
    dropped_addr = dropped.data_ptr()
    del dropped
    with pytest.raises(torch.OutOfMemoryError):
        torch.empty(1 << 62, dtype=torch.uint8, device=DEVICE)
    snap = torch.ocl.memory._snapshot()

    # Segments and blocks: exactly the allocator's state.
    segments = snap["segments"]
    assert sum(s["total_size"] for s in segments) == torch.ocl.memory_reserved()
    allocated = [b for s in segments for b in s["blocks"] if b["state"] == "active_allocated"]
    assert sum(b["size"] for b in allocated) == torch.ocl.memory_allocated()
    for s in segments:
        assert sum(b["size"] for b in s["blocks"]) == s["total_size"]
        addr = s["address"]
        for b in s["blocks"]:
            assert b["address"] == addr
            addr += b["size"]
    # The live tensor's block, with the stack that allocated it.
    block = next(b for b in allocated if b["address"] == kept.data_ptr())
    assert block["requested_size"] == NBYTES
    names = [(f["name"], f["filename"]) for f in block["frames"]]
    assert names[0] == ("allocate_here", __file__)
    assert ("test_snapshot_matches_the_allocator_and_the_program", __file__) in names

    # The trace: the two allocations, the free of the dropped one (requested, then completed),
    # the out-of-memory error; every free follows an allocation of its address and size.
    trace = snap["device_traces"][DEVICE.index or 0]
    mine = [
        e["action"]
        for e in trace
        if e["addr"] in (kept.data_ptr(), dropped_addr) and not e["action"].startswith("segment")
    ]
    assert mine == ["alloc", "alloc", "free_requested", "free_completed"]
    live = {}
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            assert live.pop(e["addr"]) == e["size"]
    assert kept.data_ptr() in live and dropped_addr not in live
    oom = [e for e in trace if e["action"] == "oom"]
    assert len(oom) == 1 and oom[0]["size"] >= 1 << 62 and oom[0]["device_free"] >= 0
    assert [f["name"] for f in oom[0]["frames"]][0] == (
        "test_snapshot_matches_the_allocator_and_the_program"
    )

    # PyTorch's visualiser functions read it (pickled as _dump_snapshot writes it).
    path = tmp_path / "snapshot.pickle"
    torch.ocl.memory._dump_snapshot(str(path))
    loaded = pickle.loads(path.read_bytes())
    assert loaded["segments"] == torch.ocl.memory._snapshot()["segments"]
    assert "segments:" in _memory_viz.segsum(loaded)
    assert "allocate_here" not in _memory_viz.segsum(loaded)  # segsum shows no stacks
    assert "cudaMalloc" in _memory_viz.trace(loaded)  # its names for a segment allocation
    del fresh
    for plot in (_memory_viz.segment_plot, _memory_viz.trace_plot):
        html = plot(loaded)
        assert "snapshot.pickle" in html and len(html) > 1000


def test_stopping_forgets_the_history():
    torch.ocl.memory._record_memory_history()
    x = allocate_here()
    assert torch.ocl.memory._snapshot()["device_traces"]
    torch.ocl.memory._record_memory_history(enabled=None)
    snap = torch.ocl.memory._snapshot()
    assert all(t == [] for t in snap["device_traces"])
    # Blocks are still listed, without stacks.
    block = next(b for s in snap["segments"] for b in s["blocks"] if b["address"] == x.data_ptr())
    assert block["state"] == "active_allocated" and block["frames"] == []
    with pytest.raises(ValueError):
        torch.ocl.memory._record_memory_history(enabled="everything")


def test_max_entries_keeps_the_newest(history):
    torch.ocl.memory._record_memory_history(max_entries=4)
    xs = [allocate_here() for _ in range(6)]
    trace = torch.ocl.memory._snapshot()["device_traces"][DEVICE.index or 0]
    assert len(trace) == 4
    assert trace[-1]["action"] == "alloc" and trace[-1]["addr"] == xs[-1].data_ptr()


def test_memory_summary():
    x = allocate_here()
    text = torch.ocl.memory_summary()
    assert "PyTorch ocl memory summary, device ocl:" in text.splitlines()[1]
    row = next(line for line in text.splitlines() if line.startswith("| Allocated memory"))
    current = torch.ocl.memory_allocated()
    number, unit = row.split("|")[2].split()
    scale = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}[unit]
    assert int(number) == current // scale
    assert "from large pool" not in torch.ocl.memory_summary(abbreviated=True)
    del x
