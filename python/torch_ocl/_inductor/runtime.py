"""What torch.compile's generated wrapper code calls on ocl: kernel compilation and launch.

``compile_ocl_kernel(source, name)`` builds an OpenCL C kernel through the native program cache
(in memory and on disk, shared with the package's own kernels) and returns the launcher the
wrapper calls as ``kernel(tensors, ints, floats, global_size, local_size)``: one native op,
``torch.ops.ocl._launch_source``, with the kernel's handle bound, so a launch costs one
dispatcher call and builds no Python objects beyond the argument lists.
"""

from __future__ import annotations

import functools

import torch

# Work-items of a reduction kernel's work-group at most (a power of two; the generated kernels
# size their local-memory trees with it, and the native launch may choose fewer).
RBLOCK_MAX = 256
# Work-items per work-group of pointwise kernels.
POINTWISE_GROUP = 256


def compile_ocl_kernel(source: str, name: str, options: str = ""):
    """Builds kernel ``name`` of ``source`` on the current ocl device now (a compiler error
    raises with the compiler's log and the path of the program's text) and returns its
    launcher."""
    handle = torch.ops.ocl._compile_source(source, name, options)
    return functools.partial(torch.ops.ocl._launch_source.default, handle)


def rblock(rnumel: int) -> int:
    """Work-items per work-group of a reduction over ``rnumel`` elements: the power of two
    that covers it, at most RBLOCK_MAX."""
    p = 1
    while p < rnumel and p < RBLOCK_MAX:
        p *= 2
    return p


def get_raw_stream(device: int) -> int:
    """Inductor's handle of the current stream; ocl launches read the current stream
    themselves, so this is only the stream's id."""
    return torch.ocl.current_stream(device).stream_id


def launch_count() -> int:
    """Generated kernels launched in this process so far (count the launches of a compiled
    function by the difference before and after a call)."""
    return torch.ops.ocl._source_launch_count()
