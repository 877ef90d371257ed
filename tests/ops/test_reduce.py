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
    TOLERANCES,
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
    # reduced dims in two runs (one kernel walks both), three runs (a copy first)
    ((3, 5, 4, 7), None, (0, 2, 3)),
    ((3, 5, 4, 7), "cl", (0, 2, 3)),
    ((2, 3, 4, 5), None, (0, 2)),
    ((16, 8, 32, 33), None, (0, 2, 3)),
    ((70, 3, 300), None, (0, 2)),
    ((2, 3, 4, 5, 2), None, (0, 2, 4)),
]
VIEWS = {
    None: lambda t: t,
    "t": lambda t: t.t(),
    "step": lambda t: t[:, ::2],
    "cl": lambda t: t.contiguous(memory_format=torch.channels_last),
}


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


def test_mean_of_integers_message_like_cpu():
    _raises_like_cpu(lambda x, d: x.mean(), torch.arange(6))
    _raises_like_cpu(lambda x, d: torch.mean(x, 0, dtype=torch.int32), torch.arange(6.0))


# ------------------------------------------------------------------------------------------
# var / std / var_mean / std_mean (ATen's implementations, our two-pass std_var_stub)


def _stat_ref(fn, x):
    """fn on float64 CPU, rounded to x's dtype (var/std results keep the input dtype)."""
    r = fn(x.double())
    if isinstance(r, tuple):
        return tuple(t.to(x.dtype) for t in r)
    return r.to(x.dtype)


def _assert_stat_close(got, ref):
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref)
        for g, r in zip(got, ref, strict=True):
            _assert_stat_close(g, r)
        return
    rtol, atol = TOLERANCES[ref.dtype]
    assert_ocl_close(got, ref, rtol=2 * rtol, atol=atol)


STAT_FNS = {
    "var": torch.var,
    "std": torch.std,
    "var_mean": torch.var_mean,
    "std_mean": torch.std_mean,
}

# (dims, keepdim, correction) over a (6, 5, 7) tensor
STAT_ARGS = [
    (None, False, None),
    (1, False, 0),
    (-1, True, 1),
    ((0, 2), False, 2),
    ((2, 0), True, 0.5),
    ((0, 2), True, 1),
    ([], False, 1),  # [] reduces everything, as None
]


@pytest.mark.parametrize("name", list(STAT_FNS))
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=dtype_id
)
def test_var_std_like_float64(name, dtype):
    skip_unsupported(dtype)
    fn = STAT_FNS[name]
    # far from zero: a one-pass sum of squares would lose most digits here
    x = make_cpu((6, 5, 7), dtype, low=96, high=104)
    xo = x.to(DEVICE)
    for dims, keepdim, correction in STAT_ARGS:
        ref = _stat_ref(
            lambda t, d=dims, c=correction, k=keepdim: fn(t, d, correction=c, keepdim=k), x
        )
        got = fn(xo, dims, correction=correction, keepdim=keepdim)
        _assert_stat_close(got, ref)


@pytest.mark.parametrize("name", list(STAT_FNS))
def test_var_std_overloads_and_layouts(name):
    fn = STAT_FNS[name]
    base = make_cpu((9, 14), torch.float32)
    for view in (lambda t: t, lambda t: t.t(), lambda t: t[:, ::3], lambda t: t.expand(3, 9, 14)):
        x, xo = view(base), view(base.to(DEVICE))
        _assert_stat_close(fn(xo), _stat_ref(fn, x))  # unbiased=True overload
        _assert_stat_close(fn(xo, False), _stat_ref(lambda t: fn(t, False), x))
        _assert_stat_close(fn(xo, 0, False, True), _stat_ref(lambda t: fn(t, 0, False, True), x))
        _assert_stat_close(fn(xo, dim=-1), _stat_ref(lambda t: fn(t, dim=-1), x))


