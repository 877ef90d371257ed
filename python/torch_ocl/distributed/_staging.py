"""Handing ocl tensors to a collective that runs on the host (Gloo): mapped or staged.

A `Staging` collects, for one collective call, the host tensors that stand in for the caller's
ocl tensors:

- `read(t)`: Gloo only reads `t`;
- `write(t)`: Gloo only writes `t`;
- `update(t)`: Gloo reads and writes `t` (in place).

Each ocl tensor is either *mapped* or *staged* (`_transfer.py` decides, per device):

- mapped: the host tensor aliases the ocl tensor's device memory, mapped into the host's address
  space on the stream current at the call (``torch.ops.ocl._host_map``); Gloo works on it in
  place, and the mapping ends (an unmap on the same stream) when the collective has completed.
  No copy either way;
- staged: the host tensor is a pinned copy (device-to-host, enqueued without a wait) for `read`
  and `update`, an empty pinned tensor for `write`; written host tensors are copied back
  afterwards.

`wait_for_reads()` then makes the host wait once per device for the copies and maps (Gloo reads
host memory, so this wait is part of the communication the caller asked for). `finish(work)`
chains the end onto Gloo's work: when the collective has completed, the mappings end and every
staged written tensor is copied into its ocl tensor with a non-blocking copy enqueued on the
stream that was current at the call, and only then does the returned work complete. Waiting for
the returned work therefore waits for the communication and the enqueueing of the unmaps and
copies, never for the device.

Failures: a staged ocl tensor is written only by the copy back, which starts only after the whole
collective succeeded, so a failed collective leaves it unchanged. A mapped tensor is Gloo's
working memory: a collective that fails part-way may leave it partly written, and the error says
so (TORCH_OCL_DISTRIBUTED_TRANSFER=copy keeps tensors unchanged on failure).

Pinned blocks come from torch-ocl's host allocator, which keeps a block from reuse until the
asynchronous copies reading or writing it have completed, so a staging buffer can be freed as
soon as its copy is enqueued. A mapping keeps its ocl tensor's memory alive until it ends.
"""

from __future__ import annotations

import collections
import threading

import torch

from . import _transfer

_OCL = "ocl"


def _extent(t: torch.Tensor) -> int:
    """How many elements of `t`'s storage lie from its first element to its last."""
    return 1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride(), strict=True))


def _gapped(t: torch.Tensor) -> bool:
    """Whether `t`'s elements leave gaps in the storage between its first and last element
    (a strided window of a larger tensor). Gloo takes a CPU tensor's memory as `numel`
    contiguous elements from the first, whatever its strides: for such a tensor it reduces
    or overwrites elements of the gaps too, and torch-ocl hands it the same memory."""
    return bool(t.numel()) and not t.is_contiguous() and _extent(t) > t.numel()


def _host_like(t: torch.Tensor) -> torch.Tensor:
    """An empty pinned host tensor with `t`'s sizes, dtype and (when `t` is not contiguous) its
    strides, so that Gloo sees the layout the caller passed and accepts or refuses it as it
    would a CPU tensor."""
    if t.is_contiguous():
        return torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, pin_memory=True)


