"""torch.fft, stft/istft and their gradients on the ocl device (csrc/ops/Fft.cpp,
kernels/fft.cl) against the CPU in complex128 / float64: power-of-two, small-prime, mixed and large
prime (Bluestein) lengths, every norm mode, batched, n-d and non-contiguous inputs, NaN/Inf."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, skip_unsupported

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 17, 97, 100, 257, 1000, 4096]
NORMS = [None, "forward", "ortho"]


def make(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_complex:
        return torch.view_as_complex(torch.randn((*shape, 2), generator=g, dtype=torch.float64)).to(
            dtype
        )
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def ref_of(fn, x, *args, **kwargs):
    """fn on the CPU in double precision, cast back to the dtype torch gives for x."""
    expected = fn(x, *args, **kwargs)
    wide = x.to(torch.complex128 if x.is_complex() else torch.float64)
    return fn(wide, *args, **kwargs).to(expected.dtype)


def check(got, expected):
    """FFT rounding grows with log(n) and the values' magnitude: compare against the largest."""
    scale = expected.abs().max().item() if expected.numel() else 1.0
    single = expected.dtype in (torch.complex64, torch.float32)
    tol = (2e-5 if single else 1e-11) * max(scale, 1.0)
    assert_ocl_close(got, expected, rtol=0, atol=tol)


def _skip64(dtype):
    skip_unsupported(torch.float64 if dtype in (torch.complex128, torch.float64) else dtype)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=dtype_id)
@pytest.mark.parametrize("n", LENGTHS)
def test_fft_ifft_lengths(n, dtype):
    _skip64(dtype)
    x = make((3, n), dtype)
    xo = x.to(DEVICE)
    for norm in NORMS:
        check(torch.fft.fft(xo, norm=norm), ref_of(torch.fft.fft, x, norm=norm))
        check(torch.fft.ifft(xo, norm=norm), ref_of(torch.fft.ifft, x, norm=norm))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("n", LENGTHS)
