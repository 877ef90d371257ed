"""Collectives with ocl tensors mapped into host memory (Gloo works on the device memory in
place) and copied through pinned host memory: both against Gloo on CPU tensors, over views of
larger tensors, neighbours in one allocation, device work around the call, memory reused right
after it, host waits; asynchronous calls that return while the device is still busy (the wait
and the Gloo call on the issuer's thread). transfer_ranks.py runs the ranks."""

from __future__ import annotations

import pytest
import torch

from . import launch

pytestmark = pytest.mark.skipif(
    not torch.ocl.is_available(), reason="no OpenCL device: " + torch.ocl.why_unavailable()
)


def test_mapped_and_copied_collectives_match_cpu():
    reports = launch.run("transfer", args=("map", "copy"), script="transfer_ranks.py", timeout=400)
    failures = [f for r in reports for f in r["failures"]]
    assert not failures, "\n".join(failures)
    props = torch.ocl.get_device_properties(0)
    for r in reports:
        assert r["checked map"] > 200 and r["checked copy"] == r["checked map"]
        assert r["host_waits_three_all_reduces map"] == 3
        assert r["host_waits_three_all_reduces copy"] == 3
        assert r["mappings left map"] == 0
        for mode in ("map", "copy"):
            assert "must wait for the device once" in r[f"sync_debug_error {mode}"]
        assert "'sideways'" in r["bad mode error"] and "'copy'" in r["bad mode error"]
        assert r["issuer on cpu:gloo,ocl:oclgloo"] and not r["issuer on gloo"]
        assert r["returned while held"], "an async all_reduce waited for the device"
        assert not r["returned while held, overlap off"]
        if props.type == "CPU" and "Portable Computing Language" in props.platform:
            assert r["auto maps"] is True  # PoCL's memory is the host's


def test_environment_variable_is_checked(monkeypatch):
    from torch_ocl.distributed import _transfer

    monkeypatch.setattr(_transfer, "_mode", None)
    monkeypatch.setenv(_transfer.ENV, "zero")
    with pytest.raises(ValueError, match="TORCH_OCL_DISTRIBUTED_TRANSFER is 'zero'"):
        _transfer.get_transfer_mode()
    monkeypatch.setenv(_transfer.ENV, "copy")
    assert _transfer.get_transfer_mode() == "copy"
    assert not _transfer.maps(torch.device("ocl", 0))
    import torch_ocl

    torch_ocl.distributed.set_transfer_mode("auto")
    assert torch_ocl.distributed.get_transfer_mode() == "auto"
    with pytest.raises(ValueError, match="'map'"):
        torch_ocl.distributed.set_transfer_mode("mapped")
