"""Nox sessions for torch-ocl (see ci/README.md).

    nox                      lint, build, test
    nox -s kernels           OpenCL kernel tests through pyopencl only (no torch, no build)
    nox -s oclgrind          kernel and op tests on the Oclgrind simulator
    nox -s bench             benchmarks/bench_runtime.py against the built wheel
    nox -s test -- -x -k add extra arguments go to pytest (to bench_runtime.py for bench)
    nox -s lint -- fix       apply ruff and clang-format fixes instead of checking

Every session uses a plain venv (uv does not see the local torch 2.13.0 CPU wheel) and the pins in
ci/constraints.txt. torch must stay pinned: a range that admits 2.14 pulls a 5.5 GB CUDA build.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import time

import nox

ROOT = pathlib.Path(__file__).resolve().parent
DIST = ROOT / "dist"
CONSTRAINTS = ("-c", str(ROOT / "ci" / "constraints.txt"))
BUILD_TOOLS = ("torch", "scikit-build-core", "ninja")
PYTHON_LINT_PATHS = ("python", "tests", "benchmarks", "examples", "ci", "noxfile.py")
CLANG_FORMAT_GLOBS = ("csrc/**/*.cpp", "csrc/**/*.h", "kernels/*.cl", "kernels/*.clh")
# Files that end up in the wheel: a wheel older than any of them is stale.
WHEEL_SOURCES = ("csrc", "kernels", "python", "CMakeLists.txt", "pyproject.toml")

nox.options.sessions = ["lint", "build", "test"]
nox.options.default_venv_backend = "venv"
nox.options.error_on_external_run = True


def _build_wheel(session: nox.Session) -> None:
    """Build the wheel into dist/ against the torch installed in this session's venv."""
    session.install(*CONSTRAINTS, *BUILD_TOOLS)
    out = session.run("python", "ci/build_requirements.py", silent=True)
    extra = [line.strip() for line in (out or "").splitlines() if line.strip()]
    if extra:
        session.install(*CONSTRAINTS, *extra)
    DIST.mkdir(exist_ok=True)
    session.run(
        "python", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", ".", "-w", str(DIST)
    )


def _newest_wheel(session: nox.Session) -> pathlib.Path:
    """The newest wheel in dist/, built first if there is none."""
    wheels = sorted(DIST.glob("*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        session.log("dist/ holds no wheel: building one")
        _build_wheel(session)
        wheels = sorted(DIST.glob("*.whl"), key=lambda p: p.stat().st_mtime)
        if not wheels:
            session.error("the build put no wheel into dist/")
    wheel = wheels[-1]
    newer = _sources_newer_than(wheel.stat().st_mtime)
    if newer:
        session.warn(
            f"{wheel.name} is older than {newer} (and maybe more): "
            "run `nox -s build` first to test the current sources"
        )
    session.log(f"using {wheel.relative_to(ROOT)}")
    return wheel


def _sources_newer_than(mtime: float) -> str | None:
    for name in WHEEL_SOURCES:
        path = ROOT / name
        candidates = path.rglob("*") if path.is_dir() else [path]
        for candidate in candidates:
            if candidate.is_file() and candidate.stat().st_mtime > mtime:
                return str(candidate.relative_to(ROOT))
    return None


def _install_wheel(session: nox.Session, extras: str, *more: str) -> None:
    """torch (pinned), then the newest wheel with `extras`, then `more` requirements."""
    session.install(*CONSTRAINTS, "torch")
    wheel = _newest_wheel(session)
    session.install(*CONSTRAINTS, f"{wheel}[{extras}]", *more)
    # The tests must exercise the installed package, never python/torch_ocl from the source tree.
    session.run("python", "ci/check_installed.py")


@nox.session
def build(session: nox.Session) -> None:
    """Build the wheel into dist/ (pip wheel --no-build-isolation against torch==2.13.0)."""
    start = time.monotonic()
    _build_wheel(session)
    session.log(f"wheel built in {time.monotonic() - start:.0f} s")


@nox.session
def test(session: nox.Session) -> None:
    """Install the newest wheel from dist/ with [pocl,test] and run `python -m pytest tests -q`."""
    _install_wheel(session, "pocl,test")
    # Run in place (tests/kernels finds kernels/ relative to itself). The repository root does not
    # shadow the installed package: it lives in python/torch_ocl, which is not on sys.path.
    session.run("python", "-m", "pytest", "tests", "-q", *session.posargs)


@nox.session
def kernels(session: nox.Session) -> None:
    """Run tests/kernels through pyopencl on PoCL: no torch, no native build."""
    session.install("pyopencl[pocl]", "numpy", "pytest")
    # --confcutdir: a tests/conftest.py written for the op tests (importing torch) is not loaded.
    session.run(
        "python", "-m", "pytest", "tests/kernels", "-q", "--confcutdir=tests/kernels",
        *session.posargs,
    )  # fmt: skip


@nox.session
def oclgrind(session: nox.Session) -> None:
    """Kernel and op tests on the Oclgrind simulator; fails on any Oclgrind report.

    Arguments replace the default pytest arguments of ci/run-oclgrind.sh
    (tests/kernels tests/ops -q -m "not slow").
    """
    _install_wheel(session, "pocl,test", "pyopencl[pocl,oclgrind]")
    session.run("bash", "ci/run-oclgrind.sh", *session.posargs, external=True)


@nox.session
def bench(session: nox.Session) -> None:
    """benchmarks/bench_runtime.py with the installed wheel (arguments go to the script)."""
    _install_wheel(session, "pocl")
    session.run("python", "benchmarks/bench_runtime.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check + ruff format --check on the Python code; clang-format on C++ and OpenCL C."""
    fix = session.posargs == ["fix"]
    if session.posargs and not fix:
        session.error("lint takes no arguments except `fix`")
    session.install(*CONSTRAINTS, "ruff")

    py_paths = [p for p in PYTHON_LINT_PATHS if (ROOT / p).exists()]
    c_files = sorted({str(p.relative_to(ROOT)) for g in CLANG_FORMAT_GLOBS for p in ROOT.glob(g)})
    clang_format = _clang_format(session) if c_files else None

    if fix:
        # Formatters first; `ruff check --fix` last, as it fails on what it cannot fix.
        if c_files:
            session.run(clang_format, "-i", *c_files, external=True)
        session.run("ruff", "format", *py_paths)
        session.run("ruff", "check", "--fix", *py_paths)
        return

    # Run every check, then fail once with the list, so one run shows all the problems.
    checks = [
        ("ruff check", ["ruff", "check", *py_paths], False),
        ("ruff format", ["ruff", "format", "--check", "--diff", *py_paths], False),
    ]
    if c_files:
        checks.append(("clang-format", [clang_format, "--dry-run", "-Werror", *c_files], True))
    failed = []
    for name, cmd, external in checks:
        try:
            session.run(*cmd, external=external)
        except nox.command.CommandFailed:
            failed.append(name)
    if failed:
        session.error(f"lint failed: {', '.join(failed)} (`nox -s lint -- fix` repairs most)")


def _clang_format(session: nox.Session) -> str:
    """The system clang-format (Debian bookworm: version 14); CLANG_FORMAT overrides it."""
    exe = os.environ.get("CLANG_FORMAT") or "/usr/bin/clang-format"
    if not (os.access(exe, os.X_OK) or shutil.which(exe)):
        session.error(
            f"clang-format not found at {exe}: install it with `apt-get install clang-format` "
            "(or `ci/install-opencl-headers.sh --lint`), or set CLANG_FORMAT=/path/to/clang-format"
        )
    return exe
