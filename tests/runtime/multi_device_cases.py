"""Two ocl devices in one process: the cases test_multi_device.py runs in a child process whose
environment gives it two devices (two PoCL CPU devices; each has a context of its own, so copies
between them pass through the host). Not collected on its own (no test_ prefix): run through
test_multi_device.py, or by hand with POCL_DEVICES="pthread pthread" TORCH_OCL_DEVICES=pthread.
"""

from __future__ import annotations

import io

import pytest
import torch

import torch_ocl  # noqa: F401

D0, D1 = torch.device("ocl", 0), torch.device("ocl", 1)


@pytest.fixture(autouse=True)
def _two_devices():
    assert torch.ocl.device_count() == 2, torch.ocl.device_count()
    torch.ocl.set_device(0)
    yield
    torch.ocl.synchronize(0)
    torch.ocl.synchronize(1)


def test_two_devices_with_contexts_of_their_own():
    names = [torch.ocl.get_device_name(i) for i in range(2)]
    assert all(names), names
    a = torch.arange(6.0, device=D0)
    b = torch.arange(6.0, device=D1)
    assert a.device == D0 and b.device == D1
    assert torch.equal((a * 2).cpu(), (b * 2).cpu())


LAYOUTS = {
    "empty": lambda: torch.randn(0, 3),
    "one": lambda: torch.randn(()),
    "odd": lambda: torch.randn(7, 13),
    "transposed": lambda: torch.randn(5, 9).t(),
    "sliced": lambda: torch.randn(11, 6)[1::3, ::2],
    "expanded": lambda: torch.randn(3, 1).expand(3, 4),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
@pytest.mark.parametrize("direction", ["0to1", "1to0"])
def test_copy_between_devices(layout, dtype, direction):
    src_dev, dst_dev = (D0, D1) if direction == "0to1" else (D1, D0)
    host = LAYOUTS[layout]()
    host = (host > 0) if dtype == torch.bool else (host * 10).to(dtype)
    # the device copy keeps the layout: a non-contiguous source on the source device
    src = torch.empty_strided(host.size(), host.stride(), dtype=dtype, device=src_dev)
    if host.numel():
        src.copy_(host)
    out = src.to(dst_dev)
    assert out.device == dst_dev and out.dtype == dtype and out.shape == host.shape
    assert torch.equal(out.cpu(), host)


def test_copy_into_non_contiguous_destination_with_conversion():
    src = torch.randn(6, 5, device=D0)
    dst = torch.zeros(5, 12, dtype=torch.float64, device=D1)
    view = dst[:, ::2].t()  # 6 x 5, non-contiguous
    view.copy_(src)
    expected = torch.zeros(5, 12, dtype=torch.float64)
    expected[:, ::2].t().copy_(src.cpu())
    assert torch.equal(dst.cpu(), expected)


def test_copy_sees_pending_work_without_host_waits():
    a = torch.randn(256, 256, device=D0)
    b = a @ a  # a kernel still running or queued when the copy is enqueued
    c = torch.zeros(100, device=D0)
    c.add_(1.5)  # a tiny op, possibly held back in a batch
    waits = torch.ocl.host_wait_count()
    b1, c1 = b.to(D1), c.to(D1)
    b1.mul_(2)  # work behind the copy on the destination's stream
    d = b1.to(D0)  # and back
    assert torch.ocl.host_wait_count() == waits, "a copy between devices made the host wait"
    expected = (a.cpu().double() @ a.cpu().double()).float()
    torch.testing.assert_close(b1.cpu(), expected * 2, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(d.cpu(), expected * 2, rtol=1e-4, atol=1e-3)
    assert torch.equal(c1.cpu(), torch.full((100,), 1.5))


def test_copy_waits_for_the_destination_streams_earlier_work():
    dst = torch.ones(1000, device=D1)
    dst.mul_(3)
    src = torch.arange(1000.0, device=D0)
    dst.copy_(src)  # must land after mul_, not be overwritten by it
    assert torch.equal(dst.cpu(), torch.arange(1000.0))


def test_device_context_manager():
    assert torch.ocl.current_device() == 0
    with torch.ocl.device(1):
        assert torch.ocl.current_device() == 1
        t = torch.ones(3, device="ocl")
        assert t.device == D1
        with torch.ocl.device("ocl:0"):
            assert torch.empty(1, device="ocl").device == D0
        assert torch.ocl.current_device() == 1
    assert torch.ocl.current_device() == 0
    assert torch.ones(1, device="ocl").device == D0


def test_ops_follow_their_tensors_device_not_the_current_one():
    x = torch.randn(17, 5, device=D1)
    assert torch.ocl.current_device() == 0
    y = (x.relu() @ x.t()).sum(0)
    assert y.device == D1
    xc = x.cpu()
    torch.testing.assert_close(y.cpu(), (xc.relu() @ xc.t()).sum(0), rtol=1e-5, atol=1e-5)


def test_streams_and_events_per_device():
    s0, s1 = torch.ocl.Stream(device=0), torch.ocl.Stream(device=1)
    assert s0.device == D0 and s1.device == D1
    assert torch.ocl.current_stream(1).device == D1
    with torch.ocl.stream(s1):  # as torch.cuda.stream: the stream's device becomes current
        assert torch.ocl.current_stream(1) == s1
        assert torch.ocl.current_device() == 1
        t = torch.ones(10, device="ocl") * 4
    assert torch.ocl.current_device() == 0  # and both are restored
    assert torch.ocl.current_stream(1) == torch.ocl.default_stream(1)
    assert t.device == D1
    s1.synchronize()
    assert torch.equal(t.cpu(), torch.full((10,), 4.0))
    # an event of ocl:0 that a stream of ocl:1 waits for (another context: a bridge event)
    a = torch.randn(300, 300, device=D0)
    e = torch.ocl.Event()
    with torch.ocl.stream(s0):
        b = a @ a
        e.record(s0)
    s1.wait_event(e)
    waits = torch.ocl.host_wait_count()
    s1.wait_stream(s0)
    assert torch.ocl.host_wait_count() == waits
    s1.synchronize()
    assert e.query()
    assert b.device == D0


def test_generators_per_device():
    torch.ocl.manual_seed_all(123)
    first0 = torch.rand(1000, device=D0).cpu()
    second0 = torch.rand(1000, device=D0).cpu()
    first1 = torch.rand(1000, device=D1).cpu()  # ocl:1's generator did not advance with ocl:0's
    assert torch.equal(first0, first1)
    assert not torch.equal(first0, second0)
    with torch.ocl.device(1):
        torch.ocl.manual_seed(7)  # the current device's generator only
    assert torch.ocl.initial_seed(1) == 7 and torch.ocl.initial_seed(0) == 123
    s0, s1 = torch.ocl.get_rng_state(0), torch.ocl.get_rng_state(1)
    assert not torch.equal(s0, s1)
    again = torch.rand(1000, device=D1).cpu()
    torch.ocl.set_rng_state(s1, 1)
    assert torch.equal(torch.rand(1000, device=D1).cpu(), again)
    g = torch.Generator(device=D1).manual_seed(5)
    x = torch.randn(50, device=D1, generator=g)
    assert x.device == D1
    assert torch.equal(x.cpu(), torch.randn(50, device=D1, generator=g.manual_seed(5)).cpu())


def test_model_to_device_1():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
    x = torch.randn(5, 8)
    expected = model(x)
    moved = model.to("ocl:1")
    assert moved is model and all(p.device == D1 for p in model.parameters())
    torch.testing.assert_close(model(x.to("ocl:1")).cpu(), expected, rtol=1e-5, atol=1e-5)
    model.to("ocl:0")
    assert all(p.device == D0 for p in model.parameters())


def test_load_with_map_location():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3).to(D0)
    state = model.state_dict()
    buf = io.BytesIO()
    torch.save(state, buf)
    for where in ("ocl:1", D1, {"ocl:0": "ocl:1"}, lambda s, loc: s.ocl(1)):
        buf.seek(0)
        loaded = torch.load(buf, map_location=where)
        for k, v in loaded.items():
            assert v.device == D1, (where, k, v.device)
            assert torch.equal(v.cpu(), state[k].cpu())
    buf.seek(0)
    assert torch.load(buf).get("weight").device == D0  # no map_location: where it was saved


def test_split_model_trains_like_the_cpu():
    torch.manual_seed(0)
    first = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.Tanh())
    second = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    x = torch.randn(40, 12)
    y = torch.randn(40, 2)
    ref = [m.state_dict() for m in (first, second)]

    def run(dev_a, dev_b, steps=6):
        a = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.Tanh())
        b = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
        a.load_state_dict(ref[0])
        b.load_state_dict(ref[1])
        a.to(dev_a)
        b.to(dev_b)
        opt = torch.optim.SGD([*a.parameters(), *b.parameters()], lr=0.1, momentum=0.9)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            h = a(x.to(dev_a)).to(dev_b)  # the activations cross devices, and the gradients back
            loss = torch.nn.functional.mse_loss(b(h), y.to(dev_b))
            loss.backward()
            opt.step()
            losses.append(loss.detach().cpu())
        return torch.stack(losses), [p.detach().cpu() for p in (*a.parameters(), *b.parameters())]

    waits = torch.ocl.host_wait_count()
    losses, params = run(D0, D1)
    ref_losses, ref_params = run("cpu", "cpu")
    assert torch.ocl.host_wait_count() - waits <= 6 + 10  # the .cpu() of each loss and parameter
    torch.testing.assert_close(losses, ref_losses, rtol=1e-4, atol=1e-5)
    for p, r in zip(params, ref_params, strict=True):
        torch.testing.assert_close(p, r, rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0]


