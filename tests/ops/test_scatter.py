"""The scatter family (csrc/ops/Scatter.cpp on kernels/index.cl) against CPU torch: gather,
scatter (src, value, reduce='add'/'multiply'), scatter_add, scatter_reduce (sum, prod, mean, amax,
amin; include_self both ways), index_add (alpha), index_copy, index_fill (scalar, CPU and device
tensor values). Every dtype, duplicate indices combined in every dtype (sub-word elements too),
non-contiguous and 0-dim tensors, empty indices, in-place and out= variants, NaN in max/min, the
CPU's argument errors, and out-of-range indices raised at the next wait."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import (
    ALL_DTYPES,
    DEVICE,
    TOLERANCES,
    dtype_id,
    make_cpu,
    skip_unsupported,
)

NUMERIC_DTYPES = tuple(d for d in ALL_DTYPES if d != torch.bool)


def _dev(x):
    return x.to(DEVICE) if isinstance(x, torch.Tensor) else x


def _exact(actual, expected):
    got = actual.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    torch.testing.assert_close(got, expected, rtol=0, atol=0, equal_nan=True)


def _close(actual, expected, dtype, factor=4):
    """A result that combines values in another order than the CPU's, against a reference."""
    got = actual.cpu()
    assert got.dtype == dtype and got.shape == expected.shape
    if dtype.is_floating_point:
        rtol, atol = TOLERANCES[dtype]
        torch.testing.assert_close(
            got.double(),
            expected.double(),
            rtol=rtol * factor,
            atol=atol * factor,
            equal_nan=True,
        )
    else:
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


def _wide(dtype):
    if dtype.is_floating_point:
        return torch.float64
    return torch.int64 if dtype != torch.bool else torch.bool


def _index(shape, high, seed):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))


def _both(fn, *args):
    """fn on the CPU arguments and on their device copies."""
    return fn(*args), fn(*[_dev(a) for a in args])


# --------------------------------------------------------------------------------------------
# gather


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_gather(dim, dtype):
    skip_unsupported(dtype)
    x = make_cpu((4, 5, 6), dtype, seed=1)
    shape = [3, 4, 5]  # smaller than x in every dim
    index = _index(shape, x.shape[dim], seed=2)
    expected, got = _both(lambda t, i: t.gather(dim, i), x, index)
    _exact(got, expected)


def test_gather_layouts_and_out():
    x = make_cpu((6, 7), torch.float32, seed=3)
    index = _index((5, 3), 6, seed=4)
    cases = [
        (x.t(), 1, index.t()),  # both transposed
        (x, 0, index[:, ::2]),  # a strided index
        (x[::2], 0, index[:3].clamp(max=2)),
        (make_cpu((), torch.float32, seed=5), 0, torch.tensor(0)),  # 0-dim
        (make_cpu((4,), torch.float32, seed=6), 0, torch.tensor(3)),  # 0-dim index, 1-d self
        (x, 1, torch.empty(0, 7, dtype=torch.int64)),
        (x, 0, x.new_empty((6, 0)).long()),
    ]
    for src, dim, idx in cases:
        expected, got = _both(lambda t, i, d=dim: t.gather(d, i), src, idx)
        _exact(got, expected)
    out = torch.empty(0, device=DEVICE)
    torch.gather(x.to(DEVICE), 1, index.to(DEVICE), out=out)
    _exact(out, x.gather(1, index))
    out_t = torch.empty(3, 5, device=DEVICE).t()
    torch.gather(x.to(DEVICE), 1, index.to(DEVICE), out=out_t)
    _exact(out_t, x.gather(1, index))


def test_int32_indices():
    x = make_cpu((5, 6), torch.float32, seed=52)
    src = make_cpu((5, 6), torch.float32, seed=53)
    index = _index((4, 6), 5, seed=54).int()
    fns = [
        lambda t, i, s: t.gather(0, i),
        lambda t, i, s: t.scatter_add(0, i, s),
        lambda t, i, s: t.scatter_reduce(0, i, s, "amin", include_self=False),
    ]
    for fn in fns:
        try:
            expected = fn(x, index, src)
        except RuntimeError as exc:  # not every op takes int32 indices on the CPU
            with pytest.raises(RuntimeError, match=str(exc).splitlines()[0][:30]):
                fn(x.to(DEVICE), index.to(DEVICE), src.to(DEVICE))
            continue
        _close(fn(x.to(DEVICE), index.to(DEVICE), src.to(DEVICE)), expected, torch.float32)


