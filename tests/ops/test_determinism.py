"""torch.use_deterministic_algorithms(True) on the ocl device (csrc/ops/IndexOrdered.cpp,
kernels/index.cl index_segments; Factory.cpp and Resize.cpp for the fill of new memory).

- empty / empty_like / new_empty / empty_strided / resize_ fill new memory with NaN (floating) or
  the dtype's largest value (integers) while fill_uninitialized_memory is on, as the CPU does;
  nothing is filled with the flag off.
- The accumulating ops (index_put_ with accumulate, x[idx]'s backward, index_add_, scatter_add_,
  scatter_reduce, put_, index_reduce, embedding's backward, bilinear interpolation's backward)
  and the copies to repeated indices give the same bits on every run, whatever the memory and
  allocator state in between, and match the CPU: float32 and float16 sums equal the CPU's serial
  sums bit for bit (same order, the dtype's rounding after every step), the rest are compared
  with float64.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, skip_unsupported

ACC_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]


@contextlib.contextmanager
def deterministic(fill=True, warn_only=False):
    before = torch.are_deterministic_algorithms_enabled()
    before_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    before_fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=warn_only)
    torch.utils.deterministic.fill_uninitialized_memory = fill
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before, warn_only=before_warn)
        torch.utils.deterministic.fill_uninitialized_memory = before_fill


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bits on the host (NaNs and signed zeros compare exactly)."""
    t = t.detach().cpu().contiguous()
    if t.dtype.is_floating_point:
        return t.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[t.element_size()])
    return t


_scramble_round = [0]


def _scramble_memory():
    """Changes the allocator's state between two runs: blocks of several sizes filled with
    garbage, some freed (so the next run reuses them in another order), some kept alive."""
    _scramble_round[0] += 1
    g = torch.Generator().manual_seed(_scramble_round[0])
    keep = []
    for k in range(12):
        n = int(torch.randint(1, 1 << 16, (1,), generator=g))
        t = torch.empty(n, device=DEVICE).fill_(float(k) * 1e30 + 3.0)
        if k % 3 == 0:
            keep.append(t)
    return keep


def run_twice(fn):
    """fn() twice, with the memory scrambled in between; the results' bits must be equal."""
    first = fn()
    kept = _scramble_memory()
    second = fn()
    del kept
    firsts = first if isinstance(first, tuple) else (first,)
    seconds = second if isinstance(second, tuple) else (second,)
    for a, b in zip(firsts, seconds, strict=True):
        assert torch.equal(_bits(a), _bits(b)), "two runs gave different bits"
    return first


def _values(shape, dtype, seed):
    """Values of mixed magnitudes (sums depend on their order), or small integers."""
    g = torch.Generator().manual_seed(seed)
    if not dtype.is_floating_point:
        return torch.randint(-1000, 1000, shape, generator=g).to(dtype)
    scale = torch.pow(10.0, torch.randint(-3, 4, shape, generator=g).double())
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def _dup_index(n_targets, count, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, n_targets, (count,), generator=g)


def _check(actual, fn, x, *args, exact_dtypes=(torch.float32, torch.float16)):
    """actual (ocl) = fn(x, *args) on the CPU: the same bits in exact_dtypes (the CPU's serial
    order and rounding), integers exactly; other floating dtypes close to the CPU's result in
    the same dtype (their sums round differently where the CPU's kernel vectorises) and to a
    float64 reference."""
    expected = fn(x.clone(), *args)
    dtype = x.dtype
    if not dtype.is_floating_point or dtype in exact_dtypes:
        assert_ocl_close(actual, expected, exact=True)
        return
    # Values of mixed magnitudes up to 1e3 summed: absolute errors scale with the largest term.
    ulp = {
        torch.float64: 2.0**-52,
        torch.float32: 2.0**-23,
        torch.float16: 2.0**-10,
        torch.bfloat16: 2.0**-7,
    }[dtype]
    atol = 1e3 * ulp * 8
    assert_ocl_close(actual, expected, rtol=8 * ulp, atol=atol)
    up = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
    precise = fn(x.double().clone(), *up).to(dtype)
    assert_ocl_close(actual, precise, rtol=8 * ulp, atol=atol * 4)


# --------------------------------------------------------------------------------------------
# Fill of uninitialised memory


FILL_CASES = [
    (torch.float32, float("nan")),
    (torch.float64, float("nan")),
    (torch.float16, float("nan")),
    (torch.bfloat16, float("nan")),
    (torch.int64, torch.iinfo(torch.int64).max),
    (torch.int32, torch.iinfo(torch.int32).max),
    (torch.int16, torch.iinfo(torch.int16).max),
    (torch.int8, torch.iinfo(torch.int8).max),
    (torch.uint8, 255),
    (torch.bool, True),
]


