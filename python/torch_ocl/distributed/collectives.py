"""The ocl (PrivateUse1) kernels of PyTorch's c10d collective ops.

Every collective of torch.distributed reaches a c10d op (``torch.ops.c10d.allreduce_``, ...) that
the dispatcher sends, by the tensors' device, to a per-device kernel; PyTorch's own PrivateUse1
kernel hands the call to the backend registered for the device. No OpenCL collective library
exists, so torch-ocl replaces these kernels: each stages the ocl tensors through pinned host memory
(`_staging.Staging`) and calls the same c10d op again with the host tensors, on a process group
that holds the Gloo backend serving ocl tensors for the caller's group (`host_group.py`). Gloo then
runs exactly what it runs for CPU tensors (same reduce ops, same checks, same errors), and the
results are copied back with non-blocking copies once the collective has completed.

Tensors that are not on an ocl device pass through unchanged (Gloo sees them as it would anyway);
a tensor on another device type (e.g. meta) is refused with a message.
"""

from __future__ import annotations

import warnings

import torch

from . import host_group
from ._staging import Staging

_c10d = torch.ops.c10d

# The library object must live as long as the process: dropping it unregisters the kernels.
_LIBRARY: torch.library.Library | None = None


def _start(name: str, pg_boxed):
    """(staging, host process group boxed) for a call of c10d op `name` on `pg_boxed`."""
    host_group.check_not_forked(name)
    pg = torch.distributed.ProcessGroup.unbox(pg_boxed)
    host = host_group.host_group_for(pg, name).boxed()
    return Staging(name, pg.rank(), pg.size(), pg), host


def _unbox(work_boxed):
    return torch._C._distributed_c10d.Work.unbox(work_boxed)


def broadcast_(tensors, pg, root_rank, root_tensor, async_op=True, timeout=-1):
    st, hpg = _start("broadcast", pg)
    rank = torch.distributed.ProcessGroup.unbox(pg).rank()
    host = [st.read(t) if rank == root_rank else st.update(t) for t in tensors]
    st.wait_for_reads()
    _, work = _c10d.broadcast_.default(host, hpg, root_rank, root_tensor, async_op, timeout)
    return tensors, st.finish(_unbox(work), list(tensors)).boxed()


def allreduce_(tensors, pg, reduce_op, sparse_indices=None, async_op=True, timeout=-1):
    st, hpg = _start("all_reduce", pg)
    host = [st.update(t) for t in tensors]
    st.wait_for_reads()
    _, work = _c10d.allreduce_.default(host, hpg, reduce_op, sparse_indices, async_op, timeout)
    return tensors, st.finish(_unbox(work), list(tensors)).boxed()


def allreduce_coalesced_(tensors, pg, reduce_op, async_op=True, timeout=-1):
    st, hpg = _start("all_reduce_coalesced", pg)
    host = [st.update(t) for t in tensors]
    st.wait_for_reads()
    work = _c10d.allreduce_coalesced_.default(host, hpg, reduce_op, async_op, timeout)
    return st.finish(_unbox(work), list(tensors)).boxed()


def reduce_(tensors, pg, reduce_op, root_rank, root_tensor, async_op=True, timeout=-1):
    st, hpg = _start("reduce", pg)
    host = [st.update(t) for t in tensors]
    st.wait_for_reads()
    work = _c10d.reduce_.default(host, hpg, reduce_op, root_rank, root_tensor, async_op, timeout)
    return st.finish(_unbox(work), list(tensors)).boxed()


def allgather_(output_tensors, input_tensors, pg, async_op=True, timeout=-1):
    st, hpg = _start("all_gather", pg)
    host_out = [[st.write(t) for t in outs] for outs in output_tensors]
    host_in = [st.read(t) for t in input_tensors]
    st.wait_for_reads()
    _, work = _c10d.allgather_.default(host_out, host_in, hpg, async_op, timeout)
    flat = [t for outs in output_tensors for t in outs]
    return output_tensors, st.finish(_unbox(work), flat).boxed()


def _allgather_base_(output_tensor, input_tensor, pg, async_op=True, timeout=-1):
    st, hpg = _start("all_gather_into_tensor", pg)
    host_out, host_in = st.write(output_tensor), st.read(input_tensor)
    st.wait_for_reads()
    _, work = _c10d._allgather_base_.default(host_out, host_in, hpg, async_op, timeout)
    return output_tensor, st.finish(_unbox(work), [output_tensor]).boxed()


def allgather_coalesced_(output_lists, input_list, pg, async_op=True):
    st, hpg = _start("all_gather_coalesced", pg)
    host_out = [[st.write(t) for t in outs] for outs in output_lists]
    host_in = [st.read(t) for t in input_list]
    st.wait_for_reads()
    work = _c10d.allgather_coalesced_.default(host_out, host_in, hpg, async_op)
    flat = [t for outs in output_lists for t in outs]
    return st.finish(_unbox(work), flat).boxed()


def allgather_into_tensor_coalesced_(outputs, inputs, pg, async_op=True):
    st, hpg = _start("all_gather_into_tensor_coalesced", pg)
    host_out = [st.write(t) for t in outputs]
    host_in = [st.read(t) for t in inputs]
    st.wait_for_reads()
    work = _c10d.allgather_into_tensor_coalesced_.default(host_out, host_in, hpg, async_op)
    return st.finish(_unbox(work), list(outputs)).boxed()


