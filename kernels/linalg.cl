// Batched dense linear algebra for the LAPACK-style DispatchStubs of ATen's linalg ops
// (csrc/ops/Linalg.cpp): LU with partial pivoting, triangular solves, LU solves, Cholesky,
// Householder QR (geqrf, and the products of its reflectors for orgqr and ormqr), pivot
// unpacking, and Jacobi methods for the symmetric eigenproblem and the SVD.
//
// One work-group of LWS work-items per matrix (group id = batch index); the work-items share the
// inner loops of each step and meet at a barrier between steps. Matrices are read in place in
// global memory: element (i, j) of a matrix is at base + i*rs + j*cs, so any row/column strides
// (row- or column-major, or a transposed view) serve, and batch element b starts at off + b*bs.
// Build options: -DT=<float|double>  -DLWS=<work-group size, a power of two>; complex matrices
// (lu_factor, lu_solve and trsm only): -DT=<float2|double2> -DR=<float|double> -DCPLX.
//
// lu_factor(a, bs, rs, cs, piv, info, m, n, pivot): a (m x n) <- L and U of P A = L U (getrf);
//   piv[b*k + j] = 1-based row swapped with row j (k = min(m, n)); info[b] = first j+1 with
//   U[j, j] == 0, else 0. pivot == 0: no row exchanges (piv = j + 1).
// lu_solve(lu, lbs, lrs, lcs, piv, pbs, x, xbs, xrs, xcs, n, nrhs, trans): x (n x nrhs) <- the
//   solution of A X = B (trans == 0), A^T X = B (trans == 1) or A^H X = B (trans == 2) from the
//   LU factors of A.
// trsm(t, tbs, trs, tcs, x, xbs, xrs, xcs, n, nrhs, lower, unit, conj): x <- T^{-1} x with T the
//   lower or upper triangle of t (its diagonal taken as 1 if unit; its elements conjugated if
//   conj); transposes are views (strides).
// cholesky(a, bs, rs, cs, info, n): the lower triangle of a <- L with L L^T = A (potrf on the
//   lower triangle; the upper triangle is left as it was); info[b] = j+1 for the first leading
//   minor that is not positive definite (the factorisation stops there), else 0.
// unpack_pivots(perm, piv, batch, m, k, err, err_code): perm (batch x m, the identity) <- the
//   permutation of the row swaps piv (1-based, batch x k); a pivot outside [1, m] is skipped and
//   records err_code in err (runtime/DeviceError.h). One work-item per batch element.
// geqrf(a, bs, rs, cs, tau, m, n): a (m x n) <- R above the diagonal and the Householder vectors
//   below it, tau[b*k + j] the reflectors' scalars (LAPACK's dlarfg convention).
// householder_apply(v, vbs, vrs, vcs, tau, taubs, c, cbs, crs, ccs, m, n, k, trans): c (m x n)
//   <- Q c or Q^T c with Q = H_0 ... H_{k-1} from k reflectors in v (orgqr applies it to the
//   identity, ormqr's right-side products to transposed views).

#ifndef LWS
#define LWS 64
#endif

#define EL(p, rs, cs, i, j) (p)[(long)(i) * (rs) + (long)(j) * (cs)]

