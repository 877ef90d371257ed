"""torch-ocl: PyTorch on any OpenCL device, as the ``ocl`` device.

Importing this package (done automatically by ``import torch`` through the ``torch.backends``
entry point unless TORCH_DEVICE_BACKEND_AUTOLOAD=0) loads the native library, renames
PyTorch's PrivateUse1 backend to ``ocl`` and registers ``torch.ocl``. OpenCL itself is loaded
lazily: a machine without OpenCL can import torch; ``torch.ocl.is_available()`` is then False.
"""

from __future__ import annotations

import sys
import types

import torch

from . import _native
from ._version import __version__

_native.load()

from . import _dlpack, _inductor, amp, interop, memory, profiler, random, streams, tuning  # noqa: E402
from ._device import (  # noqa: E402
    DeviceProperties,
    batch_stats,
    current_device,
    device,
    device_count,
    get_device_name,
    get_device_properties,
    get_sync_debug_mode,
    host_wait_count,
    init,
    is_available,
    is_initialized,
    set_device,
    set_sync_debug_mode,
    sync_debug_mode,
    synchronize,
    why_unavailable,
)
from ._fallback import (  # noqa: E402
    fallback_counts,
    fallback_mode,
    get_fallback_mode,
    reset_fallback_counts,
    set_fallback_mode,
)
from .amp import get_amp_supported_dtype, is_bf16_supported  # noqa: E402
from .memory import (  # noqa: E402
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)
from .random import (  # noqa: E402
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .streams import (  # noqa: E402
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)
from .tuning import DeviceProfile, device_profile, gemm_tile, tune_gemm  # noqa: E402

# torch.cuda's flag that the device's state (its RNG included) exists. torch.utils.checkpoint
# saves and restores a device's RNG state around the recomputation only when the device module
# says so: without it, dropout inside a checkpointed block drew a different mask when recomputed
# and the gradients came out silently wrong. The state exists once torch_ocl is imported.
_initialized = True


def _is_in_bad_fork() -> bool:
    return torch.ops.ocl.is_in_bad_fork()


def _lazy_init() -> None:
    init()


class _OclModule(types.ModuleType):
    """torch.ocl's module type: settings read and written as attributes."""

    @property
    def conv_benchmark(self) -> bool:
        """Like ``torch.backends.cudnn.benchmark``: when True, a convolution shape that more than
        one algorithm can compute (today: 3x3, stride 1 - im2col + GEMM or Winograd F(2x2, 3x3))
        is timed both ways once, with host waits, and the faster one is used from then on; the
        choice is recorded per device beside the kernel cache, so later processes reuse it
        without timing. Off by default (im2col + GEMM). The two round differently (Winograd's
        error is a few float32 ulps larger); NaN and Inf reach the same outputs."""
        return torch.ops.ocl.tuning_enabled()

    @conv_benchmark.setter
    def conv_benchmark(self, value: bool) -> None:
        torch.ops.ocl.set_tuning_enabled(bool(value))

    @property
    def tuning_enabled(self) -> bool:
        """When True, kernels with several variants or tunable parameters time their candidates
        on first use of a shape class and keep the fastest (recorded per device beside the kernel
        cache; later processes reuse it without timing): convolution algorithms (the same switch
        as ``conv_benchmark``) and the tiled GEMM's tiles (a bounded candidate set; see
        :func:`torch.ocl.tune_gemm` for an explicit, complete run). Off by default: the device
        profile's defaults, or choices recorded earlier."""
        return torch.ops.ocl.tuning_enabled()

    @tuning_enabled.setter
    def tuning_enabled(self, value: bool) -> None:
        torch.ops.ocl.set_tuning_enabled(bool(value))

    # Inductor's per-device code generators (torch.compile; see _compile.py and _inductor/):
    # looked up by Inductor's init_backend_registration, imported only then.
    @property
    def Scheduling(self):  # noqa: N802 - the name Inductor looks up
        return _inductor.backend_class("Scheduling")

    @property
    def PythonWrapperCodegen(self):  # noqa: N802
        return _inductor.backend_class("PythonWrapperCodegen")

    @property
    def CppWrapperCodegen(self):  # noqa: N802
        return _inductor.backend_class("CppWrapperCodegen")

    @property
    def WrapperFxCodegen(self):  # noqa: N802
        return _inductor.backend_class("WrapperFxCodegen")


def _register() -> None:
    if torch._C._get_privateuse1_backend_name() != "ocl":
        torch.utils.rename_privateuse1_backend("ocl")
    if not hasattr(torch, "ocl"):
        torch._register_device_module("ocl", sys.modules[__name__])
    if not hasattr(torch.Tensor, "is_ocl"):
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
        )


def _inductor_backend_init() -> None:
    """torch >= 2.15 calls this (``torch.<device>._inductor_backend_init``) before a compilation
    until the device has an Inductor backend: importing the code generator registers it. Older
    torch finds the backend through ``torch.ocl.Scheduling`` (``_inductor.backend_class``)."""
    _inductor.backend_class("Scheduling")


sys.modules[__name__].__class__ = _OclModule
_register()
_dlpack.install()
_inductor.install()

from . import distributed  # noqa: E402

distributed.register()  # torch.distributed backends and collectives for ocl tensors


__all__ = [
    "DeviceProfile",
    "DeviceProperties",
    "Event",
    "Stream",
    "StreamContext",
    "__version__",
    "amp",
    "batch_stats",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "device_profile",
    "empty_cache",
    "fallback_counts",
    "fallback_mode",
    "gemm_tile",
    "get_amp_supported_dtype",
    "get_device_name",
    "get_device_properties",
    "get_fallback_mode",
    "get_rng_state",
    "get_rng_state_all",
    "get_sync_debug_mode",
    "host_wait_count",
    "init",
    "initial_seed",
    "interop",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "mem_get_info",
    "profiler",
    "random",
    "reset_accumulated_memory_stats",
    "reset_fallback_counts",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_fallback_mode",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "set_sync_debug_mode",
    "stream",
    "streams",
    "sync_debug_mode",
    "synchronize",
    "tune_gemm",
    "tuning",
    "why_unavailable",
]
