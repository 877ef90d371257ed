"""The linalg ops (csrc/ops/Linalg.cpp, kernels/linalg.cl) against the CPU in float64: LU
(lu_factor, lu, lu_unpack, lu_solve, solve, inv, det, slogdet, matrix_power), triangular solves,
Cholesky (cholesky, cholesky_solve, cholesky_inverse) and QR (qr, geqrf, householder_product,
ormqr). Well-conditioned random matrices, batches, empty batches, 1x1, odd and rectangular
sizes, non-contiguous inputs, broadcasting, out=, the CPU's errors for singular and
non-positive-definite inputs, NaN inputs, and gradients through ATen's formulas."""

from __future__ import annotations

import warnings

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, skip_unsupported

DTYPES = (torch.float32, torch.float64)
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-9, atol=1e-9)}
SQUARE = [(5, 5), (3, 4, 4), (2, 3, 6, 6), (1, 1), (0, 3, 3), (17, 17)]


def well_conditioned(shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(shape, generator=g, dtype=torch.float64)
    n = shape[-1]
    if shape[-2] == n:
        a = a + n * torch.eye(n, dtype=torch.float64)
    return a.to(dtype)


def spd(shape, dtype=torch.float64, seed=0):
    a = well_conditioned(shape, torch.float64, seed)
    n = shape[-1]
    return (a @ a.mT + n * torch.eye(n, dtype=torch.float64)).to(dtype)


def close(actual, expected, dtype, scale=1.0):
    tol = TOL[dtype]
    assert_ocl_close(actual, expected.to(dtype), rtol=tol["rtol"] * scale, atol=tol["atol"] * scale)


def ref(fn, *args):
    """fn on float64 CPU copies of args (ocl tensors or CPU tensors)."""
    return fn(
        *[
            a.cpu().double()
            if isinstance(a, torch.Tensor) and a.is_floating_point()
            else (a.cpu() if isinstance(a, torch.Tensor) else a)
            for a in args
        ]
    )


# ---- LU family ----


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SQUARE + [(7, 4), (4, 7), (2, 6, 3)], ids=str)
def test_lu_factor_and_lu(shape, dtype):
    skip_unsupported(dtype)
    a = well_conditioned(shape, dtype, seed=len(shape))
    ad = a.to(DEVICE)
    LU, piv, info = torch.linalg.lu_factor_ex(ad)
    LUc, pivc, infoc = torch.linalg.lu_factor_ex(a.double())
    close(LU, LUc, dtype, scale=10)
    assert_ocl_close(piv, pivc, exact=True)
    assert_ocl_close(info, infoc, exact=True)
    P, L, U = torch.linalg.lu(ad)
    Pc, Lc, Uc = torch.linalg.lu(a.double())
    assert_ocl_close(P, Pc.to(dtype), exact=True)
    close(L, Lc, dtype, scale=10)
    close(U, Uc, dtype, scale=10)
    P2, L2, U2 = torch.lu_unpack(LU, piv)
    assert_ocl_close(P2, Pc.to(dtype), exact=True)
    close(L2, Lc, dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SQUARE, ids=str)
