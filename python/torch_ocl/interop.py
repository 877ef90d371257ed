"""Sharing memory and queues with other OpenCL code, without copies (docs/interop.md).

An ``ocl`` tensor lives in an OpenCL buffer (``cl_mem``) of its device's context, at a byte
offset: the caching allocator carves many tensors out of one buffer. This module hands those
objects to other OpenCL code, as integer handles (:func:`handles`) or as pyopencl objects
(:func:`context`, :func:`queue`, :func:`as_pyopencl_buffer`, :func:`as_pyopencl_array`), and turns
a pyopencl buffer or array of the device's context into a tensor that shares its memory
(:func:`from_pyopencl`). pyopencl is optional: only the functions that return or take pyopencl
objects import it.

Ordering: torch-ocl's streams are in-order queues. :func:`queue` returns the queue of a torch
stream itself; commands enqueued there run after all the torch work enqueued on that stream
before, and torch's later work runs after them. A queue of your own needs events:
:func:`record_event` (a pyopencl event marking the torch stream's work so far) and
:func:`wait_event` (the torch stream waits for a pyopencl event).

DLPack: :func:`to_dlpack` / :func:`from_dlpack` exchange ``kDLOpenCL`` capsules (``data`` is the
``cl_mem``, ``byte_offset`` the tensor's offset in it). PyTorch's own ``torch.utils.dlpack`` would
describe an ``ocl`` tensor as ``kDLExtDev`` with ``data_ptr()`` as its address, which is not an
address any other library can use; torch-ocl refuses that export and says where to go instead.
"""

from __future__ import annotations

import atexit
import ctypes
import itertools
import threading
from typing import Any, NamedTuple

import torch

from ._device import _index

__all__ = [
    "Handles",
    "as_pyopencl_array",
    "as_pyopencl_buffer",
    "context",
    "from_dlpack",
    "from_pyopencl",
    "handles",
    "queue",
    "record_event",
    "to_dlpack",
    "wait_event",
]


class Handles(NamedTuple):
    """The OpenCL objects behind an ocl tensor, as integer handles (``cl_*`` pointers).

    ``mem`` is shared by other tensors of the caching allocator: the tensor's bytes start at
    ``offset`` and span ``nbytes`` (its extent: from its first to its last element). ``queue`` is
    the queue of the stream the handles were taken for (the current stream by default). The
    handles stay valid while the tensor lives; the memory is the tensor's only until it is freed.
    """

    context: int
    queue: int
    mem: int
    offset: int
    nbytes: int
    device: int


def _pyopencl():
    try:
        import pyopencl
        import pyopencl.array  # noqa: F401
    except ImportError as e:
        raise ImportError(
            "torch_ocl.interop: this function needs pyopencl (`pip install pyopencl`); "
            "handles() and to_dlpack() work without it"
        ) from e
    return pyopencl


def _check_ocl(t) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"torch_ocl.interop: expected a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "ocl":
        raise ValueError(
            f"torch_ocl.interop: expected an ocl tensor, got one on {t.device}; "
            "move it with .to('ocl') first"
        )


def _extent(t: torch.Tensor) -> int:
    """Bytes from t's first element to the end of its last (0 if it has none)."""
    if t.numel() == 0:
        return 0
    last = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True))
    return (last + 1) * t.element_size()


def _stream_of(stream, device) -> tuple[int, int]:
    if stream is None:
        idx = _index(device)
        stream = torch.accelerator.current_stream(torch.device("ocl", idx))
    if not isinstance(stream, torch.Stream) or stream.device.type != "ocl":
        raise TypeError(f"torch_ocl.interop: expected an ocl stream, got {stream!r}")
    return stream.device.index, stream.stream_id


def handles(t: torch.Tensor, stream: torch.Stream | None = None) -> Handles:
    """The context, queue, buffer and byte offset of an ocl tensor (integer handles).

    The queue is ``stream``'s (default: the current stream of the tensor's device). Taking it
    enqueues torch's work recorded for that stream so far (tiny ops may otherwise be held back to
    run in batches), and from then on torch enqueues that stream's work at once, so that commands
    you enqueue on the queue later also come after it.
    """
    _check_ocl(t)
    mem, offset, device = torch.ops.ocl._interop_buffer(t)
    if stream is not None and stream.device != t.device:
        raise ValueError(
            f"torch_ocl.interop: the tensor is on {t.device} but the stream on {stream.device}"
        )
    dev, sid = _stream_of(stream, device)
    q = torch.ops.ocl._interop_queue(dev, sid)
    return Handles(
        context=torch.ops.ocl._interop_context(device),
        queue=q,
        mem=mem,
        offset=offset,
        nbytes=_extent(t),
        device=device,
    )


