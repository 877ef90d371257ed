"""Many host threads using the ocl device at once: tiny (batched) ops, reads, device reductions,
streams, frees and hand-offs between threads, each checked against the value the thread expects.

The default suite runs a bounded form (a few seconds); `nox -s stress` sets TORCH_OCL_STRESS_STEPS
for a longer run. A thread reading its own last op's result must always see it, whichever thread
happens to enqueue the shared stream's pending batch of tiny ops (the bug this file guards
against: the batch's pending flag was cleared before the batch was on the queue, so another
thread's read could overtake it)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time

import pytest
import torch
from ocl_testing import DEVICE, make_cpu, on_simulator

STEPS = int(os.environ.get("TORCH_OCL_STRESS_STEPS", "120"))
THREADS = 8

pytestmark = pytest.mark.skipif(
    on_simulator(),
    reason="Oclgrind 21.10 mixes up kernel arguments set and enqueued under a lock by several host "
    "threads (reproduced with pyopencl alone, without torch-ocl)",
)


def run_threads(target, n=THREADS):
    """Runs target(i) in n threads; returns the problems they reported (or raised)."""
    problems = []
    lock = threading.Lock()

    def wrapped(i):
        try:
            found = target(i)
        except Exception as e:  # reported by the assertion below, with the thread's index
            found = [f"thread {i} raised {type(e).__name__}: {e}"]
        if found:
            with lock:
                problems.extend(found)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return problems


def test_each_thread_reads_its_own_last_tiny_op():
    def work(i):
        base = make_cpu((32,), torch.float32, seed=100 + i, integral=True)
        a = base.to(DEVICE)
        for s in range(1, STEPS + 1):
            a.add_(1)
            got = a.cpu()
            if not torch.equal(got, base + s):
                return [f"thread {i} step {s}: expected {base[0] + s}, got {got[0]}"]
        return []

    assert run_threads(work) == []


def test_device_reductions_after_tiny_ops_in_threads():
    def work(i):
        base = make_cpu((40,), torch.float32, seed=200 + i, integral=True)
        a = base.to(DEVICE)
        for s in range(1, STEPS + 1):
            a.mul_(1).add_(1)  # two batched ops, then a kernel that is not batched
            total = a.sum()
            want = float((base + s).sum())
            if float(total) != want:
                return [f"thread {i} step {s}: sum {float(total)} != {want}"]
        return []

    assert run_threads(work) == []


def test_threads_on_streams_with_frees_and_events():
    def work(i):
        stream = torch.ocl.Stream() if i % 2 else torch.ocl.current_stream()
        found = []
        with torch.ocl.stream(stream):
            for s in range(STEPS // 4 + 1):
                x_cpu = make_cpu((17 + i,), torch.float32, seed=300 + 7 * i + s)
                x = x_cpu.to(DEVICE)
                y = torch.tanh(x * 2 - 1)
                del x  # freed while the op that reads it may still be pending
                ev = torch.ocl.Event()
                ev.record(stream)
                ev.synchronize()
                torch.testing.assert_close(y.cpu(), torch.tanh(x_cpu.double() * 2 - 1).float())
                big = torch.ones(3000 + i, device=DEVICE)  # allocator churn
                if float(big.sum()) != 3000 + i:
                    found.append(f"thread {i}: sum of ones wrong")
        return found

    assert run_threads(work) == []


def test_producer_consumer_hand_off():
    """One thread records tiny ops on a tensor and hands it to another, which reads it."""
    items = queue.Queue(maxsize=8)
    problems = []

    def produce():
        for s in range(STEPS):
            a = make_cpu((64,), torch.float32, seed=s, integral=True).to(DEVICE)
            a.add_(s).mul_(2)
            items.put((s, a))
        items.put(None)

    def consume():
        while (item := items.get()) is not None:
            s, a = item
            want = (make_cpu((64,), torch.float32, seed=s, integral=True) + s) * 2
            if not torch.equal(a.cpu(), want):
                problems.append(f"hand-off {s}: stale data")

    threads = [threading.Thread(target=produce), threading.Thread(target=consume)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []


def test_synchronize_from_another_thread_runs_pending_batches():
    a = make_cpu((50,), torch.float32, seed=9, integral=True)
    x = a.to(DEVICE)
    recorded = threading.Event()

    def record():
        x.add_(3)  # left pending in the default stream's batch
        recorded.set()

    t = threading.Thread(target=record)
    t.start()
    t.join()
    assert recorded.is_set()
    torch.ocl.synchronize()
    assert torch.equal(x.cpu(), a + 3)


def test_threads_launch_the_same_kernels_with_different_arguments():
    """Threads launch the same (unbatched) kernels at once, each with its own tensors and scalar
    arguments, and read the results only at the end: a kernel object shared between threads would
    let one thread's arguments leak into another's launch. Every result is checked."""
    n = 9000  # above the tiny-op batch limit: every op is a launch of its own

    def work(i):
        rng = torch.Generator().manual_seed(1000 + i)
        pending = []
        for s in range(STEPS // 4 + 1):
            a_cpu = torch.randn(n, generator=rng)
            b_cpu = torch.randn(n, generator=rng)
            m_cpu = torch.randn(6 + i % 3, 7, generator=rng)
            w_cpu = torch.randn(7, 5, generator=rng)
            idx_cpu = torch.randint(0, n, (33,), generator=rng)
            scale = 0.5 + i + s / 8  # a scalar kernel argument that differs per thread and step
            a, b, m, w, idx = (t.to(DEVICE) for t in (a_cpu, b_cpu, m_cpu, w_cpu, idx_cpu))
            got = (
                torch.add(a, b, alpha=scale),
                a * scale,
                a[::3] - b[1::3],  # strided: the non-contiguous kernel variant
                m.sum(dim=1),
                m @ w,
                torch.index_select(a, 0, idx),
            )
            want = (
                a_cpu + scale * b_cpu,
                a_cpu * scale,
                a_cpu[::3] - b_cpu[1::3],
                m_cpu.double().sum(dim=1).float(),
                (m_cpu.double() @ w_cpu.double()).float(),
                a_cpu[idx_cpu],
            )
            pending.append((s, got, want))
        found = []
        for s, got, want in pending:
            for k, (g, w) in enumerate(zip(got, want, strict=True)):
                try:
                    torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5)
                except AssertionError as e:
                    found.append(f"thread {i} step {s} result {k}: {str(e).splitlines()[0]}")
        return found

    assert run_threads(work) == []


def _thread_kernels():
    return torch.ops.ocl._thread_kernel_count()


def test_thread_kernels_are_released_when_threads_exit():
    x = make_cpu((9000,), torch.float32, seed=5).to(DEVICE)
    (x * 2).sum().cpu()  # the main thread's own kernels exist before the baseline
    baseline = _thread_kernels()

    def work(i):
        y = (x * (i + 1)).sum()
        want = float(x.cpu().double().sum()) * (i + 1)
        return [] if abs(float(y) - want) <= 1e-3 * abs(want) + 1e-3 else [f"thread {i}: {y}"]

    assert run_threads(work) == []
    # join() returns when the Python thread is done; its C++ thread-locals go a moment later.
    # The count is the process's: a thread of an earlier test (an autograd worker) may end
    # meanwhile and take its kernels below the baseline, never above it.
    deadline = time.monotonic() + 10
    while _thread_kernels() > baseline and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _thread_kernels() <= baseline


def test_process_exit_with_threads_holding_kernels(subprocess_env):
    """The process exits cleanly after threads that made their own kernel objects have exited
    (handed over at thread exit, released by a live thread), while an idle daemon thread still
    holds its own, and with the main thread's (both left to the process's end: nothing calls the
    driver from a thread-exit destructor). Daemon threads do not launch at exit here: CPython ends
    them inside a torch op with a forced unwind that aborts the process on the CPU device as
    well."""
    code = (
        "import threading, torch, torch_ocl\n"
        "x = torch.randn(9000).to('ocl')\n"
        "def once():\n"
        "    (x * 2).sum().cpu()\n"
        "stop = threading.Event()\n"
        "def hold():\n"
        "    once()\n"
        "    stop.wait()\n"
        "for t in [threading.Thread(target=once) for _ in range(4)]:\n"
        "    t.start(); t.join()\n"
        "threading.Thread(target=hold, daemon=True).start()\n"
        "print(abs(float((x + 1).sum().cpu()) - float((x.cpu().double() + 1).sum())) < 1e-2)\n"
        "assert torch.ops.ocl._thread_kernel_count() > 0\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["True"]
    assert proc.stderr == ""


def test_a_host_wait_blocks_no_other_thread():
    """While one thread waits for the device (a read behind long matrix products), another thread
    allocates, launches on its own stream, queries it and reads the statistics without waiting:
    the runtime holds no lock across a host wait."""
    a = make_cpu((1536, 1536), torch.float32, seed=11).to(DEVICE)
    b = make_cpu((1536, 1536), torch.float32, seed=12).to(DEVICE)
    (a @ b).sum().cpu()  # builds the kernels before timing
    waiting = threading.Event()
    times = {}

    def waiter(i):
        y = (((a @ b) @ b) @ b) @ b
        waiting.set()
        start = time.monotonic()
        y.sum().cpu()
        times["wait"] = time.monotonic() - start
        times["wait_end"] = time.monotonic()
        return []

    def other(i):
        waiting.wait()
        time.sleep(0.05)  # the waiter is in its read by now
        side = torch.ocl.Stream()
        with torch.ocl.stream(side):
            torch.empty(3 << 20, device=DEVICE)
            torch.ones(9000, device=DEVICE) * 3
            side.query()
            torch.ocl.memory_stats()
        times["other_end"] = time.monotonic()
        return []

    assert run_threads(lambda i: (waiter if i == 0 else other)(i), n=2) == []
    if times["wait"] < 0.3:
        pytest.skip(f"inconclusive: the device finished the products in {times['wait']:.2f} s")
    assert times["other_end"] < times["wait_end"], times


def test_threads_first_use_new_buffers_at_once(subprocess_env):
    """Threads put their first data into freshly created device buffers at the same moment. PoCL
    3.0 allocates a buffer's device memory at its first use, without a lock: two first uses at once
    corrupted the buffer's state and crashed the process (segmentation fault) at its next command.
    The allocator now has the driver place every new buffer before any thread can use it. Run in a
    child process so that a crash is a failure, not the end of the test run."""
    code = (
        "import threading, torch, torch_ocl\n"
        "problems = []\n"
        "for r in range(30):\n"
        "    torch.ocl.synchronize()\n"
        "    torch.ocl.empty_cache()\n"  # the tensors below land in new buffers
        "    barrier = threading.Barrier(8)\n"
        "    def work(i):\n"
        "        g = torch.Generator().manual_seed(100 * r + i)\n"
        "        cpu = torch.randn(1000 + i, generator=g)\n"
        "        barrier.wait()\n"
        "        y = cpu.to('ocl') * 2\n"
        "        if not torch.equal(y.cpu(), cpu * 2):\n"
        "            problems.append((r, i))\n"
        "    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]\n"
        "    for t in threads:\n"
        "        t.start()\n"
        "    for t in threads:\n"
        "        t.join()\n"
        "print(problems)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert proc.stdout.split() == ["[]"]