def test_gather_errors_like_cpu():
    x = make_cpu((3, 4), torch.float32)
    cases = [
        lambda t, d: t.gather(0, torch.tensor([[0.0]], device=d)),
        lambda t, d: t.gather(0, torch.tensor([0], device=d)),  # rank
        lambda t, d: t.gather(1, torch.zeros(4, 1, dtype=torch.int64, device=d)),  # size
        lambda t, d: t.gather(2, torch.zeros(1, 1, dtype=torch.int64, device=d)),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_exc:
            fn(x, "cpu")
        with pytest.raises(type(cpu_exc.value)):
            fn(x.to(DEVICE), DEVICE)


@pytest.mark.parametrize("bad", [3, -1])
def test_gather_out_of_range_raises_at_the_next_wait(bad):
    x = make_cpu((3, 4), torch.float32, seed=7)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.gather(0, torch.tensor([[0, bad]]))  # the CPU raises too (no wrapping)
    r = x.to(DEVICE).gather(0, torch.tensor([[0, bad]], device=DEVICE))
    with pytest.raises(RuntimeError, match="out of bounds"):
        r.cpu()
    _exact(
        x.to(DEVICE).gather(0, torch.tensor([[2, 1]], device=DEVICE)),
        x.gather(0, torch.tensor([[2, 1]])),
    )


# --------------------------------------------------------------------------------------------
# scatter: src, value, and the old reduce= argument


def _unique_index(shape, dim, size, seed):
    """An index whose entries along `dim` are distinct (scatter without a reduction keeps an
    unspecified one of duplicates on every device)."""
    g = torch.Generator().manual_seed(seed)
    n = shape[dim]
    count = int(torch.tensor(shape).prod()) // n
    rows = [torch.randperm(size, generator=g)[:n] for _ in range(count)]
    idx = torch.stack(rows)  # [rest, n]
    moved = list(shape)
    moved.pop(dim)
    return idx.view(*moved, n).movedim(-1, dim).contiguous()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_scatter_src_and_value(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 6), dtype, seed=8)
    src = make_cpu((4, 6), dtype, seed=9)
    for dim, shape in ((0, (3, 4)), (1, (4, 5))):
        index = _unique_index(shape, dim, x.shape[dim], seed=10 + dim)
        expected, got = _both(lambda t, i, s, dim=dim: t.scatter(dim, i, s), x, index, src)
        _exact(got, expected)
        value = True if dtype == torch.bool else -3
        expected, got = _both(lambda t, i, dim=dim, v=value: t.scatter(dim, i, v), x, index)
        _exact(got, expected)


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=dtype_id)
def test_scatter_reduce_argument(reduce, dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 6), dtype, seed=11, low=-3, high=3)
    src = make_cpu((7, 6), dtype, seed=12, low=-3, high=3)
    index = _index((7, 6), 5, seed=13)  # duplicates
    expected = x.to(_wide(dtype)).scatter(0, index, src.to(_wide(dtype)), reduce=reduce).to(dtype)
    _close(
        x.to(DEVICE).scatter(0, index.to(DEVICE), src.to(DEVICE), reduce=reduce), expected, dtype
    )
    expected = x.to(_wide(dtype)).scatter(0, index, 2, reduce=reduce).to(dtype)
    _close(x.to(DEVICE).scatter(0, index.to(DEVICE), 2, reduce=reduce), expected, dtype)


