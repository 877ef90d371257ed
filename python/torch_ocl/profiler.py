"""torch.profiler with the ocl device (``torch.ocl.profiler``).

Profile as on CUDA, naming the device activity ``ProfilerActivity.PrivateUse1``::

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        step()
    print(prof.key_averages().table(sort_by="device_time_total"))
    prof.export_chrome_trace("trace.json")  # chrome://tracing, https://ui.perfetto.dev

While such a profile records, every kernel launch, copy (HtoD, DtoH, DtoD) and fill enqueued on
an ocl stream keeps an OpenCL event; when the profile ends, their device times are read, mapped to
the host clock and handed to torch.profiler, each linked to the ATen op that enqueued it:

* ``key_averages()`` fills ``device_time_total`` / ``self_device_time_total`` per op;
* the trace has a row per (device, stream) with the kernels, named
  ``<kernel function>[<variant>]`` (``elementwise[add]``, ``mm_tiled[...]``), with their global
  and local sizes (``global_size``, ``local_size``, ``grid`` in work-groups, ``block``) and build
  options as arguments; copies carry their size and bandwidth;
* each enqueue call appears as ``clEnqueueNDRangeKernel`` (etc.) on the thread's row, with an
  arrow to the command it enqueued;
* tiny elementwise ops that ran as one batched launch (``elementwise_batch``) appear as one share
  of that launch per op (``elementwise_batch[add 2/5]``), the launch's time split evenly;
* every point where the host waits for the device (``.item()``, ``.cpu()``, ``nonzero``,
  ``torch.ocl.synchronize()``, ``Event.synchronize()``...) is an ``ocl::host_wait`` event on the
  waiting thread's row, under the op that waited; with ``record_shapes=True`` its ``reason``
  argument says why, with ``with_stack=True`` it carries the Python stack. These need no device
  activity: a CPU-only profile shows them too.

Nothing is recorded, and no event is requested, while no such profile runs.

The device clock is mapped to the host clock with ``clGetDeviceAndHostTimer`` on OpenCL 2.1+
devices, else from each command's queued time and the host time around its enqueue call
(``TORCH_OCL_PROFILER_CLOCK=queued`` forces the latter); :func:`clock_method` says which one
the last profile used.

The device activity needs a torch built with Kineto (every PyPI wheel) and its headers at build
time (:func:`has_device_activity`); torch 2.13 is the first minor with the PrivateUse1 profiler
plugin registry that this relies on.
"""

from __future__ import annotations

import torch

from ._device import _index

__all__ = ["clock_method", "has_device_activity", "is_recording"]


def has_device_activity() -> bool:
    """Whether this build of torch-ocl gives torch.profiler device activity (kernels, copies)."""
    return bool(torch.ops.ocl._profiler_has_device_activity())


def clock_method(device=None) -> str:
    """How the last profile mapped ``device``'s clock to the host clock:
    ``"device_and_host_timer"``, ``"queued"``, or ``""`` if it recorded nothing there."""
    return str(torch.ops.ocl._profiler_clock_method(_index(device)))


def is_recording() -> bool:
    """Whether ocl commands are being recorded for a profile right now."""
    return bool(torch.ops.ocl._profiler_recording())
