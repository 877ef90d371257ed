"""Special functions in generated kernels (kernels/special.clh, shared with the eager ops):
digamma, erfinv, Bessel functions, incomplete gamma, orthogonal polynomials, ... compiled with
Inductor on ocl against eager PyTorch on the CPU in float64, NaN and Inf included. Each test
compiles one graph that computes every function of its group (one fused kernel)."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE
from torch._inductor.utils import run_and_get_code

S = torch.special

UNARY = {
    "digamma": torch.digamma,
    "erfinv": torch.erfinv,
    "i0": torch.i0,
    "i0e": S.i0e,
    "i1": S.i1,
    "i1e": S.i1e,
    "modified_bessel_i0": S.modified_bessel_i0,
    "modified_bessel_i1": S.modified_bessel_i1,
    "modified_bessel_k0": S.modified_bessel_k0,
    "modified_bessel_k1": S.modified_bessel_k1,
    "scaled_modified_bessel_k0": S.scaled_modified_bessel_k0,
    "scaled_modified_bessel_k1": S.scaled_modified_bessel_k1,
    "bessel_j0": S.bessel_j0,
    "bessel_j1": S.bessel_j1,
    "bessel_y0": S.bessel_y0,
    "bessel_y1": S.bessel_y1,
    "spherical_bessel_j0": S.spherical_bessel_j0,
    "airy_ai": S.airy_ai,
    "ndtr": S.ndtr,
    "log_ndtr": S.log_ndtr,  # through erfcx: exp(x^2) erfc(x) would be NaN at -inf
    "erfcx": S.erfcx,
    "ndtri": S.ndtri,
}

BINARY = {
    "polygamma": lambda x, n: torch.polygamma(2, x),
    "zeta": lambda x, q: S.zeta(x.abs() + 1, q.abs() + 0.5),
    "igamma": lambda a, x: torch.igamma(a.abs() + 0.1, x.abs()),
    "igammac": lambda a, x: torch.igammac(a.abs() + 0.1, x.abs()),
    "chebyshev_t": lambda x, n: S.chebyshev_polynomial_t(x, n),
    "chebyshev_u": lambda x, n: S.chebyshev_polynomial_u(x, n),
    "chebyshev_v": lambda x, n: S.chebyshev_polynomial_v(x, n),
    "chebyshev_w": lambda x, n: S.chebyshev_polynomial_w(x, n),
    "shifted_chebyshev_t": lambda x, n: S.shifted_chebyshev_polynomial_t(x, n),
    "hermite_h": lambda x, n: S.hermite_polynomial_h(x, n),
    "hermite_he": lambda x, n: S.hermite_polynomial_he(x, n),
    "laguerre_l": lambda x, n: S.laguerre_polynomial_l(x, n),
    "legendre_p": lambda x, n: S.legendre_polynomial_p(x, n),
}


def _inputs(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.cat(
        [
            torch.rand(61, generator=g, dtype=torch.float64) * 8 - 4,
            torch.rand(30, generator=g, dtype=torch.float64) * 0.98 + 0.01,  # erfinv, ndtri
            torch.tensor(
                [0.0, 1.0, -1.0, 0.5, 2.5, 30.0, float("nan"), float("inf"), -float("inf")],
                dtype=torch.float64,
            ),
        ]
    )
    n = torch.randint(0, 6, x.shape, generator=g).to(torch.float64)
    return x.to(dtype), n.to(dtype)


# The orthogonal polynomials at NaN: the CPU's recurrences give numbers for some degrees
# (chebyshev_polynomial_u(nan, 4) is 215880 there), the ocl op gives NaN; those positions are
# compared with the eager ocl op only.
POLYNOMIALS = {
    name
    for name in BINARY
    if "_" in name
    and name.split("_")[0] in ("chebyshev", "shifted", "hermite", "laguerre", "legendre")
}


def _check(table, dtype, binary):
    def graph(x, n):
        return torch.stack([(f(x, n) if binary else f(x)) for f in table.values()])

    x, n = _inputs(dtype)
    torch._dynamo.reset()
    fn = torch.compile(graph)
    with torch.ocl.fallback_mode("error"):
        out, (code,) = run_and_get_code(fn, x.to(DEVICE), n.to(DEVICE))
        eager = graph(x.to(DEVICE), n.to(DEVICE)).cpu()
    assert '#include "special.clh"' in code
    expected = graph(x.double(), n.double())
    # Against the eager ocl op (the same code in kernels/special.clh): equal but for the
    # compiler's freedom in fusing (contractions) and the order of float operations.
    same = (
        {"rtol": 1e-5, "atol": 1e-6} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-14}
    )
    # Against the CPU in float64. float64: the Bessel J/Y and Airy kernels agree with the CPU's
    # to about 2e-6 (J, Y near their zeros) and 2e-5 (Ai) relative: a property of the eager
    # kernels this shares, not of the compilation (compared tightly with eager above).
    tol = {"rtol": 2e-4, "atol": 2e-5} if dtype == torch.float32 else {"rtol": 5e-5, "atol": 5e-6}
    finite = torch.isfinite(x)
    for i, name in enumerate(table):
        got = out[i].cpu()
        torch.testing.assert_close(
            got,
            eager[i],
            equal_nan=True,
            msg=lambda m, name=name: f"{name} vs eager ocl: {m}",
            **same,
        )
        keep = finite if name in POLYNOMIALS else torch.ones_like(finite)
        torch.testing.assert_close(
            got.double()[keep],
            expected[i][keep],
            equal_nan=True,
            msg=lambda m, name=name: f"{name} vs CPU: {m}",
            **tol,
        )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_unary_special_functions(dtype):
    if dtype == torch.float64 and not torch.ocl.get_device_properties(0).supports_fp64:
        pytest.skip("the device has no float64 (cl_khr_fp64)")
    _check(UNARY, dtype, binary=False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_binary_special_functions(dtype):
    if dtype == torch.float64 and not torch.ocl.get_device_properties(0).supports_fp64:
        pytest.skip("the device has no float64 (cl_khr_fp64)")
    _check(BINARY, dtype, binary=True)


def test_float_kernels_compute_special_functions_in_float():
    # A float32 graph must not compute in double (slow on many GPUs): the header's COMP is float.
    x, _ = _inputs(torch.float32)
    torch._dynamo.reset()
    fn = torch.compile(lambda x: torch.digamma(x) + S.i0e(x))
    _, (code,) = run_and_get_code(fn, x.to(DEVICE))
    assert "#define COMP float" in code and "double" not in code.split('#include "special.clh"')[1]
