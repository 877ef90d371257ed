"""The tuning store (csrc/runtime/Tuning.*) and the GEMM tuner (csrc/ops/GemmTiles.*).

The store is a per-device text file beside the kernel cache, one checksummed line per choice;
any doubt about a line (corrupt, truncated, not a legal tile) means "not tuned": the profile's
default is used, or a tuning run decides again. Each case runs child Pythons with their own
TORCH_OCL_CACHE_DIR and the GPU profile (the tiled GEMM is what has tiles)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest
import torch
from ocl_testing import parse_tuning_lines, tuning_line

pytestmark = pytest.mark.skipif(
    not torch.ocl.is_available(), reason="no OpenCL device: torch.ocl.why_unavailable() says why"
)

SHAPE = (48, 80, 40)  # M, N, K: a small product, so the tiles' size class is set by the device

# Prints JSON: the tile a SHAPE product uses, the profile's tiles, the tuning file; checks the
# product against CPU torch (whatever tile it got).
QUERY = r"""
import json, sys
import torch, torch_ocl
M, N, K = SHAPE
torch.manual_seed(0)
a, b = torch.randn(M, K), torch.randn(K, N)
torch.testing.assert_close((a.to("ocl") @ b.to("ocl")).cpu(), a @ b, rtol=1e-4, atol=1e-4)
p = torch.ocl.device_profile().params
print(json.dumps({"tile": torch.ocl.gemm_tile(M, N, K), "file": torch.ocl.tuning.tuning_file(),
                  "defaults": [p["gemm_large"], p["gemm_medium"], p["gemm_small"]]}))
""".replace("SHAPE", repr(SHAPE))

TUNE = r"""
import json
import torch, torch_ocl
M, N, K = SHAPE
r = torch.ocl.tune_gemm(M, N, K, max_candidates=4)
print(json.dumps({"best": r.best, "key": r.key, "times": r.times,
                  "file": torch.ocl.tuning.tuning_file()}))
""".replace("SHAPE", repr(SHAPE))


def child(code, cache, *args, extra_env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_OCL_DEVICE_PARAMS")}
    env.update(TORCH_OCL_CACHE_DIR=str(cache), TORCH_OCL_DEVICE_PROFILE="gpu")
    env.update(extra_env or {})
    r = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """One tuning run: its result and the cache directory it wrote to."""
    cache = tmp_path_factory.mktemp("tuning")
    result = child(TUNE, cache)
    return cache, result


def other_tile(result, defaults):
    """A legal tile the tuner tried that is not the default for SHAPE (so using it is visible)."""
    for tile, seconds in result["times"].items():
        if seconds is not None and tile not in defaults:
            return tile
    pytest.skip("the tuner found no second working tile on this device")


def test_no_entry_gives_the_profile_default(tmp_path):
    q = child(QUERY, tmp_path)
    assert q["tile"] in q["defaults"]
    assert not pathlib.Path(q["file"]).exists(), "a lookup alone wrote the tuning file"


def test_tune_records_once_and_a_new_process_uses_it(tuned, tmp_path):
    cache, r = tuned
    assert r["best"] in r["times"] and r["times"][r["best"]] is not None
    assert r["key"].startswith("mm_tiled/Float/NN/")
    assert pathlib.Path(r["file"]).parent == cache
    lines = parse_tuning_lines(pathlib.Path(r["file"]).read_text())
    assert lines == [(r["best"], r["key"])]
    q = child(QUERY, cache)
    assert q["tile"] == r["best"]
    # A tile written by hand for the key is used (and computes the right product: QUERY checks).
    forced = other_tile(r, q["defaults"])
    pathlib.Path(r["file"]).write_text(tuning_line(forced, r["key"]))
    assert child(QUERY, cache)["tile"] == forced


@pytest.mark.parametrize("damage", ["checksum", "truncated", "illegal", "not_a_tile", "garbage"])
def test_damaged_lines_are_not_used(tuned, tmp_path, damage):
    """A line that fails its checksum, lost its end, or names a tile that is not legal on the
    device counts as no entry; well-formed lines around it still count."""
    _, r = tuned
    q = child(QUERY, tmp_path)
    file = pathlib.Path(q["file"])
    forced = other_tile(r, q["defaults"])
    good = tuning_line(forced, r["key"])
    if damage == "checksum":
        text = good[:-2] + ("0" if good[-2] != "0" else "1") + "\n"  # the checksum's last digit
    elif damage == "truncated":
        text = good[: len(good) - 5]  # a crash mid-write: the checksum is cut
    elif damage == "illegal":
        text = tuning_line("4096x4096x64:64x64:0", r["key"])
    elif damage == "not_a_tile":
        text = tuning_line("fastest", r["key"])
    else:
        text = "\x00\xff garbage\n\n\t\t\n" + good + "mm_tiled\tonly two fields\n"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, errors="surrogateescape")
    got = child(QUERY, tmp_path)["tile"]
    if damage == "garbage":
        assert got == forced, "a good line among garbage was not used"
    else:
        assert got == q["tile"] != forced, "a damaged line was used"


def test_another_driver_version_has_its_own_file(tuned, tmp_path):
    """The file is named by the device's identity (name, vendor, driver and platform versions):
    an entry recorded under another driver version is not read."""
    _, r = tuned
    code = r"""
