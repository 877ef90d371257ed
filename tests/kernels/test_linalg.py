"""Tests for kernels/linalg.cl against NumPy float64 references.

Launch geometry as stated at the top of linalg.cl: one group of LWS per matrix (global =
batch*LWS), unpack_pivots one item per batch element. Matrices are stored at a non-zero offset,
column-major (LAPACK's layout) or row-major (a transposed view), so both stride orders run.
"""

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

LWS = 16  # small, so that matrices larger than the group exercise the strided loops
OFF = 3
DT = {"float": np.float32, "double": np.float64}
TOL = {"float": 2e-4, "double": 1e-10}


@pytest.fixture(params=["float", "double"])
def tag(request, has_fp64):
    if request.param == "double" and not has_fp64:
        pytest.skip("device without fp64")
    return request.param


def prog(build, tag):
    return build("linalg", [f"-DT={tag}", f"-DLWS={LWS}"])


def put(ctx, mats, dtype, col_major=True):
    """A batch of matrices at OFF; returns (buffer, host array, (bs, rs, cs))."""
    b, m, n = mats.shape
    rs, cs = (1, m) if col_major else (n, 1)
    host = np.full(OFF + b * m * n + 2, 7.0, dtype=dtype)
    for k in range(b):
        for i in range(m):
            host[OFF + k * m * n + i * rs + np.arange(n) * cs] = mats[k, i]
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    return buf, host, (m * n, rs, cs)


def get(queue, buf, host, shape, st):
    cl.enqueue_copy(queue, host, buf)
    b, m, n = shape
    out = np.empty(shape)
    for k in range(b):
        for i in range(m):
            out[k, i] = host[OFF + k * st[0] + i * st[1] + np.arange(n) * st[2]]
    assert (host[:OFF] == 7.0).all() and (host[OFF + b * m * n :] == 7.0).all()
    return out


def ints(ctx, n, fill=-5):
    host = np.full(OFF + n, fill, dtype=np.int32)
    return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host), host


def args(buf, st):
    return [buf, np.uint64(OFF)] + [np.int64(v) for v in st]


@pytest.mark.parametrize("shape", [(3, 5, 5), (2, 7, 4), (2, 4, 7), (1, 1, 1), (2, 37, 37)])
@pytest.mark.parametrize("col_major", [True, False])
def test_lu_factor_and_solve(ctx, queue, build, rng, tag, shape, col_major):
    b, m, n = shape
    a = rng.standard_normal(shape)
    a[0, :, 0] *= 1e-3  # the first pivot is a row exchange
    buf, host, st = put(ctx, a, DT[tag], col_major)
    k = min(m, n)
    piv, piv_h = ints(ctx, b * k)
    info, info_h = ints(ctx, b)
    p = prog(build, tag)
    cl.Kernel(p, "lu_factor")(
        queue,
        (b * LWS,),
        (LWS,),
        *args(buf, st),
        piv,
        np.uint64(OFF),
        info,
        np.uint64(OFF),
        np.int32(m),
        np.int32(n),
        np.int32(1),
    )
    lu = get(queue, buf, host, shape, st)
    cl.enqueue_copy(queue, piv_h, piv)
    cl.enqueue_copy(queue, info_h, info)
    assert (info_h[OFF:] == 0).all()
    pv = piv_h[OFF:].reshape(b, k) - 1
    for q in range(b):
        L = np.tril(lu[q], -1)[:, :k] + np.eye(m, k)
        U = np.triu(lu[q])[:k]
        pa = a[q].copy()
        for j in range(k):
            assert j <= pv[q, j] < m
            pa[[j, pv[q, j]]] = pa[[pv[q, j], j]]
        # partial pivoting: |L| <= 1
        assert np.abs(L).max() <= 1 + 1e-6
        np.testing.assert_allclose(L @ U, pa, rtol=TOL[tag] * 10, atol=TOL[tag] * 10)
    if m != n:
        return
    # lu_solve, both transposes, with a row-major right-hand side
    rhs = rng.standard_normal((b, n, 3))
    for trans in (0, 1):
        xb, xh, xst = put(ctx, rhs, DT[tag], col_major=False)
        cl.Kernel(p, "lu_solve")(
            queue,
            (b * LWS,),
            (LWS,),
            *args(buf, st),
            piv,
            np.uint64(OFF),
            np.int64(k),
            *args(xb, xst),
            np.int32(n),
            np.int32(3),
            np.int32(trans),
        )
        x = get(queue, xb, xh, rhs.shape, xst)
        for q in range(b):
            aq = a[q].T if trans else a[q]
            np.testing.assert_allclose(aq @ x[q], rhs[q], rtol=TOL[tag] * 100, atol=TOL[tag] * 100)


