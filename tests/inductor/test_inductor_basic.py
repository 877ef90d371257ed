"""torch.compile's default backend (Inductor) on ocl: generated OpenCL C kernels against eager
PyTorch on the CPU (float64 where rounding matters).

Inductor compiles slowly (seconds per graph on a busy CPU), so each compiled function is made
once per module (``compiled``) and serves several inputs; ``torch._dynamo`` is reset only where
a test counts compilations.
"""

from __future__ import annotations

import copy
import functools

import pytest
import torch
from ocl_testing import DEVICE
from torch._dynamo.utils import counters
from torch._inductor.utils import run_and_get_code

from torch_ocl._inductor.runtime import launch_count


@functools.cache
def compiled(fn, **options):
    return torch.compile(fn, **options)


def launches(fn, *args):
    """fn(*args) and the number of generated kernels it launched."""
    before = launch_count()
    out = fn(*args)
    return out, launch_count() - before


def close(actual, expected, **tol):
    torch.testing.assert_close(actual.cpu(), expected, check_dtype=True, equal_nan=True, **tol)


def chain(a, b):
    return ((a * 2 + 1).sin().relu() * b).exp() - a


def test_pointwise_chain_is_one_kernel():
    a = torch.randn(37, 29, dtype=torch.float64)
    b = torch.randn(37, 29, dtype=torch.float64)
    fn = compiled(chain)
    fn(a.float().to(DEVICE), b.float().to(DEVICE))  # compile
    out, n = launches(fn, a.float().to(DEVICE), b.float().to(DEVICE))
    assert n == 1  # six pointwise ops fused into one generated kernel
    close(out, chain(a, b).float(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda a, b: (a.t(), b.t()), id="transposed"),
        pytest.param(lambda a, b: (a[1:, ::2], b[:-1, 1::2]), id="sliced"),
        pytest.param(lambda a, b: (a[3:4], b[0:1]), id="one-row"),
        pytest.param(lambda a, b: (a[:0], b[:0]), id="empty"),
    ],
)
def test_pointwise_non_contiguous(make):
    a = torch.randn(9, 16, dtype=torch.float64)
    b = torch.randn(9, 16, dtype=torch.float64)
    ca, cb = make(a, b)
    oa, ob = make(a.float().to(DEVICE), b.float().to(DEVICE))
    close(compiled(chain)(oa, ob), chain(ca, cb).float(), rtol=1e-5, atol=1e-5)


def broadcast(a, b, c):
    return torch.where(a > 0, a * b, c - b) / (1 + c.abs())


def test_broadcasting():
    a = torch.randn(5, 1, 7, dtype=torch.float64)
    b = torch.randn(3, 1, dtype=torch.float64)
    c = torch.randn(7, dtype=torch.float64)
    args = [t.float().to(DEVICE) for t in (a, b, c)]
    close(compiled(broadcast)(*args), broadcast(a, b, c).float(), rtol=1e-5, atol=1e-6)


def mixed(h, i, m):
    x = h * 3 - 1  # float16, computed in float
    y = i // 3 + i % 5 - (i * 7 >> 1)  # int64: floor division and modulo of negatives
    return x.sigmoid().half(), torch.where(m, y, -y), m & (i > 0), (x > 0).logical_xor(m)


def test_dtypes_float16_int64_bool():
    h = torch.randn(33, 10).half()
    i = torch.randint(-50, 50, (33, 10))
    m = torch.rand(33, 10) > 0.5
    out = compiled(mixed)(h.to(DEVICE), i.to(DEVICE), m.to(DEVICE))
    exp = mixed(h.float(), i, m)
    close(out[0], exp[0].half(), rtol=2e-3, atol=2e-3)
    for o, e in zip(out[1:], exp[1:], strict=True):
        close(o, e)


def reductions(x):
    return x.sum(1), x.amax(1), x.argmax(1), torch.var_mean(x, 1), x.softmax(1)


@pytest.mark.parametrize("shape", [(7, 300), (1, 5), (3, 1), (65, 513)])
def test_reductions(shape):
    x = torch.randn(shape, dtype=torch.float64)
    out = compiled(reductions)(x.float().to(DEVICE))
    exp = reductions(x)
    flat_out = [out[0], out[1], out[2], *out[3], out[4]]
    flat_exp = [exp[0], exp[1], exp[2], *exp[3], exp[4]]
    for o, e in zip(flat_out, flat_exp, strict=True):
        if e.dtype == torch.int64:
            close(o, e)
        else:
            close(o, e.float(), rtol=1e-4, atol=1e-5)


def test_max_and_argmax_see_nan_first():
    x = torch.randn(4, 300)
    x[1, 17] = x[1, 250] = float("nan")
    x[2, 3] = float("inf")
    out = compiled(reductions)(x.to(DEVICE))
    torch.testing.assert_close(out[1].cpu(), x.amax(1), equal_nan=True)
    torch.testing.assert_close(out[2].cpu(), x.argmax(1))