def test_solve_inv_det(shape, dtype):
    skip_unsupported(dtype)
    a = well_conditioned(shape, dtype, seed=3)
    b = well_conditioned(shape[:-1] + (3,), dtype, seed=4)
    ad, bd = a.to(DEVICE), b.to(DEVICE)
    close(torch.linalg.solve(ad, bd), ref(torch.linalg.solve, a, b), dtype, scale=10)
    close(torch.linalg.solve(ad, bd[..., 0]), ref(torch.linalg.solve, a, b[..., 0]), dtype, 10)
    bl = well_conditioned(shape[:-2] + (2, shape[-1]), dtype, seed=5)
    close(
        torch.linalg.solve(ad, bl.to(DEVICE), left=False),
        ref(lambda x, y: torch.linalg.solve(x, y, left=False), a, bl),
        dtype,
        scale=10,
    )
    close(torch.linalg.inv(ad), ref(torch.linalg.inv, a), dtype, scale=10)
    close(torch.inverse(ad), ref(torch.inverse, a), dtype, scale=10)
    scale = 100 * max(1, shape[-1])
    close(torch.linalg.det(ad), ref(torch.linalg.det, a), dtype, scale=scale)
    sign, logabs = torch.linalg.slogdet(ad)
    signc, logabsc = ref(torch.linalg.slogdet, a)
    close(sign, signc, dtype)
    close(logabs, logabsc, dtype, scale=10)
    close(torch.logdet(ad @ ad.mT), ref(lambda x: torch.logdet(x @ x.mT), a), dtype, scale)
    inv, info = torch.linalg.inv_ex(ad)
    assert_ocl_close(info, torch.zeros(shape[:-2], dtype=torch.int32), exact=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_lu_solve_variants_broadcast_and_layouts(dtype):
    skip_unsupported(dtype)
    a = well_conditioned((3, 5, 5), dtype, seed=6)
    b = well_conditioned((3, 5, 4), dtype, seed=7)
    LU, piv = torch.linalg.lu_factor(a.to(DEVICE))
    LUc, pivc = torch.linalg.lu_factor(a.double())
    for left in (True, False):
        for adjoint in (False, True):
            bb = b if left else b.mT
            x = torch.linalg.lu_solve(LU, piv, bb.to(DEVICE), left=left, adjoint=adjoint)
            xc = torch.linalg.lu_solve(LUc, pivc, bb.double(), left=left, adjoint=adjoint)
            close(x, xc, dtype, scale=10)
    # LU broadcast over B's batch, a transposed (non-contiguous) A and B
    a2 = well_conditioned((5, 5), dtype, seed=8)
    LU2, piv2 = torch.linalg.lu_factor(a2.to(DEVICE).mT)
    LU2c, piv2c = torch.linalg.lu_factor(a2.double().mT)
    b2 = well_conditioned((2, 4, 5), dtype, seed=9).mT
    close(
        torch.linalg.lu_solve(LU2, piv2, b2.to(DEVICE)),
        torch.linalg.lu_solve(LU2c, piv2c, b2.double()),
        dtype,
        scale=10,
    )
    close(
        torch.lu_solve(b2.to(DEVICE), LU2, piv2),
        torch.lu_solve(b2.double(), LU2c, piv2c),
        dtype,
        scale=10,
    )
    # batched A with a broadcast B, strided (non-contiguous) inputs
    ab = well_conditioned((4, 9, 9), dtype, seed=10)[:, ::2, ::2]
    bb = well_conditioned((6, 2), dtype, seed=11)[::1, :][:5]
    close(
        torch.linalg.solve(ab.to(DEVICE), bb.to(DEVICE)),
        ref(torch.linalg.solve, ab, bb),
        dtype,
        scale=10,
    )


def test_out_variants():
    a = well_conditioned((2, 4, 4), seed=12)
    b = well_conditioned((2, 4, 3), seed=13)
    ad, bd = a.to(DEVICE), b.to(DEVICE)
    out = torch.empty(2, 3, 4, device=DEVICE, dtype=torch.float64).mT  # F-contiguous
    torch.linalg.solve(ad, bd, out=out)
    close(out, torch.linalg.solve(a, b), torch.float64)
    out = torch.empty(0, device=DEVICE, dtype=torch.float64)  # resized
    torch.linalg.inv(ad, out=out)
    close(out, torch.linalg.inv(a), torch.float64)
    LU = torch.empty(2, 4, 4, device=DEVICE, dtype=torch.float64)  # row-major out
    piv = torch.empty(2, 4, device=DEVICE, dtype=torch.int32)
    torch.linalg.lu_factor(ad, out=(LU, piv))
    LUc, pivc = torch.linalg.lu_factor(a)
    close(LU, LUc, torch.float64)
    assert_ocl_close(piv, pivc, exact=True)


def test_matrix_power_and_composites():
    a = well_conditioned((3, 4, 4), seed=14) / 4
    ad = a.to(DEVICE)
    for k in (-3, -1, 2):
        close(
            torch.linalg.matrix_power(ad, k),
            torch.linalg.matrix_power(a, k),
            torch.float64,
            scale=100,
        )
    t = well_conditioned((24, 24), seed=15).reshape(4, 6, 4, 6)
    close(
        torch.linalg.tensorinv(t.to(DEVICE), ind=2),
        torch.linalg.tensorinv(t, ind=2),
        torch.float64,
        scale=1e3,
    )


def test_singular_errors_and_info():
    a = well_conditioned((3, 4, 4), seed=16)
    a[1, :, 2] = 0  # column 2 of batch element 1: singular
    ad = a.to(DEVICE)
    for fn in (torch.linalg.inv, lambda x: torch.linalg.solve(x, x), torch.linalg.lu_factor):
        with pytest.raises(RuntimeError) as cpu_err:  # LinAlgError for inv and solve
            fn(a)
        with pytest.raises(type(cpu_err.value)) as err:
            fn(ad)
        assert str(err.value) == str(cpu_err.value)
    _, info = torch.linalg.inv_ex(ad)
    assert_ocl_close(info, torch.linalg.inv_ex(a)[1], exact=True)
    _, _, info = torch.linalg.lu_factor_ex(ad)
    assert_ocl_close(info, torch.linalg.lu_factor_ex(a)[2], exact=True)
    # det of a singular matrix is 0, slogdet's sign 0 and logabsdet -inf
    assert_ocl_close(torch.linalg.det(ad), torch.linalg.det(a), atol=1e-9, rtol=1e-9)
    sign, logabs = torch.linalg.slogdet(ad)
    assert_ocl_close(sign, torch.linalg.slogdet(a)[0], exact=True)
    # the process stays usable
    close(torch.linalg.inv(ad[0]), torch.linalg.inv(a[0]), torch.float64)


def test_nan_and_bad_dtypes():
    a = well_conditioned((2, 5, 5), seed=17)
    a[0, 2, 3] = float("nan")
    x = torch.linalg.solve(a.to(DEVICE), torch.ones(2, 5, 1, dtype=torch.float64, device=DEVICE))
    xc = torch.linalg.solve(a, torch.ones(2, 5, 1, dtype=torch.float64))
    assert torch.isnan(x[0]).all().item() == torch.isnan(xc[0]).all().item()
    close(x[1], xc[1], torch.float64)
    for dtype in (torch.float16, torch.int64):
        h = torch.eye(3, dtype=dtype)
        with pytest.raises(Exception) as cpu_err:
            torch.linalg.inv(h)
        with pytest.raises(type(cpu_err.value)):
            torch.linalg.inv(h.to(DEVICE))


# ---- triangular solves ----


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_solve_triangular(dtype):
    skip_unsupported(dtype)
    a = well_conditioned((2, 6, 6), dtype, seed=18)
    for upper in (True, False):
        for left in (True, False):
            for unit in (True, False):
                b = well_conditioned((2, 6, 3) if left else (2, 3, 6), dtype, seed=19)
                x = torch.linalg.solve_triangular(
                    a.to(DEVICE), b.to(DEVICE), upper=upper, left=left, unitriangular=unit
                )
                xc = torch.linalg.solve_triangular(
                    a.double(), b.double(), upper=upper, left=left, unitriangular=unit
                )
                close(x, xc, dtype, scale=10)
    for transpose in (False, True):
        b = well_conditioned((6, 2), dtype, seed=20)
        x, m = torch.triangular_solve(b.to(DEVICE), a.to(DEVICE), upper=False, transpose=transpose)
        xc, mc = torch.triangular_solve(b.double(), a.double(), upper=False, transpose=transpose)
        close(x, xc, dtype, scale=10)
        assert_ocl_close(m, mc.to(dtype), exact=True)
    # non-contiguous A, broadcast B, empty
    at = a.mT.to(DEVICE)
    close(
        torch.linalg.solve_triangular(at, torch.ones(6, 1, dtype=dtype, device=DEVICE), upper=True),
        torch.linalg.solve_triangular(
            a.double().mT, torch.ones(6, 1, dtype=torch.float64), upper=True
        ),
        dtype,
        scale=10,
    )
    e = torch.linalg.solve_triangular(
        a.to(DEVICE), torch.ones(2, 6, 0, dtype=dtype, device=DEVICE), upper=True
    )
    assert e.shape == (2, 6, 0)


# ---- Cholesky ----


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SQUARE, ids=str)
def test_cholesky_family(shape, dtype):
    skip_unsupported(dtype)
    a = spd(shape, dtype, seed=21)
    ad = a.to(DEVICE)
    for upper in (False, True):
        close(
            torch.linalg.cholesky(ad, upper=upper),
            ref(lambda x, u=upper: torch.linalg.cholesky(x, upper=u), a),
            dtype,
            scale=10,
        )
        L = torch.linalg.cholesky(ad, upper=upper)
        Lc = torch.linalg.cholesky(a.double(), upper=upper)
        b = well_conditioned(shape[:-1] + (2,), dtype, seed=22)
        close(
            torch.cholesky_solve(b.to(DEVICE), L, upper=upper),
            torch.cholesky_solve(b.double(), Lc, upper=upper),
            dtype,
            scale=100,
        )
        close(
            torch.cholesky_inverse(L, upper=upper),
            torch.cholesky_inverse(Lc, upper=upper),
            dtype,
            scale=100,
        )
    if hasattr(torch, "cholesky"):  # deprecated, gone in torch 2.15
        with warnings.catch_warnings():  # its deprecation warning (once per process)
            warnings.simplefilter("ignore")
            close(torch.cholesky(ad), torch.linalg.cholesky(a.double()), dtype, scale=10)


