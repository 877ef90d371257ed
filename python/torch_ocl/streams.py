"""Streams and events: thin classes over torch.Stream / torch.Event, like torch.cuda.streams."""

from __future__ import annotations

import torch

from ._device import _index, current_device, set_device


class Stream(torch.Stream):
    """An ocl stream (an in-order OpenCL command queue)."""

    def __new__(cls, device=None, priority=0, **kwargs):
        if "stream_id" in kwargs:  # wrapping an existing stream
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device=torch.device("ocl", _index(device)), priority=priority)

    def __repr__(self):
        return f"<torch_ocl.Stream device={self.device} id={self.stream_id}>"


class _EventMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, torch.Event) and obj.device.type == "ocl"


class Event(metaclass=_EventMeta):
    """An ocl event; enable_timing=True makes elapsed_time() available.

    Constructing one returns a ``torch.Event`` on the ocl device (torch's event methods accept
    only that exact type); ``isinstance(e, torch.ocl.Event)`` holds for every ocl event.
    """

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        return torch.Event(device="ocl", enable_timing=enable_timing, blocking=blocking)


def _wrap(s: torch.Stream) -> Stream:
    return Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


def current_stream(device=None) -> Stream:
    return _wrap(torch.accelerator.current_stream(torch.device("ocl", _index(device))))


def default_stream(device=None) -> Stream:
    return Stream(
        stream_id=0, device_index=_index(device), device_type=current_stream(device).device_type
    )


def set_stream(stream: torch.Stream) -> None:
    torch.accelerator.set_stream(stream)


class StreamContext:
    """Makes `stream` current on its device, and its device the current device, for the duration
    of a with-block (as torch.cuda.stream does); both are restored at its end."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None
        self.prev_device = None

    def __enter__(self):
        if self.stream is None:
            return None
        self.prev_device = current_device()
        self.prev = torch.accelerator.current_stream(self.stream.device)
        torch.accelerator.set_stream(self.stream)  # also makes the stream's device current
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            torch.accelerator.set_stream(self.prev)
            set_device(self.prev_device)
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)