def test_rfft_irfft_hfft_lengths(n, dtype):
    _skip64(dtype)
    x = make((2, n), dtype)
    xo = x.to(DEVICE)
    for norm in NORMS:
        check(torch.fft.rfft(xo, norm=norm), ref_of(torch.fft.rfft, x, norm=norm))
        check(torch.fft.fft(xo, norm=norm), ref_of(torch.fft.fft, x, norm=norm))  # real input
        check(torch.fft.ihfft(xo, norm=norm), ref_of(torch.fft.ihfft, x, norm=norm))
        spec = torch.fft.rfft(x)
        so = spec.to(DEVICE)
        check(torch.fft.irfft(so, n=n, norm=norm), ref_of(torch.fft.irfft, spec, n=n, norm=norm))
        check(torch.fft.hfft(so, n=n, norm=norm), ref_of(torch.fft.hfft, spec, n=n, norm=norm))
    # the default length 2 (m - 1), and a non-Hermitian input (imaginary DC part ignored)
    c = make((2, n // 2 + 1), torch.complex64 if dtype == torch.float32 else torch.complex128)
    if c.shape[-1] > 1:  # default length 2 (m - 1); for m = 1 that is 0, refused on both
        check(torch.fft.irfft(c.to(DEVICE)), ref_of(torch.fft.irfft, c))
    else:
        with pytest.raises(RuntimeError, match="Invalid number of data points"):
            torch.fft.irfft(c.to(DEVICE))
    check(torch.fft.irfft(c.to(DEVICE), n=n), ref_of(torch.fft.irfft, c, n=n))


@pytest.mark.parametrize("n", [1009, 4099, 2 * 1031])
def test_bluestein_large_primes(n):
    x = make((2, n), torch.complex64)
    check(torch.fft.fft(x.to(DEVICE)), ref_of(torch.fft.fft, x))
    check(torch.fft.ifft(x.to(DEVICE), norm="ortho"), ref_of(torch.fft.ifft, x, norm="ortho"))
    r = make((n,), torch.float32)
    check(torch.fft.rfft(r.to(DEVICE)), ref_of(torch.fft.rfft, r))


@pytest.mark.parametrize("norm", NORMS)
def test_nd_transforms(norm):
    x = make((4, 6, 10, 9), torch.complex64)
    xo = x.to(DEVICE)
    check(torch.fft.fft2(xo, norm=norm), ref_of(torch.fft.fft2, x, norm=norm))
    check(
        torch.fft.ifftn(xo, dim=(0, 2, 3), norm=norm),
        ref_of(torch.fft.ifftn, x, dim=(0, 2, 3), norm=norm),
    )
    check(
        torch.fft.fftn(xo, s=(8, 5), dim=(1, 3), norm=norm),
        ref_of(torch.fft.fftn, x, s=(8, 5), dim=(1, 3), norm=norm),
    )
    r = make((3, 10, 12), torch.float32)
    ro = r.to(DEVICE)
    check(torch.fft.rfft2(ro, norm=norm), ref_of(torch.fft.rfft2, r, norm=norm))
    check(
        torch.fft.rfftn(ro, dim=(0, 2), norm=norm),
        ref_of(torch.fft.rfftn, r, dim=(0, 2), norm=norm),
    )
    spec = torch.fft.rfft2(r)
    check(
        torch.fft.irfft2(spec.to(DEVICE), s=(10, 12), norm=norm),
        ref_of(torch.fft.irfft2, spec, s=(10, 12), norm=norm),
    )
    check(
        torch.fft.irfftn(spec.to(DEVICE), s=(10, 11), norm=norm),
        ref_of(torch.fft.irfftn, spec, s=(10, 11), norm=norm),
    )
    check(
        torch.fft.hfft2(spec.to(DEVICE), s=(10, 12), norm=norm),
        ref_of(torch.fft.hfft2, spec, s=(10, 12), norm=norm),
    )
    check(torch.fft.ihfft2(ro, norm=norm), ref_of(torch.fft.ihfft2, r, norm=norm))


def test_non_contiguous_batched_and_empty():
    x = make((16, 12, 5), torch.complex64)
    xo = x.to(DEVICE)
    check(torch.fft.fft(xo.transpose(0, 2), dim=1), ref_of(torch.fft.fft, x.transpose(0, 2), dim=1))
    check(torch.fft.fft(xo[::2, :, 1:], dim=0), ref_of(torch.fft.fft, x[::2, :, 1:], dim=0))
    check(torch.fft.fft(xo.conj(), dim=1), ref_of(torch.fft.fft, x.conj(), dim=1))
    r = make((9, 20), torch.float32)
    ro = r.to(DEVICE)
    check(torch.fft.rfft(ro.t(), dim=0), ref_of(torch.fft.rfft, r.t(), dim=0))
    check(torch.fft.rfft(ro[:, 1:17]), ref_of(torch.fft.rfft, r[:, 1:17]))  # odd storage offset
    # empty batches (the CPU's MKL refuses some of these: compare shapes and dtypes)
    e = torch.zeros(0, 8, dtype=torch.complex64, device=DEVICE)
    assert torch.fft.fft(e).shape == (0, 8) and torch.fft.fft(e).dtype == torch.complex64
    assert torch.fft.rfft(torch.zeros(0, 8, device=DEVICE)).shape == (0, 5)
    assert torch.fft.irfft(e).shape == (0, 14) and torch.fft.irfft(e).dtype == torch.float32
    for dev in ("cpu", DEVICE):  # a transformed dim of length 0: refused on both
        with pytest.raises(RuntimeError, match="Invalid number of data points"):
            torch.fft.fft2(torch.zeros(3, 0, 4, dtype=torch.complex64, device=dev))
    out = torch.empty(0, dtype=torch.complex64, device=DEVICE)
    torch.fft.fft(xo, out=out)
    check(out, ref_of(torch.fft.fft, x))
    check(
        torch.fft.fftshift(torch.fft.fft(xo), dim=-1),
        torch.fft.fftshift(ref_of(torch.fft.fft, x), dim=-1),
    )


# Lengths around the 16 x 16 of the batched 2-d benchmark: radix 16 passes (256, 512 = 16 16 2),
# mixed small primes (255 = 3 5 17 -> Bluestein), a large prime (257), along every axis: the
# innermost one runs along rows, the others on whole columns side by side (kernels/fft.cl layout
# 0) when the columns span at least 64 bytes, else with the axis moved last.
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=dtype_id)
@pytest.mark.parametrize("n", [256, 255, 257, 512])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_lengths_along_each_axis(n, axis, dtype):
    _skip64(dtype)
    shape = [3, 5, 9]
    shape[axis] = n
    x = make(shape, dtype)
    xo = x.to(DEVICE)
    for norm in NORMS:
        check(torch.fft.fft(xo, dim=axis, norm=norm), ref_of(torch.fft.fft, x, dim=axis, norm=norm))
        check(
            torch.fft.ifft(xo, dim=axis, norm=norm), ref_of(torch.fft.ifft, x, dim=axis, norm=norm)
        )
    wide = [2, 16, 16]  # columns of 16 values: 128 bytes of complex64
    wide[axis] = n
    w = make(wide, dtype)
    check(torch.fft.fft(w.to(DEVICE), dim=axis), ref_of(torch.fft.fft, w, dim=axis))
    real = make(wide, torch.float32 if dtype == torch.complex64 else torch.float64)
    check(torch.fft.rfft(real.to(DEVICE), dim=axis), ref_of(torch.fft.rfft, real, dim=axis))


@pytest.mark.parametrize("shape", [(4, 256, 256), (3, 255, 257), (2, 512, 24), (5, 12, 256)])
def test_fft2_batched_columns(shape):
    x = make(shape, torch.complex64)
    xo = x.to(DEVICE)
    check(torch.fft.fft2(xo), ref_of(torch.fft.fft2, x))
    check(torch.fft.ifft2(xo, norm="ortho"), ref_of(torch.fft.ifft2, x, norm="ortho"))
    r = make(shape, torch.float32)
    ro = r.to(DEVICE)
    check(torch.fft.rfft2(ro), ref_of(torch.fft.rfft2, r))
    spec = torch.fft.rfft2(r)
    s = shape[-2:]
    check(torch.fft.irfft2(spec.to(DEVICE), s=s), ref_of(torch.fft.irfft2, spec, s=s))
    # the result is contiguous in the input's order, as on the CPU
    assert torch.fft.fft2(xo).is_contiguous()


def test_columns_non_contiguous_inputs():
    x = make((6, 64, 40), torch.complex64)
    xo = x.to(DEVICE)
    # strided columns (every other one), a permuted tensor, an offset slice, a broadcast batch
    check(torch.fft.fft(xo[:, :, ::2], dim=1), ref_of(torch.fft.fft, x[:, :, ::2], dim=1))
    check(
        torch.fft.fft(xo.permute(1, 0, 2), dim=0), ref_of(torch.fft.fft, x.permute(1, 0, 2), dim=0)
    )
    check(torch.fft.fft(xo[1:, 3:, 5:], dim=1), ref_of(torch.fft.fft, x[1:, 3:, 5:], dim=1))
    check(
        torch.fft.fftn(xo.transpose(1, 2), dim=(0, 1)),
        ref_of(torch.fft.fftn, x.transpose(1, 2), dim=(0, 1)),
    )
    b = make((1, 32, 16), torch.complex64)
    be = b.expand(3, 32, 16)
    check(torch.fft.fft(be.to(DEVICE), dim=1), ref_of(torch.fft.fft, be, dim=1))
    check(torch.fft.fft(b.to(DEVICE).expand(3, 32, 16), dim=1), ref_of(torch.fft.fft, be, dim=1))
    # dims that do not merge into one column stride: [a, n, b, c] with b, c transposed
    y = make((2, 16, 8, 6), torch.complex64)
    yo = y.to(DEVICE).transpose(2, 3)
    check(torch.fft.fft(yo, dim=1), ref_of(torch.fft.fft, y.transpose(2, 3), dim=1))


@pytest.mark.parametrize("axis", [0, 1])
def test_nan_inf_along_columns_and_rows(axis):
    x = make((256, 16), torch.complex64) if axis == 0 else make((16, 256), torch.complex64)
    sel = (slice(None), 3) if axis == 0 else (3, slice(None))
    other = (slice(None), 5) if axis == 0 else (5, slice(None))
    x[(7, 3) if axis == 0 else (3, 7)] = complex(float("nan"), 0)
    x[(9, 5) if axis == 0 else (5, 9)] = complex(float("inf"), 0)
    got_dev = torch.fft.fft(x.to(DEVICE), dim=axis)
    got = got_dev.cpu()
    expected = ref_of(torch.fft.fft, x, dim=axis)
    assert torch.isnan(got[sel]).all() and torch.isnan(expected[sel]).all()
    assert (~torch.isfinite(got[other])).all() and (~torch.isfinite(expected[other])).all()
    # the other columns / rows stay finite and match
    keep = [i for i in range(16) if i not in (3, 5)]
    pick = (slice(None), keep) if axis == 0 else (keep, slice(None))
    check(got_dev[pick], expected[pick])


def test_nan_inf_propagate():
    x = make((2, 16), torch.complex64)
    x[0, 3] = complex(float("nan"), 0)
    x[1, 5] = complex(float("inf"), 0)
    got = torch.fft.fft(x.to(DEVICE)).cpu()
    expected = torch.fft.fft(x)
    # A NaN input spreads to every output, as on the CPU; an infinity gives infinities or NaNs.
    assert torch.isnan(got[0]).all() and torch.isnan(expected[0]).all()
    assert (~torch.isfinite(got[1])).all() and (~torch.isfinite(expected[1])).all()


def _grad_pair(fn, x):
    xc = x.clone().requires_grad_()
    xo = x.to(DEVICE).requires_grad_()
    yc, yo = fn(xc), fn(xo)
    w = make(yc.shape, yc.dtype, seed=5)
    (yc * w).real.sum().backward() if yc.is_complex() else (yc * w).sum().backward()
    (yo * w.to(DEVICE)).real.sum().backward() if yo.is_complex() else (
        yo * w.to(DEVICE)
    ).sum().backward()
    return xo.grad, xc.grad


@pytest.mark.parametrize(
    "name",
    ["fft", "ifft_ortho", "rfft", "irfft", "fft2", "rfftn", "irfftn", "hfft", "ihfft", "fft_real"],
)
def test_gradients_match_cpu(name):
    c = make((4, 10), torch.complex128)
    r = make((4, 10), torch.float64)
    spec = torch.fft.rfft(r)
    cases = {
        "fft": (lambda x: torch.fft.fft(x), c),
        "ifft_ortho": (lambda x: torch.fft.ifft(x, norm="ortho"), c),
        "rfft": (lambda x: torch.fft.rfft(x), r),
        "irfft": (lambda x: torch.fft.irfft(x, n=10), spec),
        "fft2": (lambda x: torch.fft.fft2(x), c),
        "rfftn": (lambda x: torch.fft.rfftn(x, norm="forward"), r),
        "irfftn": (lambda x: torch.fft.irfftn(x, s=(4, 9)), spec),
        "hfft": (lambda x: torch.fft.hfft(x, n=9), spec),
        "ihfft": (lambda x: torch.fft.ihfft(x), r),
        "fft_real": (lambda x: torch.fft.fft(x, n=7), r),
    }
    fn, x = cases[name]
    got, expected = _grad_pair(fn, x)
    check(got, expected)


def test_gradcheck_rfft_c2c_on_device():
    x = make((3, 8), torch.float64).to(DEVICE).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: torch.fft.rfft(t, norm="ortho"), (x,))
    z = make((2, 6), torch.complex128).to(DEVICE).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: torch.fft.fft2(t), (z,))