def test_lu_factor_singular_info(ctx, queue, build, tag):
    a = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]], np.eye(3)])
    a[0, :, 1] = 0  # column 1 zero: U[1, 1] == 0
    buf, host, st = put(ctx, a, DT[tag])
    piv, _ = ints(ctx, 6)
    info, info_h = ints(ctx, 2)
    cl.Kernel(prog(build, tag), "lu_factor")(
        queue,
        (2 * LWS,),
        (LWS,),
        *args(buf, st),
        piv,
        np.uint64(OFF),
        info,
        np.uint64(OFF),
        np.int32(3),
        np.int32(3),
        np.int32(1),
    )
    cl.enqueue_copy(queue, info_h, info)
    assert list(info_h[OFF:]) == [2, 0]


@pytest.mark.parametrize("lower", [0, 1])
@pytest.mark.parametrize("unit", [0, 1])
def test_trsm(ctx, queue, build, rng, tag, lower, unit):
    b, n, r = 2, 21, 5
    t = rng.standard_normal((b, n, n)) + 4 * np.eye(n)
    tb, _, tst = put(ctx, t, DT[tag])
    rhs = rng.standard_normal((b, n, r))
    xb, xh, xst = put(ctx, rhs, DT[tag], col_major=False)
    cl.Kernel(prog(build, tag), "trsm")(
        queue,
        (b * LWS,),
        (LWS,),
        *args(tb, tst),
        *args(xb, xst),
        np.int32(n),
        np.int32(r),
        np.int32(lower),
        np.int32(unit),
        np.int32(0),  # conj: real matrices
    )
    x = get(queue, xb, xh, rhs.shape, xst)
    for q in range(b):
        tri = np.tril(t[q]) if lower else np.triu(t[q])
        if unit:
            np.fill_diagonal(tri, 1.0)
        np.testing.assert_allclose(tri @ x[q], rhs[q], rtol=TOL[tag] * 10, atol=TOL[tag] * 10)


def test_cholesky(ctx, queue, build, rng, tag):
    b, n = 3, 19
    g = rng.standard_normal((b, n, n))
    a = g @ g.transpose(0, 2, 1) + n * np.eye(n)
    a[2, 3, 3] = -100.0  # not positive definite from the leading minor of order 4 on
    buf, host, st = put(ctx, a, DT[tag])
    info, info_h = ints(ctx, b)
    cl.Kernel(prog(build, tag), "cholesky")(
        queue, (b * LWS,), (LWS,), *args(buf, st), info, np.uint64(OFF), np.int32(n)
    )
    out = get(queue, buf, host, a.shape, st)
    cl.enqueue_copy(queue, info_h, info)
    assert list(info_h[OFF:]) == [0, 0, 4]
    for q in range(2):
        L = np.tril(out[q])
        np.testing.assert_allclose(
            L, np.linalg.cholesky(a[q]), rtol=TOL[tag] * 10, atol=TOL[tag] * 10
        )
        np.testing.assert_array_equal(np.triu(out[q], 1), np.triu(a[q], 1).astype(DT[tag]))


def test_unpack_pivots(ctx, queue, build):
    b, m, k = 3, 5, 4
    piv = np.array([[3, 3, 5, 4], [1, 2, 3, 4], [5, 4, 3, 5]], dtype=np.int32)
    perm = np.tile(np.arange(m, dtype=np.int64), (b, 1))
    pb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=perm)
    vb = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=piv)
    err = np.zeros(1, dtype=np.int32)
    eb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=err)
    cl.Kernel(prog(build, "float"), "unpack_pivots")(
        queue,
        (LWS,),
        (LWS,),
        pb,
        np.uint64(0),
        vb,
        np.uint64(0),
        np.int64(b),
        np.int32(m),
        np.int32(k),
        eb,
        np.int32(7),
    )
    cl.enqueue_copy(queue, perm, pb)
    cl.enqueue_copy(queue, err, eb)
    assert err[0] == 0, "valid pivots reported as out of range"
    for q in range(b):
        want = list(range(m))
        for i in range(k):
            j = piv[q, i] - 1
            want[i], want[j] = want[j], want[i]
        assert list(perm[q]) == want


