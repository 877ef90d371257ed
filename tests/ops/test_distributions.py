"""exponential_, cauchy_, log_normal_, geometric_ and multinomial on the ocl device (the Philox
generator, kernels/random.cl). The device's numbers differ from the CPU's: the tests compare the
distributions (Kolmogorov-Smirnov distance to the exact CDF, moments, category frequencies) with
fixed seeds, check reproducibility under torch.manual_seed and device generators, and the CPU's
errors.
"""

from __future__ import annotations

import math

import pytest
import torch
from ocl_testing import DEVICE, dtype_id, on_simulator, skip_unsupported

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def n_samples(full=1 << 17):
    return 2048 if on_simulator() else full


def ks_bound(n):
    # The KS distance of n samples stays under 1.95 / sqrt(n) with probability 0.999.
    return 1.95 / math.sqrt(n)


def ks_distance(x, cdf):
    x, _ = x.cpu().double().flatten().sort()
    n = x.numel()
    f = cdf(x)
    i = torch.arange(1, n + 1, dtype=torch.float64)
    return max((i / n - f).max().item(), (f - (i - 1) / n).max().item())


def _normal_cdf(x, mean, std):
    return 0.5 * (1 + torch.erf((x - mean) / (std * math.sqrt(2))))


CONTINUOUS = {
    "exponential_": ((2.5,), lambda x: 1 - torch.exp(-2.5 * x)),
    "cauchy_": ((1.0, 0.5), lambda x: 0.5 + torch.atan((x - 1.0) / 0.5) / math.pi),
    "log_normal_": (
        (0.3, 0.7),
        lambda x: torch.where(x > 0, _normal_cdf(torch.log(x.clamp_min(1e-300)), 0.3, 0.7), 0.0),
    ),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize("op", list(CONTINUOUS))
def test_continuous_distributions_ks(op, dtype):
    skip_unsupported(dtype)
    args, cdf = CONTINUOUS[op]
    torch.manual_seed(123)
    n = n_samples()
    t = getattr(torch.empty(n, dtype=dtype, device=DEVICE), op)(*args)
    assert t.dtype == dtype and t.device.type == "ocl"
    x = t.cpu().double()
    if op != "cauchy_":
        assert (x >= 0).all()
    if op == "exponential_":
        assert (x > 0).all()  # never 0: multinomial divides by it
    assert torch.isfinite(x).all() or (op == "cauchy_" and dtype in (torch.float16,))
    # Rounding to a half type moves values by up to a relative 2^-8 (bfloat16): a wider band.
    slack = {torch.float16: 2e-3, torch.bfloat16: 1.2e-2}.get(dtype, 0.0)
    assert ks_distance(x, cdf) < ks_bound(n) + slack


def test_exponential_moments():
    torch.manual_seed(5)
    x = torch.empty(n_samples(), device=DEVICE).exponential_(4.0).cpu().double()
    assert abs(x.mean().item() - 0.25) < 0.01
    assert abs(x.var().item() - 1 / 16) < 0.01


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.uint8],
    ids=dtype_id,
)
@pytest.mark.parametrize("p", [0.2, 0.9, 1e-3])
def test_geometric(dtype, p):
    skip_unsupported(dtype)
    torch.manual_seed(7)
    n = n_samples()
    t = torch.empty(n, dtype=dtype, device=DEVICE).geometric_(p)
    assert t.dtype == dtype
    x = t.cpu().double()
    if dtype == torch.uint8 and p == 1e-3:
        return  # wraps around like the CPU's cast; only the dtype is checked
    assert (x >= 1).all() and (x == x.round()).all()
    mean = 1 / p
    sd = math.sqrt(1 - p) / p
    assert abs(x.mean().item() - mean) < 5 * sd / math.sqrt(n) + (
        0.02 * mean if dtype == torch.float16 else 0
    )
    if dtype != torch.float16:
        # P(X <= k) = 1 - (1 - p)^k at the integers.
        for k in (1, 2, 5):
            assert abs((x <= k).double().mean().item() - (1 - (1 - p) ** k)) < 5 / math.sqrt(n)


@pytest.mark.parametrize("op", ["exponential_", "cauchy_", "log_normal_", "geometric_"])
def test_reproducible_and_generator(op):
    args = (0.3,) if op == "geometric_" else ()
    torch.manual_seed(42)
    a = getattr(torch.empty(1001, device=DEVICE), op)(*args).cpu()
    b = getattr(torch.empty(1001, device=DEVICE), op)(*args).cpu()
    torch.manual_seed(42)
    c = getattr(torch.empty(1001, device=DEVICE), op)(*args).cpu()
    assert torch.equal(a, c) and not torch.equal(a, b)
    g = torch.Generator(device=DEVICE).manual_seed(9)
    d = getattr(torch.empty(1001, device=DEVICE), op)(*args, generator=g).cpu()
    g.manual_seed(9)
    e = getattr(torch.empty(1001, device=DEVICE), op)(*args, generator=g).cpu()
    assert torch.equal(d, e)


@pytest.mark.parametrize("op", ["exponential_", "cauchy_", "log_normal_", "geometric_"])
def test_non_contiguous_and_empty(op):
    args = (0.3,) if op == "geometric_" else ()
    base = torch.full((40, 30), -7.0, device=DEVICE)
    view = base[::2, 1::3]
    getattr(view, op)(*args)
    b = base.cpu()
    mask = torch.zeros(40, 30, dtype=torch.bool)
    mask[::2, 1::3] = True
    assert (b[~mask] == -7.0).all()
    assert (b[mask] != -7.0).all()
    e = getattr(torch.empty(0, 3, device=DEVICE), op)(*args)
    assert e.shape == (0, 3)


