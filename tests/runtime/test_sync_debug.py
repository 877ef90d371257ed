"""Sync debug mode (warn/error on host waits) and the host wait counter."""

from __future__ import annotations

import warnings

import pytest
import torch
from ocl_testing import DEVICE


@pytest.fixture(autouse=True)
def _restore_mode():
    before = torch.ocl.get_sync_debug_mode()
    yield
    torch.ocl.set_sync_debug_mode(before)


def test_modes_round_trip():
    for name, value in (("default", 0), ("warn", 1), ("error", 2)):
        torch.ocl.set_sync_debug_mode(name)
        assert torch.ocl.get_sync_debug_mode() == value
        torch.ocl.set_sync_debug_mode(0)
        torch.ocl.set_sync_debug_mode(value)
        assert torch.ocl.get_sync_debug_mode() == value
    with pytest.raises(RuntimeError):
        torch.ocl.set_sync_debug_mode("loud")
    with pytest.raises(RuntimeError):
        torch.ocl.set_sync_debug_mode(3)


def test_context_manager_restores():
    torch.ocl.set_sync_debug_mode("default")
    with torch.ocl.sync_debug_mode("error"):
        assert torch.ocl.get_sync_debug_mode() == 2
    assert torch.ocl.get_sync_debug_mode() == 0
    with pytest.raises(RuntimeError):
        with torch.ocl.sync_debug_mode("error"):
            torch.ones(1, device=DEVICE).item()
    assert torch.ocl.get_sync_debug_mode() == 0


def test_warn_mode_names_the_op():
    x = torch.ones(3, device=DEVICE)
    torch.ocl.set_sync_debug_mode("warn")
    with pytest.warns(UserWarning, match=r"item"):
        x[0].item()
    with pytest.warns(UserWarning, match=r"\.cpu\(\)|copying an ocl tensor to the CPU"):
        x.cpu()


def test_error_mode_raises():
    x = torch.ones(3, device=DEVICE)
    torch.ocl.set_sync_debug_mode("error")
    with pytest.raises(RuntimeError, match=r"item"):
        x[0].item()
    with pytest.raises(RuntimeError):
        x.cpu()
    with pytest.raises(RuntimeError):
        x.tolist()
    # Work that stays on the device is allowed.
    y = x * 2 + 1
    z = torch.ones(4).to(DEVICE)
    torch.ocl.set_sync_debug_mode("default")
    assert y.cpu().tolist() == [3.0, 3.0, 3.0]
    assert z.cpu().tolist() == [1.0] * 4


def test_default_mode_is_silent():
    x = torch.ones(3, device=DEVICE)
    torch.ocl.set_sync_debug_mode("default")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x[1].item() == 1.0
        assert x.cpu().tolist() == [1.0, 1.0, 1.0]


def test_host_wait_count():
    x = torch.arange(8, dtype=torch.float32).to(DEVICE)
    torch.ocl.synchronize()
    n0 = torch.ocl.host_wait_count()
    y = x * 2 + 1  # pure device work
    z = torch.ones(1000).to(DEVICE)  # host -> device copy
    w = torch.empty(5, device=DEVICE).fill_(2)
    assert torch.ocl.host_wait_count() == n0, "device work or an upload waited for the device"
    y.cpu()
    n1 = torch.ocl.host_wait_count()
    assert n1 > n0
    z[0].item()
    assert torch.ocl.host_wait_count() > n1
    del w