@pytest.mark.parametrize("shape", [(2, 6, 4), (1, 4, 6), (2, 33, 33)])
def test_geqrf_and_householder_apply(ctx, queue, build, rng, tag, shape):
    b, m, n = shape
    k = min(m, n)
    a = rng.standard_normal(shape)
    buf, host, st = put(ctx, a, DT[tag])
    tau_h = np.full(OFF + b * k, 9.0, dtype=DT[tag])
    tb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=tau_h)
    p = prog(build, tag)
    cl.Kernel(p, "geqrf")(
        queue, (b * LWS,), (LWS,), *args(buf, st), tb, np.uint64(OFF), np.int32(m), np.int32(n)
    )
    qr = get(queue, buf, host, shape, st)
    cl.enqueue_copy(queue, tau_h, tb)
    tau = tau_h[OFF:].reshape(b, k)
    # dlarfg's scalars: 0 (no reflection) or in [1, 2]
    assert ((tau == 0) | ((tau >= 1 - 1e-6) & (tau <= 2 + 1e-6))).all()
    for trans in (0, 1):
        # Q applied to the identity (orgqr's use): Q R == A, Q orthogonal
        eye = np.tile(np.eye(m), (b, 1, 1))
        cb, ch, cst = put(ctx, eye, DT[tag])
        cl.Kernel(p, "householder_apply")(
            queue,
            (b * LWS,),
            (LWS,),
            *args(buf, st),
            tb,
            np.uint64(OFF),
            np.int64(k),
            *args(cb, cst),
            np.int32(m),
            np.int32(m),
            np.int32(k),
            np.int32(trans),
        )
        q_mat = get(queue, cb, ch, eye.shape, cst)
        for q in range(b):
            Q = q_mat[q].T if trans else q_mat[q]
            R = np.triu(qr[q])
            np.testing.assert_allclose(Q @ R, a[q], rtol=TOL[tag] * 100, atol=TOL[tag] * 100)
            np.testing.assert_allclose(Q.T @ Q, np.eye(m), atol=TOL[tag] * 100)
            # LAPACK's sign convention: the same R as NumPy's (which calls geqrf)
            np.testing.assert_allclose(
                R[:k], np.linalg.qr(a[q], mode="r")[:k], rtol=TOL[tag] * 100, atol=TOL[tag] * 100
            )


@pytest.mark.parametrize("n", [1, 2, 5, 8, 9, 16, 17, 23])
@pytest.mark.parametrize("upper", [0, 1])
def test_eigh(ctx, queue, build, rng, tag, n, upper):
    b = 2
    g = rng.standard_normal((b, n, n))
    a = g + g.transpose(0, 2, 1)
    a[1] = np.diag(np.arange(n, 0, -1.0))  # already diagonal, eigenvalues descending
    stored = a.copy()
    tri = np.triu if upper else np.tril
    stored = tri(stored) + 5.0 * (1 - tri(np.ones((n, n))))  # the other triangle is never read
    buf, host, st = put(ctx, stored, DT[tag])
    vals_h = np.full(OFF + b * n, 9.0, dtype=DT[tag])
    vb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=vals_h)
    work = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=(OFF + b * (2 * n * n + n + 1)) * 8)
    info, info_h = ints(ctx, b)
    cl.Kernel(prog(build, tag), "eigh")(
        queue,
        (b * LWS,),
        (LWS,),
        *args(buf, st),
        vb,
        np.uint64(OFF),
        work,
        np.uint64(OFF),
        info,
        np.uint64(OFF),
        np.int32(n),
        np.int32(upper),
        np.int32(100),
    )
    vecs = get(queue, buf, host, a.shape, st)
    cl.enqueue_copy(queue, vals_h, vb)
    cl.enqueue_copy(queue, info_h, info)
    assert (info_h[OFF:] == 0).all()
    vals = vals_h[OFF:].reshape(b, n)
    for q in range(b):
        np.testing.assert_allclose(
            vals[q], np.linalg.eigvalsh(a[q]), rtol=TOL[tag] * 100, atol=TOL[tag] * 100 * n
        )
        v = vecs[q]
        np.testing.assert_allclose(v.T @ v, np.eye(n), atol=TOL[tag] * 100)
        np.testing.assert_allclose(a[q] @ v, v * vals[q], atol=TOL[tag] * 100 * n)


