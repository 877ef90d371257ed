"""Checks of the workflows that schemas and actionlint do not make (run by `nox -s lint`).

    python ci/check_workflows.py           check .github/ and the build matrix; exit 1 on a problem
    python ci/check_workflows.py --self-test   also break copies of the files and check that each
                                           breakage is caught

What it checks:
  - every job has timeout-minutes (jobs that call a reusable workflow cannot have one);
  - the actions used are at the majors in CURRENT_MAJORS (Dependabot proposes newer ones:
    .github/dependabot.yml must exist and cover github-actions, here and in .github/actions/);
  - no retired runner image (RETIRED_RUNNERS) in a workflow or in ci/cibw_builds.py;
  - wheels.yml runs on pull requests that touch compiled or packaged paths (WHEEL_PATHS), weekly
    on a schedule, and passes SETUPTOOLS_SCM_PRETEND_VERSION_FOR_TORCH_OCL (never the generic
    SETUPTOOLS_SCM_PRETEND_VERSION, anywhere);
  - the install tests: every target with every CPython 3.10-3.14, each running exactly the
    smoke-X.Y sessions of the torch minors that have wheels for that Python;
  - release.yml: TestPyPI before PyPI, skip-existing on every upload, build-provenance
    attestations and --prerelease in the GitHub release job, a workflow_dispatch dry run;
  - gpu.yml: never on pull requests, and its job in the runner group "gpu" (README, self-hosted).
"""

from __future__ import annotations

import copy
import pathlib
import re
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import cibw_builds  # noqa: E402
import torch_versions  # noqa: E402

CURRENT_MAJORS = {
    "actions/checkout": "v7",
    "actions/setup-python": "v7",
    "actions/upload-artifact": "v7",
    "actions/download-artifact": "v8",
    "actions/cache": "v6",
    "actions/attest-build-provenance": "v4",
    "pypa/gh-action-pypi-publish": "release/v1",
}
RETIRED_RUNNERS = ("macos-12", "macos-13", "macos-14", "ubuntu-20.04", "windows-2019")
WHEEL_PATHS = ("csrc/**", "kernels/**", "python/**", "CMakeLists.txt", "cmake/**", "pyproject.toml")
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")


def load(root: pathlib.Path) -> dict[str, dict]:
    files = sorted((root / ".github" / "workflows").glob("*.y*ml"))
    files += sorted((root / ".github" / "actions").glob("*/action.y*ml"))
    docs = {}
    for f in files:
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        if True in doc:  # YAML 1.1 reads the key `on` as true
            doc["on"] = doc.pop(True)
        docs[str(f.relative_to(root))] = doc
    return docs


def _steps(doc: dict):
    for job_id, job in (doc.get("jobs") or {}).items():
        for step in job.get("steps") or []:
            yield job_id, step
    for step in (doc.get("runs") or {}).get("steps") or []:
        yield "(action)", step


