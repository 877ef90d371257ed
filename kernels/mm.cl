// mm: register-blocked matrix multiply with optional bias (mm / addmm / linear).
//
//   C[m,n] = alpha * sum_k A[m,k] * B[k,n]  (+ beta * bias[m,n] with -DHAS_BIAS)
//
// Element addressing (all offsets and strides in elements):
//   A[m,k] = A[a_off + m*lda + k]          (default)
//          = A[a_off + k*lda + m]          (-DA_TRANS: A stored K x M)
//   B[k,n] = B[b_off + k*ldb + n]          (default)
//          = B[b_off + n*ldb + k]          (-DB_TRANS: B stored N x K)
//   C[m,n] = C[c_off + m*ldc + n]
//   bias[m,n] = bias[bias_off + m*bias_sm + n*bias_sn]   (strides may be 0: broadcast)
// With -DHAS_BIAS and beta == 0 the bias is not read at all (NaN/Inf in it do not
// propagate, like torch.addmm). Without -DHAS_BIAS the bias arguments are ignored
// (pass any valid buffer, e.g. C). K == 0 gives alpha*0 (+ the bias term).
// The bias may be C itself with the same offset and strides (in-place addmm_): every
// element of the bias is read by the work-item that then writes that element of C.
// A and B must not overlap C.
//
// Build options:
//   -DT=float | -DT=double (double needs -DTORCH_OCL_FP64)
//     | -DT=uchar | -DT=ushort | -DT=uint | -DT=ulong: integer matrices. Unsigned arithmetic
//     wraps around modulo 2^bits, so the host runs signed integers of the same size through
//     these (the bits of a two's-complement wrap-around result are the same; signed overflow
//     would be undefined in OpenCL C).
//   -DMM_S=half | -DMM_S=bfloat16 (with -DT=float): float16/bfloat16 matrices, read into float,
//     accumulated in float and rounded once when stored (as CPU torch's half GEMM); the bias and
//     C have the same storage type.
//   -DA_TRANS, -DB_TRANS, -DHAS_BIAS                 (optional, independent)
//   -DTM=.. -DTN=.. -DLX=.. -DLY=..                  (optional tuning, defaults below)
//   Defaults: TM = 6; TN = 8 for double and ulong, 16 otherwise (TN must be a multiple of 8);
//             LX = 2, LY = 4.
//   -DDM=.. -DDN=.. (B_TRANS without A_TRANS only: sub-block of the dot-product form,
//             must divide TM and TN; defaults DM = 3, DN = 2 for 8-byte T, 4 otherwise). They do
//             not change the launch geometry.
//
// Batches (bmm / baddbmm): matrix `batch` = get_global_id(2) starts batch * <x>_sb elements after
// each operand's offset (a_sb, b_sb, c_sb, bias_sb; 0 for a single matrix or a broadcast bias).
//
// Launch geometry (the host MUST use exactly this; M > 0 and N > 0):
//   global = { roundup(ceil(N / TN), LX), roundup(ceil(M / TM), LY), batches }
//   local  = { LX, LY, 1 }         (enforced with reqd_work_group_size)
// where ceil(a / b) = (a + b - 1) / b and roundup(x, l) = ceil(x / l) * l.
// Work-item (gx, gy) computes the TM x TN block of C at rows gy*TM.., columns gx*TN..;
// work-items whose block starts at or past M or N return immediately.
//
// Implementation notes (tuned on PoCL/CPU, AVX2):
//  - Without B_TRANS the block is an outer product per k: TM broadcast scalars of A
//    times TN/8 eight-wide vectors of one row of B (6 x 16 floats = 12 accumulator
//    vectors). The vectors are assembled from scalar loads, which the compiler merges
//    into unaligned vector loads (pointer casts to float8 would require 32-byte
//    alignment, and vload8 is an out-of-line call on PoCL).
//  - With B_TRANS and not A_TRANS both operands are contiguous along k, so the block is
//    computed in DM x DN sub-blocks of dot products that are 8-wide along k.
//  - With A_TRANS and B_TRANS, A^T rows are contiguous along m: per k one 8-wide vector
//    of A (lanes >= TM unused, so TM <= 8 there) times CW broadcast values of B, for
//    the TN columns in passes of CW (CW = 4 for 8-byte T, 8 otherwise; -DCW=.. overrides, must
//    divide TN). Slower than the other layouts; this one is rare.
//  - Out-of-range rows and columns are clamped to M-1 / N-1 for loading (every load is
//    in bounds) and never stored.

