"""The torch versions torch-ocl supports: the one list that everything else reads.

A release wheel carries one native library per torch minor listed here
(torch_ocl/lib/torch-X.Y/), and its metadata requires torch within exactly that range. The
noxfile, the workflows (through --github-matrix) and ci/audit_wheel.py read this list; the
lint session checks (--check) that pyproject.toml and ci/constraints.txt agree with it.

Adding a torch minor: add it to BUILD_PINS with the patch release to build against, widen the torch
range in pyproject.toml's [build-system] requires, run `nox -s lint` (it says what else disagrees).

This file is also the scikit-build-core dynamic-metadata provider for the torch requirement
(pyproject.toml, [[tool.dynamic-metadata]]): a wheel built against torch X.Y requires
torch>=X.Y,<X.Y+1, because it carries only the library for X.Y; the sdist declares the whole
supported range and marks Requires-Dist dynamic. ci/merge_wheels.py recomputes the requirement
for merged wheels from the libraries they carry.

    python ci/torch_versions.py                  the supported minors, one a line
    python ci/torch_versions.py --github-matrix  the same as a JSON list (workflow matrices)
    python ci/torch_versions.py --default        the minor the default nox sessions use
    python ci/torch_versions.py --pin 2.14       the pip requirement to build 2.14 against
    python ci/torch_versions.py --range          the requirement a wheel with every minor declares
    python ci/torch_versions.py --pythons 2.15   the CPython versions torch 2.15 has wheels for
    python ci/torch_versions.py --check          fail if pyproject.toml/constraints disagree

Standard library only: it runs before anything is installed, inside build backends and in the
manylinux containers.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

# torch minor -> the release the wheels are built against (the newest patch release of the minor).
# Oldest first. Three newest buildable minors is the goal; see README "Release and platforms".
BUILD_PINS = {
    "2.13": "2.13.0",
    "2.14": "2.14.1",
    "2.15": "2.15.0",
}
SUPPORTED = tuple(BUILD_PINS)
# torch minor -> the CPython versions PyPI has torch wheels for (3.10 to 3.14 as far as each minor
# allows; checked against PyPI's file list of each build pin, November 2026: 2.15.0 has no cp310
# wheels, and cp315 wheels that are not tested yet). The install tests (ci/cibw_builds.py
# --install-matrix) and the smoke-X.Y sessions follow it.
PYTHONS = {
    "2.13": ("3.10", "3.11", "3.12", "3.13", "3.14"),
    "2.14": ("3.10", "3.11", "3.12", "3.13", "3.14"),
    "2.15": ("3.11", "3.12", "3.13", "3.14"),
}
# The default nox sessions (`nox -s build test`) build against this one: on this project's
# development machines it is a small local CPU build, while 2.14 and 2.15 are CUDA builds of
# several GB from PyPI.
DEFAULT = "2.13"

ROOT = pathlib.Path(__file__).resolve().parents[1]


def minor_key(minor: str) -> tuple[int, int]:
    major, _, rest = minor.partition(".")
    return int(major), int(rest)


def minor_of(version: str) -> str:
    """'2.14.1+cpu' -> '2.14'."""
    match = re.match(r"^\s*(\d+)\.(\d+)", version)
    if not match:
        raise ValueError(f"not a torch version: {version!r}")
    return f"{match.group(1)}.{match.group(2)}"


def requirement_for(minors) -> str:
    """The torch requirement of a wheel that carries libraries for exactly `minors`.

    Contiguous minors give torch>=A.B,<A.C; a gap is excluded with !=X.Y.* so that the range
    never admits a torch the wheel has no library for.
    """
    keys = sorted({minor_key(m) for m in minors})
    if not keys:
        raise ValueError("no torch minor versions given")
    (lo_major, lo_minor), (hi_major, hi_minor) = keys[0], keys[-1]
    spec = [f">={lo_major}.{lo_minor}", f"<{hi_major}.{hi_minor + 1}"]
    if lo_major != hi_major:
        raise ValueError(f"torch minors span major versions: {sorted(minors)}")
    present = {m for _, m in keys}
    spec += [f"!={lo_major}.{m}.*" for m in range(lo_minor + 1, hi_minor) if m not in present]
    return "torch" + ",".join(spec)


def _installed_torch_version() -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        return version("torch")
    except PackageNotFoundError:
        return None


# ---------------------------------------------------------------------------------------------
# scikit-build-core dynamic-metadata provider (dynamic-metadata 0.3 protocol)


class Provider:
    """Adds the torch requirement to [project] dependencies (field = "dependencies")."""

    def __init__(self) -> None:
        self._state = "wheel"

    def build_state(self, build_state: str) -> None:
        self._state = build_state

    def dynamic_metadata(self, settings, project) -> dict:
        field = settings.get("field", "dependencies")
        if field != "dependencies":
            raise ValueError("ci/torch_versions.py only provides 'dependencies'")
        # The other runtime dependencies: pyproject.toml lists them in this provider's settings,
        # never in [project] (static and dynamic at once means Metadata-Version 2.6, which PyPI
        # refuses).
        others = [str(r) for r in settings.get("requires", [])]
        installed = _installed_torch_version()
        if self._state == "sdist" or installed is None:
            # The sdist (and metadata without a torch to look at) names the supported range; a
            # wheel built from it requires the torch it was built against.
            return {field: [*others, requirement_for(SUPPORTED)]}
        return {field: [*others, requirement_for([minor_of(installed)])]}

    def dynamic_wheel(self, settings) -> dict:
        return {settings.get("field", "dependencies"): True}


# ---------------------------------------------------------------------------------------------
# Consistency check (nox -s lint)


def check() -> list[str]:
    """What in the repository disagrees with BUILD_PINS; empty when all agree."""
    problems = []
    if list(SUPPORTED) != sorted(SUPPORTED, key=minor_key):
        problems.append(f"BUILD_PINS must be sorted oldest first: {list(SUPPORTED)}")
    for minor, pin in BUILD_PINS.items():
        if minor_of(pin) != minor:
            problems.append(f"BUILD_PINS[{minor!r}] = {pin!r} is not a {minor} release")
    if set(PYTHONS) != set(BUILD_PINS):
        problems.append(f"PYTHONS names {sorted(PYTHONS)}, BUILD_PINS {sorted(BUILD_PINS)}")
    if DEFAULT not in SUPPORTED:
        problems.append(f"DEFAULT {DEFAULT!r} is not in {list(SUPPORTED)}")

    wanted = requirement_for(SUPPORTED)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    build_system = re.search(r"(?ms)^\[build-system\]\s*$(.*?)^\[", pyproject)
    reqs = re.findall(r'"(torch\b[^"]*)"', build_system.group(1) if build_system else "")
    if [r.replace(" ", "") for r in reqs] != [wanted]:
        problems.append(
            f"pyproject.toml [build-system] requires {reqs or 'no torch'}; expected {wanted!r}"
        )
    project = re.search(r"(?ms)^\[project\]\s*$(.*?)^\[", pyproject)
    if project and re.search(r'"torch\s*([<>=!~;\[]|")', project.group(1)):
        problems.append(
            "pyproject.toml [project] names torch statically: the torch requirement comes from "
            "ci/torch_versions.py ([[tool.dynamic-metadata]])"
        )

    if project:
        dynamic = re.search(r"(?m)^dynamic\s*=\s*\[([^\]]*)\]", project.group(1))
        dynamic_fields = re.findall(r'"([^"]+)"', dynamic.group(1)) if dynamic else []
        for field in dynamic_fields:
            if re.search(rf"(?m)^{re.escape(field)}\s*=", project.group(1)):
                problems.append(
                    f"pyproject.toml [project] sets {field!r} and lists it in dynamic: that makes "
                    "Metadata-Version 2.6 (PEP 808), which PyPI refuses; give it in one place"
                )

    constraints = (ROOT / "ci" / "constraints.txt").read_text(encoding="utf-8")
    pins = re.findall(r"(?m)^torch==(\S+)", constraints)
    if pins != [BUILD_PINS[DEFAULT]]:
        problems.append(
            f"ci/constraints.txt pins torch {pins}; expected torch=={BUILD_PINS[DEFAULT]} "
            f"(BUILD_PINS[DEFAULT])"
        )
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--github-matrix", action="store_true", help="JSON list of the minors")
    group.add_argument("--default", action="store_true", help="the default minor")
    group.add_argument("--pin", metavar="MINOR", help="pip requirement to build MINOR against")
    group.add_argument("--range", action="store_true", help="requirement for all minors")
    group.add_argument("--check", action="store_true", help="check pyproject/constraints")
    group.add_argument("--pythons", metavar="MINOR", help="CPython versions MINOR has wheels for")
    args = parser.parse_args()

    if args.github_matrix:
        print(json.dumps(list(SUPPORTED)))
    elif args.default:
        print(DEFAULT)
    elif args.pin:
        minor = minor_of(args.pin)
        if minor not in BUILD_PINS:
            print(f"torch {minor} is not supported ({', '.join(SUPPORTED)})", file=sys.stderr)
            return 1
        print(f"torch=={BUILD_PINS[minor]}")
    elif args.pythons:
        print("\n".join(PYTHONS.get(minor_of(args.pythons), ())))
    elif args.range:
        print(requirement_for(SUPPORTED))
    elif args.check:
        problems = check()
        for problem in problems:
            print(f"torch_versions: {problem}", file=sys.stderr)
        if problems:
            return 1
        print(f"torch_versions: {', '.join(SUPPORTED)} (default {DEFAULT}); all files agree")
    else:
        print("\n".join(SUPPORTED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
