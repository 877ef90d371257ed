"""How a collective hands an ocl tensor to Gloo: by mapping its device memory or by copying it.

- ``"map"``: Gloo gets a CPU tensor that aliases the ocl tensor's device memory, mapped into the
  host's address space (``torch.ops.ocl._host_map``), and works on it in place: no copy either
  way. Right where the device's memory is the host's (a CPU device: PoCL, Intel's CPU runtime);
  elsewhere OpenCL allows it too, but the driver may copy behind each map and unmap.
- ``"copy"``: Gloo gets a copy in pinned host memory, copied back once the collective has
  succeeded (a failed collective leaves the ocl tensors as they were).
- ``"auto"`` (the default): ``"map"`` on devices where mapping copies nothing
  (``torch.ops.ocl._host_map_zero_copy``), ``"copy"`` elsewhere.

Choose with the environment variable ``TORCH_OCL_DISTRIBUTED_TRANSFER`` (read at the first
collective) or `set_transfer_mode` (for the collectives called after it).
"""

from __future__ import annotations

import os

import torch

MODES = ("auto", "map", "copy")
ENV = "TORCH_OCL_DISTRIBUTED_TRANSFER"

_mode: str | None = None  # None: not read from the environment yet
_zero_copy: dict[int, bool] = {}


def _check(mode, source: str) -> str:
    if mode not in MODES:
        raise ValueError(
            f"torch-ocl: {source} is {mode!r}; it must be one of {', '.join(map(repr, MODES))} "
            "('map': Gloo works on the mapped device memory in place; 'copy': through pinned "
            "host memory; 'auto': 'map' where the device's memory is the host's)"
        )
    return mode


def set_transfer_mode(mode: str) -> None:
    """How the collectives called from now on hand ocl tensors to Gloo: "auto", "map" or
    "copy" (see the module's docstring)."""
    global _mode
    _mode = _check(mode, "the transfer mode")


def get_transfer_mode() -> str:
    global _mode
    if _mode is None:
        _mode = _check(os.environ.get(ENV, "auto") or "auto", ENV)
    return _mode


def maps(device: torch.device) -> bool:
    """Whether collectives map (rather than copy) the tensors of ocl `device` now."""
    mode = get_transfer_mode()
    if mode != "auto":
        return mode == "map"
    index = device.index if device.index is not None else torch.ocl.current_device()
    known = _zero_copy.get(index)
    if known is None:
        known = _zero_copy[index] = bool(torch.ops.ocl._host_map_zero_copy(index))
    return known
