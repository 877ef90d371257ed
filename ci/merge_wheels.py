"""Merge per-torch wheels of one platform into the single wheel that is released.

Each input wheel was built against one torch minor and carries torch_ocl/lib/torch-X.Y/. The output
carries all of them, is tagged py3-none-<platform>, and requires torch within exactly the minors
it carries (ci/torch_versions.requirement_for). Everything else in the inputs must be identical.

    python ci/merge_wheels.py -o dist wheelhouse/torch_ocl-*.whl
    python ci/merge_wheels.py -o dist --glob 'dist/torch-*/*.whl'   (newest wheel per torch minor)

Used by `nox -s merge` and by .github/workflows/wheels.yml. Standard library only.
"""

from __future__ import annotations

import argparse
import base64
import email.parser
import glob
import hashlib
import pathlib
import re
import sys
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from torch_versions import minor_key, requirement_for  # noqa: E402

LIB_RE = re.compile(r"^torch_ocl/lib/torch-(\d+\.\d+)/")
WHEEL_NAME_RE = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-(?P<build>\d[^-]*))?"
    r"-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$"
)
# Legacy manylinux aliases -> glibc version.
_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


class MergeError(Exception):
    pass


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _platform_requirement(tag: str) -> tuple[str, tuple[int, ...], str] | None:
    """('manylinux', (2, 28), 'x86_64') for manylinux_2_28_x86_64; None for tags without a
    minimum OS version (win_amd64, linux_x86_64)."""
    for legacy, version in _LEGACY_MANYLINUX.items():
        if tag.startswith(legacy + "_"):
            return "manylinux", version, tag[len(legacy) + 1 :]
    match = re.match(r"^(manylinux|musllinux|macosx)_(\d+)_(\d+)_(.+)$", tag)
    if match:
        family, major, minor, arch = match.groups()
        return family, (int(major), int(minor)), arch
    return None