// gemv: matrix-vector product with optional bias (mv / addmv / dot / vdot), in the same program.
//
//   y[m] = alpha * sum_k A[m,k] * x[k]  (+ beta * bias[m] with -DHAS_BIAS)
//
//   A[m,k] = A[a_off + m*sa_m + k*sa_k], x[k] = x[x_off + k*sx], y[m] = y[y_off + m*sy],
//   bias[m] = bias[bias_off + m*sbias] (any strides, in elements; sbias may be 0).
// With -DHAS_BIAS and beta == 0 the bias is not read at all (like torch.addmv); without it the
// bias arguments are ignored. K == 0 gives alpha*0 (+ the bias term). The bias may be y itself
// (in-place addmv_): each element is read by the work-group that then writes it. A and x must
// not overlap y. T as for mm (integers as the unsigned type of their size).
// Work-group g (of GLWS work-items, -DGLWS=.., a power of two, default 16) computes row g:
// work-item l sums the products k = l, l + GLWS, ... (with -DUNIT_K, for sa_k == 1 and sx == 1:
// one contiguous chunk of k, 4-10x faster on PoCL); the partial sums are added in local memory.
// Launch geometry: global = { M * GLWS }, local = { GLWS }  (M > 0).

#ifndef T
#define T float
#endif

// Element storage: T itself, or a half type (MM_S) read into T and rounded when stored.
#ifdef MM_S
#define SP STORE_TYPE(MM_S)
#define MM_LD(p, i) LOAD(MM_S, p, i)
#define MM_ST(p, i, v) STORE(MM_S, p, i, v)
#else
#define SP T
#define MM_LD(p, i) ((p)[i])
#define MM_ST(p, i, v) ((p)[i] = (v))
#endif

#ifndef GLWS
#define GLWS 16
#endif

