"""Sorting and selection on the ocl device: sort (stable, descending, NaN largest), argsort,
msort, topk, kthvalue, median and nanmedian (with and without dim), mode, against PyTorch on the
CPU.

kernels/sort.cl sorts tiles of up to a few thousand elements in local memory (several short rows
per tile) and merges longer rows in passes; the `long` shapes below take the merge route. Every
sort is stable, so indices are compared exactly wherever the CPU's choice among equal values is
specified (stable sort, median); where it is not (topk, kthvalue, mode, an unstable sort), the
data has no ties, or the test checks that each index selects its value.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")

SORT_DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
]

# (shape, dim)
CASES = [
    ((0,), 0),
    ((3, 0), 1),
    ((1,), 0),
    ((), 0),
    ((7, 13), 1),
    ((13, 7), 0),
    ((4, 5, 6), 1),
    ((3, 2500), 1),  # rows longer than a tile: merge passes
    ((2049, 2), 0),  # a long strided dimension
]
CASE_IDS = ["empty", "empty_3x0", "one", "zero_dim", "rows", "cols", "middle", "long", "long_col"]


def with_ties_and_specials(shape, dtype, seed=0):
    """Values with many ties; floats also get NaN, -0.0 / 0.0, +-inf."""
    x = make_cpu(shape, dtype, low=-5, high=6, integral=True, seed=seed)
    if dtype.is_floating_point and x.numel() > 10:
        flat = x.view(-1)
        flat[0], flat[3], flat[4], flat[6], flat[8], flat[9] = NAN, -0.0, 0.0, INF, -INF, NAN
    return x


def distinct(shape, dtype, seed=0):
    """Values without ties (a random permutation of distinct values)."""
    n = 1
    for s in shape:
        n *= s
    g = torch.Generator().manual_seed(seed)
    vals = torch.randperm(max(n, 1), generator=g)[:n].to(torch.float64) - n / 2
    if dtype.is_floating_point:
        vals = vals / 4
    return vals.reshape(shape).to(dtype)


@pytest.mark.parametrize(("shape", "dim"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_sort_stable_float(shape, dim, descending):
    x = with_ties_and_specials(shape, torch.float32)
    v, i = torch.sort(x.to(DEVICE), dim=dim, descending=descending, stable=True)
    cv, ci = torch.sort(x, dim=dim, descending=descending, stable=True)
    assert_ocl_close(v, cv, exact=True)
    assert_ocl_close(i, ci)


@pytest.mark.parametrize("dtype", SORT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(5, 37), (2, 3000)], ids=["short", "long"])
def test_sort_dtypes(dtype, shape):
    skip_unsupported(dtype)
    x = with_ties_and_specials(shape, dtype, seed=1)
    for descending in (False, True):
        v, i = torch.sort(x.to(DEVICE), dim=1, descending=descending, stable=True)
        cv, ci = torch.sort(x, dim=1, descending=descending, stable=True)
        assert_ocl_close(v, cv, exact=True)
        assert_ocl_close(i, ci)


def test_sort_keeps_the_bits():
    """-0.0 and 0.0 are equal (stable order), and NaNs keep their sign and payload."""
    bits = torch.tensor([0x7FC00001, 0x80000000, 0x00000000, 0xFFC00000, 0x3F800000],
                        dtype=torch.int64).to(torch.int32)  # fmt: skip
    x = bits.view(torch.float32)
    v, i = torch.sort(x.to(DEVICE))
    cv, ci = torch.sort(x, stable=True)
    assert torch.equal(v.cpu().view(torch.int32), cv.view(torch.int32))
    assert_ocl_close(i, ci)


def test_sort_unstable_gives_a_valid_sort():
    """stable=False: the CPU's order among equal values is unspecified; ours is the stable one."""
    x = with_ties_and_specials((4, 300), torch.float32)
    v, i = torch.sort(x.to(DEVICE), dim=1)
    cv, ci = torch.sort(x, dim=1, stable=True)
    assert_ocl_close(v, cv, exact=True)
    assert_ocl_close(i, ci)