def merged_platform(plat_sets: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The platform tags of the merged wheel: those of the input that needs the newest OS.

    Inputs of one platform usually carry the same tags; auditwheel may pick an older glibc for
    one build than another, and the merged wheel must satisfy the most demanding library.
    """
    if len(set(plat_sets)) == 1:
        return plat_sets[0]

    def need(tags: tuple[str, ...]) -> tuple[str, str, tuple[int, ...]]:
        parsed = [_platform_requirement(t) for t in tags]
        if any(p is None for p in parsed):
            raise MergeError(f"wheels for different platforms: {sorted(set(plat_sets))}")
        kinds = {(p[0], p[2]) for p in parsed}
        if len(kinds) != 1:
            raise MergeError(f"mixed platform tags in one wheel: {tags}")
        (family, arch) = kinds.pop()
        # The oldest OS a wheel claims to run on is the minimum over its (compressed) tags.
        return family, arch, min(p[1] for p in parsed)

    needs = [need(tags) for tags in plat_sets]
    if len({(family, arch) for family, arch, _ in needs}) != 1:
        raise MergeError(f"wheels for different platforms: {sorted(set(plat_sets))}")
    newest = max(range(len(needs)), key=lambda i: needs[i][2])
    return plat_sets[newest]


class Wheel:
    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        match = WHEEL_NAME_RE.match(path.name)
        if not match:
            raise MergeError(f"{path.name}: not a wheel file name")
        self.name = match["name"]
        self.version = match["version"]
        if match["build"]:
            raise MergeError(f"{path.name}: build tags are not supported")
        if match["py"] != "py3" or match["abi"] != "none":
            raise MergeError(
                f"{path.name}: expected a py3-none wheel (wheel.py-api = 'py3'), "
                f"got {match['py']}-{match['abi']}"
            )
        self.plat = tuple(match["plat"].split("."))
        self.dist_info = f"{self.name}-{self.version}.dist-info"
        with zipfile.ZipFile(path) as zf:
            self.infos = {i.filename: i for i in zf.infolist() if not i.is_dir()}
            self.data = {n: zf.read(n) for n in self.infos}
        for required in ("METADATA", "WHEEL", "RECORD"):
            if f"{self.dist_info}/{required}" not in self.data:
                raise MergeError(f"{path.name}: no {self.dist_info}/{required}")
        self.minors = sorted(
            {m.group(1) for n in self.data if (m := LIB_RE.match(n))}, key=minor_key
        )
        if not self.minors:
            raise MergeError(f"{path.name}: carries no torch_ocl/lib/torch-X.Y/ library")

    def text(self, name: str) -> str:
        return self.data[f"{self.dist_info}/{name}"].decode("utf-8")


def _is_torch_requirement(value: str) -> bool:
    """True for an unconditional 'torch ...' requirement (not torchvision, not an extra's)."""
    name = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", value)
    if not name or re.sub(r"[-_.]+", "-", name.group(1)).lower() != "torch":
        return False
    return "extra" not in value.partition(";")[2]


def rewrite_metadata(metadata: str, requirement: str) -> str:
    """Replace the unconditional torch Requires-Dist with `requirement`, in place."""
    head, sep, body = metadata.partition("\n\n")
    lines = head.split("\n")
    out: list[str] = []
    replaced = False
    for line in lines:
        key, _, value = line.partition(":")
        if key == "Requires-Dist" and _is_torch_requirement(value):
            if not replaced:
                out.append(f"Requires-Dist: {requirement}")
                replaced = True
            continue
        out.append(line)
    if not replaced:
        raise MergeError("METADATA has no Requires-Dist for torch")
    return "\n".join(out) + sep + body


def _metadata_without_torch(metadata: str) -> str:
    head, sep, body = metadata.partition("\n\n")
    kept = [
        line
        for line in head.split("\n")
        if not (line.startswith("Requires-Dist:") and _is_torch_requirement(line.split(":", 1)[1]))
    ]
    return "\n".join(kept) + sep + body


def rewrite_wheel_file(wheel_text: str, plat: tuple[str, ...]) -> str:
    msg = email.parser.Parser().parsestr(wheel_text)
    lines = [f"{k}: {v}" for k, v in msg.items() if k != "Tag"]
    lines += [f"Tag: py3-none-{p}" for p in plat]
    return "\n".join(lines) + "\n\n"


def merge(paths: list[pathlib.Path], out_dir: pathlib.Path) -> pathlib.Path:
    wheels = [Wheel(p) for p in paths]
    if not wheels:
        raise MergeError("no wheels to merge")
    first = wheels[0]
    for w in wheels[1:]:
        if (w.name, w.version) != (first.name, first.version):
            raise MergeError(
                f"{w.path.name} is {w.name} {w.version}, {first.path.name} is "
                f"{first.name} {first.version}: merge only builds of one commit"
            )
    seen: dict[str, pathlib.Path] = {}
    for w in wheels:
        for minor in w.minors:
            if minor in seen:
                raise MergeError(
                    f"torch {minor}: both {seen[minor].name} and {w.path.name} carry a library"
                )
            seen[minor] = w.path
    minors = sorted(seen, key=minor_key)
    requirement = requirement_for(minors)
    plat = merged_platform([w.plat for w in wheels])

    base_metadata = _metadata_without_torch(first.text("METADATA"))
    for w in wheels[1:]:
        if _metadata_without_torch(w.text("METADATA")) != base_metadata:
            raise MergeError(
                f"{w.path.name}: METADATA differs from {first.path.name} (beyond torch)"
            )

    generated = {f"{first.dist_info}/{n}" for n in ("METADATA", "WHEEL", "RECORD")}
    files: dict[str, tuple[bytes, zipfile.ZipInfo, pathlib.Path]] = {}
    for w in wheels:
        for name, data in w.data.items():
            if name in generated:
                continue
            if name in files and files[name][0] != data:
                raise MergeError(
                    f"{name} differs between {files[name][2].name} and {w.path.name}; only "
                    "torch_ocl/lib/torch-X.Y/ may differ between per-torch builds"
                )
            files.setdefault(name, (data, w.infos[name], w.path))

    files_out = {name: (data, info) for name, (data, info, _) in files.items()}
    metadata = rewrite_metadata(first.text("METADATA"), requirement).encode("utf-8")
    wheel_file = rewrite_wheel_file(first.text("WHEEL"), plat).encode("utf-8")

    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{first.name}-{first.version}-py3-none-{'.'.join(plat)}.whl"
    if out.resolve() in {p.resolve() for p in paths}:
        raise MergeError(f"the output {out} would overwrite an input")

    # Package files first (sorted), the .dist-info last, RECORD at the very end.
    ordered = sorted(n for n in files_out if not n.startswith(first.dist_info + "/"))
    ordered += sorted(n for n in files_out if n.startswith(first.dist_info + "/"))
    record_lines = []
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:

        def write(name: str, data: bytes, like: zipfile.ZipInfo | None) -> None:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = like.external_attr if like else 0o644 << 16
            zf.writestr(info, data)
            record_lines.append(f"{name},{_record_hash(data)},{len(data)}")

        for name in ordered:
            write(name, *files_out[name])
        write(f"{first.dist_info}/METADATA", metadata, None)
        write(f"{first.dist_info}/WHEEL", wheel_file, None)
        record_name = f"{first.dist_info}/RECORD"
        record = "\n".join([*record_lines, f"{record_name},,"]) + "\n"
        info = zipfile.ZipInfo(record_name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        zf.writestr(info, record)
    tmp.replace(out)
    return out


def newest_per_minor(paths: list[pathlib.Path]) -> list[pathlib.Path]:
    """Of several wheels carrying the same single torch minor, keep the newest (by mtime)."""
    best: dict[tuple[str, ...], pathlib.Path] = {}
    for path in sorted(paths, key=lambda p: p.stat().st_mtime):
        with zipfile.ZipFile(path) as zf:
            minors = tuple(sorted({m.group(1) for n in zf.namelist() if (m := LIB_RE.match(n))}))
        best[minors] = path
    return list(best.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="*", type=pathlib.Path, help="per-torch wheels")
    parser.add_argument("-o", "--out-dir", type=pathlib.Path, required=True)
    parser.add_argument(
        "--glob",
        action="append",
        default=[],
        help="also take the newest wheel per torch minor among the files matching this pattern",
    )
    args = parser.parse_args()

    paths = list(args.wheels)
    globbed = [pathlib.Path(p) for pattern in args.glob for p in glob.glob(pattern)]
    paths += newest_per_minor(globbed) if globbed else []
    if not paths:
        print("merge_wheels: no input wheels", file=sys.stderr)
        return 1
    try:
        out = merge(paths, args.out_dir)
    except MergeError as exc:
        print(f"merge_wheels: {exc}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(out) as zf:
        minors = sorted({m.group(1) for n in zf.namelist() if (m := LIB_RE.match(n))})
    for path in paths:
        print(f"merge_wheels: input  {path}")
    size = out.stat().st_size
    print(f"merge_wheels: output {out} ({size / 1e6:.1f} MB), torch {', '.join(minors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
