"""The on-disk program cache survives faults: every bad file is noticed, removed and rebuilt, a
failing write never leaves a file behind, and concurrent processes and threads share it safely.

Each test runs a child Python with TORCH_OCL_CACHE_DIR in a temporary directory and
TORCH_OCL_CACHE_LOG=1, and reads the cache's decisions ("hit", "miss", "rejected", "built",
"wrote", "not written") from the child's stderr. The file format is described at the top of
csrc/runtime/Program.cpp.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import time

import pytest

import torch_ocl

# Two programs (elementwise.cl for the batched `d * 2 + 1`, reduce.cl for the sum), checked against
# CPU torch on random data. With TEST_READY/TEST_GO set, the child initialises OpenCL, says it is
# ready, and waits for the go file before building anything (to start two children together).
CHILD = r"""
import os, sys, time
import torch, torch_ocl
torch.empty(1, device="ocl")
if os.environ.get("TEST_READY"):
    open(os.environ["TEST_READY"], "w").close()
    deadline = time.monotonic() + 120
    while not os.path.exists(os.environ["TEST_GO"]):
        assert time.monotonic() < deadline, "no go signal"
        time.sleep(0.005)
torch.manual_seed(int(sys.argv[1]))
x = torch.randn(1000)
d = x.to("ocl")
torch.testing.assert_close((d * 2 + 1).cpu(), x * 2 + 1)
torch.testing.assert_close(d.sum().cpu(), x.sum(), rtol=1e-5, atol=1e-4)
print("ok")
"""

# Eight threads ask for the same new program at the same moment.
THREADS_CHILD = r"""
import threading, uuid
import torch, torch_ocl
source = "__kernel void k%s(__global float* x) { x[0] = 1.0f; }\n" % uuid.uuid4().hex
barrier = threading.Barrier(8)
errors = []
def work():
    barrier.wait()
    try:
        torch.ops.ocl._build_program_for_test(source, "")
    except Exception as e:
        errors.append(e)
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
print("ok")
"""

# While one thread compiles a large new program, an op whose program exists must not wait for it.
LOCK_CHILD = r"""
import threading, time, uuid
import torch, torch_ocl
tag = uuid.uuid4().hex  # in the code, not in a comment: PoCL's own cache sees through comments
x = torch.randn(1000)
d = x.to("ocl")
torch.testing.assert_close(d.sum().cpu(), x.sum(), rtol=1e-5, atol=1e-4)  # builds its program
slow = "".join(
    "__kernel void k%d_%s(__global float* x) { float v = x[get_global_id(0)];" % (i, tag)
    + "".join(" v = v * %d.5f + sin(v);" % j for j in range(20))
    + " x[get_global_id(0)] = v; }\n"
    for i in range(300)
)
started = threading.Event()
slow_done = []
def build_slow():
    started.set()
    torch.ops.ocl._build_program_for_test(slow, "")
    slow_done.append(time.monotonic())
thread = threading.Thread(target=build_slow)
thread.start()
started.wait()
time.sleep(0.3)
op_start = time.monotonic()
torch.testing.assert_close(d.sum().cpu(), x.sum(), rtol=1e-5, atol=1e-4)  # asks for its kernel
# A thread that has not launched it yet makes its own kernel object from the existing program.
fresh = threading.Thread(
    target=lambda: torch.testing.assert_close(d.sum().cpu(), x.sum(), rtol=1e-5, atol=1e-4))
fresh.start()
fresh.join()
op_done = time.monotonic()
thread.join()
if slow_done[0] < op_start:
    print("inconclusive: the large program compiled in under 0.3 s")
else:
    assert op_done < slow_done[0], "the op waited %.3f s for another program's build" % (
        op_done - op_start)
    print("ok")
