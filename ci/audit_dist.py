"""Audit torch-ocl's release files: what `nox -s wheel_check` and the workflows check.

    python ci/audit_dist.py dist/*.whl dist/*.tar.gz [--minors 2.13,2.14] [--version 0.2.0]

For each wheel:
  - tag: py3-none-<platform> in the file name and in WHEEL (the library has no CPython API);
    a real platform (not "any"), Root-Is-Purelib false;
  - no copy of torch (libtorch*, libc10*, torch*.dll, c10*.dll, libshm*, the torch package) and no
    OpenCL loader or driver (libOpenCL*, OpenCL*.dll, libpocl*) inside;
  - exactly one native library per torch minor (default: every minor in ci/torch_versions.py), at
    torch_ocl/lib/torch-X.Y/, and no other native library anywhere;
  - METADATA: exactly one unconditional torch requirement, equal to the range of the libraries
    carried (torch>=A.B,<A.C), checked both as text and by trying versions on each side;
    Requires-Python present; the version (with --version) as expected;
  - a licence file in .dist-info (LICENSE) and a License-Expression or License field;
  - RECORD: every file listed with the right sha256 and size, nothing listed that is missing;
  - size: reported; more than --max-mb (default 100, PyPI's default limit) fails;
  - Metadata-Version one that PyPI's upload accepts (1.0 to 2.5; scikit-build-core writes 2.6 for
    a field that is both static and dynamic, and `twine check --strict` does not notice);
  - the native libraries' run-time search path: on Linux (ELF, read with `readelf -d`) and macOS
    (Mach-O LC_RPATH, parsed here) it must name torch's lib/ relative to the library
    ($ORIGIN/../../../torch/lib, @loader_path/../../../torch/lib) and no absolute path (a build
    machine's directory).
For each sdist (.tar.gz): PKG-INFO with the version and a Metadata-Version PyPI accepts; torch's
requirement marked Dynamic (a wheel built from it requires the torch it was built against) and
otherwise the supported range; the sources a build needs (CMakeLists.txt, csrc/, kernels/, cmake/,
ci/torch_versions.py, LICENSE); nothing built (no build/, dist/, .nox/, .git/, native libraries),
no .github/ and no benchmark results.
Prints one summary line per file; exits non-zero if any file fails any check.
"""

from __future__ import annotations

import argparse
import base64
import email.parser
import fnmatch
import hashlib
import pathlib
import posixpath
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from torch_versions import SUPPORTED, minor_key, requirement_for  # noqa: E402

