"""Check torch_ocl._native's choice of OpenCL loader when the default one sees no platform.

    python ci/check_opencl_fallback.py      (in a venv with torch-ocl and pyopencl installed)

On macOS pyopencl's wheel bundles the Khronos ICD loader, which does not see Apple's
OpenCL.framework; torch-ocl then falls back to the system's OpenCL. Only a Mac shows that for real
(wheels.yml's install test prints the chosen loader there). This script checks the same code path on
any system with a C compiler, with real libraries:
  1. pyopencl's loader, as installed, reports at least one platform (where PoCL is installed);
  2. with its vendor files hidden (PYOPENCL_HOME and OCL_ICD_VENDORS pointing at an empty
     directory) it reports none, and opencl_library() then returns the fallback given in
     TORCH_OCL_OPENCL_FALLBACK: a stub library built here whose clGetPlatformIDs reports one
     platform;
  3. with no fallback that sees a platform, it keeps pyopencl's loader;
  4. TORCH_OCL_OPENCL_LIBRARY still wins over everything.
The module is loaded from the installed package by file, without torch_ocl/__init__.py (which
would load the native library). Exits 0 with a note where no C compiler is found.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

STUB = r"""
#include <stdint.h>
int32_t clGetPlatformIDs(uint32_t n, void** platforms, uint32_t* count) {
  if (count) *count = 1;
  if (platforms && n > 0) platforms[0] = (void*)0x1;
  return 0;
}
"""

PROBE = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("torch_ocl_native_probe", sys.argv[1])
native = importlib.util.module_from_spec(spec)
spec.loader.exec_module(native)
loader = native._pyopencl_loader()
print(json.dumps({"loader": loader, "count": native._platform_count(loader) if loader else -1,
                  "chosen": native.opencl_library()}))
"""


def native_file() -> pathlib.Path:
    spec = importlib.util.find_spec("torch_ocl")
    if spec is None or not spec.origin:
        sys.exit("check_opencl_fallback: torch_ocl is not installed")
    return pathlib.Path(spec.origin).parent / "_native.py"


def probe(env: dict[str, str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(native_file())],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if sys.platform == "win32" or not cc:
        print("check_opencl_fallback: skipped (needs a C compiler and a POSIX system)")
        return 0
    failures = []
    base = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_OCL_OPENCL")}
    with tempfile.TemporaryDirectory() as tmp:
        suffix = ".dylib" if sys.platform == "darwin" else ".so"
        stub = pathlib.Path(tmp) / f"libopencl-stub{suffix}"
        (pathlib.Path(tmp) / "stub.c").write_text(STUB)
        subprocess.run(
            [cc, "-shared", "-fPIC", "-o", str(stub), str(pathlib.Path(tmp) / "stub.c")], check=True
        )
        empty = pathlib.Path(tmp) / "empty"
        empty.mkdir()
        hidden = dict(base, PYOPENCL_HOME=str(empty), OCL_ICD_VENDORS=str(empty) + "/")

        normal = probe(base)
        print(f"as installed: {normal}")
        if not normal["loader"]:
            print("check_opencl_fallback: pyopencl bundles no loader here; nothing to check")
            return 0
        if normal["count"] < 1:
            print("  (no platform as installed: PoCL is not installed here)")

        r = probe(dict(hidden, TORCH_OCL_OPENCL_FALLBACK=str(stub)))
        print(f"vendors hidden, fallback = stub: {r}")
        if r["count"] != 0:
            failures.append(f"hiding the vendor files left {r['count']} platform(s)")
        elif r["chosen"] != str(stub):
            failures.append(f"no platform in pyopencl's loader, but {r['chosen']} was chosen")

        r = probe(dict(hidden, TORCH_OCL_OPENCL_FALLBACK=str(empty / "missing.so")))
        print(f"vendors hidden, fallback missing: {r}")
        if r["chosen"] != r["loader"]:
            failures.append(f"no fallback sees a platform, but {r['chosen']} was chosen")

        if normal["count"] >= 1:
            r = probe(dict(base, TORCH_OCL_OPENCL_FALLBACK=str(stub)))
            print(f"as installed, fallback = stub: {r}")
            if r["chosen"] != r["loader"]:
                failures.append(f"pyopencl's loader has platforms, but {r['chosen']} was chosen")

        r = probe(dict(hidden, TORCH_OCL_OPENCL_FALLBACK=str(stub), TORCH_OCL_OPENCL_LIBRARY="x"))
        if r["chosen"] != "x":
            failures.append(f"TORCH_OCL_OPENCL_LIBRARY=x, but {r['chosen']} was chosen")
    for failure in failures:
        print(f"check_opencl_fallback: FAIL {failure}", file=sys.stderr)
    if not failures:
        print(
            "check_opencl_fallback: ok (the system's OpenCL is tried when the default loader "
            "sees no platform)"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
