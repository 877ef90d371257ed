"""One rank of the transfer scenarios (started by launch.py with script="transfer_ranks.py";
test_transfer.py holds the checks): collectives with the ocl tensors mapped into host memory
(Gloo works on the device memory in place) and copied through pinned host memory, each against
the same call on CPU tensors.

Usage: python transfer_ranks.py SCENARIO RANK WORLD INIT_FILE REPORT_FILE [ARGS...]
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback

import torch
import torch.distributed as dist

import torch_ocl
from torch_ocl.distributed import _transfer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ranks import OCL, Report, collective_checks, init, make  # noqa: E402

F32 = torch.float32


def layout_checks(r: Report) -> None:
    """Tensors that are views of larger ones, neighbours in one allocation, device work before
    and after the call, memory freed and reused right after it."""
    rank, world = r.rank, r.world
    seed = 100 * rank

    def offset_slice(dev):
        x = make((100,), F32, seed, dev)
        dist.all_reduce(x[13:61])  # only these elements take part
        return [x]

    r.check("all_reduce of a slice of a larger tensor (offset)", offset_slice)

    def window(dev):
        x = make((12, 10), F32, seed, dev)
        dist.all_reduce(x[2:9, 3:7], op=dist.ReduceOp.MAX)  # non-contiguous, offset
        dist.broadcast(x[:, 5], src=1)  # strided column
        return [x]

    r.check("all_reduce/broadcast of non-contiguous windows", window)

    def neighbours(dev):
        # Small tensors share one allocator segment: the others must keep their values.
        ts = [make((7,), F32, seed + i, dev) for i in range(5)]
        dist.all_reduce(ts[2])
        outs = [torch.full((7,), -1.0, device=dev) for _ in range(world)]
        dist.all_gather(outs, ts[3])
        return ts + outs

    r.check("neighbours in one segment", neighbours)

    def device_work_around(dev):
        t = make((1000,), F32, seed, dev)
        t.mul_(3).add_(rank)  # pending on the device when the collective starts
        work = dist.all_reduce(t, async_op=True)
        work.wait()
        t.sub_(1)  # enqueued after the collective's end
        u = t * 2
        return [t, u]

    r.check("device work before and after", device_work_around)

    def freed_and_reused(dev):
        t = make((4096,), F32, seed, dev)
        work = dist.all_reduce(t, async_op=True)
        work.wait()
        copy = t.clone()
        del t, work
        u = torch.empty(4096, device=dev)  # likely the same memory
        u.fill_(5.0)
        return [copy, u]

    r.check("freed and reused after the collective", freed_and_reused)

    def freed_before_wait(dev):
        t = make((333,), F32, seed, dev)
        fut = dist.all_reduce(t, async_op=True).get_future()
        del t  # the collective keeps its memory
        (v,) = fut.wait()
        return [v.clone()]

    r.check("freed before the wait", freed_before_wait)

    def in_place_gather(dev):
        # FSDP's form: the input is this rank's slice of the output.
        out = torch.zeros(world * 6, device=dev)
        mine = out[rank * 6 : (rank + 1) * 6]
        mine.copy_(make((6,), F32, seed, dev))
        dist.all_gather_into_tensor(out, mine)
        return [out]

    r.check("all_gather_into_tensor in place", in_place_gather)

    def coalesced_views(dev):
        x = make((40,), F32, seed, dev)
        dist.all_reduce_coalesced([x[:10], x[20:35]])
        return [x]

    r.check("all_reduce_coalesced of views", coalesced_views)

    def reduce_scatter_views(dev):
        x = make((world * 5,), F32, seed, dev)
        out = torch.zeros(8, device=dev)
        dist.reduce_scatter(out[1:6], list(x.chunk(world)))
        return [out]

    r.check("reduce_scatter into a view", reduce_scatter_views)


def host_wait_checks(r: Report, mode: str) -> None:
    """One host wait per all_reduce (waiting for the work or its future adds none), and no
    mapping outlives its collective."""
    t = torch.ones(1 << 18, device=OCL) * (r.rank + 1)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    dist.all_reduce(t, async_op=True).wait()
    dist.all_reduce(t, async_op=True).get_future().wait()
    dist.all_reduce(t[5:100])
    waits = torch.ocl.host_wait_count() - before
    r.data[f"host_waits_three_all_reduces {mode}"] = waits
    if waits != 3:
        r.fail(f"{mode}: three all_reduces made {waits} host waits, expected 3")
    left = torch.ops.ocl._host_map_count()
    r.data[f"mappings left {mode}"] = left
    if left:
        r.fail(f"{mode}: {left} mappings left after the collectives completed")
    # Refused by sync debug mode 'error' before communicating: nothing stays mapped.
    torch.ocl.set_sync_debug_mode("error")
    try:
        dist.all_reduce(t)
        r.fail(f"{mode}: all_reduce under sync debug mode 'error' did not raise")
    except RuntimeError as exc:
        r.data[f"sync_debug_error {mode}"] = str(exc)
    finally:
        torch.ocl.set_sync_debug_mode("default")
    if torch.ops.ocl._host_map_count():
        r.fail(f"{mode}: a refused all_reduce left a mapping")
    dist.barrier()


def _held_all_reduce(r: Report, hold_s: float) -> bool:
    """An async all_reduce called while the device is held (its stream waits for a user event
    that a timer sets after `hold_s`): whether the call returned before the timer let the device
    go. Checks the result either way."""
    import pyopencl as cl

    from torch_ocl import interop

    t = torch.full((1000,), float(r.rank + 1), device=OCL)
    gate = cl.UserEvent(interop.context())
    interop.wait_event(gate)  # the current stream now waits for the gate
    t.mul_(2)  # behind the gate
    opened = threading.Event()

    def open_gate():
        opened.set()
        gate.set_status(cl.command_execution_status.COMPLETE)

    timer = threading.Timer(hold_s, open_gate)
    timer.start()
    work = dist.all_reduce(t, async_op=True)
    returned_first = not opened.is_set()
    timer.cancel()  # let the device go now if the timer has not
    timer.join()
    if not opened.is_set():
        open_gate()
    work.wait()
    want = 2.0 * sum(range(1, r.world + 1))
    if not torch.equal(t.cpu(), torch.full((1000,), want)):
        r.fail(f"all_reduce behind a held device gave {t.cpu()[:4].tolist()}...")
    return returned_first


def overlap_checks(r: Report) -> None:
    """Asynchronous calls on a group whose ocl tensors have a backend of their own wait for the
    device on the issuer's thread: the caller gets its work while the device is still busy.
    With overlap off (or a backend shared with CPU tensors) the caller waits."""
    from torch_ocl.distributed import _issuer, host_group

    world_group = dist.group.WORLD
    r.data["issuer on cpu:gloo,ocl:oclgloo"] = host_group.issuer_for(world_group) is not None
    shared = dist.new_group(backend="gloo")
    t = torch.ones(3, device=OCL)
    dist.all_reduce(t, group=shared)
    r.data["issuer on gloo"] = host_group.issuer_for(shared) is not None
    r.data["returned while held"] = _held_all_reduce(r, hold_s=20.0)
    _issuer.set_enabled(False)
    try:
        r.data["returned while held, overlap off"] = _held_all_reduce(r, hold_s=1.0)
    finally:
        _issuer.set_enabled(True)
    dist.barrier()


def scenario_transfer(rank, world, init_file, args):
    r = Report(rank, world)
    init("cpu:gloo,ocl:oclgloo", init_file, rank, world)
    r.data["auto maps"] = _transfer.maps(torch.device(OCL, 0))
    try:
        _transfer.set_transfer_mode("sideways")
        r.fail("set_transfer_mode accepted 'sideways'")
    except ValueError as exc:
        r.data["bad mode error"] = str(exc)
    for mode in args:
        _transfer.set_transfer_mode(mode)
        before = r.data["checked"]
        collective_checks(r, full=True)
        layout_checks(r)
        r.data[f"checked {mode}"] = r.data["checked"] - before
        host_wait_checks(r, mode)
    overlap_checks(r)
    dist.destroy_process_group()
    return r


SCENARIOS = {"transfer": scenario_transfer}


def main():
    scenario, rank, world, init_file, report_path, *args = sys.argv[1:]
    rank, world = int(rank), int(world)
    try:
        data = SCENARIOS[scenario](rank, world, init_file, args).data
    except Exception:
        data = {"failures": [f"rank {rank}: {traceback.format_exc()}"]}
    with open(report_path, "w") as f:
        json.dump(data, f, indent=1, default=str)
    sys.stdout.flush()
    os._exit(0)  # Gloo's threads may still hold connections: leave without waiting for them


if __name__ == "__main__":
    assert torch_ocl.distributed.is_registered()
    main()