def scaled(x):
    return (x * 2).tanh() + x.mean()


def test_dynamic_shapes_compile_once():
    torch._dynamo.reset()
    counters.clear()
    fn = torch.compile(scaled, dynamic=True)
    for n in (5, 17, 100):
        x = torch.randn(n, 3, dtype=torch.float64)
        close(fn(x.float().to(DEVICE)), scaled(x).float(), rtol=1e-5, atol=1e-5)
    assert counters["stats"]["unique_graphs"] == 1


def test_mark_dynamic_batch_compiles_once():
    torch._dynamo.reset()
    counters.clear()
    fn = torch.compile(scaled)
    for batch in (4, 9, 33):
        x = torch.randn(batch, 6, dtype=torch.float64)
        xo = x.float().to(DEVICE)
        torch._dynamo.mark_dynamic(xo, 0)
        close(fn(xo), scaled(x).float(), rtol=1e-5, atol=1e-5)
    assert counters["stats"]["unique_graphs"] == 1


def test_fx_graph_cache_key_covers_the_generator():
    # Inductor's FX graph cache keys on the backend pass's uuid: it carries a digest of the
    # code generator's sources, so wrapper code cached by another torch-ocl is never reused.
    from torch._inductor.codegen.common import custom_backend_passes, init_backend_registration

    init_backend_registration()
    uuid = custom_backend_passes["ocl"].uuid()
    assert uuid.startswith("torch_ocl.CpuScalarsToDevice.v1:") and len(uuid.split(":")[1]) == 64


def test_generated_source_is_visible():
    a = torch.randn(8, 8, device=DEVICE)
    torch._dynamo.reset()
    _, (code, *_) = run_and_get_code(torch.compile(chain), a, a)
    assert "compile_ocl_kernel(r'''" in code
    assert "__kernel void ocl_kernel_0(" in code
    assert "sin(" in code and "exp(" in code


def test_extern_matmul_and_fused_epilogue():
    def fn(a, b, c):
        return torch.relu(a @ b + c) * 2

    a, b, c = (torch.randn(s, dtype=torch.float64) for s in ((13, 7), (7, 5), (5,)))
    out = compiled(fn)(*(t.float().to(DEVICE) for t in (a, b, c)))
    close(out, fn(a, b, c).float(), rtol=1e-4, atol=1e-5)


def test_cpu_scalar_tensor_operands():
    # A 0-dim CPU tensor mixed with ocl tensors, first or second: eager runs the op on ocl, and
    # so must the compiled graph (Inductor would otherwise make a CPU kernel of it).
    def fn(s, x):
        return s * x + x / s

    s = torch.tensor(2.5, dtype=torch.float64)
    x = torch.randn(6, 4, dtype=torch.float64)
    out = compiled(fn)(s.float(), x.float().to(DEVICE))
    assert out.device.type == "ocl"
    close(out, fn(s, x).float(), rtol=1e-5, atol=1e-6)


def test_embedding_forward_and_backward():
    # The backward accumulates rows of repeated indices with atomic float adds.
    emb = torch.nn.Embedding(10, 3)
    idx = torch.tensor([[1, 2, 9], [0, 0, 5], [1, 1, 1]])
    dev = copy.deepcopy(emb).to(DEVICE)
    out = compiled(lambda i: (dev(i) ** 2).sum())(idx.to(DEVICE))
    out.backward()
    expected = (emb(idx) ** 2).sum()
    expected.backward()
    close(out, expected.detach(), rtol=1e-5, atol=1e-5)
    close(dev.weight.grad, emb.weight.grad, rtol=1e-5, atol=1e-6)


def accumulate(x, i, v):
    return x.index_put((i,), v, accumulate=True)


ATOMIC_DTYPES = [
    torch.float32,
    torch.int32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.float64,
]


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_index_put_accumulate_with_repeated_indices(dtype):
    if dtype == torch.float64 and not torch.ocl.get_device_properties(0).supports_fp64:
        pytest.skip("the device has no float64 (cl_khr_fp64)")
    i = torch.tensor([0, 3, 3, 6, 0, 0])
    x = torch.randint(-5, 5, (7, 4)).to(dtype)
    v = torch.randint(-5, 5, (6, 4)).to(dtype)
    out = compiled(accumulate)(x.to(DEVICE), i.to(DEVICE), v.to(DEVICE))
    close(out, accumulate(x, i, v))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_atomic_adds_at_odd_element_offsets(dtype):
    # 16-bit atomic adds swap the 32-bit word holding the element: elements in either half of
    # a word (the view starts one element into its buffer), neighbours updated concurrently.
    base = torch.randint(-5, 5, (41,)).to(dtype)
    i = torch.tensor([0, 1, 2, 2, 39, 38, 0, 1, 17, 17, 17])
    v = torch.randint(-5, 5, (11,)).to(dtype)
    out = compiled(accumulate)(base.to(DEVICE)[1:], i.to(DEVICE), v.to(DEVICE))
    close(out, accumulate(base[1:], i, v))