def reduce_scatter_(output_tensors, input_tensors, pg, reduce_op, async_op=True, timeout=-1):
    st, hpg = _start("reduce_scatter", pg)
    host_out = [st.write(t) for t in output_tensors]
    host_in = [[st.read(t) for t in ins] for ins in input_tensors]
    st.wait_for_reads()
    _, work = _c10d.reduce_scatter_.default(host_out, host_in, hpg, reduce_op, async_op, timeout)
    return output_tensors, st.finish(_unbox(work), list(output_tensors)).boxed()


def _reduce_scatter_base_(output_tensor, input_tensor, pg, reduce_op, async_op=True, timeout=-1):
    st, hpg = _start("reduce_scatter_tensor", pg)
    host_out, host_in = st.write(output_tensor), st.read(input_tensor)
    st.wait_for_reads()
    _, work = _c10d._reduce_scatter_base_.default(
        host_out, host_in, hpg, reduce_op, async_op, timeout
    )
    return output_tensor, st.finish(_unbox(work), [output_tensor]).boxed()


def reduce_scatter_tensor_coalesced_(outputs, inputs, pg, reduce_op, async_op=True, timeout=-1):
    st, hpg = _start("reduce_scatter_tensor_coalesced", pg)
    host_out = [st.write(t) for t in outputs]
    host_in = [st.read(t) for t in inputs]
    st.wait_for_reads()
    work = _c10d.reduce_scatter_tensor_coalesced_.default(
        host_out, host_in, hpg, reduce_op, async_op, timeout
    )
    return st.finish(_unbox(work), list(outputs)).boxed()


def gather_(output_tensors, input_tensors, pg, root_rank, async_op=True, timeout=-1):
    st, hpg = _start("gather", pg)
    host_out = [[st.write(t) for t in outs] for outs in output_tensors]
    host_in = [st.read(t) for t in input_tensors]
    st.wait_for_reads()
    work = _c10d.gather_.default(host_out, host_in, hpg, root_rank, async_op, timeout)
    flat = [t for outs in output_tensors for t in outs]
    return st.finish(_unbox(work), flat).boxed()


def scatter_(output_tensors, input_tensors, pg, root_rank, async_op=True, timeout=-1):
    st, hpg = _start("scatter", pg)
    host_out = [st.write(t) for t in output_tensors]
    host_in = [[st.read(t) for t in ins] for ins in input_tensors]
    st.wait_for_reads()
    _, work = _c10d.scatter_.default(host_out, host_in, hpg, root_rank, async_op, timeout)
    return output_tensors, st.finish(_unbox(work), list(output_tensors)).boxed()


def alltoall_(output_tensors, input_tensors, pg, async_op=True, timeout=-1):
    st, hpg = _start("all_to_all", pg)
    host_out = [st.write(t) for t in output_tensors]
    host_in = [st.read(t) for t in input_tensors]
    st.wait_for_reads()
    _, work = _c10d.alltoall_.default(host_out, host_in, hpg, async_op, timeout)
    return output_tensors, st.finish(_unbox(work), list(output_tensors)).boxed()


def alltoall_base_(output, input, pg, output_split_sizes, input_split_sizes, async_op=True,
                   timeout=-1):  # fmt: skip
    st, hpg = _start("all_to_all_single", pg)
    host_out, host_in = st.write(output), st.read(input)
    st.wait_for_reads()
    work = _c10d.alltoall_base_.default(
        host_out, host_in, hpg, output_split_sizes, input_split_sizes, async_op, timeout
    )
    return st.finish(_unbox(work), [output]).boxed()


def barrier(tensor, pg, device_ids, async_op=True, timeout=-1):
    st, hpg = _start("barrier", pg)
    # Gloo's barrier ignores the tensor; a host one keeps the device out of it.
    host = torch.empty(tensor.shape, dtype=tensor.dtype)
    work = _c10d.barrier.default(host, hpg, device_ids, async_op, timeout)
    return st.finish(_unbox(work), []).boxed()


def monitored_barrier_(tensor, pg, device_ids, timeout, wait_all_ranks):
    host_group.check_not_forked("monitored_barrier")
    hpg = host_group.host_group_for(torch.distributed.ProcessGroup.unbox(pg), "monitored_barrier")
    host = torch.empty(tensor.shape, dtype=tensor.dtype)
    _c10d.monitored_barrier_.default(host, hpg.boxed(), device_ids, timeout, wait_all_ranks)


def send(tensors, pg, dst, tag):
    st, hpg = _start("send", pg)
    host = [st.read(t) for t in tensors]
    st.wait_for_reads()
    work = _c10d.send.default(host, hpg, dst, tag)
    return st.finish(_unbox(work), list(tensors)).boxed()


def recv_(tensors, pg, src, tag):
    st, hpg = _start("recv", pg)
    host = [st.write(t) for t in tensors]
    work = _c10d.recv_.default(host, hpg, src, tag)
    return st.finish(_unbox(work), list(tensors)).boxed()


def recv_any_source_(tensors, pg, tag):
    st, hpg = _start("recv", pg)
    host = [st.write(t) for t in tensors]
    work = _c10d.recv_any_source_.default(host, hpg, tag)
    return st.finish(_unbox(work), list(tensors)).boxed()


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
