"""Device profiles (csrc/runtime/DeviceProfile.*): the class a device gets, what forces it, the
parameter overrides and their errors, and that the ops follow the profile.

The profile is read once per process, so the cases that set TORCH_OCL_DEVICE_PROFILE or
TORCH_OCL_DEVICE_PARAMS run in a child Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from ocl_testing import DEVICE

pytestmark = pytest.mark.skipif(
    not torch.ocl.is_available(), reason="no OpenCL device: torch.ocl.why_unavailable() says why"
)

# Prints the profile as JSON, after checking a GEMM, an elementwise op, a reduction and a cumsum
# against CPU torch (so every overridden parameter is also exercised).
CHILD = r"""
import json, sys
import torch, torch_ocl
torch.manual_seed(0)
a, b = torch.randn(67, 45), torch.randn(45, 91)
x = torch.randn(5000)
d = x.to("ocl")
torch.testing.assert_close((a.to("ocl") @ b.to("ocl")).cpu(), a @ b, rtol=1e-4, atol=1e-4)
torch.testing.assert_close((d * 2 + 1).cpu(), x * 2 + 1)
torch.testing.assert_close(d.cumsum(0).cpu(), x.cumsum(0), rtol=1e-4, atol=1e-3)
p = torch.ocl.device_profile()
print(json.dumps({"name": p.name, "source": p.source, "vendor": p.vendor, "arch": p.arch,
                  "params": p.params, "tile": torch.ocl.gemm_tile(512, 512, 512)}))
"""


def run_child(env_update, code=CHILD):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TORCH_OCL_DEVICE_PROFILE", "TORCH_OCL_DEVICE_PARAMS")
    }
    env.update(env_update)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )


def profile_of(env_update):
    r = run_child(env_update)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_profile_of_this_process():
    p = torch.ocl.device_profile()
    forced = os.environ.get("TORCH_OCL_DEVICE_PROFILE", "").lower()
    props = torch.ocl.get_device_properties()
    if forced in ("cpu", "gpu"):
        assert (p.name, p.source) == (forced, "TORCH_OCL_DEVICE_PROFILE")
    else:
        # A device that lists CPU among its OpenCL types runs the CPU profile (Oclgrind lists
        # GPU|ACCELERATOR|CPU and is shown as a GPU); GPUs the GPU profile.
        assert p.source == "device type"
        if props.type == "cpu" or p.vendor == "oclgrind":
            assert p.name == "cpu"
        elif props.type == "gpu":
            assert p.name == "gpu"
    assert p.vendor in (
        "nvidia",
        "amd",
        "intel",
        "arm",
        "qualcomm",
        "apple",
        "pocl",
        "oclgrind",
        "other",
    )
    if "portable computing language" in props.platform.lower():
        assert p.vendor == "pocl" and not p.arch.startswith("pthread-")
    assert p.params["gemm_register_blocked"] == (p.name == "cpu")
    assert (torch.ocl.gemm_tile(256, 256, 256) is None) == p.params["gemm_register_blocked"]
    assert p.params["stream_chunk"] >= 1


def test_forced_gpu_and_cpu_profiles():
    gpu = profile_of({"TORCH_OCL_DEVICE_PROFILE": "gpu"})
    assert (gpu["name"], gpu["source"]) == ("gpu", "TORCH_OCL_DEVICE_PROFILE")
    params = gpu["params"]
    assert params["gemm_register_blocked"] is False and params["stream_chunk"] == 1
    assert params["scan_tiles"] is True and params["batch_lws"] >= params["multi_tensor_lws"] / 4
    assert gpu["tile"] in (params["gemm_large"], params["gemm_medium"], params["gemm_small"])
    cpu = profile_of({"TORCH_OCL_DEVICE_PROFILE": "CPU"})  # case does not matter
    assert (cpu["name"], cpu["source"]) == ("cpu", "TORCH_OCL_DEVICE_PROFILE")
    assert cpu["params"]["gemm_register_blocked"] is True and cpu["tile"] is None
    auto = profile_of({"TORCH_OCL_DEVICE_PROFILE": "auto"})
    assert auto["source"] == "device type"
    assert auto["vendor"] == gpu["vendor"] == cpu["vendor"]


def test_parameter_overrides():
    p = profile_of(
        {
            "TORCH_OCL_DEVICE_PROFILE": "gpu",
            "TORCH_OCL_DEVICE_PARAMS": "stream_chunk=8,gemm_large=32x64x16:8x16:0:4,"
            "gemm_medium=32x64x16:8x16:0:4,gemm_small=16x16x8:4x4:0,scan_tiles=0",
        }
    )
    assert p["params"]["stream_chunk"] == 8 and p["params"]["scan_tiles"] is False
    # The vector width may be left out (1); the profile always shows it.
    assert p["params"]["gemm_small"] == "16x16x8:4x4:0:1"
    assert p["tile"] == "32x64x16:8x16:0:4"


@pytest.mark.parametrize(
    "env,message",
    [
        ({"TORCH_OCL_DEVICE_PROFILE": "fast"}, "use 'cpu', 'gpu' or 'auto'"),
        (
            {"TORCH_OCL_DEVICE_PARAMS": "warp=4"},
            "does not set a parameter; use name=value with one of: ",
        ),
        ({"TORCH_OCL_DEVICE_PARAMS": "stream_chunk=0"}, "bad value '0' for stream_chunk"),
        ({"TORCH_OCL_DEVICE_PARAMS": "gemm_small=64x64"}, "GEMM tiles as MxNxK:WMxWN:PAD[:VEC]"),
        ({"TORCH_OCL_DEVICE_PARAMS": "gemm_small=32x32x16:8x8:1:3"}, "bad value"),
        ({"TORCH_OCL_DEVICE_PARAMS": "gemm_small=48x48x8:16x16:0"}, "is not a legal tile"),
    ],
)
def test_bad_settings_are_clear_errors(env, message):
    """A bad setting names the problem and the way out; the process stays usable (CPU tensors
    work, and the error repeats rather than leaving a half-built profile)."""
    code = r"""
