"""Scans on the ocl device: cumsum, cumprod, logcumsumexp, cummax and cummin, against PyTorch on
the CPU (float64 references for sums and products).

The kernels (kernels/scan.cl) take three routes, all covered here: one work-item per column
(a dimension with stride > 1, or a short one), a work-group per row tile (a long last
dimension), and either of them cut into chunks with a pass for the chunks' totals when there are
few rows or columns and many elements (the `long_row` and `long_col` shapes on this device).
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")

# (shape, dim): every route of the kernels.
CASES = [
    ((0,), 0),
    ((3, 0), 1),
    ((1,), 0),
    ((), 0),
    ((7, 13), 1),
    ((7, 13), 0),
    ((7, 13), -1),
    ((4, 5, 6), 1),
    ((2, 5000), 1),  # tile route, rows cut into chunks
    ((3000, 3), 0),  # column route, columns cut into chunks
    ((1, 700), 1),  # tile route, one chunk
]
CASE_IDS = ["empty", "empty_3x0", "one", "zero_dim", "rows", "cols", "neg_dim", "middle",
            "long_row", "long_col", "tile"]  # fmt: skip

# Unit roundoff of the accumulation (float for half types).
ACC_EPS = {
    torch.float64: 2.0**-53,
    torch.float32: 2.0**-24,
    torch.float16: 2.0**-24,
    torch.bfloat16: 2.0**-24,
}
OUT_EPS = {
    torch.float64: 2.0**-53,
    torch.float32: 2.0**-24,
    torch.float16: 2.0**-11,
    torch.bfloat16: 2.0**-8,
}


def assert_scan_close(actual, expected64, scale64, dtype, n):
    """actual (ocl) against a float64 reference: within n * eps(accumulation) * scale (the
    running sum of |x| or the like: a bound for any order of combination) plus one rounding to
    the result dtype."""
    assert actual.device.type == "ocl"
    assert actual.dtype == dtype, (actual.dtype, dtype)
    assert actual.shape == expected64.shape, (actual.shape, expected64.shape)
    got = actual.cpu().double()
    tol = 4 * max(n, 1) * ACC_EPS[dtype] * scale64 + 2 * OUT_EPS[dtype] * expected64.abs() + 1e-300
    assert torch.equal(torch.isnan(got), torch.isnan(expected64)), "NaNs differ"
    inf = torch.isinf(expected64)
    assert torch.equal(got[inf], expected64[inf]), "infinities differ"
    ok = ((got - expected64).abs() <= tol) | torch.isnan(expected64) | inf
    assert ok.all(), f"got {got[~ok][:5].tolist()}, expected {expected64[~ok][:5].tolist()}"


def _n(shape, dim):
    return shape[dim] if len(shape) else 1


@pytest.mark.parametrize(("shape", "dim"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=dtype_id)
def test_cumsum_float(shape, dim, dtype):
    skip_unsupported(dtype)
    x = make_cpu(shape, dtype)
    got = torch.cumsum(x.to(DEVICE), dim)
    x64 = x.double()
    assert_scan_close(got, torch.cumsum(x64, dim), torch.cumsum(x64.abs(), dim), dtype,
                      _n(shape, dim))  # fmt: skip


@pytest.mark.parametrize(
    "dtype", [torch.int64, torch.int32, torch.uint8, torch.int8, torch.bool], ids=dtype_id
)
@pytest.mark.parametrize(("shape", "dim"), [((7, 13), 1), ((3000, 3), 0), ((2, 5000), 1)])
def test_cumsum_int(shape, dim, dtype):
    """Integers and bool accumulate in int64 (the default result dtype), exactly."""
    x = make_cpu(shape, dtype, low=-100, high=100)
    assert_ocl_close(torch.cumsum(x.to(DEVICE), dim), torch.cumsum(x, dim))


def test_cumsum_dtype_wraps_like_the_cpu():
    x = make_cpu((4, 300), torch.int64, low=0, high=100)
    for dt in (torch.int8, torch.int32, torch.float32):
        assert_ocl_close(torch.cumsum(x.to(DEVICE), 1, dtype=dt), torch.cumsum(x, 1, dtype=dt))
    xf = make_cpu((3, 9), torch.float32)
    assert_ocl_close(torch.cumsum(xf.to(DEVICE), 1, dtype=torch.float64),
                     torch.cumsum(xf, 1, dtype=torch.float64))  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize(("shape", "dim"), [((7, 13), 1), ((7, 13), 0), ((2, 5000), 1)])
def test_cumprod(shape, dim, dtype):
    x = make_cpu(shape, dtype, low=0.9, high=1.1)
    got = torch.cumprod(x.to(DEVICE), dim)
    x64 = x.double()
    ref = torch.cumprod(x64, dim)
    assert_scan_close(got, ref, ref.abs(), dtype, _n(shape, dim))


def test_cumprod_int_wraps():
    x = make_cpu((3, 100), torch.int64, low=-3, high=4)
    assert_ocl_close(torch.cumprod(x.to(DEVICE), 1), torch.cumprod(x, 1))
    xi = make_cpu((3, 100), torch.int32, low=-3, high=4)
    assert_ocl_close(torch.cumprod(xi.to(DEVICE), 1, dtype=torch.int16),
                     torch.cumprod(xi, 1, dtype=torch.int16))  # fmt: skip


@pytest.mark.parametrize(("shape", "dim"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
def test_logcumsumexp(shape, dim, dtype):
    x = make_cpu(shape, dtype, low=-20, high=20)
    got = torch.logcumsumexp(x.to(DEVICE), dim)
    ref = torch.logcumsumexp(x.double(), dim)
    # log of a sum: the relative error of the sum becomes an absolute error of the result.
    assert_scan_close(got, ref, torch.ones_like(ref), dtype, _n(shape, dim))


def test_logcumsumexp_infinities_and_nan():
    x = torch.tensor([[-INF, -INF, 0.0, INF, 1.0, INF], [1.0, NAN, 2.0, -INF, 3.0, 4.0],
                      [INF, -INF, NAN, 1.0, 2.0, 3.0]])  # fmt: skip
    for dim in (0, 1):
        assert_ocl_close(torch.logcumsumexp(x.to(DEVICE), dim), torch.logcumsumexp(x, dim))


def _values_with_ties_and_nans(shape, dtype, seed=0):
    x = make_cpu(shape, dtype, low=-3, high=4, integral=True, seed=seed)
    if dtype.is_floating_point and x.numel() > 8:
        flat = x.view(-1)
        flat[3] = NAN
        flat[7] = NAN
        flat[5] = -0.0
        flat[1] = INF
    return x


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin], ids=["cummax", "cummin"])
@pytest.mark.parametrize(("shape", "dim"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=dtype_id)
def test_cummax_cummin(op, shape, dim, dtype):
    """Values and indices exactly (ties: the later index; NaN sticks, the latest NaN's index)."""
    x = _values_with_ties_and_nans(shape, dtype)
    v, i = op(x.to(DEVICE), dim)
    cv, ci = op(x, dim)
    assert_ocl_close(v, cv, exact=True)
    assert_ocl_close(i, ci)


@pytest.mark.parametrize(
    "dtype",
    [torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.uint8, torch.bool],
    ids=dtype_id,
)
def test_cummax_dtypes(dtype):
    skip_unsupported(dtype)
    x = _values_with_ties_and_nans((5, 300), dtype, seed=3)
    for op in (torch.cummax, torch.cummin):
        for dim in (0, 1):
            v, i = op(x.to(DEVICE), dim)
            cv, ci = op(x, dim)
            assert_ocl_close(v, cv, exact=True)
            assert_ocl_close(i, ci)


def test_non_contiguous_input_and_out():
    x = make_cpu((13, 7), torch.float32).t()
    out = torch.empty(13, 7, device=DEVICE).t()  # a strided out keeps its strides
    torch.cumsum(x.to(DEVICE), 1, out=out)
    assert out.stride() == (1, 7)
    assert_ocl_close(out, torch.cumsum(x, 1))
    step = make_cpu((6, 20), torch.float32)[:, ::3]
    assert_ocl_close(torch.cumprod(step.to(DEVICE), 1), torch.cumprod(step, 1), rtol=1e-5)
    v = torch.empty(0, device=DEVICE)
    i = torch.empty(0, dtype=torch.long, device=DEVICE)
    torch.cummax(x.to(DEVICE), 0, out=(v, i))
    cv, ci = torch.cummax(x, 0)
    assert_ocl_close(v, cv, exact=True)
    assert_ocl_close(i, ci)
    lo = torch.empty(0, device=DEVICE)
    torch.logcumsumexp(x.to(DEVICE), 0, out=lo)
    assert_ocl_close(lo, torch.logcumsumexp(x, 0))


def test_inplace_and_out_aliasing_self():
    x = make_cpu((5, 9), torch.float32)
    xo = x.to(DEVICE)
    xo.cumsum_(1)
    assert_ocl_close(xo, torch.cumsum(x, 1))
    yo = x.to(DEVICE)
    torch.cumprod(yo, 0, out=yo)
    assert_ocl_close(yo, torch.cumprod(x, 0))


def test_errors_match_the_cpu():
    xi = torch.arange(6)
    for dev in ("cpu", DEVICE):
        with pytest.raises(NotImplementedError, match="logcumsumexp_out_cpu"):
            torch.logcumsumexp(xi.to(dev), 0)
        with pytest.raises(IndexError, match="Dimension out of range"):
            torch.cumsum(torch.ones(2, 3, device=dev), 2)
        with pytest.raises(NotImplementedError, match="cumsum_out_cpu"):
            torch.cumsum(torch.ones(3, device=dev), 0, dtype=torch.bool)
    # the process and the device stay usable
    assert_ocl_close(torch.cumsum(torch.ones(3, device=DEVICE), 0), torch.tensor([1.0, 2, 3]))


def test_no_host_wait():
    x = make_cpu((4, 3000), torch.float32).to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.cumsum(x, 1)
    torch.cummax(x, 0)
    torch.logcumsumexp(x, 1)
    assert torch.ocl.host_wait_count() == before


@pytest.mark.slow
@pytest.mark.parametrize("dim", [0, 1])
def test_large(dim):
    shape = (1, 10**6) if dim == 1 else (10**6, 1)
    x = make_cpu(shape, torch.float32)
    x64 = x.double()
    assert_scan_close(torch.cumsum(x.to(DEVICE), dim), torch.cumsum(x64, dim),
                      torch.cumsum(x64.abs(), dim), torch.float32, 10**6)  # fmt: skip
    v, i = torch.cummax(x.to(DEVICE), dim)
    cv, ci = torch.cummax(x, dim)
    assert_ocl_close(v, cv, exact=True)
    assert_ocl_close(i, ci)