def check(docs: dict[str, dict], root: pathlib.Path, install_matrix: list[dict]) -> list[str]:
    problems = []
    for name, doc in docs.items():
        for job_id, job in (doc.get("jobs") or {}).items():
            if "uses" not in job and "timeout-minutes" not in job:
                problems.append(f"{name}: job {job_id} has no timeout-minutes")
        for job_id, step in _steps(doc):
            uses = step.get("uses", "")
            action, _, ref = uses.partition("@")
            if action in CURRENT_MAJORS and ref != CURRENT_MAJORS[action]:
                problems.append(
                    f"{name}: {job_id} uses {uses}; current is {action}@{CURRENT_MAJORS[action]}"
                )
        text = yaml.safe_dump(doc)
        for runner in RETIRED_RUNNERS:
            if re.search(rf"\b{re.escape(runner)}\b", text):
                problems.append(f"{name}: runs on {runner}, a retired runner image")
        if re.search(r"SETUPTOOLS_SCM_PRETEND_VERSION(?!_FOR_)", text):
            problems.append(
                f"{name}: SETUPTOOLS_SCM_PRETEND_VERSION; use "
                "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_TORCH_OCL (it sets torch-ocl's version only)"
            )
    for target in cibw_builds.TARGETS:
        if target[3] in RETIRED_RUNNERS:
            problems.append(f"ci/cibw_builds.py: {target[0]} runs on {target[3]}, retired")

    dependabot = root / ".github" / "dependabot.yml"
    if not dependabot.is_file():
        problems.append(".github/dependabot.yml is missing")
    else:
        updates = yaml.safe_load(dependabot.read_text()).get("updates", [])
        dirs = [
            d
            for u in updates
            if u.get("package-ecosystem") == "github-actions"
            for d in u.get("directories", [u.get("directory")])
        ]
        if "/" not in dirs or not any(str(d).startswith("/.github/actions") for d in dirs):
            problems.append(f"dependabot.yml: github-actions updates cover {dirs}")

    wheels = docs.get(".github/workflows/wheels.yml", {})
    on = wheels.get("on") or {}
    paths = (on.get("pull_request") or {}).get("paths") or []
    missing = [p for p in WHEEL_PATHS if p not in paths]
    if missing:
        problems.append(f"wheels.yml: pull requests touching {missing} do not build wheels")
    if not on.get("schedule"):
        problems.append("wheels.yml: no scheduled (weekly) run")
    build_env = ((wheels.get("jobs") or {}).get("build") or {}).get("env") or {}
    if "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_TORCH_OCL" not in build_env:
        problems.append("wheels.yml: the build job does not set the version for torch-ocl")

    want = {
        (t[0], py): sorted(
            f"smoke-{m}" for m in torch_versions.SUPPORTED if py in torch_versions.PYTHONS[m]
        )
        for t in cibw_builds.TARGETS
        for py in PYTHONS
    }
    got = {(j["name"], j["python"]): sorted(j["sessions"].split()) for j in install_matrix}
    if got != want:
        lacking = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        wrong = sorted(k for k in set(got) & set(want) if got[k] != want[k])
        problems.append(
            f"install matrix: missing {lacking}, unexpected {extra}, wrong sessions in "
            f"{[(k, got[k], want[k]) for k in wrong]}"
        )
    for minor in torch_versions.SUPPORTED:
        if not any(f"smoke-{minor}" in s for s in got.values()):
            problems.append(f"install matrix: torch {minor} is never install-tested")

    release = docs.get(".github/workflows/release.yml", {})
    jobs = release.get("jobs") or {}

    def ancestors(job_id: str) -> set[str]:
        needs = jobs.get(job_id, {}).get("needs") or []
        needs = [needs] if isinstance(needs, str) else needs
        out = set(needs)
        for n in needs:
            out |= ancestors(n)
        return out

    publish_jobs = {
        job_id: step
        for job_id, step in _steps(release)
        if step.get("uses", "").startswith("pypa/gh-action-pypi-publish")
    }
    test_jobs = [
        j
        for j, s in publish_jobs.items()
        if "test.pypi.org" in (s.get("with") or {}).get("repository-url", "")
    ]
    real_jobs = [j for j in publish_jobs if j not in test_jobs]
    if not test_jobs:
        problems.append("release.yml: no TestPyPI upload")
    for j in real_jobs:
        if not set(test_jobs) & ancestors(j):
            problems.append(f"release.yml: the PyPI upload ({j}) does not wait for TestPyPI")
    for j, step in publish_jobs.items():
        if (step.get("with") or {}).get("skip-existing") is not True:
            problems.append(f"release.yml: {j}'s upload lacks skip-existing: true")
    if "workflow_dispatch" not in (release.get("on") or {}):
        problems.append("release.yml: no workflow_dispatch dry run")
    gh_release = jobs.get("github-release", {})
    gh_steps = gh_release.get("steps") or []
    if not any(s.get("uses", "").startswith("actions/attest-build-provenance") for s in gh_steps):
        problems.append("release.yml: github-release makes no build-provenance attestations")
    if "--prerelease" not in yaml.safe_dump(gh_steps):
        problems.append("release.yml: pre-release tags are not published as pre-releases")
    perms = gh_release.get("permissions") or {}
    if perms.get("attestations") != "write" or perms.get("id-token") != "write":
        problems.append("release.yml: github-release needs attestations and id-token: write")

    gpu = docs.get(".github/workflows/gpu.yml", {})
    gpu_on = gpu.get("on") or {}
    if any(t in gpu_on for t in ("pull_request", "pull_request_target")):
        problems.append("gpu.yml: starts on pull requests")
    for job_id, job in (gpu.get("jobs") or {}).items():
        runs_on = job.get("runs-on")
        if not isinstance(runs_on, dict) or runs_on.get("group") != "gpu":
            problems.append(f"gpu.yml: job {job_id} is not in the runner group 'gpu'")
    return problems