def _is_fill(t, value):
    t = t.cpu()
    if isinstance(value, float):
        return bool(torch.isnan(t).all())
    return bool((t == value).all())


@pytest.mark.parametrize(("dtype", "value"), FILL_CASES, ids=[dtype_id(d) for d, _ in FILL_CASES])
def test_empty_family_fills_new_memory(dtype, value):
    skip_unsupported(dtype)
    # Leave garbage in blocks the caching allocator will hand out again.
    for n in (7, 64, 1000):
        torch.ones(n, dtype=torch.float64, device=DEVICE).mul_(3)
    with deterministic():
        base = torch.zeros(3, dtype=dtype, device=DEVICE)
        made = [
            torch.empty(7, 5, dtype=dtype, device=DEVICE),
            torch.empty(1, dtype=dtype, device=DEVICE),
            torch.empty_like(base),
            base.new_empty((4, 3)),
            torch.empty_strided((3, 4), (1, 3), dtype=dtype, device=DEVICE),
            torch.empty(2, 3, 4, 5, dtype=dtype, device=DEVICE, memory_format=torch.channels_last),
        ]
        for t in made:
            assert t.device.type == "ocl" and t.dtype == dtype
            assert _is_fill(t, value), f"{t.shape} not filled with {value}"
        assert torch.empty(0, dtype=dtype, device=DEVICE).numel() == 0


@pytest.mark.parametrize(
    "dtype",
    [
        torch.uint16,
        torch.uint32,
        torch.uint64,
        torch.complex64,
        torch.complex128,
        torch.float8_e4m3fn,
        torch.float8_e5m2,
    ],
    ids=dtype_id,
)
def test_empty_fills_dtypes_the_device_only_stores(dtype):
    """Unsigned 16-64-bit integers, complex and float8 tensors can be created (not computed
    with) on ocl: under the flag their new memory holds the CPU's fill too."""
    with deterministic():
        got = torch.empty(5, 3, dtype=dtype, device=DEVICE)
        scalar = torch.empty((), dtype=dtype, device=DEVICE)
        grown = torch.empty(2, dtype=dtype, device=DEVICE).resize_(15)  # resize_'s new part
        expected = torch.empty(5, 3, dtype=dtype)  # the CPU's own deterministic fill
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.int64}[
        expected.element_size()
    ]
    for t in (got, scalar, grown):
        bits = t.reshape(-1).view(width).cpu().flatten()  # complex cannot be copied yet
        assert torch.equal(bits, expected.view(width).flatten()[: bits.numel()])


@pytest.mark.parametrize(
    ("dtype", "value"), FILL_CASES[:5], ids=[dtype_id(d) for d, _ in FILL_CASES[:5]]
)
def test_resize_fills_the_grown_part(dtype, value):
    skip_unsupported(dtype)
    with deterministic():
        t = torch.arange(6, device=DEVICE).to(dtype)
        t.resize_(40)
        head = t[:6].cpu()
        assert torch.equal(head, torch.arange(6).to(dtype)), "resize_ changed the kept elements"
        assert _is_fill(t[6:], value)
        # Shrinking and growing back within the storage keeps what is there (as on the CPU).
        t.resize_(3)
        t.resize_(40)
        assert torch.equal(t[:6].cpu(), head)


def test_no_fill_when_the_flag_is_off():
    """With fill_uninitialized_memory off (or determinism off), empty is not filled: a reused
    block still holds what was written into it (no kernel is spent on it)."""
    for ctx in (deterministic(fill=False), contextlib.nullcontext()):
        with ctx:
            x = torch.full((4099,), 7.0, device=DEVICE)
            del x
            y = torch.empty(4099, device=DEVICE)
            assert (y.cpu() == 7.0).all(), "empty() wrote into the memory it returned"


# --------------------------------------------------------------------------------------------
# Accumulating ops: bit-equal runs, and the CPU's results


@pytest.mark.parametrize("dtype", ACC_DTYPES, ids=dtype_id)
def test_index_put_accumulate(dtype):
    skip_unsupported(dtype)
    x = _values((9, 6), dtype, 1)
    idx = _dup_index(9, 300, 2) - 4  # negative indices too
    v = _values((300, 6), dtype, 3)
    with deterministic():
        got = run_twice(
            lambda: x.to(DEVICE).index_put_((idx.to(DEVICE),), v.to(DEVICE), accumulate=True)
        )
    _check(got, lambda t, i, w: t.index_put_((i,), w, accumulate=True), x, idx, v)


