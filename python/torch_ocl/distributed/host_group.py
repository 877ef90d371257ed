"""Which host backend serves a process group's ocl tensors, and fork safety.

A process group holds one backend per device type. The one registered for ``ocl`` is a Gloo
backend: ours (``"oclgloo"``, see `process_group.py`), or Gloo itself when the group was created
with ``"gloo"`` (torch-ocl adds ``ocl`` to Gloo's device list). A group created for the CPU only
(e.g. ``"cpu:gloo"``) has none: its CPU backend serves ocl tensors then, as torch's collectives
on a CPU tensor would.

The staged collectives call c10d's ops again with host tensors, so they need a process group
whose *CPU* backend is that backend: `host_group_for` builds one (a bare ``ProcessGroup`` holding
only that backend, cached per group) instead of changing the caller's group.
"""

from __future__ import annotations

import os
import weakref

import torch

_HOST_GROUPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SERVED: set[int] = set()  # id() of every group served in this process (for the fork check)
_INHERITED: set[int] = set()  # ...and of those served before this process was forked


def _backend_for_ocl(pg, op_name: str):
    for device in ("ocl", "cpu"):
        try:
            return pg._get_backend(torch.device(device))
        except RuntimeError:
            continue
    raise RuntimeError(
        f"torch-ocl: {op_name}: this process group has no backend for ocl or CPU tensors. Create "
        'it with init_process_group("gloo"), init_process_group("oclgloo"), '
        'init_process_group("cpu:gloo,ocl:oclgloo") or init_process_group() (the default for '
        "ocl is oclgloo), or new_group(backend=...) with one of these"
    )


def host_group_for(pg, op_name: str):
    """A process group whose CPU backend is the backend serving `pg`'s ocl tensors."""
    cached = _HOST_GROUPS.get(pg)
    if cached is not None:
        return cached
    from torch.distributed import ProcessGroup, ProcessGroupGloo

    backend = _backend_for_ocl(pg, op_name)
    kind = (
        ProcessGroup.BackendType.GLOO
        if isinstance(backend, ProcessGroupGloo)
        else ProcessGroup.BackendType.CUSTOM
    )
    host = ProcessGroup(pg.rank(), pg.size())
    host._set_default_backend(kind)
    if pg.bound_device_id is not None:  # registering a backend sets its bound device
        host.bound_device_id = pg.bound_device_id
    host._register_backend(torch.device("cpu"), kind, backend)
    _HOST_GROUPS[pg] = host
    _SERVED.add(id(pg))
    return host


def check_not_forked(op_name: str) -> None:
    """Refuses a collective in a forked child whose OpenCL state or process group came from the
    parent: neither survives fork()."""
    if _INHERITED or torch.ocl._is_in_bad_fork():
        raise RuntimeError(
            f"torch-ocl: {op_name} in a process forked from one that used the ocl device or a "
            "torch.distributed process group: neither the OpenCL context nor the group's "
            "connections survive fork(). Start the processes with the 'spawn' start method "
            "(torch.multiprocessing.spawn, torchrun, DataLoader(multiprocessing_context="
            "'spawn')) and call init_process_group in each of them"
        )


def _after_fork_in_child() -> None:
    _INHERITED.update(_SERVED)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
