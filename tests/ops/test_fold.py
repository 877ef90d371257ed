"""im2col / col2im (F.unfold / F.fold, each the other's backward) against a float64 CPU reference:
kernel sizes, dilations, paddings and strides (overlapping and gapped windows), batched and
unbatched, empty, one-element, odd, strided, channels_last and large shapes, float16/bfloat16/
float64/bool, infinities and NaN, the deterministic fold, and the CPU's errors. Runs with the CPU
fallback set to raise."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, TOLERANCES, assert_ocl_close, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")
# (input shape, kernel_size, dilation, padding, stride)
GEOMETRIES = [
    ((2, 3, 7, 9), (2, 3), (1, 2), (1, 0), (2, 1)),
    ((1, 1, 1, 1), 1, 1, 0, 1),
    ((3, 9, 8), (3, 2), 1, (1, 1), (1, 3)),  # unbatched
    ((2, 4, 5, 6), (5, 6), 1, 0, 1),  # one window
    ((2, 2, 6, 7), 3, 2, 2, 3),  # gaps between windows, padding larger than them
    ((1, 5, 11, 4), (1, 4), 1, (3, 0), (4, 1)),
    ((0, 3, 4, 4), 2, 1, 0, 1),
]
IDS = [f"{'x'.join(map(str, g[0]))}-k{g[1]}-d{g[2]}-p{g[3]}-s{g[4]}" for g in GEOMETRIES]


def _check(fn, x, dtype=torch.float32, seed=1):
    """fn on ocl in dtype equals fn on the CPU in float64 (rounded to dtype), gradient too."""
    skip_unsupported(dtype)
    xs = x.to(dtype)
    xr = xs.double().requires_grad_()
    xd = xs.to(DEVICE).requires_grad_()
    ref, got = fn(xr), fn(xd)
    atol = TOLERANCES[dtype][1] * max(1, xr.shape[-1])
    assert_ocl_close(got, ref.detach().to(dtype), atol=atol)
    if ref.numel() == 0 or xr.numel() == 0:
        return got
    go = make_cpu(ref.shape, torch.float64, seed=seed).to(dtype)
    (gr,) = torch.autograd.grad(ref, xr, go.double())
    (gd,) = torch.autograd.grad(got, xd, go.to(DEVICE))
    assert_ocl_close(gd, gr.to(dtype), atol=atol)
    return got


@pytest.mark.parametrize("shape,k,d,p,s", GEOMETRIES, ids=IDS)
def test_unfold_fold(shape, k, d, p, s):
    x = make_cpu(shape, torch.float64, seed=2)
    cols = _check(lambda t: F.unfold(t, k, d, p, s), x)
    assert cols.is_contiguous()
    c = make_cpu(tuple(cols.shape), torch.float64, seed=3)
    img = _check(lambda t: F.fold(t, shape[-2:], k, d, p, s), c)
    assert img.shape == shape and img.is_contiguous()


@pytest.mark.parametrize("layout", ["channels_last", "strided", "transposed"])
def test_layouts(layout):
    x = make_cpu((2, 3, 8, 10), torch.float64, seed=4)
    c = make_cpu((2, 3 * 6, 5 * 4), torch.float64, seed=5)
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    elif layout == "strided":
        x = make_cpu((2, 3, 8, 20), torch.float64, seed=4)[..., ::2]
        c = make_cpu((2, 3 * 6, 40), torch.float64, seed=5)[..., ::2]
    else:
        x = make_cpu((2, 3, 10, 8), torch.float64, seed=4).transpose(-1, -2)
        c = make_cpu((2, 20, 3 * 6), torch.float64, seed=5).transpose(-1, -2)
    _check(lambda t: F.unfold(t, (2, 3), padding=1, stride=(2, 3)), x)
    _check(lambda t: F.fold(t, (8, 10), (2, 3), padding=1, stride=(2, 3)), c)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_dtypes(dtype):
    x = make_cpu((2, 3, 7, 6), torch.float64, seed=6)
    _check(lambda t: F.unfold(t, 3, padding=1), x, dtype)
    c = make_cpu((2, 27, 42), torch.float64, seed=7)
    _check(lambda t: F.fold(t, (7, 6), 3, padding=1), c, dtype)


def test_bool_and_integer_dtypes():
    x = make_cpu((1, 2, 5, 5), torch.int64, seed=8) > 0
    aten = torch.ops.aten
    for fn in (
        lambda t: aten.im2col(t, [2, 2], [1, 1], [1, 1], [1, 1]),
        lambda t: aten.col2im(
            aten.im2col(t, [2, 2], [1, 1], [0, 0], [1, 1]), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]
        ),
    ):
        assert_ocl_close(fn(x.to(DEVICE)), fn(x), exact=True)
    for dtype in (torch.int32, torch.uint8, torch.int64):
        xi = x.to(dtype)
        for fn in (
            lambda t: aten.im2col(t, [2, 2], [1, 1], [0, 0], [1, 1]),
            lambda t: aten.col2im(t.flatten(2), [5, 5], [1, 1], [1, 1], [0, 0], [1, 1]),
        ):
            with pytest.raises(NotImplementedError):
                fn(xi)
            with pytest.raises(NotImplementedError):
                fn(xi.to(DEVICE))


def test_special_values():
    x = make_cpu((1, 2, 5, 6), torch.float32, seed=9)
    x[0, 0, 1, 2], x[0, 1, 4, 5], x[0, 1, 0, 0] = INF, NAN, -INF
    kw = dict(kernel_size=(2, 3), padding=1, stride=(1, 2))
    assert_ocl_close(F.unfold(x.to(DEVICE), **kw), F.unfold(x, **kw))
    c = F.unfold(x, **kw)
    assert_ocl_close(F.fold(c.to(DEVICE), (5, 6), **kw), F.fold(c, (5, 6), **kw))
    # deterministic: the same bits again
    a, b = F.fold(c.to(DEVICE), (5, 6), **kw), F.fold(c.to(DEVICE), (5, 6), **kw)
    assert torch.equal(a.cpu().view(torch.int32), b.cpu().view(torch.int32))


@pytest.mark.slow
def test_large():
    x = make_cpu((4, 16, 67, 71), torch.float64, seed=10)
    cols = _check(lambda t: F.unfold(t, 3, dilation=2, padding=2, stride=1), x)
    _check(lambda t: F.fold(t, (67, 71), 3, dilation=2, padding=2), cols.double().cpu())


def test_errors():
    x = make_cpu((1, 2, 4, 4), torch.float32, seed=11)
    aten = torch.ops.aten
    cases = [
        lambda t: aten.im2col(t, [2], [1, 1], [0, 0], [1, 1]),
        lambda t: aten.im2col(t, [0, 2], [1, 1], [0, 0], [1, 1]),
        lambda t: aten.im2col(t, [2, 2], [1, 1], [0, 0], [0, 1]),
        lambda t: aten.im2col(t, [5, 5], [1, 1], [0, 0], [1, 1]),
        lambda t: aten.im2col(t[0, 0], [2, 2], [1, 1], [0, 0], [1, 1]),
        lambda t: aten.col2im(t.flatten(2), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1]),
        lambda t: aten.col2im(t.flatten(2), [4], [1, 1], [1, 1], [0, 0], [1, 1]),
        lambda t: aten.col2im(t.flatten(2), [3, 3], [1, 1], [1, 1], [0, 0], [1, 1]),
        lambda t: aten.im2col(t[:, :0], [2, 2], [1, 1], [0, 0], [1, 1]),  # no channels
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_err:  # noqa: PT011 (the CPU's type, checked below)
            fn(x)
        with pytest.raises(cpu_err.type) as ocl_err:
            fn(x.to(DEVICE))
        assert str(ocl_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]
    assert_ocl_close(F.unfold(x.to(DEVICE), 2), F.unfold(x, 2))
