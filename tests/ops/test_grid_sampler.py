"""grid_sampler_2d / grid_sampler_3d (F.grid_sample, with F.affine_grid) against the CPU: every
interpolation mode (bilinear, nearest, bicubic in 2-d), padding mode (zeros, border, reflection)
and align_corners, forward and both gradients against a float64 CPU reference; grids reaching
far outside the image; empty, one-element, odd, strided, channels_last and large shapes;
float64/float16/bfloat16; infinities and NaN; the deterministic backward; the CPU's errors. Runs
with the CPU fallback set to raise."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, TOLERANCES, assert_ocl_close, make_cpu, skip_unsupported

NAN, INF = float("nan"), float("inf")
PADDINGS = ["zeros", "border", "reflection"]
CASES = [
    (dims, mode, pad, align)
    for dims in (2, 3)
    for mode in (("bilinear", "nearest", "bicubic") if dims == 2 else ("bilinear", "nearest"))
    for pad in PADDINGS
    for align in (False, True)
]
IDS = [f"{d}d-{m}-{p}-align{int(a)}" for d, m, p, a in CASES]


def make_grid(shape, seed, spread=1.3):
    """Grid coordinates in [-spread, spread): inside the image and some way outside it."""
    return make_cpu(shape, torch.float64, seed=seed, low=-spread, high=spread)


def _atol(cpu, ref, dtype):
    """The dtype's tolerance, or twice the CPU's own error in dtype against float64 where larger
    (bicubic's negative weights cancel, and a grid coordinate rounded to dtype moves the taps)."""
    base = TOLERANCES[dtype][1]
    if cpu.numel() == 0:
        return base
    err = (cpu.double() - ref).abs()
    return max(base, 2 * err[err.isfinite()].max().item() if err.isfinite().any() else base)


def compare(x, grid, dtype=torch.float32, grad=True, seed=5, **kw):
    """grid_sample on ocl in dtype equals the CPU's float64 result (and so do the gradients of
    input and grid), within the CPU's own error in dtype."""
    skip_unsupported(dtype)
    xs, gs = x.to(dtype), grid.to(dtype)
    xr, gr = xs.double().requires_grad_(), gs.double().requires_grad_()
    ref = F.grid_sample(xr, gr, **kw)
    xd, gd = xs.to(DEVICE).requires_grad_(), gs.to(DEVICE).requires_grad_()
    got = F.grid_sample(xd, gd, **kw)
    xc, gc = xs.clone().requires_grad_(), gs.clone().requires_grad_()
    cpu = F.grid_sample(xc, gc, **kw)
    assert got.shape == ref.shape and got.dtype == dtype
    assert_ocl_close(got, ref.detach().to(dtype), atol=_atol(cpu.detach(), ref.detach(), dtype))
    if not grad or ref.numel() == 0:
        return got
    go = make_cpu(ref.shape, torch.float64, seed=seed).to(dtype)
    ref_gx, ref_gg = torch.autograd.grad(ref, (xr, gr), go.double())
    got_gx, got_gg = torch.autograd.grad(got, (xd, gd), go.to(DEVICE))
    cpu_gx, cpu_gg = torch.autograd.grad(cpu, (xc, gc), go)
    assert_ocl_close(got_gx, ref_gx.to(dtype), atol=_atol(cpu_gx, ref_gx, dtype))
    assert_ocl_close(got_gg, ref_gg.to(dtype), atol=_atol(cpu_gg, ref_gg, dtype))
    return got


def shapes(dims):
    if dims == 2:
        return (2, 3, 5, 7), (2, 4, 6, 2)
    return (2, 3, 4, 5, 6), (2, 3, 4, 5, 3)


@pytest.mark.parametrize("dims,mode,pad,align", CASES, ids=IDS)
def test_modes(dims, mode, pad, align):
    xs, gs = shapes(dims)
    x = make_cpu(xs, torch.float64, seed=dims)
    kw = dict(mode=mode, padding_mode=pad, align_corners=align)
    compare(x, make_grid(gs, seed=1), **kw)
    # far outside (reflection folds many times, border clamps), and exactly on pixel centres
    compare(x, make_grid(gs, seed=2, spread=7.0), **kw)
    centres = torch.linspace(-1, 1, 5, dtype=torch.float64)
    g = centres[torch.randint(0, 5, gs, generator=torch.Generator().manual_seed(3))]
    compare(x, g, grad=mode != "nearest", **kw)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize(
    "case", ["empty_batch", "empty_channels", "empty_grid", "one", "single_pixel", "odd"]
)
def test_shapes(dims, case):
    sp = (3, 4, 5)[-dims:]
    xs, gs = {
        "empty_batch": ((0, 2, *sp), (0, *sp, dims)),
        "empty_channels": ((2, 0, *sp), (2, *sp, dims)),
        "empty_grid": ((2, 3, *sp), (2, *([0] + list(sp[1:])), dims)),
        "one": ((1, 1, *([1] * dims)), (1, *([1] * dims), dims)),
        "single_pixel": ((2, 3, *([1] * dims)), (2, *sp, dims)),
        "odd": ((3, 5, *(7, 3, 9)[-dims:]), (3, *(1, 5, 11)[-dims:], dims)),
    }[case]
    x = make_cpu(xs, torch.float64, seed=4)
    for mode in ("bilinear", "nearest") + (("bicubic",) if dims == 2 else ()):
        for pad, align in itertools.product(PADDINGS, (False, True)):
            compare(x, make_grid(gs, seed=6), mode=mode, padding_mode=pad, align_corners=align)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("layout", ["channels_last", "strided", "transposed_grid"])
def test_layouts(dims, layout):
    xs, gs = shapes(dims)
    x = make_cpu(xs, torch.float64, seed=8)
    g = make_grid(gs, seed=9)
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last if dims == 2 else torch.channels_last_3d)
    elif layout == "strided":
        x = make_cpu(xs[:-1] + (2 * xs[-1],), torch.float64, seed=8)[..., ::2]
        g = make_grid(gs[:-1] + (2 * dims,), seed=9)[..., ::2]
    else:
        g = make_grid((gs[0], gs[-2], *gs[1:-2], dims), seed=9).transpose(1, -2)
    for mode in ("bilinear", "nearest") + (("bicubic",) if dims == 2 else ()):
        kw = dict(mode=mode, padding_mode="reflection", align_corners=False)
        got = compare(x, g, **kw)
        # the CPU's result layout (contiguous)
        assert got.is_contiguous()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize(
    "dims,mode", [(2, "bilinear"), (2, "nearest"), (2, "bicubic"), (3, "bilinear"), (3, "nearest")]
)
def test_dtypes(dtype, dims, mode):
    xs, gs = shapes(dims)
    x = make_cpu(xs, torch.float64, seed=10)
    compare(x, make_grid(gs, seed=11), dtype, mode=mode, padding_mode="border", align_corners=True)


