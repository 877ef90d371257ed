"""Random numbers on the ocl device: torch.randn/rand, normal_, uniform_, bernoulli_ and dropout;
determinism under torch.manual_seed, torch.ocl.manual_seed and torch.Generator(device='ocl');
RNG state round trips; statistical sanity (checked on the host).

The device stream need not match the CPU's numbers, only their distribution.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from ocl_testing import (
    DEVICE,
    assert_ocl_close,
    dtype_id,
    make_cpu,
    on_simulator,
    skip_unsupported,
)

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def n_samples(full=1 << 18):
    """Fewer samples on a simulator (statistics are then only loosely checked)."""
    return 4096 if on_simulator() else full


def _stats(t):
    x = t.cpu().double().flatten()
    return x.mean().item(), x.std().item(), x


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_randn_and_rand_shape_dtype_device(dtype):
    skip_unsupported(dtype)
    for fn in (torch.randn, torch.rand):
        t = fn(3, 5, dtype=dtype, device=DEVICE)
        assert t.shape == (3, 5) and t.dtype == dtype and t.device.type == "ocl"
        assert torch.isfinite(t.cpu()).all()
    assert torch.randn(0, device=DEVICE).numel() == 0
    assert torch.rand((), device=DEVICE).dim() == 0


def test_manual_seed_determinism():
    torch.manual_seed(1234)
    a = torch.randn(1000, device=DEVICE).cpu()
    b = torch.randn(1000, device=DEVICE).cpu()
    torch.manual_seed(1234)
    a2 = torch.randn(1000, device=DEVICE).cpu()
    b2 = torch.randn(1000, device=DEVICE).cpu()
    assert torch.equal(a, a2) and torch.equal(b, b2)
    assert not torch.equal(a, b), "successive draws repeated the same numbers"
    torch.manual_seed(4321)
    c = torch.randn(1000, device=DEVICE).cpu()
    assert not torch.equal(a, c), "different seeds gave the same numbers"
    # torch.ocl.manual_seed seeds the same default generator.
    torch.ocl.manual_seed(1234)
    assert torch.equal(torch.randn(1000, device=DEVICE).cpu(), a)
    assert torch.ocl.initial_seed() == 1234


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_determinism_every_dtype_and_op(dtype):
    skip_unsupported(dtype)

    def draw():
        x = torch.empty(257, dtype=dtype, device=DEVICE)
        return [
            x.clone().normal_(2.0, 3.0).cpu(),
            x.clone().uniform_(-1.0, 5.0).cpu(),
            x.clone().bernoulli_(0.3).cpu(),
            torch.rand(100, dtype=dtype, device=DEVICE).cpu(),
        ]

    torch.manual_seed(7)
    first = draw()
    torch.manual_seed(7)
    second = draw()
    for u, v in zip(first, second, strict=True):
        assert torch.equal(u, v)


def test_generator_object():
    g = torch.Generator(device=DEVICE)
    assert g.device.type == "ocl"
    g.manual_seed(99)
    assert g.initial_seed() == 99
    a = torch.randn(500, device=DEVICE, generator=g).cpu()
    g.manual_seed(99)
    b = torch.randn(500, device=DEVICE, generator=g).cpu()
    assert torch.equal(a, b)
    # An explicit generator does not advance the default one.
    torch.manual_seed(5)
    d1 = torch.randn(100, device=DEVICE).cpu()
    torch.manual_seed(5)
    torch.rand(100, device=DEVICE, generator=g)
    torch.empty(100, device=DEVICE).normal_(generator=g)
    d2 = torch.randn(100, device=DEVICE).cpu()
    assert torch.equal(d1, d2)
    # Two generators with the same seed agree; a different seed disagrees.
    g2 = torch.Generator(device=DEVICE).manual_seed(99)
    g.manual_seed(99)
    assert torch.equal(
        torch.rand(64, device=DEVICE, generator=g).cpu(),
        torch.rand(64, device=DEVICE, generator=g2).cpu(),
    )
    g2.manual_seed(100)
    assert not torch.equal(
        torch.rand(64, device=DEVICE, generator=g).cpu(),
        torch.rand(64, device=DEVICE, generator=g2).cpu(),
    )


def test_generator_state_round_trip():
    g = torch.Generator(device=DEVICE).manual_seed(3)
    torch.randn(10, device=DEVICE, generator=g)
    state = g.get_state()
    assert state.device.type == "cpu" and state.dtype == torch.uint8
    a = torch.randn(300, device=DEVICE, generator=g).cpu()
    g.set_state(state)
    b = torch.randn(300, device=DEVICE, generator=g).cpu()
    assert torch.equal(a, b)
    # A CPU generator cannot be used for a device tensor.
    with pytest.raises(RuntimeError):
        torch.randn(3, device=DEVICE, generator=torch.Generator())


def test_rng_state_round_trip():
    torch.manual_seed(11)
    torch.randn(33, device=DEVICE)
    state = torch.ocl.get_rng_state()
    all_states = torch.ocl.get_rng_state_all()
    assert len(all_states) == torch.ocl.device_count()
    assert state.device.type == "cpu" and state.dtype == torch.uint8
    a = torch.randn(1000, device=DEVICE).cpu()
    u = torch.rand(10, device=DEVICE).cpu()
    torch.ocl.set_rng_state(state)
    b = torch.randn(1000, device=DEVICE).cpu()
    v = torch.rand(10, device=DEVICE).cpu()
    assert torch.equal(a, b) and torch.equal(u, v)
    torch.ocl.set_rng_state_all(all_states)
    assert torch.equal(torch.randn(1000, device=DEVICE).cpu(), a)


def test_fork_rng_restores_device_state():
    torch.manual_seed(21)
    with torch.random.fork_rng(devices=[torch.ocl.current_device()], device_type="ocl"):
        torch.randn(100, device=DEVICE)
    a = torch.randn(100, device=DEVICE).cpu()
    torch.manual_seed(21)
    b = torch.randn(100, device=DEVICE).cpu()
    assert torch.equal(a, b)


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_recomputes_dropout_with_the_forward_mask(reentrant):
    """torch.utils.checkpoint replays the device's RNG state when it recomputes a block: dropout
    inside it draws the forward's mask again, so the gradients equal an unchecked run's with the
    same seed (they did not: checkpoint saves the state only when the device module has
    _initialized set, and torch.ocl had no such attribute)."""
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(5)
    block = torch.nn.Sequential(
        torch.nn.Linear(16, 64), torch.nn.Dropout(0.5), torch.nn.GELU(), torch.nn.Linear(64, 8)
    ).to(DEVICE)
    x = torch.randn(32, 16).to(DEVICE).requires_grad_()

    def grads(checkpointed):
        block.zero_grad(set_to_none=True)
        x.grad = None
        torch.manual_seed(11)
        y = checkpoint(block, x, use_reentrant=reentrant) if checkpointed else block(x)
        torch.randn(1000, device=DEVICE)  # the RNG moves on between forward and backward
        (y * y).sum().backward()
        return [p.grad.cpu() for p in block.parameters()] + [x.grad.cpu()]

    expected, actual = grads(False), grads(True)
    for e, a in zip(expected, actual, strict=True):
        assert torch.equal(a, e)


def test_checkpointed_transformers_model_matches_unchecked():
    """gradient_checkpointing_enable() on a transformers model with attention and hidden dropout:
    the same gradients as without checkpointing."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(
        vocab_size=53,
        n_positions=16,
        n_embd=32,
        n_layer=2,
        n_head=4,
        resid_pdrop=0.3,
        embd_pdrop=0.3,
        attn_pdrop=0.3,
    )
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).to(DEVICE).train()
    ids = torch.randint(53, (2, 12), generator=torch.Generator().manual_seed(1)).to(DEVICE)

    def grads():
        model.zero_grad(set_to_none=True)
        torch.manual_seed(3)
        model(input_ids=ids, labels=ids).loss.backward()
        return {n: p.grad.cpu() for n, p in model.named_parameters()}

    expected = grads()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    actual = grads()
    for name, e in expected.items():
        torch.testing.assert_close(actual[name], e, rtol=1e-5, atol=1e-6, msg=name)