import json, torch, torch_ocl
ident = torch.ops.ocl._device_identity(0)
print(json.dumps({"ident": ident, "mine": torch.ops.ocl._tuning_file_name(ident),
                  "file": torch.ocl.tuning.tuning_file()}))
"""
    info = child(code, tmp_path)
    props = torch.ocl.get_device_properties()
    assert props.driver_version in info["ident"]
    other_ident = info["ident"].replace(props.driver_version, props.driver_version + ".1")
    other = torch.ops.ocl._tuning_file_name(other_ident)
    assert other != info["mine"] and pathlib.Path(info["file"]).name == info["mine"]
    q = child(QUERY, tmp_path)
    forced = other_tile(r, q["defaults"])
    (tmp_path / other).write_text(tuning_line(forced, r["key"]))
    assert child(QUERY, tmp_path)["tile"] == q["tile"] != forced


WRITER = r"""
import os, sys, time
import torch, torch_ocl
me = int(sys.argv[1])
torch.ocl.device_profile()
open(os.environ["TEST_READY"] + str(me), "w").close()
while not os.path.exists(os.environ["TEST_GO"]):
    time.sleep(0.002)
for i in range(400):
    key, value = "writer%d/key%d" % (me, i), "value-%d-%d-" % (me, i) + "x" * (i % 50)
    torch.ops.ocl._record_tuned_value(0, key, value)
print('{"done": %d}' % me)
"""


def test_concurrent_writers_never_damage_each_others_lines(tmp_path):
    ready, go = tmp_path / "ready", tmp_path / "go"
    env = {
        **{k: v for k, v in os.environ.items() if k != "TORCH_OCL_DEVICE_PARAMS"},
        "TORCH_OCL_CACHE_DIR": str(tmp_path / "cache"),
        "TEST_READY": str(ready),
        "TEST_GO": str(go),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(i)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    deadline = time.monotonic() + 300
    while not all((tmp_path / f"ready{i}").exists() for i in range(4)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
    files = list((tmp_path / "cache").glob("tuning-*-v2.txt"))
    assert len(files) == 1
    text = files[0].read_text()
    entries = parse_tuning_lines(text)
    assert len(entries) == len(text.splitlines()) == 1600, "a line was damaged or lost"
    check = r"""
import json, torch, torch_ocl
def want(w, i):
    return "value-%d-%d-" % (w, i) + "x" * (i % 50)
bad = [(w, i) for w in range(4) for i in range(400)
       if torch.ops.ocl._tuned_value(0, "writer%d/key%d" % (w, i)) != want(w, i)]
print(json.dumps({"bad": bad[:5], "missing": torch.ops.ocl._tuned_value(0, "no such key")}))
"""
    r = subprocess.run(
        [sys.executable, "-c", check], env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.splitlines()[-1]) == {"bad": [], "missing": None}


def test_tuning_on_first_use(tmp_path):
    """With torch.ocl.tuning_enabled, the first product of a size class tunes (a bounded set,
    recorded once); later products of the class wait for nothing."""
    code = r"""
import json, torch, torch_ocl
torch.ocl.tuning_enabled = True
a, b = torch.randn(48, 40, device="ocl"), torch.randn(40, 80, device="ocl")
c = a @ b
waits = torch.ocl.host_wait_count()
d = a @ b
e = a[:47] @ b
after = torch.ocl.host_wait_count()
torch.testing.assert_close(c.cpu(), a.cpu() @ b.cpu(), rtol=1e-4, atol=1e-4)
torch.testing.assert_close(e.cpu(), a.cpu()[:47] @ b.cpu(), rtol=1e-4, atol=1e-4)
print(json.dumps({"again": after - waits, "file": torch.ocl.tuning.tuning_file()}))
"""
    r = child(code, tmp_path)
    assert r["again"] == 0
    lines = parse_tuning_lines(pathlib.Path(r["file"]).read_text())
    assert len(lines) == 1 and lines[0][1].startswith("mm_tiled/Float/NN/")


def test_tune_gemm_refuses_the_register_blocked_profile(tmp_path):
    code = r"""
import json, torch, torch_ocl
try:
    torch.ocl.tune_gemm(64, 64, 64)
    print(json.dumps({"error": None}))
except RuntimeError as e:
    print(json.dumps({"error": str(e).splitlines()[0]}))
"""
    r = child(code, tmp_path, extra_env={"TORCH_OCL_DEVICE_PROFILE": "cpu"})
    assert (
        r["error"]
        and "register-blocked GEMM" in r["error"]
        and "TORCH_OCL_DEVICE_PROFILE=gpu" in r["error"]
    )