// Element arithmetic of the LU family: complex (float2 / double2: .x real, .y imaginary) or real.
// Pivots are chosen by |re| + |im|, as LAPACK's izamax.
#ifdef CPLX
#define T_MUL(a, b) ((T)((a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x))
inline T t_div(T a, T b) {  // Smith's scaling, as c10::complex
  if (fabs(b.x) >= fabs(b.y)) {
    const R rat = b.y / b.x, scl = (R)1 / (b.x + b.y * rat);
    return (T)((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }
  const R rat = b.x / b.y, scl = (R)1 / (b.y + b.x * rat);
  return (T)((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
#define T_DIV(a, b) t_div(a, b)
#define MAG1(v) (fabs((v).x) + fabs((v).y))
#define T_ISNAN(v) (OCL_ISNAN((v).x) || OCL_ISNAN((v).y))
#define T_ISZERO(v) ((v).x == 0 && (v).y == 0)
#define T_CONJ(v, c) ((c) ? (T)((v).x, -(v).y) : (v))
#else
#define R T
#define T_MUL(a, b) ((a) * (b))
#define T_DIV(a, b) ((a) / (b))
#define MAG1(v) fabs(v)
#define T_ISNAN(v) OCL_ISNAN(v)
#define T_ISZERO(v) ((v) == (T)0)
#define T_CONJ(v, c) (v)
#endif
#define GSYNC barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE)

// Tree reduction of LWS (value, index) pairs to slot 0: the larger value wins, ties the smaller
// index. Ends with a barrier.
void argmax_reduce(__local R* v, __local int* idx, int lid) {
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const R a = v[lid], b = v[lid + s];
      const int ia = idx[lid], ib = idx[lid + s];
      if (b > a || (b == a && ib < ia)) {
        v[lid] = b;
        idx[lid] = ib;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

__kernel void lu_factor(__global T* a, ulong a_off, long bs, long rs, long cs,
                        __global int* piv, ulong piv_off, __global int* info, ulong info_off,
                        int m, int n, int pivot) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0);
  __global T* A = a + a_off + b * bs;
  const int k = min(m, n);
  __global int* P = piv + piv_off + b * k;
  __local R best_v[LWS];
  __local int best_i[LWS];
  int first_zero = 0;
  for (int j = 0; j < k; ++j) {
    int p = j;
    if (pivot) {
      // Row of the largest |a[i, j]|, i >= j (getrf's idamax: the first of equal maxima; a NaN
      // is never larger, except that a NaN on the diagonal keeps its row).
      R bv = (R)-1;
      int bi = m;
      for (int i = j + lid; i < m; i += LWS) {
        const T x = EL(A, rs, cs, i, j);
        const R ax = T_ISNAN(x) ? (R)-1 : MAG1(x);
        if (ax > bv) {
          bv = ax;
          bi = i;
        }
      }
      best_v[lid] = bv;
      best_i[lid] = bi;
      argmax_reduce(best_v, best_i, lid);
      p = best_i[0];
      if (p >= m || T_ISNAN(EL(A, rs, cs, j, j))) p = j;
      GSYNC;  // everyone has read best_i[0] and a[j, j] before they change
    }
    if (lid == 0) P[j] = p + 1;
    if (p != j) {
      for (int c = lid; c < n; c += LWS) {
        const T t = EL(A, rs, cs, j, c);
        EL(A, rs, cs, j, c) = EL(A, rs, cs, p, c);
        EL(A, rs, cs, p, c) = t;
      }
      GSYNC;
    }
    const T d = EL(A, rs, cs, j, j);
    if (T_ISZERO(d)) {
      if (first_zero == 0) first_zero = j + 1;
    } else {
      for (int i = j + 1 + lid; i < m; i += LWS) EL(A, rs, cs, i, j) = T_DIV(EL(A, rs, cs, i, j), d);
    }
    GSYNC;
    const int rows = m - j - 1, cols = n - j - 1;
    const long total = (long)rows * cols;
    for (long t = lid; t < total; t += LWS) {
      const long tq = t / rows;
      const int i = j + 1 + (int)(t - tq * rows), c = j + 1 + (int)tq;
      EL(A, rs, cs, i, c) -= T_MUL(EL(A, rs, cs, i, j), EL(A, rs, cs, j, c));
    }
    GSYNC;
  }
  if (lid == 0) info[info_off + b] = first_zero;
}

// x <- T^{-1} x for one matrix (see trsm above); all work-items of the group call it.
void trsm_one(__global const T* t, long trs, long tcs, __global T* x, long xrs, long xcs, int n,
              int nrhs, int lower, int unit, int conj, int lid) {
  for (int s = 0; s < n; ++s) {
    const int k = lower ? s : n - 1 - s;
    if (!unit) {
      const T d = T_CONJ(EL(t, trs, tcs, k, k), conj);
      for (int c = lid; c < nrhs; c += LWS) EL(x, xrs, xcs, k, c) = T_DIV(EL(x, xrs, xcs, k, c), d);
      GSYNC;
    }
    const int lo = lower ? k + 1 : 0;
    const int cnt = lower ? n - k - 1 : k;
    const long total = (long)cnt * nrhs;
    for (long q = lid; q < total; q += LWS) {
      const long qq = q / cnt;
      const int i = lo + (int)(q - qq * cnt), c = (int)qq;
      EL(x, xrs, xcs, i, c) -= T_MUL(T_CONJ(EL(t, trs, tcs, i, k), conj), EL(x, xrs, xcs, k, c));
    }
    GSYNC;
  }
}

__kernel void trsm(__global const T* t, ulong t_off, long tbs, long trs, long tcs, __global T* x,
                   ulong x_off, long xbs, long xrs, long xcs, int n, int nrhs, int lower,
                   int unit, int conj) {
  const long b = get_group_id(0);
  trsm_one(t + t_off + b * tbs, trs, tcs, x + x_off + b * xbs, xrs, xcs, n, nrhs, lower, unit,
           conj, get_local_id(0));
}

// Row exchanges of the pivots on x's rows, in order (forward) or in reverse.
void apply_pivots(__global const int* P, __global T* x, long xrs, long xcs, int n, int nrhs,
                  int forward, int lid) {
  for (int c = lid; c < nrhs; c += LWS) {
    for (int s = 0; s < n; ++s) {
      const int i = forward ? s : n - 1 - s;
      const int p = P[i] - 1;
      if (p != i && p >= 0 && p < n) {
        const T v = EL(x, xrs, xcs, i, c);
        EL(x, xrs, xcs, i, c) = EL(x, xrs, xcs, p, c);
        EL(x, xrs, xcs, p, c) = v;
      }
    }
  }
  GSYNC;
}

__kernel void lu_solve(__global const T* lu, ulong lu_off, long lbs, long lrs, long lcs,
                       __global const int* piv, ulong piv_off, long pbs, __global T* x,
                       ulong x_off, long xbs, long xrs, long xcs, int n, int nrhs, int trans) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0);
  __global const T* L = lu + lu_off + b * lbs;
  __global const int* P = piv + piv_off + b * pbs;
  __global T* X = x + x_off + b * xbs;
  if (!trans) {
    // A = P L U: X = U^{-1} L^{-1} P^T B
    apply_pivots(P, X, xrs, xcs, n, nrhs, 1, lid);
    trsm_one(L, lrs, lcs, X, xrs, xcs, n, nrhs, 1, 1, 0, lid);
    trsm_one(L, lrs, lcs, X, xrs, xcs, n, nrhs, 0, 0, 0, lid);
  } else {
    // A^T = U^T L^T P^T: X = P L^{-T} U^{-T} B (A^H: the same with conjugated factors)
    const int conj = trans == 2;
    trsm_one(L, lcs, lrs, X, xrs, xcs, n, nrhs, 1, 0, conj, lid);
    trsm_one(L, lcs, lrs, X, xrs, xcs, n, nrhs, 0, 1, conj, lid);
    apply_pivots(P, X, xrs, xcs, n, nrhs, 0, lid);
  }
}

#ifndef CPLX  // the rest is real only

__kernel void cholesky(__global T* a, ulong a_off, long bs, long rs, long cs, __global int* info,
                       ulong info_off, int n) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0);
  __global T* A = a + a_off + b * bs;
  int fail = 0;
  for (int j = 0; j < n; ++j) {
    T d = EL(A, rs, cs, j, j);
    if (!(d > (T)0)) {  // also NaN, as potrf
      fail = j + 1;
      break;
    }
    d = sqrt(d);
    GSYNC;  // everyone has read a[j, j]
    if (lid == 0) EL(A, rs, cs, j, j) = d;
    for (int i = j + 1 + lid; i < n; i += LWS) EL(A, rs, cs, i, j) /= d;
    GSYNC;
    const int cnt = n - j - 1;
    const long total = (long)cnt * cnt;
    for (long q = lid; q < total; q += LWS) {
      const long qq = q / cnt;
      const int i = j + 1 + (int)(q - qq * cnt), c = j + 1 + (int)qq;
      if (i >= c) EL(A, rs, cs, i, c) -= EL(A, rs, cs, i, j) * EL(A, rs, cs, c, j);
    }
    GSYNC;
  }
  if (lid == 0) info[info_off + b] = fail;
}

__kernel void unpack_pivots(__global long* perm, ulong perm_off, __global const int* piv,
                            ulong piv_off, long batch, int m, int k, __global int* err,
                            int err_code) {
  const long b = get_global_id(0);
  if (b >= batch) return;
  __global long* Q = perm + perm_off + b * m;
  __global const int* P = piv + piv_off + b * k;
  for (int i = 0; i < k; ++i) {
    const int p = P[i] - 1;
    if (p < 0 || p >= m) {
      atomic_cmpxchg(err, 0, err_code);
    } else if (p != i) {
      const long v = Q[i];
      Q[i] = Q[p];
      Q[p] = v;
    }
  }
}

// Tree sum of LWS values to slot 0. Ends with a barrier.
void sum_reduce(__local T* v, int lid) {
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) v[lid] += v[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

__kernel void geqrf(__global T* a, ulong a_off, long bs, long rs, long cs, __global T* tau,
                    ulong tau_off, int m, int n) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0);
  __global T* A = a + a_off + b * bs;
  const int k = min(m, n);
  __global T* TAU = tau + tau_off + b * k;
  __local T red[LWS];
  for (int j = 0; j < k; ++j) {
    // The reflector H = I - tau v v^T (v[j] = 1) with H a[j:, j] = (beta, 0, ..., 0) (dlarfg).
    T s = (T)0;
    for (int i = j + 1 + lid; i < m; i += LWS) {
      const T x = EL(A, rs, cs, i, j);
      s += x * x;
    }
    red[lid] = s;
    sum_reduce(red, lid);
    const T xnorm = sqrt(red[0]);
    const T alpha = EL(A, rs, cs, j, j);
    T t = (T)0, beta = alpha;
    if (xnorm != (T)0) {
      beta = -copysign(hypot(alpha, xnorm), alpha);
      t = (beta - alpha) / beta;
      const T scal = (T)1 / (alpha - beta);
      for (int i = j + 1 + lid; i < m; i += LWS) EL(A, rs, cs, i, j) *= scal;
    }
    GSYNC;
    // H applied to the columns right of j.
    if (t != (T)0) {
      for (int c = j + 1 + lid; c < n; c += LWS) {
        T w = EL(A, rs, cs, j, c);
        for (int i = j + 1; i < m; ++i) w += EL(A, rs, cs, i, j) * EL(A, rs, cs, i, c);
        w *= t;
        EL(A, rs, cs, j, c) -= w;
        for (int i = j + 1; i < m; ++i) EL(A, rs, cs, i, c) -= EL(A, rs, cs, i, j) * w;
      }
    }
    GSYNC;
    if (lid == 0) {
      EL(A, rs, cs, j, j) = beta;
      TAU[j] = t;
    }
    GSYNC;
  }
}

