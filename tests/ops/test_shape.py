"""Shape ops and factories against the CPU: flip, roll, tril/triu, rot90/fliplr/flipud, repeat,
stack, diag/diag_embed/diagonal copies, fill_diagonal_, arange, linspace, logspace, eye,
tril_indices/triu_indices, full/zeros/ones. Every dtype the CPU supports, empty and odd shapes,
non-contiguous and channels_last layouts, the CPU's errors, out= and in-place variants, and no
host wait inside the ops. Runs with the CPU fallback set to raise (tests/conftest.py)."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import ALL_DTYPES, DEVICE, assert_ocl_close, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")


def _layouts(x):
    """(id, cpu, ocl) pairs of equal values in several layouts (x: >= 2-d)."""
    d = x.to(DEVICE)
    cases = [("contiguous", x, d), ("transposed", x.transpose(0, -1), d.transpose(0, -1))]
    cases.append(("strided", x[..., ::2], d[..., ::2]))
    if x.dim() == 4:
        cl = torch.channels_last
        cases.append(
            ("channels_last", x.contiguous(memory_format=cl), d.contiguous(memory_format=cl))
        )
    return cases


def _same(got, expected, *, strides=True):
    assert_ocl_close(got, expected, exact=True)
    if strides and expected.numel() > 1:
        assert got.stride() == expected.stride()


def _check_error(fn, cpu_args, ocl_args):
    """fn raises on the device what it raises on the CPU (type and message)."""
    with pytest.raises(Exception) as cpu_err:
        fn(*cpu_args)
    with pytest.raises(type(cpu_err.value)) as dev_err:
        fn(*ocl_args)
    assert str(dev_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]


# ---------------------------------------------------------------------------------------------
# flip, roll, rot90


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_flip_dtypes(dtype):
    skip_unsupported(dtype)
    x = make_cpu((3, 4, 5), dtype, seed=1)
    for dims in [(0,), (1, 2), (-1,), (0, 1, 2), ()]:
        _same(x.to(DEVICE).flip(dims), x.flip(dims))


def test_flip_layouts_and_shapes():
    x = make_cpu((2, 3, 5, 6), torch.float32, seed=2)
    for _name, c, d in _layouts(x):
        for dims in [(0, 3), (1,), (2, 3), (-2,)]:
            _same(d.flip(dims), c.flip(dims))
    for shape in [(), (0,), (1,), (3, 0, 2), (1, 7)]:
        x = make_cpu(shape, torch.float32, seed=3)
        dims = tuple(range(len(shape)))
        _same(x.to(DEVICE).flip(dims), x.flip(dims))
    # NaN payloads and signs move as bits
    x = torch.tensor([NAN, -0.0, INF, -INF, 1.5])
    assert torch.equal(x.to(DEVICE).flip(0).cpu().view(torch.int32), x.flip(0).view(torch.int32))


def test_flip_errors():
    x = make_cpu((3, 4), torch.float32)
    _check_error(lambda t: t.flip(0, 0), (x,), (x.to(DEVICE),))
    _check_error(lambda t: t.flip(2), (x,), (x.to(DEVICE),))


def test_fliplr_flipud_rot90():
    x = make_cpu((4, 5, 3), torch.float32, seed=4)
    d = x.to(DEVICE)
    _same(torch.fliplr(d), torch.fliplr(x))
    _same(torch.flipud(d), torch.flipud(x))
    for k in range(-1, 4):
        assert_ocl_close(torch.rot90(d, k, (0, 2)), torch.rot90(x, k, (0, 2)), exact=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_roll_dtypes(dtype):
    skip_unsupported(dtype)
    x = make_cpu((4, 5, 3), dtype, seed=5)
    d = x.to(DEVICE)
    for shifts, dims in [(1, 0), (-2, 1), ((1, 2), (0, 2)), ((7, -11, 100), (0, 1, 2)), (3, None)]:
        _same(d.roll(shifts, dims), x.roll(shifts, dims))


def test_roll_layouts_and_shapes():
    x = make_cpu((2, 3, 5, 6), torch.float32, seed=6)
    for _name, c, d in _layouts(x):
        for shifts, dims in [((1, -1), (2, 3)), (5, 1), ((2, 2), (0, 0)), (-13, None)]:
            _same(d.roll(shifts, dims), c.roll(shifts, dims))
    for shape in [(0,), (3, 0), (1,), ()]:
        x = make_cpu(shape, torch.float32, seed=7)
        _same(x.to(DEVICE).roll(2), x.roll(2))
    x = make_cpu((3, 0, 2), torch.float32)
    _same(x.to(DEVICE).roll(1, 5 - 5), x.roll(1, 0))


def test_roll_errors():
    x = make_cpu((3, 4), torch.float32)
    d = x.to(DEVICE)
    _check_error(lambda t: t.roll((1, 2), (0,)), (x,), (d,))
    _check_error(lambda t: t.roll((), ()), (x,), (d,))
    _check_error(lambda t: t.roll(1, 3), (x,), (d,))
    s = torch.tensor(1.0)
    _check_error(lambda t: t.roll(1, 0), (s,), (s.to(DEVICE),))


def test_fftshift():
    x = make_cpu((6, 7), torch.float32, seed=8)
    d = x.to(DEVICE)
    _same(torch.fft.fftshift(d), torch.fft.fftshift(x))
    _same(torch.fft.ifftshift(d, dim=1), torch.fft.ifftshift(x, dim=1))


# ---------------------------------------------------------------------------------------------
# tril / triu


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_dtypes(dtype, op):
    skip_unsupported(dtype)
    x = make_cpu((2, 5, 7), dtype, seed=9)
    d = x.to(DEVICE)
    for k in [-8, -2, 0, 1, 3, 9]:
        _same(getattr(d, op)(k), getattr(x, op)(k))


@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_layouts_inplace_out(op):
    x = make_cpu((2, 3, 6, 5), torch.float32, seed=10)
    for name, c, d in _layouts(x):
        assert_ocl_close(getattr(d, op)(1), getattr(c, op)(1), exact=True)
        # in place, on contiguous and non-contiguous tensors
        c2, d2 = (
            c.clone(memory_format=torch.preserve_format),
            d.clone(memory_format=torch.preserve_format),
        )
        if name == "strided":
            c2, d2 = x.clone()[..., ::2], x.to(DEVICE)[..., ::2]
        getattr(c2, op + "_")(-1)
        getattr(d2, op + "_")(-1)
        assert_ocl_close(d2, c2, exact=True)
    out_c, out_d = torch.empty(0), torch.empty(0, device=DEVICE)
    getattr(torch, op)(x, 2, out=out_c)
    getattr(torch, op)(x.to(DEVICE), 2, out=out_d)
    _same(out_d, out_c)
    for shape in [(0, 3), (3, 0), (1, 1), (2, 0, 4)]:
        e = make_cpu(shape, torch.float32)
        _same(getattr(e.to(DEVICE), op)(), getattr(e, op)())


def test_tril_errors():
    v = make_cpu((4,), torch.float32)
    _check_error(lambda t: t.tril(), (v,), (v.to(DEVICE),))
    x = make_cpu((3, 3), torch.float32)
    _check_error(
        lambda t: torch.tril(t, out=torch.empty(3, 3, dtype=torch.int64, device=t.device)),
        (x,),
        (x.to(DEVICE),),
    )


def test_tril_backward():
    x = make_cpu((4, 5), torch.float32, seed=11)
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    g = make_cpu((4, 5), torch.float32, seed=12)
    (xc.triu(1) * g).sum().backward()
    (xd.triu(1) * g.to(DEVICE)).sum().backward()
    assert_ocl_close(xd.grad, xc.grad, exact=True)


# ---------------------------------------------------------------------------------------------
# Composites that must stay native: repeat, stack, diag ops, fill_diagonal_, full/zeros/ones


def test_composites_native():
    x = make_cpu((3, 4), torch.float32, seed=13)
    d = x.to(DEVICE)
    _same(d.repeat(2, 1, 3), x.repeat(2, 1, 3))
    _same(torch.stack([d, d * 2, d + 1], 1), torch.stack([x, x * 2, x + 1], 1))
    _same(torch.diag(d), torch.diag(x))
    _same(torch.diag(d[0], 2), torch.diag(x[0], 2))
    _same(torch.diag_embed(d, 1), torch.diag_embed(x, 1))
    _same(torch.diagonal_copy(d, -1), torch.diagonal_copy(x, -1))
    _same(d.clone().fill_diagonal_(5.0, wrap=True), x.clone().fill_diagonal_(5.0, wrap=True))
    _same(torch.full((2, 3), 7, device=DEVICE), torch.full((2, 3), 7))
    _same(torch.zeros(2, 3, device=DEVICE, dtype=torch.int8), torch.zeros(2, 3, dtype=torch.int8))
    _same(torch.ones(5, device=DEVICE, dtype=torch.bool), torch.ones(5, dtype=torch.bool))
    _same(torch.ones_like(d), torch.ones_like(x))
    xg, dg = x.clone().requires_grad_(), d.clone().requires_grad_()
    torch.diag_embed(xg).sum().backward()
    torch.diag_embed(dg).sum().backward()
    assert_ocl_close(dg.grad, xg.grad, exact=True)


# ---------------------------------------------------------------------------------------------
# arange, linspace, logspace


ARANGE_CASES = [(0, 10, 1), (-3, 17, 4), (5, -7, -3), (0.5, 7.25, 0.7), (1, 2, 0.1), (-1, 1, 0.25)]


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != torch.bool], ids=str)
def test_arange(dtype):
    skip_unsupported(dtype)
    for start, end, step in ARANGE_CASES:
        if not dtype.is_floating_point and isinstance(step, float):
            continue
        if dtype == torch.uint8 and min(start, end) < 0:
            continue
        got = torch.arange(start, end, step, dtype=dtype, device=DEVICE)
        assert_ocl_close(got, torch.arange(start, end, step, dtype=dtype))
    assert_ocl_close(torch.arange(0, device=DEVICE), torch.arange(0))
    big = torch.arange(0, 100003, 3, device=DEVICE)
    assert_ocl_close(big, torch.arange(0, 100003, 3))


def test_arange_precision_and_out():
    # float32 values computed in double (the CPU's vector path rounds some to the next float)
    got = torch.arange(0, 300000, 0.1, device=DEVICE)
    assert_ocl_close(got, torch.arange(0, 300000, 0.1), rtol=2.5e-7, atol=0)
    out_c = torch.empty(3)
    out_d = torch.empty(3, device=DEVICE)
    with pytest.warns(UserWarning, match="will be resized"):
        torch.arange(1, 5, out=out_c)
    with pytest.warns(UserWarning, match="will be resized"):
        torch.arange(1, 5, out=out_d)
    _same(out_d, out_c)
    out_d = torch.empty(10, device=DEVICE)[::2]  # non-contiguous out
    out_c = torch.empty(10)[::2]
    torch.arange(0, 5, out=out_c)
    torch.arange(0, 5, out=out_d)
    assert_ocl_close(out_d, out_c)


def test_arange_errors():
    for args in [(0, 5, 0), (5, 0, 1), (0, float("inf"), 1)]:
        _check_error(lambda dev, args=args: torch.arange(*args, device=dev), ("cpu",), (DEVICE,))


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != torch.bool], ids=str)
def test_linspace_logspace(dtype):
    skip_unsupported(dtype)
    for start, end, steps in [
        (-3, 10, 17),
        (0, 1, 2),
        (2, 2, 5),
        (10, -10, 33),
        (1, 9, 1),
        (0, 5, 0),
    ]:
        if dtype == torch.uint8 and min(start, end) < 0:
            continue
        got = torch.linspace(start, end, steps, dtype=dtype, device=DEVICE)
        assert_ocl_close(got, torch.linspace(start, end, steps, dtype=dtype))
        s, e = start / 5, end / 5
        for base in (10.0, 2.0):
            got = torch.logspace(s, e, steps, base=base, dtype=dtype, device=DEVICE)
            assert_ocl_close(got, torch.logspace(s, e, steps, base=base, dtype=dtype))


def test_linspace_large_and_out():
    got = torch.linspace(-1e3, 1e3, 100001, device=DEVICE)
    assert_ocl_close(got, torch.linspace(-1e3, 1e3, 100001), rtol=1e-6, atol=1e-4)
    out_c, out_d = torch.empty(20)[::2], torch.empty(20, device=DEVICE)[::2]
    torch.linspace(0, 1, 10, out=out_c)
    torch.linspace(0, 1, 10, out=out_d)
    assert_ocl_close(out_d, out_c)
    out_c, out_d = torch.empty(0), torch.empty(0, device=DEVICE)
    torch.logspace(0, 3, 4, out=out_c)
    torch.logspace(0, 3, 4, out=out_d)
    assert_ocl_close(out_d, out_c)
    _check_error(lambda dev: torch.linspace(0, 1, -1, device=dev), ("cpu",), (DEVICE,))
    _check_error(lambda dev: torch.logspace(0, 1, -1, device=dev), ("cpu",), (DEVICE,))


# ---------------------------------------------------------------------------------------------
# eye, tril_indices, triu_indices


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_eye(dtype):
    skip_unsupported(dtype)
    for args in [(0,), (1,), (4,), (3, 5), (6, 2), (0, 3)]:
        _same(torch.eye(*args, dtype=dtype, device=DEVICE), torch.eye(*args, dtype=dtype))
    out_c = torch.full((7,), 3.0)[::2]
    out_d = torch.full((7,), 3.0, device=DEVICE)[::2]
    torch.eye(2, out=out_c)
    torch.eye(2, out=out_d)
    assert_ocl_close(out_d, out_c, exact=True)
    _check_error(lambda dev: torch.eye(-1, device=dev), ("cpu",), (DEVICE,))
    _check_error(lambda dev: torch.eye(2, -3, device=dev), ("cpu",), (DEVICE,))


@pytest.mark.parametrize("op", ["tril_indices", "triu_indices"])
def test_tri_indices(op):
    fn = getattr(torch, op)
    for row, col in [(0, 0), (0, 4), (1, 1), (4, 4), (3, 7), (8, 3), (33, 17)]:
        for offset in [-40, -5, -1, 0, 1, 2, 6, 40]:
            for dtype in (torch.int64, torch.int32):
                got = fn(row, col, offset, dtype=dtype, device=DEVICE)
                _same(got, fn(row, col, offset, dtype=dtype))
    _check_error(lambda dev: fn(3, 3, dtype=torch.float32, device=dev), ("cpu",), (DEVICE,))
    _check_error(lambda dev: fn(-1, 3, device=dev), ("cpu",), (DEVICE,))


def test_tri_indices_large():
    got = torch.tril_indices(700, 500, 3, device=DEVICE)
    _same(got, torch.tril_indices(700, 500, 3))


# ---------------------------------------------------------------------------------------------
# No host waits


def test_no_host_waits():
    x = make_cpu((3, 4, 5, 6), torch.float32).to(DEVICE)
    torch.ocl.synchronize()
    with torch.ocl.sync_debug_mode("error"):
        x.flip(1).roll((1, 2), (2, 3)).tril(1)
        torch.arange(0, 10, 0.5, device=DEVICE)
        torch.arange(7, device=DEVICE)
        torch.linspace(0, 1, 11, device=DEVICE)
        torch.logspace(0, 1, 11, device=DEVICE)
        torch.eye(4, device=DEVICE)
        torch.tril_indices(5, 6, device=DEVICE)
        torch.triu_indices(5, 6, 1, device=DEVICE)
    torch.ocl.synchronize()
