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
//   VEC_A, VEC_B    1, 2 or 4: the tile loads read this many consecutive elements of A (B) at a
//                   time along its contiguous dimension, as one aligned vector load. The host
//                   passes more than 1 only where every such vector is aligned (the operand's
//                   offset, leading dimension and batch stride multiples of the width) and the
//                   storage type is T itself (not -DMM_S, not the convolution forms); vectors
//                   that cross the matrix's edge are read element by element.
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
// Implicit-GEMM convolution (-DCONV_B): B is not a matrix in memory but the im2col columns of a
// convolution's input, read on the fly (no column buffer): B[r, p] for r = ((c * KD + kd) * KH +
// kh) * KW + kw and output position p = (od * OH + oh) * OW + ow is
//   x[c * x_sc + id * x_ss.x + ih * x_ss.y + iw * x_ss.z],  id = od * st.x - pd.x + kd * dl.x
// (likewise ih, iw), or 0 where that lies in the padding. Batch z = image * G + group: A (the
// weight, COg x Cg*kvol) starts group * a_sb elements in, B (the input) image * b_sb + group *
// b_sg, C (the output, COg x OD*OH*OW per image and group, unit column stride) image * c_sb +
// group * c_sg, the bias group * bias_sb.
// Implicit-GEMM weight gradient (-DCONV_WGRAD): C (COg x Cg*kvol per group) = gy @ columns^T
// summed over images and positions, k = image * L + p (L = OD*OH*OW): A[co, k] is
// gy[image * gy_sn + co * gy_sc + p] (gy's positions contiguous), B[k, r] the column element
// above of image k / L (x_sn apart). Batch z = group * S + split: split s sums k in
// [s * KS, (s + 1) * KS) into its own partial C (c_sb apart; the host adds the S partials), the
// group's A, B and C start group * a_sb, b_sb and c_sg elements in. No bias.
// Both convolution forms take these arguments after the usual ones (unused ones any value):
//   int G, int S, int KS, long b_sg, long c_sg, int4 isz, int4 osz, int4 ks, int4 st, int4 pd,
//   int4 dl, long x_sc, long4 x_ss, long x_sn, long gy_sn, long gy_sc
// (sizes and strides as in kernels/conv.cl: .x depth, .y height, .z width). Neither takes
// A_TRANS or B_TRANS.
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

#ifndef VEC_A
#define VEC_A 1
#endif
#ifndef VEC_B
#define VEC_B 1
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
#if (defined(CONV_B) || defined(CONV_WGRAD)) && (defined(A_TRANS) || defined(B_TRANS))
#error "the convolution forms read their operands through the im2col mapping: no A_TRANS/B_TRANS"
#endif
#if (TILE_M * TILE_K) % (WGS * VEC_A) != 0 || (TILE_N * TILE_K) % (WGS * VEC_B) != 0 || \
    TILE_K % VEC_A != 0 || TILE_K % VEC_B != 0 || TILE_M % VEC_A != 0 || TILE_N % VEC_B != 0
#error "the vector widths must divide the tile and its per-work-item loads"
#endif
#if (VEC_A > 1 || VEC_B > 1) && (defined(MM_S) || defined(CONV_B) || defined(CONV_WGRAD))
#error "vector tile loads read T itself from a matrix in memory"
#endif
// F(j, lane j of v) for each lane of a vector of width W (1, 2 or 4).
#define MM_LANES1(v, F) F(0, v)
#define MM_LANES2(v, F) F(0, (v).s0) F(1, (v).s1)
#define MM_LANES4(v, F) F(0, (v).s0) F(1, (v).s1) F(2, (v).s2) F(3, (v).s3)
#define MM_LANES(W, v, F) OCL_CAT(MM_LANES, W)(v, F)
// The vector type of width W (its own paste macros: OCL_CAT cannot expand inside OCL_CAT).
#define MM_PASTE_(a, b) a##b
#define MM_PASTE(a, b) MM_PASTE_(a, b)
#define MM_VT1 T
#define MM_VT2 MM_PASTE(T, 2)
#define MM_VT4 MM_PASTE(T, 4)
#define MM_VT(W) OCL_CAT(MM_VT, W)
#if WM > 16 || WN > 16
#error "a work-item's block is at most 16 x 16"
#endif

