// mm_tiled: matrix multiply for GPUs, through local-memory tiles with register blocking.
// Same product, operands, arguments and build options (-DT, -DMM_S, -DA_TRANS, -DB_TRANS,
// -DHAS_BIAS) as `mm` in kernels/mm.cl; read its header for the element addressing, the bias
// rules and the batches. Only the launch geometry and the tuning parameters differ.
//
//   C[m,n] = alpha * sum_k A[m,k] * B[k,n]  (+ beta * bias[m,n] with -DHAS_BIAS)
//
// Tuning parameters (the host passes them from the device profile or the tuner):
//   TILE_M, TILE_N  the block of C one work-group computes (e.g. 32, 64, 128)
//   TILE_K          values of k staged in local memory per step (e.g. 8, 16, 32)
//   WG_M, WG_N      the work-group shape: WG_N work-items along n (local id 0: consecutive
//                   work-items take consecutive columns, so stores and B loads coalesce) and WG_M
//                   along m. Each work-item computes a WM x WN register block,
//                   WM = TILE_M / WG_M, WN = TILE_N / WG_N (each at most 16), at rows
//                   ly, ly + WG_M, ... and columns lx, lx + WG_N, ... of the block: neighbouring
//                   work-items read neighbouring local-memory words (no bank conflicts) and
//                   write neighbouring columns of C.
//   TILE_PAD        elements added to each local-memory row (0-8): the tile loads write
//                   along the operand's contiguous dimension, which is a local-memory column
//                   when that dimension is k; padding spreads those writes over the banks.
// Constraints (the host checks them, GemmTile::legal): TILE_M % WG_M == TILE_N % WG_N == 0;
// TILE_M * TILE_K and TILE_N * TILE_K multiples of WG_M * WG_N (every work-item loads the same
// number of elements); TILE_K * (TILE_M + TILE_N + 2 * TILE_PAD) * sizeof(T) bytes of local
// memory.
//
// Tiles are read from global memory along each operand's contiguous dimension (k for A and for
// B_TRANS, m for A_TRANS, n for B), so a work-group's loads coalesce in every layout. Elements
// past M, N or K load as zero: a partial k tile adds 0 * 0, and rows and columns past the matrix
// are never stored, so NaN and Inf propagate exactly as in the untiled product. The sums run in
// k order per element, in T (float for the half types).
//
// Launch geometry (the host MUST use exactly this; M > 0 and N > 0):
//   global = { ceil(N / TILE_N) * WG_N, ceil(M / TILE_M) * WG_M, batches }
//   local  = { WG_N, WG_M, 1 }     (enforced with reqd_work_group_size)

#ifndef T
#define T float
#endif

#ifdef MM_S
#define SP STORE_TYPE(MM_S)
#define MM_LD(p, i) LOAD(MM_S, p, i)
#define MM_ST(p, i, v) STORE(MM_S, p, i, v)
#else
#define SP T
#define MM_LD(p, i) ((p)[i])
#define MM_ST(p, i, v) ((p)[i] = (v))
#endif

#ifndef TILE_M
#define TILE_M 64
#endif
#ifndef TILE_N
#define TILE_N 64
#endif
#ifndef TILE_K
#define TILE_K 16
#endif
#ifndef WG_M
#define WG_M 16
#endif
#ifndef WG_N
#define WG_N 16
#endif
#ifndef TILE_PAD
#define TILE_PAD 1
#endif

#define WM (TILE_M / WG_M)
#define WN (TILE_N / WG_N)
#define WGS (WG_M * WG_N)
#define A_LOADS (TILE_M * TILE_K / WGS)
#define B_LOADS (TILE_N * TILE_K / WGS)

#if (TILE_M % WG_M) != 0 || (TILE_N % WG_N) != 0
#error "TILE_M must be a multiple of WG_M and TILE_N of WG_N"
#endif
#if (TILE_M * TILE_K) % WGS != 0 || (TILE_N * TILE_K) % WGS != 0
#error "TILE_M * TILE_K and TILE_N * TILE_K must be multiples of WG_M * WG_N"
#endif
#if WM > 16 || WN > 16
#error "a work-item's block is at most 16 x 16"
#endif

