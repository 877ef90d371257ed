"""Loading the native library that matches the running torch, and choosing the OpenCL loader."""

from __future__ import annotations

import glob
import importlib.util
import os
import pathlib
import sys

import torch

_HERE = pathlib.Path(__file__).resolve().parent


def _torch_minor() -> str:
    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def _library_file() -> pathlib.Path:
    names = {"win32": "torch_ocl.dll", "darwin": "libtorch_ocl.dylib"}
    name = names.get(sys.platform, "libtorch_ocl.so")
    lib_root = _HERE / "lib"
    candidate = lib_root / f"torch-{_torch_minor()}" / name
    if candidate.exists():
        return candidate
    built = sorted(p.name.removeprefix("torch-") for p in lib_root.glob("torch-*") if p.is_dir())
    if not built:
        raise ImportError(
            f"torch-ocl: the native library is missing from {lib_root}. Reinstall torch-ocl, or "
            "build it from source: pip install --no-build-isolation ."
        )
    raise ImportError(
        f"torch-ocl: this build supports torch {', '.join(built)}, but torch "
        f"{torch.__version__} is installed. Install a matching torch "
        f"(pip install 'torch=={built[-1]}.*'), or build torch-ocl from source against the "
        "installed torch: pip install --no-build-isolation --no-binary torch-ocl torch-ocl"
    )


def _pyopencl_loader() -> str | None:
    """The ICD loader bundled in the pyopencl wheel, if any (it also finds pip-installed PoCL)."""
    spec = importlib.util.find_spec("pyopencl")
    if spec is None or not spec.origin:
        return None
    pkg = pathlib.Path(spec.origin).parent
    patterns = [
        pkg / ".libs" / "libOpenCL*.so*",  # Linux (auditwheel)
        pkg / ".dylibs" / "libOpenCL*.dylib",  # macOS (delocate)
        pkg.parent / "pyopencl.libs" / "OpenCL*.dll",  # Windows (delvewheel)
    ]
    for pattern in patterns:
        found = sorted(glob.glob(str(pattern)))
        if found:
            # The bundled loader reads PYOPENCL_HOME to find its vendor files; pyopencl sets it
            # on import, and it must be set before the loader is first used without pyopencl.
            os.environ.setdefault("PYOPENCL_HOME", str(pkg))
            return found[0]
    return None


def opencl_library() -> str:
    """Which OpenCL loader to use: TORCH_OCL_OPENCL_LIBRARY, pyopencl's, or the system one."""
    explicit = os.environ.get("TORCH_OCL_OPENCL_LIBRARY")
    if explicit:
        return explicit
    return _pyopencl_loader() or ""


_loaded = False


def load() -> None:
    global _loaded
    if _loaded:
        return
    torch.ops.load_library(str(_library_file()))
    built_for = torch.ops.ocl.torch_version()
    if built_for.split(".")[:2] != torch.__version__.split("+")[0].split(".")[:2]:
        raise ImportError(
            f"torch-ocl: native library built for torch {built_for}, running torch "
            f"{torch.__version__}; reinstall torch-ocl for this torch."
        )
    torch.ops.ocl.set_library_path(opencl_library())
    _loaded = True