def test_index_put_accumulate_matches_the_cpu_bit_for_bit():
    for dtype in (torch.float32, torch.float16):
        x = _values((5, 4), dtype, 4)
        idx = _dup_index(5, 500, 5)
        v = _values((500, 4), dtype, 6)
        with deterministic():
            got = x.to(DEVICE).index_put_((idx.to(DEVICE),), v.to(DEVICE), accumulate=True)
        assert_ocl_close(got, x.clone().index_put_((idx,), v, accumulate=True), exact=True)


@pytest.mark.parametrize("case", ["empty", "one", "broadcast", "noncontiguous", "two_dims", "mask"])
def test_index_put_accumulate_shapes(case):
    g = torch.Generator().manual_seed(7)
    x = _values((6, 5, 4), torch.float32, 8)
    view = lambda t: t  # noqa: E731  the tensor index_put_ runs on
    if case == "empty":
        idx = (torch.zeros(0, dtype=torch.int64),)
        v = torch.zeros(0, 5, 4)
    elif case == "one":
        idx = (torch.tensor([-1]),)
        v = _values((1, 5, 4), torch.float32, 9)
    elif case == "broadcast":  # [40, 1] and [1, 3] index tensors: a [40, 3] result
        idx = (torch.randint(0, 6, (40, 1), generator=g), torch.randint(-5, 5, (1, 3), generator=g))
        v = _values((4,), torch.float32, 10)  # broadcast to [40, 3, 4]
    elif case == "noncontiguous":
        x = _values((5, 6, 4), torch.float32, 11).transpose(0, 1)
        idx = (torch.randint(0, 6, (50,), generator=g)[::2],)
        v = _values((25, 5, 4), torch.float32, 12)
    elif case == "two_dims":  # indexed dims 0 and 2 of a permuted view
        idx = (torch.randint(0, 6, (60,), generator=g), torch.randint(0, 4, (60,), generator=g))
        v = _values((60, 5), torch.float32, 13)
        view = lambda t: t.permute(0, 2, 1)  # noqa: E731
    else:  # a boolean mask: no repeats
        idx = (torch.rand(6, 5, generator=g) > 0.5,)
        v = _values((4,), torch.float32, 14)

    def call():
        y = x.to(DEVICE)  # a copy of x (x.to(DEVICE) of a CPU tensor)
        view(y).index_put_(tuple(i.to(DEVICE) for i in idx), v.to(DEVICE), accumulate=True)
        return y

    ref = x.double().clone()
    view(ref).index_put_(idx, v.double(), accumulate=True)
    with deterministic():
        got = run_twice(call)
    assert_ocl_close(got, ref.float())


def test_index_backward():
    x = _values((7, 5), torch.float32, 20)
    idx = _dup_index(7, 200, 21) - 3
    grad = _values((200, 5), torch.float32, 22)

    def run():
        xo = x.to(DEVICE).requires_grad_()
        xo[idx.to(DEVICE)].backward(grad.to(DEVICE))
        return xo.grad

    with deterministic():
        got = run_twice(run)
    xc = x.clone().requires_grad_()
    xc[idx].backward(grad)
    assert_ocl_close(got, xc.grad, exact=True)