def test_seed_and_initial_seed():
    s = torch.ocl.seed()
    assert isinstance(s, int) and torch.ocl.initial_seed() == s
    torch.ocl.manual_seed_all(8)
    assert torch.ocl.initial_seed() == 8


# ------------------------------------------------------------------------------------------
# Distributions (statistics on the host)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
def test_randn_statistics(dtype):
    skip_unsupported(dtype)
    torch.manual_seed(0)
    n = n_samples()
    mean, std, x = _stats(torch.randn(n, dtype=dtype, device=DEVICE))
    se = 1 / math.sqrt(n)
    assert abs(mean) < 6 * se, mean
    assert abs(std - 1) < 6 * se + 2e-3, std
    # Tails: about 4.55% beyond 2 sigma, none absurdly far out.
    frac = (x.abs() > 2).double().mean().item()
    assert abs(frac - 0.0455) < 6 * math.sqrt(0.0455 / n) + 2e-3, frac
    assert x.abs().max().item() < 7
    # Not constant, no repeats in bulk (float32 and float64 only; half types collide).
    if dtype != torch.float16:
        assert x.unique().numel() > 0.99 * n


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_rand_statistics_and_range(dtype):
    skip_unsupported(dtype)
    torch.manual_seed(1)
    n = n_samples()
    mean, std, x = _stats(torch.rand(n, dtype=dtype, device=DEVICE))
    assert x.min().item() >= 0.0 and x.max().item() < 1.0, "rand must lie in [0, 1)"
    se = math.sqrt(1 / 12 / n)
    assert abs(mean - 0.5) < 6 * se + 4e-3, mean
    assert abs(std - math.sqrt(1 / 12)) < 6 * se + 4e-3, std
    # Every tenth of [0, 1) is hit about equally often.
    hist = torch.histc(x.float(), bins=10, min=0.0, max=1.0) / n
    assert (hist - 0.1).abs().max().item() < 0.02, hist