def test_var_std_special_values_and_dof():
    x = torch.tensor(
        [[1.0, NAN, 2.0], [INF, 1.0, 2.0], [1.0, 1.0, 1.0], [-INF, -INF, 0.0], [3.0, 4.0, 5.0]]
    )
    xo = x.to(DEVICE)
    for fn in (torch.var, torch.std):
        assert_ocl_close(fn(xo, 1), fn(x, 1))
        assert_ocl_close(fn(xo, 0), fn(x, 0))
    # Degrees of freedom <= 0: the CPU warns and divides by 0 (inf, or NaN for 0/0).
    one = torch.tensor([[2.0], [3.0]])
    with pytest.warns(UserWarning, match="degrees of freedom"):
        got = torch.var(one.to(DEVICE), 1)
    assert_ocl_close(got, torch.var(one, 1))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        got = torch.std(xo[4], correction=5)
    assert_ocl_close(got, torch.std(x[4], correction=5))
    v, m = torch.var_mean(one.to(DEVICE), 1, correction=0)
    assert_ocl_close(v, torch.zeros(2))
    assert_ocl_close(m, one[:, 0])


def test_var_std_empty_like_cpu():
    for shape, dims in (((0,), None), ((3, 0), 1), ((3, 0), 0), ((0, 4), 0)):
        x = torch.empty(shape)
        for fn in (torch.var, torch.std, torch.var_mean, torch.std_mean):
            ref = fn(x, dims)
            got = fn(x.to(DEVICE), dims)
            if isinstance(ref, tuple):
                for g, r in zip(got, ref, strict=True):
                    assert_ocl_close(g, r)
            else:
                assert_ocl_close(got, ref)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=dtype_id)
@pytest.mark.parametrize("name", list(STAT_FNS))
def test_var_std_of_integers_raise_like_cpu(name, dtype):
    fn = STAT_FNS[name]
    _raises_like_cpu(lambda x, d: fn(x), make_cpu((4, 3), dtype))
    _raises_like_cpu(lambda x, d: fn(x, 1, correction=0), make_cpu((4, 3), dtype))


def test_var_std_out():
    x = make_cpu((7, 13), torch.float32)
    xo = x.to(DEVICE)
    out = torch.empty(0, device=DEVICE)
    r = torch.var(xo, 1, correction=0, out=out)
    assert r is out
    _assert_stat_close(out, _stat_ref(lambda t: torch.var(t, 1, correction=0), x))
    strided = torch.empty(13, 2, device=DEVICE)[:, 1]
    torch.std(xo, 0, out=strided)
    _assert_stat_close(strided, _stat_ref(lambda t: torch.std(t, 0), x))
    v, m = torch.empty(0, device=DEVICE), torch.empty(0, device=DEVICE)
    torch.ops.aten.var_mean.correction_out(xo, [1], correction=1, keepdim=True, out0=v, out1=m)
    _assert_stat_close((v, m), _stat_ref(lambda t: torch.var_mean(t, 1, keepdim=True), x))
    wide = torch.empty(0, dtype=torch.float64, device=DEVICE)  # the CPU computes into it
    torch.var(xo, 1, out=wide)
    assert_ocl_close(wide, torch.var(x, 1, out=torch.empty(0, dtype=torch.float64)))
    _raises_like_cpu(lambda x, d: torch.std(x, 1, out=_e(torch.int64, d)), x)


def test_var_std_long_rows_accurate():
    """Rows long enough for the split (partial) path, mean far from zero: within float32
    rounding of the float64 result."""
    x = make_cpu((2, 50000), torch.float32, low=999, high=1001)
    xo = x.to(DEVICE)
    for fn in (torch.var, torch.std):
        ref = fn(x.double(), 1)
        got = fn(xo, 1).cpu().double()
        assert ((got - ref).abs() / ref).max() < 1e-5
    v, m = torch.var_mean(xo, 1)
    assert ((m.cpu().double() - x.double().mean(1)).abs() / 1000).max() < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
