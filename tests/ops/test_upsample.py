"""Upsampling (F.interpolate) against the CPU: nearest and nearest-exact 1d/2d/3d, linear,
bilinear, bicubic and trilinear with align_corners both ways, output sizes or scale factors
(recomputed or used as given), up- and downsampling, forward and gradients against a float64
CPU reference (the backward kernels gather: deterministic), contiguous, channels_last and strided
inputs, float dtypes and uint8 where the CPU supports it, infinities and NaN as the CPU
propagates them, and the CPU's errors. Runs with the CPU fallback set to raise."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, TOLERANCES, assert_ocl_close, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")
MODES = {  # mode -> spatial dims it supports
    "nearest": (1, 2, 3),
    "nearest-exact": (1, 2, 3),
    "linear": (1,),
    "bilinear": (2,),
    "bicubic": (2,),
    "trilinear": (3,),
}
SHAPES = {1: (2, 3, 7), 2: (2, 3, 5, 7), 3: (1, 2, 3, 4, 5)}
# interpolate keyword arguments per spatial rank
SIZES = {
    1: [
        dict(size=13),
        dict(size=4),
        dict(scale_factor=2.5),
        dict(scale_factor=0.6),
        dict(scale_factor=1.7, recompute_scale_factor=True),
        dict(size=7),
        dict(size=1),
    ],
    2: [
        dict(size=(9, 12)),
        dict(size=(3, 4)),
        dict(scale_factor=2),
        dict(scale_factor=(1.5, 0.7)),
        dict(scale_factor=(1.3, 2.1), recompute_scale_factor=True),
        dict(size=(5, 14)),
        dict(size=(1, 1)),
    ],
    3: [
        dict(size=(5, 7, 9)),
        dict(size=(2, 3, 3)),
        dict(scale_factor=(1.5, 2, 0.8)),
        dict(scale_factor=1.6, recompute_scale_factor=True),
    ],
}


def _layout(x, layout):
    if layout == "channels_last":
        fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
        return x.contiguous(memory_format=fmt)
    if layout == "strided":
        return x[..., ::2]
    return x


def _kwargs(mode, align):
    kw = dict(mode=mode)
    if mode in ("linear", "bilinear", "bicubic", "trilinear"):
        kw["align_corners"] = align
    return kw


def compare(fn, x, dtype=torch.float32, layout="contiguous", grad=True, seed=3):
    """fn on ocl equals fn on the CPU in float64 rounded to dtype (uint8: the CPU in uint8), and
    so does the input gradient."""
    skip_unsupported(dtype)
    xs = x.to(dtype)
    dev_in = _layout(xs.to(DEVICE), layout)
    got = fn(dev_in)
    if dtype.is_floating_point:
        ref = fn(_layout(xs.double(), layout))
        assert_ocl_close(got, ref.to(dtype), atol=_atol(fn(_layout(xs, layout)), ref, dtype))
    else:
        assert_ocl_close(got, fn(_layout(xs, layout)), exact=True)
    if grad and dtype.is_floating_point:
        ref_in = _layout(xs.double(), layout).detach().requires_grad_()
        dev_in = dev_in.detach().requires_grad_()
        ref, out = fn(ref_in), fn(dev_in)
        g = make_cpu(ref.shape, torch.float64, seed=seed).to(dtype).double()
        (ref * g).sum().backward()
        (out * g.to(DEVICE, dtype)).sum().backward()
        cpu_in = _layout(xs, layout).detach().requires_grad_()
        (fn(cpu_in) * g.to(dtype)).sum().backward()
        atol = _atol(cpu_in.grad, ref_in.grad, dtype)
        assert_ocl_close(dev_in.grad, ref_in.grad.to(dtype), atol=atol)
    return got


def _atol(cpu, ref, dtype):
    """The absolute tolerance: the dtype's, or twice the CPU's own error in that dtype against
    float64 where that is larger (interpolation with negative weights cancels near zero)."""
    base = TOLERANCES[dtype][1]
    if cpu.numel() == 0:
        return base
    return max(base, 2 * (cpu.double() - ref).abs().max().item())


CASES = [(m, s) for m, ranks in MODES.items() for s in ranks]
# align_corners applies to the linear and cubic modes only
ALIGN_CASES = [(m, s, a) for m, s in CASES for a in ((False,) if "nearest" in m else (False, True))]


@pytest.mark.parametrize(
    "mode,spatial,align", ALIGN_CASES, ids=[f"{m}-{s}d-align{int(a)}" for m, s, a in ALIGN_CASES]
)
def test_interpolate(mode, spatial, align):
    x = make_cpu(SHAPES[spatial], torch.float64, seed=spatial)
    for kw in SIZES[spatial]:
        compare(lambda t, kw=kw: F.interpolate(t, **kw, **_kwargs(mode, align)), x)


@pytest.mark.parametrize("mode,spatial", [c for c in CASES if c[1] > 1], ids=str)
@pytest.mark.parametrize("layout", ["channels_last", "strided"])
def test_layouts(mode, spatial, layout):
    x = make_cpu(SHAPES[spatial], torch.float64, seed=7)
    kw = SIZES[spatial][0]
    got = compare(lambda t: F.interpolate(t, **kw, **_kwargs(mode, False)), x, layout=layout)
    expected = F.interpolate(_layout(x.float(), layout), **kw, **_kwargs(mode, False))
    assert got.stride() == expected.stride()


@pytest.mark.parametrize(
    "dtype", [torch.float64, torch.float16, torch.bfloat16, torch.uint8], ids=str
)
@pytest.mark.parametrize("mode,spatial", CASES, ids=[f"{m}-{s}d" for m, s in CASES])
def test_dtypes(dtype, mode, spatial):
    x = make_cpu(SHAPES[spatial], torch.float64, seed=11, low=0, high=9)
    if dtype == torch.uint8:
        x = make_cpu(SHAPES[spatial], torch.uint8, seed=11, low=0, high=256)
    fn = lambda t: F.interpolate(t, **SIZES[spatial][0], **_kwargs(mode, False))  # noqa: E731
    if dtype == torch.uint8 and "nearest" not in mode:
        # linear/trilinear: the CPU has no uint8 kernel; bilinear/bicubic: it has Pillow's
        # integer kernels, which the device does not implement (said so, not a wrong result).
        if mode in ("linear", "trilinear"):
            with pytest.raises(NotImplementedError):
                fn(x)
        else:
            fn(x)
        with pytest.raises(NotImplementedError):
            fn(x.to(DEVICE))
        return
    compare(fn, x, dtype)


def test_large_scale_and_unbalanced():
    # many output positions per input (long gathers) and an output of one position
    x = make_cpu((1, 2, 3, 2), torch.float64, seed=12)
    for mode in ("nearest", "bilinear", "bicubic", "nearest-exact"):
        up = _kwargs(mode, False)
        compare(lambda t, up=up: F.interpolate(t, size=(40, 33), **up), x)
        one = _kwargs(mode, mode in ("bilinear", "bicubic"))
        compare(lambda t, one=one: F.interpolate(t, size=(1, 5), **one), x)
    x = make_cpu((1, 1, 50), torch.float64, seed=13)
    compare(lambda t: F.interpolate(t, size=3, mode="linear"), x)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_special_values(mode):
    x = make_cpu((1, 2, 4, 5), torch.float32, seed=14)
    x[0, 0, 1, 2], x[0, 1, 0, 0], x[0, 1, 3, 4] = INF, NAN, -INF
    for size in [(8, 10), (4, 5), (3, 7)]:
        kw = dict(size=size, **_kwargs(mode, False))
        assert_ocl_close(F.interpolate(x.to(DEVICE), **kw), F.interpolate(x, **kw))
        xd = x.to(DEVICE).requires_grad_()
        xc = x.clone().requires_grad_()
        yd, yc = F.interpolate(xd, **kw), F.interpolate(xc, **kw)
        g = make_cpu(yc.shape, torch.float32, seed=15)
        g[0, 0, 0, 1] = INF
        g[0, 1, -1, -1] = NAN
        (gd,) = torch.autograd.grad(yd, xd, g.to(DEVICE), retain_graph=True)
        (gc,) = torch.autograd.grad(yc, xc, g)
        assert_ocl_close(gd, gc)
        (again,) = torch.autograd.grad(yd, xd, g.to(DEVICE))
        assert torch.equal(gd.cpu().view(torch.int32), again.cpu().view(torch.int32))


@pytest.mark.filterwarnings("ignore:`nn.functional.upsample_.*` is deprecated")
def test_upsample_functions_and_out():
    x = make_cpu((2, 3, 4, 5), torch.float64, seed=16)
    compare(lambda t: F.upsample_nearest(t, scale_factor=2), x)
    compare(lambda t: F.upsample_bilinear(t, size=(7, 9)), x)
    aten = torch.ops.aten
    out_c, out_d = torch.empty(0), torch.empty(0, device=DEVICE)
    aten.upsample_bilinear2d.out(x.float(), [7, 9], True, out=out_c)
    aten.upsample_bilinear2d.out(x.float().to(DEVICE), [7, 9], True, out=out_d)
    assert_ocl_close(out_d, out_c)
    out_d = torch.empty(2, 3, 7, 18, device=DEVICE)[..., ::2]  # strided out
    aten.upsample_nearest2d.out(x.float().to(DEVICE), [7, 9], out=out_d)
    assert_ocl_close(out_d, aten.upsample_nearest2d(x.float(), [7, 9]))


def test_errors():
    aten = torch.ops.aten
    x = make_cpu((1, 2, 3, 4), torch.int64)
    for fn in [
        lambda t: aten.upsample_nearest2d(t, [6, 8]),
        lambda t: aten.upsample_bilinear2d(t.float(), [0, 8], False),
        lambda t: aten.upsample_nearest2d(t.float()[0], [6, 8]),
        lambda t: aten.upsample_linear1d(t[0].byte().contiguous(), [6], False),
        lambda t: aten.upsample_bilinear2d_backward(t.float(), [3, 5], [1, 2, 3, 5], False),
    ]:
        with pytest.raises(Exception) as cpu_err:
            fn(x)
        with pytest.raises(type(cpu_err.value)):
            fn(x.to(DEVICE))


def test_no_host_waits():
    x = make_cpu((2, 3, 5, 6), torch.float32).to(DEVICE).requires_grad_()
    torch.ocl.synchronize()
    with torch.ocl.sync_debug_mode("error"):
        y = F.interpolate(x, scale_factor=2, mode="bilinear") + F.interpolate(x, size=(10, 12))
        (y * y).sum().backward()
    torch.ocl.synchronize()
    assert x.grad is not None
