"""The ocl (PrivateUse1) kernels of PyTorch's c10d collective ops.

Every collective of torch.distributed reaches a c10d op (``torch.ops.c10d.allreduce_``, ...) that
the dispatcher sends, by the tensors' device, to a per-device kernel; PyTorch's own PrivateUse1
kernel hands the call to the backend registered for the device. No OpenCL collective library
exists, so torch-ocl replaces these kernels: each hands the ocl tensors to the host, mapped or
through pinned host memory (`_staging.Staging`), and calls the same c10d op again with the host
tensors, on a process group that holds the Gloo backend serving ocl tensors for the caller's group
(`host_group.py`). Gloo then runs exactly what it runs for CPU tensors (same reduce ops, same
checks, same errors), and the mappings end (or the results are copied back) without a host wait
once it has completed. Asynchronous calls on a backend that serves only ocl tensors wait for the
device and call Gloo on an issuer thread (`_issuer.py`), so that the caller goes on enqueueing.

Tensors that are not on an ocl device pass through unchanged (Gloo sees them as it would anyway);
a tensor on another device type (e.g. meta) is refused with a message.
"""

from __future__ import annotations

import threading
import warnings

import torch

from . import _issuer, host_group
from ._staging import Staging, _work

_c10d = torch.ops.c10d

# The library object must live as long as the process: dropping it unregisters the kernels.
_LIBRARY: torch.library.Library | None = None


class _Call:
    """One call of a c10d op on ocl tensors: its staging, host group and issuer."""

    def __init__(self, name: str, pg_boxed, waits: bool = True):
        # `waits`: whether the call waits for the device before Gloo runs (every one but recv).
        host_group.check_not_forked(name)
        pg = torch.distributed.ProcessGroup.unbox(pg_boxed)
        self.hpg = host_group.host_group_for(pg, name).boxed()
        self.issuer = host_group.issuer_for(pg)
        self.st = Staging(name, pg.rank(), pg.size(), pg, waits)
        self.rank = pg.rank()

    def issue(self, value, async_op, call, defer=None):
        """Waits for the device and calls Gloo: `call()` runs the c10d op on the host tensors and
        returns its boxed work. `async_op`: whether the caller waits for the work later; if not,
        the call waits for Gloo here and ends the transfer before returning (no hand-over
        between threads). `defer` (default: `async_op`): the wait for the device and the Gloo
        call may run on the issuer's thread. Returns the boxed work for `value` (the ocl
        tensors)."""
        st, issuer = self.st, self.issuer
        defer = async_op if defer is None else defer
        if issuer is None or (not (defer and _issuer.enabled()) and issuer.run_inline()):
            try:
                st.wait_for_reads()
                work = _unbox(st.call(call))
            finally:
                if issuer is not None:
                    issuer.done()
            if async_op:
                return st.finish(work, value).boxed()
            return st.finish_now(work, value).boxed()
        st.record_reads()  # behind this call's copies and maps, not the caller's later work
        future = torch.futures.Future()

        def job():
            try:
                st.wait_for_reads()
                inner = st.finish_future(_unbox(st.call(call)), value)
            except Exception as exc:
                st.error = exc
                future.set_exception(exc)
                return
            inner.add_done_callback(lambda done: _forward(done, future))

        issuer.submit(job)
        return _work(future, st).boxed()


def _forward(done: torch.futures.Future, future: torch.futures.Future) -> None:
    try:
        value = done.value()
    except Exception as exc:
        future.set_exception(exc)
    else:
        future.set_result(value)


def _unbox(work_boxed):
    return torch._C._distributed_c10d.Work.unbox(work_boxed)


def _second(result):
    return result[1]


def broadcast_(tensors, pg, root_rank, root_tensor, async_op=True, timeout=-1):
    c = _Call("broadcast", pg)
    host = [c.st.read(t) if c.rank == root_rank else c.st.update(t) for t in tensors]
    op = _c10d.broadcast_.default
    work = c.issue(
        list(tensors),
        async_op,
        lambda: _second(op(host, c.hpg, root_rank, root_tensor, async_op, timeout)),
    )
    return tensors, work


def allreduce_(tensors, pg, reduce_op, sparse_indices=None, async_op=True, timeout=-1):
    c = _Call("all_reduce", pg)
    host = [c.st.update(t) for t in tensors]
    op = _c10d.allreduce_.default
    work = c.issue(
        list(tensors),
        async_op,
        lambda: _second(op(host, c.hpg, reduce_op, sparse_indices, async_op, timeout)),
    )
    return tensors, work


def allreduce_coalesced_(tensors, pg, reduce_op, async_op=True, timeout=-1):
    c = _Call("all_reduce_coalesced", pg)
    host = [c.st.update(t) for t in tensors]
    op = _c10d.allreduce_coalesced_.default
    return c.issue(list(tensors), async_op, lambda: op(host, c.hpg, reduce_op, async_op, timeout))