def test_scatter_inplace_and_out():
    x = make_cpu((6, 5), torch.float32, seed=14)
    src = make_cpu((6, 5), torch.float32, seed=15)
    index = _unique_index((4, 5), 0, 6, seed=16)
    dev = x.to(DEVICE)
    r = dev.scatter_(0, index.to(DEVICE), src.to(DEVICE))
    assert r is dev
    _exact(dev, x.clone().scatter_(0, index, src))
    dev_t = x.to(DEVICE).t()  # a non-contiguous self, in place
    cpu_t = x.clone().t()
    dev_t.scatter_(1, index.t().to(DEVICE), src.t().to(DEVICE))
    cpu_t.scatter_(1, index.t(), src.t())
    _exact(dev_t, cpu_t)
    out = torch.empty(0, device=DEVICE)
    torch.scatter(x.to(DEVICE), 0, index.to(DEVICE), 1.5, out=out)
    _exact(out, torch.scatter(x, 0, index, 1.5))


def test_scatter_errors_like_cpu():
    x = make_cpu((3, 4), torch.float32)
    cases = [
        lambda t, d: t.scatter(
            0,
            torch.zeros(1, 1, dtype=torch.int64, device=d),
            torch.ones(1, 1, dtype=torch.float64, device=d),
        ),
        lambda t, d: t.scatter(
            0, torch.zeros(4, 1, dtype=torch.int64, device=d), torch.ones(1, 1, device=d)
        ),  # index larger than src
        lambda t, d: t.scatter(
            0, torch.zeros(1, 1, dtype=torch.int64, device=d), 1.0, reduce="max"
        ),
        lambda t, d: t.scatter_reduce(
            0, torch.zeros(1, 1, dtype=torch.int64, device=d), torch.ones(1, 1, device=d), "avg"
        ),
        lambda t, d: t.scatter_(
            0, torch.zeros(1, 1, dtype=torch.int64, device=d), t[:1, :1]
        ),  # src overlaps self
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_exc:
            fn(x.clone(), "cpu")
        with pytest.raises(type(cpu_exc.value)):
            fn(x.to(DEVICE), DEVICE)


def test_scatter_out_of_range_raises_at_the_next_wait():
    x = torch.zeros(3, 4, device=DEVICE)
    x.scatter_(0, torch.tensor([[1, 3]], device=DEVICE), 1.0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.cpu()


# --------------------------------------------------------------------------------------------
# scatter_add and scatter_reduce: duplicates combine every contribution


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_scatter_add_duplicates(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 6), dtype, seed=17)
    src = make_cpu((9, 6), dtype, seed=18)
    for dim, shape in ((0, (9, 6)), (1, (5, 4))):
        index = _index(shape, x.shape[dim], seed=19 + dim)
        wide = _wide(dtype)
        expected = x.to(wide).scatter_add(dim, index, src.to(wide)[: shape[0], : shape[1]])
        got = x.to(DEVICE).scatter_add(dim, index.to(DEVICE), src.to(DEVICE))
        _close(got, expected.to(dtype), dtype)


def test_scatter_add_sub_word_contention():
    # Elements of 1 and 2 bytes share 32-bit words: every update of every neighbour must land.
    for dtype in (torch.int8, torch.uint8, torch.int16, torch.float16, torch.bfloat16, torch.bool):
        x = torch.zeros(9, dtype=dtype)
        index = torch.arange(9).repeat(100)
        src = torch.ones(index.numel(), dtype=dtype)
        expected = x.scatter_add(0, index, src)
        _exact(x.to(DEVICE).scatter_add(0, index.to(DEVICE), src.to(DEVICE)), expected)


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_scatter_reduce(dtype, reduce, include_self):
    skip_unsupported(dtype)
    if dtype == torch.bool and reduce == "mean":
        pytest.skip("the CPU has no scatter_reduce mean for bool")
    x = make_cpu((5, 4), dtype, seed=20, low=-2, high=3)
    src = make_cpu((8, 4), dtype, seed=21, low=-2, high=3)
    index = _index((8, 4), 4, seed=22)  # row 4 of x is never hit: include_self matters
    kwargs = dict(include_self=include_self)
    if dtype.is_floating_point:
        expected = x.double().scatter_reduce(0, index, src.double(), reduce, **kwargs).to(dtype)
    else:
        expected = x.scatter_reduce(0, index, src, reduce, **kwargs)
    got = x.to(DEVICE).scatter_reduce(0, index.to(DEVICE), src.to(DEVICE), reduce, **kwargs)
    _close(got, expected, dtype)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_nan_wins(reduce):
    x = torch.tensor([1.0, float("nan"), 3.0, -0.0])
    src = torch.tensor([float("nan"), 5.0, -7.0, 0.0, float("inf")])
    index = torch.tensor([0, 1, 2, 3, 2])
    for include_self in (True, False):
        expected = x.scatter_reduce(0, index, src, reduce, include_self=include_self)
        got = x.to(DEVICE).scatter_reduce(
            0, index.to(DEVICE), src.to(DEVICE), reduce, include_self=include_self
        )
        _exact(got, expected)


def test_scatter_reduce_inplace_out_and_layouts():
    x = make_cpu((4, 6), torch.float32, seed=23)
    src = make_cpu((6, 7), torch.float32, seed=24)
    index = _index((6, 5), 4, seed=25)  # smaller than src: only its part is read
    for reduce in ("sum", "amax"):
        dev = x.to(DEVICE).t()  # non-contiguous self, in place
        cpu = x.clone().t()
        dev.scatter_reduce_(1, index.t().to(DEVICE), src.t().to(DEVICE), reduce)
        cpu.scatter_reduce_(1, index.t(), src.t(), reduce)
        _close(dev, cpu, torch.float32)
        out = torch.empty(0, device=DEVICE)
        torch.scatter_reduce(x.to(DEVICE), 0, index.to(DEVICE), src.to(DEVICE), reduce, out=out)
        _close(out, torch.scatter_reduce(x, 0, index, src, reduce), torch.float32)
    empty = torch.empty(0, 6, dtype=torch.int64)
    _exact(
        x.to(DEVICE).scatter_reduce(0, empty.to(DEVICE), src.to(DEVICE), "prod"),
        x.scatter_reduce(0, empty, src, "prod"),
    )
    zero_dim = make_cpu((), torch.float32, seed=26)
    expected, got = _both(
        lambda t, i, s: t.scatter_add(0, i, s), zero_dim, torch.tensor(0), torch.tensor(2.5)
    )
    _exact(got, expected)


# --------------------------------------------------------------------------------------------
# index_add, index_copy, index_fill


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_index_add_duplicates(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 4, 3), dtype, seed=27)
    for dim in (0, 1, -1):
        n = 7
        index = _index((n,), x.shape[dim], seed=28 + dim)
        shape = list(x.shape)
        shape[dim] = n
        source = make_cpu(tuple(shape), dtype, seed=29)
        wide = _wide(dtype)
        expected = x.to(wide).index_add(dim, index, source.to(wide)).to(dtype)
        got = x.to(DEVICE).index_add(dim, index.to(DEVICE), source.to(DEVICE))
        _close(got, expected, dtype)


