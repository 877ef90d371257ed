"""What Inductor's PrivateUse1 lookup finds on torch.ocl (see __init__.py), and the device op
overrides, registered when this module is imported (by then Inductor is imported)."""

from __future__ import annotations

from torch._inductor.codegen.common import register_device_op_overrides

from .._compile import NoCppWrapper, NoFxWrapper
from .codegen import OclScheduling
from .device_op_overrides import OclDeviceOpOverrides
from .wrapper import OclWrapperCodegen

Scheduling = OclScheduling
PythonWrapperCodegen = OclWrapperCodegen
CppWrapperCodegen = NoCppWrapper
WrapperFxCodegen = NoFxWrapper

register_device_op_overrides("ocl", OclDeviceOpOverrides())