// Quotient and remainder as q = a / b, r = a - q * b, never `%` beside `/`: LLVM pairs those and
// inserts a `freeze`, which Oclgrind's uninitialised-value checker cannot execute (elementwise.cl).
#define MM_REM(a, b, q) ((a) - (q) * (b))

#if defined(CONV_B) || defined(CONV_WGRAD)
#define MM_CONV 1
// The kernel's extent per dim: -DCONV_KS=d,h,w fixes it at build time (division by a constant
// costs a multiply and a shift, by a variable tens of instructions per element loaded), else
// the ks argument.
#ifdef CONV_KS
#define MM_KS ((int4)(CONV_KS, 0))
#else
#define MM_KS ks
#endif
// The output position p's corner in the input: o * stride - padding per dim (.x depth, .y
// height, .z width).
inline int4 conv_corner(int p, int4 osz, int4 st, int4 pd) {
  const int p1 = p / osz.z, ow = MM_REM(p, osz.z, p1);
  const int od = p1 / osz.y, oh = MM_REM(p1, osz.y, od);
  return (int4)(od * st.x - pd.x, oh * st.y - pd.y, ow * st.z - pd.z, 0);
}
// The input element im2col puts at row r for the output position with corner `at`, or 0 where
// it lies in the padding.
inline T conv_at(__global const SP* x, int r, int4 at, int4 isz, int4 ks, int4 dl, long x_sc,
                 long4 x_ss) {
  const int r1 = r / ks.z, kw = MM_REM(r, ks.z, r1);
  const int r2 = r1 / ks.y, kh = MM_REM(r1, ks.y, r2);
  const int c = r2 / ks.x, kd = MM_REM(r2, ks.x, c);
  const int id = at.x + kd * dl.x, ih = at.y + kh * dl.y, iw = at.z + kw * dl.z;
  if (id < 0 || id >= isz.x || ih < 0 || ih >= isz.y || iw < 0 || iw >= isz.z) return (T)0;
  return MM_LD(x, (long)c * x_sc + (long)id * x_ss.x + (long)ih * x_ss.y + (long)iw * x_ss.z);
}
// The input element im2col puts at row r, column p (an output position) of one image `x`.
inline T conv_col(__global const SP* x, int r, int p, int4 isz, int4 osz, int4 ks, int4 st, int4 pd,
                  int4 dl, long x_sc, long4 x_ss) {
  return conv_at(x, r, conv_corner(p, osz, st, pd), isz, ks, dl, x_sc, x_ss);
}
#endif

// B's tile is loaded with k fastest where B is contiguous along k.
#if defined(B_TRANS) || defined(CONV_WGRAD)
#define MM_B_K_FASTEST 1
#endif