def test_var_std_huge_like_float64(dtype):
    """1e7 elements (an all-reduce through the partial path) against float64."""
    skip_unsupported(dtype)
    n = 10_000_000
    x = (torch.randn(n, generator=torch.Generator().manual_seed(3), dtype=torch.float64) + 50).to(
        dtype
    )
    xo = x.to(DEVICE)
    ref_v, ref_m = torch.var_mean(x.double())
    v, m = torch.var_mean(xo)
    rel = 1e-5 if dtype == torch.float32 else TOLERANCES[dtype][0]
    assert abs(v.cpu().double().item() - ref_v.item()) <= rel * ref_v.item()
    assert abs(m.cpu().double().item() - ref_m.item()) <= rel * abs(ref_m.item())
    s = torch.std(xo.view(1000, 10000), 1).cpu().double()
    ref_s = torch.std(x.double().view(1000, 10000), 1)
    assert ((s - ref_s).abs() / ref_s).max() <= rel


# ------------------------------------------------------------------------------------------
# norms (ATen's linalg_vector_norm / norm implementations, our norm_stub)

NORM_PS = [0, 1, 2, 3, 0.5, -1, -0.5, INF, -INF]


def _norm_ref(fn, x, dtype=None):
    r = fn(x.double())
    return r.to(dtype or x.dtype)


@pytest.mark.parametrize("p", NORM_PS, ids=lambda p: f"p{p}")
def test_vector_norm_like_float64(p):
    x = make_cpu((6, 5, 7), torch.float32)
    x[0, 0, :3] = 0.0  # zeros: counted out by p=0, send negative p to 0
    xo = x.to(DEVICE)
    for dims, keepdim in ((None, False), (1, False), (-1, True), ((0, 2), False), ((2, 0), True)):
        ref = _norm_ref(lambda t, d=dims, k=keepdim: torch.linalg.vector_norm(t, p, d, k), x)
        got = torch.linalg.vector_norm(xo, p, dims, keepdim)
        assert_ocl_close(got, ref)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("p", [1, 2, 2.5, INF], ids=lambda p: f"p{p}")
def test_vector_norm_dtypes(dtype, p):
    skip_unsupported(dtype)
    x = make_cpu((9, 11), dtype)
    xo = x.to(DEVICE)
    assert_ocl_close(torch.linalg.vector_norm(xo, p, 1), _norm_ref(
        lambda t: torch.linalg.vector_norm(t, p, 1), x))  # fmt: skip
    # dtype=: the input is converted first, the result has that dtype
    wide = torch.float64 if dtype == torch.float64 else torch.float32
    assert_ocl_close(
        torch.linalg.vector_norm(xo, p, dtype=wide),
        _norm_ref(lambda t: torch.linalg.vector_norm(t, p), x, wide),
    )


def test_norm_entry_points():
    """torch.norm (p number, 'fro', dims, dtype=), linalg.norm's vector and Frobenius cases,
    frobenius_norm, dist: all reach the native norm."""
    x = make_cpu((8, 6), torch.float32)
    xo = x.to(DEVICE)
    cases = {
        "norm": lambda t: torch.norm(t),
        "norm_p3_dim": lambda t: torch.norm(t, 3, 1),
        "norm_fro_dims": lambda t: torch.norm(t, "fro", (0, 1), keepdim=True),
        "norm_inf_dim": lambda t: torch.norm(t, INF, 0),
        "norm_dtype": lambda t: torch.norm(t, 2, 1, dtype=torch.float64),
        "linalg_norm_vector": lambda t: torch.linalg.norm(t[0]),
        "linalg_norm_ord_dim": lambda t: torch.linalg.norm(t, -INF, 1),
        "linalg_norm_fro": lambda t: torch.linalg.norm(t),
        "matrix_norm_fro": lambda t: torch.linalg.matrix_norm(t),
        "matrix_norm_1": lambda t: torch.linalg.matrix_norm(t, 1),
        "frobenius_norm": lambda t: torch.frobenius_norm(t, (0, 1)),
        "dist": lambda t: torch.dist(t, t * 0.5 + 1, 3),
        "tensor_norm_method": lambda t: t.norm(p=1, dim=1),
    }
    for name, fn in cases.items():
        ref = fn(x.double())
        got = fn(xo)
        assert_ocl_close(got, ref.to(got.dtype)), name


