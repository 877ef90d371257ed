"""Control and report the CPU fallback for ops without a native ocl kernel."""

from __future__ import annotations

import contextlib

import torch


def set_fallback_mode(mode: str) -> None:
    """ "warn" (one warning per op), "silent", or "error" (raise NotImplementedError)."""
    torch.ops.ocl.set_fallback_mode(mode)


def get_fallback_mode() -> str:
    return torch.ops.ocl.fallback_mode()


@contextlib.contextmanager
def fallback_mode(mode: str):
    old = get_fallback_mode()
    set_fallback_mode(mode)
    try:
        yield
    finally:
        set_fallback_mode(old)


def fallback_counts() -> dict:
    """How often each op fell back to the CPU in this process, by op name."""
    names, counts = torch.ops.ocl.fallback_counts()
    return dict(zip(names, counts, strict=True))


def reset_fallback_counts() -> None:
    torch.ops.ocl.reset_fallback_counts()