def test_normal_and_uniform_parameters():
    torch.manual_seed(2)
    n = n_samples()
    x = torch.empty(n, device=DEVICE)
    mean, std, _ = _stats(x.normal_(mean=-3.0, std=0.25))
    se = 0.25 / math.sqrt(n)
    assert abs(mean + 3.0) < 6 * se and abs(std - 0.25) < 0.25 * (6 / math.sqrt(n) + 2e-3)
    mean, std, v = _stats(x.uniform_(-2.0, 3.0))
    assert v.min().item() >= -2.0 and v.max().item() < 3.0
    assert abs(mean - 0.5) < 6 * 5 * math.sqrt(1 / 12 / n)
    assert abs(std - 5 * math.sqrt(1 / 12)) < 0.05
    zero_std = torch.empty(100, device=DEVICE).normal_(1.5, 0.0).cpu()
    assert torch.equal(zero_std, torch.full((100,), 1.5))
    # torch.normal with float parameters.
    y = torch.normal(2.0, 1.0, size=(1000,), device=DEVICE)
    assert y.device.type == "ocl" and y.shape == (1000,)


def test_random_fills_non_contiguous_tensors():
    for fill in (lambda t: t.normal_(), lambda t: t.uniform_(), lambda t: t.bernoulli_(0.5)):
        base = torch.full((13, 14), float("nan"), device=DEVICE)
        view = base.t()[::2]  # every element of the view, and only those
        fill(view)
        b = base.cpu()
        assert not torch.isnan(b.t()[::2]).any(), "a strided fill missed elements"
        assert torch.isnan(b.t()[1::2]).all(), "a strided fill wrote outside the view"


@pytest.mark.parametrize("p", [0.0, 0.2, 0.5, 1.0])
def test_bernoulli_scalar_p(p):
    torch.manual_seed(3)
    n = n_samples()
    x = torch.empty(n, device=DEVICE).bernoulli_(p).cpu()
    assert ((x == 0) | (x == 1)).all()
    frac = x.double().mean().item()
    if p in (0.0, 1.0):
        assert frac == p
    else:
        assert abs(frac - p) < 6 * math.sqrt(p * (1 - p) / n), frac


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bool, torch.int64, torch.uint8], ids=dtype_id
)
def test_bernoulli_other_dtypes(dtype):
    torch.manual_seed(4)
    x = torch.empty(4000, dtype=dtype, device=DEVICE).bernoulli_(0.25).cpu()
    assert x.dtype == dtype
    vals = x.to(torch.float64)
    assert ((vals == 0) | (vals == 1)).all()
    assert 0.15 < vals.mean().item() < 0.35


