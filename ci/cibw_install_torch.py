"""Install the CPU build of the torch a cibuildwheel build or test uses (cibuildwheel's
before-build and before-test in pyproject.toml).

    python ci/cibw_install_torch.py           torch only (the test environment)
    python ci/cibw_install_torch.py --build   torch and the build tools (the build environment,
                                              which cibuildwheel builds in without isolation)

The torch minor is TORCH_OCL_BUILD_TORCH (the workflow matrix sets it; default: the default minor
of ci/torch_versions.py), installed at its build pin from PyTorch's CPU wheel index
(TORCH_OCL_TORCH_INDEX overrides it), never a CUDA build. Works in manylinux containers, on macOS
and on Windows (cmd.exe: no shell syntax).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import torch_versions  # noqa: E402

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
BUILD_TOOLS = ["scikit-build-core", "setuptools-scm", "ninja"]


def pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "install", *args]
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def main() -> int:
    build = "--build" in sys.argv[1:]
    minor = os.environ.get("TORCH_OCL_BUILD_TORCH") or torch_versions.DEFAULT
    if minor not in torch_versions.BUILD_PINS:
        print(
            f"cibw_install_torch: TORCH_OCL_BUILD_TORCH={minor!r} is not one of "
            f"{', '.join(torch_versions.SUPPORTED)} (ci/torch_versions.py)",
            file=sys.stderr,
        )
        return 1
    pin = f"torch=={torch_versions.BUILD_PINS[minor]}"
    index = os.environ.get("TORCH_OCL_TORCH_INDEX", CPU_INDEX)
    # Only the CPU index (it also serves torch's dependencies): with PyPI beside it, an equal
    # version there (a CUDA build on Linux, also on aarch64) could win.
    pip(pin, "--index-url", index)
    if build:
        pip(*BUILD_TOOLS)
        # Whatever else scikit-build-core asks for (cmake when the system's is too old).
        out = subprocess.run(
            [sys.executable, str(HERE / "build_requirements.py")],
            check=True,
            capture_output=True,
            text=True,
            cwd=HERE.parent,
        ).stdout
        extra = [line.strip() for line in out.splitlines() if line.strip()]
        if extra:
            pip(*extra)
    check = (
        "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda); "
        "assert torch.version.cuda is None, 'a CUDA build of torch: use the CPU index'"
    )
    subprocess.run([sys.executable, "-c", check], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