// c (m x n) <- Q c (trans == 0) or Q^T c, Q = H_0 ... H_{k-1} from the reflectors below the
// diagonal of v's first k columns (v[i, i] taken as 1) and tau. The right-side products are
// this on transposed views (see ormqr_kernel in csrc/ops/Linalg.cpp).
__kernel void householder_apply(__global const T* v, ulong v_off, long vbs, long vrs, long vcs,
                                __global const T* tau, ulong tau_off, long taubs, __global T* c,
                                ulong c_off, long cbs, long crs, long ccs, int m, int n, int k,
                                int trans) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0);
  __global const T* V = v + v_off + b * vbs;
  __global const T* TAU = tau + tau_off + b * taubs;
  __global T* C = c + c_off + b * cbs;
  for (int s = 0; s < k; ++s) {
    const int i = trans ? s : k - 1 - s;
    const T t = TAU[i];
    for (int col = lid; col < n; col += LWS) {
      T w = EL(C, crs, ccs, i, col);
      for (int r = i + 1; r < m; ++r) w += EL(V, vrs, vcs, r, i) * EL(C, crs, ccs, r, col);
      w *= t;
      EL(C, crs, ccs, i, col) -= w;
      for (int r = i + 1; r < m; ++r) EL(C, crs, ccs, r, col) -= EL(V, vrs, vcs, r, i) * w;
    }
    GSYNC;
  }
}

