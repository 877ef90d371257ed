"""Run-time source kernels (csrc/runtime/SourceKernel.cpp, torch.ops.ocl._compile_source /
_launch_source): what torch.compile's generated code stands on, tested with hand-written
kernels."""

from __future__ import annotations

import os
import re

import pytest
import torch
from ocl_testing import DEVICE

from torch_ocl._inductor.runtime import compile_ocl_kernel, launch_count

# y[i] = a * x[i] + b for i < n, with a (long) and b (OCL_SCALAR_T, double where the device has
# fp64) from the scalar arguments; each tensor is a buffer and an element offset.
AXPB = r"""
#ifdef TORCH_OCL_FP64
#define OCL_SCALAR_T double
#else
#define OCL_SCALAR_T float
#endif
__kernel void axpb(__global float* x_base, const ulong x_off,
                   __global float* y_base, const ulong y_off,
                   const long n, const long a, const OCL_SCALAR_T b) {
  __global float* x = x_base + x_off;
  __global float* y = y_base + y_off;
  const long i = get_global_id(0);
  if (i >= n) return;
  y[i] = (float)(a * x[i] + b);
}
"""


@pytest.fixture(scope="module")
def axpb():
    return compile_ocl_kernel(AXPB, "axpb")


@pytest.mark.parametrize("n", [0, 1, 7, 1000, 4099])
def test_launch_with_offsets_and_scalars(axpb, n):
    # Views that start inside their buffers: the element offsets must reach the kernel.
    base = torch.arange(2 * n + 5, dtype=torch.float32)
    x = base.to(DEVICE)[3 : 3 + n]
    out = torch.full((n + 9,), -1.0, device=DEVICE)
    y = out[9:]
    axpb([x, y], [n, 3], [0.5], [n], [64])
    expected = 3 * base[3 : 3 + n] + 0.5
    torch.testing.assert_close(y.cpu(), expected)
    assert (out[:9].cpu() == -1).all()  # nothing written before the view


def test_same_source_same_handle_and_one_kernel_per_launch(axpb):
    again = compile_ocl_kernel(AXPB, "axpb")
    assert again.args == axpb.args  # the same handle: the program is not built twice
    x = torch.ones(10, device=DEVICE)
    y = torch.empty(10, device=DEVICE)
    before = launch_count()
    again([x, y], [10, 2], [1.0], [10], [256])
    assert launch_count() - before == 1
    torch.testing.assert_close(y.cpu(), torch.full((10,), 3.0))


def test_stream_order_with_batched_tiny_ops(axpb):
    # A tiny op is recorded into the stream's batch, not enqueued; the launch must still see
    # its result (the batch goes to the queue first), and must not wait on the host.
    x = torch.arange(16, dtype=torch.float32, device=DEVICE)
    torch.ocl.synchronize()
    waits = torch.ocl.host_wait_count()
    z = x + 1  # batched
    y = torch.empty(16, device=DEVICE)
    axpb([z, y], [16, 2], [0.0], [16], [8])
    assert torch.ocl.host_wait_count() == waits
    torch.testing.assert_close(y.cpu(), 2 * (torch.arange(16.0) + 1))


def test_work_group_larger_than_the_device_shrinks(axpb):
    x = torch.randn(3000, device=DEVICE)
    y = torch.empty_like(x)
    axpb([x, y], [3000, 1], [0.0], [3000], [1 << 20])
    torch.testing.assert_close(y.cpu(), x.cpu())


def test_bad_launches_say_what_is_wrong(axpb):
    x = torch.ones(4, device=DEVICE)
    with pytest.raises(RuntimeError, match="1 to 3 global sizes"):
        axpb([x, x], [4, 1], [0.0], [4, 1, 1, 1], [1, 1, 1, 1])
    with pytest.raises(RuntimeError, match="takes ocl tensors"):
        axpb([torch.ones(4), x], [4, 1], [0.0], [4], [4])
    with pytest.raises(RuntimeError, match="no run-time source kernel has handle"):
        torch.ops.ocl._launch_source(10**9, [x], [], [], [1], [1])
    # The process stays usable.
    y = torch.empty(4, device=DEVICE)
    axpb([x, y], [4, 5], [0.0], [4], [4])
    torch.testing.assert_close(y.cpu(), torch.full((4,), 5.0))


def test_build_error_shows_log_and_source_file(tmp_path, monkeypatch):
    bad = "__kernel void broken(__global float* p) { p[0] = undeclared_name; }\n"
    with pytest.raises(RuntimeError) as info:
        compile_ocl_kernel(bad, "broken")
    message = str(info.value)
    assert "failed to build the OpenCL program for the generated kernel 'broken'" in message
    assert "undeclared_name" in message  # the compiler's log
    path = re.search(r"full text \(the lines the log refers to\) is in (\S+)\.", message)
    assert path, message
    text = open(path.group(1)).read()
    assert text.endswith(bad) and "TORCH_OCL_COMMON_CLH" in text  # common.clh comes first
    assert 'backend="aot_eager"' in message
    # The same failure again (nothing cached), and other kernels still build.
    with pytest.raises(RuntimeError, match="undeclared_name"):
        compile_ocl_kernel(bad, "broken")
    ok = compile_ocl_kernel("__kernel void fine(__global float* p, const ulong o) { }", "fine")
    ok([torch.ones(1, device=DEVICE)], [], [], [1], [1])


def test_missing_kernel_name_is_named():
    with pytest.raises(RuntimeError, match="kernel 'other' not found"):
        compile_ocl_kernel("__kernel void present(__global float* p) { }", "other")


@pytest.mark.skipif(os.environ.get("TORCH_OCL_CACHE") == "0", reason="disk cache disabled")
def test_generated_programs_use_the_disk_cache(tmp_path, subprocess_env):
    import subprocess
    import sys

    env = dict(subprocess_env, TORCH_OCL_CACHE_DIR=str(tmp_path), TORCH_OCL_CACHE_LOG="1")
    code = (
        "import torch, torch_ocl\n"
        "from torch_ocl._inductor.runtime import compile_ocl_kernel\n"
        f"compile_ocl_kernel({AXPB!r}, 'axpb')\n"
    )
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "built the generated kernel 'axpb' from source" in first.stderr
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "hit " in second.stderr and "from source" not in second.stderr