def test_ops_mixing_devices_raise_like_the_cpu():
    a, b = torch.ones(3, device=D0), torch.ones(3, device=D1)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.add(a, b)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a @ b
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([a, b])
    assert torch.equal((a + b.to(D0)).cpu(), torch.full((3,), 2.0))  # still usable


def test_memory_stats_per_device():
    torch.ocl.synchronize(0)
    before0, before1 = torch.ocl.memory_allocated(0), torch.ocl.memory_allocated(1)
    t = torch.empty(1 << 20, device=D1)
    assert torch.ocl.memory_allocated(1) >= before1 + t.nbytes
    assert torch.ocl.memory_allocated(0) == before0
    assert torch.ocl.memory_stats(1)["allocated_bytes.all.current"] >= t.nbytes
    del t
    assert torch.ocl.memory_allocated(1) == before1
    assert torch.ocl.max_memory_allocated(1) >= before1 + (4 << 20)


def test_interop_buffers_land_on_their_contexts_device():
    cl = pytest.importorskip("pyopencl", reason="the interop case uses pyopencl")
    import numpy as np

    from torch_ocl import interop

    host = np.arange(8, dtype=np.float32)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    buf = cl.Buffer(interop.context(1), flags, hostbuf=host)
    t = interop.from_pyopencl(buf, dtype=torch.float32)
    assert t.device == D1 and t.tolist() == host.tolist()
    try:
        assert interop.handles(t).context == interop.context(1).int_ptr
        assert interop.context(1).int_ptr != interop.context(0).int_ptr
        with pytest.raises(RuntimeError, match="same device"):
            t @ torch.ones(8, device=D0)
        assert (t.to(D0) * 2).tolist() == (host * 2).tolist()
    finally:
        for device in range(2):
            for sid in range(17):
                torch.ops.ocl._interop_unshare_stream(device, sid)