def test_argsort_msort_and_out():
    x = with_ties_and_specials((6, 50), torch.float32)
    xo = x.to(DEVICE)
    assert_ocl_close(torch.argsort(xo, dim=1, stable=True), torch.argsort(x, dim=1, stable=True))
    assert_ocl_close(torch.argsort(xo, dim=0, descending=True, stable=True),
                     torch.argsort(x, dim=0, descending=True, stable=True))  # fmt: skip
    assert_ocl_close(torch.msort(xo), torch.sort(x, dim=0, stable=True)[0], exact=True)
    # out= with strided outputs, and out= the input itself
    v = torch.empty(50, 6, device=DEVICE).t()
    i = torch.empty(50, 6, dtype=torch.long, device=DEVICE).t()
    torch.sort(xo, dim=1, stable=True, out=(v, i))
    cv, ci = torch.sort(x, dim=1, stable=True)
    assert_ocl_close(v, cv, exact=True)
    assert_ocl_close(i, ci)
    y = xo.clone()
    torch.sort(y, dim=1, stable=True, out=(y, torch.empty(0, dtype=torch.long, device=DEVICE)))
    assert_ocl_close(y, cv, exact=True)


@pytest.mark.parametrize(("shape", "dim"), CASES, ids=CASE_IDS)
def test_topk(shape, dim):
    x = distinct(shape, torch.float32)
    n = shape[dim] if len(shape) else 1
    for k in sorted({0, min(1, n), n // 2, n}):
        for largest in (True, False):
            v, i = torch.topk(x.to(DEVICE), k, dim, largest)
            cv, ci = torch.topk(x, k, dim, largest)
            assert_ocl_close(v, cv, exact=True)
            assert_ocl_close(i, ci)


def test_topk_ties_nan_and_unsorted():
    x = with_ties_and_specials((5, 300), torch.float32)
    xo = x.to(DEVICE)
    for largest in (True, False):
        v, i = torch.topk(xo, 17, 1, largest)
        cv, _ = torch.topk(x, 17, 1, largest)
        assert_ocl_close(v, cv, exact=True)
        assert torch.equal(x.gather(1, i.cpu()).view(torch.int32), v.cpu().view(torch.int32))
        # sorted=False: any order of the same elements
        u, _ = torch.topk(xo, 17, 1, largest, sorted=False)
        assert torch.equal(u.cpu().sort(1)[0].view(torch.int32), cv.sort(1)[0].view(torch.int32))
    xi = with_ties_and_specials((3, 40), torch.int32)
    assert_ocl_close(torch.topk(xi.to(DEVICE), 5)[0], torch.topk(xi, 5)[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16], ids=dtype_id)
def test_topk_small_k_of_long_rows(dtype):
    """k <= 16 of rows longer than half a tile: selected without sorting the rows (topk_select),
    ties broken by position as the stable sort does, NaN largest."""
    x = with_ties_and_specials((3, 5000), dtype, seed=4)
    xt = with_ties_and_specials((4000, 3), dtype, seed=5)
    for data, dim in ((x, 1), (xt, 0)):
        for k in (1, 5, 16):
            for largest in (True, False):
                v, i = torch.topk(data.to(DEVICE), k, dim, largest)
                cv, ci = torch.sort(data, dim=dim, descending=largest, stable=True)
                assert_ocl_close(v, cv.narrow(dim, 0, k), exact=True)
                assert_ocl_close(i, ci.narrow(dim, 0, k))


@pytest.mark.parametrize(("shape", "dim"), CASES[2:], ids=CASE_IDS[2:])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(shape, dim, keepdim):
    x = distinct(shape, torch.float32)
    n = shape[dim] if len(shape) else 1
    for k in sorted({1, (n + 1) // 2, n}):
        v, i = torch.kthvalue(x.to(DEVICE), k, dim, keepdim)
        cv, ci = torch.kthvalue(x, k, dim, keepdim)
        assert_ocl_close(v, cv, exact=True)
        assert_ocl_close(i, ci)


def test_kthvalue_ties_and_int():
    x = with_ties_and_specials((4, 31), torch.float32)
    v, i = torch.kthvalue(x.to(DEVICE), 20, 1)
    assert_ocl_close(v, torch.kthvalue(x, 20, 1)[0], exact=True)
    assert torch.equal(x.gather(1, i.cpu()[:, None])[:, 0].view(torch.int32),
                       v.cpu().view(torch.int32))  # fmt: skip
    xi = distinct((5, 9), torch.int64)
    assert_ocl_close(torch.kthvalue(xi.to(DEVICE), 3, 0)[1], torch.kthvalue(xi, 3, 0)[1])


@pytest.mark.parametrize("fn", [torch.median, torch.nanmedian], ids=["median", "nanmedian"])
@pytest.mark.parametrize(("shape", "dim"), CASES[2:], ids=CASE_IDS[2:])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median_dim(fn, shape, dim, keepdim):
    """Values and indices exactly: the CPU picks by (value, index), NaNs as ours."""
    x = with_ties_and_specials(shape, torch.float32)
    v, i = fn(x.to(DEVICE), dim, keepdim)
    cv, ci = fn(x, dim, keepdim)
    assert_ocl_close(v, cv, exact=True)
    assert_ocl_close(i, ci)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8],
                         ids=dtype_id)  # fmt: skip
def test_median_all_and_dtypes(dtype):
    for seed, shape in enumerate([(1,), (7,), (4, 6), (3, 1001)]):
        x = with_ties_and_specials(shape, dtype, seed=seed)
        for fn in (torch.median, torch.nanmedian):
            assert_ocl_close(fn(x.to(DEVICE)), fn(x), exact=True)
            assert_ocl_close(fn(x.to(DEVICE), -1)[1], fn(x, -1)[1])


def test_median_nan_rows():
    x = torch.tensor(
        [[1.0, NAN, 3.0, NAN, 2.0], [5.0, 4.0, 3.0, 2.0, 1.0], [NAN, 0.0, NAN, 1.0, 2.0]]
    )
    for fn in (torch.median, torch.nanmedian):
        v, i = fn(x.to(DEVICE), 1)
        cv, ci = fn(x, 1)
        assert_ocl_close(v, cv, exact=True)
        assert_ocl_close(i, ci)
        assert_ocl_close(fn(x.to(DEVICE)), fn(x), exact=True)
    # every element NaN: NaN (the CPU's index among the NaNs is unspecified)
    allnan = torch.full((2, 4), NAN)
    assert torch.isnan(torch.nanmedian(allnan.to(DEVICE), 1)[0].cpu()).all()
    assert torch.isnan(torch.median(torch.empty(0, device=DEVICE)).cpu())


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=dtype_id)
@pytest.mark.parametrize(("shape", "dim"), [((7, 13), 1), ((13, 7), 0), ((3, 2500), 1)])
def test_mode(dtype, shape, dim):
    """The value exactly (the smallest of the most frequent); the index selects that value (the
    CPU's choice among its occurrences is unspecified)."""
    x = make_cpu(shape, dtype, low=0, high=4, integral=True)
    for keepdim in (False, True):
        v, i = torch.mode(x.to(DEVICE), dim, keepdim)
        cv, _ = torch.mode(x, dim, keepdim)
        assert_ocl_close(v, cv)
        idx = i.cpu() if keepdim else i.cpu().unsqueeze(dim)
        picked = x.gather(dim, idx)
        assert torch.equal(picked if keepdim else picked.squeeze(dim), cv)


def test_mode_out_and_scalar():
    x = make_cpu((5, 8), torch.int32, low=0, high=3)
    v = torch.empty(0, dtype=torch.int32, device=DEVICE)
    i = torch.empty(0, dtype=torch.long, device=DEVICE)
    torch.mode(x.to(DEVICE), 1, out=(v, i))
    assert_ocl_close(v, torch.mode(x, 1)[0])
    s = torch.tensor(3.5)
    assert_ocl_close(torch.mode(s.to(DEVICE))[0], torch.mode(s)[0])


def test_errors_match_the_cpu():
    x = make_cpu((3, 4), torch.float32)
    for dev in ("cpu", DEVICE):
        xd = x.to(dev)
        with pytest.raises(RuntimeError, match="selected index k out of range"):
            torch.topk(xd, 5, 1)
        with pytest.raises(RuntimeError, match="selected number k out of range"):
            torch.kthvalue(xd, 0, 1)
        with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
            torch.median(torch.empty(3, 0, device=dev), 1)
        with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
            torch.mode(torch.empty(3, 0, device=dev), 1)
        with pytest.raises(IndexError, match="Dimension out of range"):
            torch.sort(xd, dim=2)
        with pytest.raises(RuntimeError, match="indices"):
            torch.median(xd, 1, out=(torch.empty(0, device=dev), torch.empty(0, device=dev)))
    assert_ocl_close(torch.sort(x.to(DEVICE))[0], torch.sort(x)[0])


def test_no_host_wait():
    x = make_cpu((8, 3000), torch.float32).to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.sort(x, dim=1)
    torch.topk(x, 3)
    torch.kthvalue(x, 2)
    torch.median(x, 1)
    torch.median(x)
    torch.mode(x, 0)
    assert torch.ocl.host_wait_count() == before


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=dtype_id)
def test_large(dtype):
    x = with_ties_and_specials((10**6,), dtype)
    v, i = torch.sort(x.to(DEVICE), stable=True)
    cv, ci = torch.sort(x, stable=True)
    assert_ocl_close(v, cv, exact=True)
    assert_ocl_close(i, ci)
    assert_ocl_close(torch.median(x.to(DEVICE)), torch.median(x), exact=True)
