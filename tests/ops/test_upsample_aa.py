"""Antialiased resizing (F.interpolate(..., antialias=True): _upsample_bilinear2d_aa and
_upsample_bicubic2d_aa, csrc/ops/UpsampleAA.cpp, kernels/upsample_aa.cl) on the ocl device against
PyTorch on the CPU in float64: down- and upscaling by odd factors, align_corners, explicit
scale factors, one-pixel and empty inputs, non-contiguous and channels_last inputs, NaN/Inf, and
the gradients against CPU autograd, with the CPU fallback set to raise.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

MODES = ("bilinear", "bicubic")


def _check(x, grad=True, **kw):
    """Against the CPU in float64; float32 against the CPU's float32, which computes the filter
    weights in float32 as the device does (both differ from float64 by about 1e-5 where the
    weighted sum cancels)."""
    ref_dtype = torch.float64 if x.dtype == torch.float64 else x.dtype
    xd = x.detach().to(DEVICE).requires_grad_(grad)
    xc = x.detach().to(ref_dtype).requires_grad_(grad)
    out = F.interpolate(xd, antialias=True, **kw)
    ref = F.interpolate(xc, antialias=True, **kw)
    assert_ocl_close(out.detach(), ref.detach().to(x.dtype))
    if grad:
        g = make_cpu(tuple(ref.shape), torch.float64, seed=9)
        out.backward(g.to(x.dtype).to(DEVICE))
        ref.backward(g.to(ref_dtype))
        assert_ocl_close(xd.grad, xc.grad.to(x.dtype))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [(5, 7), (3, 2), (17, 23), (1, 1), (40, 9)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_aa_sizes(mode, size, align_corners):
    x = make_cpu((2, 3, 13, 19), torch.float64)
    _check(x, size=size, mode=mode, align_corners=align_corners)


@pytest.mark.parametrize("mode", MODES)
def test_aa_scale_factors_and_float32(mode):
    skip_unsupported(torch.float32)
    x = make_cpu((1, 2, 31, 20), torch.float32)
    _check(x, scale_factor=(0.3, 0.45), mode=mode)
    _check(x, scale_factor=(0.3, 0.45), mode=mode, recompute_scale_factor=True)
    _check(x, scale_factor=(1.7, 2.0), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_aa_layouts(mode):
    base = make_cpu((2, 4, 12, 30), torch.float64)
    _check(base[:, :, :, ::2], size=(5, 4), mode=mode)  # strided
    _check(base.to(memory_format=torch.channels_last), size=(7, 5), mode=mode)
    _check(make_cpu((1, 1, 1, 1), torch.float64), size=(3, 2), mode=mode)  # one pixel
    _check(make_cpu((0, 2, 6, 6), torch.float64), size=(3, 3), mode=mode, grad=False)  # empty


@pytest.mark.parametrize("mode", MODES)
def test_aa_nan_inf(mode):
    x = make_cpu((1, 1, 9, 9), torch.float64)
    x[0, 0, 2, 3] = float("nan")
    x[0, 0, 7, 7] = float("inf")
    _check(x, size=(4, 4), mode=mode, grad=False)


def test_aa_out_and_errors():
    x = make_cpu((1, 2, 8, 8), torch.float32)
    out = torch.empty(0, device=DEVICE)
    torch.ops.aten._upsample_bilinear2d_aa.out(x.to(DEVICE), [3, 5], False, None, None, out=out)
    ref = torch.ops.aten._upsample_bilinear2d_aa(x.double(), [3, 5], False, None, None)
    assert_ocl_close(out, ref.float())
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        F.interpolate(x.half().to(DEVICE), size=(3, 3), mode="bilinear", antialias=True)


@pytest.mark.parametrize("dtype", [torch.uint8], ids=dtype_id)
def test_aa_uint8_is_refused_clearly(dtype):
    x = torch.randint(0, 255, (1, 3, 8, 8), dtype=dtype)
    with pytest.raises(NotImplementedError, match="uint8"):
        F.interpolate(x.to(DEVICE), size=(3, 3), mode="bilinear", antialias=True)