def _raises_like_cpu(fn):
    with pytest.raises(Exception) as cpu:
        fn("cpu")
    with pytest.raises(cpu.type) as dev:
        r = fn(DEVICE)
        r.cpu()  # errors found on the device (multinomial's probabilities) come at the next wait
    return cpu.value, dev.value


@pytest.mark.parametrize(
    "fn",
    [
        lambda d: torch.empty(3, device=d).exponential_(-1.0),
        lambda d: torch.empty(3, device=d).exponential_(0.0),
        lambda d: torch.empty(3, dtype=torch.int64, device=d).exponential_(),
        lambda d: torch.empty(3, device=d).cauchy_(0.0, -1.0),
        lambda d: torch.empty(3, dtype=torch.int64, device=d).cauchy_(),
        lambda d: torch.empty(3, device=d).log_normal_(0.0, -1.0),
        lambda d: torch.empty(3, dtype=torch.int64, device=d).log_normal_(),
        lambda d: torch.empty(3, device=d).geometric_(1.0),
        lambda d: torch.empty(3, device=d).geometric_(0.0),
        lambda d: torch.empty(3, dtype=torch.bool, device=d).geometric_(0.5),
        lambda d: torch.multinomial(torch.ones(3, device=d), 0),
        lambda d: torch.multinomial(torch.ones(3, device=d), 4),
        lambda d: torch.multinomial(torch.ones(2, 2, 3, device=d), 1),
        lambda d: torch.multinomial(torch.ones(3, dtype=torch.int64, device=d), 1),
        lambda d: torch.multinomial(torch.tensor([1.0, -1.0, 2.0], device=d), 2),
        lambda d: torch.multinomial(torch.zeros(3, device=d), 2),
        lambda d: torch.multinomial(torch.ones(3, device=d), 2, out=torch.empty(2, device=d)),
    ],
)
def test_errors_like_cpu(fn):
    _raises_like_cpu(fn)
    assert torch.empty(2, device=DEVICE).exponential_().cpu().shape == (2,)


@pytest.mark.parametrize(
    "probs",
    [[1.0, -1.0, 2.0], [1.0, float("inf"), 2.0], [1.0, float("nan"), 2.0], [0.0, 0.0, 0.0]],
)
def test_multinomial_with_replacement_bad_rows_raise_at_next_wait(probs):
    p = torch.tensor([[1.0, 1.0, 1.0], probs], device=DEVICE)
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        torch.multinomial(p, 5, replacement=True).cpu()
    # The device stays usable and the error is reported once.
    assert torch.multinomial(torch.ones(3, device=DEVICE), 2, replacement=True).cpu().shape == (2,)


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies(dtype, replacement):
    skip_unsupported(dtype)
    torch.manual_seed(3)
    probs = torch.tensor([0.1, 0.0, 0.3, 0.6, 0.0, 1.0], dtype=dtype)
    rows = 2000 if on_simulator() else 20000
    p = probs.to(DEVICE).expand(rows, 6).contiguous()
    s = torch.multinomial(p, 1 if not replacement else 3, replacement=replacement)
    assert s.dtype == torch.int64 and s.shape == (rows, 1 if not replacement else 3)
    s = s.cpu()
    assert not ((s == 1) | (s == 4)).any()  # zero probability: never drawn
    first = torch.bincount(s[:, 0], minlength=6).double() / rows
    expected = probs.double() / probs.double().sum()
    assert (first - expected).abs().max().item() < 5 * math.sqrt(0.25 / rows)
    if replacement:
        counts = torch.bincount(s.flatten(), minlength=6).double() / s.numel()
        assert (counts - expected).abs().max().item() < 5 * math.sqrt(0.25 / s.numel())


def test_multinomial_without_replacement_distinct_and_second_draw():
    torch.manual_seed(11)
    probs = torch.tensor([0.5, 0.25, 0.125, 0.125])
    rows = 2000 if on_simulator() else 20000
    s = torch.multinomial(probs.to(DEVICE).expand(rows, 4), 4).cpu()
    # Every row is a permutation.
    assert (s.sort(dim=1).values == torch.arange(4)).all()
    # P(second = 1) = sum over first = j != 1 of p_j * p_1 / (1 - p_j).
    p = probs.double()
    want = sum(p[j] * p[1] / (1 - p[j]) for j in (0, 2, 3)).item()
    got = (s[:, 1] == 1).double().mean().item()
    assert abs(got - want) < 5 * math.sqrt(0.25 / rows)


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_1d_large_vocab_and_out(replacement):
    torch.manual_seed(1)
    probs = torch.rand(5003, device=DEVICE) + 0.01
    s = torch.multinomial(probs, 7, replacement=replacement)
    assert s.shape == (7,) and s.dtype == torch.int64
    assert ((s >= 0) & (s < 5003)).all().item()
    if not replacement:
        assert s.cpu().unique().numel() == 7
    out = torch.empty(0, dtype=torch.int64, device=DEVICE)
    r = torch.multinomial(probs.unsqueeze(0).expand(2, 5003), 5, replacement=replacement, out=out)
    assert r.shape == (2, 5) and out.shape == (2, 5)
    # A non-contiguous out of the right shape keeps its strides.
    base = torch.full((2, 10), -1, dtype=torch.int64, device=DEVICE)
    torch.multinomial(
        probs.unsqueeze(0).expand(2, 5003), 5, replacement=replacement, out=base[:, ::2]
    )
    b = base.cpu()
    assert (b[:, 1::2] == -1).all() and ((b[:, ::2] >= 0) & (b[:, ::2] < 5003)).all()
    torch.manual_seed(1)
    a = torch.multinomial(probs, 7, replacement=replacement).cpu()
    torch.manual_seed(1)
    b = torch.multinomial(probs, 7, replacement=replacement).cpu()
    assert torch.equal(a, b)