@pytest.mark.parametrize("dtype", ACC_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_add(dtype, dim):
    skip_unsupported(dtype)
    x = _values((6, 7, 3), dtype, 30)
    idx = _dup_index(x.shape[dim], 150, 31)
    shape = list(x.shape)
    shape[dim] = 150
    src = _values(shape, dtype, 32)
    alpha = 2 if not dtype.is_floating_point else 0.5
    with deterministic():
        got = run_twice(
            lambda: x.to(DEVICE).index_add_(dim, idx.to(DEVICE), src.to(DEVICE), alpha=alpha)
        )
    _check(got, lambda t, i, w: t.index_add_(dim, i, w, alpha=alpha), x, idx, src)


@pytest.mark.parametrize("dtype", ACC_DTYPES, ids=dtype_id)
def test_scatter_add(dtype):
    skip_unsupported(dtype)
    x = _values((5, 8), dtype, 40)
    g = torch.Generator().manual_seed(41)
    idx = torch.randint(0, 5, (60, 8), generator=g)
    src = _values((60, 8), dtype, 42)
    with deterministic():
        got = run_twice(lambda: x.to(DEVICE).scatter_add_(0, idx.to(DEVICE), src.to(DEVICE)))
        # a non-contiguous index and source, along dim 1
        got_t = run_twice(
            lambda: x.t().to(DEVICE).scatter_add(1, idx.t().to(DEVICE), src.t().to(DEVICE))
        )
    # The CPU's scatter_add sums half and bfloat16 in float and rounds once (the ordered form
    # too): the same bits in every dtype.
    every = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
    _check(got, lambda t, i, w: t.scatter_add_(0, i, w), x, idx, src, exact_dtypes=every)
    _check(
        got_t, lambda t, i, w: t.scatter_add(1, i, w), x.t(), idx.t(), src.t(), exact_dtypes=every
    )


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64], ids=dtype_id
)
def test_scatter_reduce(reduce, include_self, dtype):
    x = _values((6, 4), dtype, 50)
    g = torch.Generator().manual_seed(51)
    idx = torch.randint(0, 6, (30, 4), generator=g)
    src = _values((30, 4), dtype, 52)
    if reduce == "prod" and dtype.is_floating_point:  # keep products finite
        src = (1 + 0.01 * torch.randn(30, 4, generator=g)).to(dtype)
    if reduce == "prod" and not dtype.is_floating_point:
        src = torch.randint(-2, 3, (30, 4), generator=g).to(dtype)
        x = torch.randint(-2, 3, (6, 4), generator=g).to(dtype)
    with deterministic():
        got = run_twice(
            lambda: x.to(DEVICE).scatter_reduce(
                0, idx.to(DEVICE), src.to(DEVICE), reduce, include_self=include_self
            )
        )
    exact = (torch.float32,) if reduce != "mean" else ()
    _check(
        got,
        lambda t, i, w: t.scatter_reduce(0, i, w, reduce, include_self=include_self),
        x,
        idx,
        src,
        exact_dtypes=exact,
    )


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
def test_index_reduce(reduce):
    x = _values((5, 3), torch.float32, 60)
    idx = _dup_index(5, 40, 61)
    src = 1 + 0.05 * torch.randn(40, 3, generator=torch.Generator().manual_seed(62))
    with deterministic():
        got = run_twice(
            lambda: x.to(DEVICE).index_reduce(0, idx.to(DEVICE), src.to(DEVICE), reduce)
        )
    _check(got, lambda t, i, w: t.index_reduce(0, i, w, reduce), x, idx, src, exact_dtypes=())


def test_put_accumulate():
    x = _values((4, 5), torch.float32, 70)
    idx = _dup_index(20, 300, 71) - 10
    v = _values((300,), torch.float32, 72)
    with deterministic():
        got = run_twice(lambda: x.to(DEVICE).put_(idx.to(DEVICE), v.to(DEVICE), accumulate=True))
    assert_ocl_close(got, x.clone().put_(idx, v, accumulate=True), exact=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=dtype_id)
def test_copies_to_repeated_indices_keep_the_last(dtype):
    """index_put_, index_copy_ and scatter_ with repeated indices: the last source in order
    wins, as on the CPU, on every run."""
    x = _values((6, 3), dtype, 80)
    idx = _dup_index(6, 50, 81)
    v = _values((50, 3), dtype, 82)
    sidx = torch.randint(0, 6, (50, 3), generator=torch.Generator().manual_seed(83))
    cases = [
        (lambda t, i, s, si: t.index_put_((i,), s), None),
        (lambda t, i, s, si: t.index_copy_(0, i, s), None),
        (lambda t, i, s, si: t.scatter_(0, si, s), None),
    ]
    with deterministic():
        for fn, _ in cases:
            got = run_twice(
                lambda fn=fn: fn(x.to(DEVICE), idx.to(DEVICE), v.to(DEVICE), sidx.to(DEVICE))
            )
            assert_ocl_close(got, fn(x.clone(), idx, v, sidx), exact=True)


def test_refusals_name_the_users_op():
    """put_ without accumulate refuses under the flag by its own name, as on the CPU (ATen's
    check); warn_only turns that into a warning."""
    for dev in ("cpu", DEVICE):
        x = torch.zeros(5, device=dev)
        with (
            deterministic(),
            pytest.raises(RuntimeError, match="^put_ does not have a deterministic"),
        ):
            x.put_(torch.tensor([1, 1], device=dev), torch.ones(2, device=dev))
    with deterministic(warn_only=True), pytest.warns(UserWarning, match="put_ does not have"):
        torch.zeros(5, device=DEVICE).put_(
            torch.tensor([1, 1], device=DEVICE), torch.ones(2, device=DEVICE)
        )