// The unit roundoff of T (a float literal: no double constants in float-only programs).
#define JACOBI_EPS (sizeof(T) == 8 ? (T)2.220446e-16f : (T)1.1920929e-07f)

// The pair (a, b) of round `r` (of n2 - 1) and slot `i` (of n2 / 2) of a round-robin tournament
// of n2 (even) players: every pair meets once per sweep, and a round's pairs are disjoint.
int2 jacobi_pair(int n2, int r, int i) {
  int a, b;
  if (i == 0) {
    a = n2 - 1;
    b = r;
  } else {
    a = (r + i) % (n2 - 1);
    b = (r - i + n2 - 1) % (n2 - 1);
  }
  return (int2)(min(a, b), max(a, b));
}

// eigh(vec, bs, rs, cs, val, val_off, work, work_off, n, upper, max_sweeps, info):
//   cyclic Jacobi on the symmetric matrix of vec's lower (upper) triangle; vec <- its
//   eigenvectors (columns), val[b*n + i] <- the eigenvalues in ascending order. work holds
//   2*n*n + n + 1 elements per matrix (the matrix being diagonalised, the rotations' product
//   and the rotations of one round). info[b] = 1 if max_sweeps sweeps did not converge, else 0.
// The Jacobi rotation (c, s) that zeroes the off-diagonal g of the symmetric 2x2 [[a, g], [g, b]]
// (the smaller of the two angles), shared by eigh (A's entries) and SVD (columns' inner products).
inline void jacobi_rotation(T a, T b, T g, T* c, T* s) {
  const T zeta = (b - a) / (2 * g);
  const T t = (zeta >= 0 ? (T)1 : (T)-1) / (fabs(zeta) + sqrt((T)1 + zeta * zeta));
  *c = (T)1 / sqrt((T)1 + t * t);
  *s = t * *c;
}

