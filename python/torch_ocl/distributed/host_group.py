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
import socket
import time
import weakref

import torch

from . import _issuer

_HOST_GROUPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ISSUERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # group -> Issuer or None
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


def _serves_ocl_only(pg, backend) -> bool:
    """Whether `backend` (the one serving `pg`'s ocl tensors) serves no CPU tensors of `pg`:
    then torch-ocl's kernels are its only callers."""
    try:
        cpu = pg._get_backend(torch.device("cpu"))
    except RuntimeError:
        return True
    return cpu is not backend  # both wrappers alive: the same backend gives the same object


def issuer_for(pg):
    """The `_issuer.Issuer` through which every call on `pg`'s ocl backend goes, or None where
    calls are issued on the caller's thread (the backend serves CPU tensors too). Call
    `host_group_for(pg)` first."""
    return _ISSUERS.get(pg)


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
    _announce(pg)
    _ISSUERS[pg] = _issuer.Issuer(str(id(pg))) if _serves_ocl_only(pg, backend) else None
    _HOST_GROUPS[pg] = host
    _SERVED.add(id(pg))
    return host


def _announce(pg) -> None:
    """Writes this rank's (host name, process id) into the group's store, so that another
    rank's error can say which rank died. Runs at this rank's first ocl collective on the group;
    nothing waits for the other ranks' entries (a send involves two ranks only): an error reads
    whatever entries exist."""
    try:
        store = pg.get_group_store()
        store.set(f"torch_ocl/peer/{pg.rank()}", f"{socket.gethostname()}\n{os.getpid()}")
    except Exception:  # a store that refuses: errors just say less
        pass


def _peers(pg) -> dict[int, tuple[str, int]]:
    """The (host, pid) entries of `pg`'s ranks that announced themselves (never blocks)."""
    peers = {}
    try:
        store = pg.get_group_store()
        for rank in range(pg.size()):
            key = f"torch_ocl/peer/{rank}"
            if store.check([key]):
                host, pid = store.get(key).decode().split("\n")
                peers[rank] = (host, int(pid))
    except Exception:  # the store itself may be gone with a dead rank (TCPStore on rank 0)
        pass
    return peers


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: a process that has exited but was not reaped yet is a zombie ("Z")
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return True


def describe_dead_peers(pg) -> str:
    """Which ranks of `pg` on this machine no longer run (for an error message)."""
    peers = _peers(pg)
    if not peers:
        return ""
    here = socket.gethostname()
    for _ in range(10):  # a peer's connections close a moment before its process ends
        dead = [
            f"rank {rank} (process {pid})"
            for rank, (host, pid) in sorted(peers.items())
            if host == here and rank != pg.rank() and not _running(pid)
        ]
        if dead:
            break
        time.sleep(0.05)
    if dead:
        verb = "is" if len(dead) == 1 else "are"
        return f"{', '.join(dead)} on this machine {verb} no longer running. "
    remote = sorted({host for host, _ in peers.values() if host != here})
    if remote:
        return (
            "Every rank on this machine still runs; one on " + ", ".join(remote) + " may have "
            "died or hung (Gloo's message names the peer's address). "
        )
    if len(peers) == pg.size():
        return "Every rank still runs: one of them may hang or have left the collective out. "
    return (
        f"No rank of this machine known to this group has died ({pg.size() - len(peers)} "
        "rank(s) ran no ocl collective on it before). "
    )


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
