"""Several ocl devices in one process (tests/runtime/multi_device_cases.py, in a child process).

This machine has one OpenCL CPU device, but PoCL can present it several times:
POCL_DEVICES="pthread pthread" gives two devices in PoCL's platform, and torch-ocl gives each a
context of its own, as it does for two GPUs, so everything that crosses devices (copies, events,
a model split across them) goes the way it goes between two real devices. The child runs every
case once; each case is a test here, with the child's report on failure.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import torch

HERE = pathlib.Path(__file__).resolve().parent
CASES_FILE = HERE / "multi_device_cases.py"
TWO_DEVICES = {"POCL_DEVICES": "pthread pthread", "TORCH_OCL_DEVICES": "pthread"}


def _pocl() -> bool:
    if not torch.ocl.is_available():
        return False
    return torch.ocl.device_profile().vendor == "pocl"


def _case_names() -> list[str]:
    tree = ast.parse(CASES_FILE.read_text())
    return [
        n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    ]


pytestmark = pytest.mark.skipif(
    not _pocl(), reason="needs PoCL's CPU device (POCL_DEVICES presents it twice)"
)


@pytest.fixture(scope="module")
def child_report(tmp_path_factory):
    """Runs every case in one child process with two devices; {case: (outcome, text)}."""
    import os

    import torch_ocl

    tmp = tmp_path_factory.mktemp("multi_device")
    env = dict(os.environ, **TWO_DEVICES)
    here = str(pathlib.Path(torch_ocl.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([here, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    probe = subprocess.run(
        [sys.executable, "-c", "import torch, torch_ocl; print(torch.ocl.device_count())"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if probe.stdout.strip() != "2":
        pytest.skip(
            f"POCL_DEVICES did not give two devices here: {probe.stdout}{probe.stderr[-2000:]}"
        )
    xml = tmp / "report.xml"
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",
        "--rootdir",
        str(HERE),
        "--confcutdir",
        str(HERE),
        f"--junitxml={xml}",
        str(CASES_FILE),
    ]
    proc = subprocess.run(args, cwd=HERE, env=env, capture_output=True, text=True, timeout=1200)
    if not xml.exists():
        pytest.fail(f"the child pytest wrote no report:\n{(proc.stdout + proc.stderr)[-4000:]}")
    results: dict[str, tuple[str, str]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        full = case.get("name", "")
        bad = [c for c in case if c.tag in ("failure", "error", "skipped")]
        outcome = bad[0].tag if bad else "passed"
        text = "\n".join((c.get("message") or "") + "\n" + (c.text or "") for c in bad)
        prev = results.get(name)
        if prev is None or prev[0] == "passed":
            results[name] = (outcome, f"{full}: {text}" if bad else "")
    return results


@pytest.mark.parametrize("case", _case_names())
def test_two_devices(child_report, case):
    assert case in child_report, f"{case} did not run in the child process"
    outcome, text = child_report[case]
    if outcome == "skipped":
        pytest.skip(f"skipped in the child process: {text[-500:]}")
    assert outcome == "passed", f"{case} {outcome} with two devices:\n{text[-4000:]}"
