"""One rank of a distributed test scenario (started by launch.py; see test_*.py for the checks).

Usage: python ranks.py SCENARIO RANK WORLD INIT_FILE REPORT_FILE [ARGS...]

Every scenario compares ocl with the CPU: a collective on ocl tensors against the same call on CPU
tensors with Gloo, in the same processes and group; DDP and FSDP2 training against training
without them on the whole batch. A rank writes a JSON report; failures are collected into the
report's "failures" list (so one run reports every mismatch) and the test asserts it is empty.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist

import torch_ocl

OCL = "ocl"


class Report:
    def __init__(self, rank: int, world: int):
        self.rank, self.world = rank, world
        self.data: dict = {"failures": [], "checked": 0}

    def fail(self, what: str) -> None:
        self.data["failures"].append(f"rank {self.rank}: {what}")

    def check(self, name: str, fn) -> None:
        """fn(device) -> list of tensors (or raises): the ocl run must equal the CPU run
        bitwise (Gloo computes both on the host), or raise the same exception type."""
        self.data["checked"] += 1
        try:
            want, want_exc = fn("cpu"), None
        except Exception as exc:  # the CPU's error is the reference
            want, want_exc = None, exc
        try:
            got = fn(OCL)
        except Exception as exc:
            if want_exc is None:
                self.fail(f"{name}: ocl raised {type(exc).__name__}: {exc}")
            elif not isinstance(exc, type(want_exc)):
                self.fail(f"{name}: ocl raised {exc!r}, the CPU {want_exc!r}")
            return
        if want_exc is not None:
            self.fail(f"{name}: the CPU raised {want_exc!r}, ocl did not")
            return
        if len(got) != len(want):
            self.fail(f"{name}: {len(got)} results on ocl, {len(want)} on the CPU")
            return
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            if g.device.type != OCL:
                self.fail(f"{name}: result {i} is on {g.device}")
                continue
            try:
                torch.testing.assert_close(g.cpu(), w, rtol=0, atol=0, equal_nan=True)
            except AssertionError as exc:
                self.fail(f"{name}: result {i} differs from the CPU's: {exc}")


def make(shape, dtype, seed, device):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        t = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    elif dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=g).bool()
    else:
        t = torch.randint(-20, 20, shape, generator=g).to(dtype)
    return t.to(device)


def init(backend, init_file, rank, world, timeout=60):
    kwargs = {} if backend is None else {"backend": backend}
    dist.init_process_group(
        init_method=f"file://{init_file}",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=timeout),
        **kwargs,
    )


# ------------------------------------------------------------------------------------------------
# Collectives


def collective_checks(r: Report, full: bool) -> None:
    rank, world = r.rank, r.world
    F32, F64 = torch.float32, torch.float64
    seed = 100 * rank
    ops_float = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    ops_int = ops_float + [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]
    shapes = [(), (0,), (1,), (7, 3), (1000,)] if full else [(7, 3)]
    dtypes = [F32, F64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8]
    for dtype in dtypes if full else [F32]:
        ops = ops_float if dtype.is_floating_point else ops_int
        for op in ops if full else [dist.ReduceOp.SUM]:
            for shape in shapes:

                def all_reduce(dev, shape=shape, dtype=dtype, op=op):
                    t = make(shape, dtype, seed, dev)
                    dist.all_reduce(t, op=op)
                    return [t]

                r.check(f"all_reduce {dtype} {op} {shape}", all_reduce)
    if not full:
        return

    def non_contiguous(dev):
        t = make((4, 6), F32, seed, dev).t()
        dist.all_reduce(t)
        return [t]

    r.check("all_reduce non-contiguous", non_contiguous)

    def all_reduce_async(dev):
        t = make((33,), F32, seed, dev)
        work = dist.all_reduce(t, async_op=True)
        work.wait()
        u = make((5,), F64, seed + 1, dev)
        fut = dist.all_reduce(u, async_op=True).get_future()
        (v,) = fut.wait()
        return [t, u, v]

    r.check("all_reduce async_op wait()/get_future()", all_reduce_async)

    for root in range(world):

        def broadcast(dev, root=root):
            t = make((9, 2), F32, seed, dev)
            dist.broadcast(t, src=root)
            return [t]

        r.check(f"broadcast src={root}", broadcast)

        def reduce(dev, root=root):
            t = make((10,), F64, seed, dev)
            dist.reduce(t, dst=root, op=dist.ReduceOp.MAX)
            return [t] if rank == root else []

        r.check(f"reduce dst={root}", reduce)

        def gather(dev, root=root):
            t = make((3, 2), F32, seed, dev)
            outs = [torch.empty(3, 2, device=dev) for _ in range(world)] if rank == root else None
            dist.gather(t, outs, dst=root)
            return outs or []

        r.check(f"gather dst={root}", gather)

        def scatter(dev, root=root):
            ins = [make((4,), F32, seed + i, dev) for i in range(world)] if rank == root else None
            out = torch.empty(4, device=dev)
            dist.scatter(out, ins, src=root)
            return [out]

        r.check(f"scatter src={root}", scatter)

    for shape in [(0,), (1,), (5, 3)]:

        def all_gather(dev, shape=shape):
            t = make(shape, F32, seed, dev)
            outs = [torch.empty(shape, device=dev) for _ in range(world)]
            dist.all_gather(outs, t)
            return outs

        r.check(f"all_gather {shape}", all_gather)

        def all_gather_into_tensor(dev, shape=shape):
            t = make(shape, torch.int64, seed, dev)
            out = torch.empty((world * shape[0],) + shape[1:], dtype=torch.int64, device=dev)
            dist.all_gather_into_tensor(out, t)
            return [out]

        r.check(f"all_gather_into_tensor {shape}", all_gather_into_tensor)

        def reduce_scatter(dev, shape=shape):
            ins = [make(shape, F32, seed + i, dev) for i in range(world)]
            out = torch.empty(shape, device=dev)
            dist.reduce_scatter(out, ins)
            return [out]

        r.check(f"reduce_scatter {shape}", reduce_scatter)

        def reduce_scatter_tensor(dev, shape=shape):
            t = make((world * shape[0],) + shape[1:], F64, seed, dev)
            out = torch.empty(shape, dtype=F64, device=dev)
            dist.reduce_scatter_tensor(out, t, op=dist.ReduceOp.MIN)
            return [out]

        r.check(f"reduce_scatter_tensor {shape}", reduce_scatter_tensor)

    def all_to_all(dev):
        ins = [make((rank + i + 1,), F32, seed + i, dev) for i in range(world)]
        outs = [torch.empty(i + rank + 1, device=dev) for i in range(world)]
        dist.all_to_all(outs, ins)
        return outs

    r.check("all_to_all", all_to_all)

    def all_to_all_single(dev):
        t = make((world * 3, 2), F32, seed, dev)
        out = torch.empty_like(t)
        dist.all_to_all_single(out, t)
        return [out]

    r.check("all_to_all_single", all_to_all_single)

    def all_to_all_single_splits(dev):
        in_splits = [rank + 1 + i for i in range(world)]
        out_splits = [i + 1 + rank for i in range(world)]
        t = make((sum(in_splits),), F32, seed, dev)
        out = torch.empty(sum(out_splits), device=dev)
        dist.all_to_all_single(out, t, out_splits, in_splits)
        return [out]

    r.check("all_to_all_single with splits", all_to_all_single_splits)

    def send_recv(dev):
        t = make((6,), F32, seed, dev)
        peer = 1 - rank
        if rank == 0:
            dist.send(t, peer)
            dist.recv(t, peer)
        else:
            u = torch.empty_like(t)
            dist.recv(u, peer)
            dist.send(u * 2, peer)
            t = u
        return [t]

    r.check("send/recv", send_recv)

    def isend_irecv(dev):
        t = make((6,), F64, seed, dev)
        u = torch.empty_like(t)
        ops = [dist.P2POp(dist.isend, t, 1 - rank), dist.P2POp(dist.irecv, u, 1 - rank)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        return [u]

    r.check("batch_isend_irecv", isend_irecv)

    def all_reduce_coalesced(dev):
        ts = [make((3,), F32, seed, dev), make((2, 2), F32, seed + 1, dev)]
        dist.all_reduce_coalesced(ts)
        return ts

    r.check("all_reduce_coalesced", all_reduce_coalesced)

    def all_gather_coalesced(dev):
        ins = [make((3,), F32, seed, dev), make((2,), F32, seed + 1, dev)]
        outs = [[torch.empty(3, device=dev), torch.empty(2, device=dev)] for _ in range(world)]
        dist.all_gather_coalesced(outs, ins)
        return [t for o in outs for t in o]

    r.check("all_gather_coalesced", all_gather_coalesced)

    def objects(dev):
        objs = [None] * world
        dist.all_gather_object(objs, {"rank": rank})
        return [torch.tensor([o["rank"] for o in objs], device=dev)]

    r.check("all_gather_object", objects)

    # Subgroups: one of rank 0 alone, one of both ranks in reverse order (new_group is
    # called by every rank, as torch requires).
    alone, both = dist.new_group([0]), dist.new_group([1, 0])

    def subgroups(dev):
        t = make((5,), F32, seed, dev)
        if rank == 0:
            dist.all_reduce(t, group=alone)
        u = make((3,), F32, seed + 1, dev)
        dist.broadcast(u, src=1, group=both)
        dist.all_reduce(u, op=dist.ReduceOp.MAX, group=both)
        return [t, u]

    r.check("subgroups", subgroups)

    def barrier(dev):
        dist.barrier()
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
        return []

    r.check("barrier, monitored_barrier", barrier)


def check_host_waits(r: Report) -> None:
    """An all_reduce waits for the device once (its tensor must reach the host); waiting for the
    work and for its future adds no wait: the copy back is enqueued."""
    t = torch.ones(1000, device=OCL) * (r.rank + 1)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    dist.all_reduce(t, async_op=True).get_future().wait()
    waits = torch.ocl.host_wait_count() - before
    r.data["host_waits_two_all_reduces"] = waits
    if waits != 2:
        r.fail(f"two all_reduces made {waits} host waits, expected 2")
    if not torch.equal(t.cpu(), torch.full((1000,), 2.0 * sum(range(1, r.world + 1)))):
        r.fail("all_reduce on a fresh tensor gave a wrong sum")


def check_errors(r: Report) -> None:
    # A collective's tensors on different devices.
    outs = [torch.empty(3) for _ in range(r.world)]
    try:
        dist.all_gather(outs, torch.ones(3, device=OCL))
        r.fail("all_gather with CPU outputs and an ocl input did not raise")
    except ValueError as exc:
        r.data["mixed_devices_error"] = str(exc)
    # The process still works.
    t = torch.ones(2, device=OCL)
    dist.all_reduce(t)
    if t.cpu().tolist() != [r.world] * 2:
        r.fail(f"all_reduce after the refused call gave {t.cpu().tolist()}")

    # Sync debug mode "error": a collective needs one host wait, and says so.
    torch.ocl.set_sync_debug_mode("error")
    try:
        dist.all_reduce(t)
        r.fail("all_reduce under sync debug mode 'error' did not raise")
    except RuntimeError as exc:
        r.data["sync_debug_error"] = str(exc)
    finally:
        torch.ocl.set_sync_debug_mode("default")
    if t.cpu().tolist() != [r.world] * 2:
        r.fail(f"the all_reduce refused by sync debug mode changed the tensor: {t.cpu().tolist()}")
    dist.barrier()

    # A fork while the group is alive: the child is refused with a message; the parent goes on.
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_fd)
        try:
            dist.all_reduce(t)  # a tensor made before the fork
            message = "no error"
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
        os.write(write_fd, message.encode()[:4000])
        os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 4096):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    message = b"".join(chunks).decode()
    r.data["fork_error"] = message
    if "spawn" not in message:
        r.fail(f"all_reduce in a forked child: {message!r}, expected an error naming 'spawn'")
    dist.all_reduce(t)
    if t.cpu().tolist() != [r.world**2] * 2:
        r.fail(f"all_reduce after the fork gave {t.cpu().tolist()}")


def scenario_collectives(rank, world, init_file, args):
    r = Report(rank, world)
    init("cpu:gloo,ocl:oclgloo", init_file, rank, world)
    r.data["backend_config"] = dist.get_backend_config()
    collective_checks(r, full=True)
    check_host_waits(r)
    check_errors(r)
    dist.destroy_process_group()
    # The other ways to create a group serve ocl tensors too.
    for i, backend in enumerate(["gloo", None, "oclgloo"]):
        init(backend, f"{init_file}.{i}", rank, world)
        r.data[f"backend_config {backend}"] = dist.get_backend_config()
        before = r.data["checked"]
        if backend is not None:
            collective_checks(r, full=False)

        def few(dev):
            t = make((4,), torch.float32, rank, dev)
            outs = [torch.empty(4, device=dev) for _ in range(world)]
            dist.all_gather(outs, t)
            dist.broadcast(t, src=1)
            dist.barrier()
            return [*outs, t]

        if backend is None:  # like CUDA's default group: a backend for the accelerator only
            r.data["checked"] += 1
            t = make((4,), torch.float32, rank, OCL)
            outs = [torch.empty(4, device=OCL) for _ in range(world)]
            dist.all_gather(outs, t)
            dist.barrier()
            want = [make((4,), torch.float32, k, "cpu") for k in range(world)]
            if not all(torch.equal(o.cpu(), w) for o, w in zip(outs, want, strict=True)):
                r.fail("all_gather on the default group (no backend given) is wrong")
        else:
            r.check(f"all_gather, broadcast, barrier on {backend}", few)
        if r.data["checked"] == before:
            r.fail(f"nothing checked on backend {backend}")
        dist.destroy_process_group()
    return r


# ------------------------------------------------------------------------------------------------
# Training


class Net(torch.nn.Module):
    """A small network with a parameter the forward pass may leave unused."""

    def __init__(self, with_unused=False):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.fc1 = torch.nn.Linear(4 * 6 * 6, 16)
        self.fc2 = torch.nn.Linear(16, 3)
        self.unused = torch.nn.Linear(16, 3) if with_unused else None

    def forward(self, x, use_unused=False):
        h = torch.relu(self.conv(x)).flatten(1)
        h = torch.relu(self.fc1(h))
        out = self.fc2(h)
        return out + self.unused(h) if use_unused else out


def batches(steps, batch, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(batch, 1, 6, 6, generator=g), torch.randint(0, 3, (batch,), generator=g))
        for _ in range(steps)
    ]


def reference_training(steps, data, accumulate=1):
    torch.manual_seed(0)
    model = Net().to(OCL)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(steps):
        x, y = data[step]
        loss = torch.nn.functional.cross_entropy(model(x.to(OCL)), y.to(OCL))
        (loss / accumulate).backward()
        if (step + 1) % accumulate == 0:
            opt.step()
            opt.zero_grad()
    return [p.detach().cpu() for p in model.parameters()]


def ddp_training(rank, world, steps, data, accumulate=1, hook=None, **ddp_kwargs):
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    use_unused = ddp_kwargs.get("find_unused_parameters", False)
    model = Net(with_unused=use_unused).to(OCL)
    ddp = DDP(model, **ddp_kwargs)
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    for step in range(steps):
        x, y = data[step]
        xs, ys = x.chunk(world)[rank].to(OCL), y.chunk(world)[rank].to(OCL)
        last = (step + 1) % accumulate == 0
        # The unused branch takes part only in some steps when find_unused_parameters is on.
        use = use_unused and step % 2 == 0
        if last:
            loss = torch.nn.functional.cross_entropy(ddp(xs, use), ys)
            (loss / accumulate).backward()
            opt.step()
            opt.zero_grad()
        else:
            with ddp.no_sync():
                loss = torch.nn.functional.cross_entropy(ddp(xs, use), ys)
                (loss / accumulate).backward()
    return [p.detach().cpu() for p in model.parameters()]


def compare_params(r: Report, name, got, want, tol):
    worst = max((g - w).abs().max().item() for g, w in zip(got, want, strict=True))
    r.data[f"{name} max difference"] = worst
    if worst > tol:
        r.fail(f"{name}: parameters differ from single-process training by {worst:.3g} > {tol}")


def scenario_ddp(rank, world, init_file, args):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    r = Report(rank, world)
    init("cpu:gloo,ocl:oclgloo", init_file, rank, world)
    steps = 20
    data = batches(steps, 8)
    want = reference_training(steps, data)
    # Small buckets: several buckets per step.
    got = ddp_training(rank, world, steps, data, bucket_cap_mb=0.001)
    compare_params(r, "DDP 20 steps, small buckets", got, want, 2e-5)
    got = ddp_training(rank, world, steps, data, gradient_as_bucket_view=True)
    compare_params(r, "DDP gradient_as_bucket_view", got, want, 2e-5)
    got = ddp_training(rank, world, steps, data, hook=default_hooks.allreduce_hook)
    compare_params(r, "DDP allreduce_hook", got, want, 2e-5)
    got = ddp_training(rank, world, steps, data, hook=default_hooks.fp16_compress_hook)
    compare_params(r, "DDP fp16_compress_hook", got, want, 5e-3)
    # no_sync: gradients accumulate locally over 2 micro-batches, then one all_reduce.
    want = reference_training(8, data, accumulate=2)
    got = ddp_training(rank, world, 8, data, accumulate=2)
    compare_params(r, "DDP no_sync accumulation", got, want, 2e-5)
    want_u = _reference_unused(data)
    got = ddp_training(rank, world, 6, data, find_unused_parameters=True)
    compare_params(r, "DDP find_unused_parameters", got, want_u, 2e-5)
    dist.destroy_process_group()
    return r


def _reference_unused(data):
    """Single-process training with the unused branch in the even steps, as ddp_training's."""
    torch.manual_seed(0)
    model = Net(with_unused=True).to(OCL)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(6):
        x, y = data[step]
        loss = torch.nn.functional.cross_entropy(model(x.to(OCL), step % 2 == 0), y.to(OCL))
        loss.backward()
        opt.step()
        opt.zero_grad()
    return [p.detach().cpu() for p in model.parameters()]


