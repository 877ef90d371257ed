"""Threads that launched ocl kernels exit cleanly: a thread's own kernel objects (runtime/Program.h,
thread_kernel) are not released from its thread-exit destructors, where the driver's own
thread-locals may already be destroyed. On Oclgrind each such clReleaseKernel wrote into the freed
deque of its per-thread API-call stack, and glibc aborted the process ("free(): corrupted unsorted
chunks" at exit after an ocl backward, "tcache_thread_shutdown(): unaligned tcache chunk detected"
when a plain thread exited). On Oclgrind: `ci/run-oclgrind.sh tests/runtime/test_thread_exit.py`.

One host thread at a time here, so these run on Oclgrind too (tests/runtime/test_threads.py, with
threads launching at once, does not)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
import torch
from ocl_testing import DEVICE, make_cpu


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


def test_threads_whose_first_driver_call_makes_their_kernel_exit_cleanly(subprocess_env):
    # The main thread creates the shared kernels and the cached blocks first, so each thread's first
    # OpenCL call is the clCreateKernel of its own copy (the order that made Oclgrind's
    # thread-locals die before ours).
    code = (
        "import threading, torch, torch_ocl\n"
        "x = torch.randn(9000).to('ocl')\n"
        "(x * 2).sum().cpu()\n"
        "def once():\n"
        "    (x * 2).sum().cpu()\n"
        "for _ in range(4):\n"
        "    t = threading.Thread(target=once); t.start(); t.join()\n"
        "for i in range(50):\n"
        "    junk = [torch.randn(100) for _ in range(20)]\n"
        "    (x + i).sum().cpu()\n"
        "print('ok')\n"
    )
    proc = _run(code, subprocess_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["ok"]


def _intel_cpu_runtime() -> bool:
    if not torch.ocl.is_available():
        return False
    return "Intel(R) OpenCL" in torch.ocl.get_device_properties().platform


# Seen on Intel's CPU runtime 2021.2 only, about 1 run in 8, with this build and the one before
# it (never on PoCL): at exit the autograd engine's device thread "pt_autograd_0" is cancelled
# (gdb: __do_cancel -> _Unwind_ForcedUnwind -> __gxx_personality_v0 -> std::terminate, "terminate
# called without an active exception") while the runtime shuts down; with
# torch.autograd.set_multithreading_enabled(False) it did not happen in 10 runs. Not fixed yet.
@pytest.mark.xfail(
    condition=_intel_cpu_runtime(),
    strict=False,
    reason="intermittent exit abort on Intel's CPU runtime (the autograd thread cancelled at exit)",
)
def test_process_exit_after_an_ocl_backward(subprocess_env):
    # An ocl op before the autograd engine exists: at exit the engine's device thread ends (its
    # thread-exit destructors run) while the main thread goes on through static destructors.
    code = (
        "import torch, torch_ocl\n"
        "x = torch.randn(4, 6, dtype=torch.float64)\n"
        "float((x.to('ocl') * 2 + 1).sum())\n"
        "t = x.clone().requires_grad_()\n"
        "torch.autograd.grad(t.var(1).sum(), t)\n"
        "t = x.to('ocl').requires_grad_()\n"
        "(g,) = torch.autograd.grad(t.var(1).sum(), t)\n"
        "print(torch.allclose(g.cpu(), (2 / 5) * (x - x.mean(1, keepdim=True))))\n"
    )
    proc = _run(code, subprocess_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["True"]
    assert proc.stderr == ""


def test_kernels_of_exited_threads_are_released():
    x = make_cpu((9000,), torch.float32, seed=5).to(DEVICE)
    (x * 2).sum().cpu()
    baseline = torch.ops.ocl._thread_kernel_count()

    def once():
        (x * 3).sum().cpu()

    for _ in range(3):
        t = threading.Thread(target=once)
        t.start()
        t.join()
    # join() returns when the Python thread is done; its C++ thread-locals go a moment later. The
    # count releases the kernels that exited threads handed over.
    deadline = time.monotonic() + 10
    while torch.ops.ocl._thread_kernel_count() > baseline and time.monotonic() < deadline:
        time.sleep(0.01)
    assert torch.ops.ocl._thread_kernel_count() == baseline
