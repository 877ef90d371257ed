"""Without a usable OpenCL device: importing works, the device reports unavailable, and using it
raises an error that says what to install. Runs in child processes, so it needs no device."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.no_device

CHILD = """
import json
import torch, torch_ocl
result = {
    "available": torch.ocl.is_available(),
    "count": torch.ocl.device_count(),
    "why": torch.ocl.why_unavailable(),
    "has_ocl": hasattr(torch, "ocl"),
}
try:
    torch.ones(2, device="ocl")
except RuntimeError as e:
    result["error"] = str(e)
    result["error_type"] = type(e).__name__
else:
    result["error"] = None
try:
    torch.zeros(3).to("ocl")
except RuntimeError as e:
    result["to_error"] = str(e)
else:
    result["to_error"] = None
# The CPU still works.
result["cpu"] = (torch.ones(3) * 2).tolist()
print("RESULT " + json.dumps(result))
"""


def _run(env):
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def _check(result):
    assert result["has_ocl"]
    assert result["available"] is False
    assert result["count"] == 0
    assert result["why"], "why_unavailable() should explain"
    for key in ("error", "to_error"):
        msg = result[key]
        assert msg is not None, f"{key}: using the device did not raise"
        assert "no OpenCL device" in msg, msg
        assert "pip install torch-ocl[pocl]" in msg, msg
    assert result["cpu"] == [2.0, 2.0, 2.0]


def test_missing_opencl_library(subprocess_env):
    env = dict(subprocess_env, TORCH_OCL_OPENCL_LIBRARY="/nonexistent/libOpenCL.so.1")
    result = _run(env)
    _check(result)
    assert "/nonexistent/libOpenCL.so.1" in result["why"] or "libOpenCL" in result["why"]


def test_no_matching_device(subprocess_env):
    env = dict(subprocess_env, TORCH_OCL_DEVICES="no-such-device")
    result = _run(env)
    _check(result)
    assert "no-such-device" in result["why"]
