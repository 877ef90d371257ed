"""OpenCL program builds: compiler errors reach the user with the log; the program cache
(TORCH_OCL_CACHE_DIR, TORCH_OCL_CACHE=0)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from ocl_testing import DEVICE

GOOD = "__kernel void ok(__global float* x) { x[get_global_id(0)] = 1.0f; }\n"
BROKEN = (
    "__kernel void broken(__global float* x) {\n"
    "  x[get_global_id(0)] = undefined_symbol_xyz * 2.0f;\n"
    "}\n"
)
NEEDS_OPTION = '#ifndef TORCH_OCL_TEST_OPTION\n#error "TORCH_OCL_TEST_OPTION is missing"\n#endif\n'


def test_good_program_builds():
    torch.ops.ocl._build_program_for_test(GOOD, "")


def test_broken_program_raises_with_compiler_log():
    for _ in range(2):  # a failed build is not remembered: asking again reports it again
        with pytest.raises(RuntimeError) as info:
            torch.ops.ocl._build_program_for_test(BROKEN, "")
        msg = str(info.value)
        assert "undefined_symbol_xyz" in msg, msg  # the compiler's own words
        assert "log" in msg.lower()
    # The process keeps working.
    x = torch.arange(5, dtype=torch.float32).to(DEVICE)
    assert (x * 3 - 1).cpu().tolist() == [-1.0, 2.0, 5.0, 8.0, 11.0]
    torch.ops.ocl._build_program_for_test(GOOD, "")


def test_build_options_are_passed():
    torch.ops.ocl._build_program_for_test(NEEDS_OPTION + GOOD, "-DTORCH_OCL_TEST_OPTION=1")
    with pytest.raises(RuntimeError, match="TORCH_OCL_TEST_OPTION is missing"):
        torch.ops.ocl._build_program_for_test(NEEDS_OPTION + GOOD, "")
    with pytest.raises(RuntimeError):
        torch.ops.ocl._build_program_for_test(GOOD, "-this-is-not-an-option")


# A kernel variant no other test uses (a dtype combination with a unique scalar), so that the
# child really builds a program instead of finding one already in memory.
CHILD = (
    "import torch, torch_ocl\n"
    "x = torch.arange(10, dtype=torch.int16).to('ocl')\n"
    "y = (x.to(torch.float32) * 0.75 - x).to(torch.int8)\n"
    "assert y.cpu().tolist() == [int(v * 0.75 - v) for v in range(10)], y.cpu().tolist()\n"
    "print('ok')\n"
)


def _run_child(env):
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ok" in proc.stdout


def test_cache_dir_receives_programs(tmp_path, subprocess_env):
    cache = tmp_path / "cache"
    env = dict(subprocess_env, TORCH_OCL_CACHE_DIR=str(cache))
    env.pop("TORCH_OCL_CACHE", None)
    _run_child(env)
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files, f"no program binaries were written to {cache}"
    assert all(p.stat().st_size > 0 for p in files)
    # A second process reuses them (and still computes correctly).
    _run_child(env)


def test_cache_disabled(tmp_path, subprocess_env):
    cache = tmp_path / "cache"
    env = dict(subprocess_env, TORCH_OCL_CACHE_DIR=str(cache), TORCH_OCL_CACHE="0")
    _run_child(env)
    files = [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    assert files == [], f"TORCH_OCL_CACHE=0 still wrote {files}"