def test_index_add_alpha_int32_index_and_layouts():
    x = make_cpu((6, 5), torch.float32, seed=30)
    source = make_cpu((6, 4), torch.float32, seed=31)
    index = torch.tensor([4, 0, 4, 2], dtype=torch.int32)
    got = x.to(DEVICE).index_add(1, index.to(DEVICE), source.to(DEVICE), alpha=-2.5)
    expected = x.double().index_add(1, index, source.double(), alpha=-2.5).float()
    _close(got, expected, torch.float32)
    xi = make_cpu((4, 3), torch.int64, seed=32)
    si = make_cpu((2, 3), torch.int64, seed=33)
    _exact(
        xi.to(DEVICE).index_add(0, torch.tensor([3, 3]).to(DEVICE), si.to(DEVICE), alpha=3),
        xi.index_add(0, torch.tensor([3, 3]), si, alpha=3),
    )
    dev = x.to(DEVICE).t()  # in place on a non-contiguous self
    cpu = x.clone().t()
    rows = make_cpu((2, 6), torch.float32, seed=34)
    dev.index_add_(0, torch.tensor([1, 1]).to(DEVICE), rows.to(DEVICE))
    cpu.index_add_(0, torch.tensor([1, 1]), rows)
    _close(dev, cpu, torch.float32)
    zero_dim = make_cpu((), torch.float32, seed=35)
    expected, got = _both(
        lambda t, i, s: t.index_add(0, i, s), zero_dim, torch.tensor([0]), torch.tensor(1.5)
    )
    _exact(got, expected)
    out = torch.empty(0, device=DEVICE)
    torch.index_add(
        x.to(DEVICE), 0, torch.tensor([5]).to(DEVICE), torch.ones(1, 5).to(DEVICE), out=out
    )
    _exact(out, torch.index_add(x, 0, torch.tensor([5]), torch.ones(1, 5)))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_index_copy(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 4, 3), dtype, seed=36)
    for dim in (0, 1, 2):
        index = torch.randperm(x.shape[dim], generator=torch.Generator().manual_seed(37))[:2]
        shape = list(x.shape)
        shape[dim] = 2
        source = make_cpu(tuple(shape), dtype, seed=38)
        expected, got = _both(lambda t, i, s, d=dim: t.index_copy(d, i, s), x, index, source)
        _exact(got, expected)


