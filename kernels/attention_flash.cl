// attention_flash: scaled-dot-product attention for GPUs in the flash-attention-2 layout,
// forward and backward. The GPU profile's variant (DeviceProfile::attention_flash); CPU devices
// keep kernels/attention.cl. Same operands, statistics, mask, causal and dropout rules as
// kernels/attention.cl - read its header for them (shapes [B, H, L, DQK] / [B, HK, S, DQK] /
// [B, HK, S, DV], every tensor as (buffer, offset, stride_b, stride_h, stride_l) in elements with
// a contiguous last dim, grouped-query attention by GROUP = H / HK, lse and delta float arrays of
// B * H * L rows, the additive mask of dtype M_T with stride 0 on broadcast dims, -inf scores
// where causal masking hides a key, and the same Philox dropout counters, so that a forward of
// one file and a backward of the other agree).
//
// Work split. A work-group keeps a block of BR rows (query rows in flash_fwd and flash_bwd_dq,
// key rows in flash_bwd_dkv) and streams the other side in blocks of BC rows. Its WG_C x WG_R
// work-items (local id 0: lx < WG_C, local id 1: ly < WG_R) share the block: work-item (lx, ly)
// holds the PR x PC register block of scores at rows ly + i * WG_R and columns lx + j * WG_C
// (PR = BR / WG_R, PC = BC / WG_C), and the head dim of its rows' accumulators at columns
// lx + c * WG_C (the accumulators of a row are spread over the WG_C work-items of that row).
//  - Scores (S = Q K^T, and dP = dO V^T in the backward) are register-blocked tile products over
//    the head dim, TD values at a time through local tiles Rt[TD][BR + 1] and Ct[TD][BC + 1]
//    (loaded along the contiguous head dim: coalesced; the +1 spreads the transposing writes over
//    the banks), as in kernels/mm_tiled.cl.
//  - Accumulations (O += P V, dQ += dS K, dV += P^T dO, dK += dS^T Q) take the weights from a
//    local block Wt[BC][BR + 1] (written from the work-items' registers) and the streamed rows TD
//    at a time through a local tile Xt[TD][NX * WG_C]; every work-item adds PR x NC products per
//    row (NC = ceil(D / WG_C)).
//  - The online softmax keeps the row max m per row (the same in every work-item of the row: the
//    block max is merged through the local array red[BR][WG_C]) and each work-item's part of the
//    row sum l, added up once at the end.
// The tiles and Xt share local memory (they are used in different phases, between barriers).
//
// Kernels:
//  flash_fwd: O and lse. Launch: global = {ceil(L / BR) * WG_C, B * H * WG_R}, local = {WG_C,
//    WG_R}.
//  flash_bwd_delta: delta_r = dO_r . O_r, one work-item per row. Launch: global = rows rounded up
//    to the local size, any local size.
//  flash_bwd_dq: dQ (and dS for a mask's gradient, has_ds), keys streamed. Launch as flash_fwd.
//  flash_bwd_dkv: dK and dV of BR key rows of head hk, the query rows of its GROUP query heads
//    streamed. Launch: global = {ceil(S / BR) * WG_C, B * HK * WG_R}, local = {WG_C, WG_R}.
//
// Build options: -DT, -DM_T, -DDQK, -DDV as kernels/attention.cl; -DBR, -DBC (blocks), -DWG_R,
// -DWG_C (work-group shape, enforced with reqd_work_group_size), -DTD (head-dim and row chunk of
// the local tiles). BR % WG_R == BC % WG_C == 0. Local memory, in floats:
//   max(TD * (BR + 1 + BC + 1), TD * NX * WG_C) + BC * (BR + 1) + BR * WG_C + 2 * BC
// (NX = ceil(max(DQK, DV) / WG_C)); the host computes the same (AttentionFlash.cpp).
// Accumulation is in float for every T. Multiply-adds are written a * b + c (BUILD-NOTES).

#ifndef M_T
#define M_T T
#endif

#define PR (BR / WG_R)
#define PC (BC / WG_C)
#define WGS (WG_R * WG_C)
#define NQC (((DQK) + WG_C - 1) / WG_C)  // head-dim columns per work-item
#define NVC (((DV) + WG_C - 1) / WG_C)
#define NX (NQC > NVC ? NQC : NVC)
#define RT_LD (BR + 1)  // row lengths of the local arrays
#define CT_LD (BC + 1)
#define XT_LD (NX * WG_C)
#define TILES_FLOATS (TD * (RT_LD + CT_LD) > TD * XT_LD ? TD * (RT_LD + CT_LD) : TD * XT_LD)
#define LOCAL_FLOATS (TILES_FLOATS + BC * RT_LD + BR * WG_C + 2 * BC)