def test_norm_special_values_and_single_element_dims():
    x = torch.tensor([[1.0, NAN, -3.0], [0.0, -2.0, 1.0], [INF, -2.0, 0.5], [0.0, 0.0, 0.0]])
    xo = x.to(DEVICE)
    for p in NORM_PS:
        assert_ocl_close(torch.linalg.vector_norm(xo, p, 1), torch.linalg.vector_norm(x, p, 1))
    # reducing only size-1 dims: ATen's path returns |x| (or x != 0 for p=0)
    y = make_cpu((4, 1, 3), torch.float32)
    for p in (0, 3, INF):
        assert_ocl_close(
            torch.linalg.vector_norm(y.to(DEVICE), p, 1), torch.linalg.vector_norm(y, p, 1)
        )


def test_norm_errors_and_empty_like_cpu():
    e = torch.empty(0, 3)
    for p in (0, 1, 2):
        assert_ocl_close(
            torch.linalg.vector_norm(e.to(DEVICE), p, 0), torch.linalg.vector_norm(e, p, 0)
        )
    for p in (INF, -1):
        _raises_like_cpu(lambda t, d, p=p: torch.linalg.vector_norm(t, p, 0), e)
    _raises_like_cpu(lambda t, d: torch.linalg.vector_norm(t), torch.arange(4))
    _raises_like_cpu(lambda t, d: torch.norm(t, 2, 0), torch.arange(4))
    x = make_cpu((3, 4), torch.float32)
    _raises_like_cpu(lambda t, d: torch.linalg.vector_norm(t, 2, 1, out=_e(torch.float64, d)), x)
    out = torch.empty(0, device=DEVICE)
    torch.linalg.vector_norm(x.to(DEVICE), 2, 1, out=out)
    assert_ocl_close(out, torch.linalg.vector_norm(x, 2, 1))


@pytest.mark.slow
def test_norm_huge_like_float64():
    n = 10_000_000
    x = torch.randn(n, generator=torch.Generator().manual_seed(4))
    xo = x.to(DEVICE)
    for p in (1, 2, 3):
        ref = torch.linalg.vector_norm(x.double(), p).item()
        got = torch.linalg.vector_norm(xo, p).cpu().item()
        assert abs(got - ref) <= 1e-5 * ref, (p, got, ref)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=dtype_id
)
def test_renorm_like_cpu(dtype):
    skip_unsupported(dtype)
    x = make_cpu((4, 5, 3), dtype)
    xo = x.to(DEVICE)
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 2.0), (3, -1, 0.5), (INF, 2, 1.0), (2, 0, 100.0)):
        ref = torch.renorm(x.double(), p, dim, maxnorm).to(dtype)
        assert_ocl_close(torch.renorm(xo, p, dim, maxnorm), ref)
    y = xo.clone()
    y.renorm_(2, 1, 1.5)
    assert_ocl_close(y, torch.renorm(x.double(), 2, 1, 1.5).to(dtype))
    out = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.renorm(xo, 2, 0, 1.0, out=out)
    assert_ocl_close(out, torch.renorm(x.double(), 2, 0, 1.0).to(dtype))
    _raises_like_cpu(lambda t, d: torch.renorm(t, -1, 0, 1.0), x)
    _raises_like_cpu(lambda t, d: torch.renorm(t, 2, 0, -1.0), x)


# ------------------------------------------------------------------------------------------
# nansum / nanmean, count_nonzero, aminmax, prod over a dim, logsumexp


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=dtype_id
)
def test_nansum_nanmean_like_cpu(dtype):
    skip_unsupported(dtype)
    x = make_cpu((6, 9), dtype)
    x[0, 1] = x[3, 3] = x[3, 8] = NAN
    x[5, :] = NAN  # all NaN: nansum 0, nanmean NaN
    x[4, 2] = INF
    xo = x.to(DEVICE)
    for dims in (None, 0, 1, (0, 1)):
        for fn in (torch.nansum, torch.nanmean):
            ref = fn(x.double(), dims).to(dtype)
            rtol, atol = TOLERANCES[dtype]
            assert_ocl_close(fn(xo, dims), ref, rtol=4 * rtol, atol=atol)
    assert_ocl_close(
        torch.nansum(xo, 1, keepdim=True, dtype=torch.float64),
        torch.nansum(x.double(), 1, keepdim=True),
    )


