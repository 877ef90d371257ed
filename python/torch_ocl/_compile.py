"""torch.compile on ocl: what inductor finds when it looks for the device's code generator.

Inductor (torch.compile's default backend) looks up torch.ocl.Scheduling, PythonWrapperCodegen,
CppWrapperCodegen and WrapperFxCodegen for a PrivateUse1 device. torch-ocl has no inductor code
generator (its kernels are OpenCL C, not Triton or C++), so each of these names a class that
refuses with the way out, instead of inductor's bare assertion. Other backends work:
``backend="aot_eager"`` runs the captured graph (forward and backward) op by op on ocl.
"""

from __future__ import annotations

_MESSAGE = (
    "torch-ocl: torch.compile's default backend (inductor) has no code generator for the ocl "
    "device. Use torch.compile(model, backend='aot_eager'), which runs the captured graph op by "
    "op on ocl (autograd included), or run the model without torch.compile."
)


class _Refuses(type):
    """Any attribute inductor asks the class for (supports_caching, create, ...) raises."""

    def __getattr__(cls, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(_MESSAGE)


class NoInductorCodegen(metaclass=_Refuses):
    """Stands for inductor's scheduling and wrapper code generators on ocl: creating one, or
    asking it anything, raises."""

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError(_MESSAGE)