// The loops over a work-item's register block are unrolled (its values stay in registers).
#define UNROLL _Pragma("unroll")

#if (BR % WG_R) != 0 || (BC % WG_C) != 0
#error "BR must be a multiple of WG_R and BC of WG_C"
#endif

#define TENSOR(name)                                                                   \
  __global const STORE_TYPE(T)*name, ulong name##_off, long name##_sb, long name##_sh, \
      long name##_sl
#define MASK_ARGS                                                                               \
  __global const STORE_TYPE(M_T)*mask, ulong m_off, long m_sb, long m_sh, long m_sl, long m_ss, \
      int has_mask
#define TAIL_ARGS                                                                                  \
  int causal, long H, long GROUP, long L, long S, float scale, uint drop_thresh, float drop_scale, \
      uint key0, uint key1, ulong base

// Z for (row r of the B * H * L statistics rows, key j): 0 (dropped) or drop_scale; the word
// j % 4 of Philox counter base + r * ceil(S / 4) + j / 4, as kernels/attention.cl.
inline float flash_keep(ulong base, ulong r, ulong S4, long j, uint key0, uint key1,
                        uint drop_thresh, float drop_scale) {
  uint x0, x1, x2, x3;
  PHILOX4X32_10(base + r * S4 + (ulong)(j / 4), key0, key1, x0, x1, x2, x3);
  const long t = j - (j / 4) * 4;
  const uint w = t == 0 ? x0 : t == 1 ? x1 : t == 2 ? x2 : x3;
  return (w >> 8) < drop_thresh ? 0.0f : drop_scale;
}

// acc[i][j] += sum_{d < D} rmul * R[rb + (ly + i*WG_R) * rs + d] * C[cb + (lx + j*WG_C) * cs + d]
// for the nr valid rows of R and nc of C (others load 0), TD values of d at a time through the
// local tiles Rt[TD][RT_LD] and Ct[TD][CT_LD]. Every work-item of the group must call it.
#define BLOCK_DOTS(acc, D, R, rb, rs, nr, rmul, C, cb, cs, nc)                                 \
  for (int d0_ = 0; d0_ < (D); d0_ += TD) {                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    for (int e_ = lid; e_ < BR * TD; e_ += WGS) {                                              \
      const int r_ = e_ / TD, d_ = e_ - r_ * TD;                                               \
      Rt[d_ * RT_LD + r_] = r_ < (nr) && d0_ + d_ < (D)                                        \
                                ? (rmul) * (float)LOAD(T, R, (rb) + r_ * (rs) + d0_ + d_)      \
                                : 0.0f;                                                        \
    }                                                                                          \
    for (int e_ = lid; e_ < BC * TD; e_ += WGS) {                                              \
      const int c_ = e_ / TD, d_ = e_ - c_ * TD;                                               \
      Ct[d_ * CT_LD + c_] =                                                                    \
          c_ < (nc) && d0_ + d_ < (D) ? (float)LOAD(T, C, (cb) + c_ * (cs) + d0_ + d_) : 0.0f; \
    }                                                                                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    for (int d_ = 0; d_ < TD; ++d_) {                                                          \
      float a_[PR], b_[PC];                                                                    \
      UNROLL for (int i_ = 0; i_ < PR; ++i_) a_[i_] = Rt[d_ * RT_LD + ly + i_ * WG_R];         \
      UNROLL for (int j_ = 0; j_ < PC; ++j_) b_[j_] = Ct[d_ * CT_LD + lx + j_ * WG_C];         \
      UNROLL for (int i_ = 0; i_ < PR; ++i_) {                                                 \
        UNROLL for (int j_ = 0; j_ < PC; ++j_)(acc)[i_][j_] = a_[i_] * b_[j_] + (acc)[i_][j_]; \
      }                                                                                        \
    }                                                                                          \
  }