@pytest.mark.parametrize("dims", [2, 3])
def test_special_values(dims):
    xs, gs = shapes(dims)
    x = make_cpu(xs, torch.float32, seed=12)
    x.view(-1)[[0, 7, 20]] = torch.tensor([INF, NAN, -INF])
    g = make_grid(gs, seed=13).float()
    for mode in ("bilinear", "nearest") + (("bicubic",) if dims == 2 else ()):
        for pad in PADDINGS:
            kw = dict(mode=mode, padding_mode=pad, align_corners=False)
            xd, gd = x.to(DEVICE).requires_grad_(), g.to(DEVICE).requires_grad_()
            xc, gc = x.clone().requires_grad_(), g.clone().requires_grad_()
            yd, yc = F.grid_sample(xd, gd, **kw), F.grid_sample(xc, gc, **kw)
            assert_ocl_close(yd, yc, atol=1e-5)
            go = make_cpu(yc.shape, torch.float32, seed=14)
            go.view(-1)[3] = INF
            got = torch.autograd.grad(yd, (xd, gd), go.to(DEVICE), retain_graph=True)
            exp = torch.autograd.grad(yc, (xc, gc), go)
            assert_ocl_close(got[0], exp[0], atol=1e-5)
            assert_ocl_close(got[1], exp[1], atol=1e-4, rtol=1e-4)
            # deterministic: the same bits again
            again = torch.autograd.grad(yd, (xd, gd), go.to(DEVICE))
            for a, b in zip(got, again, strict=True):
                assert torch.equal(a.cpu().view(torch.int32), b.cpu().view(torch.int32))


