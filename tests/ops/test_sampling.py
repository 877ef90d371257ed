"""The generator ops beyond the fills (csrc/ops/Sampling.cpp, kernels/sampler.cl) on the device's
own Philox generator: normal with tensor arguments, randperm, poisson, _standard_gamma (Gamma,
Beta, Dirichlet), _sample_dirichlet, binomial, bernoulli(out=), _fused_dropout.

Each honours torch.manual_seed and an ocl torch.Generator (same seed, same numbers; other seeds,
other numbers) and runs natively (the fallback raises under tests/ops). Distributions are checked
against the exact law where it is simple (randperm is a permutation, Poisson's CDF) and otherwise
against CPU torch's samples with a two-sample Kolmogorov-Smirnov bound at the 0.1% level, plus
moments. The numbers need not equal the CPU's.
"""

from __future__ import annotations

import math

import pytest
import torch
from ocl_testing import DEVICE, dtype_id, on_simulator, skip_unsupported

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def n_samples(full=20000):
    return 2000 if on_simulator() else full


def ks_two_sample(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest gap between the empirical CDFs of a and b (host float64)."""
    a = a.double().flatten().sort().values
    b = b.double().flatten().sort().values
    grid = torch.cat([a, b]).unique()
    fa = torch.searchsorted(a, grid, right=True).double() / a.numel()
    fb = torch.searchsorted(b, grid, right=True).double() / b.numel()
    return float((fa - fb).abs().max())


def ks_bound(n: int, m: int) -> float:
    """The two-sample KS critical value at the 0.1% level."""
    return 1.95 * math.sqrt((n + m) / (n * m))


def _gen(seed):
    return torch.Generator(device=DEVICE).manual_seed(seed)


def check_seeding(fn):
    """fn(generator) repeats under one seed and differs under another, for an explicit ocl
    generator and for torch.manual_seed's default one (fn(None))."""
    a = fn(_gen(5)).cpu()
    b = fn(_gen(5)).cpu()
    c = fn(_gen(6)).cpu()
    assert torch.equal(a, b), "the same seed gave different numbers"
    assert not torch.equal(a, c), "different seeds gave the same numbers"
    torch.manual_seed(11)
    d = fn(None).cpu()
    torch.manual_seed(11)
    e = fn(None).cpu()
    f = fn(None).cpu()
    assert torch.equal(d, e) and not torch.equal(e, f)


# ---- randperm ----


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000, 100003])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32], ids=dtype_id)
def test_randperm_is_a_permutation(n, dtype):
    p = torch.randperm(n, device=DEVICE, dtype=dtype, generator=_gen(n))
    assert p.device.type == "ocl" and p.dtype == dtype and p.shape == (n,)
    assert torch.equal(p.cpu().long().sort().values, torch.arange(n))


def test_randperm_out_and_half_limits():
    out = torch.empty(3, dtype=torch.int64, device=DEVICE)
    torch.randperm(20, generator=_gen(1), out=out)
    assert torch.equal(out.cpu().sort().values, torch.arange(20))
    p = torch.randperm(2049, dtype=torch.float16, device=DEVICE)
    assert torch.equal(p.cpu().long().sort().values, torch.arange(2049))
    with pytest.raises(RuntimeError, match="n cannot be greater than 2049 for Half type"):
        torch.randperm(3000, dtype=torch.float16, device=DEVICE)
    with pytest.raises(RuntimeError, match="negative"):
        torch.randperm(-1, device=DEVICE)


def test_randperm_seeding_and_generator_device():
    check_seeding(lambda g: torch.randperm(500, device=DEVICE, generator=g))
    with pytest.raises(RuntimeError, match="generator"):
        torch.randperm(5, device=DEVICE, generator=torch.Generator())


def test_randperm_is_uniform():
    """The first element of 4000 permutations of 8 is each value about 500 times (binomial
    sd 13.2; bound 6 sd), and the permutation's order is not the identity's."""
    g = _gen(3)
    firsts = torch.stack([torch.randperm(8, device=DEVICE, generator=g)[0] for _ in range(4000)])
    counts = torch.bincount(firsts.cpu(), minlength=8)
    assert (counts - 500).abs().max() < 80, counts