// acc[i][c] += sum_{j < BC} Wt[j][ly + i*WG_R] * X[xb + j * xs + lx + c*WG_C] for the nx valid
// rows of X (others load 0) and lx + c*WG_C < D (NC = ceil(D / WG_C) columns per work-item),
// TD rows of X at a time through the local tile Xt[TD][XT_LD]. Wt must have been written before
// (the first barrier here publishes it). Every work-item of the group must call it.
#define BLOCK_AXPY(acc, NC, D, X, xb, xs, nx)                                                    \
  for (int j0_ = 0; j0_ < BC; j0_ += TD) {                                                       \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                \
    for (int e_ = lid; e_ < TD * (NC)*WG_C; e_ += WGS) {                                         \
      const int j_ = e_ / ((NC)*WG_C), d_ = e_ - j_ * ((NC)*WG_C);                               \
      Xt[j_ * XT_LD + d_] =                                                                      \
          j0_ + j_ < (nx) && d_ < (D) ? (float)LOAD(T, X, (xb) + (j0_ + j_) * (xs) + d_) : 0.0f; \
    }                                                                                            \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                \
    for (int j_ = 0; j_ < TD && j0_ + j_ < BC; ++j_) {                                           \
      float w_[PR], x_[NC];                                                                      \
      UNROLL for (int i_ = 0; i_ < PR; ++i_) w_[i_] = Wt[(j0_ + j_) * RT_LD + ly + i_ * WG_R];   \
      UNROLL for (int c_ = 0; c_ < (NC); ++c_) x_[c_] = Xt[j_ * XT_LD + lx + c_ * WG_C];         \
      UNROLL for (int i_ = 0; i_ < PR; ++i_) {                                                   \
        UNROLL for (int c_ = 0; c_ < (NC); ++c_)(acc)[i_][c_] = w_[i_] * x_[c_] + (acc)[i_][c_]; \
      }                                                                                          \
    }                                                                                            \
  }

// The local arrays of a kernel: the tiles and Xt (one region), Wt, red, and two statistics
// rows (lse and delta of the streamed query rows in flash_bwd_dkv).
#define LOCAL_ARRAYS                             \
  __local float lm[LOCAL_FLOATS];                \
  __local float* const Rt = lm;                  \
  __local float* const Ct = lm + TD * RT_LD;     \
  __local float* const Xt = lm;                  \
  __local float* const Wt = lm + TILES_FLOATS;   \
  __local float* const red = Wt + BC * RT_LD;    \
  __local float* const stat_a = red + BR * WG_C; \
  __local float* const stat_b = stat_a + BC;     \
  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1), lid = ly * WG_C + lx