_checked_devices: set[int] = set()


def _check_same_opencl(cl, device: int) -> None:
    """pyopencl and torch-ocl must talk to the same OpenCL driver instance (one ICD loader, one
    copy of the driver): otherwise handles of one mean nothing to the other."""
    if device in _checked_devices:
        return
    wanted = torch.ops.ocl._interop_device_id(device)
    for platform in cl.get_platforms():
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        if any(d.int_ptr == wanted for d in devices):
            _checked_devices.add(device)
            return
    raise RuntimeError(
        f"torch_ocl.interop: pyopencl does not see ocl:{device}'s OpenCL device "
        f"({torch.ocl.get_device_name(device)}): the two load different OpenCL libraries "
        f"(torch-ocl uses {torch.ops.ocl.library_path() or 'the system loader'}). Unset "
        "TORCH_OCL_OPENCL_LIBRARY so that torch-ocl uses pyopencl's loader, or point it at the "
        "loader pyopencl uses."
    )


def context(device=None):
    """The pyopencl Context of an ocl device (default: the current one). Build programs and
    create buffers in it to use them with that device's tensors."""
    cl = _pyopencl()
    idx = _index(device)
    _check_same_opencl(cl, idx)
    return cl.Context.from_int_ptr(torch.ops.ocl._interop_context(idx), retain=True)


def queue(stream: torch.Stream | None = None, device=None):
    """A pyopencl CommandQueue that is torch's own queue of ``stream`` (default: the current
    stream of ``device``, default the current device).

    Commands enqueued on it run in order with torch's work on that stream: after everything torch
    enqueued there before, before everything it enqueues after. Getting it enqueues the stream's
    pending tiny ops, and from then on that stream runs every op at once instead of batching
    tiny ones (a kept queue object must not overtake work torch held back).
    """
    cl = _pyopencl()
    dev, sid = _stream_of(stream, device)
    _check_same_opencl(cl, dev)
    return cl.CommandQueue.from_int_ptr(torch.ops.ocl._interop_queue(dev, sid), retain=True)


def as_pyopencl_buffer(t: torch.Tensor):
    """A pyopencl Buffer over the tensor's bytes, without a copy: a sub-buffer of the storage's
    buffer that starts at the tensor's first element and spans its extent (for a non-contiguous
    tensor, its elements lie in it at its strides).

    OpenCL allows a sub-buffer only at an offset that is a multiple of the device's base address
    alignment (``CL_DEVICE_MEM_BASE_ADDR_ALIGN``); every tensor the allocator creates starts at
    such an offset, but a view may not (``t[1:]``): then this raises, and
    :func:`as_pyopencl_array` (which carries the offset) or :func:`handles` serve instead.
    The buffer shares the tensor's memory, not its lifetime: keep the tensor alive while the
    buffer is used."""
    cl = _pyopencl()
    h = handles(t)
    _check_same_opencl(cl, h.device)
    whole = cl.Buffer.from_int_ptr(h.mem, retain=True)
    align = whole.context.devices[0].mem_base_addr_align // 8
    if h.offset % align:
        raise ValueError(
            f"torch_ocl.interop: the tensor starts at byte {h.offset} of its buffer, not a "
            f"multiple of the device's {align}-byte base address alignment, so OpenCL allows no "
            "sub-buffer there; use as_pyopencl_array(t) (it carries the offset) or handles(t), "
            "or pass t.clone() (a fresh allocation is aligned)"
        )
    return whole.get_sub_region(h.offset, h.nbytes)


_NUMPY_DTYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.float16: "float16",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}