def test_cholesky_errors():
    a = spd((3, 4, 4), seed=23)
    a[2, 1, 1] = -50.0  # leading minor of order 2 of batch element 2 is not positive definite
    ad = a.to(DEVICE)
    with pytest.raises(torch.linalg.LinAlgError) as cpu_err:
        torch.linalg.cholesky(a)
    with pytest.raises(torch.linalg.LinAlgError) as err:
        torch.linalg.cholesky(ad)
    assert str(err.value) == str(cpu_err.value)
    _, info = torch.linalg.cholesky_ex(ad)
    assert_ocl_close(info, torch.linalg.cholesky_ex(a)[1], exact=True)
    n = torch.eye(3, dtype=torch.float64)
    n[1, 1] = float("nan")
    assert_ocl_close(
        torch.linalg.cholesky_ex(n.to(DEVICE))[1], torch.linalg.cholesky_ex(n)[1], exact=True
    )


# ---- QR ----


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "shape", [(5, 5), (7, 4), (4, 7), (2, 3, 6, 5), (1, 1), (0, 3, 3)], ids=str
)
def test_qr_family(shape, dtype):
    skip_unsupported(dtype)
    a = well_conditioned(shape, dtype, seed=24)
    ad = a.to(DEVICE)
    for mode in ("reduced", "complete", "r"):
        q, r = torch.linalg.qr(ad, mode=mode)
        qc, rc = torch.linalg.qr(a.double(), mode=mode)
        close(q, qc, dtype, scale=100)
        close(r, rc, dtype, scale=100)
    qr, tau = torch.geqrf(ad)
    qrc, tauc = torch.geqrf(a.double())
    close(qr, qrc, dtype, scale=100)
    close(tau, tauc, dtype, scale=100)
    close(
        torch.linalg.householder_product(qr, tau)
        if shape[-2] >= shape[-1]
        else torch.linalg.householder_product(qr[..., : shape[-2]], tau),
        torch.linalg.householder_product(qrc, tauc)
        if shape[-2] >= shape[-1]
        else torch.linalg.householder_product(qrc[..., : shape[-2]], tauc),
        dtype,
        scale=100,
    )
    m = shape[-2]
    for left in (True, False):
        for transpose in (False, True):
            c = well_conditioned(shape[:-2] + ((m, 3) if left else (3, m)), dtype, seed=25)
            close(
                torch.ormqr(qr, tau, c.to(DEVICE), left=left, transpose=transpose),
                torch.ormqr(qrc, tauc, c.double(), left=left, transpose=transpose),
                dtype,
                scale=100,
            )


