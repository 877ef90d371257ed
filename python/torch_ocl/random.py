"""Seeding and RNG state of the per-device Philox generators, like torch.cuda.random.

Seeds are unsigned 64-bit numbers, as for CPU torch: any int in [-2**63, 2**64 - 1] is accepted
and a negative one stands for its two's complement (-1 -> 2**64 - 1); anything else raises
ValueError like ``torch.manual_seed``. The native ops (``torch.ops.ocl.*``) take and return a
signed int64, so this module converts at the boundary.
"""

from __future__ import annotations

import torch

from ._device import _index, device_count

_MASK64 = (1 << 64) - 1


def _seed_to_op(seed) -> int:
    """A Python seed as the int64 the native ops take (two's complement of the uint64 seed)."""
    s = int(seed)
    if not -(1 << 63) <= s <= _MASK64:
        # The same exception type and message as torch.manual_seed / torch.Generator.manual_seed.
        raise ValueError(
            f"Overflow when unpacking long long: seed {s} is outside "
            "[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]"
        )
    s &= _MASK64
    return s - (1 << 64) if s >= (1 << 63) else s


def _seed_from_op(value: int) -> int:
    """An int64 from the native ops as the unsigned 64-bit seed it stands for."""
    return int(value) & _MASK64


def manual_seed(seed: int, device=None) -> None:
    torch.ops.ocl.manual_seed(_index(device), _seed_to_op(seed))


def manual_seed_all(seed: int) -> None:
    s = _seed_to_op(seed)
    for i in range(device_count()):
        torch.ops.ocl.manual_seed(i, s)


def seed(device=None) -> int:
    return _seed_from_op(torch.ops.ocl.seed(_index(device)))


def seed_all() -> None:
    for i in range(device_count()):
        torch.ops.ocl.seed(i)


def initial_seed(device=None) -> int:
    return _seed_from_op(torch.ops.ocl.initial_seed(_index(device)))


def get_rng_state(device="ocl") -> torch.Tensor:
    return torch.ops.ocl.get_rng_state(_index(device))


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: torch.Tensor, device="ocl") -> None:
    torch.ops.ocl.set_rng_state(_index(device), new_state.to("cpu", torch.uint8).contiguous())


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)