@pytest.mark.parametrize("shape", [(2, 6, 4), (2, 4, 6), (1, 5, 5), (1, 1, 3), (1, 7, 7)])
@pytest.mark.parametrize("full", [0, 1])
def test_svd(ctx, queue, build, rng, tag, shape, full):
    b, m, n = shape
    M, N = max(m, n), min(m, n)
    a = rng.standard_normal(shape)
    if shape == (1, 7, 7):
        a[0] = a[0][:, :3] @ rng.standard_normal((3, 7))  # rank 3: zero singular values
    abuf, _, ast = put(ctx, a, DT[tag], col_major=False)
    ushape = (b, m, m if full or m <= n else N)
    vshape = (b, n if full or n <= m else N, n)
    ubuf, uh, ust = put(ctx, np.zeros(ushape), DT[tag])
    vbuf, vh, vst = put(ctx, np.zeros(vshape), DT[tag])
    s_h = np.full(OFF + b * N, 9.0, dtype=DT[tag])
    sb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=s_h)
    work = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=(OFF + b * (M * N + N * N + N + 1)) * 8)
    info, info_h = ints(ctx, b)
    cl.Kernel(prog(build, tag), "svd")(
        queue,
        (b * LWS,),
        (LWS,),
        *args(abuf, ast),
        sb,
        np.uint64(OFF),
        *args(ubuf, ust),
        *args(vbuf, vst),
        work,
        np.uint64(OFF),
        info,
        np.uint64(OFF),
        np.int32(m),
        np.int32(n),
        np.int32(1),
        np.int32(full),
        np.int32(100),
    )
    U = get(queue, ubuf, uh, ushape, ust)
    Vh = get(queue, vbuf, vh, vshape, vst)
    cl.enqueue_copy(queue, s_h, sb)
    cl.enqueue_copy(queue, info_h, info)
    assert (info_h[OFF:] == 0).all()
    sv = s_h[OFF:].reshape(b, N)
    tol = TOL[tag] * 100
    for q in range(b):
        np.testing.assert_allclose(sv[q], np.linalg.svd(a[q], compute_uv=False), atol=tol)
        np.testing.assert_allclose(U[q].T @ U[q], np.eye(U.shape[-1]), atol=tol)
        np.testing.assert_allclose(Vh[q] @ Vh[q].T, np.eye(Vh.shape[-2]), atol=tol)
        np.testing.assert_allclose(U[q][:, :N] * sv[q] @ Vh[q][:N], a[q], atol=tol)


def test_svd_singular_converges(ctx, queue, build, rng, tag):
    # a float32 singular matrix whose zero singular values once kept the sweeps going
    b, m, n = 3, 5, 5
    a = rng.standard_normal((b, m, 2)) @ rng.standard_normal((b, 2, n))
    a[2] = 0.0
    abuf, _, ast = put(ctx, a, DT[tag])
    s_h = np.full(OFF + b * n, 9.0, dtype=DT[tag])
    sb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=s_h)
    work = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=(OFF + b * (2 * n * n + n + 1)) * 8)
    info, info_h = ints(ctx, b)
    cl.Kernel(prog(build, tag), "svd")(
        queue,
        (b * LWS,),
        (LWS,),
        *args(abuf, ast),
        sb,
        np.uint64(OFF),
        *args(abuf, ast),
        *args(abuf, ast),
        work,
        np.uint64(OFF),
        info,
        np.uint64(OFF),
        np.int32(m),
        np.int32(n),
        np.int32(0),
        np.int32(0),
        np.int32(100),
    )
    cl.enqueue_copy(queue, s_h, sb)
    cl.enqueue_copy(queue, info_h, info)
    assert (info_h[OFF:] == 0).all()
    sv = s_h[OFF:].reshape(b, n)
    for q in range(b):
        np.testing.assert_allclose(
            sv[q], np.linalg.svd(a[q], compute_uv=False), atol=TOL[tag] * 100
        )