# ---- gradients (ATen's formulas over our kernels) ----


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: torch.linalg.solve(a, b),
        lambda a, b: torch.linalg.inv(a) @ b,
        lambda a, b: torch.linalg.det(a)[:, None, None] * b,
        lambda a, b: torch.linalg.slogdet(a)[1][:, None, None] * b,
        lambda a, b: torch.linalg.cholesky(a @ a.mT) @ b,
        lambda a, b: torch.linalg.qr(a)[0] @ b + torch.linalg.qr(a)[1] @ b,
        lambda a, b: torch.linalg.solve_triangular(a, b, upper=True),
        lambda a, b: torch.linalg.lu(a)[1] @ b,
    ],
    ids=["solve", "inv", "det", "slogdet", "cholesky", "qr", "solve_triangular", "lu"],
)
def test_gradients(fn):
    a = well_conditioned((2, 4, 4), seed=26)
    b = well_conditioned((2, 4, 3), seed=27)
    ac, bc = a.clone().requires_grad_(), b.clone().requires_grad_()
    ad, bd = a.to(DEVICE).requires_grad_(), b.to(DEVICE).requires_grad_()
    out_c, out_d = fn(ac, bc), fn(ad, bd)
    g = well_conditioned(tuple(out_c.shape), seed=28)
    out_c.backward(g)
    out_d.backward(g.to(DEVICE))
    close(out_d.detach(), out_c.detach(), torch.float64, scale=100)
    close(ad.grad, ac.grad, torch.float64, scale=1000)
    close(bd.grad, bc.grad, torch.float64, scale=1000)