def self_test(docs: dict[str, dict], root: pathlib.Path, matrix: list[dict]) -> list[str]:
    """Each breakage must produce a problem that mentions `expect`."""
    w, r, g = (
        ".github/workflows/wheels.yml",
        ".github/workflows/release.yml",
        ".github/workflows/gpu.yml",
    )

    def drop_timeout(d):
        del d[w]["jobs"]["build"]["timeout-minutes"]

    def old_checkout(d):
        d[w]["jobs"]["plan"]["steps"][0]["uses"] = "actions/checkout@v4"

    def no_csrc(d):
        d[w]["on"]["pull_request"]["paths"].remove("csrc/**")

    def macos14(d):
        d[w]["jobs"]["build"]["runs-on"] = "macos-14"

    def generic_scm(d):
        d[w]["jobs"]["build"]["env"]["SETUPTOOLS_SCM_PRETEND_VERSION"] = "1"

    def no_skip(d):
        for _, step in _steps(d[r]):
            if step.get("uses", "").startswith("pypa/"):
                step["with"].pop("skip-existing", None)

    def gpu_pr(d):
        d[g]["on"]["pull_request"] = None

    def no_schedule(d):
        del d[w]["on"]["schedule"]

    breakages = [
        (drop_timeout, "timeout-minutes"),
        (old_checkout, "actions/checkout@v4"),
        (no_csrc, "csrc/**"),
        (macos14, "macos-14"),
        (generic_scm, "SETUPTOOLS_SCM_PRETEND_VERSION"),
        (no_skip, "skip-existing"),
        (gpu_pr, "pull requests"),
        (no_schedule, "scheduled"),
    ]
    failures = []
    for breakage, expect in breakages:
        broken = copy.deepcopy(docs)
        breakage(broken)
        if not any(expect in p for p in check(broken, root, matrix)):
            failures.append(f"{breakage.__name__} was not caught")
    py310 = [
        dict(j, sessions=j["sessions"] + " smoke-2.15") if j["python"] == "3.10" else j
        for j in matrix
    ]
    if not any("install matrix" in p for p in check(docs, root, py310)):
        failures.append("smoke-2.15 on Python 3.10 was not caught")
    if not failures:
        print(f"check_workflows: self-test: {len(breakages) + 1} breakages caught")
    return failures


def main() -> int:
    import json
    import subprocess

    docs = load(ROOT)
    matrix = json.loads(
        subprocess.run(
            [sys.executable, str(HERE / "cibw_builds.py"), "--install-matrix"],
            check=True, capture_output=True, text=True,
        ).stdout
    )["include"]  # fmt: skip
    problems = check(docs, ROOT, matrix)
    if "--self-test" in sys.argv[1:]:
        problems += self_test(docs, ROOT, matrix)
    for problem in problems:
        print(f"check_workflows: {problem}", file=sys.stderr)
    if not problems:
        print(
            f"check_workflows: {len(docs)} workflow/action files ok (timeouts, action majors, "
            "runners, wheel trigger paths, schedule, install matrix "
            f"{len(matrix)} jobs, release flow, gpu runner group)"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
