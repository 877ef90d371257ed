"""Seeding and RNG state of the per-device Philox generators, like torch.cuda.random."""

from __future__ import annotations

import torch

from ._device import _index, device_count


def manual_seed(seed: int, device=None) -> None:
    torch.ops.ocl.manual_seed(_index(device), int(seed) & 0xFFFFFFFFFFFFFFFF)


def manual_seed_all(seed: int) -> None:
    for i in range(device_count()):
        torch.ops.ocl.manual_seed(i, int(seed) & 0xFFFFFFFFFFFFFFFF)


def seed(device=None) -> int:
    return torch.ops.ocl.seed(_index(device))


def seed_all() -> None:
    for i in range(device_count()):
        torch.ops.ocl.seed(i)


def initial_seed(device=None) -> int:
    return torch.ops.ocl.initial_seed(_index(device))


def get_rng_state(device="ocl") -> torch.Tensor:
    return torch.ops.ocl.get_rng_state(_index(device))


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: torch.Tensor, device="ocl") -> None:
    torch.ops.ocl.set_rng_state(_index(device), new_state.to("cpu", torch.uint8).contiguous())


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)
