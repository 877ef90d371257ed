"""Pooling against the CPU: max_pool1d/2d/3d (with indices), avg_pool1d/2d/3d, adaptive average
and max pooling 1d/2d, forward and gradients, over window/stride/padding/dilation/ceil_mode
combinations, layouts (channels_last, non-contiguous, unbatched, batch 1) and dtypes.
References are computed in float64 on the CPU (indices from the CPU in the tested dtype)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")


def _layout(x, layout):
    if layout == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    if layout == "transposed":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "strided":
        return x[..., ::2]
    return x


def compare(fn, x, dtype=torch.float32, layout="contiguous", indices=False, seed=7):
    """fn on ocl (dtype, layout) vs fn on the CPU in float64 with the same values; forward,
    indices (exactly, from the CPU in `dtype`) and the input gradient."""
    skip_unsupported(dtype)
    xs = x.to(dtype)
    ref_in = _layout(xs.double(), layout).detach().requires_grad_()
    dev_in = _layout(xs.to(DEVICE), layout).detach().requires_grad_()
    ref, got = fn(ref_in), fn(dev_in)
    cpu = fn(_layout(xs, layout))  # the CPU in `dtype`: indices and the result's layout
    if indices:
        ref, ref_idx = ref
        got, got_idx = got
        cpu, cpu_idx = cpu
        assert_ocl_close(got_idx, cpu_idx, exact=True)
        assert torch.equal(ref_idx, cpu_idx)
    assert got.stride() == cpu.stride()
    assert_ocl_close(got, ref.detach().to(dtype))
    g = make_cpu(ref.shape, torch.float64, seed=seed).to(dtype).double()
    (ref * g).sum().backward()
    (got * g.to(DEVICE, dtype)).sum().backward()
    assert_ocl_close(dev_in.grad, ref_in.grad.to(dtype))
    return got


MAX_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), ceil_mode=True),
    dict(kernel_size=1),
    dict(kernel_size=5, stride=3, padding=2, ceil_mode=True),
    # windows that do not overlap (kernel <= stride): the backward scatters from the outputs
    dict(kernel_size=2, stride=3, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3), stride=(2, 3), padding=(1, 1), ceil_mode=True),
]
LAYOUTS = ["contiguous", "channels_last", "transposed", "strided"]


@pytest.mark.parametrize("kw", MAX_CASES, ids=[str(i) for i in range(len(MAX_CASES))])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_max_pool2d(kw, layout):
    x = make_cpu((2, 3, 9, 11), torch.float64, seed=1)
    compare(lambda t: F.max_pool2d(t, return_indices=True, **kw), x, layout=layout, indices=True)


@pytest.mark.parametrize("shape", [(3, 8, 7), (1, 2, 5, 5), (1, 1, 1, 1)], ids=str)
def test_max_pool2d_unbatched_and_small(shape):
    kw = dict(kernel_size=2, stride=1, padding=1) if shape[-1] > 1 else dict(kernel_size=1)
    x = make_cpu(shape, torch.float64, seed=2)
    compare(lambda t: F.max_pool2d(t, return_indices=True, **kw), x, indices=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_max_pool2d_dtypes(dtype):
    x = make_cpu((2, 3, 8, 9), torch.float64, seed=3)
    fn = lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True)  # noqa: E731
    compare(fn, x, dtype=dtype, indices=True)


def test_max_pool2d_nan_inf():
    x = make_cpu((1, 2, 6, 6), torch.float32, seed=4)
    x[0, 0, 0, 0] = NAN
    x[0, 0, 1, 1] = NAN  # two NaNs in one window: the CPU reports the last one
    x[0, 0, 2:4, 2:4] = -INF  # a window of -inf only
    x[0, 1, 4, 4] = INF
    x[0, 1, 5, 5] = NAN
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1)):
        out, idx = F.max_pool2d(x.to(DEVICE), return_indices=True, **kw)
        ref, ref_idx = F.max_pool2d(x, return_indices=True, **kw)
        assert_ocl_close(out, ref, exact=True)
        assert_ocl_close(idx, ref_idx, exact=True)


def test_max_pool2d_out_and_functional_ops():
    x = make_cpu((2, 3, 7, 7), torch.float32, seed=5)
    out = torch.empty(0, device=DEVICE)
    idx = torch.empty(0, device=DEVICE, dtype=torch.long)
    torch.ops.aten.max_pool2d_with_indices.out(
        x.to(DEVICE), [3], [2], [1], [1], False, out=out, indices=idx
    )
    ref, ref_idx = torch.ops.aten.max_pool2d_with_indices(x, [3], [2], [1], [1], False)
    assert_ocl_close(out, ref, exact=True)
    assert_ocl_close(idx, ref_idx, exact=True)
    # ATen's own checks, with the CPU's messages
    op = torch.ops.aten.max_pool2d_with_indices
    with pytest.raises(RuntimeError) as cpu_err:
        op(x, [2], [2], [2], [1], False)
    with pytest.raises(RuntimeError) as dev_err:
        op(x.to(DEVICE), [2], [2], [2], [1], False)
    assert str(dev_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True),
        dict(kernel_size=4, stride=1, padding=2),
    ],
    ids=str,
)
def test_max_pool1d(kw):
    x = make_cpu((2, 3, 13), torch.float64, seed=6)
    compare(lambda t: F.max_pool1d(t, return_indices=True, **kw), x, indices=True)
    compare(lambda t: F.max_pool1d(t, **kw), x)


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
        dict(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=(1, 0, 1), dilation=(2, 1, 1)),
    ],
    ids=str,
)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last_3d", "unbatched"])
def test_max_pool3d(kw, layout):
    x = make_cpu((2, 3, 5, 6, 7), torch.float64, seed=7)
    if layout == "unbatched":
        x = x[0]

    def fn(t):
        if layout == "channels_last_3d":
            t = t.contiguous(memory_format=torch.channels_last_3d)
        return F.max_pool3d(t, return_indices=True, **kw)

    compare(fn, x, indices=True)


AVG_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=True),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), divisor_override=5),
    dict(kernel_size=3, stride=3, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=4, stride=3, padding=2, ceil_mode=True),
]


@pytest.mark.parametrize("kw", AVG_CASES, ids=[str(i) for i in range(len(AVG_CASES))])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_avg_pool2d(kw, layout):
    x = make_cpu((2, 3, 9, 11), torch.float64, seed=8)
    compare(lambda t: F.avg_pool2d(t, **kw), x, layout=layout)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_avg_pool2d_dtypes_and_unbatched(dtype):
    x = make_cpu((3, 8, 9), torch.float64, seed=9)
    compare(lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True), x, dtype=dtype)


@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2)])
def test_avg_pool1d_3d(kw):
    compare(lambda t: F.avg_pool1d(t, **kw), make_cpu((2, 3, 11), torch.float64, seed=10))
    x3 = make_cpu((2, 3, 5, 6, 7), torch.float64, seed=11)
    compare(lambda t: F.avg_pool3d(t, **kw), x3)
    compare(lambda t: F.avg_pool3d(t.contiguous(memory_format=torch.channels_last_3d), **kw), x3)


ADAPTIVE_SIZES = [(3, 5), (4, 4), (9, 11), (12, 13), (None, 3), (1, 2)]


@pytest.mark.parametrize("size", ADAPTIVE_SIZES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_adaptive_avg_pool2d(size, layout):
    x = make_cpu((2, 3, 9, 11), torch.float64, seed=12)
    compare(lambda t: F.adaptive_avg_pool2d(t, size), x, layout=layout)


@pytest.mark.parametrize("size", ADAPTIVE_SIZES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_adaptive_max_pool2d(size, layout):
    x = make_cpu((2, 3, 9, 11), torch.float64, seed=13)
    compare(
        lambda t: F.adaptive_max_pool2d(t, size, return_indices=True),
        x,
        layout=layout,
        indices=True,
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_adaptive_dtypes_1d_unbatched(dtype):
    x = make_cpu((3, 7, 10), torch.float64, seed=14)
    compare(lambda t: F.adaptive_avg_pool2d(t, (3, 4)), x, dtype=dtype)
    compare(
        lambda t: F.adaptive_max_pool2d(t, (3, 4), return_indices=True),
        x,
        dtype=dtype,
        indices=True,
    )
    compare(lambda t: F.adaptive_avg_pool1d(t, 4), x, dtype=dtype)
    compare(
        lambda t: F.adaptive_max_pool1d(t, 4, return_indices=True), x, dtype=dtype, indices=True
    )


def test_adaptive_max_pool2d_nan():
    x = make_cpu((1, 2, 5, 5), torch.float32, seed=15)
    x[0, 0, 1, 1] = NAN
    x[0, 1, :, :3] = -INF
    out, idx = F.adaptive_max_pool2d(x.to(DEVICE), (2, 3), return_indices=True)
    ref, ref_idx = F.adaptive_max_pool2d(x, (2, 3), return_indices=True)
    assert_ocl_close(out, ref, exact=True)
    assert_ocl_close(idx, ref_idx, exact=True)


def test_adaptive_avg_pool2d_errors():
    with pytest.raises(RuntimeError, match="non-zero size"):
        F.adaptive_avg_pool2d(torch.empty(2, 3, 0, 4, device=DEVICE), (2, 2))


def _pool_net():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.BatchNorm2d(3),
        nn.MaxPool2d(3, 2, 1),
        nn.AvgPool2d(2, ceil_mode=True, count_include_pad=False),
        nn.AdaptiveAvgPool2d((2, 3)),
        nn.Flatten(),
        nn.Linear(18, 4),
    )


def _sgd_step(model, x, g):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    (model(x) * g).sum().backward()
    opt.step()


def test_pool_modules_sgd_step_and_no_host_waits():
    cpu = _pool_net().double()
    dev = _pool_net().to(DEVICE)
    x = make_cpu((4, 3, 11, 13), torch.float64, seed=16)
    g = make_cpu((4, 4), torch.float64, seed=17)
    _sgd_step(cpu, x, g)
    xd, gd = x.float().to(DEVICE), g.float().to(DEVICE)
    with torch.ocl.sync_debug_mode("error"):
        _sgd_step(dev, xd, gd)
    for (name, p), q in zip(cpu.named_parameters(), dev.parameters(), strict=True):
        assert_ocl_close(q.detach(), p.detach().float(), rtol=1e-4, atol=1e-5), name
    for b, c in zip(cpu.buffers(), dev.buffers(), strict=True):
        assert_ocl_close(c, b.to(c.dtype), rtol=1e-4, atol=1e-5)


ADAPTIVE_3D = [(2, 3, 4), (1, 1, 1), (5, 7, 9), (4, 5, 6)]


def _layout3d(x, layout):
    if layout == "channels_last":
        return x.contiguous(memory_format=torch.channels_last_3d)
    return _layout(x, layout)


@pytest.mark.parametrize("size", ADAPTIVE_3D, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "strided"])
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool3d(size, layout, kind):
    """adaptive_avg_pool3d (contiguous results, as on the CPU) and adaptive_max_pool3d (the
    input's layout) forward, indices and gradients, up- and downsizing windows."""
    x = _layout3d(make_cpu((2, 3, 4, 5, 12), torch.float64, seed=16), layout)
    if kind == "avg":
        compare(lambda t: F.adaptive_avg_pool3d(t, size), x)
    else:
        compare(lambda t: F.adaptive_max_pool3d(t, size, return_indices=True), x, indices=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_adaptive_pool3d_dtypes_unbatched_nan(dtype):
    x = make_cpu((3, 5, 6, 7), torch.float64, seed=17)
    compare(lambda t: F.adaptive_avg_pool3d(t, (2, 4, 3)), x, dtype=dtype)
    compare(
        lambda t: F.adaptive_max_pool3d(t, (2, 4, 3), return_indices=True),
        x,
        dtype=dtype,
        indices=True,
    )
    y = make_cpu((1, 2, 3, 4, 5), torch.float32, seed=18)
    y[0, 0, 1, 1, 1], y[0, 1, :, :2] = NAN, -INF
    out, idx = F.adaptive_max_pool3d(y.to(DEVICE), (2, 2, 3), return_indices=True)
    ref, ref_idx = F.adaptive_max_pool3d(y, (2, 2, 3), return_indices=True)
    assert_ocl_close(out, ref, exact=True)
    assert_ocl_close(idx, ref_idx, exact=True)
    for bad in (
        lambda t: F.adaptive_avg_pool3d(t[:, :, :0], 2),
        lambda t: F.adaptive_max_pool3d(t[0, 0], 2),
        lambda t: F.adaptive_avg_pool3d(t, (2, 2)),
    ):
        with pytest.raises(Exception) as cpu_err:  # noqa: PT011 (the CPU's type, checked below)
            bad(y)
        with pytest.raises(cpu_err.type):
            bad(y.to(DEVICE))
