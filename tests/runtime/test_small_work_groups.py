"""Devices that allow fewer work-items per work-group than our kernels' usual sizes.

OpenCL devices report CL_DEVICE_MAX_WORK_GROUP_SIZE; embedded GPUs can allow fewer than the 64,
128 or 256 work-items that many of our launches take. PoCL lets a process lower its limit
(POCL_MAX_WORK_GROUP_SIZE), so a child process on such a device runs the profile-driven kernel
families (tests/ops/test_kernel_variants.py) under the GPU profile, where work-groups are largest:
every fixed size must fit the limit (DeviceProfile::fit_lws, KernelLaunch's clamp) and the GEMM
tiles fall back to ones that fit (fit_gemm_tiles).
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
import torch

TESTS = pathlib.Path(__file__).resolve().parent.parent

# A fast representative of every family in .ci/run; the whole file is marked slow.
QUICK = (
    "reduction_routes or norm_routes or gemm_layouts or conv2d_forward_backward or "
    "reductions_and_softmax or scans or sort or attention or index_gather or pooling or "
    "foreach or tiny_op"
)


def _pocl() -> bool:
    if not torch.ocl.is_available():
        return False
    return torch.ocl.device_profile().vendor == "pocl"


def _run(subprocess_env, tmp_path, limit: int, select: str | None):
    env = dict(subprocess_env)
    env.update(
        POCL_MAX_WORK_GROUP_SIZE=str(limit),
        TORCH_OCL_DEVICE_PROFILE="gpu",
        # Programs built for the lowered limit stay out of the shared kernel cache.
        TORCH_OCL_CACHE_DIR=str(tmp_path / "kernel-cache"),
    )
    env.pop("TORCH_OCL_DEVICE_PARAMS", None)
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"]
    args += [str(TESTS / "ops" / "test_kernel_variants.py")]
    if select:
        args += ["-k", select]
    proc = subprocess.run(args, cwd=TESTS, env=env, capture_output=True, text=True, timeout=1800)
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0, f"with at most {limit} work-items per group:\n{tail}"
    assert " passed" in proc.stdout and " failed" not in proc.stdout, tail


pytestmark = pytest.mark.skipif(
    not _pocl(), reason="needs PoCL's CPU device (POCL_MAX_WORK_GROUP_SIZE lowers its limit)"
)


def test_device_limit_is_what_the_profile_uses(subprocess_env):
    env = dict(subprocess_env, POCL_MAX_WORK_GROUP_SIZE="32", TORCH_OCL_DEVICE_PROFILE="gpu")
    code = (
        "import torch, torch_ocl\n"
        "p = torch.ocl.device_profile()\n"
        "assert torch.ocl.get_device_properties(0).max_work_group_size == 32\n"
        "for name in ('gemm_large', 'gemm_medium', 'gemm_small', 'gemm_skinny'):\n"
        "    wm, wn = map(int, p.params[name].split(':')[1].split('x'))\n"
        "    assert wm * wn <= 32, (name, p.params[name])\n"
        "assert p.params['reduce_col_tile'] <= 32\n"
        "print('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]


def test_kernel_families_with_32_work_items(subprocess_env, tmp_path):
    _run(subprocess_env, tmp_path, 32, QUICK)


@pytest.mark.slow
@pytest.mark.parametrize("limit", [16, 64])
def test_every_kernel_family_with_small_work_groups(subprocess_env, tmp_path, limit):
    _run(subprocess_env, tmp_path, limit, None)