def test_bernoulli_tensor_p():
    torch.manual_seed(5)
    p = torch.tensor([0.0, 1.0, 0.5, 0.1]).repeat(5000)
    x = torch.bernoulli(p.to(DEVICE)).cpu()
    assert x.shape == p.shape
    assert (x[p == 0] == 0).all() and (x[p == 1] == 1).all()
    assert abs(x[p == 0.5].mean().item() - 0.5) < 0.05
    assert abs(x[p == 0.1].mean().item() - 0.1) < 0.03


def test_dropout():
    torch.manual_seed(6)
    x = torch.full((200, 50), 2.0)
    y = torch.nn.functional.dropout(x.to(DEVICE), p=0.4, training=True).cpu()
    kept = y != 0
    assert abs(kept.double().mean().item() - 0.6) < 0.03
    assert torch.allclose(y[kept], torch.full_like(y[kept], 2.0 / 0.6))
    same = torch.nn.functional.dropout(x.to(DEVICE), p=0.4, training=False)
    assert torch.equal(same.cpu(), x)


# ------------------------------------------------------------------------------------------
# Seeds: the full unsigned 64-bit range, exactly as CPU torch takes and reports it

SEEDS = [0, 1, -1, 2**63 - 1, 2**63, -(2**63), 2**64 - 1, 0xDEADBEEFCAFEF00D, -12345]
BAD_SEEDS = [2**64, -(2**63) - 1, 2**70]


@pytest.mark.parametrize("s", SEEDS, ids=str)
def test_manual_seed_accepts_and_reports_like_cpu(s):
    torch.manual_seed(s)
    want = torch.initial_seed()  # CPU torch's reading of s (two's complement for negatives)
    assert 0 <= want < 2**64
    assert torch.ocl.initial_seed() == want
    torch.ocl.manual_seed(0)
    torch.ocl.manual_seed(s)
    assert torch.ocl.initial_seed() == want
    torch.ocl.manual_seed_all(s)
    assert torch.ocl.initial_seed() == want
    g = torch.Generator(device=DEVICE).manual_seed(s)
    assert g.initial_seed() == torch.Generator().manual_seed(s).initial_seed() == want


def test_negative_seed_is_its_twos_complement():
    torch.manual_seed(-5)
    a = torch.rand(64, device=DEVICE).cpu()
    torch.ocl.manual_seed(2**64 - 5)
    assert torch.equal(torch.rand(64, device=DEVICE).cpu(), a)
    g = torch.Generator(device=DEVICE).manual_seed(-5)
    assert torch.equal(torch.rand(64, device=DEVICE, generator=g).cpu(), a)


@pytest.mark.parametrize("s", BAD_SEEDS, ids=str)
def test_out_of_range_seed_raises_like_cpu(s):
    with pytest.raises(ValueError) as cpu_err:
        torch.Generator().manual_seed(s)
    for set_seed in (
        torch.manual_seed,
        torch.ocl.manual_seed,
        torch.ocl.manual_seed_all,
        torch.Generator(device=DEVICE).manual_seed,
    ):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            set_seed(s)
    assert "Overflow when unpacking long long" in str(cpu_err.value)


def test_torch_seed_never_raises_and_seeds_ocl():
    # torch.seed() draws a full 64-bit seed: about half of them are >= 2^63, which used to
    # raise in torch.ocl.manual_seed_all.
    seeds = []
    for _ in range(40):
        s = torch.seed()
        seeds.append(s)
        assert torch.ocl.initial_seed() == s == torch.initial_seed()
    assert all(0 <= s < 2**64 for s in seeds)
    assert any(s >= 2**63 for s in seeds)  # fails with probability 2^-40