__kernel __attribute__((reqd_work_group_size(WG_N, WG_M, 1))) void mm_tiled(
    int M, int N, int K, __global const SP* A, ulong a_off, long lda, __global const SP* B,
    ulong b_off, long ldb, __global SP* C, ulong c_off, long ldc, T alpha, T beta,
    __global const SP* bias, ulong bias_off, long bias_sm, long bias_sn, long a_sb, long b_sb,
    long c_sb, long bias_sb
#ifdef MM_CONV
    ,
    int G, int S, int KS, long b_sg, long c_sg, int4 isz, int4 osz, int4 ks, int4 st, int4 pd,
    int4 dl, long x_sc, long4 x_ss, long x_sn, long gy_sn, long gy_sc
#endif
) {
  // As[k][m] and Bs[k][n]: a row of k is contiguous along m (n), which the compute loop reads.
  __local T As[TILE_K][TILE_M + TILE_PAD];
  __local T Bs[TILE_K][TILE_N + TILE_PAD];

  const int lx = get_local_id(0), ly = get_local_id(1);
  const int lid = ly * WG_N + lx;
  const int m0 = get_group_id(1) * TILE_M;
  const int n0 = get_group_id(0) * TILE_N;
  int k_begin = 0, k_end = K;
#if defined(CONV_B)
  const long image = (long)get_group_id(2) / G;
  const long group = MM_REM((long)get_group_id(2), G, image);
  A += a_off + group * a_sb;
  B += b_off + image * b_sb + group * b_sg;
  C += c_off + image * c_sb + group * c_sg;
  bias += bias_off + group * bias_sb;
#elif defined(CONV_WGRAD)
  // Batch z = group * S + split: split s sums k in [s * KS, (s + 1) * KS) into its own partial
  // gradient (c_sb apart), k = image * L + output position.
  const long group = (long)get_group_id(2) / S;
  const long split = MM_REM((long)get_group_id(2), S, group);
  const int L = osz.x * osz.y * osz.z;
  k_begin = (int)split * KS;
  k_end = min(K, k_begin + KS);
  A += a_off + group * a_sb;
  B += b_off + group * b_sb;
  C += c_off + split * c_sb + group * c_sg;
  bias += bias_off;
#else
  const long batch = (long)get_group_id(2);
  A += a_off + batch * a_sb;
  B += b_off + batch * b_sb;
  C += c_off + batch * c_sb;
  bias += bias_off + batch * bias_sb;
#endif

  T acc[WM][WN];
#pragma unroll
  for (int i = 0; i < WM; ++i) {
#pragma unroll
    for (int j = 0; j < WN; ++j) acc[i][j] = (T)0;
  }

#if defined(CONV_B) && VEC_B == 1 && (WGS % TILE_N) == 0
  // Each work-item loads B's elements in one column of the tile (e = lid + r * WGS, n = e mod
  // TILE_N), the same for every k: its output position's corner, worked out once.
#define MM_CONV_CORNER 1
  const int my_gn = n0 + MM_REM(lid, TILE_N, lid / TILE_N);
  const int4 corner = conv_corner(min(my_gn, N - 1), osz, st, pd);
#endif

  for (int k0 = k_begin; k0 < k_end; k0 += TILE_K) {
#if defined(CONV_WGRAD) && (WGS % TILE_K) == 0
    // Each work-item loads A's and B's elements at one k of the tile (e = lid + r * WGS, k = e
    // mod TILE_K): its image, output position and the position's corner, once per tile.
#define MM_WGRAD_AT 1
    const int my_gk = k0 + MM_REM(lid, TILE_K, lid / TILE_K);
    const int my_image = my_gk / L, my_p = MM_REM(my_gk, L, my_image);
    const int4 my_corner = conv_corner(my_p, osz, st, pd);
#endif
    // A's tile (TILE_M x TILE_K), element e of the work-group's A_LOADS * WGS, walking the
    // stored matrix's contiguous dimension fastest.
#if VEC_A > 1
    // VEC_A consecutive elements along the contiguous dimension per load.
#pragma unroll
    for (int r = 0; r < A_LOADS / VEC_A; ++r) {
      const int e = lid + r * WGS;
#ifdef A_TRANS
      const int kk = e / (TILE_M / VEC_A), mm = MM_REM(e, TILE_M / VEC_A, kk) * VEC_A;
      const int gm = m0 + mm, gk = k0 + kk;
      __global const T* ap = A + (long)gk * lda + gm;
#define MM_PUT_A(j, x) As[kk][mm + j] = (x);
#define MM_IN_A(j) (gk < K && gm + j < M)
      const bool whole = gk < K && gm + VEC_A <= M;
#else
      const int mm = e / (TILE_K / VEC_A), kk = MM_REM(e, TILE_K / VEC_A, mm) * VEC_A;
      const int gm = m0 + mm, gk = k0 + kk;
      __global const T* ap = A + (long)gm * lda + gk;
#define MM_PUT_A(j, x) As[kk + j][mm] = (x);
#define MM_IN_A(j) (gm < M && gk + j < K)
      const bool whole = gm < M && gk + VEC_A <= K;
#endif
      if (whole) {
        const MM_VT(VEC_A) v = *(__global const MM_VT(VEC_A)*)ap;
        MM_LANES(VEC_A, v, MM_PUT_A)
      } else {
#pragma unroll
        for (int j = 0; j < VEC_A; ++j) {
          const T x = MM_IN_A(j) ? ap[j] : (T)0;
          MM_PUT_A(j, x)
        }
      }
#undef MM_PUT_A
#undef MM_IN_A
    }
#else
#pragma unroll
    for (int r = 0; r < A_LOADS; ++r) {
      const int e = lid + r * WGS;
#ifdef A_TRANS
      const int kk = e / TILE_M, mm = MM_REM(e, TILE_M, kk);  // A stored K x M: m contiguous
#else
      const int mm = e / TILE_K, kk = MM_REM(e, TILE_K, mm);  // A stored M x K: k contiguous
#endif
      const int gm = m0 + mm, gk = k0 + kk;
      T v = (T)0;
      if (gm < M && gk < k_end) {
#if defined(CONV_WGRAD) && defined(MM_WGRAD_AT)
        // A = the output gradient: A[co, k] = gy[image, co, position] (gk == my_gk).
        v = MM_LD(A, (long)my_image * gy_sn + (long)gm * gy_sc + my_p);
#elif defined(CONV_WGRAD)
        const int image = gk / L;
        v = MM_LD(A, (long)image * gy_sn + (long)gm * gy_sc + MM_REM(gk, L, image));
#elif defined(A_TRANS)
        v = MM_LD(A, (long)gk * lda + gm);
#else
        v = MM_LD(A, (long)gm * lda + gk);
#endif
      }
      As[kk][mm] = v;
    }
#endif
    // B's tile (TILE_K x TILE_N), likewise.
#if VEC_B > 1
#pragma unroll
    for (int r = 0; r < B_LOADS / VEC_B; ++r) {
      const int e = lid + r * WGS;
#ifdef B_TRANS
      const int nn = e / (TILE_K / VEC_B), kk = MM_REM(e, TILE_K / VEC_B, nn) * VEC_B;
      const int gn = n0 + nn, gk = k0 + kk;
      __global const T* bp = B + (long)gn * ldb + gk;
#define MM_PUT_B(j, x) Bs[kk + j][nn] = (x);
#define MM_IN_B(j) (gn < N && gk + j < K)
      const bool whole = gn < N && gk + VEC_B <= K;
#else
      const int kk = e / (TILE_N / VEC_B), nn = MM_REM(e, TILE_N / VEC_B, kk) * VEC_B;
      const int gn = n0 + nn, gk = k0 + kk;
      __global const T* bp = B + (long)gk * ldb + gn;
#define MM_PUT_B(j, x) Bs[kk][nn + j] = (x);
#define MM_IN_B(j) (gk < K && gn + j < N)
      const bool whole = gk < K && gn + VEC_B <= N;
#endif
      if (whole) {
        const MM_VT(VEC_B) v = *(__global const MM_VT(VEC_B)*)bp;
        MM_LANES(VEC_B, v, MM_PUT_B)
      } else {
#pragma unroll
        for (int j = 0; j < VEC_B; ++j) {
          const T x = MM_IN_B(j) ? bp[j] : (T)0;
          MM_PUT_B(j, x)
        }
      }
#undef MM_PUT_B
#undef MM_IN_B
    }
#else
#pragma unroll
    for (int r = 0; r < B_LOADS; ++r) {
      const int e = lid + r * WGS;
#ifdef MM_B_K_FASTEST
      const int nn = e / TILE_K, kk = MM_REM(e, TILE_K, nn);  // B contiguous along k
#else
      const int kk = e / TILE_N, nn = MM_REM(e, TILE_N, kk);  // B contiguous along n
#endif
      const int gn = n0 + nn, gk = k0 + kk;
      T v = (T)0;
      if (gn < N && gk < k_end) {
#if defined(CONV_B) && defined(MM_CONV_CORNER)
        // B = the im2col columns of the image: B[r, p], p's corner known.
        v = conv_at(B, gk, corner, isz, MM_KS, dl, x_sc, x_ss);
#elif defined(CONV_B)
        v = conv_col(B, gk, gn, isz, osz, MM_KS, st, pd, dl, x_sc, x_ss);
#elif defined(CONV_WGRAD) && defined(MM_WGRAD_AT)
        // B = the transposed columns: B[k, r] = columns[r, position] of image k / L.
        v = conv_at(B + (long)my_image * x_sn, gn, my_corner, isz, MM_KS, dl, x_sc, x_ss);
#elif defined(CONV_WGRAD)
        const int image = gk / L;
        v = conv_col(B + (long)image * x_sn, gn, MM_REM(gk, L, image), isz, osz, MM_KS, st, pd, dl,
                     x_sc, x_ss);
#elif defined(B_TRANS)
        v = MM_LD(B, (long)gn * ldb + gk);
#else
        v = MM_LD(B, (long)gk * ldb + gn);
#endif
      }
      Bs[kk][nn] = v;
    }
#endif
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
