"""Mixed precision on the ocl device: what ``torch.autocast("ocl")`` asks the device module.

The casting rules themselves are registered by the native library for PyTorch's
AutocastPrivateUse1 key (csrc/ops/Amp.cpp): GEMMs and convolutions run in the autocast dtype
(float16 or bfloat16, accumulated in float32), precision-sensitive ops in float32, as on CUDA.
``torch.amp.GradScaler("ocl")`` works with it (its unscale and scale-update ops are native).
"""

from __future__ import annotations

import torch


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Like ``torch.cuda.is_bf16_supported``: True on every device (bfloat16 tensors are stored
    as such and computed in float32, as get_amp_supported_dtype says)."""
    return True


def get_amp_supported_dtype() -> list[torch.dtype]:
    """The dtypes ``torch.autocast("ocl", dtype=...)`` accepts: float16 and bfloat16 (the kernels
    store both and compute in float32, so every OpenCL device supports them)."""
    return [torch.float16, torch.bfloat16]


def is_autocast_enabled() -> bool:
    """Whether autocast is on for the ocl device in this thread."""
    return torch.is_autocast_enabled("ocl")


def get_autocast_dtype() -> torch.dtype:
    """The dtype autocast uses on the ocl device (float16 unless set)."""
    return torch.get_autocast_dtype("ocl")