def test_ocl_seed_and_generator_seed_are_unsigned():
    got = []
    for _ in range(40):
        s = torch.ocl.seed()
        assert 0 <= s < 2**64 and torch.ocl.initial_seed() == s
        got.append(s)
    assert any(s >= 2**63 for s in got)  # used to come back negative
    g = torch.Generator(device=DEVICE)
    for _ in range(10):
        s = g.seed()
        assert 0 <= s < 2**64 and g.initial_seed() == s
    torch.ocl.seed_all()
    assert 0 <= torch.ocl.initial_seed() < 2**64


def test_rng_state_round_trip_with_large_seed():
    torch.ocl.manual_seed(2**64 - 3)
    torch.rand(5, device=DEVICE)
    state = torch.ocl.get_rng_state()
    a = torch.randn(100, dtype=torch.float64, device=DEVICE).cpu()
    torch.ocl.manual_seed(7)
    torch.ocl.set_rng_state(state)
    assert torch.ocl.initial_seed() == 2**64 - 3
    assert torch.equal(torch.randn(100, dtype=torch.float64, device=DEVICE).cpu(), a)
    g = torch.Generator(device=DEVICE).manual_seed(-2)
    gs = g.get_state()
    b = torch.rand(50, device=DEVICE, generator=g).cpu()
    g.manual_seed(1)
    g.set_state(gs)
    assert g.initial_seed() == 2**64 - 2
    assert torch.equal(torch.rand(50, device=DEVICE, generator=g).cpu(), b)


def test_fork_rng_device_type_only():
    torch.manual_seed(2**64 - 1)
    with torch.random.fork_rng(device_type="ocl"):
        torch.manual_seed(3)
        torch.randn(100, device=DEVICE)
    assert torch.ocl.initial_seed() == 2**64 - 1
    a = torch.randn(100, device=DEVICE).cpu()
    torch.manual_seed(2**64 - 1)
    assert torch.equal(torch.randn(100, device=DEVICE).cpu(), a)


# ------------------------------------------------------------------------------------------
# Resolution: each dtype gets the random bits CPU torch gives it (float64: 53)


def _float32_exact_fraction(x):
    x = x.cpu().double()
    return (x.float().double() == x).double().mean().item()


def _ks_distance(x, cdf):
    """Kolmogorov-Smirnov distance between the sample x (CPU float64) and a CDF."""
    x, _ = x.sort()
    n = x.numel()
    f = cdf(x)
    i = torch.arange(1, n + 1, dtype=torch.float64)
    return max((i / n - f).max().item(), (f - (i - 1) / n).max().item())


def test_rand_float64_has_53_bit_resolution():
    torch.manual_seed(10)
    n = n_samples()
    x = torch.rand(n, dtype=torch.float64, device=DEVICE).cpu()
    assert x.min().item() >= 0.0 and x.max().item() < 1.0
    # Used to be 1.0: every value on the 2^-24 grid.
    assert _float32_exact_fraction(x) < 1e-3
    assert ((x * 2.0**24).frac() != 0).double().mean().item() > 0.99
    assert _ks_distance(x, lambda v: v) < 2.5 / math.sqrt(n)


def test_randn_float64_has_53_bit_resolution():
    torch.manual_seed(11)
    n = n_samples()
    x = torch.randn(n, dtype=torch.float64, device=DEVICE).cpu()
    assert torch.isfinite(x).all()
    assert _float32_exact_fraction(x) < 1e-3  # used to be 1.0
    assert abs(x.mean().item()) < 6 / math.sqrt(n)
    assert abs(x.std().item() - 1) < 6 / math.sqrt(2 * n)
    normal_cdf = lambda v: 0.5 * (1 + torch.erf(v / math.sqrt(2)))  # noqa: E731
    assert _ks_distance(x, normal_cdf) < 2.5 / math.sqrt(n)


def test_float32_rand_keeps_float32_resolution():
    torch.manual_seed(12)
    x = torch.rand(4096, device=DEVICE).cpu().double()
    assert ((x * 2.0**24).frac() == 0).all()  # 24 random bits, like CPU torch's float32
    assert ((x * 2.0**23).frac() != 0).any()