def as_pyopencl_array(t: torch.Tensor, command_queue=None):
    """A ``pyopencl.array.Array`` that views the tensor's memory (same shape, strides, offset and
    dtype), without a copy; its queue is torch's current queue of the tensor's device (see
    :func:`queue`) unless ``command_queue`` is given. bfloat16 has no NumPy dtype: view such a
    tensor as int16 first (``t.view(torch.int16)``). Keep the tensor alive while the array is
    used."""
    cl = _pyopencl()
    import numpy as np

    _check_ocl(t)
    if t.dtype not in _NUMPY_DTYPES:
        raise TypeError(
            f"torch_ocl.interop: {t.dtype} has no NumPy dtype for a pyopencl array; view the "
            "tensor as an integer type of the same size (t.view(torch.int16)) or use "
            "as_pyopencl_buffer(t)"
        )
    if t.numel() == 0:
        raise ValueError("torch_ocl.interop: an empty tensor has no OpenCL buffer to view")
    h = handles(t)
    _check_same_opencl(cl, h.device)
    q = command_queue
    if q is None:
        q = cl.CommandQueue.from_int_ptr(h.queue, retain=True)
    whole = cl.Buffer.from_int_ptr(h.mem, retain=True)
    item = t.element_size()
    return cl.array.Array(
        q,
        tuple(t.shape),
        np.dtype(_NUMPY_DTYPES[t.dtype]),
        data=whole,
        offset=h.offset,
        strides=tuple(s * item for s in t.stride()),
    )


# Objects that wrapped tensors keep alive: the native deleter of the tensor's storage calls
# _release(token) when the storage is freed (a ctypes callback: the native library never touches
# the CPython API itself).
_owners: dict[int, Any] = {}
_owners_lock = threading.Lock()
_tokens = itertools.count(1)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _release(token):
    with _owners_lock:
        owner = _owners.pop(token, None)
    # Dropped outside the lock: letting the owner go may free tensors whose release comes here.
    del owner


_RELEASE_ADDRESS = ctypes.cast(_release, ctypes.c_void_p).value
_shutdown_hooked = False


def _stop_release_calls() -> None:
    # After interpreter shutdown begins, a storage freed late must not call into Python.
    torch.ops.ocl._interop_set_release_calls(False)


def _wrap(mem: int, nbytes: int, dtype, shape, strides, offset: int, owner) -> torch.Tensor:
    global _shutdown_hooked
    if not _shutdown_hooked:
        atexit.register(_stop_release_calls)
        _shutdown_hooked = True
    token = next(_tokens)
    with _owners_lock:
        _owners[token] = owner
    try:
        return torch.ops.ocl._interop_wrap(
            mem, nbytes, dtype, list(shape), list(strides), offset, _RELEASE_ADDRESS, token
        )
    except BaseException:
        with _owners_lock:
            owner = _owners.pop(token, None)
        del owner
        raise


_TORCH_DTYPES = {v: k for k, v in _NUMPY_DTYPES.items()}


def _contiguous_strides(shape) -> list[int]:
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return strides[::-1]


