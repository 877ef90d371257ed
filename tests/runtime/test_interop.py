"""torch_ocl.interop: pyopencl kernels on ocl tensors without copies, pyopencl buffers as tensors,
stream ordering between torch's work and the user's, DLPack (kDLOpenCL), lifetimes, errors."""

from __future__ import annotations

import gc
import importlib.util
import pathlib
import sys

import numpy as np
import pytest
import torch

from torch_ocl import interop

cl = pytest.importorskip("pyopencl", reason="the interop tests use pyopencl")
import pyopencl.array  # noqa: E402, F401  (cl.array)
import pyopencl.tools  # noqa: E402, F401  (cl.tools)

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "custom_kernel.py"

# Adds `value` to n elements of a float buffer at an element offset and stride.
SOURCE = """
__kernel void add_strided(__global float* a, ulong off, ulong stride, uint n, float value) {
  const uint i = get_global_id(0);
  if (i < n) a[off + i * stride] += value;
}
"""


class _Kernels:
    def __init__(self, program):
        self.add_strided = cl.Kernel(program, "add_strided")


@pytest.fixture(scope="module")
def program():
    """The test kernels, built in the current device's context (each retrieved once)."""
    return _Kernels(cl.Program(interop.context(), SOURCE).build())


@pytest.fixture(autouse=True)
def _unshare_streams():
    """Handing a stream's queue out stops tiny-op batching on it for the rest of the process;
    undo that after each test so that other tests in this worker see the usual runtime."""
    yield
    torch.ocl.synchronize()
    dev = torch.ocl.current_device()
    for sid in range(17):
        torch.ops.ocl._interop_unshare_stream(dev, sid)


