"""Tiny-op batching (csrc/ops/ElementwiseBatch.cpp): small contiguous float ops recorded into a
pending batch and run by one `elementwise_batch` launch. Results must be those of launching each
op on its own, whatever comes between recording and the launch: dependent chains longer than a
batch, more buffers than a batch holds, other kernels and copies, other streams and events,
memory released before the batch ran, threads, and no host waits added."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest
import torch
from ocl_testing import DEVICE, PYTHON, TOLERANCES, assert_ocl_close, make_cpu, on_simulator

BATCH_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
UNARY = (
    "neg",
    "abs",
    "relu",
    "sign",
    "ceil",
    "floor",
    "round",
    "trunc",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "reciprocal",
    "tanh",
    "sigmoid",
)
BINARY = {
    "add": lambda a, b, **kw: torch.add(a, b, alpha=0.75, **kw),
    "sub": lambda a, b, **kw: torch.sub(a, b, alpha=1.5, **kw),
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "threshold_backward": lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.25),
    "sigmoid_backward": torch.ops.aten.sigmoid_backward,
    "tanh_backward": torch.ops.aten.tanh_backward,
}
UNARY_SCALAR_PARAMS = {
    "clamp": lambda a: torch.clamp(a, -0.5, 0.75),
    "clamp_min": lambda a: torch.clamp(a, min=-0.25),
    "clamp_max": lambda a: torch.clamp(a, max=0.25),
    "threshold": lambda a: torch.nn.functional.threshold(a, 0.1, -2.0),
}


@pytest.fixture(autouse=True)
def _native_only():
    with torch.ocl.fallback_mode("error"):
        yield


def _special(t):
    """t with NaN, +Inf, -Inf, zeros and a negative zero in its first elements."""
    t = t.clone()
    vals = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0]
    t.view(-1)[: len(vals)] = torch.tensor(vals[: t.numel()], dtype=t.dtype)
    return t


def _batched(fn):
    """Runs fn and returns (result, ops recorded into batches meanwhile)."""
    before = torch.ocl.batch_stats()["ops"]
    out = fn()
    return out, torch.ocl.batch_stats()["ops"] - before


def _ref(fn, *cpu):
    """fn on float64 copies, rounded to the inputs' dtype."""
    return fn(*[c.double() for c in cpu]).to(cpu[0].dtype)


@pytest.mark.parametrize("dtype", BATCH_DTYPES, ids=str)
@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("n", [1, 37])
def test_unary_ops_batched(op, dtype, n):
    x = _special(make_cpu((n,), dtype, seed=3))
    fn = getattr(torch, op)
    out, recorded = _batched(lambda: fn(x.to(DEVICE)))
    assert recorded == 1
    assert_ocl_close(out, _ref(fn, x))


@pytest.mark.parametrize("dtype", BATCH_DTYPES, ids=str)
@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("n", [1, 37])
def test_binary_ops_batched(op, dtype, n):
    fn = BINARY[op]
    a = _special(make_cpu((n,), dtype, seed=4))
    b = make_cpu((n,), dtype, seed=5, nonzero=True).flip(0)
    if op in ("sigmoid_backward", "tanh_backward"):
        b = b / 4  # the saved output of sigmoid / tanh
    out, recorded = _batched(lambda: fn(a.to(DEVICE), b.to(DEVICE)))
    assert recorded == 1
    assert_ocl_close(out, _ref(fn, a, b))


@pytest.mark.parametrize("dtype", BATCH_DTYPES, ids=str)
def test_dependent_chain_longer_than_a_batch(dtype):
    """Each op reads the previous op's output: 60 ops cross several batch boundaries."""
    xs = [make_cpu((33,), dtype, seed=s, low=-1, high=1) for s in range(20)]
    dev = [x.to(DEVICE) for x in xs]

    def chain(ts):
        acc = ts[0]
        for t in ts[1:]:
            acc = torch.tanh(acc * t + acc)
        return acc

    stats = torch.ocl.batch_stats()
    out = chain(dev)
    after = torch.ocl.batch_stats()
    assert after["ops"] - stats["ops"] == 3 * 19
    assert after["launches"] - stats["launches"] < 3 * 19
    expected = chain([x.double() for x in xs]).to(dtype)
    rtol, atol = TOLERANCES[dtype]
    assert_ocl_close(out, expected, rtol=rtol * 20, atol=atol * 20)