def test_uniform_float64_parameters_keep_double_precision():
    # [0.1, 0.1 + 1e-9) lies between two float32 values: float parameters collapsed it.
    torch.manual_seed(13)
    lo, hi = 0.1, 0.1 + 1e-9
    x = torch.empty(10000, dtype=torch.float64, device=DEVICE).uniform_(lo, hi).cpu()
    assert x.min().item() >= lo and x.max().item() < hi
    u = (x - lo) / (hi - lo)
    assert abs(u.mean().item() - 0.5) < 0.02 and abs(u.std().item() - math.sqrt(1 / 12)) < 0.02
    assert x.unique().numel() > 9900


def test_normal_float64_parameters_keep_double_precision():
    torch.manual_seed(14)
    mean, std = 1.0 + 3e-12, 1e-12
    x = torch.empty(20000, dtype=torch.float64, device=DEVICE).normal_(mean, std).cpu()
    z = (x - mean) / std
    assert abs(z.mean().item()) < 0.05 and abs(z.std().item() - 1) < 0.05
    y = torch.normal(mean, std, size=(20000,), dtype=torch.float64, device=DEVICE).cpu()
    assert abs(((y - mean) / std).std().item() - 1) < 0.05


def test_uniform_float64_never_returns_to():
    # [2^52, 2^52 + 1) holds a single double; half of the raw values round up to `to`.
    x = torch.empty(4096, dtype=torch.float64, device=DEVICE).uniform_(2.0**52, 2.0**52 + 1)
    assert torch.equal(x.cpu(), torch.full((4096,), 2.0**52, dtype=torch.float64))


@pytest.mark.parametrize(
    "lo,hi",
    [(2**63 - 5, 2**63 - 1), (-(2**63), -(2**63) + 3), (-(2**63), 2**63 - 1), (0, 2**40)],
    ids=["top", "bottom", "full", "2^40"],
)
def test_randint_int64_ranges(lo, hi):
    torch.manual_seed(15)
    n = 20000
    x = torch.randint(lo, hi, (n,), device=DEVICE).cpu()
    assert x.dtype == torch.int64
    assert x.min().item() >= lo and x.max().item() < hi
    if hi - lo < 10:
        assert x.unique().numel() == hi - lo  # every value appears
    else:
        # 64-bit draws: the low and high halves of the words both vary.
        u = (x.double() - lo) / (hi - lo)
        assert abs(u.mean().item() - 0.5) < 0.02
        assert (x & 0xFFFF).unique().numel() > 1000
        if hi - lo > 2**33:
            assert (x.double() - lo).max().item() > 2**32


@pytest.mark.parametrize(
    "dtype,args",
    [
        (torch.int32, (0, 2**40)),
        (torch.uint8, (-1, 5)),
        (torch.int8, (-200, 0)),
        (torch.float16, (0, 70000)),
        (torch.int64, (5, 5)),
        (torch.float32, (10, 3)),
    ],
    ids=str,
)
def test_random_bounds_raise_like_cpu(dtype, args):
    with pytest.raises(RuntimeError) as cpu_err:
        torch.empty(4, dtype=dtype).random_(*args)
    msg = str(cpu_err.value).splitlines()[0]
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        torch.empty(4, dtype=dtype, device=DEVICE).random_(*args)


@pytest.mark.parametrize(
    "dtype,args",
    [
        (torch.float16, (0, 65504)),
        (torch.float16, (3000,)),
        (torch.bfloat16, (-300, 1000)),
        (torch.float32, (2**24 - 4, 2**24 + 7)),
        (torch.float64, (0, 2**53 + 3)),
        (torch.float64, ()),
        (torch.float16, ()),
        (torch.int16, (-5, None)),
        (torch.float32, (-7, None)),
        (torch.bool, ()),
    ],
    ids=str,
)
def test_random_values_stay_in_range(dtype, args):
    # Like CPU torch: 'from' and 'to' move to values that stay in [from, to) in the dtype.
    skip_unsupported(dtype)
    torch.manual_seed(16)
    x = torch.empty(20000, dtype=dtype, device=DEVICE).random_(*args).cpu().double()
    if len(args) == 2:
        lo, hi = args
    elif len(args) == 1:
        lo, hi = 0, args[0]
    else:
        lo, hi = 0, None
    if hi is None:  # [from, largest value of the dtype (2^digits for floats)]
        top = {torch.float16: 2**11, torch.float32: 2**24, torch.float64: 2**53, torch.bool: 1}.get(
            dtype
        )
        top = top if top is not None else torch.iinfo(dtype).max
        hi = top + 1
    assert x.min().item() >= lo and x.max().item() < hi, (x.min(), x.max())
    assert (x.frac() == 0).all()
    cpu = torch.empty(20000, dtype=dtype).random_(*args).double()
    # Same spread as CPU torch (both near the ends of the range).
    span = hi - lo
    assert abs(x.mean().item() - cpu.mean().item()) < 0.05 * span