__kernel __attribute__((reqd_work_group_size(WG_C, WG_R, 1))) void flash_fwd(
    TENSOR(q), TENSOR(k), TENSOR(v), __global STORE_TYPE(T)* o, ulong o_off, long o_sb, long o_sh,
    long o_sl, __global float* lse, ulong lse_off, MASK_ARGS, TAIL_ARGS) {
  LOCAL_ARRAYS;
  (void)stat_a;
  (void)stat_b;
  const long bh = get_group_id(1), b = bh / H, h = bh - b * H, hk = h / GROUP;
  const long q0 = (long)get_group_id(0) * BR;
  const ulong qb = q_off + b * q_sb + h * q_sh + q0 * q_sl;
  const ulong kb = k_off + b * k_sb + hk * k_sh, vb = v_off + b * v_sb + hk * v_sh;
  const ulong S4 = (ulong)((S + 3) / 4);
  const long nq = min((long)BR, L - q0);

  float acc[PR][NVC], m[PR], lp[PR];
  for (int i = 0; i < PR; ++i) {
    for (int c = 0; c < NVC; ++c) acc[i][c] = 0.0f;
    m[i] = -INFINITY;
    lp[i] = 0.0f;
  }
  // Causal: keys after the block's last query row are hidden from every row of the block.
  const long kend = causal ? min(S, q0 + BR) : S;
  for (long c0 = 0; c0 < kend; c0 += BC) {
    const long nk = min((long)BC, kend - c0);
    float s[PR][PC];
    for (int i = 0; i < PR; ++i)
      for (int j = 0; j < PC; ++j) s[i][j] = 0.0f;
    BLOCK_DOTS(s, DQK, q, qb, q_sl, nq, scale, k, kb + c0 * k_sl, k_sl, nk)
    // Masks, and each work-item's part of the block's row max.
    for (int i = 0; i < PR; ++i) {
      const long row = q0 + ly + i * WG_R;
      const ulong mb = m_off + b * m_sb + h * m_sh + row * m_sl;
      float pm = -INFINITY;
      for (int j = 0; j < PC; ++j) {
        const long col = c0 + lx + j * WG_C;
        if (col >= kend || (causal && col > row)) {
          s[i][j] = -INFINITY;
        } else if (has_mask && row < L) {
          s[i][j] += (float)LOAD(M_T, mask, mb + col * m_ss);
        }
        pm = fmax(pm, s[i][j]);
      }
      red[(ly + i * WG_R) * WG_C + lx] = pm;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Online softmax, as kernels/attention.cl: rows whose scores are all -inf so far keep
    // m = -inf and add nothing (mu = 0); a NaN score is skipped by fmax but makes p NaN.
    for (int i = 0; i < PR; ++i) {
      const long row = q0 + ly + i * WG_R;
      float mt = m[i];
      for (int t = 0; t < WG_C; ++t) mt = fmax(mt, red[(ly + i * WG_R) * WG_C + t]);
      const float mu = mt == -INFINITY ? 0.0f : mt;
      const float alpha = exp(m[i] - mu);
      float sum = 0.0f;
      for (int j = 0; j < PC; ++j) {
        const long col = c0 + lx + j * WG_C;
        float p = exp(s[i][j] - mu);
        sum += p;
        if (drop_thresh && row < L && col < kend)
          p *=
              flash_keep(base, (ulong)(bh * L + row), S4, col, key0, key1, drop_thresh, drop_scale);
        Wt[(lx + j * WG_C) * RT_LD + ly + i * WG_R] = p;
      }
      lp[i] = lp[i] * alpha + sum;
      m[i] = mt;
      for (int c = 0; c < NVC; ++c) acc[i][c] *= alpha;
    }
    BLOCK_AXPY(acc, NVC, DV, v, vb + c0 * v_sl, v_sl, nk)
  }
  // The row sums: the parts of the WG_C work-items of each row.
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < PR; ++i) red[(ly + i * WG_R) * WG_C + lx] = lp[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < PR; ++i) {
    const long row = q0 + ly + i * WG_R;
    if (row >= L) break;
    float l = 0.0f;
    for (int t = 0; t < WG_C; ++t) l += red[(ly + i * WG_R) * WG_C + t];
    const float inv = l == 0.0f ? 0.0f : 1.0f / l;
    const ulong ob = o_off + b * o_sb + h * o_sh + row * o_sl;
    for (int c = 0; c < NVC; ++c) {
      const int d = lx + c * WG_C;
      if (d < DV) STORE(T, o, ob + d, CONVERT(T, acc[i][c] * inv));
    }
    if (lx == 0) lse[lse_off + bh * L + row] = l == 0.0f ? INFINITY : m[i] + log(l);
  }
}

__kernel void flash_bwd_delta(TENSOR(g), TENSOR(o), __global float* delta, ulong delta_off, long H,
                              long L, long rows) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  const long bh = r / L, i = r - bh * L, b = bh / H, h = bh - b * H;
  const ulong gb = g_off + b * g_sb + h * g_sh + i * g_sl;
  const ulong ob = o_off + b * o_sb + h * o_sh + i * o_sl;
  float acc = 0.0f;
  for (int d = 0; d < DV; ++d) acc += (float)LOAD(T, g, gb + d) * (float)LOAD(T, o, ob + d);
  delta[delta_off + r] = acc;
}