def test_more_buffers_than_a_batch_holds():
    """Operands in 12 separate device buffers (slices of large tensors, at non-zero offsets):
    the batch is enqueued when its buffer slots run out."""
    bigs_cpu = [make_cpu((300_000,), torch.float32, seed=s) for s in range(12)]
    bigs = [b.to(DEVICE) for b in bigs_cpu]
    outs, refs = [], []
    for i in range(11):
        lo = 1000 + 7 * i
        outs.append(bigs[i][lo : lo + 50] * bigs[i + 1][lo + 3 : lo + 53])
        refs.append(bigs_cpu[i][lo : lo + 50] * bigs_cpu[i + 1][lo + 3 : lo + 53])
    for o, r in zip(outs, refs, strict=True):
        assert_ocl_close(o, r)


def test_interleaved_with_other_kernels_copies_and_in_place_ops():
    a_cpu = make_cpu((16, 16), torch.float32, seed=1)
    b_cpu = make_cpu((16, 16), torch.float32, seed=2)
    a, b = a_cpu.to(DEVICE), b_cpu.to(DEVICE)

    def steps(a, b):
        c = a + b  # batched
        d = c @ b  # mm: its own kernel, reads c
        e = torch.relu(d) - a  # batched, reads the mm's output
        e.mul_(2.0)  # in-place (not batched), after e
        f = e.sum(dim=0)  # reduction
        g = torch.exp(f / 100)  # f / 100 is not batched (a scalar operand), exp is
        h = g.clone()  # a device copy
        return torch.sigmoid(h) * g

    expected = steps(a_cpu.double(), b_cpu.double()).float()
    assert_ocl_close(steps(a, b), expected, rtol=1e-4, atol=1e-5)


def test_host_to_device_copy_after_a_pending_batch():
    x_cpu = make_cpu((20,), torch.float32, seed=7)
    x = x_cpu.to(DEVICE)
    y = x + x  # pending
    y.copy_(make_cpu((20,), torch.float32, seed=8))  # must land after the add
    assert_ocl_close(y, make_cpu((20,), torch.float32, seed=8), exact=True)
    z = x * x  # pending, then read back
    assert_ocl_close(z, x_cpu * x_cpu, exact=True)


def test_streams_and_events():
    a_cpu = make_cpu((40,), torch.float32, seed=9)
    a = a_cpu.to(DEVICE)
    torch.ocl.synchronize()
    s = torch.ocl.Stream()
    with torch.ocl.stream(s):
        b = a * a  # pending on s
        c = b + a
        ev = torch.ocl.Event()
        ev.record(s)  # enqueues the batch before the marker
    torch.ocl.current_stream().wait_event(ev)
    d = torch.neg(c)  # default stream, after the event
    assert_ocl_close(d, -(a_cpu * a_cpu + a_cpu), exact=True)
    with torch.ocl.stream(s):
        e = torch.exp(a)  # pending on s
    deadline = time.monotonic() + 60  # query() enqueues the batch, so the stream drains
    while not s.query() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert s.query()
    assert_ocl_close(e, torch.exp(a_cpu.double()).float())


def test_synchronize_runs_pending_batches_of_every_stream():
    a_cpu = make_cpu((25,), torch.float32, seed=10)
    a = a_cpu.to(DEVICE)
    streams = [torch.ocl.Stream() for _ in range(3)]
    outs = []
    for s in streams:
        with torch.ocl.stream(s):
            outs.append(torch.tanh(a) + a)
    torch.ocl.synchronize()
    for s in streams:
        assert s.query()
    for o in outs:
        assert_ocl_close(o, (torch.tanh(a_cpu.double()) + a_cpu).float())


