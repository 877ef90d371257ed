"""Staging ocl tensors through pinned host memory for a collective that runs on the host (Gloo).

A `Staging` collects, for one collective call, the host tensors that stand in for the caller's
ocl tensors:

- `read(t)`: Gloo only reads `t`: a pinned host copy (device-to-host, enqueued without a wait);
- `write(t)`: Gloo only writes `t`: an empty pinned host tensor, copied back afterwards;
- `update(t)`: Gloo reads and writes `t` (in place): both.

`wait_for_reads()` then makes the host wait once for all device-to-host copies (Gloo reads host
memory, so this wait is part of the communication the caller asked for). `finish(work)` chains
the copies back onto Gloo's work: when the collective has completed, every written host tensor is
copied into its ocl tensor with a non-blocking copy enqueued on the stream that was current at the
call, and only then does the returned work complete. Waiting for the returned work therefore waits
for the communication and the enqueueing of the copies, never for the device.

No data loss: the ocl tensors are written only by the copies back, which start only after the
whole collective succeeded. A failed collective leaves every ocl tensor unchanged, and its error
says so.

Pinned blocks come from torch-ocl's host allocator, which keeps a block from reuse until the
asynchronous copies reading or writing it have completed, so a staging buffer can be freed as
soon as its copy is enqueued.
"""

from __future__ import annotations

import collections
import threading

import torch

_OCL = "ocl"


def _host_like(t: torch.Tensor) -> torch.Tensor:
    """An empty pinned host tensor with `t`'s sizes, dtype and (when `t` is not contiguous) its
    strides, so that Gloo sees the layout the caller passed and accepts or refuses it as it
    would a CPU tensor."""
    if t.is_contiguous():
        return torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, pin_memory=True)


class Staging:
    """Host stand-ins for the ocl tensors of one collective call (see the module's docstring)."""

    def __init__(self, op_name: str, rank: int, world_size: int, group=None):
        self.op_name = op_name
        self.group = group  # for naming dead peers in an error
        self.rank = rank
        self.world_size = world_size
        self._back: list[tuple[torch.Tensor, torch.Tensor, torch.Stream]] = []
        self._read_devices: dict[torch.device, torch.Stream] = {}
        self._device: torch.device | None = None
        self.error: BaseException | None = None  # the collective's error, once it failed

    def _stream(self, t: torch.Tensor) -> torch.Stream:
        return torch.accelerator.current_stream(t.device)

    def _see(self, t: torch.Tensor) -> None:
        """All tensors of a collective must be on one device, as Gloo requires of CPU tensors
        (an ocl tensor with CPU tensors would otherwise pass here and fail nowhere)."""
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"torch-ocl: {self.op_name}: got a {type(t).__name__}, not a tensor")
        if self._device is None:
            self._device = t.device
        elif t.device != self._device:
            raise ValueError(
                f"torch-ocl: {self.op_name}: its tensors are on different devices ({self._device} "
                f"and {t.device}); a collective takes tensors of one device: move them all to "
                f"{self._device if self._device.type == _OCL else t.device} (or all to the CPU)"
            )

    def read(self, t: torch.Tensor) -> torch.Tensor:
        self._see(t)
        if t.device.type != _OCL:
            return t
        host = _host_like(t)
        if t.numel():
            host.copy_(t, non_blocking=True)
            self._read_devices.setdefault(t.device, self._stream(t))
        return host

    def write(self, t: torch.Tensor) -> torch.Tensor:
        self._see(t)
        if t.device.type != _OCL:
            return t
        host = _host_like(t)
        self._back.append((t, host, self._stream(t)))
        return host

    def update(self, t: torch.Tensor) -> torch.Tensor:
        host = self.read(t)
        if t.device.type != _OCL:
            return t
        self._back.append((t, host, self._stream(t)))
        return host

    def wait_for_reads(self) -> None:
        """One host wait per device for all device-to-host copies enqueued by read()/update()."""
        streams, self._read_devices = list(self._read_devices.values()), {}
        for stream in streams:
            event = torch.Event(device=stream.device)
            event.record(stream)
            try:
                event.synchronize()
            except RuntimeError as exc:
                if torch.ocl.get_sync_debug_mode() != 2:
                    raise
                raise RuntimeError(
                    f"torch-ocl: {self.op_name} must wait for the device once: Gloo reads the ocl "
                    "tensors from host memory. Sync debug mode 'error' forbids host waits; "
                    "'warn' reports them instead (torch.ocl.set_sync_debug_mode('warn'))"
                ) from exc

    def _copy_back(self) -> None:
        back, self._back = self._back, []
        for dst, host, stream in back:
            if dst.numel():
                with stream:
                    dst.copy_(host, non_blocking=True)
        # The host buffers go back to the pinned allocator's cache now (reused once the copies
        # have read them), not when the work object dies: the latest works stay referenced.

    def _error(self, exc: BaseException) -> BaseException:
        changed = "no ocl tensor was written" if self._back else "it writes no ocl tensor"
        self._back = []  # drop the host buffers
        peers = ""
        if self.group is not None:
            from .host_group import describe_dead_peers

            peers = describe_dead_peers(self.group)
        message = (
            f"torch-ocl: {self.op_name} on rank {self.rank} of {self.world_size} failed, so its "
            f"result was not copied back ({changed}; the ocl tensors hold what they held before "
            f"the call). {peers}Gloo's error: {exc}"
        )
        try:
            return type(exc)(message)
        except Exception:  # an exception type with another constructor
            return RuntimeError(message)

    def finish(self, work, value: list[torch.Tensor]):
        """The work to return for Gloo's `work` (a c10d Work): it completes with `value` after
        the copies back were enqueued, or fails with Gloo's error (tensors unchanged)."""
        try:
            gloo_future = work.get_future()
        except RuntimeError:  # some of Gloo's works have no future (reduce_scatter_tensor, p2p)
            return _work(self._future_from_wait(work, value), self)

        def copy_back(fut: torch.futures.Future):
            try:
                fut.value()
            except Exception as exc:
                self.error = self._error(exc)
                raise self.error from exc
            self._copy_back()
            return value

        return _work(gloo_future.then(copy_back), self)

    def _future_from_wait(self, work, value) -> torch.futures.Future:
        """A future completed by a waiter thread once `work.wait()` returns and the copies back
        are enqueued (the thread waits for Gloo, never for the device)."""
        future = torch.futures.Future()

        def wait_then_copy_back():
            try:
                work.wait()
                self._copy_back()
            except Exception as exc:
                self.error = self._error(exc)
                future.set_exception(self.error)
            else:
                future.set_result(value)

        _waiters().submit(wait_then_copy_back)
        return future