# ------------------------------------------------------------------------------------------
# Parameters carrying NaN / Inf, invalid probabilities


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
def test_normal_inf_nan_parameters_like_cpu(dtype):
    skip_unsupported(dtype)
    inf, nan = math.inf, math.nan
    x = torch.empty(1000, dtype=dtype, device=DEVICE).normal_(0.0, inf).cpu()
    assert torch.isinf(x).all() and (x > 0).any() and (x < 0).any()
    for mean, std, want in ((inf, 1.0, inf), (inf, 0.0, inf), (-inf, 2.0, -inf)):
        y = torch.empty(100, dtype=dtype, device=DEVICE).normal_(mean, std).cpu()
        assert torch.equal(y, torch.full((100,), want, dtype=dtype))
        assert torch.equal(torch.empty(100, dtype=dtype).normal_(mean, std), y)
    assert torch.isnan(torch.empty(100, dtype=dtype, device=DEVICE).normal_(nan, 1.0).cpu()).all()
    for bad_std in (nan, -1.0):
        with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
            torch.empty(10, dtype=torch.float32).normal_(0.0, bad_std)
        with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
            torch.empty(10, dtype=dtype, device=DEVICE).normal_(0.0, bad_std)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
@pytest.mark.parametrize(
    "lo,hi",
    [
        (0.0, math.inf),
        (-math.inf, 0.0),
        (math.nan, 1.0),
        (0.0, math.nan),
        (-3e38, 3e38),
        (0.0, 1e300),
        (2.0, 1.0),
        (-1e5, 1e5),
    ],
    ids=str,
)
def test_uniform_bounds_like_cpu(dtype, lo, hi):
    skip_unsupported(dtype)
    try:
        torch.empty(8, dtype=dtype).uniform_(lo, hi)
    except RuntimeError as e:
        msg = str(e).splitlines()[0]
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            torch.empty(8, dtype=dtype, device=DEVICE).uniform_(lo, hi)
        return
    x = torch.empty(1000, dtype=dtype, device=DEVICE).uniform_(lo, hi).cpu().double()
    assert torch.isfinite(x).all() and x.min().item() >= lo and x.max().item() < hi


def test_uniform_from_equals_to():
    for dtype in (torch.float32, torch.float64):
        x = torch.empty(50, dtype=dtype, device=DEVICE).uniform_(2.5, 2.5).cpu()
        assert torch.equal(x, torch.full((50,), 2.5, dtype=dtype))


BAD_P = r"p_in >= 0 && p_in <= 1"


