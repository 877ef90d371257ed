"""Checks csrc/runtime/OpenCL.h (torch-ocl's own declarations of the OpenCL API) against the
Khronos headers: every constant it defines has the same value, every type the same size and
alignment, and every function it declares the same signature as in <CL/cl.h>.

    python ci/check_opencl_decls.py [--include DIR]

Compiles two small C++ programs with the C++ compiler (CXX, default g++), one including the
Khronos header and one ours, each printing what it sees; the two outputs must be equal. Needs the
Khronos headers (ci/install-opencl-headers.sh --headers-only, or DIR / OPENCL_HEADERS_DIR); exits
with status 0 and a note when they are not installed (the build itself does not need them).
Standard library only. Run by `nox -s lint`.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OURS = ROOT / "csrc" / "runtime" / "OpenCL.h"
TYPES = (
    "cl_char cl_uchar cl_short cl_ushort cl_int cl_uint cl_long cl_ulong cl_half cl_float "
    "cl_double cl_int4 cl_int8 cl_long4 cl_long8 cl_bool cl_bitfield cl_device_type "
    "cl_platform_info cl_device_info cl_device_fp_config cl_command_queue_properties "
    "cl_context_properties cl_context_info cl_command_queue_info cl_mem_flags "
    "cl_mem_migration_flags cl_mem_info cl_mem_object_type cl_buffer_create_type cl_map_flags "
    "cl_program_info "
    "cl_program_build_info cl_kernel_info cl_kernel_work_group_info cl_event_info "
    "cl_profiling_info"
).split()


def program(header_include: str, macros: list[str], functions: list[str]) -> str:
    lines = [
        header_include,
        "#include <cstdio>",
        "#include <typeinfo>",
        "int main() {",
    ]
    for m in macros:
        lines.append(f'  std::printf("{m} %lld\\n", static_cast<long long>({m}));')
    for t in TYPES:
        lines.append(
            f'  std::printf("{t} %zu %zu %s\\n", sizeof({t}), alignof({t}), typeid({t}).name());'
        )
    for f in functions:
        lines.append(f'  std::printf("{f} %s\\n", typeid(decltype(&::{f})).name());')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def find_khronos(explicit: str | None) -> pathlib.Path | None:
    candidates = [
        explicit,
        os.environ.get("OPENCL_HEADERS_DIR"),
        "/usr/include",
        "/usr/local/include",
        "/opt/homebrew/include",
    ]
    for c in candidates:
        if c and (pathlib.Path(c) / "CL" / "cl.h").is_file():
            return pathlib.Path(c)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--include", help="directory holding CL/cl.h")
    args = parser.parse_args()
    khronos = find_khronos(args.include)
    if khronos is None:
        print("check_opencl_decls: the Khronos headers are not installed; nothing to compare")
        return 0
    cxx = os.environ.get("CXX", "g++")
    if not shutil.which(cxx):
        print(f"check_opencl_decls: no C++ compiler ({cxx}); nothing to compare")
        return 0
    text = OURS.read_text()
    macros = [
        m
        for m in re.findall(r"^#define (CL_[A-Z0-9_]+) ", text, re.M)
        if m not in ("CL_API_CALL", "CL_CALLBACK")
    ]
    functions = re.findall(r"CL_API_CALL (cl[A-Z]\w+)\(", text)
    outputs = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, include, flags in (
            (
                "khronos",
                "#include <CL/cl.h>",
                [
                    "-I",
                    str(khronos),
                    "-DCL_TARGET_OPENCL_VERSION=120",
                    "-DCL_USE_DEPRECATED_OPENCL_1_2_APIS",
                ],
            ),
            ("ours", f'#include "{OURS}"', []),
        ):
            src = pathlib.Path(tmp) / f"{name}.cpp"
            exe = pathlib.Path(tmp) / name
            src.write_text(program(include, macros, functions))
            subprocess.run([cxx, "-std=c++20", "-w", *flags, str(src), "-o", str(exe)], check=True)
            outputs.append(
                subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
            )
    theirs, ours = (o.splitlines() for o in outputs)
    bad = [(t, o) for t, o in zip(theirs, ours, strict=True) if t != o]
    for t, o in bad:
        print(
            f"check_opencl_decls: differs from the Khronos header:\n  Khronos: {t}\n  ours:    {o}"
        )
    if bad:
        return 1
    print(
        f"check_opencl_decls: {len(macros)} constants, {len(TYPES)} types and {len(functions)} "
        f"functions of csrc/runtime/OpenCL.h match the Khronos headers in {khronos}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
