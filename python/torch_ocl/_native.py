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


# The system's OpenCL, tried when the default loader sees no platform (macOS: pyopencl's wheel
# bundles the Khronos ICD loader, which does not see Apple's OpenCL.framework). "" asks the native
# library for the platform's default (csrc/runtime/DynamicLibrary.cpp), which is the framework.
_SYSTEM_FALLBACK = {"darwin": ["/System/Library/Frameworks/OpenCL.framework/OpenCL"]}


def _platform_count(library: str) -> int:
    """How many OpenCL platforms `library` (a loader or an implementation) reports; 0 when it
    cannot be loaded or reports none (CL_PLATFORM_NOT_FOUND_KHR and other errors included)."""
    import ctypes

    try:
        # Vendor files beside a bundled loader name their library without a directory (pyopencl's
        # .libs/pocl.icd): load those first, by path, as the native library does.
        folder = pathlib.Path(library).parent
        for icd in folder.glob("*.icd") if folder != pathlib.Path(".") else ():
            vendor = folder / icd.read_text().strip()
            if vendor.is_file():
                ctypes.CDLL(str(vendor), mode=getattr(ctypes, "RTLD_GLOBAL", 0))
        lib = ctypes.CDLL(library)
        get_platforms = lib.clGetPlatformIDs
    except (OSError, AttributeError):
        return 0
    get_platforms.restype = ctypes.c_int32
    get_platforms.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)]
    count = ctypes.c_uint32(0)
    if get_platforms(0, None, ctypes.byref(count)) != 0:
        return 0
    return count.value


def _first_with_platforms(default: str, fallbacks: list[str]) -> str:
    """`default` if it sees a platform, else the first of `fallbacks` that does, else `default`
    (so that the error a user sees is about the loader they would expect)."""
    if _platform_count(default) > 0:
        return default
    for candidate in fallbacks:
        if _platform_count(candidate) > 0:
            return candidate
    return default


def opencl_library() -> str:
    """Which OpenCL loader to use: TORCH_OCL_OPENCL_LIBRARY, pyopencl's, or the system one.

    Where the system has an OpenCL of its own beside pyopencl's loader (macOS), and pyopencl's
    loader finds no platform, the system's is used: a Mac gets Apple's OpenCL device without
    setting TORCH_OCL_OPENCL_LIBRARY. TORCH_OCL_OPENCL_FALLBACK (paths separated by os.pathsep)
    replaces that list of fallbacks, on any system.
    """
    explicit = os.environ.get("TORCH_OCL_OPENCL_LIBRARY")
    if explicit:
        return explicit
    loader = _pyopencl_loader() or ""
    # TORCH_OCL_OPENCL_FALLBACK (os.pathsep-separated) replaces the system's list (tests use it).
    custom = os.environ.get("TORCH_OCL_OPENCL_FALLBACK")
    if custom is not None:
        fallbacks = [path for path in custom.split(os.pathsep) if path]
    else:
        fallbacks = _SYSTEM_FALLBACK.get(sys.platform, [])
    if loader and fallbacks:
        return _first_with_platforms(loader, fallbacks)
    return loader


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
