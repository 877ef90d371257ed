"""The release build matrix: which cibuildwheel builds run where, for which torch minors.

    python ci/cibw_builds.py --check           cibuildwheel --print-build-identifiers (linux,
                                               macos, windows) lists exactly TARGETS, and each
                                               job's --archs selects exactly its one build
    python ci/cibw_builds.py --github-matrix   {"include": [...]}: one job per target and torch
                                               minor (.github/workflows/wheels.yml)
    python ci/cibw_builds.py --targets         {"include": [...]}: one job per target (merge)
    python ci/cibw_builds.py --install-matrix  {"include": [...]}: one job per target and Python
                                               of INSTALL_PYTHONS (install tests of merged wheels),
                                               with the smoke-X.Y sessions torch allows there

A target is one platform wheel: the cibuildwheel platform and architecture, the GitHub runner that
builds it natively (no emulation), and the one build identifier it must produce.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import torch_versions  # noqa: E402

# name, cibuildwheel platform, --archs, GitHub runner, the build identifier
TARGETS = [
    ("linux-x86_64", "linux", "x86_64", "ubuntu-24.04", "cp311-manylinux_x86_64"),
    ("linux-aarch64", "linux", "aarch64", "ubuntu-24.04-arm", "cp311-manylinux_aarch64"),
    # macos-14 images were retired on 2026-11-02; the wheel keeps MACOSX_DEPLOYMENT_TARGET 14.0
    # (pyproject.toml), the oldest macOS torch's own wheels support.
    ("macos-arm64", "macos", "arm64", "macos-15", "cp311-macosx_arm64"),
    ("windows-amd64", "windows", "AMD64", "windows-2022", "cp311-win_amd64"),
]

# The install tests of a merged wheel: every CPython from 3.10 to 3.14 (the wheel is py3-none: one
# build serves them all), each with the torch minors that have wheels for it
# (ci/torch_versions.py PYTHONS: torch 2.15 has none for 3.10).
INSTALL_PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")


def install_sessions(python: str) -> list[str]:
    """The smoke-X.Y nox sessions an install test on `python` runs."""
    return [f"smoke-{m}" for m in torch_versions.SUPPORTED if python in torch_versions.PYTHONS[m]]


def _target_dict(target: tuple[str, str, str, str, str]) -> dict[str, str]:
    name, plat, arch, runner, identifier = target
    return {"name": name, "platform": plat, "arch": arch, "runner": runner, "build": identifier}


def identifiers(plat: str, archs: str | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "cibuildwheel", "--print-build-identifiers", "--platform", plat]
    if archs:
        cmd += ["--archs", archs]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=HERE.parent).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def check() -> int:
    problems = []
    for plat in sorted({t[1] for t in TARGETS}):
        want = sorted(t[4] for t in TARGETS if t[1] == plat)
        got = sorted(identifiers(plat))
        print(f"cibuildwheel --print-build-identifiers --platform {plat}: {', '.join(got)}")
        if got != want:
            problems.append(f"{plat}: cibuildwheel would build {got}, intended {want}")
    for name, plat, arch, _, identifier in TARGETS:
        got = identifiers(plat, arch)
        if got != [identifier]:
            problems.append(f"{name} (--archs {arch}): cibuildwheel would build {got}")
    for problem in problems:
        print(f"cibw_builds: {problem}", file=sys.stderr)
    if not problems:
        print(f"cibw_builds: {len(TARGETS)} builds, as intended")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--check", action="store_true")
    group.add_argument("--github-matrix", action="store_true")
    group.add_argument("--targets", action="store_true")
    group.add_argument("--install-matrix", action="store_true")
    args = parser.parse_args()
    if args.check:
        return check()
    if args.targets:
        print(json.dumps({"include": [_target_dict(t) for t in TARGETS]}))
        return 0
    if args.install_matrix:
        jobs = [
            {**_target_dict(t), "python": py, "sessions": " ".join(install_sessions(py))}
            for t in TARGETS
            for py in INSTALL_PYTHONS
        ]
        print(json.dumps({"include": jobs}))
        return 0
    jobs = [
        {**_target_dict(t), "torch": minor} for t in TARGETS for minor in torch_versions.SUPPORTED
    ]
    print(json.dumps({"include": jobs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