def reduce_(tensors, pg, reduce_op, root_rank, root_tensor, async_op=True, timeout=-1):
    c = _Call("reduce", pg)
    host = [c.st.update(t) for t in tensors]
    op = _c10d.reduce_.default
    return c.issue(
        list(tensors),
        async_op,
        lambda: op(host, c.hpg, reduce_op, root_rank, root_tensor, async_op, timeout),
    )


def allgather_(output_tensors, input_tensors, pg, async_op=True, timeout=-1):
    c = _Call("all_gather", pg)
    host_out = [[c.st.write(t) for t in outs] for outs in output_tensors]
    host_in = [c.st.read(t) for t in input_tensors]
    flat = [t for outs in output_tensors for t in outs]
    op = _c10d.allgather_.default
    work = c.issue(flat, async_op, lambda: _second(op(host_out, host_in, c.hpg, async_op, timeout)))
    return output_tensors, work


def _allgather_base_(output_tensor, input_tensor, pg, async_op=True, timeout=-1):
    c = _Call("all_gather_into_tensor", pg)
    host_out, host_in = c.st.write(output_tensor), c.st.read(input_tensor)
    op = _c10d._allgather_base_.default
    work = c.issue(
        [output_tensor], async_op, lambda: _second(op(host_out, host_in, c.hpg, async_op, timeout))
    )
    return output_tensor, work


def allgather_coalesced_(output_lists, input_list, pg, async_op=True):
    c = _Call("all_gather_coalesced", pg)
    host_out = [[c.st.write(t) for t in outs] for outs in output_lists]
    host_in = [c.st.read(t) for t in input_list]
    flat = [t for outs in output_lists for t in outs]
    op = _c10d.allgather_coalesced_.default
    return c.issue(flat, async_op, lambda: op(host_out, host_in, c.hpg, async_op))


def allgather_into_tensor_coalesced_(outputs, inputs, pg, async_op=True):
    c = _Call("all_gather_into_tensor_coalesced", pg)
    host_out = [c.st.write(t) for t in outputs]
    host_in = [c.st.read(t) for t in inputs]
    op = _c10d.allgather_into_tensor_coalesced_.default
    return c.issue(list(outputs), async_op, lambda: op(host_out, host_in, c.hpg, async_op))


def reduce_scatter_(output_tensors, input_tensors, pg, reduce_op, async_op=True, timeout=-1):
    c = _Call("reduce_scatter", pg)
    host_out = [c.st.write(t) for t in output_tensors]
    host_in = [[c.st.read(t) for t in ins] for ins in input_tensors]
    op = _c10d.reduce_scatter_.default
    work = c.issue(
        list(output_tensors),
        async_op,
        lambda: _second(op(host_out, host_in, c.hpg, reduce_op, async_op, timeout)),
    )
    return output_tensors, work


def _reduce_scatter_base_(output_tensor, input_tensor, pg, reduce_op, async_op=True, timeout=-1):
    c = _Call("reduce_scatter_tensor", pg)
    host_out, host_in = c.st.write(output_tensor), c.st.read(input_tensor)
    op = _c10d._reduce_scatter_base_.default
    work = c.issue(
        [output_tensor],
        async_op,
        lambda: _second(op(host_out, host_in, c.hpg, reduce_op, async_op, timeout)),
    )
    return output_tensor, work


def reduce_scatter_tensor_coalesced_(outputs, inputs, pg, reduce_op, async_op=True, timeout=-1):
    c = _Call("reduce_scatter_tensor_coalesced", pg)
    host_out = [c.st.write(t) for t in outputs]
    host_in = [c.st.read(t) for t in inputs]
    op = _c10d.reduce_scatter_tensor_coalesced_.default
    return c.issue(
        list(outputs), async_op, lambda: op(host_out, host_in, c.hpg, reduce_op, async_op, timeout)
    )


def gather_(output_tensors, input_tensors, pg, root_rank, async_op=True, timeout=-1):
    c = _Call("gather", pg)
    host_out = [[c.st.write(t) for t in outs] for outs in output_tensors]
    host_in = [c.st.read(t) for t in input_tensors]
    flat = [t for outs in output_tensors for t in outs]
    op = _c10d.gather_.default
    return c.issue(
        flat, async_op, lambda: op(host_out, host_in, c.hpg, root_rank, async_op, timeout)
    )


def scatter_(output_tensors, input_tensors, pg, root_rank, async_op=True, timeout=-1):
    c = _Call("scatter", pg)
    host_out = [c.st.write(t) for t in output_tensors]
    host_in = [[c.st.read(t) for t in ins] for ins in input_tensors]
    op = _c10d.scatter_.default
    work = c.issue(
        list(output_tensors),
        async_op,
        lambda: _second(op(host_out, host_in, c.hpg, root_rank, async_op, timeout)),
    )
    return output_tensors, work


