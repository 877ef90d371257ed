"""Extreme values through every kernel family, against CPU torch: NaN payloads and signs, +-inf,
+-0, subnormals, the largest finite values, and integer minimums/maximums.

- Ops that only move elements (copies, views made contiguous, index_select, masked_select, cat,
  where) must keep every bit, NaN payloads included, as the CPU does.
- Ops that compute must give the CPU's values (NaN where the CPU has NaN, the same infinities,
  integers wrapping the same way).
"""

from __future__ import annotations

import struct

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, TOLERANCES, assert_ocl_close, dtype_id, skip_unsupported


def f32_from_bits(bits):
    return [struct.unpack("<f", struct.pack("<I", b))[0] for b in bits]


# float32 specials by bit pattern: quiet NaNs with payloads and both signs, a signalling NaN,
# +-inf, +-0, the smallest subnormal, the smallest normal, the largest finite value.
F32_SPECIAL_BITS = [
    0x7FC00000, 0x7FC00001, 0xFFC00000, 0x7FC0BEEF, 0x7F800001, 0x7F800000, 0xFF800000,
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
]  # fmt: skip


def specials(dtype, n=64, seed=0):
    """n values of dtype: the specials above (as bits for float32, converted otherwise) mixed
    with ordinary random values."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.float32:
        sp = torch.tensor(F32_SPECIAL_BITS, dtype=torch.int64).to(torch.int32).view(torch.float32)
    elif dtype.is_floating_point:
        finfo = torch.finfo(dtype)
        vals = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, finfo.tiny, finfo.max,
                -finfo.max, finfo.smallest_normal / 4]  # fmt: skip
        sp = torch.tensor(vals, dtype=torch.float64).to(dtype)
    else:
        info = torch.iinfo(dtype)
        sp = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1, info.min + 1])
        sp = sp.to(dtype)
    rand = (torch.randn(n, generator=g) * 100).to(dtype)
    idx = torch.randint(0, len(sp), (n // 3,), generator=g)
    pos = torch.randperm(n, generator=g)[: n // 3]
    rand[pos] = sp[idx]
    rand[: len(sp)] = sp
    return rand


BITS_VIEW = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
             torch.bfloat16: torch.int16}  # fmt: skip


def assert_same_bits(got, want):
    assert got.device.type == "ocl"
    assert got.dtype == want.dtype and got.shape == want.shape
    got = got.cpu()
    if want.dtype in BITS_VIEW:
        got, want = got.view(BITS_VIEW[want.dtype]), want.view(BITS_VIEW[want.dtype])
    assert torch.equal(got, want), f"bits differ at {(got != want).nonzero().flatten()[:8]}"


FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]

MOVES = {
    "clone": lambda x: x.clone(),
    "strided-copy": lambda x: x[::2].contiguous(),
    "transpose-contiguous": lambda x: x.view(8, -1).t().contiguous(),
    "to-same-dtype": lambda x: x.to(x.device, copy=True),
    "index_select": lambda x: x.index_select(0, torch.arange(x.numel() - 1, -1, -3).to(x.device)),
    "masked_select": lambda x: x.masked_select((torch.arange(x.numel()) % 3 != 1).to(x.device)),
    "cat": lambda x: torch.cat([x[5:], x[:5]]),
    "where": lambda x: torch.where((torch.arange(x.numel()) % 2 == 0).to(x.device), x, x.flip(0)),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize("op", list(MOVES))
def test_moving_ops_keep_every_bit(op, dtype):
    skip_unsupported(dtype)
    x = specials(dtype)
    want = MOVES[op](x)
    if op == "where":
        # flip is not native: build the flipped operand on the CPU
        fn = lambda t, f: torch.where((torch.arange(t.numel()) % 2 == 0).to(t.device), t, f)  # noqa: E731
        got = fn(x.to(DEVICE), x.flip(0).to(DEVICE))
    else:
        got = MOVES[op](x.to(DEVICE))
    assert_same_bits(got, want)


def test_host_round_trip_keeps_every_bit():
    for dtype in FLOATS:
        skip_unsupported(dtype)
        x = specials(dtype)
        assert_same_bits(x.to(DEVICE), x)


UNARY = {
    "neg": torch.neg, "abs": torch.abs, "relu": torch.relu, "exp": torch.exp, "log": torch.log,
    "sqrt": torch.sqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "floor": torch.floor,
    "round": torch.round, "sign": torch.sign, "reciprocal": torch.reciprocal,
    "isnan": torch.isnan,
}  # fmt: skip
BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq, "lt": torch.lt,
    "floor_divide": lambda a, b: torch.div(a, b, rounding_mode="floor"),
}  # fmt: skip


def close_with_nans(got, want):
    """Same NaN positions, same infinities, finite values within the dtype's tolerance."""
    if want.dtype == torch.bool or not want.dtype.is_floating_point:
        assert_ocl_close(got, want, exact=True)
        return
    assert got.device.type == "ocl" and got.dtype == want.dtype and got.shape == want.shape
    g = got.cpu()
    assert torch.equal(g.isnan(), want.isnan()), "NaN positions differ"
    assert torch.equal(g.isinf() & (g > 0), want.isinf() & (want > 0)), "+inf positions differ"
    assert torch.equal(g.isinf() & (g < 0), want.isinf() & (want < 0)), "-inf positions differ"
    fin = want.isfinite()
    rtol, atol = TOLERANCES[want.dtype]
    torch.testing.assert_close(g[fin], want[fin], rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_ops_on_specials(op, dtype):
    x = specials(dtype)
    close_with_nans(UNARY[op](x.to(DEVICE)), UNARY[op](x.double()).to(UNARY[op](x).dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_ops_on_specials(op, dtype):
    a, b = specials(dtype, seed=1), specials(dtype, seed=2).flip(0)
    want = BINARY[op](a.double(), b.double()).to(BINARY[op](a, b).dtype)
    close_with_nans(BINARY[op](a.to(DEVICE), b.to(DEVICE)), want)


REDUCTIONS = {
    "sum": lambda x: x.view(8, -1).sum(1), "mean": lambda x: x.view(8, -1).mean(1),
    "amax": lambda x: x.view(8, -1).amax(1), "amin": lambda x: x.view(8, -1).amin(1),
    "max": lambda x: x.max(), "min": lambda x: x.min(), "prod": lambda x: x.view(8, -1).prod(),
    "argmax": lambda x: x.view(8, -1).argmax(1), "argmin": lambda x: x.view(8, -1).argmin(1),
    "max.dim-values": lambda x: x.view(8, -1).max(1).values,
    "max.dim-indices": lambda x: x.view(8, -1).max(1).indices,
}  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reductions_on_specials(op, dtype):
    x = specials(dtype, seed=3)
    if op in ("sum", "mean", "prod"):
        # finite values small enough that the sums are well-conditioned (the largest finite
        # values cancel differently in every summation order); NaN and +-inf stay
        x = torch.where(x.isfinite(), x.clamp(-4, 4), x)
    want = REDUCTIONS[op](x.double())
    want = want.to(REDUCTIONS[op](x).dtype)
    close_with_nans(REDUCTIONS[op](x.to(DEVICE)), want)


def test_softmax_and_losses_on_specials():
    x = specials(torch.float32, n=64, seed=4).view(8, 8)
    for fn in (lambda t: F.softmax(t, 1), lambda t: F.log_softmax(t, 1)):
        close_with_nans(fn(x.to(DEVICE)), fn(x.double()).float())
    target = torch.arange(8) % 8
    close_with_nans(
        F.cross_entropy(x.to(DEVICE), target.to(DEVICE), reduction="none"),
        F.cross_entropy(x.double(), target, reduction="none").float(),
    )


def test_mm_propagates_nan_and_inf_like_cpu():
    a = specials(torch.float32, n=64, seed=5).view(8, 8).clamp(-1e3, 1e3)
    a[2, 3], a[5, 0], a[6, 6] = float("nan"), float("inf"), -float("inf")
    b = torch.randn(8, 5, generator=torch.Generator().manual_seed(6))
    close_with_nans(a.to(DEVICE) @ b.to(DEVICE), (a.double() @ b.double()).float())


INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


@pytest.mark.parametrize("dtype", INTS, ids=dtype_id)
def test_integer_extremes_wrap_like_cpu(dtype):
    a, b = specials(dtype, seed=7), specials(dtype, seed=8).flip(0)
    ao, bo = a.to(DEVICE), b.to(DEVICE)
    for fn in (torch.add, torch.sub, torch.mul, torch.maximum, torch.eq, torch.lt):
        assert_ocl_close(fn(ao, bo), fn(a, b), exact=True)
    if dtype != torch.uint8:
        assert_ocl_close(torch.neg(ao), torch.neg(a), exact=True)
        assert_ocl_close(torch.abs(ao), torch.abs(a), exact=True)
    assert_ocl_close(ao.sum(), a.sum(), exact=True)
    assert_ocl_close(ao.view(4, -1).amax(1), a.view(4, -1).amax(1), exact=True)
    assert_ocl_close(ao.view(4, -1).argmin(1), a.view(4, -1).argmin(1), exact=True)
    for to in (torch.float32, torch.int64, torch.int8, torch.bool):
        assert_ocl_close(ao.to(to), a.to(to), exact=True)
