"""The caching allocator's statistics, empty_cache and out-of-memory behaviour."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from ocl_testing import DEVICE

MIB = 1 << 20

STAT_KEYS = [
    "allocated_bytes.all.current",
    "allocated_bytes.all.peak",
    "allocated_bytes.all.allocated",
    "allocated_bytes.all.freed",
    "reserved_bytes.all.current",
    "reserved_bytes.all.peak",
    "active.all.current",
    "segment.all.current",
    "num_ooms",
    "num_alloc_retries",
]


def test_memory_stats_keys_and_types():
    stats = torch.ocl.memory_stats()
    for key in STAT_KEYS:
        assert key in stats, key
    assert all(isinstance(v, int) for v in stats.values())
    assert torch.ocl.memory_stats(0).keys() == torch.ocl.memory_stats("ocl:0").keys()
    assert stats["allocated_bytes.all.current"] == torch.ocl.memory_allocated()
    assert stats["reserved_bytes.all.current"] == torch.ocl.memory_reserved()


def test_allocated_grows_and_shrinks():
    torch.ocl.synchronize()
    before = torch.ocl.memory_allocated()
    x = torch.empty(4 * MIB, dtype=torch.uint8, device=DEVICE)
    after = torch.ocl.memory_allocated()
    assert after >= before + 4 * MIB
    assert torch.ocl.memory_reserved() >= after
    y = torch.empty(MIB, dtype=torch.uint8, device=DEVICE)
    assert torch.ocl.memory_allocated() >= after + MIB
    del x
    assert torch.ocl.memory_allocated() < after
    del y
    assert torch.ocl.memory_allocated() == before
    assert torch.ocl.memory_allocated(0) == torch.ocl.memory_allocated(torch.device("ocl", 0))


def test_peak_and_reset():
    torch.ocl.reset_peak_memory_stats()
    base = torch.ocl.memory_allocated()
    assert torch.ocl.max_memory_allocated() == base
    x = torch.empty(8 * MIB, dtype=torch.uint8, device=DEVICE)
    peak = torch.ocl.max_memory_allocated()
    assert peak >= base + 8 * MIB
    del x
    assert torch.ocl.max_memory_allocated() == peak  # the peak stays
    assert torch.ocl.max_memory_reserved() >= torch.ocl.memory_reserved()
    torch.ocl.reset_peak_memory_stats()
    assert torch.ocl.max_memory_allocated() == torch.ocl.memory_allocated()
    torch.ocl.reset_accumulated_memory_stats()
    assert torch.ocl.memory_stats()["allocated_bytes.all.allocated"] == 0


def test_reserved_at_least_allocated_and_empty_cache():
    xs = [torch.empty(MIB * (k + 1), dtype=torch.uint8, device=DEVICE) for k in range(4)]
    assert torch.ocl.memory_reserved() >= torch.ocl.memory_allocated()
    del xs
    torch.ocl.synchronize()
    reserved = torch.ocl.memory_reserved()
    assert reserved >= torch.ocl.memory_allocated()
    torch.ocl.empty_cache()
    after = torch.ocl.memory_reserved()
    assert after <= reserved
    assert after >= torch.ocl.memory_allocated()
    # Cached blocks are reused: allocating again does not need more than before.
    x = torch.empty(MIB, dtype=torch.uint8, device=DEVICE)
    assert torch.ocl.memory_reserved() >= torch.ocl.memory_allocated()
    del x


def test_mem_get_info():
    free, total = torch.ocl.mem_get_info()
    assert total == torch.ocl.get_device_properties().total_memory
    assert free == total - torch.ocl.memory_reserved()
    x = torch.empty(8 * MIB, dtype=torch.uint8, device=DEVICE)
    assert torch.ocl.mem_get_info(0)[0] <= free - 8 * MIB
    del x


def test_torch_accelerator_memory_functions_reach_the_allocator():
    """torch.accelerator's memory API goes through c10::DeviceAllocator (an internal assert
    failed before: the allocator was a plain c10::Allocator)."""
    assert torch.accelerator.current_accelerator().type == "ocl"
    x = torch.empty(4 * MIB, dtype=torch.uint8, device=DEVICE)
    assert torch.accelerator.memory_allocated(0) == torch.ocl.memory_allocated()
    assert torch.accelerator.memory_reserved(0) == torch.ocl.memory_reserved()
    assert torch.accelerator.max_memory_allocated(0) == torch.ocl.max_memory_allocated()
    stats = torch.accelerator.memory_stats(0)
    ours = torch.ocl.memory_stats()
    for key in ("allocated_bytes.all.current", "reserved_bytes.all.peak", "num_ooms"):
        assert stats[key] == ours[key], key
    assert torch.accelerator.get_memory_info(0) == torch.ocl.mem_get_info()
    del x
    torch.accelerator.reset_peak_memory_stats(0)
    assert torch.ocl.max_memory_allocated() == torch.ocl.memory_allocated()
    torch.accelerator.empty_cache()
    assert torch.ocl.memory_reserved() >= torch.ocl.memory_allocated()


def test_freed_memory_is_reused():
    x = torch.empty(2 * MIB, dtype=torch.uint8, device=DEVICE)
    del x
    reserved = torch.ocl.memory_reserved()
    for _ in range(10):
        y = torch.empty(2 * MIB, dtype=torch.uint8, device=DEVICE)
        del y
    assert torch.ocl.memory_reserved() == reserved


def test_out_of_memory_raises_and_device_keeps_working():
    total = torch.ocl.get_device_properties().total_memory
    ooms = torch.ocl.memory_stats()["num_ooms"]
    with pytest.raises(torch.OutOfMemoryError) as info:
        torch.empty(total * 2, dtype=torch.uint8, device=DEVICE)
    assert isinstance(info.value, RuntimeError)
    assert "out of memory" in str(info.value).lower()
    assert torch.ocl.memory_stats()["num_ooms"] > ooms
    with pytest.raises(torch.OutOfMemoryError):
        torch.empty(total // 2 + 1, 4, dtype=torch.float32, device=DEVICE)
    # Afterwards allocation and computation work as before.
    x = torch.arange(1000, dtype=torch.float32).to(DEVICE)
    y = x * 2 + 1
    assert torch.equal(y.cpu(), torch.arange(1000, dtype=torch.float32) * 2 + 1)
    big = torch.empty(16 * MIB, dtype=torch.uint8, device=DEVICE).fill_(3)
    assert big[-1].item() == 3
    assert torch.ocl.memory_reserved() >= torch.ocl.memory_allocated()


def _run_child(code, env):
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


def test_record_stream_refuses_an_invalid_stream(subprocess_env):
    """An invalid stream id is refused by record_stream; before, it was found only when the memory
    was freed, inside a destructor, which ended the process."""
    code = (
        "import torch, torch_ocl\n"
        "kind = torch.ocl.current_stream().device_type\n"
        "bad = torch.Stream(stream_id=99, device_index=0, device_type=kind)\n"
        "x = torch.ones(10, device='ocl')\n"
        "try:\n"
        "    x.record_stream(bad)\n"
        "except RuntimeError as e:\n"
        "    print('refused' if 'invalid stream' in str(e) else e)\n"
        "del x\n"
        "print(torch.ones(3, device='ocl').sum().item())\n"
    )
    proc = _run_child(code, subprocess_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["refused", "3.0"]


def test_a_failing_free_warns_once_leaks_the_block_and_the_process_goes_on(subprocess_env):
    """The free path's OpenCL steps (here the marker on a stream recorded with record_stream) fail,
    through the allocator's test hook: freeing must not throw (destructors are noexcept, so a throw
    ends the process); it warns once and leaks the block, which is never handed out again."""
    code = (
        "import torch, torch_ocl\n"
        "side = torch.ocl.Stream()\n"
        "cpu = torch.randn(1 << 20)\n"  # 4 MiB: a large block, a segment of its own
        "x = cpu.to('ocl')\n"
        "with torch.ocl.stream(side):\n"
        "    y = x * 2\n"
        "x.record_stream(side)\n"
        "leaked = x.data_ptr()\n"
        "before = torch.ocl.memory_allocated()\n"
        "torch.ops.ocl._inject_free_failures(2)\n"
        "del x\n"
        "print('alive', torch.ocl.memory_allocated() == before - (4 << 20))\n"
        "z = torch.ones(10, device='ocl')\n"
        "z.record_stream(side)\n"
        "del z\n"  # the second failure: not reported again
        "torch.ocl.synchronize()\n"
        "ptrs = []\n"
        "for _ in range(4):\n"
        "    t = torch.empty(1 << 20, device='ocl')\n"
        "    ptrs.append(t.data_ptr())\n"
        "    del t\n"
        "print('reused' if leaked in ptrs else 'not-reused')\n"
        "print(torch.equal(y.cpu(), cpu * 2))\n"
        "w = torch.ones(5, device='ocl')\n"
        "w.record_stream(side)\n"
        "del w\n"  # the hook is used up: frees work again
        "print((torch.arange(6., device='ocl') * 3).sum().item())\n"
    )
    proc = _run_child(code, subprocess_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["alive", "True", "not-reused", "True", "45.0"]
    assert proc.stderr.count("freeing device memory failed") == 1, proc.stderr
    assert "injected failure of the free path (test hook)); the block is leaked" in proc.stderr


def test_storage_resize_keeps_contents():
    """UntypedStorage.resize_ (PyTorch's resizePrivateUse1Bytes hook into the allocator): growing
    and shrinking keep the front of the old contents, on the device, without a host round trip."""
    cpu = torch.randn(1000)
    x = cpu.to(DEVICE)
    storage = x.untyped_storage()
    old_ptr = storage.data_ptr()
    storage.resize_(4000 * 4 + 6)  # grows into a new allocation, not a multiple of the itemsize
    assert storage.nbytes() == 4000 * 4 + 6 and storage.data_ptr() != old_ptr
    grown = torch.empty(0, device=DEVICE).set_(storage, 0, (4000,), (1,))
    assert torch.equal(grown[:1000].cpu(), cpu)
    grown[1000:].fill_(2.5)
    storage.resize_(600 * 4)  # shrinks: the first 600 elements stay
    shrunk = torch.empty(0, device=DEVICE).set_(storage, 0, (600,), (1,))
    assert torch.equal(shrunk.cpu(), cpu[:600])
    storage.resize_(0)
    assert storage.nbytes() == 0
    storage.resize_(8)
    assert storage.nbytes() == 8 and storage.device.type == "ocl"


def _tensor_at(address, numel):
    """A float32 tensor over `numel` elements at a raw device address (a storage that does not own
    its memory, as a DLPack-style import would make)."""
    device = torch.device("ocl", torch.ocl.current_device())
    storage = torch._C._construct_storage_from_data_pointer(address, device, numel * 4)
    return torch.empty(0, device=DEVICE).set_(storage, 0, (numel,), (1,))


def test_device_addresses_support_pointer_arithmetic_and_are_checked():
    """data_ptr() of an ocl tensor is an opaque device address (runtime/DeviceAddress.h): offsets
    add like host pointers, any address inside an allocation finds its buffer, and an address that
    is no allocation's is refused with a clear error instead of reaching the driver."""
    cpu = torch.randn(64)
    x = cpu.to(DEVICE)
    assert x[5:].data_ptr() == x.data_ptr() + 5 * 4
    assert torch.equal(_tensor_at(x.data_ptr() + 8 * 4, 16).cpu(), cpu[8:24])
    with pytest.raises(RuntimeError, match="is not an ocl device address"):
        _tensor_at(12345 * 4, 4).cpu()
    with pytest.raises(RuntimeError, match="unknown device address"):
        _tensor_at(x.data_ptr() + (1 << 50), 4).cpu()  # in the device's range, above every segment
    # Still usable afterwards.
    assert torch.equal((x * 2).cpu(), cpu * 2)
