"""Random numbers on the ocl device: torch.randn/rand, normal_, uniform_, bernoulli_ and dropout;
determinism under torch.manual_seed, torch.ocl.manual_seed and torch.Generator(device='ocl');
RNG state round trips; statistical sanity (checked on the host).

The device stream need not match the CPU's numbers, only their distribution.
"""

from __future__ import annotations

import math

import pytest
import torch
from ocl_testing import DEVICE, dtype_id, on_simulator, skip_unsupported

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
