"""Fixtures for the torch-ocl op and runtime tests (helpers live in tests/ocl_testing.py).

Every test runs on the default ocl device (ocl:0 unless TORCH_OCL_DEVICES selects another) and
compares with PyTorch on the CPU. Under tests/ops and tests/models the CPU fallback is switched to
"error", so an op that silently ran on the host instead of a native kernel fails its test.

tests/kernels has its own conftest and runs without torch (nox -s kernels uses --confcutdir), so
nothing there depends on this file.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import types

import pytest
import torch

import torch_ocl  # noqa: F401  (registers the ocl device; autoload only covers installed packages)

# PyPI's torchvision is built for CUDA torch: beside a CPU torch its fake-op registrations fail
# ("operator torchvision::nms does not exist") when anything imports it (transformers does).
# Its pure-Python models work without them (see BUILD-NOTES).
if importlib.util.find_spec("torchvision") is not None:
    sys.modules.setdefault(
        "torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations")
    )

TESTS_DIR = pathlib.Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from ocl_testing import (  # noqa: E402, F401  (re-exported for the test modules)
    ALL_DTYPES,
    DEVICE,
    FLOAT_DTYPES,
    INT_DTYPES,
    Shape,
    assert_ocl_close,
    check_op,
    child_python_env,
    cpu_reference,
    make_cpu,
    ocl_available,
    shapes,
)

OPS_DIR = TESTS_DIR / "ops"
RUNTIME_DIR = TESTS_DIR / "runtime"
MODELS_DIR = TESTS_DIR / "models"
PROFILER_DIR = TESTS_DIR / "profiler"
INDUCTOR_DIR = TESTS_DIR / "inductor"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long-running test (left out on Oclgrind)")
    config.addinivalue_line(
        "markers", "no_device: a test that does not need an OpenCL device in this process"
    )


def _under(item_path, directory) -> bool:
    return directory in pathlib.Path(str(item_path)).resolve().parents


def pytest_collection_modifyitems(config, items):
    if ocl_available():
        return
    skip = pytest.mark.skip(reason="no OpenCL device: " + torch.ocl.why_unavailable())
    for item in items:
        suites = (OPS_DIR, RUNTIME_DIR, MODELS_DIR, PROFILER_DIR, INDUCTOR_DIR)
        in_suite = any(_under(item.fspath, d) for d in suites)
        if in_suite and item.get_closest_marker("no_device") is None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fallback_is_error_under_ops(request):
    """tests/ops and tests/models: an op without a native kernel raises instead of silently
    running on the CPU."""
    native_only = _under(request.node.fspath, OPS_DIR) or _under(request.node.fspath, MODELS_DIR)
    if not native_only or not ocl_available():
        yield
        return
    with torch.ocl.fallback_mode("error"):
        yield


@pytest.fixture
def device():
    return DEVICE


@pytest.fixture
def subprocess_env():
    """A copy of os.environ for a child Python that imports torch_ocl from this checkout (its
    PYTHONPATH passed through, the package's parent directory added)."""
    return child_python_env()


_FILE_SECONDS: dict[str, float] = {}
_WORKER_LINES: list[str] = []  # the memory line of every pytest-xdist worker, on the controller


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def _memory_line(who: str) -> str:
    import resource

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    line = f"{who}: peak resident memory {peak_mb:.0f} MB"
    if ocl_available():
        reserved = torch.ocl.memory_reserved() / 2**20
        peak = torch.ocl.max_memory_reserved() / 2**20
        line += f"; ocl memory reserved: {peak:.0f} MB at the peak, {reserved:.0f} MB at the end"
    return line


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook sends workeroutput
def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: the controller prints it
        workeroutput["torch_ocl_memory"] = _memory_line(
            f"worker {session.config.workerinput['workerid']}"
        )


def pytest_testnodedown(node, error):
    line = getattr(node, "workeroutput", {}).get("torch_ocl_memory")
    if line:
        _WORKER_LINES.append(line)


def pytest_terminal_summary(terminalreporter):
    """The run's slowest test files (CI's time budget) and the peak memory of each test process
    (CI machines are small: a leak shows here before it kills a run)."""
    slowest = sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1])[:12]
    if slowest:
        total = sum(_FILE_SECONDS.values())
        terminalreporter.write_line(
            f"torch-ocl: slowest test files (of {total:.0f} s in tests, all processes):"
        )
        for path, secs in slowest:
            terminalreporter.write_line(f"  {secs:7.1f} s  {path}")
    lines = sorted(_WORKER_LINES) or [_memory_line("test process")]
    for line in lines:
        terminalreporter.write_line(f"torch-ocl: {line}")