__kernel __attribute__((reqd_work_group_size(GLWS, 1, 1))) void gemv(
    ulong K, __global const SP* A, ulong a_off, long sa_m, long sa_k, __global const SP* x,
    ulong x_off, long sx, __global SP* y, ulong y_off, long sy, T alpha, T beta,
    __global const SP* bias, ulong bias_off, long sbias) {
  __local T part[GLWS];
  const long m = get_group_id(0);
  const int l = get_local_id(0);
  A += a_off + m * sa_m;
  x += x_off;
  T acc = 0;
#ifdef UNIT_K
  // Unit strides along k (-DUNIT_K: sa_k == 1 and sx == 1): work-item l sums one contiguous
  // chunk of k, in 8 independent partial sums the compiler can keep in one vector register.
  const ulong chunk = (K + GLWS - 1) / GLWS;
  const ulong k0 = min((ulong)l * chunk, K), k1 = min(k0 + chunk, K);
  T s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  ulong k = k0;
  for (; k + 8 <= k1; k += 8)
    for (int j = 0; j < 8; ++j) s[j] += MM_LD(A, k + j) * MM_LD(x, k + j);
  for (; k < k1; ++k) s[0] += MM_LD(A, k) * MM_LD(x, k);
  acc = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
#else
  for (ulong k = l; k < K; k += GLWS) acc += MM_LD(A, (long)k * sa_k) * MM_LD(x, (long)k * sx);
#endif
  part[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = GLWS / 2; h > 0; h >>= 1) {
    if (l < h) part[l] += part[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) {
    T v = alpha * part[0];
#ifdef HAS_BIAS
    if (beta != (T)0) v += beta * MM_LD(bias, bias_off + m * sbias);
#endif
    MM_ST(y, y_off + m * sy, v);
  }
}

// 8-byte element types take narrower blocks (register pressure).
#define MM_WIDE_double 1
#define MM_WIDE_ulong 1
#define MM_WIDE OCL_CAT(MM_WIDE_, T)

#ifndef TM
#define TM 6
#endif
#ifndef TN
#if MM_WIDE
#define TN 8
#else
#define TN 16
#endif
#endif
#ifndef LX
#define LX 2
#endif
#ifndef LY
#define LY 4
#endif

#if (TN % 8) != 0
#error "TN must be a multiple of 8"
#endif

#define VT OCL_CAT(T, 8)
#define NV (TN / 8)

// Eight consecutive elements starting at p, as one vector (unaligned-safe).
#define MM_LOAD8(p)                                                                                \
  ((VT)(MM_LD(p, 0), MM_LD(p, 1), MM_LD(p, 2), MM_LD(p, 3), MM_LD(p, 4), MM_LD(p, 5), MM_LD(p, 6), \
        MM_LD(p, 7)))

// Store one finished element of C (caller guarantees m < M and n < N).
inline void mm_store(__global SP* C, long ldc, int m, int n, T v, T alpha, T beta,
                     __global const SP* bias, long bias_sm, long bias_sn) {
  T r = alpha * v;
#ifdef HAS_BIAS
  if (beta != (T)0) r = r + beta * MM_LD(bias, (long)m * bias_sm + (long)n * bias_sn);
#endif
  MM_ST(C, (long)m * ldc + n, r);
}

// s + (sum of the lanes of v), added lane by lane onto the scalar s. Deliberately not a
// tree of lane sums: LLVM turns "extract + extract" into vector shuffles with undef lanes,
// which crash Oclgrind's uninitialised-value checker (Oclgrind 21.10).
#define MM_ADD_LANES(s, v) \
  (((((((((s) + (v).s0) + (v).s1) + (v).s2) + (v).s3) + (v).s4) + (v).s5) + (v).s6) + (v).s7)

__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void mm(
    int M, int N, int K, __global const SP* A, ulong a_off, long lda, __global const SP* B,
    ulong b_off, long ldb, __global SP* C, ulong c_off, long ldc, T alpha, T beta,
    __global const SP* bias, ulong bias_off, long bias_sm, long bias_sn, long a_sb, long b_sb,
    long c_sb, long bias_sb) {
  const int n0 = (int)get_global_id(0) * TN;
  const int m0 = (int)get_global_id(1) * TM;
  if (n0 >= N || m0 >= M) return;
  const long batch = (long)get_global_id(2);
  A += a_off + batch * a_sb;
  B += b_off + batch * b_sb;
  C += c_off + batch * c_sb;
  bias += bias_off + batch * bias_sb;

#if defined(B_TRANS) && !defined(A_TRANS)
  // ---- dot-product form: A rows and B^T rows are both contiguous along k ----
#ifndef DM
#define DM 3
#endif
#ifndef DN
#if MM_WIDE
#define DN 2
#else
#define DN 4
#endif
#endif
#if (TM % DM) != 0 || (TN % DN) != 0
#error "DM must divide TM and DN must divide TN"
#endif
  const int k8 = K & ~7;
  for (int sm = 0; sm < TM; sm += DM) {
    if (m0 + sm >= M) break;
    __global const SP* ap[DM];
#pragma unroll
    for (int i = 0; i < DM; ++i) ap[i] = A + (long)min(m0 + sm + i, M - 1) * lda;
    for (int sn = 0; sn < TN; sn += DN) {
      if (n0 + sn >= N) break;
      __global const SP* bp[DN];
#pragma unroll
      for (int j = 0; j < DN; ++j) bp[j] = B + (long)min(n0 + sn + j, N - 1) * ldb;
      VT acc[DM][DN];
#pragma unroll
      for (int i = 0; i < DM; ++i) {
#pragma unroll
        for (int j = 0; j < DN; ++j) acc[i][j] = (VT)(0);
      }
      for (int k = 0; k < k8; k += 8) {
        VT a[DM];
#pragma unroll
        for (int i = 0; i < DM; ++i) a[i] = MM_LOAD8(ap[i] + k);
#pragma unroll
        for (int j = 0; j < DN; ++j) {
          const VT b = MM_LOAD8(bp[j] + k);
#pragma unroll
          for (int i = 0; i < DM; ++i) acc[i][j] = a[i] * b + acc[i][j];
        }
      }
#pragma unroll
      for (int i = 0; i < DM; ++i) {
#pragma unroll
        for (int j = 0; j < DN; ++j) {
          T s = (T)0;
          for (int k = k8; k < K; ++k) s = MM_LD(ap[i], k) * MM_LD(bp[j], k) + s;
          s = MM_ADD_LANES(s, acc[i][j]);
          const int m = m0 + sm + i, n = n0 + sn + j;
          if (m < M && n < N) mm_store(C, ldc, m, n, s, alpha, beta, bias, bias_sm, bias_sn);
        }
      }
    }
  }
#elif defined(B_TRANS) && defined(A_TRANS)
  // ---- column form: A^T rows are contiguous along m, B^T rows along k. Per k, one
  // 8-wide vector of A[m0.., k] (lanes >= TM unused) times CW broadcast B[k, n] values,
  // for the TN columns in passes of CW. ----
#if TM > 8
#error "A_TRANS with B_TRANS needs TM <= 8"
#endif
  const bool full_m = m0 + 8 <= M;  // the 8-wide load stays inside the matrix
  int am[8];
#pragma unroll
  for (int l = 0; l < 8; ++l) am[l] = min(m0 + l, M - 1);
#ifndef CW
#if MM_WIDE
#define CW 4
#else
#define CW 8
#endif
#endif
#if (TN % CW) != 0
#error "CW must divide TN"
#endif
  for (int sn = 0; sn < TN; sn += CW) {
    if (n0 + sn >= N) break;
    __global const SP* bp[CW];
#pragma unroll
    for (int j = 0; j < CW; ++j) bp[j] = B + (long)min(n0 + sn + j, N - 1) * ldb;
    VT acc[CW];
#pragma unroll
    for (int j = 0; j < CW; ++j) acc[j] = (VT)(0);
    if (full_m) {
      __global const SP* ap = A + m0;
      for (int k = 0; k < K; ++k) {
        const VT a = MM_LOAD8(ap);
#pragma unroll
        for (int j = 0; j < CW; ++j) acc[j] = a * (VT)(MM_LD(bp[j], k)) + acc[j];
        ap += lda;
      }
    } else {
      __global const SP* ap = A;
      for (int k = 0; k < K; ++k) {
        const VT a = (VT)(MM_LD(ap, am[0]), MM_LD(ap, am[1]), MM_LD(ap, am[2]), MM_LD(ap, am[3]),
                          MM_LD(ap, am[4]), MM_LD(ap, am[5]), MM_LD(ap, am[6]), MM_LD(ap, am[7]));
#pragma unroll
        for (int j = 0; j < CW; ++j) acc[j] = a * (VT)(MM_LD(bp[j], k)) + acc[j];
        ap += lda;
      }
    }
#pragma unroll
    for (int j = 0; j < CW; ++j) {
      const int n = n0 + sn + j;
      if (n < N) {
        T r[8];
        r[0] = acc[j].s0;
        r[1] = acc[j].s1;
        r[2] = acc[j].s2;
        r[3] = acc[j].s3;
        r[4] = acc[j].s4;
        r[5] = acc[j].s5;
        r[6] = acc[j].s6;
        r[7] = acc[j].s7;
#pragma unroll
        for (int l = 0; l < TM; ++l) {
          if (m0 + l < M) mm_store(C, ldc, m0 + l, n, r[l], alpha, beta, bias, bias_sm, bias_sn);
        }
      }
    }
  }
#else
  // ---- outer-product form (B not transposed): per k, TM scalars of A times a TN-wide
  // row of B ----
  VT acc[TM][NV];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int v = 0; v < NV; ++v) acc[i][v] = (VT)(0);
  }

  // A[m0+i, k] (row index clamped so that every load is in bounds).
