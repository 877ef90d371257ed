"""Device profiles and kernel tuning (``torch.ocl.device_profile``, ``torch.ocl.tune_gemm``).

A device's *profile* decides which variant of each kernel family it runs and with which launch
parameters: ``"cpu"`` (PoCL, Intel's CPU runtime: a run of elements per work-item, the
register-blocked GEMM) or ``"gpu"`` (one element per work-item, large work-groups, the
local-memory tiled GEMM). It is chosen from the device's type; ``TORCH_OCL_DEVICE_PROFILE=gpu`` (or
``cpu``) forces it for every device, so the GPU variants run on PoCL too, and
``TORCH_OCL_DEVICE_PARAMS="name=value,..."`` overrides single parameters. Both are read once, when
the device is first used.

The tiled GEMM's tiles come from the profile, per size class (``small``, ``medium``, ``large``:
the largest whose grid still gives every compute unit a work-group), unless a tuning run recorded
a faster tile for the product's dtype, layout and size class on this device and driver. Tuning
runs explicitly (:func:`tune_gemm`), or on first use of a product while
``torch.ocl.tuning_enabled`` is True (a bounded set of candidates: a few seconds at most on a GPU).
Results persist in the device's tuning file beside the kernel cache (:func:`tuning_file`).
"""

from __future__ import annotations

import dataclasses

import torch

from ._device import _index


@dataclasses.dataclass(frozen=True)
class DeviceProfile:
    """What :func:`device_profile` returns: ``name`` is ``"cpu"`` or ``"gpu"``, ``source`` what
    chose it (``"device type"`` or ``"TORCH_OCL_DEVICE_PROFILE"``), ``vendor`` and ``arch`` the
    normalised device names, ``params`` every parameter (ints, bools, GEMM tiles as strings
    ``"MxNxK:WMxWN:PAD"``)."""

    name: str
    source: str
    vendor: str
    arch: str
    params: dict


def _value(text: str):
    if text.lstrip("-").isdigit():
        return int(text)
    return text


def device_profile(device=None) -> DeviceProfile:
    """The profile device ``device`` (default: the current one) runs with."""
    names, values = torch.ops.ocl._device_profile(_index(device))
    raw = dict(zip(names, values, strict=True))
    params = {
        k: _value(v) for k, v in raw.items() if k not in ("class", "class_source", "vendor", "arch")
    }
    for key in ("subgroups", "scan_tiles", "conv_implicit_gemm", "gemm_register_blocked"):
        params[key] = bool(params[key])
    return DeviceProfile(
        name=raw["class"],
        source=raw["class_source"],
        vendor=raw["vendor"],
        arch=raw["arch"],
        params=params,
    )


@dataclasses.dataclass(frozen=True)
class GemmTuning:
    """What :func:`tune_gemm` returns: the fastest tile (``best``, ``"MxNxK:WMxWN:PAD"``), the
    tuning store's key it was recorded under, and each tried tile's time in seconds (the fastest
    of 3 runs; None where the tile failed to build or computed a wrong result)."""

    best: str
    key: str
    times: dict


def tune_gemm(
    m: int,
    n: int,
    k: int,
    *,
    dtype: torch.dtype = torch.float32,
    transpose_a: bool = False,
    transpose_b: bool = False,
    batch: int = 1,
    max_candidates: int = 0,
    device=None,
) -> GemmTuning:
    """Times the tiled GEMM's candidate tiles for ``(batch x) m x k @ k x n`` products of
    ``dtype`` (``transpose_a``: A stored k x m; ``transpose_b``: B stored n x k) on random
    operands, checks each against the default tile's result and records the fastest for that
    dtype, layout and size class on this device and driver, where every later product of the
    class finds it (this process and later ones). ``max_candidates`` bounds the candidates (the
    profile's own tiles always among them); 0 tries every legal tile. The host waits for the
    device while timing. Raises on a device whose profile runs the register-blocked GEMM."""
    best, key, tried, seconds = torch.ops.ocl._tune_gemm(
        _index(device), dtype, transpose_a, transpose_b, m, n, k, batch, max_candidates
    )
    times = {t: (s if s >= 0 else None) for t, s in zip(tried, seconds, strict=True)}
    return GemmTuning(best=best, key=key, times=times)


def gemm_tile(
    m: int,
    n: int,
    k: int,
    *,
    dtype: torch.dtype = torch.float32,
    transpose_a: bool = False,
    transpose_b: bool = False,
    batch: int = 1,
    device=None,
) -> str | None:
    """The tile a product of this shape would use now (None: the register-blocked GEMM).
    While ``torch.ocl.tuning_enabled`` is True this may tune, as the product itself would."""
    tile = torch.ops.ocl._gemm_tile(_index(device), dtype, transpose_a, transpose_b, m, n, k, batch)
    return tile or None


def tuning_file(device=None) -> str:
    """The device's tuning file (its choices, one line each; "" when the kernel cache is off)."""
    return torch.ops.ocl.tuning_file(_index(device))


def clear_tuning_memory() -> None:
    """Forgets the choices read into memory (the files stay; the next lookup reads them again)."""
    torch.ops.ocl.clear_tuned_choices()
