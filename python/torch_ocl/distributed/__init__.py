"""torch.distributed for ocl tensors.

`register()` (called when torch_ocl is imported) makes every kind of process group serve ocl
tensors:

- ``init_process_group("gloo")``: Gloo's device list gains ``ocl``;
- ``init_process_group("oclgloo")``, ``init_process_group("cpu:gloo,ocl:oclgloo")``: the
  ``oclgloo`` backend (`process_group.py`), registered with ``Backend.register_backend`` for the
  ``cpu`` and ``ocl`` devices;
- ``init_process_group()`` with no backend: PyTorch picks the accelerator's default backend,
  ``oclgloo`` for ocl.

The collectives themselves are torch-ocl's ocl kernels of the c10d ops (`collectives.py`), which
hand the tensors to the host - mapped, or copied through pinned host memory (`_staging.py`;
`set_transfer_mode` chooses, `_transfer.py`) - and run the group's Gloo backend.

`import torch` imports torch.distributed already in the torch versions torch-ocl supports, so
registering costs nothing; where it does not, registration waits until torch.distributed is
imported (an import hook), so that ``import torch_ocl`` never pays for it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

from ._transfer import get_transfer_mode, set_transfer_mode
from .process_group import NAME as BACKEND_NAME

_C10D = "torch.distributed.distributed_c10d"
_registered = False

__all__ = ["BACKEND_NAME", "get_transfer_mode", "is_registered", "register", "set_transfer_mode"]


def is_registered() -> bool:
    """Whether torch.distributed knows the ocl backend (False until torch.distributed is
    imported, or where torch was built without distributed support)."""
    return _registered


def _register_now(c10d) -> None:
    """Registers with `c10d`, the module torch.distributed.distributed_c10d (passed in: while
    the import hook runs, the torch.distributed package is not fully initialised yet)."""
    global _registered
    if _registered or not c10d.is_gloo_available():
        return
    from . import collectives, process_group

    collectives.register_kernels()
    Backend = c10d.Backend
    if BACKEND_NAME not in Backend.backend_list:
        Backend.register_backend(
            BACKEND_NAME, process_group.create, extended_api=True, devices=["cpu", "ocl"]
        )
    gloo_devices = Backend.backend_capability.get(Backend.GLOO)
    if gloo_devices is not None and "ocl" not in gloo_devices:
        gloo_devices.append("ocl")
    _registered = True


class _AfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Calls `then(module)` right after the module named `name` has been imported."""

    def __init__(self, name: str, then):
        self.name = name
        self.then = then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # find the real spec, and run only once
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self.then(module)


def register() -> None:
    """Registers the ocl backend with torch.distributed now if torch.distributed is imported,
    else as soon as it is."""
    if _C10D in sys.modules:
        _register_now(sys.modules[_C10D])
    elif not any(isinstance(f, _AfterImport) and f.name == _C10D for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(_C10D, _register_now))