def test_bincount_weights():
    g = torch.Generator().manual_seed(95)
    x = torch.randint(0, 9, (400,), generator=g)
    for dtype in (torch.float32, torch.float64, torch.float16):
        w = _values((400,), dtype, 96)
        with deterministic():
            got = run_twice(lambda w=w: torch.bincount(x.to(DEVICE), w.to(DEVICE), minlength=12))
        exp = torch.bincount(x, w, minlength=12)
        assert_ocl_close(got, exp, exact=dtype != torch.float16, rtol=1e-6, atol=1e-9)


def test_embedding_backward():
    w = _values((11, 6), torch.float32, 90)
    idx = torch.randint(0, 11, (5, 40), generator=torch.Generator().manual_seed(91))
    grad = _values((5, 40, 6), torch.float32, 92)

    def run():
        wo = w.to(DEVICE).requires_grad_()
        F.embedding(idx.to(DEVICE), wo, padding_idx=2).backward(grad.to(DEVICE))
        return wo.grad

    with deterministic():
        got = run_twice(run)
    wc = w.clone().requires_grad_()
    F.embedding(idx, wc, padding_idx=2).backward(grad)
    assert_ocl_close(got, wc.grad)


@pytest.mark.parametrize("mode", ["bilinear", "trilinear", "bicubic", "nearest"])
def test_interpolate_backward(mode):
    """Under determinism PyTorch sends non-CPU bilinear/trilinear through a decomposition whose
    backward accumulates with index_put_ (which used to refuse here)."""
    shape = (2, 3, 5, 7, 4) if mode == "trilinear" else (2, 3, 5, 7)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(100))
    size = (9, 11, 5) if mode == "trilinear" else (9, 11)
    kw = {} if mode == "nearest" else {"align_corners": False}

    def run(dev):
        xo = x.to(dev).requires_grad_()
        y = F.interpolate(xo, size=size, mode=mode, **kw)
        y.backward(torch.ones_like(y) * 0.3)
        return y, xo.grad

    with deterministic():
        y, g = run_twice(lambda: run(DEVICE))
    x = x.double()
    y_ref, g_ref = run("cpu")
    assert_ocl_close(y, y_ref.float(), rtol=1e-5, atol=1e-5)
    assert_ocl_close(g, g_ref.float(), rtol=1e-5, atol=1e-5)


def test_warn_only_runs_the_ordered_path_without_warning():
    x = _values((4, 3), torch.float32, 110)
    idx = _dup_index(4, 30, 111)
    v = _values((30, 3), torch.float32, 112)
    import warnings

    with deterministic(warn_only=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        got = x.to(DEVICE).index_add_(0, idx.to(DEVICE), v.to(DEVICE))
    assert_ocl_close(got, x.clone().index_add_(0, idx, v), exact=True)


def test_out_of_range_index_still_raises_under_determinism():
    x = torch.zeros(4, 3, device=DEVICE)
    with deterministic():
        x.index_add_(0, torch.tensor([1, 9], device=DEVICE), torch.ones(2, 3, device=DEVICE))
        with pytest.raises((RuntimeError, IndexError), match="index out of range"):
            torch.ocl.synchronize()
        # the process stays usable and the in-range index was added
        y = torch.zeros(4, 3, device=DEVICE)
        y.index_add_(0, torch.tensor([1, 1], device=DEVICE), torch.ones(2, 3, device=DEVICE))
        assert y.cpu()[1].eq(2).all()


def test_training_steps_repeat_bit_for_bit():
    """A small model with an embedding, advanced indexing, scatter_add, bilinear upsampling and
    dropout, trained for three steps twice from the same seeds (memory scrambled in between):
    the same parameters to the bit."""

    def train():
        torch.manual_seed(0)
        emb = torch.nn.Embedding(50, 8).to(DEVICE)
        lin = torch.nn.Linear(8, 8).to(DEVICE)
        opt = torch.optim.SGD([*emb.parameters(), *lin.parameters()], lr=0.1)
        g = torch.Generator().manual_seed(1)
        for _ in range(3):
            tokens = torch.randint(0, 50, (16, 12), generator=g).to(DEVICE)
            h = F.dropout(lin(emb(tokens)), 0.2)  # [16, 12, 8]
            picked = h[:, torch.tensor([0, 3, 3, 7], device=DEVICE)]  # repeated positions
            pooled = torch.zeros(16, 5, 8, device=DEVICE).scatter_add(
                1, (tokens[:, :4] % 5).unsqueeze(-1).expand(16, 4, 8), picked
            )
            up = F.interpolate(pooled.unsqueeze(1), size=(9, 11), mode="bilinear")
            loss = up.square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return emb.weight.detach().clone(), lin.weight.detach().clone()

    with deterministic():
        run_twice(train)