def scenario_fsdp(rank, world, init_file, args):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    r = Report(rank, world)
    init("cpu:gloo,ocl:oclgloo", init_file, rank, world)
    steps = 20
    data = batches(steps, 8)
    want = reference_training(steps, data)
    torch.manual_seed(0)
    model = Net().to(OCL)
    mesh = init_device_mesh(OCL, (world,))
    for layer in (model.conv, model.fc1, model.fc2):
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(steps):
        x, y = data[step]
        xs, ys = x.chunk(world)[rank].to(OCL), y.chunk(world)[rank].to(OCL)
        torch.nn.functional.cross_entropy(model(xs), ys).backward()
        opt.step()
        opt.zero_grad()
    got = [p.full_tensor().detach().cpu() for p in model.parameters()]
    compare_params(r, "FSDP2 20 steps", got, want, 2e-5)
    dist.destroy_process_group()
    return r


# ------------------------------------------------------------------------------------------------
# Faults


def scenario_killed(rank, world, init_file, args):
    """Rank 1 dies before an all_reduce; the others must fail within the group's timeout with
    an error that says the tensor was left unchanged."""
    r = Report(rank, world)
    timeout = 10
    init("cpu:gloo,ocl:oclgloo", init_file, rank, world, timeout=timeout)
    t = torch.ones(1000, device=OCL)
    dist.all_reduce(t)  # the group works
    dist.barrier()
    if rank == 1:
        os._exit(3)
    t = torch.full((1000,), 7.0, device=OCL)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
        r.fail("all_reduce with a dead rank did not raise")
    except Exception as exc:
        r.data["error"] = f"{type(exc).__name__}: {exc}"
    r.data["seconds"] = time.monotonic() - start
    if r.data["seconds"] > timeout + 20:
        r.fail(f"the error came after {r.data['seconds']:.0f} s (timeout {timeout} s)")
    if not torch.equal(t.cpu(), torch.full((1000,), 7.0)):
        r.fail("the failed all_reduce changed the tensor")
    return r