NATIVE_SUFFIXES = (".so", ".dylib", ".dll", ".pyd")
LIB_NAMES = {"libtorch_ocl.so", "libtorch_ocl.dylib", "torch_ocl.dll"}
FORBIDDEN = (
    # torch itself: the wheel must use the torch the user installed, never carry a copy.
    "libtorch*",
    "libc10*",
    "libshm*",
    "torch.dll",
    "torch_*.dll",
    "c10*.dll",
    "shm.dll",
    "libtorch_python*",
    # OpenCL loaders and drivers: found at run time (pyopencl's loader, the system's, a GPU driver).
    "libopencl*",
    "opencl*.dll",
    "libpocl*",
    "pocl*.dll",
)
LIB_DIR_RE = re.compile(r"^torch_ocl/lib/torch-(\d+\.\d+)/([^/]+)$")
# The Metadata-Version values PyPI's upload accepts (warehouse, November 2026: up to 2.5). 2.6 (PEP
# 808, partly dynamic fields) is refused at upload time, after everything else has passed.
PYPI_METADATA_VERSIONS = ("1.0", "1.1", "1.2", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5")
# torch's lib/ seen from torch_ocl/lib/torch-X.Y/ (CMakeLists.txt sets these RPATH entries).
TORCH_LIB_RPATH = {"elf": "$ORIGIN/../../../torch/lib", "macho": "@loader_path/../../../torch/lib"}


def _is_native(name: str) -> bool:
    base = posixpath.basename(name).lower()
    return base.endswith(NATIVE_SUFFIXES) or ".so." in base


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def audit(path: pathlib.Path, minors: list[str], version: str | None, max_mb: float) -> list[str]:
    problems: list[str] = []
    match = re.match(r"^([^-]+)-([^-]+)-([^-]+)-([^-]+)-([^-]+)\.whl$", path.name)
    if not match:
        return [f"not a wheel file name (or it has a build tag): {path.name}"]
    name, wheel_version, py, abi, plat = match.groups()
    if (py, abi) != ("py3", "none"):
        problems.append(f"tag {py}-{abi}-{plat}: expected py3-none-<platform>")
    if plat == "any":
        problems.append("platform 'any': the wheel carries native code")
    if version is not None and wheel_version != version:
        problems.append(f"version {wheel_version}, expected {version}")

    dist_info = f"{name}-{wheel_version}.dist-info"
    with zipfile.ZipFile(path) as zf:
        names = [i.filename for i in zf.infolist() if not i.is_dir()]
        data = {n: zf.read(n) for n in names}

    # WHEEL
    wheel_txt = data.get(f"{dist_info}/WHEEL", b"").decode()
    wheel_msg = email.parser.Parser().parsestr(wheel_txt)
    tags = wheel_msg.get_all("Tag") or []
    expected_tags = {f"py3-none-{p}" for p in plat.split(".")}
    if set(tags) != expected_tags:
        problems.append(f"WHEEL tags {tags} do not match the file name ({sorted(expected_tags)})")
    if (wheel_msg.get("Root-Is-Purelib") or "").strip().lower() != "false":
        problems.append("WHEEL: Root-Is-Purelib is not false")

    # Forbidden libraries and native libraries.
    for n in names:
        base = posixpath.basename(n).lower()
        if LIB_DIR_RE.match(n) and base in LIB_NAMES:
            continue  # our own library: libtorch_ocl.so would match libtorch*
        if any(fnmatch.fnmatch(base, pattern) for pattern in FORBIDDEN):
            problems.append(f"carries {n}: torch and OpenCL libraries must come from elsewhere")
        if n.startswith(("torch/", "c10/")):
            problems.append(f"carries {n}: a copy of the torch package")
    libs: dict[str, list[str]] = {}
    for n in names:
        m = LIB_DIR_RE.match(n)
        if m and m.group(2) in LIB_NAMES:
            libs.setdefault(m.group(1), []).append(n)
        elif _is_native(n):
            problems.append(f"unexpected native library {n}")
    for minor, files in sorted(libs.items()):
        if len(files) != 1:
            problems.append(f"torch {minor}: {len(files)} native libraries {files}, expected 1")
    carried = sorted(libs, key=minor_key)
    if carried != sorted(minors, key=minor_key):
        problems.append(
            f"native libraries for torch {carried or 'none'}, expected one for each of {minors}"
        )

    for n in names:
        m = LIB_DIR_RE.match(n)
        if m and m.group(2) in LIB_NAMES:
            problems += [f"{n}: {p}" for p in check_rpath(data[n])]

    # METADATA
    meta_txt = data.get(f"{dist_info}/METADATA", b"").decode()
    meta = email.parser.Parser().parsestr(meta_txt)
    if not meta_txt:
        problems.append("no METADATA")
    problems += _check_metadata_version(meta, "METADATA")
    if meta.get("Version") != wheel_version:
        problems.append(f"METADATA Version {meta.get('Version')} != file name {wheel_version}")
    if not meta.get("Requires-Python"):
        problems.append("METADATA has no Requires-Python")
    torch_reqs = []
    for req in meta.get_all("Requires-Dist") or []:
        req_name = re.match(r"^\s*([A-Za-z0-9._-]+)", req)
        if req_name and re.sub(r"[-_.]+", "-", req_name.group(1)).lower() == "torch":
            if "extra" not in req.partition(";")[2]:
                torch_reqs.append(req.strip())
    if carried:
        problems += _check_torch_requirement(torch_reqs, carried)

    # Licence
    licence_files = [
        n for n in names if n.startswith(dist_info + "/") and "licen" in n.lower()
    ]  # .dist-info/licenses/LICENSE (metadata 2.4) or .dist-info/LICENSE
    if not licence_files:
        problems.append("no licence file in .dist-info")
    if not (meta.get("License-Expression") or meta.get("License")):
        problems.append("METADATA has neither License-Expression nor License")

    # RECORD
    record_name = f"{dist_info}/RECORD"
    listed = {}
    for line in data.get(record_name, b"").decode().splitlines():
        if not line.strip():
            continue
        parts = line.rsplit(",", 2)
        if len(parts) != 3:
            problems.append(f"RECORD: malformed line {line!r}")
            continue
        listed[parts[0]] = (parts[1], parts[2])
    if record_name not in data:
        problems.append("no RECORD")
    for n in names:
        if n == record_name:
            continue
        if n not in listed:
            problems.append(f"RECORD does not list {n}")
        elif listed[n] != (_record_hash(data[n]), str(len(data[n]))):
            problems.append(f"RECORD: wrong hash or size for {n}")
    for n in listed:
        if n not in data:
            problems.append(f"RECORD lists {n}, which is not in the wheel")

    size_mb = path.stat().st_size / 1e6
    if size_mb > max_mb:
        problems.append(f"{size_mb:.1f} MB, more than the limit of {max_mb} MB")
    return problems


def _check_metadata_version(meta, where: str) -> list[str]:
    got = (meta.get("Metadata-Version") or "").strip()
    if got not in PYPI_METADATA_VERSIONS:
        return [
            f"{where}: Metadata-Version {got or '(none)'}; PyPI's upload accepts "
            f"{', '.join(PYPI_METADATA_VERSIONS)} (2.6 comes from a [project] field that is both "
            "static and in dynamic)"
        ]
    return []


# ---------------------------------------------------------------------------------------------
# Run-time search paths of the native libraries


def elf_runpaths(blob: bytes) -> list[str] | None:
    """DT_RPATH and DT_RUNPATH entries of an ELF shared library, read with `readelf -d`; None if
    `blob` is not ELF."""
    if blob[:4] != b"\x7fELF":
        return None
    readelf = shutil.which("readelf")
    if not readelf:
        raise RuntimeError("readelf is needed to check the RPATH (apt-get install binutils)")
    with tempfile.NamedTemporaryFile(suffix=".so") as tmp:
        tmp.write(blob)
        tmp.flush()
        out = subprocess.run(
            [readelf, "-d", tmp.name], check=True, capture_output=True, text=True
        ).stdout
    # 0x000000000000001d (RUNPATH)  Library runpath: [$ORIGIN:$ORIGIN/../../../torch/lib]
    paths = []
    for _kind, value in re.findall(r"\((RPATH|RUNPATH)\)\s+Library r\w*path: \[(.*)\]", out):
        paths += [p for p in value.split(":") if p]
    return paths


_LC_RPATH = 0x8000001C


def macho_rpaths(blob: bytes) -> list[str] | None:
    """LC_RPATH entries of a Mach-O library (thin 64-bit, or every slice of a fat one); None if
    `blob` is not Mach-O."""
    magic_be = struct.unpack_from(">I", blob)[0] if len(blob) >= 4 else 0
    if magic_be in (0xCAFEBABE, 0xCAFEBABF):  # fat: big-endian header, one arch per slice
        count = struct.unpack_from(">I", blob, 4)[0]
        step, fmt = (20, ">iiIII") if magic_be == 0xCAFEBABE else (32, ">iiQQII")
        paths: list[str] = []
        for i in range(count):
            offset = struct.unpack_from(fmt, blob, 8 + i * step)[2]
            paths += [p for p in macho_rpaths(blob[offset:]) or [] if p not in paths]
        return paths
    if blob[:4] not in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe"):
        return None
    header = 32 if blob[:4] == b"\xcf\xfa\xed\xfe" else 28
    ncmds = struct.unpack_from("<I", blob, 16)[0]
    pos, paths = header, []
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", blob, pos)
        if cmd == _LC_RPATH:
            offset = struct.unpack_from("<I", blob, pos + 8)[0]
            raw = blob[pos + offset : pos + size]
            paths.append(raw.split(b"\0", 1)[0].decode())
        pos += size
    return paths


def check_rpath(blob: bytes) -> list[str]:
    """What is wrong with a native library's search path (Windows DLLs have none: [])."""
    for kind, reader in (("elf", elf_runpaths), ("macho", macho_rpaths)):
        paths = reader(blob)
        if paths is None:
            continue
        problems = []
        if TORCH_LIB_RPATH[kind] not in paths:
            problems.append(
                f"RPATH {paths} lacks {TORCH_LIB_RPATH[kind]} (torch's lib/ relative to the "
                "library: CMakeLists.txt)"
            )
        problems += [
            f"absolute RPATH entry {p} (a build machine's path)" for p in paths if p.startswith("/")
        ]
        return problems
    return []


def rpath_summary(blob: bytes) -> str:
    for reader in (elf_runpaths, macho_rpaths):
        paths = reader(blob)
        if paths is not None:
            return ":".join(paths)
    return "-"


def _check_torch_requirement(reqs: list[str], carried: list[str]) -> list[str]:
    wanted = requirement_for(carried)
    if len(reqs) != 1:
        return [f"METADATA: {len(reqs)} unconditional torch requirements {reqs}, expected 1"]
    try:
        from packaging.requirements import Requirement
        from packaging.version import Version
    except ImportError:
        return ["the audit needs 'packaging' (pip install packaging)"]
    got, want = Requirement(reqs[0]), Requirement(wanted)
    problems = []
    if got.marker is not None or got.extras or got.url:
        problems.append(f"torch requirement {reqs[0]!r} has markers, extras or a URL")
    if got.specifier != want.specifier:
        problems.append(f"torch requirement {reqs[0]!r}, expected {wanted!r}")
    # And by behaviour: every carried minor admitted, its neighbours outside the range refused.
    lo, hi = carried[0], carried[-1]
    lo_major, lo_minor = minor_key(lo)
    hi_major, hi_minor = minor_key(hi)
    admitted = [f"{m}.0" for m in carried] + [f"{m}.9" for m in carried]
    refused = [f"{lo_major}.{lo_minor - 1}.9", f"{hi_major}.{hi_minor + 1}.0"]
    refused += [
        f"{lo_major}.{m}.0"
        for m in range(lo_minor, hi_minor + 1)
        if f"{lo_major}.{m}" not in carried
    ]
    for v in admitted:
        if not got.specifier.contains(Version(v), prereleases=True):
            problems.append(f"torch requirement {reqs[0]!r} refuses torch {v}, which it carries")
    for v in refused:
        if got.specifier.contains(Version(v), prereleases=True):
            problems.append(f"torch requirement {reqs[0]!r} admits torch {v}: no library for it")
    return problems


SDIST_REQUIRED = (
    "PKG-INFO",
    "pyproject.toml",
    "CMakeLists.txt",
    "LICENSE",
    "README.md",
    "ci/torch_versions.py",
    "python/torch_ocl/__init__.py",
    "python/torch_ocl/_native.py",
)
SDIST_REQUIRED_DIRS = ("csrc/", "kernels/", "cmake/")
SDIST_FORBIDDEN_DIRS = (
    "build/",
    "dist/",
    ".nox/",
    ".git/",
    ".github/",
    "python/torch_ocl/lib/",
    "benchmarks/results/",
)
# Benchmark results (gpu.yml's bench-results.json, anything a benchmark run leaves behind).
SDIST_FORBIDDEN_FILES = ("bench-results*.json", "benchmarks/*.json", "benchmarks/*.csv")


def audit_sdist(path: pathlib.Path, minors: list[str], version: str | None) -> list[str]:
    problems: list[str] = []
    match = re.match(r"^(torch_ocl)-(.+)\.tar\.gz$", path.name)
    if not match:
        return [f"not an sdist name of torch-ocl: {path.name}"]
    sdist_version = match.group(2)
    if version is not None and sdist_version != version:
        problems.append(f"version {sdist_version}, expected {version}")
    top = f"torch_ocl-{sdist_version}/"
    with tarfile.open(path, "r:gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
        pkg_info = (
            tar.extractfile(members[top + "PKG-INFO"]).read().decode()
            if (top + "PKG-INFO" in members)
            else ""
        )
    names = [n[len(top) :] for n in members if n.startswith(top)]
    if len(names) != len(members):
        problems.append(f"members outside {top}")
    for required in SDIST_REQUIRED:
        if required not in names:
            problems.append(f"does not contain {required}")
    for required in SDIST_REQUIRED_DIRS:
        if not any(n.startswith(required) and not members[top + n].isdir() for n in names):
            problems.append(f"does not contain {required}")
    for n in names:
        if n.startswith(SDIST_FORBIDDEN_DIRS) or _is_native(n):
            problems.append(f"contains {n}, a build product or not a source")
        elif any(fnmatch.fnmatch(n, pattern) for pattern in SDIST_FORBIDDEN_FILES):
            problems.append(f"contains {n}, a benchmark result")
    meta = email.parser.Parser().parsestr(pkg_info)
    problems += _check_metadata_version(meta, "PKG-INFO")
    if meta.get("Version") != sdist_version:
        problems.append(f"PKG-INFO Version {meta.get('Version')} != file name {sdist_version}")
    if "requires-dist" not in {d.strip().lower() for d in meta.get_all("Dynamic") or []}:
        problems.append("PKG-INFO does not mark Requires-Dist dynamic")
    torch_reqs = [
        r.strip()
        for r in meta.get_all("Requires-Dist") or []
        if re.match(r"^\s*torch\s*[<>=!~;]", r) and "extra" not in r.partition(";")[2]
    ]
    problems += _check_torch_requirement(torch_reqs, minors)
    return problems


def summary(path: pathlib.Path) -> str:
    if path.name.endswith(".tar.gz"):
        with tarfile.open(path, "r:gz") as tar:
            count = sum(1 for m in tar.getmembers() if m.isfile())
            pkg_info = [
                m
                for m in tar.getmembers()
                if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
            ]
            meta_version = (
                email.parser.Parser()
                .parsestr(tar.extractfile(pkg_info[0]).read().decode())
                .get("Metadata-Version")
                if pkg_info
                else None
            )
        return (
            f"{path.name}: {path.stat().st_size / 1e6:.2f} MB, {count} files, "
            f"Metadata-Version {meta_version}"
        )
    with zipfile.ZipFile(path) as zf:
        infos = [i for i in zf.infolist() if LIB_DIR_RE.match(i.filename)]
        rpaths = {i.filename: rpath_summary(zf.read(i.filename)) for i in infos}
        meta = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta_version = (
            email.parser.Parser().parsestr(zf.read(meta[0]).decode()).get("Metadata-Version")
            if meta
            else None
        )
    libs = ", ".join(
        f"{LIB_DIR_RE.match(i.filename).group(1)}: {i.file_size / 1e6:.1f} MB"
        for i in sorted(infos, key=lambda i: minor_key(LIB_DIR_RE.match(i.filename).group(1)))
    )
    rpath = ", ".join(sorted(set(rpaths.values())))
    return (
        f"{path.name}: {path.stat().st_size / 1e6:.1f} MB compressed; libraries {libs}; "
        f"Metadata-Version {meta_version}; RPATH {rpath}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=pathlib.Path, help="wheels and sdists")
    parser.add_argument(
        "--minors",
        default=",".join(SUPPORTED),
        help="torch minors each wheel must carry a library for, and the sdist must name "
        "(default: %(default)s)",
    )
    parser.add_argument("--version", help="the version every wheel must have (release: the tag)")
    parser.add_argument("--max-mb", type=float, default=100.0, help="size limit per wheel")
    args = parser.parse_args()
    minors = sorted({m.strip() for m in args.minors.split(",") if m.strip()}, key=minor_key)

    failed = 0
    for path in args.files:
        if path.name.endswith(".tar.gz"):
            problems = audit_sdist(path, minors, args.version)
        else:
            problems = audit(path, minors, args.version, args.max_mb)
        if problems:
            failed += 1
            print(f"FAIL {path.name}")
            for problem in problems:
                print(f"     - {problem}")
        else:
            print(f"ok   {summary(path)}")
    if failed:
        print(f"audit_dist: {failed} of {len(args.files)} file(s) failed", file=sys.stderr)
        return 1
    print(
        f"audit_dist: {len(args.files)} file(s) ok (wheels: py3-none tag, no torch/OpenCL "
        f"libraries, one library per torch {', '.join(minors)}, Requires-Dist "
        f"{requirement_for(minors)}, licence, RECORD, RPATH, Metadata-Version; sdists: sources, "
        "dynamic torch range, Metadata-Version)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
