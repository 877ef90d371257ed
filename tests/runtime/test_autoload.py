"""PyTorch's device backend autoload (the torch.backends entry point of an installed torch-ocl)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

pytestmark = pytest.mark.no_device


def _installed() -> bool:
    try:
        importlib.metadata.distribution("torch-ocl")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _run(code, env):
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.skipif(
    not _installed(),
    reason="torch-ocl is not installed as a package (autoload uses its entry point)",
)
def test_autoload_without_import(subprocess_env):
    env = dict(subprocess_env)
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    code = (
        "import sys, torch\n"
        "assert hasattr(torch, 'ocl')\n"
        "assert 'torch_ocl' in sys.modules\n"
        "if torch.ocl.is_available():\n"
        "    x = torch.randn(3).to('ocl')\n"
        "    assert x.device.type == 'ocl', x.device\n"
        "    print(x.cpu().tolist())\n"
        "print('ok')\n"
    )
    proc = _run(code, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ok" in proc.stdout


def test_autoload_disabled(subprocess_env):
    env = dict(subprocess_env, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    code = "import sys, torch\nprint(hasattr(torch, 'ocl'), 'torch_ocl' in sys.modules)\n"
    proc = _run(code, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["False", "False"]


def test_import_is_silent(subprocess_env):
    """Importing torch_ocl prints nothing: in particular no "Overriding a previously registered
    kernel" warning, which two registrations of one op for PrivateUse1 print (one of them then
    silently wins)."""
    result = _run("import torch, torch_ocl", dict(subprocess_env))
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr
