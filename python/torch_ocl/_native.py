"""Loading the native library that matches the running torch, and choosing the OpenCL loader."""

from __future__ import annotations

import glob
import importlib.util
import os
import pathlib
import sys

import torch

_HERE = pathlib.Path(__file__).resolve().parent


# Building from source, against whatever torch is installed (README, "Install").
_SOURCE_BUILD = "pip install --no-build-isolation --no-binary torch-ocl torch-ocl"
# The one place that knows the native library's file name on each OS.
_LIBRARY_NAMES = {"win32": "torch_ocl.dll", "darwin": "libtorch_ocl.dylib"}


def _torch_minor() -> str:
    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split(".") if part.isdigit())


def _supported_range(minors: list[str]) -> str:
    """'torch>=2.13,<2.15' for ['2.13', '2.14'] (gaps excluded), as the wheel's metadata says."""
    keys = sorted({_minor_key(m) for m in minors})
    (major, lo), (_, hi) = keys[0][:2], keys[-1][:2]
    spec = [f">={major}.{lo}", f"<{major}.{hi + 1}"]
    present = {key[1] for key in keys}
    spec += [f"!={major}.{m}.*" for m in range(lo + 1, hi) if m not in present]
    return "torch" + ",".join(spec)


def _version() -> str:
    try:
        from ._version import __version__

        return __version__
    except ImportError:
        return "(unknown version)"


def _library_file() -> pathlib.Path:
    name = _LIBRARY_NAMES.get(sys.platform, "libtorch_ocl.so")
    lib_root = _HERE / "lib"
    candidate = lib_root / f"torch-{_torch_minor()}" / name
    if candidate.exists():
        return candidate
    built = sorted(
        (p.name.removeprefix("torch-") for p in lib_root.glob("torch-*") if (p / name).exists()),
        key=_minor_key,
    )
    if not built:
        raise ImportError(
            f"torch-ocl {_version()}: the native library ({name}) is missing from {lib_root}. "
            f"Reinstall torch-ocl (pip install --force-reinstall torch-ocl), or build it from "
            f"source against the installed torch {torch.__version__}: {_SOURCE_BUILD}"
        )
    supported = _supported_range(built)
    raise ImportError(
        f"torch-ocl {_version()} does not support the installed torch {torch.__version__}: it "
        f"carries native libraries for torch {', '.join(built)} only ({supported}). Either "
        f'install a supported torch (pip install "{supported}"), or build torch-ocl from source '
        f"against torch {torch.__version__} (needs a C++20 compiler, CMake and the OpenCL "
        f"headers): {_SOURCE_BUILD}"
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
    library = _library_file()
    try:
        torch.ops.load_library(str(library))
    except OSError as exc:
        # Typically "undefined symbol": a library built against another build of torch.
        raise ImportError(
            f"torch-ocl {_version()}: loading {library} failed under torch {torch.__version__}: "
            f"{exc}. Reinstall torch-ocl (pip install --force-reinstall torch-ocl), or build "
            f"it from source against the installed torch: {_SOURCE_BUILD}"
        ) from exc
    built_for = torch.ops.ocl.torch_version()
    if built_for.split(".")[:2] != torch.__version__.split("+")[0].split(".")[:2]:
        raise ImportError(
            f"torch-ocl {_version()}: {library} was built for torch {built_for}, but torch "
            f"{torch.__version__} is running. Reinstall torch-ocl, or build it from source "
            f"against the installed torch: {_SOURCE_BUILD}"
        )
    torch.ops.ocl.set_library_path(opencl_library())
    _loaded = True
