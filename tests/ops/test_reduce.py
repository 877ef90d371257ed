"""Reductions on the ocl device: sum and mean (all elements and over dims, keepdim, dtype=, out=)
and full max/min, against PyTorch on the CPU with float64 references.

Float results are checked with a tolerance that scales with the sum of |x| (the size of the
rounding error of any summation order), not with the result, which may cancel to near zero.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import (
    DEVICE,
    LARGE,
    assert_ocl_close,
    dtype_id,
    make_cpu,
    skip_unsupported,
)

NAN, INF = float("nan"), float("inf")

# Unit roundoff of the result dtype, and of the accumulation (float for half types).
EPS = {
    torch.float64: 2.0**-53,
    torch.float32: 2.0**-24,
    torch.float16: 2.0**-11,
    torch.bfloat16: 2.0**-8,
}
ACC_EPS = {
    torch.float64: 2.0**-53,
    torch.float32: 2.0**-24,
    torch.float16: 2.0**-24,
    torch.bfloat16: 2.0**-24,
}


def assert_reduced_close(actual, x, fn, factor=64):
    """actual (ocl) == fn(x) with the dtype and shape of the CPU result. Floats: within
    factor * eps(accumulation) * fn(|x|) (a bound for any summation order; computed in float64)
    plus one rounding to the result dtype; NaN and infinities where the reference has them."""
    expected = fn(x)
    assert actual.device.type == "ocl"
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    got = actual.cpu()
    if not expected.dtype.is_floating_point:
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
        return
    x64 = x.to(torch.float64)
    ref = fn(x64).double()
    scale = fn(x64.abs()).double()
    acc_eps = max(ACC_EPS[expected.dtype], ACC_EPS.get(x.dtype, 0.0))
    if x.is_floating_point() and EPS[expected.dtype] > EPS[x.dtype]:
        acc_eps = EPS[expected.dtype]  # dtype= narrower than x: each element is rounded first
    tol = factor * acc_eps * scale + EPS[expected.dtype] * ref.abs() + 1e-300
    g = got.double()
    assert torch.equal(torch.isnan(g), torch.isnan(ref)), f"NaNs differ: {got} vs {ref}"
    inf_ref = torch.isinf(ref)
    assert torch.equal(g[inf_ref], ref[inf_ref]), "infinities differ"
    check = ~torch.isnan(ref) & ~inf_ref
    diff = (g - ref).abs()
    ok = (diff <= tol) | ~check
    assert ok.all(), (
        f"error over tolerance: got {got[~ok][:5].tolist()}, expected {ref[~ok][:5].tolist()}"
    )


# Every reduction variant (dtypes, op) is a separate build of reduce.cl, seconds each on PoCL,
# so the dtype lists below are a representative spread rather than every dtype for every op.
@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.bfloat16, torch.int8, torch.bool],
    ids=dtype_id,
)
def test_sum_all(dtype):
    skip_unsupported(dtype)
    x = make_cpu((31, 29), dtype)
    xo = x.to(DEVICE)
    assert_reduced_close(torch.sum(xo), x, torch.sum)
    assert_reduced_close(xo.sum(), x, torch.sum)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=dtype_id)
def test_mean_all(dtype):
    skip_unsupported(dtype)
    x = make_cpu((31, 29), dtype)
    assert_reduced_close(x.to(DEVICE).mean(), x, torch.mean)


# (shape, view applied to the base tensor, dims)
DIM_CASES = [
    ((7, 13), None, 0),
    ((7, 13), None, 1),
    ((7, 13), None, -1),
    ((7, 13), None, (0, 1)),
    ((4, 5, 6), None, 1),
    ((4, 5, 6), None, (0, 2)),
    ((4, 5, 6), None, (2, 0)),
    ((13, 7), "t", 0),
    ((13, 7), "t", 1),
    ((7, 26), "step", 1),
    ((7, 26), "step", 0),
    ((3, 0), None, 1),
    ((3, 0), None, 0),
    ((1, 1), None, 0),
    ((300, 5), None, 0),
    ((5, 3000), None, 1),
]
VIEWS = {None: lambda t: t, "t": lambda t: t.t(), "step": lambda t: t[:, ::2]}


def _dim_id(case):
    shape, view, dims = case
    return f"{'x'.join(map(str, shape))}{'-' + view if view else ''}-dim{dims}"


@pytest.mark.parametrize("keepdim", [False, True], ids=["nokeep", "keepdim"])
@pytest.mark.parametrize("case", DIM_CASES, ids=_dim_id)
def test_sum_mean_dims(case, keepdim):
    shape, view, dims = case
    base = make_cpu(shape, torch.float32)
    x = VIEWS[view](base)
    xo = VIEWS[view](base.to(DEVICE))
    assert_reduced_close(
        torch.sum(xo, dims, keepdim=keepdim), x, lambda t: torch.sum(t, dims, keepdim=keepdim)
    )
    assert_reduced_close(
        torch.mean(xo, dims, keepdim=keepdim), x, lambda t: torch.mean(t, dims, keepdim=keepdim)
    )


@pytest.mark.parametrize("dtype", [torch.int64], ids=dtype_id)
def test_sum_dims_dtypes(dtype):
    skip_unsupported(dtype)
    x = make_cpu((6, 11), dtype)
    xo = x.to(DEVICE)
    for dims in (0, 1):
        assert_reduced_close(xo.sum(dims), x, lambda t, d=dims: t.sum(d))


def test_sum_mean_zero_dim_and_empty():
    s = torch.tensor(2.5)
    assert_reduced_close(s.to(DEVICE).sum(), s, torch.sum)
    assert_reduced_close(s.to(DEVICE).mean(), s, torch.mean)
    assert_reduced_close(s.to(DEVICE).sum(0), s, lambda t: t.sum(0))
    e = torch.empty(0)
    assert_ocl_close(e.to(DEVICE).sum(), e.sum())  # 0
    assert_ocl_close(e.to(DEVICE).mean(), e.mean())  # nan
    ei = torch.empty(0, 4, dtype=torch.int32)
    assert_ocl_close(ei.to(DEVICE).sum(0), ei.sum(0))


def test_sum_dtype_argument():
    x = make_cpu((9, 10), torch.int32)
    xo = x.to(DEVICE)
    assert_reduced_close(xo.sum(dtype=torch.float32), x, lambda t: t.sum(dtype=torch.float32))
    h = make_cpu((9, 10), torch.float16)
    ho = h.to(DEVICE)
    assert_reduced_close(ho.sum(dtype=torch.float32), h, lambda t: t.sum(dtype=torch.float32))


def test_mean_of_integers_raises_like_cpu():
    x = torch.arange(6)
    with pytest.raises(RuntimeError):
        x.mean()
    with pytest.raises(RuntimeError):
        x.to(DEVICE).mean()


def test_sum_mean_out():
    x = make_cpu((7, 13), torch.float32)
    xo = x.to(DEVICE)
    out = torch.empty(13, device=DEVICE)
    r = torch.sum(xo, 0, out=out)
    assert r is out
    assert_reduced_close(out, x, lambda t: t.sum(0))
    out2 = torch.empty(0, device=DEVICE)  # resized
    torch.mean(xo, 1, keepdim=True, out=out2)
    assert_reduced_close(out2, x, lambda t: t.mean(1, keepdim=True))


def test_sum_special_values():
    x = torch.tensor([[1.0, NAN, 2.0], [INF, 1.0, 2.0], [INF, -INF, 0.0], [1e38, 1e38, 1e38]])
    xo = x.to(DEVICE)
    assert_ocl_close(xo.sum(1), x.sum(1))
    assert_ocl_close(xo.sum(), x.sum())
    assert_ocl_close(xo.mean(1), x.mean(1))


def test_sum_cancellation_is_accurate():
    """Large values that cancel: the float64 reference is exact here."""
    x = torch.tensor([1e8, 1.0, -1e8, 1.0] * 256, dtype=torch.float32)
    assert_reduced_close(x.to(DEVICE).sum(), x, torch.sum)


def test_sum_integer_accumulates_in_int64():
    x = torch.full((1000,), 100, dtype=torch.int8)
    assert_ocl_close(x.to(DEVICE).sum(), x.sum())  # 100000, not wrapped
    b = torch.ones(70000, dtype=torch.bool)
    assert_ocl_close(b.to(DEVICE).sum(), b.sum())
    big = torch.full((16,), 2**40, dtype=torch.int64)
    assert_ocl_close(big.to(DEVICE).sum(), big.sum())


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int8], ids=dtype_id)
def test_sum_mean_large(dtype):
    x = make_cpu((LARGE,), dtype)
    xo = x.to(DEVICE)
    assert_reduced_close(xo.sum(), x, torch.sum)
    if dtype.is_floating_point:
        assert_reduced_close(xo.mean(), x, torch.mean)
    y = make_cpu((1031, 1029), dtype)
    yo = y.to(DEVICE)
    assert_reduced_close(yo.sum(0), y, lambda t: t.sum(0))
    assert_reduced_close(yo.sum(1), y, lambda t: t.sum(1))


# ------------------------------------------------------------------------------------------
# max / min (full reduction)


# float32 runs every form; the other dtypes one of max/min each (every reduction kernel variant
# takes seconds to compile).
MINMAX_CASES = [
    (torch.float32, "both"),
    (torch.float16, "min"),
    (torch.bfloat16, "max"),
    (torch.int64, "max"),
    (torch.int32, "min"),
    (torch.uint8, "min"),
    (torch.bool, "max"),
]


@pytest.mark.parametrize(
    ("dtype", "which"), MINMAX_CASES, ids=[f"{dtype_id(d)}-{w}" for d, w in MINMAX_CASES]
)
def test_max_min_all(dtype, which):
    skip_unsupported(dtype)
    x = make_cpu((31, 29), dtype)
    xo = x.to(DEVICE)
    if which in ("max", "both"):
        assert_ocl_close(xo.max(), x.max(), exact=True)
        assert_ocl_close(torch.max(xo), torch.max(x), exact=True)
    if which in ("min", "both"):
        assert_ocl_close(xo.min(), x.min(), exact=True)
    if which == "both":
        assert_ocl_close(torch.min(xo.t()), torch.min(x.t()), exact=True)


def test_max_min_extremes_and_single_element():
    x = torch.tensor([3.0, -INF, 7.5, INF, -2.0])
    xo = x.to(DEVICE)
    assert xo.max().item() == INF and xo.min().item() == -INF
    one = torch.tensor([[-4.25]])
    assert_ocl_close(one.to(DEVICE).max(), one.max())
    z = torch.tensor(5)
    assert_ocl_close(z.to(DEVICE).max(), z.max())
    # Integer limits (max on int64, min on int32: the variants test_max_min_all builds).
    i = torch.tensor([torch.iinfo(torch.int64).min, 0, torch.iinfo(torch.int64).min + 1])
    assert_ocl_close(i.to(DEVICE).max(), i.max())
    j = torch.tensor([torch.iinfo(torch.int32).max, 0, torch.iinfo(torch.int32).max - 1])
    assert_ocl_close(j.to(DEVICE, torch.int32).min(), j.to(torch.int32).min())
    neg = torch.full((1000,), -3.0)  # all negative: the identity must not leak in as 0
    assert_ocl_close(neg.to(DEVICE).max(), neg.max())
    u = torch.full((1000,), 200, dtype=torch.uint8)
    assert_ocl_close(u.to(DEVICE).min(), u.min())


@pytest.mark.parametrize("dtype", [torch.float32], ids=dtype_id)
def test_max_min_propagate_nan(dtype):
    for pos in (0, 500, 999):
        x = make_cpu((1000,), dtype)
        x[pos] = NAN
        xo = x.to(DEVICE)
        assert torch.isnan(xo.max().cpu()), f"max lost the NaN at {pos}"
        assert torch.isnan(xo.min().cpu()), f"min lost the NaN at {pos}"


def test_max_min_of_empty_raises_like_cpu():
    e = torch.empty(0)
    with pytest.raises(RuntimeError):
        e.max()
    with pytest.raises(RuntimeError):
        e.to(DEVICE).max()
    with pytest.raises(RuntimeError):
        e.to(DEVICE).min()


@pytest.mark.slow
def test_max_min_large():
    x = make_cpu((LARGE,), torch.float32)
    x[LARGE - 1] = 10.0
    x[12345] = -10.0
    xo = x.to(DEVICE)
    assert_ocl_close(xo.max(), x.max(), exact=True)
    assert_ocl_close(xo.min(), x.min(), exact=True)


# ------------------------------------------------------------------------------------------
# out= checks (issue 10, item 3), argmax/argmin of bool, any/all of uint8

X23 = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]


def _raises_like_cpu(fn, x):
    """fn(x) raises on the device exactly as fn(x.cpu()) does on the CPU (type and message)."""
    with pytest.raises(Exception) as cpu_err:
        fn(x, "cpu")
    with pytest.raises(type(cpu_err.value)) as ocl_err:
        fn(x.to(DEVICE), DEVICE)
    assert str(ocl_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]


def _e(dtype, device):
    return torch.empty(0, dtype=dtype, device=device)


OUT_DTYPE_ERRORS = {
    "max_values": lambda x, d: torch.max(x, 1, out=(_e(torch.float64, d), _e(torch.int64, d))),
    "max_indices": lambda x, d: torch.max(x, 1, out=(_e(torch.float32, d), _e(torch.int32, d))),
    "min_values": lambda x, d: torch.min(x, 0, out=(_e(torch.float16, d), _e(torch.int64, d))),
    "argmax": lambda x, d: torch.argmax(x, 1, out=_e(torch.float64, d)),
    "argmin": lambda x, d: torch.argmin(x, out=_e(torch.int32, d)),
    "mean_int": lambda x, d: torch.mean(x, 1, out=_e(torch.int64, d)),
    "mean_dtype_mismatch": lambda x, d: torch.mean(
        x, 1, dtype=torch.float64, out=_e(torch.float32, d)
    ),
    "sum_dtype_mismatch": lambda x, d: torch.sum(
        x, 1, dtype=torch.float64, out=_e(torch.float32, d)
    ),
    "amax": lambda x, d: torch.amax(x, 1, out=_e(torch.float64, d)),
    "amin": lambda x, d: torch.amin(x, 1, out=_e(torch.int64, d)),
    "any": lambda x, d: torch.any(x, 1, out=_e(torch.float32, d)),
    "all": lambda x, d: torch.all(x, out=_e(torch.int64, d)),
}


@pytest.mark.parametrize("case", list(OUT_DTYPE_ERRORS))
def test_out_of_wrong_dtype_raises_like_cpu(case):
    _raises_like_cpu(OUT_DTYPE_ERRORS[case], torch.tensor(X23))


OUT_DTYPE_ALLOWED = {
    # The CPU takes the result dtype from out= where the op allows it.
    "sum_f64": lambda x, d: torch.sum(x, 1, out=_e(torch.float64, d)),
    "sum_i64": lambda x, d: torch.sum(x, 1, out=_e(torch.int64, d)),
    "mean_f64": lambda x, d: torch.mean(x, 1, out=_e(torch.float64, d)),
    "any_u8": lambda x, d: torch.any(x, 1, out=_e(torch.uint8, d)),
    "all_u8": lambda x, d: torch.all(x, out=_e(torch.uint8, d)),
}


@pytest.mark.parametrize("case", list(OUT_DTYPE_ALLOWED))
def test_out_dtype_taken_from_out_like_cpu(case):
    x = torch.tensor(X23)
    fn = OUT_DTYPE_ALLOWED[case]
    assert_ocl_close(fn(x.to(DEVICE), DEVICE), fn(x, "cpu"))


def test_reduction_out_of_wrong_shape_resizes_and_strided_out():
    x = make_cpu((7, 13), torch.float32)
    xo = x.to(DEVICE)
    values = torch.empty(2, 2, device=DEVICE)
    indices = torch.empty(0, dtype=torch.int64, device=DEVICE)
    with pytest.warns(UserWarning, match="was resized"):
        torch.max(xo, 1, keepdim=True, out=(values, indices))
    ref = torch.max(x, 1, keepdim=True)
    assert_ocl_close(values, ref.values)
    assert_ocl_close(indices, ref.indices)
    # A strided out of the right shape keeps its strides.
    out = torch.empty(13, 2, dtype=torch.int64, device=DEVICE)[:, 0]
    torch.argmin(xo, 0, out=out)
    assert out.stride() == (2,)
    assert_ocl_close(out, torch.argmin(x, 0))


def test_reduction_out_aliasing_input():
    # out= a view of the input itself: computed as if the input were read first.
    x = make_cpu((5, 1), torch.float32, integral=True)
    xo = x.to(DEVICE)
    torch.sum(xo, 1, keepdim=True, out=xo)
    assert_ocl_close(xo, x.sum(1, keepdim=True))
    y = make_cpu((6, 6), torch.float32, integral=True)
    yo = y.to(DEVICE)
    torch.amax(yo, 1, out=yo[:, 0])
    expected = y.clone()
    expected[:, 0] = y.amax(1)
    assert_ocl_close(yo, expected)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin_of_bool_raise_like_cpu(op):
    b = torch.tensor([True, False, True])
    _raises_like_cpu(lambda x, d: getattr(torch, op)(x), b)
    _raises_like_cpu(lambda x, d: getattr(torch, op)(x, 0, out=_e(torch.int64, d)), b)


@pytest.mark.parametrize("op", ["any", "all"])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32, torch.bool], ids=dtype_id)
def test_any_all_result_dtype_like_cpu(op, dtype):
    x = make_cpu((4, 5), dtype, low=0, high=2)
    xo = x.to(DEVICE)
    fn = getattr(torch, op)
    assert_ocl_close(fn(xo), fn(x))
    assert_ocl_close(fn(xo, 1), fn(x, 1))
    assert_ocl_close(fn(xo, (0, 1), keepdim=True), fn(x, (0, 1), keepdim=True))
    empty = torch.empty(0, 3, dtype=dtype)
    assert_ocl_close(fn(empty.to(DEVICE), 0), fn(empty, 0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=dtype_id)
def test_argmax_and_max_dim_like_cpu(dtype):
    x = make_cpu((6, 9), dtype, integral=True)
    xo = x.to(DEVICE)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            assert_ocl_close(torch.argmax(xo, dim, keepdim), torch.argmax(x, dim, keepdim))
            assert_ocl_close(torch.argmin(xo, dim, keepdim), torch.argmin(x, dim, keepdim))
            got, ref = torch.max(xo, dim, keepdim), torch.max(x, dim, keepdim)
            assert_ocl_close(got.values, ref.values)
            assert_ocl_close(got.indices, ref.indices)
    assert_ocl_close(torch.argmax(xo), torch.argmax(x))
    assert_ocl_close(torch.argmin(xo, keepdim=True), torch.argmin(x, keepdim=True))
