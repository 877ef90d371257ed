"""The ``oclgloo`` backend: Gloo serving ocl tensors through the host.

`create` is the function `Backend.register_backend` calls when a process group needs the
``oclgloo`` backend (``init_process_group("oclgloo")``, ``"cpu:gloo,ocl:oclgloo"``, or
``init_process_group()`` with no backend when ocl is the accelerator). It builds an ordinary
Gloo backend on the group's store: Gloo's transports (TCP, on one machine or across machines),
timeouts and error checks all apply. What makes it serve ocl tensors is torch-ocl's ocl kernels of
the c10d ops (`collectives.py`), which stage ocl tensors through pinned host memory and hand the
host tensors to this backend.

A ``"cpu:gloo,ocl:oclgloo"`` group thus holds two independent Gloo contexts (like ``"cpu:gloo,
cuda:nccl"``): collectives on CPU tensors and on ocl tensors are separate streams of collectives.
``init_process_group("oclgloo")`` makes one Gloo context serve both devices.
"""

from __future__ import annotations

from datetime import timedelta

NAME = "oclgloo"


def create(opts, backend_options=None):
    """Backend factory with PyTorch's extended API (``extended_api=True``): `opts` is a
    ``_DistributedBackendOptions`` (store, group rank and size, timeout, group name and global
    ranks); `backend_options` may be a ``ProcessGroupGloo._Options`` (e.g. with devices)."""
    from torch.distributed import ProcessGroupGloo

    timeout = opts.timeout if isinstance(opts.timeout, timedelta) else timedelta(seconds=1800)
    if isinstance(backend_options, ProcessGroupGloo._Options):
        backend_options._timeout = timeout
        gloo = ProcessGroupGloo(opts.store, opts.group_rank, opts.group_size, backend_options)
    elif backend_options is not None:
        raise TypeError(
            f"torch-ocl: the {NAME} backend takes ProcessGroupGloo options (pg_options="
            f"ProcessGroupGloo._Options()), not {type(backend_options).__name__}"
        )
    else:
        gloo = ProcessGroupGloo(opts.store, opts.group_rank, opts.group_size, timeout=timeout)
    gloo.options.global_ranks_in_group = list(opts.global_ranks_in_group)
    gloo.options.group_name = opts.group_id
    gloo._set_sequence_number_for_group()
    return gloo
