"""Check that this machine can build torch-ocl (or lint it), and say how to get what is missing.

    python ci/preflight.py --build     a C++20 compiler (no OpenCL headers are needed: the
                                       library declares the API itself, csrc/runtime/OpenCL.h)
    python ci/preflight.py --lint      clang-format (the system one; CLANG_FORMAT overrides it)

`nox -s build` (every build-X.Y, sdist) runs --build before it installs anything, `nox -s lint`
runs --lint: on a fresh machine they stop with one message that lists everything missing and the
commands that install it on this system, instead of a CMake error minutes later. CMake and ninja
need nothing: the build installs them from PyPI when the system's are missing or too old
(ci/build_requirements.py). Standard library only; exits 1 when something is missing.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import shutil
import sys


def _system() -> str:
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    try:
        fields = dict(
            line.split("=", 1)
            for line in pathlib.Path("/etc/os-release").read_text().splitlines()
            if "=" in line
        )
    except OSError:
        return "linux"
    ids = (fields.get("ID", "") + " " + fields.get("ID_LIKE", "")).replace('"', "").split()
    if {"debian", "ubuntu"} & set(ids):
        return "debian"
    if {"fedora", "rhel", "centos", "almalinux", "rocky"} & set(ids):
        return "fedora"
    if "arch" in ids:
        return "arch"
    return "linux"


HOW = {
    "compiler": {
        "debian": "sudo apt-get install g++   (g++ 10 or newer: C++20)",
        "fedora": "sudo dnf install gcc-c++",
        "arch": "sudo pacman -S gcc",
        "macos": "xcode-select --install   (the Command Line Tools: clang++)",
        "windows": "Visual Studio 2022 (or its Build Tools) with 'Desktop development with C++'",
        "linux": "install g++ 10+ or clang++ 12+ with your package manager, or set CXX",
    },
    "clang-format": {
        "debian": "sudo apt-get install clang-format   (bookworm: 14, the version CI formats with)",
        "fedora": "sudo dnf install clang-tools-extra",
        "arch": "sudo pacman -S clang",
        "macos": "brew install clang-format, then export CLANG_FORMAT=$(brew --prefix)/bin/"
        "clang-format (CI formats with clang-format 14; another version may disagree)",
        "windows": "install LLVM (winget install LLVM.LLVM), then set CLANG_FORMAT",
        "linux": "install clang-format 14 with your package manager, or set CLANG_FORMAT",
    },
}


def find_compiler() -> str | None:
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx.split()[0]) or (cxx if os.path.isfile(cxx) else None)
    if sys.platform == "win32":
        vswhere = pathlib.Path(
            os.environ.get("ProgramFiles(x86)", r"C:\Program Files (x86)"),
            "Microsoft Visual Studio",
            "Installer",
            "vswhere.exe",
        )
        return shutil.which("cl") or (str(vswhere) if vswhere.is_file() else None)
    for name in ("c++", "g++", "clang++"):
        found = shutil.which(name)
        if found:
            return found
    return None


def find_clang_format() -> str | None:
    exe = os.environ.get("CLANG_FORMAT") or "/usr/bin/clang-format"
    if os.access(exe, os.X_OK):
        return exe
    return shutil.which(exe) or shutil.which("clang-format")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="a C++20 compiler")
    parser.add_argument("--lint", action="store_true", help="clang-format")
    args = parser.parse_args()
    system = _system()
    missing: list[tuple[str, str]] = []
    found: list[str] = []
    if args.build:
        compiler = find_compiler()
        if compiler:
            found.append(f"C++ compiler {compiler}")
        else:
            missing.append(("a C++20 compiler", HOW["compiler"][system]))
    if args.lint:
        clang_format = find_clang_format()
        if clang_format:
            found.append(f"clang-format {clang_format}")
        else:
            missing.append(("clang-format (nox -s lint)", HOW["clang-format"][system]))
    where = f"{sys.platform} {platform.machine()} ({system})"
    if not missing:
        print(f"preflight: ok on {where}: {'; '.join(found) or 'nothing to check'}")
        return 0
    lines = [f"preflight: this machine ({where}) lacks what the build needs:"]
    for what, how in missing:
        lines += [f"  - {what}", f"      get it: {how}"]
    print("\n".join(lines), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
