"""Harness for running kernels/*.cl directly through pyopencl, without the native library.

Every program is built the way the native library builds it: kernels/common.clh is
prepended to the kernel file and the build options select types and variants.
The device is chosen like the backend chooses it: TORCH_OCL_DEVICES (a substring of the
platform or device name) filters, and GPUs come before accelerators before CPUs.
"""

import os
import pathlib

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl", reason="pyopencl is needed to run kernel tests")

KERNEL_DIR = pathlib.Path(__file__).resolve().parents[2] / "kernels"

_TYPE_RANK = {cl.device_type.GPU: 0, cl.device_type.ACCELERATOR: 1, cl.device_type.CPU: 2}


def _pick_device():
    wanted = os.environ.get("TORCH_OCL_DEVICES", "")
    found = []
    for platform in cl.get_platforms():
        for device in platform.get_devices():
            if wanted and wanted.lower() not in (platform.name + " " + device.name).lower():
                continue
            rank = min((r for t, r in _TYPE_RANK.items() if device.type & t), default=3)
            if "oclgrind" in platform.name.lower():
                rank = 4  # a simulator: only when selected by name, like the backend does
            found.append((rank, platform.name, device))
    if not found:
        pytest.skip(f"no OpenCL device matches TORCH_OCL_DEVICES={wanted!r}")
    found.sort(key=lambda item: item[0])
    return found[0][2]


class _KeptBuffer(cl.Buffer):
    """A cl.Buffer that lives until the process ends (used on Oclgrind only).

    Oclgrind 21.10's uninitialised-value plugin keeps a buffer's shadow (which bytes were
    written) after the buffer is released, and a new buffer that gets the released buffer's
    number and has no host data inherits it: stores past the old buffer's size are dropped and
    the values read back count as uninitialised (test_eigh reported 20 of these once a smaller
    case had run first). Never releasing a buffer means numbers are never reused. The kernel
    tests' buffers are small, so this costs little memory."""

    kept = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _KeptBuffer.kept.append(self)


@pytest.fixture(scope="session")
def ctx():
    device = _pick_device()
    context = cl.Context([device])
    if "oclgrind" not in device.platform.name.lower():
        yield context
        return
    plain = cl.Buffer
    cl.Buffer = _KeptBuffer
    try:
        yield context
    finally:
        cl.Buffer = plain


@pytest.fixture(scope="session")
def queue(ctx):
    return cl.CommandQueue(ctx)


@pytest.fixture(scope="session")
def has_fp64(ctx):
    return "cl_khr_fp64" in ctx.devices[0].extensions


def program_body(file):
    """kernels/<file> with each line `#include "<header>.clh"` replaced by that header."""
    lines = []
    for line in (KERNEL_DIR / file).read_text().split("\n"):
        if line.startswith('#include "') and line.endswith('.clh"'):
            line = (KERNEL_DIR / line[len('#include "') : -1]).read_text()
        lines.append(line)
    return "\n".join(lines)


@pytest.fixture(scope="module")
def build(ctx):
    """build(name, options) -> cl.Program for kernels/<name>.cl with common.clh prepended and
    its `#include "<header>.clh"` lines replaced by the headers (as runtime/Program.cpp does).
    Programs are kept for one test file: kept for the whole run, every variant of every file
    stays in memory (PoCL's compiled programs took the suite's process to 8 GB)."""
    cache = {}
    common = (KERNEL_DIR / "common.clh").read_text()

    def _build(name, options=()):
        key = (name, tuple(options))
        if key not in cache:
            src = common + "\n" + program_body(name + ".cl")
            opts = list(options)
            if "cl_khr_fp64" in ctx.devices[0].extensions:
                opts.append("-DTORCH_OCL_FP64")
            cache[key] = cl.Program(ctx, src).build(options=opts)
        return cache[key]

    return _build


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