def from_pyopencl(obj, dtype: torch.dtype | None = None, shape=None) -> torch.Tensor:
    """An ocl tensor in the memory of a pyopencl Buffer or ``pyopencl.array.Array``, without a
    copy. The tensor keeps ``obj`` alive (and with it the memory, even from a pyopencl memory
    pool) until the tensor's storage is freed.

    An Array gives its dtype, shape, strides and offset. A Buffer is viewed as a contiguous
    tensor of ``dtype`` (default uint8) and ``shape`` (default: as many elements as fit). The
    buffer must belong to the context of an ocl device (:func:`context`); a buffer of another
    context is refused with an error that says so.
    """
    cl = _pyopencl()
    import numpy as np

    if isinstance(obj, cl.array.Array):
        if shape is not None or dtype is not None:
            raise ValueError(
                "torch_ocl.interop: an Array carries its own dtype and shape; view or reshape "
                "the tensor afterwards"
            )
        key = np.dtype(obj.dtype).name
        if key not in _TORCH_DTYPES:
            raise TypeError(f"torch_ocl.interop: pyopencl dtype {obj.dtype} has no torch dtype")
        dtype = _TORCH_DTYPES[key]
        item = obj.dtype.itemsize
        if (
            obj.offset % item
            or any(s % item for s in obj.strides)
            or min(obj.strides, default=0) < 0
        ):
            raise ValueError(
                "torch_ocl.interop: the array's offset and strides must be non-negative "
                f"multiples of its item size ({item} bytes)"
            )
        if obj.size == 0:  # no buffer behind it: an empty tensor on the context's device
            device = torch.ops.ocl._interop_device_of_context(obj.context.int_ptr)
            if device < 0:
                raise RuntimeError(
                    "torch_ocl.interop: the array belongs to an OpenCL context that is not one "
                    "of torch-ocl's; create it with a queue of torch_ocl.interop.context(device)"
                )
            return torch.empty(obj.shape, dtype=dtype, device=torch.device("ocl", device))
        buf = obj.base_data
        strides = [s // item for s in obj.strides]
        return _wrap(
            buf.int_ptr, buf.size, dtype, obj.shape, strides, obj.offset // item, owner=obj
        )
    if isinstance(obj, cl.MemoryObjectHolder) and obj.type == cl.mem_object_type.BUFFER:
        dtype = torch.uint8 if dtype is None else dtype
        item = torch.empty((), dtype=dtype).element_size()
        if shape is None:
            shape = (obj.size // item,)
        shape = tuple(int(s) for s in shape)
        return _wrap(obj.int_ptr, obj.size, dtype, shape, _contiguous_strides(shape), 0, owner=obj)
    raise TypeError(
        "torch_ocl.interop.from_pyopencl: expected a pyopencl.Buffer or pyopencl.array.Array, "
        f"got {type(obj).__name__}"
    )


def record_event(stream: torch.Stream | None = None):
    """A pyopencl Event that completes when the work enqueued so far on a torch stream (default:
    the current stream) has run: make a queue of your own wait for it (``wait_for=[event]``).
    It belongs to the stream's device's context."""
    cl = _pyopencl()
    return cl.enqueue_marker(queue(stream))


def wait_event(event, stream: torch.Stream | None = None) -> None:
    """Makes a torch stream (default: the current stream) wait, without the host waiting, for a
    pyopencl Event of the same device's context (e.g. the event of a kernel you enqueued on a
    queue of your own): torch's later work on the stream runs after it."""
    cl = _pyopencl()
    cl.enqueue_barrier(queue(stream), wait_for=[event])


# ---------------------------------------------------------------------------------------------
# DLPack with kDLOpenCL. The capsule is built and read with ctypes (the native library never
# touches the CPython API).

_KDL_OPENCL = 4
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_BOOL = 0, 1, 2, 4, 6
_DL_DTYPES = {
    torch.float32: (_DL_FLOAT, 32),
    torch.float64: (_DL_FLOAT, 64),
    torch.float16: (_DL_FLOAT, 16),
    torch.bfloat16: (_DL_BFLOAT, 16),
    torch.int64: (_DL_INT, 64),
    torch.int32: (_DL_INT, 32),
    torch.int16: (_DL_INT, 16),
    torch.int8: (_DL_INT, 8),
    torch.uint8: (_DL_UINT, 8),
    torch.bool: (_DL_BOOL, 8),
}
_FROM_DL = {v: k for k, v in _DL_DTYPES.items()}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DLDeleter),
]

_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _capi(name, restype, *argtypes):
    # A private prototype per use (ctypes.pythonapi's attributes are shared with other code);
    # PYFUNCTYPE keeps the GIL and raises a pending Python error.
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _capi(
    "PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _CapsuleDestructor
)
_capsule_is_valid = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_capsule_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_capsule_set_name = _capi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
# For the destructor, which gets the capsule while it is being destroyed: no new reference.
_raw_is_valid = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_raw_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)

# Exported tensors, by the address of their DLManagedTensor: what the deleter lets go.
_exports: dict[int, Any] = {}


@_DLDeleter
def _dl_delete(managed):
    with _owners_lock:
        export = _exports.pop(ctypes.addressof(managed.contents), None)
    del export  # outside the lock (see _release)


@_CapsuleDestructor
def _capsule_destructor(capsule):
    # A capsule never consumed still owns its tensor (the DLPack protocol's rule).
    if _raw_is_valid(capsule, b"dltensor"):
        managed = _DLManagedTensor.from_address(_raw_pointer(capsule, b"dltensor"))
        managed.deleter(ctypes.pointer(managed))


