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


METRICS = (
    "allocation",
    "allocated_bytes",
    "active",
    "active_bytes",
    "segment",
    "reserved_bytes",
    "inactive_split",
    "inactive_split_bytes",
    "requested_bytes",
)
POOLS = ("all", "small_pool", "large_pool")


def test_memory_stats_have_cudas_per_pool_keys():
    stats = torch.ocl.memory_stats()
    for metric in METRICS:
        for pool in POOLS:
            for kind in ("current", "peak", "allocated", "freed"):
                key = f"{metric}.{pool}.{kind}"
                assert key in stats, key
                if kind != "peak":  # peaks of the pools need not add up
                    parts = (
                        stats[f"{metric}.small_pool.{kind}"] + stats[f"{metric}.large_pool.{kind}"]
                    )
                    assert stats[f"{metric}.all.{kind}"] == parts, key


def _delta(before: dict, after: dict, key: str) -> int:
    return after[key] - before[key]


def test_small_and_large_pool_are_counted_apart():
    torch.ocl.synchronize()
    before = torch.ocl.memory_stats()
    small = torch.empty(4096, dtype=torch.uint8, device=DEVICE)  # up to 1 MiB: small pool
    large = torch.empty(3 * MIB, dtype=torch.uint8, device=DEVICE)
    during = torch.ocl.memory_stats()
    assert _delta(before, during, "allocation.small_pool.current") == 1
    assert _delta(before, during, "allocation.large_pool.current") == 1
    assert _delta(before, during, "allocated_bytes.small_pool.current") == 4096
    # A cached large block is not split when at most 1 MiB would remain: the block may be larger.
    large_block = _delta(before, during, "allocated_bytes.large_pool.current")
    assert 3 * MIB <= large_block <= 4 * MIB
    assert _delta(before, during, "requested_bytes.large_pool.current") == 3 * MIB
    assert _delta(before, during, "active_bytes.all.current") == 4096 + large_block
    del small, large
    after = torch.ocl.memory_stats()
    for key in ("allocation", "allocated_bytes", "active", "active_bytes", "requested_bytes"):
        for pool in POOLS:
            assert after[f"{key}.{pool}.current"] == before[f"{key}.{pool}.current"], (key, pool)
    assert _delta(before, after, "allocation.small_pool.freed") == 1
    assert _delta(before, after, "allocated_bytes.large_pool.freed") == large_block


def test_inactive_split_counts_free_parts_of_used_segments():
    """A block cut from a fresh segment leaves the rest of the segment free but not releasable
    (CUDA's "non-releasable memory"); freeing the block merges the segment whole again."""
    with torch.ocl.stream(torch.ocl.Stream()):  # a stream of its own: a segment of its own
        before = torch.ocl.memory_stats()
        x = torch.empty(4096, dtype=torch.uint8, device=DEVICE)
        during = torch.ocl.memory_stats()
        assert _delta(before, during, "segment.small_pool.current") == 1
        assert _delta(before, during, "inactive_split.small_pool.current") == 1
        segment = _delta(before, during, "reserved_bytes.small_pool.current")
        assert _delta(before, during, "inactive_split_bytes.small_pool.current") == segment - 4096
        del x
        after = torch.ocl.memory_stats()
        assert after["inactive_split.all.current"] == before["inactive_split.all.current"]
        assert (
            after["inactive_split_bytes.all.current"] == before["inactive_split_bytes.all.current"]
        )
        torch.ocl.synchronize()
    torch.ocl.empty_cache()


def test_active_includes_blocks_waiting_for_another_stream():
    side = torch.ocl.Stream()
    # Blocks that earlier tests freed for other streams are retired first (an allocation retires
    # those whose streams are done), so that only this test's blocks change the figures below.
    torch.ocl.synchronize()
    torch.empty(1, device=DEVICE)  # freed at once
    before = torch.ocl.memory_stats()
    x = torch.ones(3 * MIB // 4, device=DEVICE)
    side.wait_stream(torch.ocl.current_stream())  # x is written on the current stream
    with torch.ocl.stream(side):
        y = x * 2
    both = torch.ocl.memory_stats()
    total = both["allocated_bytes.all.current"]
    del y
    y_block = total - torch.ocl.memory_stats()["allocated_bytes.all.current"]
    with torch.ocl.stream(side):
        y = x * 2  # the same block again
    assert torch.ocl.memory_stats()["allocated_bytes.all.current"] == total
    x_block = total - before["allocated_bytes.all.current"] - y_block
    x.record_stream(side)
    del x
    freed = torch.ocl.memory_stats()
    assert _delta(both, freed, "allocated_bytes.all.current") == -x_block
    assert _delta(both, freed, "active_bytes.all.current") == 0  # x waits until side is done
    assert _delta(both, freed, "active.all.current") == 0
    side.synchronize()
    z = torch.empty(1, device=DEVICE)  # an allocation retires the blocks whose streams are done
    done = torch.ocl.memory_stats()
    z_block = _delta(freed, done, "allocated_bytes.all.current")
    assert _delta(both, done, "active_bytes.all.current") == z_block - x_block
    assert torch.equal(y.cpu(), torch.full((3 * MIB // 4,), 2.0))
    del y, z


def test_torch_accelerator_sees_the_pools():
    x = torch.empty(4096, dtype=torch.uint8, device=DEVICE)
    stats = torch.accelerator.memory_stats(0)
    ours = torch.ocl.memory_stats()
    for metric in METRICS:
        for pool in POOLS:
            key = f"{metric}.{pool}.current"
            assert stats[key] == ours[key], key
    del x


def _figures(line: str) -> list[tuple[int, str]]:
    """The (number, unit) cells of one row of a memory summary."""
    cells = line.strip("|").split("|")[1:]
    out = []
    for cell in cells:
        number, _, unit = cell.strip().partition(" ")
        out.append((int(number), unit.strip()))
    return out


def test_memory_summary_has_cudas_rows_and_figures(monkeypatch):
    """torch.ocl.memory_summary() shows what torch.cuda.memory_summary() shows for the same
    statistics: the same rows with the same figures and units (CUDA's function is given the ocl
    statistics; it reads only the dictionary). CUDA's oversize rows have no ocl counterpart."""
    import torch.cuda.memory as cuda_memory

    import torch_ocl.memory

    x = torch.empty(3 * MIB, dtype=torch.uint8, device=DEVICE)
    y = torch.empty(1000, dtype=torch.uint8, device=DEVICE)
    stats = torch.ocl.memory_stats()
    ours = torch.ocl.memory_summary()
    fake = dict(stats)
    for key in ("oversize_allocations", "oversize_segments"):
        for kind in ("current", "peak", "allocated", "freed"):
            fake[f"{key}.{kind}"] = 0
    monkeypatch.setattr(cuda_memory, "memory_stats", lambda device=None: fake)
    cuda = cuda_memory.memory_summary(0)

    labels = {label for _, label, _ in torch_ocl.memory._SUMMARY_ROWS}
    labels |= {"from large pool", "from small pool"}

    def rows(text: str) -> list[tuple[str, list]]:
        out = []
        for line in text.splitlines():
            label = line.strip("|").split("|")[0].strip().replace("GPU", "Device")
            if label in labels:
                out.append((label, _figures(line)))
        return out

    assert rows(ours) == rows(cuda)
    assert len(rows(ours)) == 27  # nine metrics, each for all, the large and the small pool
    assert ours.splitlines()[0] == "|" + "=" * 82 + "|"
    assert "device ocl:0" in ours
    short = torch.ocl.memory_summary(abbreviated=True)
    assert "from large pool" not in short and "Non-releasable allocs" in short
    del x, y
