"""torch.compile's default backend (Inductor) on ocl: fused OpenCL C kernels.

Nothing here imports Inductor or Dynamo when torch_ocl is imported (they take seconds to
import). ``install()`` (called by torch_ocl's import) only arranges that:

- when ``torch._dynamo.device_interface`` is imported, ``OclDeviceInterface`` is registered
  for "ocl" (streams, events, device properties for Dynamo and Inductor);
- when ``torch._subclasses.fake_impls`` is imported, its fake convolutions give ocl results the
  memory formats of the native kernels (fake_conv.py);
- when Inductor looks up ``torch.ocl.Scheduling`` and the wrapper code generators (the
  PrivateUse1 lookup of ``init_backend_registration``), ``backend_class`` imports the code
  generator (``backend.py``), which registers the device op overrides too.

"ocl" is deliberately not added to ``torch._inductor.utils.GPU_TYPES``: in torch 2.13 every
device in that list except "mps" must have Triton (``Scheduler.create_backend`` raises
``TritonMissing`` without it). Outside the list Inductor treats ocl like the CPU in a few
heuristics (no device-guard lines in the wrapper, reductions unrolled and loops merged as for
CPUs, the first input's device chosen for a pointwise op); docs/compile.md lists them.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any


def _register_interface(device_interface: ModuleType) -> None:
    from .device_interface import OclDeviceInterface

    device_interface.register_interface_for_device("ocl", OclDeviceInterface)


def _fake_convolutions(fake_impls: ModuleType) -> None:
    from .fake_conv import install as install_fake_conv

    install_fake_conv(fake_impls)


_HOOKS: dict[str, Callable[[ModuleType], None]] = {
    "torch._dynamo.device_interface": _register_interface,
    "torch._subclasses.fake_impls": _fake_convolutions,
}


class _RunAfter(importlib.abc.Loader):
    """Wraps a module's loader: runs the module, then `hook` on it, then steps aside (the
    module's __loader__ and __spec__ name the original loader again)."""

    def __init__(self, loader: Any, hook: Callable[[ModuleType], None]) -> None:
        self._loader = loader
        self._hook = hook

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._hook(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for the modules in _HOOKS, asks the finders after it and wraps
    the loader they return."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        hook = _HOOKS.get(fullname)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RunAfter(spec.loader, hook)
                return spec
        return None


_installed = False


def install() -> None:
    """Arranges the registrations above (at once for modules already imported)."""
    global _installed
    if _installed:
        return
    _installed = True
    for name, hook in _HOOKS.items():
        module = sys.modules.get(name)
        if module is not None:
            hook(module)
    sys.meta_path.insert(0, _PostImportFinder())


def backend_class(name: str) -> Any:
    """The class Inductor asks torch.ocl for: Scheduling, PythonWrapperCodegen,
    CppWrapperCodegen or WrapperFxCodegen."""
    from . import backend

    return getattr(backend, name)