__kernel __attribute__((reqd_work_group_size(WG_N, WG_M, 1))) void mm_tiled(
    int M, int N, int K, __global const SP* A, ulong a_off, long lda, __global const SP* B,
    ulong b_off, long ldb, __global SP* C, ulong c_off, long ldc, T alpha, T beta,
    __global const SP* bias, ulong bias_off, long bias_sm, long bias_sn, long a_sb, long b_sb,
    long c_sb, long bias_sb) {
  // As[k][m] and Bs[k][n]: a row of k is contiguous along m (n), which the compute loop reads.
  __local T As[TILE_K][TILE_M + TILE_PAD];
  __local T Bs[TILE_K][TILE_N + TILE_PAD];

  const int lx = get_local_id(0), ly = get_local_id(1);
  const int lid = ly * WG_N + lx;
  const int m0 = get_group_id(1) * TILE_M;
  const int n0 = get_group_id(0) * TILE_N;
  const long batch = (long)get_group_id(2);
  A += a_off + batch * a_sb;
  B += b_off + batch * b_sb;
  C += c_off + batch * c_sb;
  bias += bias_off + batch * bias_sb;

  T acc[WM][WN];
#pragma unroll
  for (int i = 0; i < WM; ++i) {
#pragma unroll
    for (int j = 0; j < WN; ++j) acc[i][j] = (T)0;
  }

  for (int k0 = 0; k0 < K; k0 += TILE_K) {
    // A's tile (TILE_M x TILE_K), element e of the work-group's A_LOADS * WGS, walking the
    // stored matrix's contiguous dimension fastest.
#pragma unroll
    for (int r = 0; r < A_LOADS; ++r) {
      const int e = lid + r * WGS;
#ifdef A_TRANS
      const int mm = e % TILE_M, kk = e / TILE_M;  // A stored K x M: m contiguous
#else
      const int kk = e % TILE_K, mm = e / TILE_K;  // A stored M x K: k contiguous
#endif
      const int gm = m0 + mm, gk = k0 + kk;
      T v = (T)0;
      if (gm < M && gk < K) {
#ifdef A_TRANS
        v = MM_LD(A, (long)gk * lda + gm);
#else
        v = MM_LD(A, (long)gm * lda + gk);
#endif
      }
      As[kk][mm] = v;
    }
    // B's tile (TILE_K x TILE_N), likewise.
#pragma unroll
    for (int r = 0; r < B_LOADS; ++r) {
      const int e = lid + r * WGS;
#ifdef B_TRANS
      const int kk = e % TILE_K, nn = e / TILE_K;  // B stored N x K: k contiguous
#else
      const int nn = e % TILE_N, kk = e / TILE_N;  // B stored K x N: n contiguous
#endif
      const int gn = n0 + nn, gk = k0 + kk;
      T v = (T)0;
      if (gn < N && gk < K) {
#ifdef B_TRANS
        v = MM_LD(B, (long)gn * ldb + gk);
#else
        v = MM_LD(B, (long)gk * ldb + gn);
#endif
      }
      Bs[kk][nn] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

#pragma unroll
    for (int kk = 0; kk < TILE_K; ++kk) {
      T a[WM], b[WN];
#pragma unroll
      for (int i = 0; i < WM; ++i) a[i] = As[kk][ly + i * WG_M];
#pragma unroll
      for (int j = 0; j < WN; ++j) b[j] = Bs[kk][lx + j * WG_N];
#pragma unroll
      for (int i = 0; i < WM; ++i) {
#pragma unroll
        for (int j = 0; j < WN; ++j) acc[i][j] = a[i] * b[j] + acc[i][j];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

#pragma unroll
  for (int i = 0; i < WM; ++i) {
    const int m = m0 + ly + i * WG_M;
    if (m < M) {
#pragma unroll
      for (int j = 0; j < WN; ++j) {
        const int n = n0 + lx + j * WG_N;
        if (n < N) {
          T r = alpha * acc[i][j];
#ifdef HAS_BIAS
          if (beta != (T)0) r = r + beta * MM_LD(bias, (long)m * bias_sm + (long)n * bias_sn);
#endif
          MM_ST(C, (long)m * ldc + n, r);
        }
      }
    }
  }
}