# ---- normal with tensor arguments ----


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_normal_tensor_overloads(dtype):
    skip_unsupported(dtype)
    n = n_samples(40000)
    mean = torch.linspace(-3, 3, n).to(dtype)
    std = torch.linspace(0.5, 2, n).to(dtype)
    cases = [
        (lambda g: torch.normal(mean.to(DEVICE), std.to(DEVICE), generator=g), mean, std),
        (lambda g: torch.normal(0.0, std.to(DEVICE), generator=g), torch.zeros(n), std),
        (lambda g: torch.normal(mean.to(DEVICE), 1.5, generator=g), mean, torch.full((n,), 1.5)),
    ]
    for fn, m, s in cases:
        x = fn(_gen(1))
        assert x.device.type == "ocl" and x.dtype == dtype and x.shape == (n,)
        z = (x.cpu().double() - m.double()) / s.double()  # standard normal if right
        assert abs(z.mean().item()) < 5 / math.sqrt(n) + 0.01
        assert abs(z.std().item() - 1) < 0.03
        ref = torch.randn(n, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        assert ks_two_sample(z, ref) < ks_bound(n, n) + (0.01 if dtype != torch.float32 else 0)
        check_seeding(fn)


def test_normal_broadcast_out_and_empty():
    mean = torch.zeros(4, 1, device=DEVICE)
    std = torch.ones(3, device=DEVICE)
    assert torch.normal(mean, std).shape == (4, 3)
    out = torch.empty(0, device=DEVICE)
    torch.normal(mean, std, generator=_gen(2), out=out)
    assert out.shape == (4, 3)
    a, b = torch.empty(0, device=DEVICE), torch.empty(7, device=DEVICE)
    torch.normal(mean, 2.0, generator=_gen(3), out=a)
    torch.normal(1.0, std, generator=_gen(3), out=b)
    assert a.shape == (4, 1) and b.shape == (3,)
    assert torch.equal(a.cpu(), torch.normal(mean, 2.0, generator=_gen(3)).cpu())
    assert torch.normal(torch.zeros(0, device=DEVICE), 1.0).numel() == 0
    assert torch.normal(2.0, torch.zeros(5, device=DEVICE)).cpu().eq(2).all()  # std 0: the mean


def test_normal_negative_std_raises_at_the_next_wait():
    x = torch.normal(torch.zeros(3, device=DEVICE), torch.tensor([1.0, -1.0, 1.0], device=DEVICE))
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        x.cpu()
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        torch.normal(torch.zeros(3, device=DEVICE), -1.0)
    assert torch.normal(torch.zeros(3, device=DEVICE), 1.0).cpu().isfinite().all()


# ---- poisson ----


def poisson_cdf(k: int, lam: float) -> float:
    return sum(math.exp(j * math.log(lam) - lam - math.lgamma(j + 1)) for j in range(k + 1))


@pytest.mark.parametrize("lam", [0.3, 2.0, 9.5, 10.0, 37.0, 1500.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
def test_poisson_distribution(lam, dtype):
    skip_unsupported(dtype)
    n = n_samples()
    x = torch.poisson(torch.full((n,), lam, dtype=dtype, device=DEVICE), generator=_gen(7))
    assert x.dtype == dtype
    s = x.cpu().double()
    assert torch.equal(s, s.round()) and (s >= 0).all()
    assert abs(s.mean().item() - lam) < 5 * math.sqrt(lam / n)
    assert abs(s.var().item() / lam - 1) < 0.1
    # The exact CDF at the integers around the mean (KS for a discrete law is conservative).
    lo, hi = int(max(0, lam - 3 * math.sqrt(lam))), int(lam + 3 * math.sqrt(lam)) + 1
    gap = max(abs((s <= k).double().mean().item() - poisson_cdf(k, lam)) for k in range(lo, hi))
    assert gap < 1.95 / math.sqrt(n)


def test_poisson_shapes_dtypes_and_seeding():
    rates = torch.tensor([[0.0, 1.0, 4.0], [12.0, 0.5, 100.0]], device=DEVICE)
    x = torch.poisson(rates.t())  # non-contiguous rates
    assert x.shape == (3, 2) and x[0, 0].item() == 0
    for dtype in (torch.float16, torch.bfloat16):
        y = torch.poisson(torch.full((1000,), 6.0, dtype=dtype, device=DEVICE))
        assert y.dtype == dtype and abs(y.cpu().double().mean().item() - 6) < 0.5
    assert torch.poisson(torch.zeros(0, device=DEVICE)).numel() == 0
    check_seeding(lambda g: torch.poisson(torch.full((200,), 3.0, device=DEVICE), generator=g))


def test_poisson_bad_rate_raises_at_the_next_wait():
    x = torch.poisson(torch.tensor([1.0, -2.0], device=DEVICE))
    with pytest.raises(
        RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"
    ):
        x.cpu()
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.poisson(torch.ones(2, dtype=torch.int64, device=DEVICE))
    assert torch.poisson(torch.ones(3, device=DEVICE)).cpu().ge(0).all()


# ---- gamma, dirichlet, binomial ----


@pytest.mark.parametrize("alpha", [0.05, 0.5, 1.0, 2.5, 30.0])
def test_standard_gamma_against_the_cpu(alpha):
    n = n_samples()
    x = torch._standard_gamma(torch.full((n,), alpha, device=DEVICE), generator=_gen(9))
    ref = torch._standard_gamma(torch.full((n,), alpha), generator=torch.Generator().manual_seed(1))
    assert (x.cpu() > 0).all()
    assert ks_two_sample(x.cpu(), ref) < ks_bound(n, n)
    assert abs(x.cpu().double().mean().item() / alpha - 1) < 0.06


def test_gamma_edges_and_distributions():
    a = torch.tensor([0.0, float("inf"), -1.0, float("nan")], device=DEVICE)
    tiny = torch.finfo(torch.float32).tiny
    assert torch.equal(
        torch._standard_gamma(a).cpu(), torch.tensor([tiny, float("inf"), tiny, tiny])
    )
    torch.manual_seed(3)
    d = torch.distributions.Gamma(torch.full((4000,), 3.0, device=DEVICE), 2.0).sample()
    assert d.device.type == "ocl" and abs(d.mean().item() - 1.5) < 0.1
    b = torch.distributions.Beta(torch.tensor(2.0, device=DEVICE), torch.tensor(5.0, device=DEVICE))
    s = b.sample((4000,))
    assert abs(s.mean().item() - 2 / 7) < 0.02
    check_seeding(
        lambda g: torch._standard_gamma(torch.full((100,), 0.7, device=DEVICE), generator=g)
    )


def test_dirichlet():
    alpha = torch.tensor([0.5, 1.0, 3.0, 10.0], device=DEVICE)
    x = torch._sample_dirichlet(alpha.expand(5000, 4).contiguous(), generator=_gen(4))
    s = x.cpu().double()
    assert torch.allclose(s.sum(-1), torch.ones(5000, dtype=torch.float64), atol=1e-5)
    assert torch.allclose(s.mean(0), (alpha / alpha.sum()).cpu().double(), atol=0.01)
    assert ((s > 0) & (s < 1)).all()
    torch.manual_seed(2)
    y = torch.distributions.Dirichlet(alpha).sample((3,))
    assert y.shape == (3, 4) and y.device.type == "ocl"


@pytest.mark.parametrize(
    ("count", "prob"), [(5, 0.3), (40, 0.1), (100, 0.5), (1000, 0.93), (7, 0.99)]
)
def test_binomial_against_the_cpu(count, prob):
    n = n_samples()
    c = torch.full((n,), float(count))
    p = torch.full((n,), prob)
    x = torch.binomial(c.to(DEVICE), p.to(DEVICE), generator=_gen(12)).cpu()
    ref = torch.binomial(c, p, generator=torch.Generator().manual_seed(3))
    assert torch.equal(x, x.round()) and (x >= 0).all() and (x <= count).all()
    assert ks_two_sample(x, ref) < ks_bound(n, n)
    assert (
        abs(x.double().mean().item() - count * prob)
        < 5 * math.sqrt(count * prob * (1 - prob) / n) + 1e-9
    )


def test_binomial_edges_and_seeding():
    count = torch.tensor([0.0, 5.0, 5.0, 5.0, -1.0], device=DEVICE)
    prob = torch.tensor([0.5, 0.0, 1.0, 1.5, 0.5], device=DEVICE)
    assert torch.equal(torch.binomial(count, prob).cpu(), torch.tensor([0.0, 0.0, 5.0, 5.0, 0.0]))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        torch.binomial(count, prob.double())
    check_seeding(
        lambda g: torch.binomial(
            torch.full((100,), 20.0, device=DEVICE),
            torch.full((100,), 0.4, device=DEVICE),
            generator=g,
        )
    )
    torch.manual_seed(0)
    b = torch.distributions.Binomial(10, torch.full((2000,), 0.25, device=DEVICE)).sample()
    assert b.device.type == "ocl" and abs(b.mean().item() - 2.5) < 0.15


def test_bernoulli_out_and_fused_dropout():
    p = torch.full((4000,), 0.3, device=DEVICE)
    out = torch.empty(0, device=DEVICE)
    torch.bernoulli(p, generator=_gen(1), out=out)
    assert out.shape == p.shape and abs(out.mean().item() - 0.3) < 0.04
    x = torch.ones(4000, device=DEVICE)
    y, mask = torch._fused_dropout(x, 0.8, _gen(2))
    assert mask.dtype == torch.uint8 and abs(mask.double().mean().item() - 0.8) < 0.04
    assert torch.allclose(y.cpu(), mask.cpu().float() / 0.8)