__kernel void eigh(__global T* vec, ulong vec_off, long bs, long rs, long cs, __global T* val,
                   ulong val_off, __global T* work, ulong work_off, __global int* info,
                   ulong info_off, int n, int upper, int max_sweeps) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0);
  __global T* X = vec + vec_off + b * bs;
  __global T* A = work + work_off + b * (2L * n * n + n + 1);  // column-major n x n
  __global T* V = A + (long)n * n;
  __global T* CS = V + (long)n * n;  // c of pair i at CS[i], s at CS[n/2 + i]
  __local int rotated;
  for (long q = lid; q < (long)n * n; q += LWS) {
    const long qq = q / n;
    const int i = (int)(q - qq * n), j = (int)qq;
    const int lo = max(i, j), hi = min(i, j);  // (lo, hi) is in the lower triangle
    A[q] = upper ? EL(X, rs, cs, hi, lo) : EL(X, rs, cs, lo, hi);
    V[q] = i == j ? (T)1 : (T)0;
  }
  GSYNC;
  const int n2 = n + (n & 1);
  const int npairs = n2 / 2;
  int sweep = 0, converged = n < 2;
  for (; sweep < max_sweeps && !converged; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < n2 - 1; ++r) {
      for (int i = lid; i < npairs; i += LWS) {
        const int2 pq = jacobi_pair(n2, r, i);
        T c = (T)1, s = (T)0;
        if (pq.y < n) {
          const T app = A[pq.x + (long)pq.x * n], aqq = A[pq.y + (long)pq.y * n];
          const T apq = A[pq.x + (long)pq.y * n];
          if (fabs(apq) > JACOBI_EPS * sqrt(fabs(app)) * sqrt(fabs(aqq)) && apq != (T)0 &&
              !OCL_ISNAN(apq)) {
            jacobi_rotation(app, aqq, apq, &c, &s);
            atomic_or(&rotated, 1);
          }
        }
        CS[i] = c;
        CS[npairs + i] = s;
      }
      GSYNC;
      // columns p, q of A and V <- (c a_p - s a_q, s a_p + c a_q)
      for (long w = lid; w < (long)npairs * n; w += LWS) {
        const long wq = w / n;
        const int i = (int)wq, k = (int)(w - wq * n);
        const int2 pq = jacobi_pair(n2, r, i);
        if (pq.y >= n) continue;
        const T c = CS[i], s = CS[npairs + i];
        if (s == (T)0) continue;
        const long p = (long)pq.x * n + k, q = (long)pq.y * n + k;
        const T ap = A[p], aq = A[q];
        A[p] = c * ap - s * aq;
        A[q] = s * ap + c * aq;
        const T vp = V[p], vq = V[q];
        V[p] = c * vp - s * vq;
        V[q] = s * vp + c * vq;
      }
      GSYNC;
      // rows p, q of A likewise
      for (long w = lid; w < (long)npairs * n; w += LWS) {
        const long wq = w / n;
        const int i = (int)wq, k = (int)(w - wq * n);
        const int2 pq = jacobi_pair(n2, r, i);
        if (pq.y >= n) continue;
        const T c = CS[i], s = CS[npairs + i];
        if (s == (T)0) continue;
        const long p = pq.x + (long)k * n, q = pq.y + (long)k * n;
        const T ap = A[p], aq = A[q];
        A[p] = c * ap - s * aq;
        A[q] = s * ap + c * aq;
      }
      GSYNC;
    }
    converged = !rotated;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  // eigenvalues ascending (a stable selection by rank), vectors permuted alike
  for (int j = lid; j < n; j += LWS) {
    const T d = A[j + (long)j * n];
    int rank = 0;
    for (int i = 0; i < n; ++i) {
      const T e = A[i + (long)i * n];
      rank += (e < d || (e == d && i < j)) ? 1 : 0;
    }
    val[val_off + b * n + rank] = d;
    for (int k = 0; k < n; ++k) EL(X, rs, cs, k, rank) = V[k + (long)j * n];
  }
  if (lid == 0) info[info_off + b] = converged ? 0 : 1;
}