#ifdef A_TRANS
  int am[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) am[i] = min(m0 + i, M - 1);
#define MM_A(i, k) MM_LD(A, (long)(k)*lda + am[i])
#else
  __global const SP* ap[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) ap[i] = A + (long)min(m0 + i, M - 1) * lda;
#define MM_A(i, k) MM_LD(ap[i], k)
#endif

#define MM_FMA_ROW(k)                                                                  \
  do {                                                                                 \
    _Pragma("unroll") for (int i = 0; i < TM; ++i) {                                   \
      const VT a = (VT)(MM_A(i, k));                                                   \
      _Pragma("unroll") for (int v = 0; v < NV; ++v) acc[i][v] = a * b[v] + acc[i][v]; \
    }                                                                                  \
  } while (0)

  // B[k, n] = B[k*ldb + n]: one contiguous TN-wide row per k.
  __global const SP* bp = B + n0;
  if (n0 + TN <= N) {
    for (int k = 0; k < K; ++k) {
      VT b[NV];
#pragma unroll
      for (int v = 0; v < NV; ++v) b[v] = MM_LOAD8(bp + 8 * v);
      MM_FMA_ROW(k);
      bp += ldb;
    }
  } else {
    const int last = N - 1 - n0;  // last valid column offset in this block
    for (int k = 0; k < K; ++k) {
      VT b[NV];
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        T t[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) t[j] = MM_LD(bp, min(8 * v + j, last));
        b[v] = (VT)(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
      }
      MM_FMA_ROW(k);
      bp += ldb;
    }
  }