_WAITERS = None
_ALIVE: set = set()  # works whose future has not completed yet
_RECENT: collections.deque = collections.deque(maxlen=4096)  # ...and the latest completed ones


def _work(future: torch.futures.Future, staging: Staging):
    """A c10d Work for `future` whose wait() raises the future's error.

    (``_create_work_from_future``'s work ignores errors in wait(), so a failed synchronous
    collective would pass silently.) The Python object must stay alive while C++ may still call
    it - a C++ holder of a Python work whose object was collected would wait forever in the base
    class - so the pending works and the latest 4096 completed ones are kept referenced.
    """
    work = _StagedWork(future, staging)
    _ALIVE.add(work)

    def done(_):
        _ALIVE.discard(work)
        _RECENT.append(work)
        work._done.set()

    future.add_done_callback(done)
    return work


def _make_work_class():
    import torch.distributed as dist

    class StagedWork(dist._Work):
        def __init__(self, future, staging):
            super().__init__()
            self._future = future
            self._staging = staging
            # Waiting on a threading.Event lets the thread that completes the collective take
            # the GIL at once (Future.wait() from here held it up to a switch interval, 5 ms).
            self._done = threading.Event()

        def wait(self, timeout=None):
            self._done.wait()
            try:
                self._future.wait()
            except Exception:
                if self._staging.error is not None:  # torch-ocl's message, not the callback's
                    raise self._staging.error from None
                raise
            return True

        def get_future(self):
            return self._future

        def is_completed(self):
            return self._future.done()

        def is_success(self):
            if not self._future.done():
                return False
            try:
                self._future.value()
            except Exception:
                return False
            return True

        def exception(self):
            if not self._future.done():
                return None
            try:
                self._future.value()
            except Exception as exc:
                return exc
            return None

        def result(self):
            return self._future.value()

        def synchronize(self):
            pass  # the copies back are enqueued on the caller's stream: nothing to order

    return StagedWork


class _LazyWorkClass:
    cls = None


def _StagedWork(future, staging):
    if _LazyWorkClass.cls is None:
        _LazyWorkClass.cls = _make_work_class()
    return _LazyWorkClass.cls(future, staging)


def _waiters():
    """Threads that wait for Gloo works without a future (created on first use; several, so that
    a work that completes late never delays the completion of others)."""
    global _WAITERS
    if _WAITERS is None:
        from concurrent.futures import ThreadPoolExecutor

        _WAITERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="torch_ocl_dist")
    return _WAITERS