"""

LOG_PREFIX = "torch-ocl cache: "


def _child_env(cache: pathlib.Path) -> dict[str, str]:
    """os.environ for a child that imports torch_ocl from this checkout and caches in `cache`."""
    env = dict(os.environ)
    here = str(pathlib.Path(torch_ocl.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    env.pop("TORCH_OCL_CACHE", None)
    env["TORCH_OCL_CACHE_DIR"] = str(cache)
    env["TORCH_OCL_CACHE_LOG"] = "1"
    return env


def _check(proc: subprocess.CompletedProcess | subprocess.Popen, stdout: str, stderr: str) -> str:
    assert proc.returncode == 0, f"child failed with status {proc.returncode}:\n{stderr[-4000:]}"
    assert stdout.strip() == "ok", stdout + stderr[-2000:]
    return stderr


def _run(cache, script=CHILD, seed=0, extra_env=None, **kwargs) -> str:
    """Runs `script` with the cache in `cache` and `extra_env` added to its environment; returns
    its stderr (the cache's log)."""
    proc = subprocess.run(
        [sys.executable, "-c", script, str(seed)],
        env={**_child_env(cache), **(extra_env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,
    )
    return _check(proc, proc.stdout, proc.stderr)


def _events(log: str, verb: str) -> list[str]:
    """The log lines of one kind of decision ("hit", "rejected", "built", ...)."""
    prefix = LOG_PREFIX + verb + " "
    return [line[len(prefix) :] for line in log.splitlines() if line.startswith(prefix)]


def _entries(cache: pathlib.Path) -> list[pathlib.Path]:
    return sorted(cache.glob("*-v1.bin"))


def _is_valid_entry(path: pathlib.Path) -> bool:
    """Magic, version and a size that matches the header (see Program.cpp)."""
    if not path.is_file():
        return False
    data = path.read_bytes()
    if len(data) < 32 or data[:8] != b"TOCLBIN\0":
        return False
    version, key_size, payload_size = struct.unpack_from("<IIQ", data, 8)
    return version == 1 and payload_size > 0 and len(data) == 32 + key_size + payload_size


def _no_temporary_files(cache: pathlib.Path) -> None:
    leftovers = [p.name for p in cache.iterdir() if ".tmp." in p.name]
    assert leftovers == [], f"temporary files left behind: {leftovers}"


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> pathlib.Path:
    """A cache directory filled by one run of CHILD (tests copy it, never change it)."""
    cache = tmp_path_factory.mktemp("warm") / "cache"
    log = _run(cache)
    files = _entries(cache)
    assert len(files) >= 2 and len(_events(log, "wrote")) == len(files), log
    assert all(_is_valid_entry(p) for p in files)
    return cache


@pytest.fixture
def cache(warm_cache, tmp_path) -> pathlib.Path:
    copy = tmp_path / "cache"
    shutil.copytree(warm_cache, copy)
    return copy


def _truncate(files):
    files[0].write_bytes(b"")
    for f in files[1:]:
        f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])


def _garble(files):
    files[0].write_bytes(os.urandom(files[0].stat().st_size))
    for f in files[1:]:  # a correct header, a changed payload: only the checksum notices
        data = bytearray(f.read_bytes())
        middle = len(data) - 64
        data[middle : middle + 8] = bytes(b ^ 0xFF for b in data[middle : middle + 8])
        f.write_bytes(bytes(data))


def _swap_names(files):
    contents = [f.read_bytes() for f in files]
    for f, data in zip(files, contents[1:] + contents[:1], strict=True):
        f.write_bytes(data)


def _replace_by_directories(files):
    for f in files:
        f.unlink()
        f.mkdir()
        (f / "keep").write_text("not the cache's to delete")


@pytest.mark.parametrize(
    "damage",
    [_truncate, _garble, _swap_names, _replace_by_directories],
    ids=lambda f: f.__name__[1:],
)
def test_bad_entries_are_rebuilt(cache, damage):
    files = _entries(cache)
    damage(files)
    log = _run(cache, seed=1)  # correct results, no crash
    rejected = {line.split(": ", 1)[0] for line in _events(log, "rejected")}
    assert rejected == {str(f) for f in files}, log
    assert len(_events(log, "built")) == len(files), log
    _no_temporary_files(cache)
    if damage is _replace_by_directories:
        assert all((f / "keep").is_file() for f in files), "a directory was deleted"
        assert len(_events(log, "not written")) == len(files), log
    else:
        assert all(_is_valid_entry(f) for f in files), "bad files were not rewritten"


def _fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _split_entry(path: pathlib.Path) -> tuple[bytes, bytes]:
    """(key, payload) of a valid entry."""
    data = path.read_bytes()
    _, key_size, _ = struct.unpack_from("<IIQ", data, 8)
    return data[32 : 32 + key_size], data[32 + key_size :]


def test_forged_entry_without_the_kernel_is_rebuilt(cache):
    # A perfectly valid entry (right key, right checksum) whose binary is another program's: only
    # clCreateKernel notices, and the program is then rebuilt from source instead of failing.
    first, second = _entries(cache)[:2]
    key, _ = _split_entry(second)
    _, payload = _split_entry(first)
    header = b"TOCLBIN\0" + struct.pack("<IIQQ", 1, len(key), len(payload), _fnv1a64(payload))
    second.write_bytes(header + key + payload)
    log = _run(cache, seed=6)
    assert len(_events(log, "hit")) == 2 and _events(log, "rejected") == [], log
    assert "is missing from the cached" in log and len(_events(log, "built")) == 1, log
    assert _split_entry(second)[1] != payload, "the forged entry was not replaced"


def test_second_run_only_reads(cache):
    before = {f: (f.stat().st_ino, f.stat().st_mtime_ns) for f in _entries(cache)}
    log = _run(cache, seed=2)
    assert len(_events(log, "hit")) == len(before), log
    assert _events(log, "built") == [] and _events(log, "rejected") == [], log
    assert before == {f: (f.stat().st_ino, f.stat().st_mtime_ns) for f in _entries(cache)}


def _compiler_settings_set() -> list[str]:
    """Compiler settings (Program.cpp's compiler_environment) set in this environment, which are
    in the warm cache's keys too."""
    pocl = {
        "POCL_EXTRA_BUILD_FLAGS", "POCL_WORK_GROUP_METHOD", "POCL_BINARY_SPECIALIZE_WG",
        "POCL_WORK_GROUP_SPECIALIZATION", "POCL_WILOOPS_MAX_UNROLL_COUNT",
        "POCL_FULL_REPLICATION_THRESHOLD", "POCL_FORCE_PARALLEL_OUTER_LOOP",
    }  # fmt: skip
    return sorted(k for k in os.environ if k.startswith("CL_CONFIG_") or k in pocl)


def test_compiler_settings_are_part_of_the_key(cache):
    """A binary built under one setting of the implementation's compiler (Intel's CPU runtime:
    CL_CONFIG_*; PoCL: POCL_WORK_GROUP_METHOD and a few more) is never reused under another: each
    setting misses the cache, builds and gets its own entries (its value in their keys), then
    hits them. Unrelated variables (a PoCL setting outside code generation, names that only
    look alike) keep the key. CL_CONFIG_CPU_VECTORIZER_MODE=1 switches Intel's vectoriser off;
    PoCL ignores it, so the test means the same on both (the key does not depend on which
    implementation runs)."""
    if _compiler_settings_set():
        pytest.skip(f"compiler settings set in this environment: {_compiler_settings_set()}")
    warm = set(_entries(cache))
    unrelated = {
        "TORCH_OCL_UNRELATED": "1",
        "NOT_CL_CONFIG_CPU_VECTORIZER_MODE": "1",
        "CL_CONFIG": "1",
        "POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES": "0",
    }
    log = _run(cache, seed=7, extra_env=unrelated)
    assert len(_events(log, "hit")) == len(warm) and _events(log, "built") == [], log
    seen = set(warm)
    settings = [
        {"CL_CONFIG_CPU_VECTORIZER_MODE": "1"},
        {"CL_CONFIG_CPU_VECTORIZER_MODE": "8"},  # another value: another key
        {"POCL_WORK_GROUP_METHOD": "loopvec"},  # PoCL's default: the same code, another key
    ]
    for setting in settings:
        log = _run(cache, seed=8, extra_env=setting)
        assert _events(log, "hit") == [], (setting, log)
        assert len(_events(log, "built")) == len(warm), (setting, log)
        new = set(_entries(cache)) - seen
        assert len(new) == len(warm), (setting, log)
        for entry in new:
            key = _split_entry(entry)[0].decode()
            assert all(f"{k}={v}\n" in key for k, v in setting.items()), key
        seen |= new
        log = _run(cache, seed=9, extra_env={**setting, **unrelated})
        assert len(_events(log, "hit")) == len(warm) and _events(log, "built") == [], log


def test_uncreatable_cache_dir_means_no_caching(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("a regular file cannot hold a cache directory")
    log = _run(blocker / "cache", seed=3)
    assert _events(log, "built") and len(_events(log, "not written")) == len(_events(log, "built"))
    assert all("cannot create the directory" in line for line in _events(log, "not written")), log
    assert blocker.read_text().startswith("a regular file")


@contextlib.contextmanager
def _small_tmpfs(path: pathlib.Path, size: int):
    """A tmpfs of `size` bytes mounted on `path`, or pytest.skip if this process cannot mount."""
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


# A tmpfs, not RLIMIT_FSIZE: PoCL's compiler writes its own files and aborts when they fail.
def test_full_disk(warm_cache, tmp_path):
    # Room for three quarters of the largest program: that one never fits, smaller ones may.
    largest = max(f.stat().st_size for f in _entries(warm_cache))
    room = -(-largest * 3 // 4 // 4096) * 4096
    with _small_tmpfs(tmp_path / "disk", room) as cache:
        first = _run(cache, seed=4)
        assert _events(first, "not written"), first
        _no_temporary_files(cache)
        assert all(_is_valid_entry(f) for f in _entries(cache))
        second = _run(cache, seed=5)  # the old code crashed here
        assert _events(second, "rejected") == [], second
        assert len(_events(second, "hit")) == len(_entries(cache)), second
        _no_temporary_files(cache)


def test_two_processes_fill_one_cache(tmp_path):
    cache = tmp_path / "cache"
    go = tmp_path / "go"
    children = []
    for i in range(2):
        env = dict(_child_env(cache), TEST_READY=str(tmp_path / f"ready{i}"), TEST_GO=str(go))
        children.append(
            subprocess.Popen(
                [sys.executable, "-c", CHILD, str(10 + i)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(2)):
        assert time.monotonic() < deadline and all(c.poll() is None for c in children)
        time.sleep(0.01)
    go.touch()
    for child in children:
        out, err = child.communicate(timeout=300)
        _check(child, out, err)
    _no_temporary_files(cache)
    files = _entries(cache)
    assert files and all(_is_valid_entry(f) for f in files)
    log = _run(cache, seed=12)
    assert len(_events(log, "hit")) == len(files), log
    assert _events(log, "built") == [] and _events(log, "rejected") == [], log


def test_threads_share_one_build(tmp_path):
    log = _run(tmp_path / "cache", THREADS_CHILD)
    assert len(_events(log, "built")) == 1, log
    assert len(_events(log, "wrote")) == 1, log


def test_build_holds_no_global_lock(tmp_path):
    # Without the disk cache: asking PoCL for the large program's binary would take far longer.
    env = dict(_child_env(tmp_path / "cache"), TORCH_OCL_CACHE="0")
    proc = subprocess.run(
        [sys.executable, "-c", LOCK_CHILD], env=env, capture_output=True, text=True, timeout=300
    )
    if proc.returncode == 0 and proc.stdout.startswith("inconclusive"):
        pytest.skip(proc.stdout.strip())
    _check(proc, proc.stdout, proc.stderr)