@pytest.mark.slow
@pytest.mark.parametrize("n", [64, 150])
def test_larger_matrices(n):
    a = well_conditioned((3, n, n), torch.float32, seed=29)
    b = well_conditioned((3, n, 2), torch.float32, seed=30)
    ad, bd = a.to(DEVICE), b.to(DEVICE)
    close(torch.linalg.solve(ad, bd), ref(torch.linalg.solve, a, b), torch.float32, scale=10)
    close(
        torch.linalg.cholesky(spd((n, n), torch.float32).to(DEVICE)),
        torch.linalg.cholesky(spd((n, n))),
        torch.float32,
        scale=10,
    )
    q, r = torch.linalg.qr(ad)
    close(q @ r, a.double(), torch.float32, scale=100)


# ---- symmetric eigendecomposition ----


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (1, 1), (0, 3, 3), (2, 9, 9)], ids=str)
def test_eigh(shape, dtype):
    skip_unsupported(dtype)
    g = well_conditioned(shape, torch.float64, seed=31)
    a = (g + g.mT).to(dtype)
    for uplo in ("L", "U"):
        # the other triangle is never read
        stored = torch.tril(a) if uplo == "L" else torch.triu(a)
        w, v = torch.linalg.eigh(stored.to(DEVICE), UPLO=uplo)
        wc = torch.linalg.eigvalsh(a.double())
        close(w, wc, dtype, scale=100)
        # eigenvectors are unique up to sign: check A V = V diag(w) and V^T V = I
        vd = v.cpu().double()
        eye = torch.eye(shape[-1], dtype=torch.float64).expand_as(vd)
        torch.testing.assert_close(vd.mT @ vd, eye, **{k: v * 100 for k, v in TOL[dtype].items()})
        torch.testing.assert_close(
            a.double() @ vd, vd * wc[..., None, :], **{k: v * 1000 for k, v in TOL[dtype].items()}
        )
        close(torch.linalg.eigvalsh(stored.to(DEVICE), UPLO=uplo), wc, dtype, scale=100)
    # the gradient of the eigenvalues
    ac = a.double().clone().requires_grad_()
    ad = a.double().detach().to(DEVICE).requires_grad_()
    torch.linalg.eigvalsh(ac).pow(2).sum().backward()
    torch.linalg.eigvalsh(ad).pow(2).sum().backward()
    close(ad.grad, ac.grad, torch.float64, scale=1000)


