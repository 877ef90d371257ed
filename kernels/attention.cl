// attention: fused scaled-dot-product attention (flash-attention style), forward and backward.
//
// Shapes. Queries are [B, H, L, DQK], keys [B, HK, S, DQK], values [B, HK, S, DV], the output
// and its gradient dO [B, H, L, DV]; query head h reads key/value head h / GROUP (GROUP = H / HK:
// grouped-query attention, GROUP = 1 for plain attention, HK = 1 for keys shared by every head).
// Every tensor is passed as (buffer, offset, stride_b, stride_h, stride_l) in elements, with its
// last dimension contiguous. Rows r = (b * H + h) * L + i index the statistics lse and delta:
// contiguous float arrays of B * H * L values (buffer, offset).
//
// Scores. s_ij = scale * (q_i . k_j) + mask_ij, or -inf where causal masking hides key j from
// query i (j > i: ATen's top-left aligned tril mask). The additive mask (has_mask) is read at
// m_off + b * m_sb + h * m_sh + i * m_sl + j * m_ss (stride 0 for a broadcast dim), dtype M_T.
// P = softmax_j(s), computed in float. A row whose scores are all -inf (every key masked) gives
// P = 0, an output of 0 and lse = +inf (CPU torch's _safe_softmax gives the same zeros); a NaN
// score, or a +inf one, makes its row NaN as on the CPU.
//
// Dropout (drop_thresh > 0): element (r, j) is dropped when the top 24 bits of Philox word
// (j % 4) of counter base + r * ceil(S / 4) + j / 4 (key {key0, key1}) are < drop_thresh; kept
// elements are scaled by drop_scale = 1 / (1 - p). The host reserves B * H * L * ceil(S / 4)
// counters; the backward kernels regenerate the same mask from the same (key, base).
//
// Work split. Every work-item takes RQ consecutive rows (query rows, or key rows in
// attn_bwd_dkv) and a work-group LWS * RQ rows of one (b, h) (or (b, hk)); the work-item keeps
// its rows (and their accumulators) in registers as float8 along the head dim. The other side
// streams through local memory in tiles of BT rows (BT a multiple of 8), row-major with the head
// dim padded to a multiple of 8 with zeros. Scores are dot products of float8 rows (then a
// horizontal sum; no transposed tile needed), outputs and gradients float8 multiply-adds of a
// score times a tile row. A CPU device gets RQ = 4 (register blocking: each tile value loaded
// serves 4 rows, as in mm.cl), a GPU RQ = 1 and more work-items.
//
// attn_fwd: O = dropout(P) V and lse_r = m_r + log(l_r) (the row's max score and sum of
//   exp(s - max)), with an online softmax over the key tiles.
//   Launch: global = {ceil(L / (LWS * RQ)) * LWS, B * H}, local = {LWS, 1}.
// attn_bwd_delta: delta_r = dO_r . O_r.  Launch: global = {ceil(B * H * L / LWS) * LWS}, local
//   = {LWS}.
// attn_bwd_dq: recomputes P_ij = exp(s_ij - lse_r), dS_ij = P_ij * (Z_ij * (dO_i . v_j) -
//   delta_r) (Z: 0 or drop_scale) and dQ_i = scale * sum_j dS_ij k_j; with has_ds it also
//   writes dS (float [B, H, L, S], contiguous: the mask's gradient before the host sums it to
//   the mask's shape). Launch as attn_fwd.
// attn_bwd_dkv: per key row j of head hk, over the GROUP query heads of hk and every query row:
//   dV_j = sum_i Z_ij P_ij dO_i, dK_j = scale * sum_i dS_ij q_i.
//   Launch: global = {ceil(S / (LWS * RQ)) * LWS, B * HK}, local = {LWS, 1}.
//
// Build options: -DT=<float|half|bfloat16> (q, k, v, out, grads), -DM_T=<tag> (the mask;
// default T), -DDQK=<n> -DDV=<n> (head dims), -DBT=<tile rows, a multiple of 8>, -DRQ=<rows per
// work-item>, -DLWS=<work-group size> (enforced with reqd_work_group_size). Local memory, in
// floats: BT * (DQKP + DVP) for attn_fwd and attn_bwd_dq, BT * (DQKP + DVP + 2) for
// attn_bwd_dkv (DQKP, DVP: DQK, DV rounded up to 8).
// Accumulation is in float for every T. Multiply-adds are written a * b + c, not fma() (a call
// on PoCL, BUILD-NOTES); the compiler may contract them.

