"""torch.compile on ocl: what Inductor finds when it looks for the device's code generators.

Inductor (torch.compile's default backend) looks up torch.ocl.Scheduling, PythonWrapperCodegen,
CppWrapperCodegen and WrapperFxCodegen for a PrivateUse1 device. The first two are the OpenCL
C code generator (python/torch_ocl/_inductor/, imported only when Inductor asks; its backend.py
registers the backend itself, with a graph pass, so CppWrapperCodegen is None for the lookup).
Inductor's C++ wrapper (``torch._inductor.config.cpp_wrapper``, AOTInductor) and FX wrapper
(``config.fx_wrapper``) have no ocl version: they are registered as the classes below, which
refuse with the way out instead of an assertion deep inside Inductor.
"""

from __future__ import annotations

_WAY_OUT = (
    "Leave the option off (the default Python wrapper works on ocl), or use "
    "torch.compile(model, backend='aot_eager'), which runs the captured graph op by op on ocl."
)


class _Refuses(type):
    """Any attribute Inductor asks the class for (create, ...) raises the class's message;
    ``supports_caching`` is answered (Inductor asks it of every device's wrapper)."""

    def __getattr__(cls, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "supports_caching":
            return False
        raise RuntimeError(cls._message)


class NoCppWrapper(metaclass=_Refuses):
    """Stands for Inductor's C++ wrapper code generator on ocl: using it raises."""

    _message = (
        "torch-ocl: Inductor's C++ wrapper (torch._inductor.config.cpp_wrapper, AOTInductor) "
        "has no ocl version. " + _WAY_OUT
    )

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError(self._message)


class NoFxWrapper(metaclass=_Refuses):
    """Stands for Inductor's FX wrapper code generator on ocl: using it raises."""

    _message = (
        "torch-ocl: Inductor's FX wrapper (torch._inductor.config.fx_wrapper) has no ocl "
        "version. " + _WAY_OUT
    )

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError(self._message)