def scenario_hung(rank, world, init_file, args):
    """Rank 1 stays alive but leaves an all_reduce out: the others fail after the group's
    timeout (not later), with the tensor unchanged; then rank 1 leaves."""
    r = Report(rank, world)
    timeout = 5
    init("cpu:gloo,ocl:oclgloo", init_file, rank, world, timeout=timeout)
    t = torch.ones(100, device=OCL)
    dist.all_reduce(t)
    store = dist.distributed_c10d._get_default_store()
    if rank == 1:  # stay alive until rank 0 has its error
        store.wait(["hung/done"], datetime.timedelta(seconds=60))
        return r
    t = torch.full((100,), 5.0, device=OCL)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
        r.fail("all_reduce with a rank that left it out did not raise")
    except Exception as exc:
        r.data["error"] = f"{type(exc).__name__}: {exc}"
    r.data["seconds"] = time.monotonic() - start
    if r.data["seconds"] > timeout + 5:
        r.fail(f"the error came after {r.data['seconds']:.1f} s (timeout {timeout} s)")
    if not torch.equal(t.cpu(), torch.full((100,), 5.0)):
        r.fail("the failed all_reduce changed the tensor")
    store.set("hung/done", "1")
    return r


def scenario_mismatch(rank, world, init_file, args):
    """all_gather of tensors whose sizes differ across ranks, on the device args[0]: the test
    compares how the ocl run ends with how the CPU run ends (Gloo's own error)."""
    r = Report(rank, world)
    init("cpu:gloo,ocl:oclgloo", init_file, rank, world, timeout=10)
    dev = args[0]
    n = 100 + 50 * rank
    t = torch.ones(n, device=dev)
    outs = [torch.empty(n, device=dev) for _ in range(world)]
    try:
        dist.all_gather(outs, t)
        r.data["result"] = "no error"
    except Exception as exc:
        r.data["result"] = f"{type(exc).__name__}: {exc}"
    return r


SCENARIOS = {
    "collectives": scenario_collectives,
    "ddp": scenario_ddp,
    "fsdp": scenario_fsdp,
    "killed": scenario_killed,
    "hung": scenario_hung,
    "mismatch": scenario_mismatch,
}


def main():
    scenario, rank, world, init_file, report_path, *args = sys.argv[1:]
    rank, world = int(rank), int(world)
    try:
        report = SCENARIOS[scenario](rank, world, init_file, args)
        data = report.data
    except Exception:
        data = {"failures": [f"rank {rank}: {traceback.format_exc()}"]}
    with open(report_path, "w") as f:
        json.dump(data, f, indent=1, default=str)
    sys.stdout.flush()
    # Gloo's threads may still hold a dead peer's connection: leave without waiting for them.
    os._exit(0)


if __name__ == "__main__":
    assert torch_ocl.distributed.is_registered()
    main()