#ifndef M_T
#define M_T T
#endif

#define NB (BT / 8)                 // float8 per tile column of scores
#define DQKP (((DQK) + 7) / 8 * 8)  // head dims rounded up to whole float8
#define DVP (((DV) + 7) / 8 * 8)
#define NQ (DQKP / 8)
#define NV (DVP / 8)

// Only the loops over a work-item's RQ rows are unrolled (their accumulators stay in
// registers): unrolling the tile loops too was no faster on PoCL and doubled compile times.
#define UNROLL _Pragma("unroll")

#define TENSOR(name)                                                                   \
  __global const STORE_TYPE(T)*name, ulong name##_off, long name##_sb, long name##_sh, \
      long name##_sl

// Element j of a private float8 array.
#define LANE(arr, j) (((__private float*)(arr))[j])

inline float hmax8(float8 v) {
  const float4 a = fmax(v.lo, v.hi);
  const float2 b = fmax(a.lo, a.hi);
  return fmax(b.x, b.y);
}
// The last step as a dot product: Oclgrind's uninitialised-value checker crashes on the vector
// reduction the compiler makes of a.lo + a.hi (or of the lanes added one by one).
inline float hsum8(float8 v) {
  const float4 a = v.lo + v.hi;
  return dot(a, (float4)(1.0f));
}

// Elements [d0, d0 + 8) of row p[base..] (those >= D are 0), times mul. Contiguous scalar
// loads, which the compiler merges into one vector load (vload8 would be a call on PoCL).
inline float8 load8(__global const STORE_TYPE(T)* p, ulong base, int d0, int D, float mul) {
  if (d0 + 8 <= D) {
    return mul * (float8)((float)LOAD(T, p, base + d0), (float)LOAD(T, p, base + d0 + 1),
                          (float)LOAD(T, p, base + d0 + 2), (float)LOAD(T, p, base + d0 + 3),
                          (float)LOAD(T, p, base + d0 + 4), (float)LOAD(T, p, base + d0 + 5),
                          (float)LOAD(T, p, base + d0 + 6), (float)LOAD(T, p, base + d0 + 7));
  }
  float8 r = (float8)(0.0f);
  for (int t = 0; d0 + t < D; ++t) LANE(&r, t) = mul * (float)LOAD(T, p, base + d0 + t);
  return r;
}

// The four Philox words of dropout counter ctr.
inline uint4 drop_words(ulong ctr, uint key0, uint key1) {
  uint x0, x1, x2, x3;
  PHILOX4X32_10(ctr, key0, key1, x0, x1, x2, x3);
  return (uint4)(x0, x1, x2, x3);
}
inline uint word_of(uint4 w, int t) { return t == 0 ? w.x : t == 1 ? w.y : t == 2 ? w.z : w.w; }
// Z for Philox word w: 0 (dropped) or drop_scale.
inline float keep_scale(uint w, uint drop_thresh, float drop_scale) {
  return (w >> 8) < drop_thresh ? 0.0f : drop_scale;
}

// Rows [r0, r0 + n) (n <= BT) of a [rows, D] slab (row stride sl) times mul, into the tile
// dst[BT][NC] of float8 (columns >= D and rows >= n are 0).
#define LOAD_TILE(dst, D, NC, src, base, sl, r0, n, mul)                                           \
  for (int e_ = (int)get_local_id(0); e_ < BT * (NC); e_ += LWS) {                                 \
    const int rr_ = e_ / (NC), c_ = e_ - rr_ * (NC);                                               \
    (dst)[e_] =                                                                                    \
        rr_ < (n) ? load8(src, (base) + ((r0) + rr_) * (sl), c_ * 8, (D), (mul)) : (float8)(0.0f); \
  }
// Row vectors x[r] (float8 [RQ][NC]) of a work-item's RQ rows from a [rows, D] slab.
#define LOAD_PRIVATE(x, D, NC, src, base, sl, row0, nrows, mul)                               \
  for (int r_ = 0; r_ < RQ; ++r_) {                                                           \
    const long i_ = (row0) + r_;                                                              \
    for (int c_ = 0; c_ < (NC); ++c_)                                                         \
      (x)[r_][c_] =                                                                           \
          i_ < (nrows) ? load8(src, (base) + i_ * (sl), c_ * 8, (D), (mul)) : (float8)(0.0f); \
  }

