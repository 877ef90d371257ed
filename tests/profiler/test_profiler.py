"""torch.profiler with the ocl device activity (csrc/profiler/, torch.ocl.profiler).

Each test runs a program whose kernels, copies and host waits are known, profiles it with
``ProfilerActivity.PrivateUse1`` and checks the exported Chrome trace and ``key_averages()``:
exactly the program's kernels, each enqueued inside the op it belongs to and run after that
enqueue, device time close to the synchronised wall time, host waits exactly where the program
waits.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import threading
import time

import pytest
import torch
from ocl_testing import DEVICE
from torch.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
REPO = pathlib.Path(__file__).resolve().parents[2]
# Mapping a device clock to the host clock from enqueue brackets is good to a few microseconds
# (the length of one enqueue call); Chrome traces round to nanoseconds.
CLOCK_TOLERANCE_US = 20.0

pytestmark = pytest.mark.skipif(
    not torch.ocl.profiler.has_device_activity(),
    reason="torch-ocl was built without Kineto's headers: no torch.profiler device activity",
)


def kernel_functions() -> set[str]:
    names = set()
    for path in (REPO / "kernels").glob("*.cl"):
        names.update(re.findall(r"__kernel\b[^;{]*?\bvoid\s+(\w+)\s*\(", path.read_text()))
    return names


def trace_of(prof, tmp_path, name="trace.json") -> list[dict]:
    path = tmp_path / name
    prof.export_chrome_trace(str(path))
    return json.loads(path.read_text())["traceEvents"]


def of_cat(trace, *cats) -> list[dict]:
    return [e for e in trace if e.get("cat") in cats]


def by_external_id(trace) -> dict[int, dict]:
    """The CPU ops (aten ops, ocl:: ops) by their External id."""
    return {e["args"]["External id"]: e for e in of_cat(trace, "cpu_op")}


def end(e) -> float:
    return e["ts"] + e.get("dur", 0)


def inside(inner, outer, slack=0.002) -> bool:
    return outer["ts"] - slack <= inner["ts"] and end(inner) <= end(outer) + slack


def sync_all():
    torch.ocl.synchronize()


def test_trace_has_exactly_the_program_kernels(tmp_path):
    a = torch.randn(256, 256, device=DEVICE)
    (a @ a).relu().sum()  # builds the kernels outside the profile
    sync_all()
    with profile(activities=ACTIVITIES) as prof:
        (a @ a).relu().sum()
        sync_all()
    trace = trace_of(prof, tmp_path)
    ops = by_external_id(trace)
    kernels = of_cat(trace, "kernel")
    by_op: dict[str, list[str]] = {}
    for k in kernels:
        by_op.setdefault(ops[k["args"]["External id"]]["name"], []).append(k["name"])
    assert set(by_op) == {"aten::mm", "aten::clamp_min", "aten::sum"}
    assert len(by_op["aten::mm"]) == 1 and by_op["aten::mm"][0].startswith("mm")
    assert by_op["aten::clamp_min"] == ["elementwise[clamp_min]"]
    assert by_op["aten::sum"] and all(
        k.startswith("reduce") and k.endswith("[SUM]") for k in by_op["aten::sum"]
    )
    # Readable names: a kernel function of kernels/*.cl and its variant; geometry as arguments.
    known = kernel_functions()
    for k in kernels:
        assert k["name"].split("[")[0] in known
        args = k["args"]
        assert len(args["global_size"]) == 3 and len(args["local_size"]) == 3
        assert all(
            g % max(lo, 1) == 0
            for g, lo in zip(args["global_size"], args["local_size"], strict=True)
        )
        assert args["grid"] == [
            g // lo for g, lo in zip(args["global_size"], args["local_size"], strict=True)
        ]
        assert args["device"] == 0 and args["stream"] == 0 and k["dur"] > 0
    # One enqueue call per kernel, nothing else on the device.
    launches = [r for r in of_cat(trace, "privateuse1_runtime") if r["name"].startswith("clEnq")]
    assert len(launches) == len(kernels)
    assert of_cat(trace, "gpu_memcpy", "gpu_memset") == []
    # key_averages: device time per op, the op's total includes its kernels.
    avg = {e.key: e for e in prof.key_averages()}
    mm_kernel = by_op["aten::mm"][0]
    assert avg["aten::mm"].device_time_total == pytest.approx(avg[mm_kernel].device_time_total)
    assert avg["aten::mm"].self_device_time_total == pytest.approx(avg[mm_kernel].device_time_total)
    assert avg["aten::relu"].device_time_total == pytest.approx(
        avg["aten::clamp_min"].device_time_total
    )
    assert avg["aten::relu"].self_device_time_total == 0


def test_each_command_is_enqueued_inside_its_op_and_runs_after(tmp_path):
    a = torch.randn(128, 128, device=DEVICE)
    host = torch.randn(128, 128)
    (a @ a + 1).cpu()
    sync_all()
    with profile(activities=ACTIVITIES) as prof:
        b = host.to(DEVICE)  # HtoD
        c = (a @ b).exp()
        d = c.clone()  # DtoD
        total = d.sum().item()  # DtoH (a wait)
        sync_all()
    assert total == pytest.approx((a.cpu() @ host).exp().sum().item(), rel=1e-3)
    trace = trace_of(prof, tmp_path)
    ops = by_external_id(trace)
    device = of_cat(trace, *DEVICE_CATS)
    runtime = {r["args"]["correlation"]: r for r in of_cat(trace, "privateuse1_runtime")}
    copies = sorted(e["name"] for e in of_cat(trace, "gpu_memcpy"))
    assert copies == ["Memcpy DtoD (ocl)", "Memcpy DtoH (ocl)", "Memcpy HtoD (ocl)"]
    assert {e["args"]["bytes"] for e in of_cat(trace, "gpu_memcpy")} == {128 * 128 * 4, 4}
    last_wait = max((e for e in trace if e["name"] == "ocl::host_wait"), key=lambda e: e["ts"])
    for k in device:
        op = ops[k["args"]["External id"]]
        launch = runtime[k["args"]["correlation"]]
        assert launch["args"]["External id"] == k["args"]["External id"]
        assert inside(launch, op), (k["name"], op["name"])
        assert launch["tid"] == op["tid"]
        # The device ran it after it was enqueued, and before the last wait returned.
        assert k["ts"] >= launch["ts"] - CLOCK_TOLERANCE_US, (k["name"], k["ts"] - launch["ts"])
        assert end(k) <= end(last_wait) + CLOCK_TOLERANCE_US, k["name"]
    # Commands of one stream do not overlap (in-order queue), to within the clock's error.
    lane = sorted(device, key=lambda e: e["ts"])
    for first, second in zip(lane, lane[1:], strict=False):
        assert second["ts"] >= end(first) - CLOCK_TOLERANCE_US
    assert torch.ocl.profiler.clock_method(0) in ("device_and_host_timer", "queued")


def test_device_time_matches_synchronised_wall_time(tmp_path):
    # A device-bound region: a chain of large products enqueued faster than they run (on a CPU
    # device the host thread shares the cores with the kernels, so short kernels would leave
    # the device idle while the host enqueues: real gaps, but not what this test measures).
    a = torch.randn(1024, 1024, device=DEVICE) / 32
    b = a @ a
    sync_all()
    with profile(activities=ACTIVITIES) as prof:
        with record_function("region"):
            t0 = time.perf_counter()
            for _ in range(4):
                b = torch.mm(a, b)
            sync_all()
            wall_us = (time.perf_counter() - t0) * 1e6
    trace = trace_of(prof, tmp_path)
    device = of_cat(trace, *DEVICE_CATS)
    assert sum(e["name"].startswith("mm") for e in device) == 4
    busy_us = sum(e["dur"] for e in device)
    assert abs(busy_us - wall_us) <= 0.10 * wall_us, (busy_us, wall_us)
    # key_averages' device times add up to the same (over the ops; the rows of the kernels
    # themselves repeat their time).
    kernel_names = {e["name"] for e in device}
    self_total = sum(
        e.self_device_time_total for e in prof.key_averages() if e.key not in kernel_names
    )
    assert self_total == pytest.approx(busy_us, rel=0.01)
    region = next(e for e in prof.key_averages() if e.key == "region")
    assert region.device_time_total == pytest.approx(busy_us, rel=0.01)


def waiting_program(x, big):
    """Waits for the device exactly four times: item, nonzero, cpu, synchronize."""
    y = (x * 2).sin()  # no wait
    z = big @ big  # no wait
    v = y.sum().item()
    nz = torch.nonzero(y > 0)
    host = z.cpu()
    w = z + 1  # no wait
    torch.ocl.synchronize()
    return v, nz, host, w


def test_host_waits_appear_exactly_where_the_program_waits(tmp_path):
    x = torch.randn(1000, device=DEVICE)
    big = torch.randn(128, 128, device=DEVICE)
    waiting_program(x, big)
    before = torch.ocl.host_wait_count()
    with profile(activities=ACTIVITIES, record_shapes=True, with_stack=True) as prof:
        with record_function("program"):
            waiting_program(x, big)
        counted = torch.ocl.host_wait_count() - before
    trace = trace_of(prof, tmp_path)
    program = next(e for e in trace if e["name"] == "program" and e.get("cat") == "user_annotation")
    waits = sorted(
        (e for e in trace if e["name"] == "ocl::host_wait" and inside(e, program)),
        key=lambda e: e["ts"],
    )
    assert counted == len(waits) == 4
    reasons = [w["args"]["reason"] for w in waits]
    assert reasons[0].startswith("Tensor.item()")
    assert reasons[1].startswith("nonzero")
    assert reasons[2].startswith("copying an ocl tensor to the CPU")
    assert reasons[3] == "torch.ocl.synchronize()"
    # Each wait sits under the op that waited, on the program's thread...
    cpu_ops = of_cat(trace, "cpu_op")

    def innermost_op(e):
        enclosing = [o for o in cpu_ops if o["tid"] == e["tid"] and inside(e, o)]
        return min(enclosing, key=lambda o: o["dur"])["name"]

    assert [innermost_op(w) for w in waits] == [
        "aten::_local_scalar_dense",
        "aten::nonzero",
        "aten::_copy_from",
        "ocl::synchronize",
    ]
    # ...and, with with_stack, under the Python function that waited.
    frames = [
        e for e in of_cat(trace, "python_function") if e["name"].endswith(": waiting_program")
    ]
    assert len(frames) == 1
    assert all(inside(w, frames[0]) and w["tid"] == frames[0]["tid"] for w in waits)
    # Nowhere else: the ops that do not wait have no host_wait inside them.
    for name in ("aten::mul", "aten::sin", "aten::mm", "aten::add"):
        op = next(o for o in cpu_ops if o["name"] == name and inside(o, program))
        assert not any(inside(w, op) for w in waits), name
    # The D2H copies belong to the ops that waited, not to the wait events.
    ops = by_external_id(trace)
    reads = [ops[e["args"]["External id"]]["name"] for e in of_cat(trace, "gpu_memcpy")]
    assert "aten::_local_scalar_dense" in reads and "aten::_copy_from" in reads
    assert "ocl::host_wait" not in reads


def test_host_waits_show_in_a_cpu_only_profile(tmp_path):
    x = torch.randn(10, device=DEVICE)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        assert not torch.ocl.profiler.is_recording()
        x.sum().item()
    trace = trace_of(prof, tmp_path)
    assert [e["name"] for e in trace if e["name"] == "ocl::host_wait"] == ["ocl::host_wait"]
    assert of_cat(trace, *DEVICE_CATS) == []


def test_batched_tiny_ops_are_one_launch_shared_by_their_ops(tmp_path):
    a = torch.randn(16, device=DEVICE)
    ((a + 1) * 2).neg()
    sync_all()  # no batch left pending from before the profile
    launches_before = torch.ocl.batch_stats()["launches"]
    with profile(activities=ACTIVITIES) as prof:
        b = ((a + 1) * 2).neg()
        sync_all()
    if torch.ocl.batch_stats()["launches"] - launches_before != 1:
        pytest.skip("tiny-op batching is off here (TORCH_OCL_BATCH=0 or no batch kernel)")
    assert torch.allclose(b.cpu(), -((a.cpu() + 1) * 2))
    trace = trace_of(prof, tmp_path)
    ops = by_external_id(trace)
    shares = sorted(of_cat(trace, "kernel"), key=lambda e: e["ts"])
    assert [s["name"] for s in shares] == [
        "elementwise_batch[float, add 1/3]",
        "elementwise_batch[float, mul 2/3]",
        "elementwise_batch[float, neg 3/3]",
    ]
    assert [ops[s["args"]["External id"]]["name"] for s in shares] == [
        "aten::add",
        "aten::mul",
        "aten::neg",
    ]
    # One launch: the shares tile it, and one enqueue call made it.
    for first, second in zip(shares, shares[1:], strict=False):
        assert second["ts"] == pytest.approx(end(first), abs=0.002)
    assert len({s["args"]["correlation"] for s in shares}) == 1
    assert len(of_cat(trace, "privateuse1_runtime")) == 1


def test_schedule_and_tensorboard_trace_handler(tmp_path):
    a = torch.randn(128, 128, device=DEVICE)  # too large for a tiny-op batch
    (a @ a).relu()
    sync_all()
    with profile(
        activities=ACTIVITIES,
        schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
        on_trace_ready=tensorboard_trace_handler(str(tmp_path)),
    ) as prof:
        for _ in range(5):
            (a @ a).relu()
            sync_all()
            prof.step()
    files = list(tmp_path.glob("*.pt.trace.json"))
    assert len(files) == 1
    trace = json.loads(files[0].read_text())["traceEvents"]
    steps = [e for e in trace if e["name"].startswith("ProfilerStep#")]
    assert sorted(e["name"] for e in steps) == ["ProfilerStep#2", "ProfilerStep#3"]
    kernels = of_cat(trace, "kernel")
    assert sorted(k["name"].split("[")[0] for k in kernels).count("elementwise") == 2
    assert len(kernels) == 4
    ops = by_external_id(trace)
    for k in kernels:
        op = ops[k["args"]["External id"]]
        assert any(inside(op, s) for s in steps)


def test_threads_and_streams_get_their_own_rows(tmp_path):
    inputs = [torch.randn(128, 128, device=DEVICE) for _ in range(2)]
    streams = [torch.ocl.Stream() for _ in range(2)]
    tids: dict[int, int] = {}

    def work(i):
        import ctypes

        tids[i] = ctypes.CDLL(None).syscall(186)  # gettid on Linux x86_64
        with torch.ocl.stream(streams[i]):
            (inputs[i] @ inputs[i]).sum()
            torch.ocl.current_stream().synchronize()

    for i in range(2):
        work(i)  # warm-up on this thread
    # torch.profiler records the ops of the thread that started it unless told otherwise.
    config = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
    with profile(activities=ACTIVITIES, experimental_config=config) as prof:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    trace = trace_of(prof, tmp_path)
    ops = by_external_id(trace)
    kernels = of_cat(trace, "kernel")
    lanes = {k["tid"] for k in kernels}
    assert lanes == {s.stream_id for s in streams}
    for k in kernels:
        i = [s.stream_id for s in streams].index(k["tid"])
        assert ops[k["args"]["External id"]]["tid"] == tids[i]
    names = {
        e["args"]["name"]
        for e in trace
        if e.get("ph") == "M" and e["name"] == "thread_name" and e.get("pid") == 0
    }
    assert {f"stream {s.stream_id}" for s in streams} <= names


def test_nothing_recorded_when_not_profiling(tmp_path):
    a = torch.randn(64, device=DEVICE)
    assert not torch.ocl.profiler.is_recording()
    with profile(activities=ACTIVITIES) as prof:
        assert torch.ocl.profiler.is_recording()
        (a + 1).sum()
        sync_all()
    assert not torch.ocl.profiler.is_recording()
    (a * 3).sum()  # after the profile: must not show up in a later one
    sync_all()
    with profile(activities=ACTIVITIES) as prof:
        pass
    assert of_cat(trace_of(prof, tmp_path), *DEVICE_CATS) == []


def test_region_without_ocl_work(tmp_path):
    with profile(activities=ACTIVITIES) as prof:
        torch.randn(32, 32).matmul(torch.randn(32, 32))
    trace = trace_of(prof, tmp_path)
    assert of_cat(trace, *DEVICE_CATS) == []
    assert any(e["name"] == "aten::matmul" for e in of_cat(trace, "cpu_op"))
    assert all(e.device_time_total == 0 for e in prof.key_averages())


def test_profile_started_while_work_is_in_flight(tmp_path):
    a = torch.randn(512, 512, device=DEVICE)
    b = a @ a  # warm-up
    sync_all()
    for _ in range(3):
        b = a @ b  # enqueued before the profile, still running when it starts
    with profile(activities=ACTIVITIES) as prof:
        c = b + 1
        sync_all()
    assert torch.isfinite(c).all()
    trace = trace_of(prof, tmp_path)
    ops = by_external_id(trace)
    assert [ops[k["args"]["External id"]]["name"] for k in of_cat(trace, *DEVICE_CATS)] == [
        "aten::add"
    ]


def test_queued_clock_when_the_device_timer_is_not_used(tmp_path, subprocess_env):
    code = (
        "import json, torch, torch_ocl\n"
        "from torch.profiler import profile, ProfilerActivity as A\n"
        "a = torch.randn(64, 64, device='ocl'); (a @ a).sum(); torch.ocl.synchronize()\n"
        "with profile(activities=[A.CPU, A.PrivateUse1]) as p:\n"
        "    (a @ a).sum(); torch.ocl.synchronize()\n"
        f"p.export_chrome_trace({str(tmp_path / 'q.json')!r})\n"
        "print(torch.ocl.profiler.clock_method(0))\n"
    )
    env = dict(subprocess_env, TORCH_OCL_PROFILER_CLOCK="queued")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "queued"
    trace = json.loads((tmp_path / "q.json").read_text())["traceEvents"]
    runtime = {r["args"]["correlation"]: r for r in of_cat(trace, "privateuse1_runtime")}
    kernels = of_cat(trace, "kernel")
    assert kernels
    for k in kernels:
        assert k["ts"] >= runtime[k["args"]["correlation"]]["ts"] - CLOCK_TOLERANCE_US


def test_profile_memory_reports_device_allocations_and_frees(tmp_path):
    a = torch.randn(256, 256, device=DEVICE)
    (a @ a).relu().sum()
    sync_all()
    base = torch.ocl.memory_allocated()
    with profile(activities=ACTIVITIES, profile_memory=True) as prof:
        b = a @ a
        c = b.relu()
        del b
        d = c.sum()
        del c, d
        sync_all()
    assert torch.ocl.memory_allocated() == base
    trace = trace_of(prof, tmp_path)
    mem = [
        e["args"]
        for e in sorted(trace, key=lambda e: e["ts"])
        if e["name"] == "[memory]" and e["args"]["Device Type"] != 0  # 0: the CPU
    ]
    allocs = [m for m in mem if m["Bytes"] > 0]
    frees = [m for m in mem if m["Bytes"] < 0]
    nbytes = 256 * 256 * 4
    assert [m["Bytes"] for m in allocs][:2] == [nbytes, nbytes]  # b, then c
    # Balanced: everything allocated in the region is freed there, each block once, by address.
    assert sum(m["Bytes"] for m in mem) == 0
    assert sorted((m["Addr"], m["Bytes"]) for m in allocs) == sorted(
        (m["Addr"], -m["Bytes"]) for m in frees
    )
    # The totals after each event follow the events.
    total = base
    for m in mem:
        total += m["Bytes"]
        assert m["Total Allocated"] == total
        assert m["Total Reserved"] >= m["Total Allocated"]
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::mm"].device_memory_usage == nbytes
    assert avg["aten::clamp_min"].device_memory_usage == nbytes


def test_autograd_profiler_use_device_gives_device_time():
    a = torch.randn(512, 512, device=DEVICE)
    (a @ a).sum()
    sync_all()
    times = {}
    for use_kineto in (True, False):
        with torch.autograd.profiler.profile(use_device="ocl", use_kineto=use_kineto) as prof:
            t0 = time.perf_counter()
            (a @ a).sum()
            sync_all()
            wall_us = (time.perf_counter() - t0) * 1e6
        mm = next(e for e in prof.key_averages() if e.key == "aten::mm")
        assert 0 < mm.device_time_total <= wall_us, (use_kineto, mm.device_time_total, wall_us)
        times[use_kineto] = mm.device_time_total
    # The legacy path (markers around each op) brackets the same kernel the default path times.
    assert times[False] >= 0.5 * times[True]


def test_nested_profiles_leave_the_device_usable():
    # Kineto runs one trace at a time: the inner profile gets the device activity (the outer one
    # loses it, and torch warns when it ends); the device and later profiles keep working.
    a = torch.randn(64, 64, device=DEVICE)
    (a @ a).sum()
    sync_all()
    with profile(activities=ACTIVITIES):
        with profile(activities=ACTIVITIES) as inner:
            (a @ a).sum()
            sync_all()
    kernels = [e for e in inner.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]
    assert [e.name.split("[")[0] for e in kernels].count("mm") == 1
    assert not torch.ocl.profiler.is_recording()
    with profile(activities=ACTIVITIES) as after:
        (a @ a).sum()
        sync_all()
    assert [e.name for e in after.events() if e.name.startswith("mm[")] == ["mm[float]"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_while_profiling():
    a = torch.randn(64, 64, device=DEVICE)
    (a @ a).sum()
    sync_all()
    with profile(activities=ACTIVITIES) as prof:
        (a @ a).sum()
        pid = os.fork()
        if pid == 0:  # the child: ocl refuses to run, with its fork message
            try:
                torch.randn(4, device=DEVICE)
                os._exit(3)
            except Exception as e:  # noqa: BLE001
                os._exit(0 if "fork" in str(e) else 4)
        _, status = os.waitpid(pid, 0)
        (a @ a).sum()
        sync_all()
    assert os.waitstatus_to_exitcode(status) == 0
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]
    assert [e.name.split("[")[0] for e in kernels].count("mm") == 2
