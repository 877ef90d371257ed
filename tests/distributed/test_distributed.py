"""torch.distributed on ocl tensors, two ranks on one device (PoCL here), each a process of its own
(ranks.py, started by launch.py): every collective against the same call on CPU tensors with Gloo,
DDP and FSDP2 training against training on the whole batch in one process, the ways to create a
group, faults (a killed rank, sizes that differ across ranks, a fork), host waits.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import torch_ocl

from . import launch

pytestmark = pytest.mark.skipif(
    not torch.ocl.is_available(), reason="no OpenCL device: " + torch.ocl.why_unavailable()
)


def _no_failures(reports):
    failures = [f for r in reports for f in r["failures"]]
    assert not failures, "\n".join(failures)


def test_registration():
    import torch.distributed as dist

    assert torch_ocl.distributed.is_registered()
    assert dist.Backend.default_device_backend_map["ocl"] == "oclgloo"
    assert dist.get_default_backend_for_device("ocl") == "oclgloo"
    assert "ocl" in dist.Backend.backend_capability["gloo"]
    assert dist.Backend.backend_capability["oclgloo"] == ["cpu", "ocl"]
    assert dist.is_backend_available("oclgloo")


def test_import_hook_registers_after_the_import(tmp_path, monkeypatch):
    """Where torch.distributed is not imported with torch, registration waits for its import."""
    from torch_ocl.distributed import _AfterImport

    (tmp_path / "late_module_for_torch_ocl.py").write_text("VALUE = 41\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    finder = _AfterImport("late_module_for_torch_ocl", lambda m: seen.append(m.VALUE + 1))
    sys.meta_path.insert(0, finder)
    try:
        import late_module_for_torch_ocl  # noqa: F401
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        sys.modules.pop("late_module_for_torch_ocl", None)
    assert seen == [42]
    assert finder not in sys.meta_path


def test_collectives_match_cpu():
    reports = launch.run("collectives")
    _no_failures(reports)
    for r in reports:
        assert r["checked"] > 200
        assert r["backend_config"] == "cpu:gloo,ocl:oclgloo"
        assert r["backend_config gloo"].endswith("ocl:gloo")
        assert r["backend_config None"] == "ocl:oclgloo"
        assert r["host_waits_two_all_reduces"] == 2
        assert "different devices" in r["mixed_devices_error"]
        assert "spawn" in r["fork_error"]
        assert "must wait for the device once" in r["sync_debug_error"]


def test_ddp_matches_single_process():
    reports = launch.run("ddp")
    _no_failures(reports)
    assert reports[0]["DDP 20 steps, small buckets max difference"] <= 2e-5


def test_fsdp2_matches_single_process():
    _no_failures(launch.run("fsdp"))


@pytest.mark.parametrize("transfer", ["copy", "map"])
def test_killed_rank_fails_in_time(transfer):
    """Copied tensors are written only after the collective succeeded: the error says they are
    unchanged. Mapped ones are Gloo's working memory: the error says they may be partly
    written (here they are unchanged: the peer died before sending anything)."""
    env = {"TORCH_OCL_DISTRIBUTED_TRANSFER": transfer}
    (report, _) = launch.run("killed", expect_exit={1: 3}, env=env)
    _no_failures([report])
    assert "all_reduce on rank 0 of 2 failed" in report["error"]
    if transfer == "copy":
        assert "ocl tensors hold what they held before the call" in report["error"]
    else:
        assert "may hold partial results" in report["error"]
        assert "TORCH_OCL_DISTRIBUTED_TRANSFER=copy" in report["error"]
    assert "rank 1 (process" in report["error"] and "no longer running" in report["error"]
    assert report["seconds"] < 30


def test_hung_rank_fails_after_the_timeout():
    (report, _) = launch.run("hung")
    _no_failures([report])
    assert "all_reduce on rank 0 of 2 failed" in report["error"]
    assert "Every rank still runs" in report["error"]
    assert 4 < report["seconds"] < 10


def test_sizes_differing_across_ranks_end_as_on_cpu():
    """Gloo aborts the process on an all_gather whose sizes differ across ranks (its enforce
    'Received data size doesn't match expected size'); ocl tensors end the same way."""
    ends = {}
    for device in ("cpu", "ocl"):
        codes, texts, _ = launch.run_raw("mismatch", args=(device,), timeout=120)
        ends[device] = (codes, ["doesn't match expected size" in t for t in texts])
    assert ends["ocl"] == ends["cpu"], ends


def test_torchrun_launches_the_example(tmp_path):
    example = os.path.join(
        os.path.dirname(__file__), "..", "..", "examples", "distributed_train.py"
    )
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           example, "--steps", "3", "--batch", "16"]  # fmt: skip
    out = subprocess.run(
        cmd, env=launch.child_env(), capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert "rank 0/2" in out.stdout and "rank 1/2" in out.stdout, out.stdout
    assert "parameters equal on all ranks: True" in out.stdout, out.stdout