@pytest.mark.parametrize("dtype", [torch.int32, torch.uint8, torch.bool], ids=dtype_id)
def test_nansum_of_integers_like_cpu(dtype):
    x = make_cpu((5, 7), dtype)
    xo = x.to(DEVICE)
    assert_ocl_close(torch.nansum(xo), torch.nansum(x))
    assert_ocl_close(torch.nansum(xo, 0), torch.nansum(x, 0))
    _raises_like_cpu(lambda t, d: torch.nanmean(t), x)


def test_nansum_out_and_empty():
    x = make_cpu((4, 6), torch.float32)
    x[1, 1] = NAN
    out = torch.empty(0, device=DEVICE)
    torch.nansum(x.to(DEVICE), 1, out=out)
    assert_ocl_close(out, torch.nansum(x, 1))
    e = torch.empty(0, 3)
    assert_ocl_close(torch.nansum(e.to(DEVICE), 0), torch.nansum(e, 0))
    assert_ocl_close(torch.nanmean(e.to(DEVICE), 0), torch.nanmean(e, 0))
    _raises_like_cpu(
        lambda t, d: torch.nansum(t, 1, dtype=torch.float64, out=_e(torch.float32, d)), x
    )


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool], ids=dtype_id
)
def test_count_nonzero_like_cpu(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 4, 6), dtype, low=-2, high=3)
    if dtype.is_floating_point:
        x[0, 0, 0] = -0.0  # not counted
        x[0, 0, 1] = NAN  # counted
        x[1, 1, :] = 0.25  # counted, though it truncates to 0
    xo = x.to(DEVICE)
    for dims in (None, 0, -1, (0, 2), (2, 0, 1), ()):
        assert_ocl_close(torch.count_nonzero(xo, dims), torch.count_nonzero(x, dims))
    assert_ocl_close(
        torch.count_nonzero(xo.transpose(0, 2), 1), torch.count_nonzero(x.transpose(0, 2), 1)
    )
    _raises_like_cpu(lambda t, d: torch.count_nonzero(t, (0, 0)), x)
    _raises_like_cpu(lambda t, d: torch.count_nonzero(t, 3), x)


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.uint8, torch.bool],
    ids=dtype_id,
)
def test_aminmax_like_cpu(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 8), dtype)
    xo = x.to(DEVICE)
    for kwargs in ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"keepdim": True}):
        got, ref = torch.aminmax(xo, **kwargs), torch.aminmax(x, **kwargs)
        assert_ocl_close(got.min, ref.min, exact=True)
        assert_ocl_close(got.max, ref.max, exact=True)
    got, ref = torch.aminmax(xo.t(), dim=1), torch.aminmax(x.t(), dim=1)
    assert_ocl_close(got.max, ref.max, exact=True)


def test_aminmax_nan_empty_and_out():
    x = torch.tensor([[1.0, NAN, 3.0], [-INF, 2.0, INF]])
    xo = x.to(DEVICE)
    got, ref = torch.aminmax(xo, dim=1), torch.aminmax(x, dim=1)
    assert_ocl_close(got.min, ref.min)
    assert_ocl_close(got.max, ref.max)
    _raises_like_cpu(lambda t, d: torch.aminmax(t), torch.empty(0))
    _raises_like_cpu(lambda t, d: torch.aminmax(t, dim=1), torch.empty(2, 0))
    mn, mx = torch.empty(0, device=DEVICE), torch.empty(0, device=DEVICE)
    torch.aminmax(xo, dim=0, out=(mn, mx))
    ref = torch.aminmax(x, dim=0)
    assert_ocl_close(mn, ref.min)
    assert_ocl_close(mx, ref.max)
    _raises_like_cpu(
        lambda t, d: torch.aminmax(t, dim=0, out=(_e(torch.float64, d), _e(torch.float32, d))), x
    )


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.int64, torch.int8, torch.bool], ids=dtype_id
)
def test_prod_dim_like_cpu(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 6, 3), dtype, low=-2, high=3) if not dtype.is_floating_point else (
        make_cpu((5, 6, 3), dtype, low=0.5, high=1.5))  # fmt: skip
    xo = x.to(DEVICE)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            ref = torch.prod(x.double() if dtype.is_floating_point else x, dim, keepdim)
            assert_ocl_close(torch.prod(xo, dim, keepdim), ref.to(torch.prod(x, dim).dtype))
    assert_ocl_close(torch.prod(xo, 1, dtype=torch.float64), torch.prod(x, 1, dtype=torch.float64))
    out = torch.empty(0, dtype=torch.prod(x, 0).dtype, device=DEVICE)
    torch.prod(xo.transpose(0, 1), 1, out=out)
    assert_ocl_close(out, torch.prod(x.transpose(0, 1), 1))


