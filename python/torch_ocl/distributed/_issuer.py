"""Issuing a process group's Gloo calls off the caller's thread, in call order.

A collective on ocl tensors must wait for the device before Gloo may read the tensors (their
copies or mappings must be complete). Done on the calling thread, that wait holds up whatever the
caller would enqueue next: in DDP, the caller is autograd's thread, which launches a gradient
bucket's all_reduce in the middle of the backward pass, so the backward kernels behind the bucket
are enqueued only once the device has drained.

An `Issuer` takes over that wait and the Gloo call for asynchronous collectives (``async_op=True``:
DDP's buckets, FSDP's, ``dist.all_reduce(..., async_op=True)``): the caller enqueues the copies or
maps, records an event behind them, hands the rest to the issuer's thread and returns a work at
once. The thread waits for the event, then issues the Gloo call.

Gloo matches the calls of the ranks by the order in which each rank issues them on a backend, so
every call on that backend must pass through the same issuer, in the caller's order: a backend
gets an issuer only when torch-ocl's kernels are its only callers (a group whose ocl tensors have
a backend of their own, as ``"cpu:gloo,ocl:oclgloo"`` gives them). A synchronous call runs on the
calling thread when the issuer has nothing queued or running, else it queues behind the earlier
calls like the others (its caller waits for it anyway).
"""

from __future__ import annotations

import collections
import os
import threading

ENV = "TORCH_OCL_DISTRIBUTED_OVERLAP"
_enabled: bool | None = None  # None: not read from the environment yet


def enabled() -> bool:
    """Whether asynchronous calls go to the issuer's thread (TORCH_OCL_DISTRIBUTED_OVERLAP=0 or
    set_enabled(False): no; calls then run on their caller's thread, still in order)."""
    global _enabled
    if _enabled is None:
        _enabled = os.environ.get(ENV, "1") != "0"
    return _enabled


def set_enabled(on: bool) -> None:
    global _enabled
    _enabled = bool(on)


class Issuer:
    def __init__(self, name: str):
        self._name = name
        self._cond = threading.Condition()
        self._queue: collections.deque = collections.deque()
        self._busy = False  # a job runs (on the thread or inline)
        self._thread: threading.Thread | None = None

    def run_inline(self) -> bool:
        """Claims the issuer for a job the caller runs itself, if nothing is queued or running;
        the caller must call `done()` afterwards."""
        with self._cond:
            if self._busy or self._queue:
                return False
            self._busy = True
            return True

    def done(self) -> None:
        with self._cond:
            self._busy = False
            self._cond.notify_all()

    def submit(self, job) -> None:
        """Queues `job` (a callable that never raises) behind the earlier ones."""
        with self._cond:
            self._queue.append(job)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name=f"torch_ocl_issuer_{self._name}", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._busy or not self._queue:
                    self._cond.wait()
                job = self._queue.popleft()
                self._busy = True
            try:
                job()
            finally:
                self.done()
