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
import threading

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
