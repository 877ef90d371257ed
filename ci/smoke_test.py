"""Smoke tests of an installed torch-ocl wheel (run from outside the source tree).

    python ci/smoke_test.py                     import, then a few ops on the `ocl` device
    python ci/smoke_test.py --import-only       import only (platforms without an OpenCL device)
    python ci/smoke_test.py --check-unsupported also: under a torch the wheel has no library for,
                                                the import fails with the clear message
    python ci/smoke_test.py --runtime-tests tests/runtime   also: pytest on that directory
    python ci/smoke_test.py --expect-version 0.2.0          also: the installed version is that

Every run also loads the native library for the installed torch in a fresh process that has not
imported torch (ctypes, no LD_LIBRARY_PATH): torch's libraries must be found through the library's
own RPATH ($ORIGIN/../../../torch/lib, @loader_path/... on macOS). Not on Windows, where torch's
DLL directory is added on `import torch`. It also prints which OpenCL loader torch-ocl chose.

Used by cibuildwheel's test-command (pyproject.toml), `nox -s smoke-X.Y` and the install tests in
.github/workflows/wheels.yml. Needs torch and the installed torch-ocl; the device tests need an
OpenCL device (PoCL: pip install "torch-ocl[pocl]").
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile


def check_import(expect_version: str | None) -> None:
    import torch

    import torch_ocl

    origin = pathlib.Path(torch_ocl.__file__).resolve()
    if not origin.is_relative_to(pathlib.Path(sys.prefix).resolve()):
        sys.exit(f"torch_ocl was imported from {origin}, not from this environment ({sys.prefix})")
    from torch_ocl import _native

    print(f"python {sys.version.split()[0]} on {sys.platform}, torch {torch.__version__}")
    print(f"torch_ocl {torch_ocl.__version__} from {origin.parent}")
    dist_version = importlib.metadata.version("torch-ocl")
    requires = importlib.metadata.requires("torch-ocl") or []
    torch_reqs = [r for r in requires if r.split(";")[0].rstrip("<>=!~ ,.0123456789") == "torch"]
    print(f"installed distribution torch-ocl {dist_version}, requires {', '.join(torch_reqs)}")
    if dist_version != torch_ocl.__version__:
        sys.exit(f"torch_ocl.__version__ {torch_ocl.__version__} != metadata {dist_version}")
    if expect_version and dist_version != expect_version:
        sys.exit(f"torch-ocl {dist_version} is installed, expected {expect_version}")
    print(f"native library {_native._library_file()}")
    libs = sorted(p.name for p in (origin.parent / "lib").glob("torch-*"))
    print(f"libraries in the wheel: {', '.join(libs)}")
    assert torch._C._get_privateuse1_backend_name() == "ocl", "PrivateUse1 is not renamed to ocl"
    assert hasattr(torch, "ocl"), "torch.ocl is not registered"
    print(f"torch.ocl.is_available() = {torch.ocl.is_available()}")


LOAD_PROBE = r"""
import ctypes, os, sys
for var in ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH"):
    assert var not in os.environ, var