__kernel __attribute__((reqd_work_group_size(WG_C, WG_R, 1))) void flash_bwd_dq(
    TENSOR(q), TENSOR(k), TENSOR(v), TENSOR(g), __global STORE_TYPE(T)* dq, ulong dq_off,
    long dq_sb, long dq_sh, long dq_sl, __global float* ds_out, ulong ds_off, int has_ds,
    __global const float* lse, ulong lse_off, __global const float* delta, ulong delta_off,
    MASK_ARGS, TAIL_ARGS) {
  LOCAL_ARRAYS;
  (void)red;
  (void)stat_a;
  (void)stat_b;
  const long bh = get_group_id(1), b = bh / H, h = bh - b * H, hk = h / GROUP;
  const long q0 = (long)get_group_id(0) * BR;
  const ulong qb = q_off + b * q_sb + h * q_sh + q0 * q_sl;
  const ulong gb = g_off + b * g_sb + h * g_sh + q0 * g_sl;
  const ulong kb = k_off + b * k_sb + hk * k_sh, vb = v_off + b * v_sb + hk * v_sh;
  const ulong S4 = (ulong)((S + 3) / 4);
  const long nq = min((long)BR, L - q0);

  float acc[PR][NQC], lse_r[PR], delta_r[PR];
  for (int i = 0; i < PR; ++i) {
    const long row = q0 + ly + i * WG_R;
    for (int c = 0; c < NQC; ++c) acc[i][c] = 0.0f;
    lse_r[i] = row < L ? lse[lse_off + bh * L + row] : INFINITY;
    delta_r[i] = row < L ? delta[delta_off + bh * L + row] : 0.0f;
  }
  const long kend = causal ? min(S, q0 + BR) : S;
  for (long c0 = 0; c0 < kend; c0 += BC) {
    const long nk = min((long)BC, kend - c0);
    float s[PR][PC], dp[PR][PC];
    for (int i = 0; i < PR; ++i)
      for (int j = 0; j < PC; ++j) s[i][j] = dp[i][j] = 0.0f;
    BLOCK_DOTS(s, DQK, q, qb, q_sl, nq, scale, k, kb + c0 * k_sl, k_sl, nk)
    BLOCK_DOTS(dp, DV, g, gb, g_sl, nq, 1.0f, v, vb + c0 * v_sl, v_sl, nk)
    // dS = P * (Z * dP - delta), P = exp(s - lse): the weights of dQ += dS K.
    for (int i = 0; i < PR; ++i) {
      const long row = q0 + ly + i * WG_R;
      const ulong mb = m_off + b * m_sb + h * m_sh + row * m_sl;
      for (int j = 0; j < PC; ++j) {
        const long col = c0 + lx + j * WG_C;
        float sc = s[i][j], z = 1.0f;
        if (col >= kend || (causal && col > row)) {
          sc = -INFINITY;
        } else if (row < L) {
          if (has_mask) sc += (float)LOAD(M_T, mask, mb + col * m_ss);
          if (drop_thresh)
            z = flash_keep(base, (ulong)(bh * L + row), S4, col, key0, key1, drop_thresh,
                           drop_scale);
        }
        const float ds = exp(sc - lse_r[i]) * (dp[i][j] * z - delta_r[i]);
        if (has_ds && row < L && col < kend) ds_out[ds_off + (bh * L + row) * S + col] = ds;
        Wt[(lx + j * WG_C) * RT_LD + ly + i * WG_R] = ds;
      }
    }
    BLOCK_AXPY(acc, NQC, DQK, k, kb + c0 * k_sl, k_sl, nk)
  }
  for (int i = 0; i < PR; ++i) {
    const long row = q0 + ly + i * WG_R;
    if (row >= L) break;
    if (has_ds) {  // keys after the causal range
      for (long col = kend + lx; col < S; col += WG_C)
        ds_out[ds_off + (bh * L + row) * S + col] = 0.0f;
    }
    const ulong ob = dq_off + b * dq_sb + h * dq_sh + row * dq_sl;
    for (int c = 0; c < NQC; ++c) {
      const int d = lx + c * WG_C;
      if (d < DQK) STORE(T, dq, ob + d, CONVERT(T, scale * acc[i][c]));
    }
  }
}