import torch, torch_ocl
for attempt in range(2):
    try:
        torch.ocl.device_profile()
    except RuntimeError as e:
        print("ERROR:", str(e).splitlines()[0])
    else:
        print("NO ERROR")
print("cpu still works:", (torch.ones(3) * 2).tolist())
"""
    r = run_child(env, code)
    assert r.returncode == 0, r.stderr[-3000:]
    errors = [line for line in r.stdout.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 2 and message in errors[0], r.stdout
    assert "cpu still works: [2.0, 2.0, 2.0]" in r.stdout


def test_ops_follow_the_profile_not_the_device_type():
    """A GEMM runs the tiled kernel under the gpu profile and the register-blocked one under the
    cpu profile, on the same device; both match CPU torch (checked in the child)."""
    code = (
        CHILD
        + r"""
print("tile", torch.ocl.gemm_tile(64, 64, 64, dtype=torch.float16))
"""
    )
    gpu = run_child({"TORCH_OCL_DEVICE_PROFILE": "gpu"}, code)
    cpu = run_child({"TORCH_OCL_DEVICE_PROFILE": "cpu"}, code)
    assert gpu.returncode == 0 and cpu.returncode == 0, gpu.stderr[-2000:] + cpu.stderr[-2000:]
    assert "tile None" in cpu.stdout
    assert "tile None" not in gpu.stdout and "x" in gpu.stdout.splitlines()[-1]


def test_device_profile_names_device():
    p = torch.ocl.device_profile(DEVICE)
    assert p == torch.ocl.device_profile(0) == torch.ocl.device_profile("ocl:0")
    with pytest.raises(IndexError, match="invalid device index"):
        torch.ocl.device_profile(torch.ocl.device_count())


def test_gpu_profile_convolution_is_one_implicit_gemm():
    """Under the GPU profile a convolution reads its input in place (implicit GEMM on the tiled
    kernel): its peak memory is the output's, where im2col + GEMM also holds the column buffer
    (16 x 9 rows of 1024 positions per image here, 9x the output). Both match CPU torch."""
    code = r"""
import json, torch, torch_ocl
import torch.nn.functional as F
torch.manual_seed(0)
x, w, b = torch.randn(4, 16, 32, 32), torch.randn(16, 16, 3, 3), torch.randn(16)
xo, wo, bo = x.to("ocl"), w.to("ocl"), b.to("ocl")
torch.ocl.synchronize()
base = torch.ocl.memory_allocated()
torch.ocl.reset_peak_memory_stats()
y = F.conv2d(xo, wo, bo, padding=1)
peak = torch.ocl.max_memory_allocated() - base
torch.testing.assert_close(y.cpu(), F.conv2d(x, w, b, padding=1), rtol=1e-4, atol=1e-4)
print(json.dumps({"peak": peak, "out": y.numel() * 4,
                  "implicit": torch.ocl.device_profile().params["conv_implicit_gemm"]}))
"""
    implicit = profile_of_code({"TORCH_OCL_DEVICE_PROFILE": "gpu"}, code)
    explicit = profile_of_code(
        {"TORCH_OCL_DEVICE_PROFILE": "gpu", "TORCH_OCL_DEVICE_PARAMS": "conv_implicit_gemm=0"}, code
    )
    assert implicit["implicit"] is True and explicit["implicit"] is False
    assert implicit["peak"] <= implicit["out"] * 1.1, implicit
    assert explicit["peak"] >= explicit["out"] * 5, explicit


def profile_of_code(env_update, code):
    r = run_child(env_update, code)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])