# ---- singular value decomposition ----


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "shape", [(5, 5), (2, 7, 4), (3, 4, 6), (1, 1), (0, 3, 2), (2, 3, 0)], ids=str
)
def test_svd_family(shape, dtype):
    skip_unsupported(dtype)
    a = well_conditioned(shape, dtype, seed=32)
    ad = a.to(DEVICE)
    sc = torch.linalg.svdvals(a.double())
    close(torch.linalg.svdvals(ad), sc, dtype, scale=100)
    for full in (False, True):
        u, s, vh = torch.linalg.svd(ad, full_matrices=full)
        uc, _, vhc = torch.linalg.svd(a.double(), full_matrices=full)
        assert u.shape == uc.shape and vh.shape == vhc.shape
        close(s, sc, dtype, scale=100)
        # singular vectors are unique up to sign: check orthonormality and A = U S Vh
        k = s.shape[-1]
        ud, vd = u.cpu().double(), vh.cpu().double()
        tol = {key: v * 100 for key, v in TOL[dtype].items()}
        eye_u = torch.eye(ud.shape[-1], dtype=torch.float64).expand(ud.mT.shape[:-1] + (-1,))
        torch.testing.assert_close(ud.mT @ ud, eye_u, **tol)
        torch.testing.assert_close(
            (ud[..., :k] * sc[..., None, :]) @ vd[..., :k, :], a.double(), **tol
        )
    if a.numel():
        close(torch.linalg.pinv(ad), torch.linalg.pinv(a.double()), dtype, scale=100)
        assert_ocl_close(
            torch.linalg.matrix_rank(ad), torch.linalg.matrix_rank(a.double()), exact=True
        )
        close(
            torch.linalg.matrix_norm(ad, "nuc"),
            torch.linalg.matrix_norm(a.double(), "nuc"),
            dtype,
            scale=100,
        )
        close(
            torch.linalg.matrix_norm(ad, 2),
            torch.linalg.matrix_norm(a.double(), 2),
            dtype,
            scale=100,
        )
        close(torch.linalg.cond(ad), torch.linalg.cond(a.double()), dtype, scale=1000)


def test_svd_rank_deficient_and_gradients():
    g = well_conditioned((2, 6, 3), seed=33)
    a = g @ well_conditioned((2, 3, 5), seed=34)  # rank 3
    ad = a.to(DEVICE)
    assert_ocl_close(torch.linalg.matrix_rank(ad), torch.linalg.matrix_rank(a), exact=True)
    u, s, vh = torch.linalg.svd(ad)  # full: U completed to an orthonormal basis
    ud = u.cpu()
    torch.testing.assert_close(
        ud.mT @ ud, torch.eye(6, dtype=torch.float64).expand(2, 6, 6), rtol=1e-9, atol=1e-9
    )
    close(torch.linalg.pinv(ad), torch.linalg.pinv(a), torch.float64, scale=1e4)
    b = well_conditioned((2, 4, 3), seed=35)
    ac = b.clone().requires_grad_()
    bd = b.detach().to(DEVICE).requires_grad_()
    (torch.linalg.svdvals(ac).sum() + torch.linalg.pinv(ac).pow(2).sum()).backward()
    (torch.linalg.svdvals(bd).sum() + torch.linalg.pinv(bd).pow(2).sum()).backward()
    close(bd.grad, ac.grad, torch.float64, scale=1e4)


def test_lu_unpack_bad_pivots_and_strided_outputs():
    a = well_conditioned((2, 4, 4), seed=36)
    LU, piv = torch.linalg.lu_factor(a.to(DEVICE))
    bad = piv.clone()
    bad[1, 2] = 7  # outside [1, 4]
    with pytest.raises(RuntimeError):
        torch.lu_unpack(LU.cpu(), bad.cpu())
    with pytest.raises(RuntimeError, match="between 1 and LU.size"):
        P, _, _ = torch.lu_unpack(LU, bad)
        P.cpu()  # raised at the next wait
    P, L, U = torch.lu_unpack(LU, piv)  # the device stays usable
    torch.testing.assert_close((P @ L @ U).cpu(), a, rtol=1e-9, atol=1e-9)
    # out= pivots / info that are not contiguous
    LUo = torch.empty(2, 4, 4, dtype=torch.float64, device=DEVICE)
    pivo = torch.empty(4, 2, dtype=torch.int32, device=DEVICE).t()
    info = torch.empty(2, 2, dtype=torch.int32, device=DEVICE)[:, 0]
    torch.linalg.lu_factor_ex(a.to(DEVICE), out=(LUo, pivo, info))
    LUc, pivc, infoc = torch.linalg.lu_factor_ex(a)
    close(LUo, LUc, torch.float64)
    assert_ocl_close(pivo, pivc, exact=True)
    assert_ocl_close(info, infoc, exact=True)
    L = torch.empty(2, 2, dtype=torch.float64, device=DEVICE)
    info = torch.empty(2, 2, dtype=torch.int32, device=DEVICE)[:, 1]
    s = spd((2, 4, 4), seed=37)
    torch.linalg.cholesky_ex(s.to(DEVICE), out=(L, info))
    close(L, torch.linalg.cholesky(s), torch.float64)
    assert_ocl_close(info, torch.zeros(2, dtype=torch.int32), exact=True)