class Staging:
    """Host stand-ins for the ocl tensors of one collective call (see the module's docstring)."""

    def __init__(self, op_name: str, rank: int, world_size: int, group=None, waits: bool = True):
        self.op_name = op_name
        # False for a collective that never waits for the device (recv: it only writes): its
        # outputs are staged, as a mapped output must wait for pending device work first.
        self.waits = waits
        self._mapped: list[torch.Tensor] = []  # host tensors that alias mapped device memory
        self._mapped_written = 0  # ...of which Gloo writes that many
        self.group = group  # for naming dead peers in an error
        self.rank = rank
        self.world_size = world_size
        self._back: list[tuple[torch.Tensor, torch.Tensor, torch.Stream]] = []
        self._read_devices: dict[torch.device, torch.Stream] = {}
        self._read_events: list[torch.Event] = []
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
            self._unmap()  # the tensors seen so far
            self._back = []
            raise ValueError(
                f"torch-ocl: {self.op_name}: its tensors are on different devices ({self._device} "
                f"and {t.device}); a collective takes tensors of one device: move them all to "
                f"{self._device if self._device.type == _OCL else t.device} (or all to the CPU)"
            )

    def _map(self, t: torch.Tensor, write: bool, invalidate: bool = False) -> torch.Tensor | None:
        """A host tensor aliasing `t`'s mapped device memory, or None where `t` is staged
        (also a tensor whose elements overlap: Gloo would reach beyond the mapped range)."""
        if not (t.numel() and _transfer.maps(t.device)) or _extent(t) < t.numel():
            return None
        host = torch.ops.ocl._host_map(t, write, invalidate)
        self._mapped.append(host)
        self._mapped_written += write
        self._read_devices.setdefault(t.device, self._stream(t))  # the map must complete
        return host

    def _copy_in(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(host tensor for Gloo, device range, host range): a pinned copy of `t`'s storage
        range, from its first element to its last (a gapped tensor's gaps included, see
        _gapped), enqueued without a wait; the host tensor views it with `t`'s layout."""
        if _gapped(t):
            dev = t.as_strided((_extent(t),), (1,))
            flat = torch.empty(dev.shape, dtype=t.dtype, pin_memory=True)
            host = flat.as_strided(t.size(), t.stride(), 0)
        else:
            dev, host = t, _host_like(t)
            flat = host
        if t.numel():
            flat.copy_(dev, non_blocking=True)
            self._read_devices.setdefault(t.device, self._stream(t))
        return host, dev, flat

    def read(self, t: torch.Tensor) -> torch.Tensor:
        self._see(t)
        if t.device.type != _OCL:
            return t
        host = self._map(t, write=False)
        return host if host is not None else self._copy_in(t)[0]

    def write(self, t: torch.Tensor) -> torch.Tensor:
        self._see(t)
        if t.device.type != _OCL:
            return t
        host = self._map(t, write=True, invalidate=True) if self.waits else None
        if host is not None:
            return host
        if _gapped(t):  # Gloo overwrites part of the gaps: they must hold what they held
            return self.update(t)
        host = _host_like(t)
        self._back.append((t, host, self._stream(t)))
        return host

    def update(self, t: torch.Tensor) -> torch.Tensor:
        self._see(t)
        if t.device.type != _OCL:
            return t
        host = self._map(t, write=True)
        if host is not None:
            return host
        host, dev, flat = self._copy_in(t)
        self._back.append((dev, flat, self._stream(t)))
        return host

    def _unmap(self) -> None:
        """Ends the mappings (unmaps enqueued on their streams, without waiting)."""
        mapped, self._mapped = self._mapped, []
        for host in mapped:
            torch.ops.ocl._host_unmap(host)

    def call(self, op, *args):
        """Runs c10d op `op` on the host tensors; if it raises (Gloo refused the call), the
        mappings end and the staged buffers are dropped before the error propagates."""
        try:
            return op(*args)
        except BaseException:
            self._unmap()
            self._back = []
            raise

    def record_reads(self) -> None:
        """Records, on each stream that copies or maps for this call, an event behind that
        work (on the calling thread: the event must not cover device work enqueued later)."""
        streams, self._read_devices = list(self._read_devices.values()), {}
        for stream in streams:
            event = torch.Event(device=stream.device)
            event.record(stream)
            self._read_events.append(event)

    def wait_for_reads(self) -> None:
        """One host wait per device for the copies and maps enqueued by read/write/update."""
        self.record_reads()
        events, self._read_events = self._read_events, []
        for event in events:
            try:
                event.synchronize()
            except RuntimeError as exc:
                self._unmap()
                self._back = []
                if torch.ocl.get_sync_debug_mode() != 2:
                    raise
                raise RuntimeError(
                    f"torch-ocl: {self.op_name} must wait for the device once: Gloo reads the ocl "
                    "tensors from host memory. Sync debug mode 'error' forbids host waits; "
                    "'warn' reports them instead (torch.ocl.set_sync_debug_mode('warn'))"
                ) from exc

    def _copy_back(self) -> None:
        self._unmap()
        back, self._back = self._back, []
        for dst, host, stream in back:
            if dst.numel():
                with stream:
                    dst.copy_(host, non_blocking=True)
        # The host buffers go back to the pinned allocator's cache now (reused once the copies
        # have read them), not when the work object dies: the latest works stay referenced.

    def _error(self, exc: BaseException) -> BaseException:
        if self._mapped_written:
            changed = (
                "Gloo worked in place on the ocl tensors' mapped memory, so the ocl tensors it "
                "writes may hold partial results; TORCH_OCL_DISTRIBUTED_TRANSFER=copy keeps them "
                "unchanged on failure"
            )
        else:
            changed = (
                "no ocl tensor was written; the ocl tensors hold what they held before the call"
                if self._back
                else "it writes no ocl tensor; the ocl tensors hold what they held before the call"
            )
        self._unmap()
        self._back = []  # drop the host buffers
        peers = ""
        if self.group is not None:
            from .host_group import describe_dead_peers

            peers = describe_dead_peers(self.group)
        message = (
            f"torch-ocl: {self.op_name} on rank {self.rank} of {self.world_size} failed "
            f"({changed}). {peers}Gloo's error: {exc}"
        )
        try:
            return type(exc)(message)
        except Exception:  # an exception type with another constructor
            return RuntimeError(message)

    def finish(self, work, value: list[torch.Tensor]):
        """The work to return for Gloo's `work` (a c10d Work): it completes with `value` after
        the mappings ended and the copies back were enqueued, or fails with Gloo's error."""
        return _work(self.finish_future(work, value), self)

    def finish_now(self, work, value: list[torch.Tensor]):
        """For a synchronous call: waits for Gloo's `work` here, ends the transfer (unmaps,
        copies back) and returns a completed work; raises Gloo's error (with torch-ocl's
        account of the tensors) if it failed."""
        try:
            work.wait()
        except Exception as exc:
            self.error = self._error(exc)
            raise self.error from exc
        self._copy_back()
        future = torch.futures.Future()
        future.set_result(value)
        return _work(future, self)

    def finish_future(self, work, value: list[torch.Tensor]) -> torch.futures.Future:
        """finish()'s future."""
        try:
            gloo_future = work.get_future()
        except RuntimeError:  # some of Gloo's works have no future (reduce_scatter_tensor, p2p)
            return self._future_from_wait(work, value)

        def copy_back(fut: torch.futures.Future):
            try:
                fut.value()
            except Exception as exc:
                self.error = self._error(exc)
                raise self.error from exc
            self._copy_back()
            return value

        return gloo_future.then(copy_back)

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