// LANE(out[r], j) = x[r] . tile[j] for r < RQ, j < BT: x is float8 [RQ][NC] (a work-item's
// rows), tile a float8 [BT][NC] tile in local memory. Two tile rows at a time.
#define TILE_DOTS(out, x, tile, NC)                                                    \
  for (int jj_ = 0; jj_ < BT; jj_ += 2) {                                              \
    float8 a0_[RQ], a1_[RQ];                                                           \
    UNROLL for (int r_ = 0; r_ < RQ; ++r_) a0_[r_] = a1_[r_] = (float8)(0.0f);         \
    for (int c_ = 0; c_ < (NC); ++c_) {                                                \
      const float8 t0_ = (tile)[jj_ * (NC) + c_], t1_ = (tile)[(jj_ + 1) * (NC) + c_]; \
      UNROLL for (int r_ = 0; r_ < RQ; ++r_) {                                         \
        a0_[r_] += (x)[r_][c_] * t0_;                                                  \
        a1_[r_] += (x)[r_][c_] * t1_;                                                  \
      }                                                                                \
    }                                                                                  \
    UNROLL for (int r_ = 0; r_ < RQ; ++r_) {                                           \
      LANE((out)[r_], jj_) = hsum8(a0_[r_]);                                           \
      LANE((out)[r_], jj_ + 1) = hsum8(a1_[r_]);                                       \
    }                                                                                  \
  }
