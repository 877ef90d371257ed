"""The version a release workflow run publishes, and whether it is a pre-release.

    python ci/release_version.py --tag v0.2.0rc1    version=0.2.0rc1 / prerelease=true
    python ci/release_version.py --scm              the version setuptools-scm gives this checkout,
                                                    without its local part (+g<hash>): TestPyPI
                                                    and PyPI refuse local versions
    python ci/release_version.py --self-test        checks the rules below (nox -s lint)

Prints key=value lines for $GITHUB_OUTPUT (release.yml). A tag must be v<PEP 440 version> in its
normal form (v0.2.0, v0.2.0rc1, v0.2.0.post1): "v0.2.0-rc1" would make setuptools-scm and the
GitHub release disagree. Pre-releases (a, b, rc, dev) are published to PyPI as such (pip ignores
them unless asked) and marked as pre-releases on GitHub.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from packaging.version import InvalidVersion, Version


def from_tag(tag: str) -> dict[str, str]:
    if not tag.startswith("v"):
        raise ValueError(f"release tags are v<version>, not {tag!r}")
    try:
        version = Version(tag[1:])
    except InvalidVersion:
        raise ValueError(f"{tag!r}: {tag[1:]!r} is not a PEP 440 version") from None
    if str(version) != tag[1:] or version.local:
        raise ValueError(f"{tag!r}: write it v{version.public} (PEP 440's normal form)")
    return {"version": str(version), "prerelease": str(version.is_prerelease).lower()}


def from_scm() -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-m", "setuptools_scm"], check=True, capture_output=True, text=True
    ).stdout.strip()
    version = Version(out.splitlines()[-1])
    return {"version": version.public, "prerelease": str(version.is_prerelease).lower()}


def self_test() -> int:
    cases = {
        "v0.2.0": ("0.2.0", "false"),
        "v0.2.0rc1": ("0.2.0rc1", "true"),
        "v1.0.0a2": ("1.0.0a2", "true"),
        "v1.0.0b1": ("1.0.0b1", "true"),
        "v0.2.0.post1": ("0.2.0.post1", "false"),
        "v0.3.0.dev1": ("0.3.0.dev1", "true"),
    }
    bad = ["0.2.0", "v0.2.0-rc1", "v0.2.0RC1", "v0.2.0+local", "vfoo"]
    failures = []
    for tag, (version, pre) in cases.items():
        got = from_tag(tag)
        if (got["version"], got["prerelease"]) != (version, pre):
            failures.append(f"{tag}: {got}")
    for tag in bad:
        try:
            failures.append(f"{tag}: accepted as {from_tag(tag)}")
        except ValueError:
            pass
    for failure in failures:
        print(f"release_version: FAIL {failure}", file=sys.stderr)
    if not failures:
        print(f"release_version: {len(cases)} tags and {len(bad)} refused ones as expected")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--tag")
    group.add_argument("--scm", action="store_true")
    group.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    try:
        info = from_tag(args.tag) if args.tag else from_scm()
    except ValueError as exc:
        print(f"release_version: {exc}", file=sys.stderr)
        return 1
    for key, value in info.items():
        print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