#ifndef HAS_BIAS
  if (n0 + TN <= N) {
    // Full-width block without bias: contiguous rows of TN results.
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      if (m0 + i < M) {
        __global SP* cp = C + (long)(m0 + i) * ldc + n0;
#pragma unroll
        for (int v = 0; v < NV; ++v) {
          const VT r = alpha * acc[i][v];
          MM_ST(cp, 8 * v + 0, r.s0);
          MM_ST(cp, 8 * v + 1, r.s1);
          MM_ST(cp, 8 * v + 2, r.s2);
          MM_ST(cp, 8 * v + 3, r.s3);
          MM_ST(cp, 8 * v + 4, r.s4);
          MM_ST(cp, 8 * v + 5, r.s5);
          MM_ST(cp, 8 * v + 6, r.s6);
          MM_ST(cp, 8 * v + 7, r.s7);
        }
      }
    }
    return;
  }
#endif
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + i;
    if (m < M) {
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        T r[8];
        r[0] = acc[i][v].s0;
        r[1] = acc[i][v].s1;
        r[2] = acc[i][v].s2;
        r[3] = acc[i][v].s3;
        r[4] = acc[i][v].s4;
        r[5] = acc[i][v].s5;
        r[6] = acc[i][v].s6;
        r[7] = acc[i][v].s7;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int n = n0 + 8 * v + j;
          if (n < N) mm_store(C, ldc, m, n, r[j], alpha, beta, bias, bias_sm, bias_sn);
        }
      }
    }
  }
#undef MM_FMA_ROW
#undef MM_A
#endif
}