def test_memory_released_before_the_batch_runs():
    """Inputs freed and their buffers returned to the driver (empty_cache) while the op that
    reads them is still pending: the batch is enqueued before any buffer is released."""
    x_cpu = make_cpu((500_000,), torch.float32, seed=11)
    y_cpu = make_cpu((500_000,), torch.float32, seed=12)
    x, y = x_cpu.to(DEVICE), y_cpu.to(DEVICE)
    out = x[123:223] - y[5:105]
    del x, y
    torch.ocl.empty_cache()
    assert_ocl_close(out, x_cpu[123:223] - y_cpu[5:105], exact=True)


def test_no_host_waits():
    a = make_cpu((64,), torch.float32, seed=13).to(DEVICE)
    torch.ocl.synchronize()
    waits = torch.ocl.host_wait_count()
    with torch.ocl.sync_debug_mode("error"):
        for _ in range(100):
            a = torch.sigmoid(a * a + a)
    assert torch.ocl.host_wait_count() == waits
    assert torch.isfinite(a.cpu()).all()


@pytest.mark.skipif(
    on_simulator(),
    reason="Oclgrind 21.10 mixes up kernel arguments set and enqueued under a lock by several host "
    "threads (reproduced with pyopencl alone, without torch-ocl); fails with TORCH_OCL_BATCH=0 too",
)
def test_threads_with_their_own_streams():
    results, errors = {}, []

    def work(i):
        try:
            x_cpu = make_cpu((29,), torch.float32, seed=20 + i)
            s = torch.ocl.Stream()
            with torch.ocl.stream(s):
                x = x_cpu.to(DEVICE)
                for _ in range(50):
                    x = torch.tanh(x + x)
                results[i] = (x.cpu(), x_cpu)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for got, x_cpu in results.values():
        ref = x_cpu.double()
        for _ in range(50):
            ref = torch.tanh(ref + ref)
        torch.testing.assert_close(got, ref.float(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", [4096 * 4, 300_000])
def test_large_ops_are_not_batched(n):
    x_cpu = make_cpu((n,), torch.float32, seed=14)
    x = x_cpu.to(DEVICE)
    out, recorded = _batched(lambda: x * x)
    assert recorded == 0
    assert_ocl_close(out, x_cpu * x_cpu, exact=True)


def test_non_float_and_strided_ops_are_not_batched():
    i = make_cpu((30,), torch.int32, seed=15).to(DEVICE)
    f = make_cpu((6, 5), torch.float32, seed=16).to(DEVICE)
    g = make_cpu((6, 10), torch.float32, seed=17).to(DEVICE)
    _, recorded = _batched(
        lambda: (i + i, i * 2, g[:, ::2] + g[:, ::2], f + f[0], f + f.t().t()[0])
    )
    assert recorded == 0


def test_dense_permuted_ops_are_batched():
    # A transposed contiguous tensor is dense: the iterator walks it in memory order, so the
    # batch takes it, and the result keeps the input's layout as on the CPU.
    f_cpu = make_cpu((6, 5), torch.float32, seed=16)
    f = f_cpu.to(DEVICE)
    (s, m), recorded = _batched(lambda: (f.t() + f.t(), f.t().clone().mul_(2)))
    assert recorded == 2
    assert s.stride() == (f_cpu.t() + f_cpu.t()).stride()
    assert_ocl_close(s, f_cpu.t() + f_cpu.t(), exact=True)
    assert_ocl_close(m, f_cpu.t() * 2, exact=True)


SCALARS = (2, -0.5, 1e39, -1e39, float("inf"), float("nan"), True)
SCALAR_OPS = {
    "add": lambda a, s: a + s,
    "radd": lambda a, s: s + a,
    "sub": lambda a, s: torch.sub(a, s, alpha=2),
    "rsub": lambda a, s: s - a,
    "mul": lambda a, s: a * s,
    "div": lambda a, s: a / s,
}


@pytest.mark.parametrize("dtype", BATCH_DTYPES, ids=str)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("op", sorted(SCALAR_OPS))
def test_scalar_operands_batched(op, scalar, dtype):
    """A Python number or 0-dim CPU tensor as the second operand: the result keeps the tensor's
    dtype, the number is rounded to float like on the CPU (beyond float's range: +-inf).
    `s - a` (rsub) runs as its own kernel: checked for its result only."""
    fn = SCALAR_OPS[op]
    x = _special(make_cpu((23,), dtype, seed=17))
    try:
        expected = fn(x, scalar)
    except RuntimeError as e:  # e.g. subtracting a bool: the same error on the device
        with pytest.raises(RuntimeError, match=str(e)[:30]):
            fn(x.to(DEVICE), scalar)
        return
    out, recorded = _batched(lambda: fn(x.to(DEVICE), scalar))
    assert recorded == (0 if op == "rsub" else 1)
    assert_ocl_close(out, expected)


def test_zero_dim_cpu_tensor_operand_batched():
    x = make_cpu((19,), torch.float32, seed=18)
    s = torch.tensor(0.1, dtype=torch.float64)  # a 0-dim tensor does not promote float32
    out, recorded = _batched(lambda: x.to(DEVICE) * s)
    assert recorded == 1 and out.dtype == torch.float32
    assert_ocl_close(out, x * s)


@pytest.mark.parametrize("dtype", BATCH_DTYPES, ids=str)
@pytest.mark.parametrize("op", sorted(UNARY_SCALAR_PARAMS))
def test_ops_with_scalar_parameters_batched(op, dtype):
    x = _special(make_cpu((29,), dtype, seed=23))
    out, recorded = _batched(lambda: UNARY_SCALAR_PARAMS[op](x.to(DEVICE)))
    assert recorded == 1
    assert_ocl_close(out, UNARY_SCALAR_PARAMS[op](x.double()).to(dtype))


@pytest.mark.parametrize("dtype", BATCH_DTYPES, ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_out_variants_batched(op, dtype):
    # out= goes through the same table and kernel as the functional variant, batch included.
    x = make_cpu((33,), dtype, seed=21)
    y = make_cpu((33,), dtype, seed=22, nonzero=True)
    xd, yd = x.to(DEVICE), y.to(DEVICE)
    out = torch.empty(33, dtype=dtype, device=DEVICE)
    result, recorded = _batched(lambda: BINARY[op](xd, yd, out=out))
    assert recorded == 1
    assert result is out
    assert_ocl_close(out, _ref(BINARY[op], x, y))


@pytest.mark.parametrize("dtype", BATCH_DTYPES, ids=str)
def test_in_place_ops_batched(dtype):
    x = _special(make_cpu((31,), dtype, seed=19))
    y = make_cpu((31,), dtype, seed=20, nonzero=True)

    def steps(a, b):
        a = a.clone()
        a.add_(b, alpha=0.5)
        a.mul_(3)
        a.sub_(b)
        a.div_(b)
        a.relu_()
        a.sqrt_()
        a.neg_()
        a.mul_(a)  # both operands the output itself
        return a

    xd, yd = x.to(DEVICE), y.to(DEVICE)
    out, recorded = _batched(lambda: steps(xd, yd))
    assert recorded == 8
    expected = steps(x.double(), y.double()).to(dtype)
    assert_ocl_close(out, expected)


def test_in_place_on_partly_overlapping_memory_still_raises():
    x = make_cpu((40,), torch.float32, seed=21).to(DEVICE)
    with pytest.raises(RuntimeError, match="single memory location"):
        x[1:].add_(x[:-1])


def test_in_place_keeps_autograd_version_counter():
    x = make_cpu((12,), torch.float32, seed=22).to(DEVICE).requires_grad_()
    y = x * 1.0
    z = y.sigmoid()
    z.mul_(2)  # sigmoid's backward needs its output: autograd must see the change
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_batching_can_be_turned_off(subprocess_env):
    code = (
        "import torch, torch_ocl\n"
        "x = torch.linspace(-2, 2, 10)\n"
        "b = (x.to('ocl') + x.to('ocl')).neg()\n"
        "assert torch.equal(b.cpu(), -(x + x))\n"
        "print(torch.ocl.batch_stats())\n"
    )
    env = dict(subprocess_env, TORCH_OCL_BATCH="0")
    out = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "{'ops': 0, 'launches': 0, 'short_route': 0}" in out.stdout
