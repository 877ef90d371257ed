"""What torch.compile on ocl does with input it cannot serve: a generated kernel that the OpenCL
compiler rejects, and float64 on a device without cl_khr_fp64. Each must end in an error that
says what is wrong and where to look, before anything is launched, and leave the process usable.
"""

from __future__ import annotations

import re

import pytest
import torch
from ocl_testing import DEVICE

from torch_ocl._inductor import dtypes
from torch_ocl._inductor.kernel import OclKernel
from torch_ocl._inductor.runtime import launch_count

# A statement no OpenCL C compiler accepts, put into the generated kernel's body.
BROKEN = "this_name_is_not_declared_anywhere += 1;"


def _no_caches():
    """Inductor's caches would serve a graph compiled earlier without generating it again."""
    return (
        torch._inductor.config.patch(fx_graph_cache=False),
        torch._functorch.config.patch(enable_autograd_cache=False),
    )


def test_generated_kernel_that_fails_to_build_shows_log_and_source(monkeypatch):
    generate = OclKernel.codegen_kernel

    def broken(self, name=None):
        source = generate(self, name)
        return re.sub(r"\) \{\n", ") {\n  " + BROKEN + "\n", source, count=1)

    def fn(x):
        return (x * 5).cos() - 2

    x = torch.randn(9, 4)
    monkeypatch.setattr(OclKernel, "codegen_kernel", broken)
    torch._dynamo.reset()
    before = launch_count()
    cache, autograd_cache = _no_caches()
    with cache, autograd_cache, pytest.raises(Exception) as info:
        torch.compile(fn)(x.to(DEVICE))
    message = str(info.value)
    assert "failed to build the OpenCL program for the generated kernel" in message
    assert "this_name_is_not_declared_anywhere" in message  # the compiler's log
    path = re.search(r"full text \(the lines the log refers to\) is in (\S+)\.", message)
    assert path, message
    with open(path.group(1), encoding="utf-8") as f:
        text = f.read()
    assert BROKEN in text and "__kernel void ocl_kernel_" in text  # the generated source
    assert launch_count() == before  # nothing launched
    # The process stays usable: the same function compiles once the generator is right again.
    monkeypatch.setattr(OclKernel, "codegen_kernel", generate)
    torch._dynamo.reset()
    cache, autograd_cache = _no_caches()
    with cache, autograd_cache:
        out = torch.compile(fn)(x.to(DEVICE))
    torch.testing.assert_close(out.cpu(), fn(x), rtol=1e-5, atol=1e-5)
    torch._dynamo.reset()


def test_float64_without_fp64_refused_before_any_launch(monkeypatch):
    def fn(x, y):
        return (x * y).sum(1) + x.amax(1)

    x = torch.randn(6, 5, dtype=torch.float64)
    y = torch.randn(6, 5, dtype=torch.float64)
    monkeypatch.setattr(dtypes, "device_has_fp64", lambda index: False)
    torch._dynamo.reset()
    xs, ys = x.to(DEVICE), y.to(DEVICE)  # (copies are not kernels)
    before = launch_count()
    cache, autograd_cache = _no_caches()
    with cache, autograd_cache, pytest.raises(Exception, match="no float64 support") as info:
        torch.compile(fn)(xs, ys)
    assert "cl_khr_fp64" in str(info.value) and "use float32 tensors" in str(info.value)
    assert launch_count() == before
    # float32 still compiles and runs.
    torch._dynamo.reset()
    cache, autograd_cache = _no_caches()
    with cache, autograd_cache:
        out = torch.compile(fn)(xs.float(), ys.float())
    torch.testing.assert_close(out.cpu(), fn(x.float(), y.float()), rtol=1e-5, atol=1e-5)
    torch._dynamo.reset()