def test_prod_to_bool_and_empty_like_cpu():
    x = torch.tensor([[0.5, 2.0], [0.0, 3.0]])
    xo = x.to(DEVICE)
    assert_ocl_close(torch.prod(xo, 1, dtype=torch.bool), torch.prod(x, 1, dtype=torch.bool))
    assert_ocl_close(torch.prod(xo, dtype=torch.bool), torch.prod(x, dtype=torch.bool))
    e = torch.empty(3, 0)
    assert_ocl_close(torch.prod(e.to(DEVICE), 1), torch.prod(e, 1))
    _raises_like_cpu(lambda t, d: torch.prod(t, 2), x)


def test_logsumexp_like_cpu():
    x = make_cpu((6, 9), torch.float32, low=-30, high=30)
    x[0, :] = -INF  # all -inf: -inf
    x[1, 3] = INF  # +inf: inf
    x[2, 4] = NAN  # NaN
    x[3, :2] = 80.0  # exp would overflow without the max shift
    xo = x.to(DEVICE)
    for dims, keepdim in ((1, False), (0, True), ((0, 1), False)):
        ref = torch.logsumexp(x.double(), dims, keepdim).float()
        assert_ocl_close(torch.logsumexp(xo, dims, keepdim), ref)
    i = torch.arange(12).view(3, 4)
    assert_ocl_close(torch.logsumexp(i.to(DEVICE), 1), torch.logsumexp(i, 1))
    h = make_cpu((4, 5), torch.float16)
    assert_ocl_close(torch.logsumexp(h.to(DEVICE), 1), torch.logsumexp(h.double(), 1).half())


# ------------------------------------------------------------------------------------------
# gradients (ATen's backward formulas on native ops)

GRAD_CASES = {
    "var": lambda t: t.var(1),
    "std_correction0": lambda t: t.std(0, correction=0),
    "var_mean": lambda t: sum(r.sum() for r in torch.var_mean(t, 1)),
    "std_mean_all": lambda t: sum(r.sum() for r in torch.std_mean(t)),
    "norm2": lambda t: torch.linalg.vector_norm(t, 2, 1),
    "norm1": lambda t: torch.linalg.vector_norm(t, 1),
    "norm_inf": lambda t: torch.linalg.vector_norm(t, INF, 1),
    "fro": lambda t: torch.norm(t, "fro"),
    "logsumexp": lambda t: torch.logsumexp(t, 1),
    "nansum": lambda t: torch.nansum(t, 1),
    "nanmean": lambda t: torch.nanmean(t, 0),
    "prod_dim_nonzero": lambda t: t.prod(1),
    "aminmax": lambda t: sum(r.sum() for r in torch.aminmax(t, dim=1)),
    "renorm": lambda t: torch.renorm(t, 2, 0, 1.0),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_reduction_gradients_like_cpu(name):
    fn = GRAD_CASES[name]
    x = make_cpu((4, 6), torch.float64, nonzero=True)
    if name.startswith("nan"):
        x[1, 2] = NAN
    grads = []
    for t in (x.clone(), x.to(DEVICE)):
        t.requires_grad_()
        (g,) = torch.autograd.grad(fn(t).sum(), t)
        grads.append(g)
    assert_ocl_close(grads[1].float(), grads[0].float())