def _add(program, t: torch.Tensor, value: float, queue=None) -> None:
    """The pyopencl kernel on t's memory in place, through as_pyopencl_array (buffer + offset)."""
    a = interop.as_pyopencl_array(t)
    assert t.dim() == 1
    n = t.numel()
    program.add_strided(
        queue or interop.queue(),
        (max(n, 1),),
        None,
        a.base_data,
        np.uint64(a.offset // 4),
        np.uint64(t.stride(0)),
        np.uint32(n),
        np.float32(value),
    )


def test_handles_describe_the_tensor():
    base = torch.arange(40, dtype=torch.float32, device="ocl")
    view = base[3:30:2]
    h, hv = interop.handles(base), interop.handles(view)
    assert h.mem == hv.mem and h.device == hv.device == base.device.index
    assert hv.offset == h.offset + 3 * 4
    assert h.nbytes == 160 and hv.nbytes == (2 * 13 + 1) * 4
    assert h.context == interop.context().int_ptr
    assert h.queue == interop.queue().int_ptr
    with pytest.raises(ValueError, match="expected an ocl tensor"):
        interop.handles(torch.ones(2))
    with pytest.raises(RuntimeError, match="empty"):
        interop.handles(torch.empty(0, device="ocl"))


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_pyopencl_kernel_writes_what_torch_reads(program, n):
    t = torch.arange(n, dtype=torch.float32, device="ocl")
    _add(program, t, 2.5)
    assert torch.equal(t.cpu(), torch.arange(n, dtype=torch.float32) + 2.5)


def test_non_contiguous_view_with_offset(program):
    base = torch.zeros(50, device="ocl")
    view = base[5::3]  # offset 5, stride 3
    _add(program, view, 1.0)
    expected = torch.zeros(50)
    expected[5::3] += 1
    assert torch.equal(base.cpu(), expected)
    a = interop.as_pyopencl_array(base.view(5, 10)[:, 1:4])
    assert a.shape == (5, 3) and a.strides == (40, 4)
    assert a.offset == interop.handles(base).offset + 4 and not a.flags.forc
    rows = interop.as_pyopencl_array(base.view(5, 10)[2:4])  # contiguous, with an offset
    assert np.array_equal(rows.get(), expected.view(5, 10)[2:4].numpy())


def test_torch_writes_what_pyopencl_reads():
    t = torch.randn(33, 3, device="ocl")
    t.mul_(2)
    got = interop.as_pyopencl_array(t).get()  # a pyopencl read on torch's queue
    assert np.array_equal(got, t.cpu().numpy())
    buf = interop.as_pyopencl_buffer(t)
    assert buf.size == t.nbytes
    host = np.empty((33, 3), np.float32)
    cl.enqueue_copy(interop.queue(), host, buf)
    assert np.array_equal(host, t.cpu().numpy())


def test_pyopencl_buffer_writes_land_in_the_tensor():
    t = torch.zeros(64, device="ocl")
    align = interop.context().devices[0].mem_base_addr_align // 8  # bytes
    skip = align // 4 if align < 256 else 0  # a view that starts at the next aligned byte
    sub = interop.as_pyopencl_buffer(t[skip:])
    src = np.arange(64 - skip, dtype=np.float32)
    cl.enqueue_copy(interop.queue(), sub, src)
    assert torch.equal(t.cpu(), torch.cat([torch.zeros(skip), torch.from_numpy(src)]))


def test_unaligned_view_has_no_sub_buffer():
    t = torch.zeros(64, device="ocl")
    with pytest.raises(ValueError, match="alignment"):
        interop.as_pyopencl_buffer(t[1:])


def test_pending_torch_batch_runs_before_the_pyopencl_kernel(program):
    t = torch.zeros(100, device="ocl")
    before = torch.ocl.batch_stats()["ops"]
    t.add_(1)  # a tiny op: recorded into a batch, not yet enqueued
    t.mul_(3)
    assert torch.ocl.batch_stats()["ops"] > before, "the tiny ops were not batched"
    _add(program, t, 0.5)  # taking the queue enqueues the batch first
    t.mul_(2)  # torch's next op runs after the kernel
    assert torch.equal(t.cpu(), torch.full((100,), 7.0))


def test_a_kept_queue_still_sees_later_torch_work(program):
    q = interop.queue()  # kept across torch ops
    t = torch.zeros(100, device="ocl")
    t.add_(1)  # a shared stream holds nothing back
    _add(program, t, 1.0, queue=q)
    assert torch.equal(t.cpu(), torch.full((100,), 2.0))
    assert q.int_ptr == interop.queue().int_ptr


def test_handing_out_the_queue_adds_no_host_wait(program):
    t = torch.ones(10, device="ocl")
    waits = torch.ocl.host_wait_count()
    interop.handles(t)
    interop.queue()
    _add(program, t, 1.0)
    assert torch.ocl.host_wait_count() == waits


def test_own_queue_ordered_by_events(program):
    ctx = interop.context()
    own = cl.CommandQueue(ctx)
    t = torch.zeros(10000, device="ocl")
    t.add_(1)
    ready = interop.record_event()  # torch's work so far
    a = interop.as_pyopencl_array(t)
    ev = program.add_strided(
        own,
        (10000,),
        None,
        a.base_data,
        np.uint64(a.offset // 4),
        np.uint64(1),
        np.uint32(10000),
        np.float32(1.0),
        wait_for=[ready],
    )
    interop.wait_event(ev)  # torch's next op waits for the user's kernel
    t.mul_(5)
    assert torch.equal(t.cpu(), torch.full((10000,), 10.0))
    own.finish()


def test_from_pyopencl_buffer_shares_memory():
    ctx = interop.context()
    q = interop.queue()
    host = np.arange(20, dtype=np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    t = interop.from_pyopencl(buf, dtype=torch.float32, shape=(4, 5))
    assert t.device == torch.device("ocl", 0) and t.shape == (4, 5)
    assert torch.equal(t.cpu(), torch.from_numpy(host).view(4, 5))
    t.mul_(2)  # torch writes, pyopencl reads on the same queue
    back = np.empty(20, np.float32)
    cl.enqueue_copy(q, back, buf)
    assert np.array_equal(back, host * 2)
    assert torch.equal(
        interop.from_pyopencl(buf).cpu(), torch.from_numpy((host * 2).view(np.uint8))
    )


def test_from_pyopencl_array_with_offset_and_strides():
    q = interop.queue()
    host = np.arange(60, dtype=np.float32).reshape(6, 10)
    arr = cl.array.to_device(q, host)
    view = arr[1:5]  # a byte offset
    t = interop.from_pyopencl(view)
    assert t.shape == (4, 10) and t.storage_offset() == 10
    assert torch.equal(t.cpu(), torch.from_numpy(host[1:5]))
    strided = interop.from_pyopencl(arr[:, ::3])
    assert strided.stride() == (10, 3)
    assert torch.equal(strided.cpu(), torch.from_numpy(np.ascontiguousarray(host[:, ::3])))
    i64 = interop.from_pyopencl(cl.array.to_device(q, np.array([5, -7], np.int64)))
    assert i64.dtype == torch.int64 and i64.tolist() == [5, -7]


def test_foreign_context_is_refused_and_the_process_stays_usable():
    dev = interop.context().devices[0]
    foreign = cl.Context([dev])  # the same device, another context
    buf = cl.Buffer(foreign, cl.mem_flags.READ_WRITE, 64)
    with pytest.raises(RuntimeError, match="not one of torch-ocl's"):
        interop.from_pyopencl(buf, dtype=torch.float32)
    assert not interop._owners  # nothing kept for the refused buffer
    assert (torch.ones(3, device="ocl") * 2).tolist() == [2.0, 2.0, 2.0]


def test_bad_input_errors():
    with pytest.raises(TypeError, match="expected a pyopencl.Buffer"):
        interop.from_pyopencl(np.zeros(3))
    buf = cl.Buffer(interop.context(), cl.mem_flags.READ_WRITE, 64)
    with pytest.raises(RuntimeError, match="reach beyond"):
        interop.from_pyopencl(buf, dtype=torch.float32, shape=(17,))
    with pytest.raises(TypeError, match="bfloat16"):
        interop.as_pyopencl_array(torch.ones(2, dtype=torch.bfloat16, device="ocl"))


def test_tensor_keeps_the_pyopencl_object_alive_and_lets_it_go():
    gc.collect()  # garbage of earlier tests in this worker is freed now, not during the test
    allocated = torch.ocl.memory_allocated()
    count = torch.ops.ocl._interop_external_count()
    pool = cl.tools.MemoryPool(cl.tools.ImmediateAllocator(interop.queue()))
    arr = cl.array.to_device(interop.queue(), np.full(256, 3.0, np.float32), allocator=pool)
    ptr = arr.base_data.int_ptr
    t = interop.from_pyopencl(arr)
    view = t[10:20]
    del arr, t
    gc.collect()
    # the pool must not hand the memory out again while a tensor lives in it
    other = cl.array.empty(interop.queue(), 256, np.float32, allocator=pool)
    assert other.base_data.int_ptr != ptr
    assert torch.equal(view.cpu(), torch.full((10,), 3.0))
    assert torch.ops.ocl._interop_external_count() == count + 1
    del view
    gc.collect()
    assert torch.ops.ocl._interop_external_count() == count
    assert not interop._owners
    again = cl.array.empty(interop.queue(), 256, np.float32, allocator=pool)
    assert again.base_data.int_ptr == ptr  # released to the pool once the tensor was freed
    assert torch.ocl.memory_allocated() == allocated  # not the caching allocator's memory


def test_pyopencl_buffer_outlives_the_tensor():
    t = torch.arange(256, dtype=torch.float32, device="ocl")
    buf = interop.as_pyopencl_buffer(t)
    del t
    torch.ocl.synchronize()
    torch.ocl.empty_cache()  # the segment goes back to the driver; the retained buffer stays valid
    host = np.empty(256, np.float32)
    cl.enqueue_copy(interop.queue(), host, buf)  # valid memory (its contents are no longer ours)


def test_dlpack_round_trip_shares_memory():
    t = torch.arange(24, dtype=torch.float32, device="ocl").view(4, 6)[:, 1:4]
    capsule = interop.to_dlpack(t)
    u = interop.from_dlpack(capsule)
    assert u.shape == t.shape and u.stride() == t.stride() and u.dtype == t.dtype
    assert interop.handles(u).mem == interop.handles(t).mem
    assert interop.handles(u).offset == interop.handles(t).offset
    u.add_(100)  # the same memory
    assert torch.equal(t.cpu(), torch.arange(24.0).view(4, 6)[:, 1:4] + 100)
    with pytest.raises(ValueError, match="unconsumed"):
        interop.from_dlpack(capsule)  # a capsule is consumed once
    assert len(interop._exports) == 1
    del u
    gc.collect()
    assert not interop._exports  # the producer's deleter ran when the consumer let go
    unconsumed = interop.to_dlpack(t)
    del unconsumed
    gc.collect()
    assert not interop._exports  # an unconsumed capsule lets go of its tensor too


def test_torch_dlpack_export_of_an_ocl_tensor_is_refused():
    t = torch.ones(3, device="ocl")
    with pytest.raises((RuntimeError, BufferError, TypeError), match="torch_ocl.interop"):
        torch.utils.dlpack.to_dlpack(t)
    with pytest.raises((RuntimeError, BufferError, TypeError), match="torch_ocl.interop"):
        t.__dlpack__()


_EXAMPLE_MODULE = []


def _example():
    """examples/custom_kernel.py, imported once (its ops can be registered only once)."""
    if _EXAMPLE_MODULE:
        return _EXAMPLE_MODULE[0]
    spec = importlib.util.spec_from_file_location("custom_kernel_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _EXAMPLE_MODULE.append(module)
    return module


def test_custom_op_forward_and_backward_match_the_cpu():
    example = _example()
    x = torch.randn(7, 13, dtype=torch.float64)
    x_ocl = x.float().to("ocl").requires_grad_()
    x_cpu = x.clone().requires_grad_()
    y = example.silu(x_ocl)
    ref = torch.nn.functional.silu(x_cpu)
    g = torch.randn(7, 13, dtype=torch.float64)
    y.backward(g.float().to("ocl"))
    ref.backward(g)
    torch.testing.assert_close(y.detach().cpu().double(), ref.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(x_ocl.grad.cpu().double(), x_cpu.grad, rtol=1e-5, atol=1e-6)
    # non-contiguous input and an empty one
    xt = torch.randn(9, 4).to("ocl").t()
    assert torch.allclose(example.silu(xt).cpu(), torch.nn.functional.silu(xt.cpu()), atol=1e-6)
    assert example.silu(torch.empty(0, 3, device="ocl")).shape == (0, 3)
    with pytest.raises(TypeError, match="ocl float32"):
        example.silu(torch.ones(2))


def test_custom_op_trains_like_the_builtin_on_the_cpu():
    example = _example()
    torch.manual_seed(0)
    init = example.MLP(torch.nn.functional.silu).state_dict()
    ref_losses, ref_state = example.train("cpu", torch.nn.functional.silu, 8, init)
    losses, state = example.train("ocl", example.silu, 8, init)
    torch.testing.assert_close(losses, ref_losses, rtol=1e-4, atol=1e-5)
    for k in state:
        torch.testing.assert_close(state[k], ref_state[k], rtol=1e-4, atol=1e-5)


def test_empty_pyopencl_array_gives_an_empty_tensor_on_its_device():
    arr = cl.array.empty(interop.queue(), (0, 4), np.float32)
    t = interop.from_pyopencl(arr)
    assert t.shape == (0, 4) and t.dtype == torch.float32 and t.device.type == "ocl"


def test_a_queue_of_your_own_for_the_array_view(program):
    own = cl.CommandQueue(interop.context())
    t = torch.arange(6, dtype=torch.float32, device="ocl")
    torch.ocl.synchronize()  # the only order between torch's queue and this one here
    a = interop.as_pyopencl_array(t, command_queue=own)
    assert a.queue.int_ptr == own.int_ptr
    assert np.array_equal(a.get(), np.arange(6, dtype=np.float32))


def test_custom_op_passes_opcheck():
    example = _example()
    x = torch.randn(5, 7, device="ocl", requires_grad=True)
    # opcheck's test_autograd_registration supports only CPU/CUDA/XPU tensors (PyTorch's "NYI");
    # the backward is checked against the CPU above instead.
    checks = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
    grad = torch.randn(5, 7, device="ocl")
    for op, args in ((example.silu, (x,)), (example.silu_backward, (grad, x.detach()))):
        result = torch.library.opcheck(op, args, test_utils=checks)
        assert all(v == "SUCCESS" for v in result.values()), result


def test_without_pyopencl_the_handles_still_work(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyopencl", None)  # `import pyopencl` now fails
    t = torch.ones(4, device="ocl")
    with pytest.raises(ImportError, match="pip install pyopencl"):
        interop.as_pyopencl_array(t)
    h = interop.handles(t)
    assert h.mem and h.context and h.queue
    u = interop.from_dlpack(interop.to_dlpack(t))
    assert u.tolist() == [1.0] * 4
