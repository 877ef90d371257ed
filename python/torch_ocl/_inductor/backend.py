"""The Inductor backend for ocl, registered when this module is imported: Inductor's PrivateUse1
lookup of torch.ocl.Scheduling imports it (see __init__.py), so Inductor is imported by then.

The registration is made here, not by Inductor's lookup, because it carries a graph pass
(passes.CpuScalarsToDevice) that the lookup cannot pass on; torch.ocl.CppWrapperCodegen is
therefore left undefined for the lookup (which then registers nothing), and the C++ and FX
wrappers registered here are classes that refuse with the way out (_compile.py).
"""

from __future__ import annotations

from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides

from .._compile import NoCppWrapper, NoFxWrapper
from .device_op_overrides import OclDeviceOpOverrides
from .passes import CpuScalarsToDevice
from .scheduling import OclScheduling
from .wrapper import OclWrapperCodegen

Scheduling = OclScheduling
PythonWrapperCodegen = OclWrapperCodegen
CppWrapperCodegen = None  # see the module's docstring
WrapperFxCodegen = NoFxWrapper

register_device_op_overrides("ocl", OclDeviceOpOverrides())
register_backend_for_device(
    "ocl",
    OclScheduling,
    OclWrapperCodegen,
    NoCppWrapper,
    NoFxWrapper,
    device_custom_pass=CpuScalarsToDevice(),
)