def to_dlpack(t: torch.Tensor):
    """A DLPack capsule (``"dltensor"``, unversioned) describing the ocl tensor as ``kDLOpenCL``:
    ``data`` is the ``cl_mem`` handle, ``byte_offset`` the tensor's offset in it, ``device_id``
    the torch-ocl device index. The capsule keeps the tensor alive until its consumer calls the
    deleter. The consumer must use the same OpenCL driver instance (in this process) and order
    its work after the tensor's producer: the tensor's pending work is enqueued and the stream
    is shared, as with :func:`queue`; synchronise or share the queue as for any handle."""
    _check_ocl(t)
    if t.dtype not in _DL_DTYPES:
        raise TypeError(f"torch_ocl.interop.to_dlpack: {t.dtype} has no DLPack type here")
    device = t.device.index
    mem, offset = 0, 0
    if t.numel() > 0:
        h = handles(t)
        mem, offset = h.mem, h.offset
    ndim = t.dim()
    shape = (ctypes.c_int64 * max(ndim, 1))(*t.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*t.stride())
    managed = _DLManagedTensor()
    code, bits = _DL_DTYPES[t.dtype]
    managed.dl_tensor = _DLTensor(
        mem or None,
        _DLDevice(_KDL_OPENCL, device),
        ndim,
        _DLDataType(code, bits, 1),
        shape,
        strides,
        offset,
    )
    managed.deleter = _dl_delete
    with _owners_lock:
        _exports[ctypes.addressof(managed)] = (managed, shape, strides, t)
    return _capsule_new(ctypes.addressof(managed), b"dltensor", _capsule_destructor)


class _Consumed:
    """Calls a DLPack producer's deleter when the tensor's storage lets go of it (once armed,
    that is once the capsule is marked consumed)."""

    def __init__(self, address: int):
        self.address = address
        self.armed = False

    def __del__(self):
        if self.armed:
            managed = _DLManagedTensor.from_address(self.address)
            if managed.deleter:
                managed.deleter(ctypes.pointer(managed))


def from_dlpack(obj) -> torch.Tensor:
    """An ocl tensor from a ``kDLOpenCL`` DLPack capsule, or from an object with ``__dlpack__``
    and ``__dlpack_device__`` reporting ``kDLOpenCL``, without a copy. ``data`` must be a
    ``cl_mem`` of an ocl device's context (the tensor lands on that device, whatever
    ``device_id`` says; a buffer of another context is refused). The producer's deleter runs
    when the tensor's storage is freed."""
    if hasattr(obj, "__dlpack__"):
        dev_type, _ = obj.__dlpack_device__()
        if dev_type != _KDL_OPENCL:
            raise ValueError(
                f"torch_ocl.interop.from_dlpack: the object is on DLPack device type {dev_type}, "
                f"not kDLOpenCL ({_KDL_OPENCL}); use torch.from_dlpack for other devices"
            )
        obj = obj.__dlpack__()
    if not _capsule_is_valid(obj, b"dltensor"):
        raise ValueError(
            "torch_ocl.interop.from_dlpack: expected an unconsumed 'dltensor' capsule (a capsule "
            "can be consumed once)"
        )
    ptr = _capsule_pointer(obj, b"dltensor")
    managed = _DLManagedTensor.from_address(ptr)
    dl = managed.dl_tensor
    if dl.device.device_type != _KDL_OPENCL:
        raise ValueError(
            f"torch_ocl.interop.from_dlpack: DLPack device type {dl.device.device_type}, not "
            f"kDLOpenCL ({_KDL_OPENCL}); use torch.from_dlpack for other devices"
        )
    key = (dl.dtype.code, dl.dtype.bits)
    if dl.dtype.lanes != 1 or key not in _FROM_DL:
        raise TypeError(
            f"torch_ocl.interop.from_dlpack: unsupported DLPack dtype (code {dl.dtype.code}, "
            f"{dl.dtype.bits} bits, {dl.dtype.lanes} lanes)"
        )
    dtype = _FROM_DL[key]
    shape = [dl.shape[i] for i in range(dl.ndim)]
    strides = [dl.strides[i] for i in range(dl.ndim)] if dl.strides else _contiguous_strides(shape)
    item = dl.dtype.bits // 8
    if dl.byte_offset % item:
        raise ValueError(
            "torch_ocl.interop.from_dlpack: byte_offset is not a multiple of the item size"
        )

    consumed = _Consumed(ptr)
    if any(s == 0 for s in shape) or not dl.data:
        t = torch.empty_strided(shape, strides, dtype=dtype, device="ocl")  # nothing to share
    else:  # nbytes -1: the whole buffer (the native side reads its size)
        t = _wrap(dl.data, -1, dtype, shape, strides, dl.byte_offset // item, consumed)
    _capsule_set_name(obj, b"used_dltensor")
    consumed.armed = True  # the producer's deleter now runs when the tensor lets go
    del consumed
    return t
