"""Fake (meta) convolutions on ocl with the memory formats of torch-ocl's native kernels.

FakeTensor's convolution (``torch._subclasses.fake_impls.conv``) asks ATen which memory format
the device's convolution backend gives; for a PrivateUse1 device the backend is "Overrideable"
and ATen answers "contiguous". torch-ocl's native convolution (csrc/ops/Conv.cpp,
``conv_format``) gives CPU torch's formats instead: channels-last results (and input and weight
gradients) when the input or the weight is channels-last. torch.compile plans buffers with the
fake answer, so a compiled graph whose convolution saw channels-last operands (Inductor's own
layout optimisation makes them for CNNs) failed its stride check on the real result.

``install(fake_impls)`` wraps the fake convolution ops so that, on ocl, their results carry
the native kernels' formats; other devices are left alone.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import torch

_CONV_OPS = ("convolution.default", "_convolution.default", "_convolution.deprecated")
_BACKWARD = "convolution_backward.default"


def _ocl_format(x: Any, w: Any) -> torch.memory_format | None:
    """The format of Conv.cpp's results for these operands (None: keep the fake's)."""
    from torch._prims_common import suggest_memory_format
    from torch.fx.experimental.symbolic_shapes import has_guarding_hint

    if not all(has_guarding_hint(s) for s in (*x.shape, *w.shape)):
        return None
    cl = {4: torch.channels_last, 5: torch.channels_last_3d}.get(x.dim())
    if cl is not None and (suggest_memory_format(x) == cl or suggest_memory_format(w) == cl):
        return cl
    return torch.contiguous_format


def _wrap(original: Any, backward: bool) -> Any:
    def conv(fake_mode: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(fake_mode, func, *args, **kwargs)
        from torch._subclasses.fake_impls import _normalize_function_or_error

        _, kw = _normalize_function_or_error(
            func, args=args, kwargs=kwargs, normalize_to_only_use_kwargs=True
        )
        x, w = kw["input"], kw["weight"]
        if getattr(x, "fake_device", x.device).type != "ocl":
            return result
        with fake_mode:
            fmt = _ocl_format(x, w)
            if fmt is None:
                return result
            if not backward:
                return result.to(memory_format=fmt)
            gi, gw, gb = result
            return (
                None if gi is None else gi.to(memory_format=fmt),
                None if gw is None else gw.to(memory_format=fmt),
                gb,
            )

    conv._torch_ocl_wrapped = True  # type: ignore[attr-defined]
    return conv


def install(fake_impls: ModuleType) -> None:
    """Wraps the fake convolutions of ``fake_impls`` (once)."""
    table = fake_impls.op_implementations_dict
    for name in (*_CONV_OPS, _BACKWARD):
        packet, overload = name.split(".")
        op = getattr(getattr(torch.ops.aten, packet), overload)
        impl = table.get(op)
        if impl is None or getattr(impl, "_torch_ocl_wrapped", False):
            continue
        table[op] = _wrap(impl, name == _BACKWARD)