@pytest.mark.parametrize("center", [True, False])
def test_stft_istft(center):
    sig = make((2, 4000), torch.float32)
    win = torch.hann_window(256)
    kw = dict(n_fft=256, hop_length=64, return_complex=True, center=center)
    so = torch.stft(sig.to(DEVICE), window=win.to(DEVICE), **kw)
    sc = torch.stft(sig.double(), window=win.double(), **kw).to(torch.complex64)
    check(so, sc)
    if not center:  # Hann's zero first sample fails istft's overlap-add check, on the CPU too
        return
    back = torch.istft(so, n_fft=256, hop_length=64, window=win.to(DEVICE), length=4000)
    ref = torch.istft(sc, n_fft=256, hop_length=64, window=win, length=4000)
    check(back, ref)
    check(back, sig)  # a round trip


def test_stft_gradient():
    sig = make((1, 600), torch.float64)
    win = torch.hann_window(64, dtype=torch.float64)

    def fn(x):
        w = win.to(x.device)
        return torch.stft(x, n_fft=64, hop_length=16, window=w, return_complex=True).abs()

    got, expected = _grad_pair(fn, sig)
    check(got, expected)


def test_fft_adds_no_host_wait():
    x = make((8, 512), torch.complex64).to(DEVICE)
    r = make((8, 1000), torch.float32).to(DEVICE)
    torch.fft.fft(x)  # twiddle tables and kernels built
    torch.fft.irfft(torch.fft.rfft(r), n=1000)
    torch.fft.fft(make((2, 257), torch.complex64).to(DEVICE))
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    y = torch.fft.ifft(torch.fft.fft(x))
    z = torch.fft.irfft(torch.fft.rfft(r), n=1000)
    w = torch.fft.fft(make((2, 257), torch.complex64).to(DEVICE))
    assert torch.ocl.host_wait_count() == before
    check(y, x.cpu())
    check(z, r.cpu())
    assert w.shape == (2, 257)


def test_half_input_error_is_clear():
    x = torch.randn(8, dtype=torch.float16).to(DEVICE)
    with pytest.raises(RuntimeError):
        torch.fft.rfft(x)
    assert torch.fft.rfft(x.float()).shape == (5,)