__kernel __attribute__((reqd_work_group_size(WG_C, WG_R, 1))) void flash_bwd_dkv(
    TENSOR(q), TENSOR(k), TENSOR(v), TENSOR(g), __global STORE_TYPE(T)* dk, ulong dk_off,
    long dk_sb, long dk_sh, long dk_sl, __global STORE_TYPE(T)* dv, ulong dv_off, long dv_sb,
    long dv_sh, long dv_sl, __global const float* lse, ulong lse_off, __global const float* delta,
    ulong delta_off, MASK_ARGS, TAIL_ARGS) {
  LOCAL_ARRAYS;
  (void)red;
  const long HK = H / GROUP;
  const long bhk = get_group_id(1), b = bhk / HK, hk = bhk - b * HK;
  const long k0 = (long)get_group_id(0) * BR;  // this group's key rows
  const ulong kb = k_off + b * k_sb + hk * k_sh + k0 * k_sl;
  const ulong vb = v_off + b * v_sb + hk * v_sh + k0 * v_sl;
  const ulong S4 = (ulong)((S + 3) / 4);
  const long nkr = min((long)BR, S - k0);

  float dka[PR][NQC], dva[PR][NVC];
  for (int i = 0; i < PR; ++i) {
    for (int c = 0; c < NQC; ++c) dka[i][c] = 0.0f;
    for (int c = 0; c < NVC; ++c) dva[i][c] = 0.0f;
  }
  // Causal: query rows before the group's first key see none of its keys.
  const long istart = causal ? min(k0, L) : 0;
  for (long h = hk * GROUP; h < (hk + 1) * GROUP; ++h) {
    const long bh = b * H + h;
    const ulong qb = q_off + b * q_sb + h * q_sh, gb = g_off + b * g_sb + h * g_sh;
    for (long c0 = istart; c0 < L; c0 += BC) {
      const long nq = min((long)BC, L - c0);
      // The streamed rows' statistics (published by BLOCK_DOTS's first barrier; the previous
      // step's readers are past BLOCK_AXPY's barriers).
      for (int e = lid; e < BC; e += WGS) {
        stat_a[e] = e < nq ? lse[lse_off + bh * L + c0 + e] : INFINITY;
        stat_b[e] = e < nq ? delta[delta_off + bh * L + c0 + e] : 0.0f;
      }
      // Transposed scores: st[i][j] for key k0 + ly + i*WG_R and query row c0 + lx + j*WG_C.
      float st[PR][PC], dpt[PR][PC];
      for (int i = 0; i < PR; ++i)
        for (int j = 0; j < PC; ++j) st[i][j] = dpt[i][j] = 0.0f;
      BLOCK_DOTS(st, DQK, k, kb, k_sl, nkr, 1.0f, q, qb + c0 * q_sl, q_sl, nq)
      BLOCK_DOTS(dpt, DV, v, vb, v_sl, nkr, 1.0f, g, gb + c0 * g_sl, g_sl, nq)
      // st becomes Z * P (the weights of dV), dpt dS = P * (Z * dP - delta) (of dK).
      for (int i = 0; i < PR; ++i) {
        const long key = k0 + ly + i * WG_R;
        for (int j = 0; j < PC; ++j) {
          const int jl = lx + j * WG_C;
          const long row = c0 + jl;
          float sc = scale * st[i][j], z = 1.0f;
          if (jl >= nq || key >= S || (causal && key > row)) {
            sc = -INFINITY;
          } else {
            if (has_mask)
              sc += (float)LOAD(M_T, mask, m_off + b * m_sb + h * m_sh + row * m_sl + key * m_ss);
            if (drop_thresh)
              z = flash_keep(base, (ulong)(bh * L + row), S4, key, key0, key1, drop_thresh,
                             drop_scale);
          }
          const float p = exp(sc - stat_a[jl]);
          dpt[i][j] = p * (dpt[i][j] * z - stat_b[jl]);
          st[i][j] = p * z;
          Wt[jl * RT_LD + ly + i * WG_R] = st[i][j];
        }
      }
      BLOCK_AXPY(dva, NVC, DV, g, gb + c0 * g_sl, g_sl, nq)
      barrier(CLK_LOCAL_MEM_FENCE);  // every work-item is done with Wt
      for (int i = 0; i < PR; ++i)
        for (int j = 0; j < PC; ++j) Wt[(lx + j * WG_C) * RT_LD + ly + i * WG_R] = dpt[i][j];
      BLOCK_AXPY(dka, NQC, DQK, q, qb + c0 * q_sl, q_sl, nq)
    }
  }
  for (int i = 0; i < PR; ++i) {
    const long key = k0 + ly + i * WG_R;
    if (key >= S) break;
    const ulong kob = dk_off + b * dk_sb + hk * dk_sh + key * dk_sl;
    const ulong vob = dv_off + b * dv_sb + hk * dv_sh + key * dv_sl;
    for (int c = 0; c < NQC; ++c) {
      const int d = lx + c * WG_C;
      if (d < DQK) STORE(T, dk, kob + d, CONVERT(T, scale * dka[i][c]));
    }
    for (int c = 0; c < NVC; ++c) {
      const int d = lx + c * WG_C;
      if (d < DV) STORE(T, dv, vob + d, CONVERT(T, dva[i][c]));
    }
  }
}