def alltoall_(output_tensors, input_tensors, pg, async_op=True, timeout=-1):
    c = _Call("all_to_all", pg)
    host_out = [c.st.write(t) for t in output_tensors]
    host_in = [c.st.read(t) for t in input_tensors]
    op = _c10d.alltoall_.default
    work = c.issue(
        list(output_tensors),
        async_op,
        lambda: _second(op(host_out, host_in, c.hpg, async_op, timeout)),
    )
    return output_tensors, work


def alltoall_base_(output, input, pg, output_split_sizes, input_split_sizes, async_op=True,
                   timeout=-1):  # fmt: skip
    c = _Call("all_to_all_single", pg)
    host_out, host_in = c.st.write(output), c.st.read(input)
    op = _c10d.alltoall_base_.default
    return c.issue(
        [output],
        async_op,
        lambda: op(
            host_out, host_in, c.hpg, output_split_sizes, input_split_sizes, async_op, timeout
        ),
    )


def barrier(tensor, pg, device_ids, async_op=True, timeout=-1):
    c = _Call("barrier", pg)
    # Gloo's barrier ignores the tensor; a host one keeps the device out of it.
    host = torch.empty(tensor.shape, dtype=tensor.dtype)
    op = _c10d.barrier.default
    return c.issue([], async_op, lambda: op(host, c.hpg, device_ids, async_op, timeout))


def monitored_barrier_(tensor, pg, device_ids, timeout, wait_all_ranks):
    host_group.check_not_forked("monitored_barrier")
    group = torch.distributed.ProcessGroup.unbox(pg)
    hpg = host_group.host_group_for(group, "monitored_barrier").boxed()
    issuer = host_group.issuer_for(group)
    host = torch.empty(tensor.shape, dtype=tensor.dtype)

    def call():
        _c10d.monitored_barrier_.default(host, hpg, device_ids, timeout, wait_all_ranks)

    if issuer is None:
        return call()
    if issuer.run_inline():
        try:
            return call()
        finally:
            issuer.done()
    # Behind queued calls: run in order on the issuer's thread, and wait for it (it blocks).
    finished, outcome = threading.Event(), []

    def job():
        try:
            call()
        except Exception as exc:
            outcome.append(exc)
        finished.set()

    issuer.submit(job)
    finished.wait()
    if outcome:
        raise outcome[0]


# Point-to-point calls are issued on the caller's thread (in order with the issuer's calls), as
# asynchronous ones: a send and a receive posted together must not wait for each other.


def send(tensors, pg, dst, tag):
    c = _Call("send", pg)
    host = [c.st.read(t) for t in tensors]
    op = _c10d.send.default
    return c.issue(list(tensors), True, lambda: op(host, c.hpg, dst, tag), defer=False)


def recv_(tensors, pg, src, tag):
    c = _Call("recv", pg, waits=False)
    host = [c.st.write(t) for t in tensors]
    op = _c10d.recv_.default
    return c.issue(list(tensors), True, lambda: op(host, c.hpg, src, tag), defer=False)


def recv_any_source_(tensors, pg, tag):
    c = _Call("recv", pg, waits=False)
    host = [c.st.write(t) for t in tensors]
    op = _c10d.recv_any_source_.default
    return c.issue(list(tensors), True, lambda: op(host, c.hpg, tag), defer=False)


KERNELS = {
    "broadcast_": broadcast_,
    "allreduce_": allreduce_,
    "allreduce_coalesced_": allreduce_coalesced_,
    "reduce_": reduce_,
    "allgather_": allgather_,
    "_allgather_base_": _allgather_base_,
    "allgather_coalesced_": allgather_coalesced_,
    "allgather_into_tensor_coalesced_": allgather_into_tensor_coalesced_,
    "reduce_scatter_": reduce_scatter_,
    "_reduce_scatter_base_": _reduce_scatter_base_,
    "reduce_scatter_tensor_coalesced_": reduce_scatter_tensor_coalesced_,
    "gather_": gather_,
    "scatter_": scatter_,
    "alltoall_": alltoall_,
    "alltoall_base_": alltoall_base_,
    "barrier": barrier,
    "monitored_barrier_": monitored_barrier_,
    "send": send,
    "recv_": recv_,
    "recv_any_source_": recv_any_source_,
}


def register_kernels() -> list[str]:
    """Registers the kernels above for the ocl device (once); returns the c10d ops it covered.
    Ops this torch does not define are left out (the list says which were covered)."""
    global _LIBRARY
    if _LIBRARY is not None:
        return list(KERNELS)
    library = torch.library.Library("c10d", "IMPL", "PrivateUse1")
    covered = []
    with warnings.catch_warnings():
        # PyTorch registers a PrivateUse1 kernel for each of these ops that forwards to the
        # device's backend; replacing it is the point, so its "overriding a kernel" warning is
        # expected here.
        warnings.simplefilter("ignore")
        for name, fn in KERNELS.items():
            if not hasattr(torch.ops.c10d, name):
                continue
            library.impl(name, fn)
            covered.append(name)
    _LIBRARY = library
    return covered