ctypes.CDLL(sys.argv[1], mode=getattr(ctypes, "RTLD_GLOBAL", 0))
assert "torch" not in sys.modules, "torch was imported"
print("loaded without torch imported:", sys.argv[1])
"""


def check_rpath_load() -> None:
    """Load the native library in a process without torch: its RPATH must find torch's libraries."""
    if sys.platform == "win32":
        print("RPATH load test: not on Windows (torch adds its DLL directory on import)")
        return
    from torch_ocl import _native

    library = _native._library_file()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH")
    }
    proc = subprocess.run(
        [sys.executable, "-c", LOAD_PROBE, str(library)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    if proc.returncode != 0:
        sys.exit(
            f"RPATH load test: loading {library} without torch imported failed (torch's lib/ "
            f"is not on the library's RPATH?):\n{proc.stderr.strip()}"
        )
    print(f"RPATH load test: ok ({proc.stdout.strip()})")
    print(f"OpenCL loader chosen: {_native.opencl_library() or '(the system default)'}")


def check_device() -> None:
    import torch

    if not torch.ocl.is_available():
        sys.exit(f"no OpenCL device: {torch.ocl.why_unavailable()}")
    print(f"device 0: {torch.ocl.get_device_name(0)}")

    torch.manual_seed(0)
    x = torch.randn(3, device="ocl")
    y = x * 2 + 1
    print(y)
    torch.testing.assert_close(y.cpu(), x.cpu() * 2 + 1)

    a = torch.randn(33, 17)
    b = torch.randn(17, 9)
    torch.testing.assert_close((a.to("ocl") @ b.to("ocl")).cpu(), a @ b, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(a.to("ocl").sum(dim=0).cpu(), a.sum(dim=0), rtol=1e-5, atol=1e-5)

    layer = torch.nn.Linear(17, 5)
    ref = layer(a).relu().sum()
    ref.backward()
    ref_grad = layer.weight.grad.clone()
    layer.zero_grad()
    layer_ocl = layer.to("ocl")
    out = layer_ocl(a.to("ocl")).relu().sum()
    out.backward()
    torch.testing.assert_close(out.cpu(), ref.detach(), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(layer_ocl.weight.grad.cpu(), ref_grad, rtol=1e-4, atol=1e-4)
    print("device ops: ok (elementwise, mm, sum, Linear forward and backward)")


def check_unsupported() -> None:
    """Hide the library for the running torch and check the import error names what to do."""
    import torch

    import torch_ocl

    pkg = pathlib.Path(torch_ocl.__file__).resolve().parent
    minor = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / "torch_ocl"
        shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.rmtree(copy / "lib" / f"torch-{minor}")
        others = sorted(p.name for p in (copy / "lib").glob("torch-*"))
        env = dict(os.environ, PYTHONPATH=tmp, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
        proc = subprocess.run(
            [sys.executable, "-c", "import torch, torch_ocl"],
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        # With autoload on (the default), `import torch` keeps working and warns with our message
        # (the entry point turns the ImportError into a RuntimeWarning).
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "1"
        autoload = subprocess.run(
            [sys.executable, "-c", "import torch"],
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp,
        )
    message = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    print(f"with lib/torch-{minor} hidden (left: {', '.join(others) or 'none'}):\n  {message}")
    if proc.returncode == 0:
        sys.exit("the import succeeded without a library for the running torch")
    wanted = [
        "ImportError",
        torch.__version__,
        "pip install --no-build-isolation --no-binary torch-ocl torch-ocl",
    ]
    if others:
        wanted.append("torch>=")
    missing = [w for w in wanted if w not in message]
    if missing:
        sys.exit(f"the import error does not mention {missing}")
    if autoload.returncode != 0:
        sys.exit(f"`import torch` (autoload) failed instead of warning:\n{autoload.stderr}")
    if message.partition(": ")[2] not in autoload.stderr:
        sys.exit(f"`import torch` (autoload) does not show the error:\n{autoload.stderr}")
    print("  `import torch` with autoload works and warns with the same message")
    print("unsupported torch: the import fails with the clear message")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--import-only", action="store_true", help="skip the device ops")
    parser.add_argument(
        "--check-unsupported", action="store_true", help="also check the unsupported-torch error"
    )
    parser.add_argument("--runtime-tests", metavar="DIR", help="run pytest on DIR if it exists")
    parser.add_argument("--expect-version", metavar="V", help="the torch-ocl version expected")
    args = parser.parse_args()
    check_import(args.expect_version)
    check_rpath_load()
    if not args.import_only:
        check_device()
    if args.check_unsupported:
        check_unsupported()
    if args.runtime_tests:
        if pathlib.Path(args.runtime_tests).is_dir():
            cmd = [sys.executable, "-m", "pytest", args.runtime_tests, "-q"]
            print("+ " + " ".join(cmd), flush=True)
            if subprocess.call(cmd) != 0:
                sys.exit(f"pytest {args.runtime_tests} failed")
        else:
            print(f"({args.runtime_tests} does not exist: no runtime tests)")
    print("smoke test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