def test_mlp_training_step_matches_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(12, 32),
        torch.nn.LayerNorm(32),
        torch.nn.GELU(),
        torch.nn.Linear(32, 5),
    )
    x = torch.randn(16, 12)
    y = torch.randint(5, (16,))
    ref = copy.deepcopy(model).double()
    loss = torch.nn.functional.cross_entropy(ref(x.double()), y)
    loss.backward()
    dev = copy.deepcopy(model).to(DEVICE)
    step = torch.compile(lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y))
    with torch.ocl.fallback_mode("error"):
        out = step(dev, x.to(DEVICE), y.to(DEVICE))
        out.backward()
    torch.testing.assert_close(out.cpu().double(), loss.detach(), rtol=1e-5, atol=1e-5)
    for p, q in zip(dev.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu().double(), q.grad, rtol=1e-4, atol=1e-5)


def test_profiler_sees_one_kernel_for_the_chain():
    from torch.profiler import ProfilerActivity, profile

    if not torch.ocl.profiler.has_device_activity():
        pytest.skip("torch-ocl was built without Kineto's headers: no device activity")
    a = torch.randn(64, 3, device=DEVICE)
    fn = compiled(chain)
    fn(a, a)
    torch.ocl.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        fn(a, a)
        torch.ocl.synchronize()
    names = [
        e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1
    ]
    assert [n for n in names if n.startswith("ocl_kernel")] == ["ocl_kernel_0"], names


def dropout_and_draws(x):
    y = torch.nn.functional.dropout(x, 0.3, training=True)
    return y, torch.rand_like(x), torch.randn_like(x), torch.randint_like(x, 3, 10)


def test_random_numbers_in_kernels():
    # Philox in the generated kernels, seeded from the ocl generator: statistics, not eager's
    # sequence (no Inductor device reproduces eager's random numbers).
    x = torch.ones(200, 300, device=DEVICE)
    fn = compiled(dropout_and_draws)
    torch.manual_seed(0)
    y, u, n, i = (t.cpu() for t in fn(x))
    assert abs((y == 0).float().mean().item() - 0.3) < 0.01
    assert torch.equal(y[y != 0].unique(), torch.tensor([1 / 0.7]))
    assert 0 <= u.min().item() and u.max().item() < 1 and abs(u.mean().item() - 0.5) < 0.01
    assert abs(n.mean().item()) < 0.02 and abs(n.std().item() - 1) < 0.02
    assert set(i.unique().tolist()) == set(range(3, 10))
    again = fn(x)[0].cpu()
    assert not torch.equal(again, y)  # a new seed for every call
    torch.manual_seed(0)
    assert torch.equal(fn(x)[0].cpu(), y)  # torch.manual_seed repeats them


def test_float64_works_and_is_refused_without_fp64(monkeypatch):
    from torch_ocl._inductor import dtypes

    def fn(x):
        return (x * 3).sin() + 1

    x = torch.randn(5, 3, dtype=torch.float64)
    if torch.ocl.get_device_properties().supports_fp64:
        close(compiled(fn)(x.to(DEVICE)), fn(x), rtol=1e-12, atol=1e-12)
    # A device without cl_khr_fp64: refused while generating, before any build or launch.
    # (Inductor's caches would serve the graph compiled above without generating it again.)
    monkeypatch.setattr(dtypes, "device_has_fp64", lambda index: False)
    torch._dynamo.reset()
    with (
        torch._inductor.config.patch(fx_graph_cache=False),
        torch._functorch.config.patch(enable_autograd_cache=False),
        pytest.raises(Exception, match="no float64 support") as info,
    ):
        torch.compile(fn)(x.to(DEVICE))
    assert "backend='aot_eager'" in str(info.value)
    torch._dynamo.reset()


def test_unsupported_op_refuses_with_the_way_out():
    def special(x):
        mantissa, exponent = torch.frexp(x * 3)
        return mantissa + exponent

    torch._dynamo.reset()
    with pytest.raises(Exception, match="backend='aot_eager'") as info:
        torch.compile(special)(torch.rand(4, device=DEVICE))
    assert "does not implement ops.frexp" in str(info.value)
    # aot_eager runs it.
    x = torch.rand(4)
    out = torch.compile(special, backend="aot_eager")(x.to(DEVICE))
    close(out, special(x), rtol=1e-5, atol=1e-6)