// acc[r][c] += LANE(w[r], jj) * tile[jj][c] for c < NC, over jj < BT: w is float8 [RQ][NB],
// tile a float8 [BT][NC] tile.
#define TILE_AXPY(acc, w, tile, NC)                                             \
  for (int c_ = 0; c_ < (NC); ++c_) {                                           \
    float8 a_[RQ];                                                              \
    UNROLL for (int r_ = 0; r_ < RQ; ++r_) a_[r_] = (acc)[r_][c_];              \
    for (int jj_ = 0; jj_ < BT; ++jj_) {                                        \
      const float8 t_ = (tile)[jj_ * (NC) + c_];                                \
      UNROLL for (int r_ = 0; r_ < RQ; ++r_) a_[r_] += LANE((w)[r_], jj_) * t_; \
    }                                                                           \
    UNROLL for (int r_ = 0; r_ < RQ; ++r_)(acc)[r_][c_] = a_[r_];               \
  }

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void attn_fwd(
    TENSOR(q), TENSOR(k), TENSOR(v), __global STORE_TYPE(T)* o, ulong o_off, long o_sb, long o_sh,
    long o_sl, __global float* lse, ulong lse_off, __global const STORE_TYPE(M_T)* mask,
    ulong m_off, long m_sb, long m_sh, long m_sl, long m_ss, int has_mask, int causal, long H,
    long GROUP, long L, long S, float scale, uint drop_thresh, float drop_scale, uint key0,
    uint key1, ulong base) {
  __local float8 ks[BT * NQ];  // K tile
  __local float8 vs[BT * NV];  // V tile
  const long bh = get_group_id(1), b = bh / H, h = bh - b * H, hk = h / GROUP;
  const long g0 = (long)get_group_id(0) * (LWS * RQ), i0 = g0 + (long)get_local_id(0) * RQ;
  const ulong kb = k_off + b * k_sb + hk * k_sh, vb = v_off + b * v_sb + hk * v_sh;
  const ulong S4 = (ulong)((S + 3) / 4);

  float8 qr[RQ][NQ], acc[RQ][NV];
  float m[RQ], l[RQ];
  LOAD_PRIVATE(qr, DQK, NQ, q, q_off + b * q_sb + h * q_sh, q_sl, i0, L, scale)
  for (int r = 0; r < RQ; ++r) {
    for (int c = 0; c < NV; ++c) acc[r][c] = (float8)(0.0f);
    m[r] = -INFINITY;
    l[r] = 0.0f;
  }

  const long kend = causal ? min(S, g0 + LWS * RQ) : S;
  for (long j0 = 0; j0 < kend; j0 += BT) {
    const int n = (int)min((long)BT, kend - j0);
    barrier(CLK_LOCAL_MEM_FENCE);
    LOAD_TILE(ks, DQK, NQ, k, kb, k_sl, j0, n, 1.0f)
    LOAD_TILE(vs, DV, NV, v, vb, v_sl, j0, n, 1.0f)
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i0 >= L) continue;
    float8 s[RQ][NB];
    TILE_DOTS(s, qr, ks, NQ)
    for (int r = 0; r < RQ; ++r) {
      const long i = i0 + r;
      const ulong mb = m_off + b * m_sb + h * m_sh + i * m_sl;
      for (int jj = 0; jj < BT; ++jj) {
        const long j = j0 + jj;
        if (jj >= n || (causal && j > i)) {
          LANE(s[r], jj) = -INFINITY;
        } else if (has_mask && i < L) {
          LANE(s[r], jj) += (float)LOAD(M_T, mask, mb + j * m_ss);
        }
      }
      // Online softmax. Rows whose scores are all -inf so far keep m = -inf and add nothing
      // (mu = 0 makes exp(-inf - mu) = 0 instead of NaN). A NaN score is skipped by fmax but
      // gives p = NaN, so the row becomes NaN.
      float mt = m[r];
      for (int c = 0; c < NB; ++c) mt = fmax(mt, hmax8(s[r][c]));
      const float mu = mt == -INFINITY ? 0.0f : mt;
      const float alpha = exp(m[r] - mu);
      float sum = 0.0f;
      for (int c = 0; c < NB; ++c) {
        s[r][c] = exp(s[r][c] - (float8)(mu));
        sum += hsum8(s[r][c]);
      }
      l[r] = l[r] * alpha + sum;
      m[r] = mt;
      for (int c = 0; c < NV; ++c) acc[r][c] *= alpha;
      if (drop_thresh && i < L) {
        const ulong drow = base + (ulong)(bh * L + i) * S4 + (ulong)(j0 / 4);
        for (int jq = 0; jq < n; jq += 4) {
          const uint4 w = drop_words(drow + (ulong)(jq / 4), key0, key1);
          for (int t = 0; t < 4; ++t)
            LANE(s[r], jq + t) *= keep_scale(word_of(w, t), drop_thresh, drop_scale);
        }
      }
    }
    TILE_AXPY(acc, s, vs, NV)
  }
  for (int r = 0; r < RQ; ++r) {
    const long i = i0 + r;
    if (i >= L) break;
    const float inv = l[r] == 0.0f ? 0.0f : 1.0f / l[r];
    const ulong ob = o_off + b * o_sb + h * o_sh + i * o_sl;
    for (int d = 0; d < DV; ++d) STORE(T, o, ob + d, CONVERT(T, LANE(acc[r], d) * inv));
    lse[lse_off + bh * L + i] = l[r] == 0.0f ? INFINITY : m[r] + log(l[r]);
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void attn_bwd_delta(
    TENSOR(g), TENSOR(o), __global float* delta, ulong delta_off, long H, long L, long rows) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  const long bh = r / L, i = r - bh * L, b = bh / H, h = bh - b * H;
  const ulong gb = g_off + b * g_sb + h * g_sh + i * g_sl;
  const ulong ob = o_off + b * o_sb + h * o_sh + i * o_sl;
  float acc = 0.0f;
  for (int d = 0; d < DV; ++d) acc += (float)LOAD(T, g, gb + d) * (float)LOAD(T, o, ob + d);
  delta[delta_off + r] = acc;
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void attn_bwd_dq(
    TENSOR(q), TENSOR(k), TENSOR(v), TENSOR(g), __global STORE_TYPE(T)* dq, ulong dq_off,
    long dq_sb, long dq_sh, long dq_sl, __global float* ds_out, ulong ds_off, int has_ds,
    __global const float* lse, ulong lse_off, __global const float* delta, ulong delta_off,
    __global const STORE_TYPE(M_T)* mask, ulong m_off, long m_sb, long m_sh, long m_sl, long m_ss,
    int has_mask, int causal, long H, long GROUP, long L, long S, float scale, uint drop_thresh,
    float drop_scale, uint key0, uint key1, ulong base) {
  __local float8 ks[BT * NQ];  // K tile
  __local float8 vs[BT * NV];  // V tile
  const long bh = get_group_id(1), b = bh / H, h = bh - b * H, hk = h / GROUP;
  const long g0 = (long)get_group_id(0) * (LWS * RQ), i0 = g0 + (long)get_local_id(0) * RQ;
  const ulong kb = k_off + b * k_sb + hk * k_sh, vb = v_off + b * v_sb + hk * v_sh;
  const ulong S4 = (ulong)((S + 3) / 4);

  float8 qr[RQ][NQ], gr[RQ][NV], acc[RQ][NQ];
  float lse_r[RQ], delta_r[RQ];
  LOAD_PRIVATE(qr, DQK, NQ, q, q_off + b * q_sb + h * q_sh, q_sl, i0, L, scale)
  LOAD_PRIVATE(gr, DV, NV, g, g_off + b * g_sb + h * g_sh, g_sl, i0, L, 1.0f)
  for (int r = 0; r < RQ; ++r) {
    const long i = i0 + r;
    for (int c = 0; c < NQ; ++c) acc[r][c] = (float8)(0.0f);
    lse_r[r] = i < L ? lse[lse_off + bh * L + i] : INFINITY;
    delta_r[r] = i < L ? delta[delta_off + bh * L + i] : 0.0f;
  }

  const long kend = causal ? min(S, g0 + LWS * RQ) : S;
  for (long j0 = 0; j0 < kend; j0 += BT) {
    const int n = (int)min((long)BT, kend - j0);
    barrier(CLK_LOCAL_MEM_FENCE);
    LOAD_TILE(ks, DQK, NQ, k, kb, k_sl, j0, n, 1.0f)
    LOAD_TILE(vs, DV, NV, v, vb, v_sl, j0, n, 1.0f)
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i0 >= L) continue;
    float8 s[RQ][NB], dp[RQ][NB];
    TILE_DOTS(s, qr, ks, NQ)
    TILE_DOTS(dp, gr, vs, NV)
    for (int r = 0; r < RQ; ++r) {
      const long i = i0 + r;
      const ulong mb = m_off + b * m_sb + h * m_sh + i * m_sl;
      for (int jj = 0; jj < BT; ++jj) {
        const long j = j0 + jj;
        if (jj >= n || (causal && j > i)) {
          LANE(s[r], jj) = -INFINITY;
        } else if (has_mask && i < L) {
          LANE(s[r], jj) += (float)LOAD(M_T, mask, mb + j * m_ss);
        }
      }
      if (drop_thresh && i < L) {
        const ulong drow = base + (ulong)(bh * L + i) * S4 + (ulong)(j0 / 4);
        for (int jq = 0; jq < n; jq += 4) {
          const uint4 w = drop_words(drow + (ulong)(jq / 4), key0, key1);
          for (int t = 0; t < 4; ++t)
            LANE(dp[r], jq + t) *= keep_scale(word_of(w, t), drop_thresh, drop_scale);
        }
      }
      // s becomes dS = P * (Z * dP - delta).
      for (int c = 0; c < NB; ++c)
        s[r][c] = exp(s[r][c] - (float8)(lse_r[r])) * (dp[r][c] - (float8)(delta_r[r]));
      if (has_ds && i < L) {
        for (int jj = 0; jj < n; ++jj) ds_out[ds_off + (bh * L + i) * S + j0 + jj] = LANE(s[r], jj);
      }
    }
    TILE_AXPY(acc, s, ks, NQ)
  }
  for (int r = 0; r < RQ; ++r) {
    const long i = i0 + r;
    if (i >= L) break;
    if (has_ds) {  // keys after the causal range (a mask never comes with is_causal)
      for (long j = kend; j < S; ++j) ds_out[ds_off + (bh * L + i) * S + j] = 0.0f;
    }
    const ulong ob = dq_off + b * dq_sb + h * dq_sh + i * dq_sl;
    for (int d = 0; d < DQK; ++d) STORE(T, dq, ob + d, CONVERT(T, scale * LANE(acc[r], d)));
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void attn_bwd_dkv(
    TENSOR(q), TENSOR(k), TENSOR(v), TENSOR(g), __global STORE_TYPE(T)* dk, ulong dk_off,
    long dk_sb, long dk_sh, long dk_sl, __global STORE_TYPE(T)* dv, ulong dv_off, long dv_sb,
    long dv_sh, long dv_sl, __global const float* lse, ulong lse_off, __global const float* delta,
    ulong delta_off, __global const STORE_TYPE(M_T)* mask, ulong m_off, long m_sb, long m_sh,
    long m_sl, long m_ss, int has_mask, int causal, long H, long GROUP, long L, long S, float scale,
    uint drop_thresh, float drop_scale, uint key0, uint key1, ulong base) {
  __local float8 qs[BT * NQ];             // scale * Q tile
  __local float8 gs[BT * NV];             // dO tile
  __local float8 lse_s[NB], delta_s[NB];  // the tile rows' statistics
  const int lid = (int)get_local_id(0);
  const long HK = H / GROUP;
  const long bhk = get_group_id(1), b = bhk / HK, hk = bhk - b * HK;
  const long g0 = (long)get_group_id(0) * (LWS * RQ), j0 = g0 + (long)lid * RQ;
  const ulong S4 = (ulong)((S + 3) / 4);

  float8 kr[RQ][NQ], vr[RQ][NV], dka[RQ][NQ], dva[RQ][NV];
  LOAD_PRIVATE(kr, DQK, NQ, k, k_off + b * k_sb + hk * k_sh, k_sl, j0, S, 1.0f)
  LOAD_PRIVATE(vr, DV, NV, v, v_off + b * v_sb + hk * v_sh, v_sl, j0, S, 1.0f)
  for (int r = 0; r < RQ; ++r) {
    for (int c = 0; c < NQ; ++c) dka[r][c] = (float8)(0.0f);
    for (int c = 0; c < NV; ++c) dva[r][c] = (float8)(0.0f);
  }

  // With causal masking, query rows before the group's first key see none of its keys.
  const long istart = causal ? min(g0, L) : 0;
  for (long h = hk * GROUP; h < (hk + 1) * GROUP; ++h) {
    const long bh = b * H + h;
    const ulong qb = q_off + b * q_sb + h * q_sh, gb = g_off + b * g_sb + h * g_sh;
    for (long r0 = istart; r0 < L; r0 += BT) {
      const int n = (int)min((long)BT, L - r0);
      barrier(CLK_LOCAL_MEM_FENCE);
      LOAD_TILE(qs, DQK, NQ, q, qb, q_sl, r0, n, scale)
      LOAD_TILE(gs, DV, NV, g, gb, g_sl, r0, n, 1.0f)
      for (int e = lid; e < BT; e += LWS) {
        ((__local float*)lse_s)[e] = e < n ? lse[lse_off + bh * L + r0 + e] : INFINITY;
        ((__local float*)delta_s)[e] = e < n ? delta[delta_off + bh * L + r0 + e] : 0.0f;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (j0 >= S) continue;
      // Transposed scores: LANE(s[r], ii) for key j0 + r and query row r0 + ii.
      float8 s[RQ][NB], dp[RQ][NB];
      TILE_DOTS(s, kr, qs, NQ)
      TILE_DOTS(dp, vr, gs, NV)
      // Masks, then P = exp(s - lse) a float8 (8 query rows) at a time.
      float8 z[RQ][NB];
      for (int r = 0; r < RQ; ++r) {
        const long j = j0 + r;
        for (int ii = 0; ii < BT; ++ii) {
          const long i = r0 + ii;
          if (ii >= n || j >= S || (causal && j > i)) {
            LANE(s[r], ii) = -INFINITY;
          } else if (has_mask) {
            LANE(s[r], ii) +=
                (float)LOAD(M_T, mask, m_off + b * m_sb + h * m_sh + i * m_sl + j * m_ss);
          }
        }
        for (int c = 0; c < NB; ++c) {
          s[r][c] = exp(s[r][c] - lse_s[c]);
          z[r][c] = (float8)(1.0f);
        }
      }
      if (drop_thresh) {
        for (int ii = 0; ii < n; ++ii) {
          const long i = r0 + ii;
          uint4 w = (uint4)(0u);
          for (int r = 0; r < RQ && j0 + r < S; ++r) {
            const long j = j0 + r;
            if (r == 0 || (j & 3) == 0)
              w = drop_words(base + (ulong)(bh * L + i) * S4 + (ulong)(j / 4), key0, key1);
            LANE(z[r], ii) = keep_scale(word_of(w, (int)(j & 3)), drop_thresh, drop_scale);
          }
        }
      }
      // s becomes Z * P (for dV), dp becomes dS = P * (Z * dP - delta) (for dK).
      for (int r = 0; r < RQ; ++r) {
        for (int c = 0; c < NB; ++c) {
          dp[r][c] = s[r][c] * (dp[r][c] * z[r][c] - delta_s[c]);
          s[r][c] *= z[r][c];
        }
      }
      TILE_AXPY(dva, s, gs, NV)
      TILE_AXPY(dka, dp, qs, NQ)
    }
  }
  for (int r = 0; r < RQ; ++r) {
    const long j = j0 + r;
    if (j >= S) break;
    const ulong kob = dk_off + b * dk_sb + hk * dk_sh + j * dk_sl;
    const ulong vob = dv_off + b * dv_sb + hk * dv_sh + j * dv_sl;
    for (int d = 0; d < DQK; ++d) STORE(T, dk, kob + d, CONVERT(T, LANE(dka[r], d)));
    for (int d = 0; d < DV; ++d) STORE(T, dv, vob + d, CONVERT(T, LANE(dva[r], d)));
  }
}