def test_affine_grid_spatial_transformer():
    theta = make_cpu((4, 2, 3), torch.float64, seed=15, low=-1, high=1)
    x = make_cpu((4, 3, 9, 11), torch.float64, seed=16)
    for align in (False, True):
        ref_t = theta.clone().requires_grad_()
        dev_t = theta.float().to(DEVICE).requires_grad_()
        ref = F.grid_sample(
            x, F.affine_grid(ref_t, [4, 3, 6, 7], align_corners=align), align_corners=align
        )
        got = F.grid_sample(
            x.float().to(DEVICE),
            F.affine_grid(dev_t, [4, 3, 6, 7], align_corners=align),
            align_corners=align,
        )
        assert_ocl_close(got, ref.detach().float(), atol=1e-5)
        ref.sum().backward()
        got.sum().backward()
        assert_ocl_close(dev_t.grad, ref_t.grad.float(), atol=1e-4, rtol=1e-4)


def test_backward_output_mask():
    x = make_cpu((2, 3, 5, 6), torch.float32, seed=17)
    g = make_grid((2, 4, 4, 2), seed=18).float()
    go = make_cpu((2, 3, 4, 4), torch.float32, seed=19)
    aten = torch.ops.aten
    for mask in ([True, True], [False, True], [True, False]):
        exp = aten.grid_sampler_2d_backward(go, x, g, 0, 0, False, mask)
        got = aten.grid_sampler_2d_backward(
            go.to(DEVICE), x.to(DEVICE), g.to(DEVICE), 0, 0, False, mask
        )
        assert (got[0] is None) == (exp[0] is None) or got[0].defined() == exp[0].defined()
        if mask[0]:
            assert_ocl_close(got[0], exp[0], atol=1e-5)
        if mask[1]:
            assert_ocl_close(got[1], exp[1], atol=1e-5)


@pytest.mark.slow
def test_large():
    x = make_cpu((2, 8, 67, 131), torch.float64, seed=20)
    g = make_grid((2, 97, 129, 2), seed=21)
    for mode in ("bilinear", "bicubic"):
        compare(x, g, mode=mode, padding_mode="zeros", align_corners=False)
    x = make_cpu((1, 4, 17, 33, 29), torch.float64, seed=22)
    compare(x, make_grid((1, 15, 21, 19, 3), seed=23), padding_mode="border")


def test_errors():
    x, g = torch.zeros(1, 1, 2, 2), torch.zeros(1, 2, 2, 2)
    cases = [
        (lambda t, u: torch.grid_sampler(t.int(), u.int(), 0, 0, False), NotImplementedError),
        (lambda t, u: torch.grid_sampler(t, u.double(), 0, 0, False), RuntimeError),
        (lambda t, u: torch.grid_sampler(t, u[:, :, :, :1], 0, 0, False), RuntimeError),
        (lambda t, u: torch.grid_sampler(t.expand(2, 1, 2, 2), u, 0, 0, False), RuntimeError),
        (lambda t, u: torch.grid_sampler(t[:, :, :0], u, 0, 0, False), RuntimeError),
        (
            lambda t, u: torch.grid_sampler(
                t[None], u[None, ..., :1].expand(1, 1, 2, 2, 3), 2, 0, False
            ),
            RuntimeError,
        ),  # bicubic 3-d
        (lambda t, u: torch.ops.aten.grid_sampler_2d(t, u[None], 0, 0, False), RuntimeError),
    ]
    for fn, exc in cases:
        with pytest.raises(exc):
            fn(x, g)
        with pytest.raises(exc):
            fn(x.to(DEVICE), g.to(DEVICE))
    # the process stays usable
    assert_ocl_close(
        F.grid_sample(x.to(DEVICE), g.to(DEVICE), align_corners=False),
        F.grid_sample(x, g, align_corners=False),
    )