def test_index_copy_layouts():
    x = make_cpu((5, 4), torch.float32, seed=39)
    dev = x.to(DEVICE).t()
    cpu = x.clone().t()
    src = make_cpu((4, 2), torch.float32, seed=40)
    dev.index_copy_(1, torch.tensor([4, 0]).to(DEVICE), src.to(DEVICE))
    cpu.index_copy_(1, torch.tensor([4, 0]), src)
    _exact(dev, cpu)
    zero_dim = make_cpu((), torch.float32, seed=41)
    expected, got = _both(
        lambda t, i, s: t.index_copy(0, i, s), zero_dim, torch.tensor([0]), torch.tensor(7.0)
    )
    _exact(got, expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_index_fill(dtype):
    skip_unsupported(dtype)
    x = make_cpu((5, 4, 3), dtype, seed=42)
    value = True if dtype == torch.bool else 3
    for dim in (0, 1, -1):
        index = torch.tensor([0, -1, 1, 0])  # negative indices count from the end
        expected, got = _both(lambda t, i, d=dim: t.index_fill(d, i, value), x, index)
        _exact(got, expected)
        # a 0-dim tensor value: on the CPU (read on the host) and on the device (by the kernel)
        v = torch.tensor(value, dtype=dtype)
        expected = x.index_fill(dim, index, v)
        _exact(x.to(DEVICE).index_fill(dim, index.to(DEVICE), v), expected)
        _exact(x.to(DEVICE).index_fill(dim, index.to(DEVICE), v.to(DEVICE)), expected)


def test_index_fill_layouts_and_values():
    x = make_cpu((4, 6), torch.float32, seed=43)
    dev = x.to(DEVICE).t()
    cpu = x.clone().t()
    dev.index_fill_(1, torch.tensor([3]).to(DEVICE), float("nan"))
    cpu.index_fill_(1, torch.tensor([3]), float("nan"))
    _exact(dev, cpu)
    zero_dim = make_cpu((), torch.float32, seed=44)
    expected, got = _both(lambda t, i: t.index_fill(0, i, -1.0), zero_dim, torch.tensor(0))
    _exact(got, expected)
    v = torch.tensor(2.5, dtype=torch.float64)  # a value of another dtype
    _exact(
        x.to(DEVICE).index_fill(0, torch.tensor([1]).to(DEVICE), v.to(DEVICE)),
        x.index_fill(0, torch.tensor([1]), v),
    )


def test_index_ops_errors_like_cpu():
    x = make_cpu((4, 3), torch.int8)
    cases = [
        lambda t, d: t.index_fill(0, torch.tensor([1], device=d), 1000),  # overflow
        lambda t, d: t.index_fill(0, torch.tensor([1], dtype=torch.int32, device=d), 1),
        lambda t, d: t.index_fill(0, torch.tensor([[1]], device=d), 1),
        lambda t, d: t.index_fill(0, torch.tensor([1], device=d), torch.ones(2, device=d)),
        lambda t, d: t.index_copy(
            0, torch.tensor([1], device=d), torch.ones(1, 2, device=d, dtype=torch.int8)
        ),
        lambda t, d: t.index_copy(0, torch.tensor([1], device=d), torch.ones(1, 3, device=d)),
        lambda t, d: t.index_add(
            0, torch.tensor([1, 2], device=d), torch.ones(1, 3, dtype=torch.int8, device=d)
        ),
        lambda t, d: t.index_add(
            0, torch.tensor([1.0], device=d), torch.ones(1, 3, dtype=torch.int8, device=d)
        ),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_exc:
            fn(x, "cpu")
        with pytest.raises(type(cpu_exc.value)):
            fn(x.to(DEVICE), DEVICE)


@pytest.mark.parametrize("op", ["index_add", "index_copy", "index_fill", "index_fill_neg"])
def test_index_ops_out_of_range_raise_at_the_next_wait(op):
    x = torch.zeros(4, 3, device=DEVICE)
    bad = torch.tensor([1, -5 if op == "index_fill_neg" else 4], device=DEVICE)
    src = torch.ones(2, 3, device=DEVICE)
    if op == "index_add":
        r = x.index_add(0, bad, src)
    elif op == "index_copy":
        r = x.index_copy(0, bad, src)
    else:
        r = x.index_fill(0, bad, 1.0)
    with pytest.raises(RuntimeError, match="out of (bounds|range)"):
        r.cpu()
    ok = x.index_fill(0, torch.tensor([-4], device=DEVICE), 2.0)  # still usable
    assert ok.cpu()[0].eq(2).all()


def test_gradients():
    x = make_cpu((5, 4), torch.float32, seed=45)
    index = _index((3, 4), 5, seed=46)
    src0 = make_cpu((3, 4), torch.float32, seed=47)
    fns = [
        lambda t, s, d: t.gather(0, index.to(d)),  # backward: scatter_add
        lambda t, s, d: t.scatter_add(0, index.to(d), s),
        lambda t, s, d: t.scatter_reduce(0, index.to(d), s, "amax"),
        lambda t, s, d: t.scatter_reduce(0, index.to(d), s, "mean", include_self=False),
        lambda t, s, d: t.index_add(0, torch.tensor([4, 4, 1]).to(d), s, alpha=2.0),
        lambda t, s, d: t.index_copy(0, torch.tensor([4, 0, 1]).to(d), s),
        lambda t, s, d: t.index_fill(1, torch.tensor([2]).to(d), 0.5),
        lambda t, s, d: t.index_select(1, torch.tensor([3, 3, 0]).to(d)),  # index_add
    ]
    for fn in fns:
        grads = []
        for d in ("cpu", DEVICE):
            t = x.clone().to(d).requires_grad_()
            s = src0.clone().to(d).requires_grad_()
            out = fn(t, s, d)
            w = make_cpu(tuple(out.shape), torch.float32, seed=48).to(d)
            (out * w).sum().backward()
            grads.append((t.grad, s.grad))
        for got, expected in zip(grads[1], grads[0], strict=True):
            if expected is None:
                assert got is None
            else:
                _close(got, expected, torch.float32)


@pytest.mark.slow
def test_large():
    x = make_cpu((2048, 513), torch.float32, seed=49)
    index = _index((4096, 513), 2048, seed=50)
    src = make_cpu((4096, 513), torch.float32, seed=51)
    _close(
        x.to(DEVICE).scatter_add(0, index.to(DEVICE), src.to(DEVICE)),
        x.double().scatter_add(0, index, src.double()).float(),
        torch.float32,
    )
    _exact(x.to(DEVICE).gather(0, index[:2048].to(DEVICE)), x.gather(0, index[:2048]))


def test_tensors_on_another_device_raise_like_cpu():
    x = torch.zeros(4, 3, device=DEVICE)
    idx = torch.tensor([[0, 1, 2]])
    fns = [
        lambda: x.gather(0, idx),
        lambda: x.scatter(0, idx.to(DEVICE), torch.ones(1, 3)),
        lambda: x.scatter_add(0, idx, torch.ones(1, 3, device=DEVICE)),
        lambda: x.scatter_reduce(0, idx.to(DEVICE), torch.ones(1, 3), "amax"),
        lambda: x.index_add(0, torch.tensor([1], device=DEVICE), torch.ones(1, 3)),
        lambda: x.index_copy(0, torch.tensor([1]), torch.ones(1, 3, device=DEVICE)),
        lambda: x.index_fill(0, torch.tensor([1]), 2.0),
        lambda: x.index_fill(0, torch.tensor([1]), torch.tensor(2.0, device=DEVICE)),
    ]
    for fn in fns:
        with pytest.raises(RuntimeError, match="device"):
            fn()
    with pytest.raises(RuntimeError, match="same device"):  # the CPU, for comparison
        x.cpu().gather(0, idx.to(DEVICE))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=dtype_id)
def test_index_reduce(dtype, reduce, include_self):
    skip_unsupported(dtype)
    x = make_cpu((5, 4, 3), dtype, seed=55, low=-2, high=3)
    for dim in (0, 1, -1):
        index = torch.tensor([0, 2, 0, 2, 1])[: x.shape[dim] + 1]  # duplicates; not all hit
        shape = list(x.shape)
        shape[dim] = index.numel()
        source = make_cpu(tuple(shape), dtype, seed=56, low=-2, high=3)
        kwargs = dict(include_self=include_self)
        if dtype.is_floating_point:
            expected = x.double().index_reduce(dim, index, source.double(), reduce, **kwargs)
            expected = expected.to(dtype)
        else:
            expected = x.index_reduce(dim, index, source, reduce, **kwargs)
        got = x.to(DEVICE).index_reduce(dim, index.to(DEVICE), source.to(DEVICE), reduce, **kwargs)
        _close(got, expected, dtype)


def test_index_reduce_nan_inplace_and_errors():
    x = torch.tensor([[1.0, float("nan")], [3.0, 4.0], [5.0, 6.0]])
    source = torch.tensor([[float("nan"), 0.5], [2.0, 7.0]])
    index = torch.tensor([0, 2])
    for reduce in ("amax", "amin"):
        dev = x.to(DEVICE)
        dev.index_reduce_(0, index.to(DEVICE), source.to(DEVICE), reduce, include_self=True)
        _exact(dev, x.clone().index_reduce_(0, index, source, reduce, include_self=True))
    with pytest.raises(RuntimeError, match="reduce"):
        x.to(DEVICE).index_reduce(0, index.to(DEVICE), source.to(DEVICE), "sum")
    r = x.to(DEVICE).index_reduce(0, torch.tensor([0, 3]).to(DEVICE), source.to(DEVICE), "prod")
    with pytest.raises(RuntimeError, match="out of range"):
        r.cpu()


def test_deterministic_mode_orders_float_sums():
    # Atomic float sums depend on the order of the updates: with deterministic algorithms
    # requested they run in the CPU's order (ops/IndexOrdered.cpp) and equal the CPU's bits;
    # integers, max/min and gathers are deterministic anyway. (tests/ops/test_determinism.py
    # covers the family.)
    x = torch.zeros(4, 3, device=DEVICE)
    index = torch.tensor([[0, 1, 0], [0, 0, 0]], device=DEVICE)
    src = torch.tensor([[1e8, 1.0, 3.0], [-1e8, 2.0, 1e-8]], device=DEVICE)
    torch.use_deterministic_algorithms(True)
    try:
        got = x.scatter_add(0, index, src)
        assert torch.equal(got.cpu(), x.cpu().scatter_add(0, index.cpu(), src.cpu()))
        got = x.index_add(0, torch.tensor([1, 1], device=DEVICE), src)
        assert torch.equal(got.cpu(), x.cpu().index_add(0, torch.tensor([1, 1]), src.cpu()))
        xi = torch.zeros(4, 3, dtype=torch.int64, device=DEVICE)
        got = xi.scatter_add(0, index[:1], torch.ones(1, 3, dtype=torch.int64, device=DEVICE))
        assert got.cpu().sum() == 3
        got = x.scatter_reduce(0, index[:1], torch.ones(1, 3, device=DEVICE), "amax")
        assert got.cpu().sum() == 3
        got = x.gather(0, index)
        assert got.cpu().sum() == 0
    finally:
        torch.use_deterministic_algorithms(False)
