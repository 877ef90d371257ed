"""torch.ops.ocl._host_map / _host_unmap (csrc/interop/HostView.cpp): a CPU tensor aliasing an
ocl tensor's device memory, mapped on the tensor's stream without a host wait, unmapped on the
same stream. torch_ocl.distributed hands such tensors to Gloo on devices whose memory is the
host's. Checked against the same writes on CPU tensors: slices of larger tensors (only their
bytes are mapped), non-contiguous views, small tensors sharing one allocator segment, ordering
after pending kernels and before later ones, memory freed and reused after the unmap."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE

OPS = torch.ops.ocl


def _ready(t: torch.Tensor) -> None:
    """Waits for the map (and everything before it) on t's current stream: the one wait a
    caller of _host_map makes."""
    event = torch.Event(device=t.device)
    event.record(torch.accelerator.current_stream(t.device))
    event.synchronize()


@pytest.fixture(autouse=True)
def _no_mapping_left():
    before = OPS._host_map_count()
    yield
    assert OPS._host_map_count() == before, "a mapping was left mapped"


def test_zero_copy_answer_follows_the_device():
    """True on a CPU device (PoCL, Intel's CPU runtime: their memory is the host's), false on
    GPUs (where a map may copy)."""
    props = torch.ocl.get_device_properties(0)
    answer = OPS._host_map_zero_copy(0)
    assert isinstance(answer, bool)
    if props.type != "CPU":
        assert not answer
    elif "Portable Computing Language" in props.platform:
        assert answer, "PoCL's CPU device shares the host's memory: mapping must be zero-copy"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.uint8])
def test_read_sees_pending_kernels_and_write_reaches_later_ones(dtype):
    base = torch.arange(50, dtype=torch.float64).to(dtype)
    t = base.to(DEVICE)
    t.mul_(2)  # pending on the stream when the map is enqueued
    host = OPS._host_map(t, True, False)
    assert host.device.type == "cpu" and host.shape == t.shape and host.dtype == dtype
    _ready(t)
    torch.testing.assert_close(host, base * 2, rtol=0, atol=0)
    host.add_(3)
    assert OPS._host_is_mapped(host)
    assert OPS._host_unmap(host)
    assert not OPS._host_unmap(host)  # once only
    t.add_(1)  # enqueued after the unmap: sees the host's writes
    torch.testing.assert_close(t.cpu(), base * 2 + 4, rtol=0, atol=0)


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x[3:17],  # a slice: storage offset, the rest of x not mapped
        lambda x: x.view(10, 10)[:, 2],  # non-contiguous
        lambda x: x.view(10, 10)[2:5, 1:8],  # 2-d window
        lambda x: x[99:],  # one element at the end
        lambda x: x.view(10, 10).t(),  # transposed
    ],
)
def test_views_map_only_their_elements(view):
    ref = torch.arange(100, dtype=torch.float32)
    dev = ref.to(DEVICE)
    host = OPS._host_map(view(dev), True, False)
    _ready(dev)
    torch.testing.assert_close(host, view(ref), rtol=0, atol=0)
    assert host.stride() == view(ref).stride()
    host.mul_(-1)
    view(ref).mul_(-1)
    OPS._host_unmap(host)
    torch.testing.assert_close(dev.cpu(), ref, rtol=0, atol=0)


def test_invalidating_write_keeps_the_neighbours():
    """An output mapped for writing only: a contiguous slice is overwritten entirely; the
    elements around it (same allocation) keep their values, also for a strided view (where the
    op does not invalidate the range)."""
    ref = torch.arange(64, dtype=torch.float32)
    dev = ref.to(DEVICE)
    for view in (lambda x: x[10:20], lambda x: x.view(8, 8)[:, 3]):
        host = OPS._host_map(view(dev), True, True)
        _ready(dev)
        host.fill_(7.0)
        view(ref).fill_(7.0)
        OPS._host_unmap(host)
    torch.testing.assert_close(dev.cpu(), ref, rtol=0, atol=0)


def test_small_tensors_sharing_a_segment():
    """Small tensors are carved out of one buffer: mapping one touches none of the others."""
    ts = [torch.full((5,), float(i), device=DEVICE) for i in range(6)]
    host = OPS._host_map(ts[2], True, False)
    _ready(ts[2])
    host.fill_(-1.0)
    OPS._host_unmap(host)
    got = [t.cpu() for t in ts]
    want = [torch.full((5,), -1.0 if i == 2 else float(i)) for i in range(6)]
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=0, atol=0)


def test_mapping_keeps_the_memory_and_reuse_follows_the_unmap():
    t = torch.full((1000,), 3.0, device=DEVICE)
    host = OPS._host_map(t, True, False)
    _ready(t)
    del t  # the mapping keeps the device memory
    assert torch.equal(host, torch.full((1000,), 3.0))
    host.fill_(4.0)
    OPS._host_unmap(host)
    u = torch.empty(1000, device=DEVICE)  # may reuse the block, after the unmap in stream order
    u.fill_(5.0)
    assert torch.equal(u.cpu(), torch.full((1000,), 5.0))


def test_dropping_the_host_tensor_unmaps():
    t = torch.zeros(16, device=DEVICE)
    before = OPS._host_map_count()
    host = OPS._host_map(t, True, False)
    assert OPS._host_map_count() == before + 1
    _ready(t)
    host.fill_(2.0)
    del host  # the deleter unmaps
    assert OPS._host_map_count() == before
    assert torch.equal(t.cpu(), torch.full((16,), 2.0))


def test_no_host_wait_of_its_own():
    t = torch.ones(1 << 16, device=DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    host = OPS._host_map(t, False, False)
    OPS._host_unmap(host)
    assert torch.ocl.host_wait_count() == before


def test_bad_input():
    with pytest.raises(RuntimeError, match="empty tensor has no device memory"):
        OPS._host_map(torch.empty(0, device=DEVICE), False, False)
    with pytest.raises(RuntimeError, match="takes an ocl tensor"):
        OPS._host_map(torch.ones(3), False, False)
    with pytest.raises(RuntimeError, match="made by _host_map"):
        OPS._host_unmap(torch.ones(3))
    t = torch.ones(3, device=DEVICE)  # the process stays usable
    assert torch.equal((t + 1).cpu(), torch.full((3,), 2.0))
