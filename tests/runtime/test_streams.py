"""Streams and events: creation, the current stream and the stream() context, cross-stream
ordering with events, timing, synchronize and query."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, make_cpu


def _same_stream(a, b) -> bool:
    return (a.stream_id, a.device_index, a.device_type) == (
        b.stream_id,
        b.device_index,
        b.device_type,
    )


def test_stream_creation():
    s = torch.ocl.Stream()
    assert s.device.type == "ocl" and s.device_index == torch.ocl.current_device()
    assert not _same_stream(s, torch.ocl.default_stream())
    s.synchronize()
    t = torch.Stream(device="ocl")
    assert t.device.type == "ocl"
    assert t.device_index == torch.ocl.current_device()
    u = torch.Stream(device=torch.device("ocl", 0))
    assert u.device == torch.device("ocl", 0)
    assert "ocl" in repr(s)


def test_current_and_default_stream():
    cur = torch.ocl.current_stream()
    assert _same_stream(cur, torch.ocl.default_stream())
    assert cur.device.type == "ocl"
    s = torch.ocl.Stream()
    with torch.ocl.stream(s) as entered:
        assert entered is s
        assert _same_stream(torch.ocl.current_stream(), s)
        assert _same_stream(torch.accelerator.current_stream(), s)
    assert _same_stream(torch.ocl.current_stream(), cur)
    with torch.ocl.stream(None):
        assert _same_stream(torch.ocl.current_stream(), cur)
    torch.ocl.set_stream(s)
    try:
        assert _same_stream(torch.ocl.current_stream(), s)
    finally:
        torch.ocl.set_stream(cur)
    assert _same_stream(torch.ocl.current_stream(), cur)


def test_side_stream_with_events():
    x_cpu = make_cpu((512, 257), torch.float32)
    x = x_cpu.to(DEVICE)
    ready = torch.ocl.Event()
    ready.record()  # on the default stream, after the upload
    side = torch.ocl.Stream()
    with torch.ocl.stream(side):
        side.wait_event(ready)
        y = x * 2 + 1
        for _ in range(5):
            y = y * 0.5 + x
        done = torch.ocl.Event()
        done.record(side)
    torch.ocl.current_stream().wait_event(done)
    z = y - x  # on the default stream, after the side stream's work
    expected = x_cpu * 2 + 1
    for _ in range(5):
        expected = expected * 0.5 + x_cpu
    torch.testing.assert_close(z.cpu(), expected - x_cpu)
    assert done.query()


def test_wait_stream_and_record_event():
    a = torch.ocl.Stream()
    b = torch.ocl.Stream()
    x_cpu = make_cpu((1000,), torch.float32)
    with torch.ocl.stream(a):
        x = x_cpu.to(DEVICE)
        x.mul_(3)
        ev = a.record_event()
    b.wait_stream(a)
    with torch.ocl.stream(b):
        y = x + 1
    b.synchronize()
    assert ev.query()
    torch.testing.assert_close(y.cpu(), x_cpu * 3 + 1)


def test_event_timing():
    start = torch.ocl.Event(enable_timing=True)
    end = torch.ocl.Event(enable_timing=True)
    x = torch.ones(1 << 16, device=DEVICE)
    start.record()
    for _ in range(10):
        x = x * 1.0001
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0
    # torch.Event with the ocl device.
    e1 = torch.Event(device="ocl", enable_timing=True)
    e2 = torch.Event(device="ocl", enable_timing=True)
    e1.record()
    x.add_(1)
    e2.record()
    e2.synchronize()
    assert e1.elapsed_time(e2) >= 0


def test_event_timing_measures_the_work_between():
    """elapsed_time() is the device time of the work recorded between the events: more than
    zero, and no more than the wall time around it (Intel's CPU runtime gives markers no
    timestamps, and elapsed_time() was 0 there until timing events became a kernel)."""
    import time

    a = torch.randn(256, 256, device=DEVICE)
    (a @ a).sum()
    torch.ocl.synchronize()
    start = torch.ocl.Event(enable_timing=True)
    end = torch.ocl.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(4):
        a = (a @ a) * 1e-3
    end.record()
    end.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3
    assert 0 < start.elapsed_time(end) <= wall_ms


def test_elapsed_time_needs_timing_events():
    a, b = torch.ocl.Event(), torch.ocl.Event()
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises((RuntimeError, ValueError)):
        a.elapsed_time(b)


def test_unrecorded_event_and_idle_stream_query():
    e = torch.ocl.Event()
    assert e.query()
    e.synchronize()
    s = torch.ocl.Stream()
    for _ in range(20):  # an idle stream has nothing pending, every time it is asked
        assert s.query()
    s.synchronize()
    assert s.query()
    torch.ocl.synchronize()
    assert torch.ocl.default_stream().query()


def test_synchronize_and_query_after_work():
    s = torch.ocl.Stream()
    with torch.ocl.stream(s):
        x = torch.ones(1 << 18, device=DEVICE)
        for _ in range(20):
            x = x + 1
    torch.ocl.synchronize()
    assert s.query()
    assert torch.ocl.current_stream().query()
    assert x[0].item() == 21


def test_record_stream():
    s = torch.ocl.Stream()
    main = torch.ocl.current_stream(torch.device("ocl"))
    x = torch.ones(1 << 16, device=DEVICE)
    with torch.ocl.stream(s):
        s.wait_stream(main)
        y = x * 2
    x.record_stream(s)
    del x
    torch.ocl.synchronize()
    assert y[0].item() == 2