@pytest.mark.parametrize("bad", [-0.5, 1.5, math.nan, math.inf], ids=str)
@pytest.mark.parametrize("p_dtype", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
def test_bernoulli_tensor_p_out_of_range_raises_at_next_wait(bad, p_dtype):
    skip_unsupported(p_dtype)
    p = torch.full((1000,), 0.5, dtype=p_dtype)
    p[417] = bad
    with pytest.raises(RuntimeError, match=BAD_P):
        torch.empty(1000).bernoulli_(p)  # CPU torch
    pd = p.to(DEVICE)
    torch.ocl.synchronize()
    waits = torch.ocl.host_wait_count()
    out = torch.empty(1000, device=DEVICE).bernoulli_(pd)
    assert torch.ocl.host_wait_count() == waits, "bernoulli_ waited for the device"
    with pytest.raises(RuntimeError, match=BAD_P):
        out.cpu()
    torch.ocl.synchronize()  # reported once, then cleared
    # torch.bernoulli(p) too, and the device stays usable.
    y = torch.bernoulli(pd)
    with pytest.raises(RuntimeError, match=BAD_P):
        torch.ocl.synchronize()
    good = torch.bernoulli(torch.full((100,), 1.0, dtype=p_dtype, device=DEVICE)).cpu()
    assert torch.equal(good, torch.ones(100, dtype=p_dtype))
    del y


def test_bernoulli_valid_tensor_p_does_not_wait():
    p = torch.rand(5000, device=DEVICE)
    torch.ocl.synchronize()
    waits = torch.ocl.host_wait_count()
    x = torch.empty(5000, dtype=torch.bool, device=DEVICE).bernoulli_(p)
    torch.bernoulli(p)
    assert torch.ocl.host_wait_count() == waits
    torch.ocl.synchronize()
    assert x.cpu().any()


@pytest.mark.parametrize("bad", [-0.1, 1.1, math.nan], ids=str)
def test_bernoulli_scalar_p_out_of_range_raises_at_once(bad):
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
        torch.empty(5).bernoulli_(bad)
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
        torch.empty(5, device=DEVICE).bernoulli_(bad)


def test_bernoulli_integer_p_tensor_not_implemented_like_cpu():
    with pytest.raises(NotImplementedError):
        torch.empty(5).bernoulli_(torch.ones(5, dtype=torch.int64))
    with pytest.raises(NotImplementedError):
        torch.empty(5, device=DEVICE).bernoulli_(torch.ones(5, dtype=torch.int64, device=DEVICE))


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.bool, torch.int64], ids=dtype_id
)
def test_bernoulli_tensor_p_broadcast_and_statistics(dtype):
    torch.manual_seed(17)
    p_row = torch.tensor([0.0, 1.0, 0.25, 0.9, 1e-300], dtype=torch.float64)
    # CPU torch broadcasts p to self; so must we.
    assert torch.empty(4, 5, dtype=dtype).bernoulli_(p_row).shape == (4, 5)
    n = 4000
    x = torch.empty(n, 5, dtype=dtype, device=DEVICE).bernoulli_(p_row.to(DEVICE)).cpu()
    v = x.double()
    assert ((v == 0) | (v == 1)).all()
    assert (v[:, 0] == 0).all() and (v[:, 1] == 1).all() and (v[:, 4] == 0).all()
    for j, pj in ((2, 0.25), (3, 0.9)):
        assert abs(v[:, j].mean().item() - pj) < 6 * math.sqrt(pj * (1 - pj) / n)
    with pytest.raises(RuntimeError):
        torch.empty(5, device=DEVICE).bernoulli_(torch.rand(4, 5, device=DEVICE))
    # A non-contiguous output and a CPU probability tensor.
    base = torch.zeros((10, 6), dtype=dtype, device=DEVICE)
    base.t()[::2].bernoulli_(torch.ones(3, 10))
    b = base.cpu()
    assert (b.t()[::2] == 1).all() and (b.t()[1::2] == 0).all()


def test_bernoulli_extreme_probabilities():
    # A sanity check at the ends; the 53-bit resolution of p itself (which a statistical test
    # cannot see below about 2^-30) is checked bit-exactly in tests/kernels/test_random.py.
    torch.manual_seed(18)
    n = 1 << 20
    tiny = torch.empty(n, dtype=torch.bool, device=DEVICE).bernoulli_(1e-12).cpu()
    assert tiny.sum().item() == 0
    huge = torch.empty(n, dtype=torch.bool, device=DEVICE).bernoulli_(1 - 1e-12).cpu()
    assert huge.all()


@pytest.mark.parametrize(
    "dtype", [torch.int64, torch.int32, torch.uint8, torch.bool, torch.float16], ids=dtype_id
)
def test_native_dropout_backward_promotes_like_cpu(dtype):
    """An integer or bool gradient gives a float result (it raised a cast error)."""
    g = make_cpu((9,), dtype, seed=3)
    mask = make_cpu((9,), torch.bool, seed=4)
    want = torch.ops.aten.native_dropout_backward(g, mask, 2.0)
    got = torch.ops.aten.native_dropout_backward(g.to(DEVICE), mask.to(DEVICE), 2.0)
    assert_ocl_close(got, want, exact=True)
