"""Python scalars beyond a dtype's range behave as on the CPU, op by op.

CPU torch converts scalars in two ways: a scalar *operand* (x + 1000, x < 1000, a 0-dim CPU
tensor) without a range check - integers wrap, floats become +-inf - and an op's scalar
*parameter* (fill value, clamp bounds, alpha, masked_fill/where values, a threshold) with one,
raising "value cannot be converted to type ... without overflow". Each case here runs on the CPU
and on ocl and must give the same values, or the same error."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, dtype_id, make_cpu, skip_unsupported

DTYPES = (
    torch.float32, torch.float64, torch.float16, torch.bfloat16,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
)  # fmt: skip

# Scalars at and beyond the edges of the dtypes above.
SCALARS = (255, 256, 1000, -1000, 70000, 2**31, 2**40, -(2**40), 2**63 - 1, 1e6, 1e39, 1e300,
           -1e300, 2.5)  # fmt: skip


def mask_like(x):
    return torch.arange(x.numel()).reshape(x.shape) % 3 == 0


OPS = {
    "add": lambda x, s: x + s,
    "radd": lambda x, s: s + x,
    "sub": lambda x, s: x - s,
    "mul": lambda x, s: x * s,
    "add_": lambda x, s: x.clone().add_(s),
    "mul_": lambda x, s: x.clone().mul_(s),
    "eq": lambda x, s: x == s,
    "ne": lambda x, s: x != s,
    "lt": lambda x, s: x < s,
    "ge": lambda x, s: x >= s,
    "add-alpha": lambda x, s: torch.add(x, x, alpha=s),
    "fill_": lambda x, s: x.clone().fill_(s),
    "clamp-min": lambda x, s: x.clamp(min=s),
    "clamp-max": lambda x, s: x.clamp(max=-s),
    "masked_fill": lambda x, s: x.masked_fill(mask_like(x).to(x.device), s),
    "where": lambda x, s: torch.where(mask_like(x).to(x.device), x, s),
    "full": lambda x, s: torch.full((3,), s, dtype=x.dtype, device=x.device),
    "scalar_tensor": lambda x, s: torch.scalar_tensor(s, dtype=x.dtype, device=x.device),
    "threshold_backward": lambda x, s: torch.ops.aten.threshold_backward(x, x, s),
    "addcmul": lambda x, s: torch.addcmul(x, x, x, value=s),
}
FLOAT_ONLY = {"addcmul", "threshold_backward"}


def outcome(fn, x, s):
    try:
        return "value", fn(x, s).cpu()
    except Exception as e:  # compared with the CPU's exception below
        return "error", (type(e), str(e).split("\n")[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", list(OPS))
def test_scalar_beyond_range_behaves_like_cpu(op, dtype):
    skip_unsupported(dtype)
    if op in FLOAT_ONLY and not dtype.is_floating_point:
        pytest.skip(f"{op} is only compared for floating dtypes (the CPU's integer path differs)")
    x = make_cpu((7,), dtype, seed=11)
    for s in SCALARS:
        if (
            isinstance(s, float)
            and not dtype.is_floating_point
            and op in ("fill_", "full", "scalar_tensor")
        ):
            continue  # float -> integer fill values: out of scope (no wrap/overflow question)
        want = outcome(OPS[op], x, s)
        got = outcome(OPS[op], x.to(DEVICE), s)
        assert got[0] == want[0], f"{op}({dtype}, {s}): CPU gave {want}, ocl gave {got}"
        if want[0] == "error":
            assert got[1] == want[1], f"{op}({dtype}, {s})"
        else:
            torch.testing.assert_close(
                got[1], want[1], equal_nan=True, msg=lambda m, s=s: f"{op}({dtype}, {s}): {m}"
            )


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.uint8], ids=dtype_id)
def test_zero_dim_cpu_tensor_of_another_integer_dtype_wraps(dtype):
    x = make_cpu((9,), dtype, seed=12)
    for other in (torch.tensor(200, dtype=torch.uint8), torch.tensor(-300, dtype=torch.int16)):
        if other.dtype != dtype and torch.result_type(x, other) != dtype:
            continue
        torch.testing.assert_close((x.to(DEVICE) + other).cpu(), x + other)
        torch.testing.assert_close((x.to(DEVICE) == other).cpu(), x == other)