// svd(a, abs, ars, acs, s, s_off, u, ubs, urs, ucs, vh, vbs, vrs, vcs, work, work_off, info,
//     info_off, m, n, compute_uv, full, max_sweeps): one-sided Jacobi (Hestenes) on W = a
//   (m >= n) or a^T (m < n), M x N with M >= N: column pairs of W are rotated until orthogonal
//   (inner products at the rounding noise of the whole matrix count as zero), the rotations
//   accumulate in V (N x N). Then s (b*N + j, descending) = the column norms, and with
//   compute_uv the W side (W's columns normalised: U for m >= n, Vh^T otherwise) and the V side
//   (V: Vh^T for m >= n, U otherwise) are written sorted; columns of the W side without a
//   direction (a singular value at the rounding noise, or columns N..M-1 when `full`) are
//   completed to an orthonormal basis by Gram-Schmidt on unit vectors. work holds
//   M*N + N*N + N + 1 elements per matrix; info[b] = 1 if max_sweeps sweeps did not converge.
__kernel void svd(__global const T* a, ulong a_off, long abs_, long ars, long acs, __global T* s,
                  ulong s_off, __global T* u, ulong u_off, long ubs, long urs, long ucs,
                  __global T* vh, ulong vh_off, long vbs, long vrs, long vcs, __global T* work,
                  ulong work_off, __global int* info, ulong info_off, int m, int n,
                  int compute_uv, int full, int max_sweeps) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0);
  const int tr = m < n;
  const int M = tr ? n : m, N = tr ? m : n;
  __global const T* A = a + a_off + b * abs_;
  __global T* W = work + work_off + b * ((long)M * N + (long)N * N + N + 1);  // column-major
  __global T* V = W + (long)M * N;
  __global T* CS = V + (long)N * N;
  __global T* S = s + s_off + b * N;
  __local int rotated;
  __local T red[LWS];
  T part = (T)0;
  for (long q = lid; q < (long)M * N; q += LWS) {
    const long qq = q / M;
    const int i = (int)(q - qq * M), j = (int)qq;
    const T x = tr ? EL(A, ars, acs, j, i) : EL(A, ars, acs, i, j);
    W[q] = x;
    part += x * x;
  }
  for (long q = lid; q < (long)N * N; q += LWS) {
    const long qq = q / N;
    V[q] = (q - qq * N == qq) ? (T)1 : (T)0;
  }
  red[lid] = part;
  sum_reduce(red, lid);
  // Inner products below the rounding noise of the whole matrix (columns that are numerically
  // zero, as in a singular matrix) are not rotated: they would never converge otherwise.
  const T noise = (T)(4 * M) * JACOBI_EPS * JACOBI_EPS * red[0];
  GSYNC;
  const int n2 = N + (N & 1);
  const int npairs = n2 / 2;
  int converged = N < 2;
  for (int sweep = 0; sweep < max_sweeps && !converged; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < n2 - 1; ++r) {
      for (int i = lid; i < npairs; i += LWS) {
        const int2 pq = jacobi_pair(n2, r, i);
        T c = (T)1, sn = (T)0;
        if (pq.y < N) {
          __global const T* wp = W + (long)pq.x * M;
          __global const T* wq = W + (long)pq.y * M;
          T al = (T)0, be = (T)0, ga = (T)0;
          for (int k = 0; k < M; ++k) {
            al += wp[k] * wp[k];
            be += wq[k] * wq[k];
            ga += wp[k] * wq[k];
          }
          if (fabs(ga) > JACOBI_EPS * sqrt(al) * sqrt(be) && fabs(ga) > noise && !OCL_ISNAN(ga)) {
            jacobi_rotation(al, be, ga, &c, &sn);
            atomic_or(&rotated, 1);
          }
        }
        CS[i] = c;
        CS[npairs + i] = sn;
      }
      GSYNC;
      const int rows = M + N;  // W's rows, then V's
      for (long w = lid; w < (long)npairs * rows; w += LWS) {
        const long wq = w / rows;
        const int i = (int)wq, k = (int)(w - wq * rows);
        const int2 pq = jacobi_pair(n2, r, i);
        if (pq.y >= N) continue;
        const T c = CS[i], sn = CS[npairs + i];
        if (sn == (T)0) continue;
        __global T* X = k < M ? W : V;
        const int ld = k < M ? M : N, kk = k < M ? k : k - M;
        const long p = (long)pq.x * ld + kk, q = (long)pq.y * ld + kk;
        const T xp = X[p], xq = X[q];
        X[p] = c * xp - sn * xq;
        X[q] = sn * xp + c * xq;
      }
      GSYNC;
    }
    converged = !rotated;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  // singular values: column norms (into CS), then sorted descending with the vectors
  for (int j = lid; j < N; j += LWS) {
    T nrm = (T)0;
    for (int k = 0; k < M; ++k) nrm += W[(long)j * M + k] * W[(long)j * M + k];
    CS[j] = sqrt(nrm);
  }
  GSYNC;
  // the W side Xw (M rows) and the V side Xv (N rows) as column views of the outputs
  __global T* Xw = tr ? vh + vh_off + b * vbs : u + u_off + b * ubs;
  const long wrs = tr ? vcs : urs, wcs = tr ? vrs : ucs;
  __global T* Xv = tr ? u + u_off + b * ubs : vh + vh_off + b * vbs;
  const long vrs_ = tr ? urs : vcs, vcs_ = tr ? ucs : vrs;
  for (int j = lid; j < N; j += LWS) {
    const T d = CS[j];
    int rank = 0;
    for (int i = 0; i < N; ++i) {
      const T e = CS[i];
      rank += (e > d || (e == d && i < j)) ? 1 : 0;
    }
    S[rank] = d;
    if (compute_uv) {
      const T inv = d > (T)0 ? (T)1 / d : (T)0;
      for (int k = 0; k < M; ++k) EL(Xw, wrs, wcs, k, rank) = W[(long)j * M + k] * inv;
      for (int k = 0; k < N; ++k) EL(Xv, vrs_, vcs_, k, rank) = V[(long)j * N + k];
    }
  }
  GSYNC;
  if (compute_uv && lid == 0) {
    // complete the W side: columns of singular values at the rounding noise (their directions
    // are noise too), and N..M-1 when full
    const int ncols = full ? M : N;
    const T tiny = sqrt(noise);
    int cand = 0;
    for (int c = 0; c < ncols; ++c) {
      if (c < N && S[c] > tiny) continue;
      for (; cand < M; ++cand) {
        for (int k = 0; k < M; ++k) EL(Xw, wrs, wcs, k, c) = k == cand ? (T)1 : (T)0;
        for (int pass = 0; pass < 2; ++pass) {
          for (int o = 0; o < ncols; ++o) {
            if (o == c || (o > c && !(o < N && S[o] > tiny))) continue;
            T dot = (T)0;
            for (int k = 0; k < M; ++k) dot += EL(Xw, wrs, wcs, k, o) * EL(Xw, wrs, wcs, k, c);
            for (int k = 0; k < M; ++k) EL(Xw, wrs, wcs, k, c) -= dot * EL(Xw, wrs, wcs, k, o);
          }
        }
        T nrm = (T)0;
        for (int k = 0; k < M; ++k) nrm += EL(Xw, wrs, wcs, k, c) * EL(Xw, wrs, wcs, k, c);
        nrm = sqrt(nrm);
        if (nrm > (T)0.5) {
          for (int k = 0; k < M; ++k) EL(Xw, wrs, wcs, k, c) /= nrm;
          ++cand;
          break;
        }
      }
    }
  }
  if (lid == 0) info[info_off + b] = converged ? 0 : 1;
}

#endif  // CPLX
