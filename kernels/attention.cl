// attention: fused scaled-dot-product attention (flash-attention style), forward and backward.
//
// Shapes. Queries are [B, H, L, DQK], keys [B, HK, S, DQK], values [B, HK, S, DV], the output
// and its gradient [B, H, L, DV]; query head h reads key/value head h / GROUP (GROUP = H / HK:
// grouped-query attention, HK = H for plain attention, HK = 1 for keys shared by every head).
// Every tensor is passed as (buffer, offset, stride_b, stride_h, stride_l) in elements, with its
// last dimension contiguous. The rows r = (b * H + h) * L + i of the statistics (lse, delta)
// are contiguous float arrays of B * H * L values.
//
// Scores. s_ij = scale * (q_i . k_j) + mask_ij, -inf where causal masking hides key j from
// query i (j > i: ATen's top-left aligned tril mask). The additive mask (has_mask) is read at
// m_off + b * m_sb + h * m_sh + i * m_sl + j * m_ss (stride 0 for a broadcast dim).
// P = softmax_j(s) computed in float; a row whose scores are all -inf (every key masked) gives
// P = 0, an output of 0 and lse = +inf (CPU torch's _safe_softmax gives the same zeros); a NaN
// score makes its row NaN.
//
// Dropout (drop_thresh > 0): element (r, j) is dropped when the top 24 bits of Philox word
// (j % 4) of counter base + r * ceil(S / 4) + j / 4 (key {key0, key1}) are < drop_thresh; kept
// elements are scaled by drop_scale = 1 / (1 - p). The host reserves B * H * L * ceil(S / 4)
// counters and the backward kernels regenerate the same mask from the same (key, base).
//
// attn_fwd: O = dropout(P) V, lse_r = m_r + log(l_r) (row max and sum of exp(s - max)).
//   Launch: global = {ceil(L / LWS) * LWS, B * H}, local = {LWS, 1}. A work-group takes LWS
//   query rows (one per work-item) of one (b, h) and streams keys and values through local
//   memory in tiles of BT rows, with an online softmax (running max m, sum l, accumulator).
// attn_bwd_delta: delta_r = dO_r . O_r (float).  Launch: global = {ceil(B*H*L / LWS) * LWS}.
// attn_bwd_dq: per query row, recomputes P_ij = exp(s_ij - lse_r) and
//   dS_ij = P_ij * (Z_ij * (dO_i . v_j) - delta_r) (Z: 0 or drop_scale), dQ_i = scale *
//   sum_j dS_ij k_j; with has_ds also writes dS (float, [B, H, L, S] contiguous: the gradient of
//   the additive mask before the host sums it to the mask's shape). Launch as attn_fwd.
// attn_bwd_dkv: per key row j of head hk, over the GROUP query heads of hk and all query rows:
//   dV_j = sum Z_ij P_ij dO_i, dK_j = scale * sum dS_ij q_i.
//   Launch: global = {ceil(S / LWS) * LWS, B * HK}, local = {LWS, 1}; query rows, dO, lse and
//   delta stream through local memory in tiles of BT rows.
//
// Build options: -DT=<float|half|bfloat16> (q, k, v, out, grads), -DM_T=<tag> (mask; default T),
// -DDQK=<n> -DDV=<n> (head dims), -DBT=<rows per tile, a multiple of 4>, -DLWS=<work-group
// size> (enforced with reqd_work_group_size). Local memory: BT * (DQK + DV + 2) floats.
// Accumulation is in float for every T.

#ifndef M_T
#define M_T T
#endif

#define TENSOR(name)                                                                 \
  __global const STORE_TYPE(T)* name, ulong name##_off, long name##_sb, long name##_sh, \
      long name##_sl

// NaN-propagating max (a NaN score makes the row NaN, as softmax does on the CPU).
inline float max_nan(float a, float b) { return (isnan(a) || a >= b) ? a : b; }

// The four Philox words of dropout counter ctr.
inline uint4 drop_words(ulong ctr, uint key0, uint key1) {
  uint x0, x1, x2, x3;
  PHILOX4X32_10(ctr, key0, key1, x0, x1, x2, x3);
  return (uint4)(x0, x1, x2, x3);
}

// Z_ij for Philox word w: 0 (dropped) or drop_scale.
inline float keep_scale(uint w, uint drop_thresh, float drop_scale) {
  return (w >> 8) < drop_thresh ? 0.0f : drop_scale;
}

// Copies rows [r0, r0 + n) (n <= BT) of a [rows, D] slab with row stride sl into tile[BT * D]
// (rows beyond n are zero), times mul.
#define LOAD_TILE(tile, D, src, base, sl, r0, n, mul)                   \
  for (int e_ = (int)get_local_id(0); e_ < BT * (D); e_ += LWS) {        \
    const int rr_ = e_ / (D), dd_ = e_ - rr_ * (D);                      \
    (tile)[e_] = rr_ < (n) ? (mul) * (float)LOAD(T, src, (base) + ((r0) + rr_) * (sl) + dd_) \
                           : 0.0f;                                       \
  }

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void attn_fwd(
    TENSOR(q), TENSOR(k), TENSOR(v), __global STORE_TYPE(T)* o, ulong o_off, long o_sb, long o_sh,
    long o_sl, __global float* lse, ulong lse_off, __global const STORE_TYPE(M_T)* mask, ulong m_off, long m_sb,
    long m_sh, long m_sl, long m_ss, int has_mask, int causal, long H, long GROUP, long L, long S,
    float scale, uint drop_thresh, float drop_scale, uint key0, uint key1, ulong base) {
  __local float ks[BT * DQK];
  __local float vs[BT * DV];
  const int lid = (int)get_local_id(0);
  const long bh = get_group_id(1), b = bh / H, h = bh - b * H, hk = h / GROUP;
  const long i0 = (long)get_group_id(0) * LWS, i = i0 + lid;
  const int live = i < L;
  const long row = bh * L + i;
  const ulong kb = k_off + b * k_sb + hk * k_sh, vb = v_off + b * v_sb + hk * v_sh;
  const ulong mb = m_off + b * m_sb + h * m_sh + i * m_sl;
  const ulong drow = base + (ulong)row * (ulong)((S + 3) / 4);

  float qr[DQK], acc[DV];
  for (int d = 0; d < DQK; ++d)
    qr[d] = live ? scale * (float)LOAD(T, q, q_off + b * q_sb + h * q_sh + i * q_sl + d) : 0.0f;
  for (int d = 0; d < DV; ++d) acc[d] = 0.0f;
  float m = -INFINITY, l = 0.0f;

  const long kend = causal ? min(S, i0 + LWS) : S;
  for (long j0 = 0; j0 < kend; j0 += BT) {
    const int n = (int)min((long)BT, kend - j0);
    barrier(CLK_LOCAL_MEM_FENCE);
    LOAD_TILE(ks, DQK, k, kb, k_sl, j0, n, 1.0f)
    LOAD_TILE(vs, DV, v, vb, v_sl, j0, n, 1.0f)
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!live) continue;
    float s[BT];
    float mt = m;
    for (int jj = 0; jj < BT; ++jj) {
      const long j = j0 + jj;
      float x = -INFINITY;
      if (jj < n && !(causal && j > i)) {
        x = 0.0f;
        for (int d = 0; d < DQK; ++d) x += qr[d] * ks[jj * DQK + d];
        if (has_mask) x += (float)LOAD(M_T, mask, mb + j * m_ss);
      }
      s[jj] = x;
      mt = max_nan(mt, x);
    }
    // Rows with every score so far -inf keep m = -inf and contribute nothing (mu = 0 makes
    // exp(-inf - mu) = 0 instead of NaN).
    const float mu = mt == -INFINITY ? 0.0f : mt;
    const float alpha = exp(m - mu);
    l *= alpha;
    for (int d = 0; d < DV; ++d) acc[d] *= alpha;
    for (int jq = 0; jq < BT; jq += 4) {
      uint4 w = (uint4)(0u);
      if (drop_thresh) w = drop_words(drow + (ulong)((j0 + jq) / 4), key0, key1);
      const uint ws[4] = {w.x, w.y, w.z, w.w};
      for (int t = 0; t < 4; ++t) {
        float p = exp(s[jq + t] - mu);
        l += p;
        if (drop_thresh) p *= keep_scale(ws[t], drop_thresh, drop_scale);
        for (int d = 0; d < DV; ++d) acc[d] += p * vs[(jq + t) * DV + d];
      }
    }
    m = mt;
  }
  if (!live) return;
  const float inv = l == 0.0f ? 0.0f : 1.0f / l;
  const ulong ob = o_off + b * o_sb + h * o_sh + i * o_sl;
  for (int d = 0; d < DV; ++d) STORE(T, o, ob + d, CONVERT(T, acc[d] * inv));
  lse[lse_off + row] = l == 0.0f ? INFINITY : m + log(l);
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
    __global const STORE_TYPE(M_T)* mask,
    ulong m_off, long m_sb, long m_sh, long m_sl, long m_ss, int has_mask, int causal, long H,
    long GROUP, long L, long S, float scale, uint drop_thresh, float drop_scale, uint key0,
    uint key1, ulong base) {
  __local float ks[BT * DQK];
  __local float vs[BT * DV];
  const int lid = (int)get_local_id(0);
  const long bh = get_group_id(1), b = bh / H, h = bh - b * H, hk = h / GROUP;
  const long i0 = (long)get_group_id(0) * LWS, i = i0 + lid;
  const int live = i < L;
  const long row = bh * L + i;
  const ulong kb = k_off + b * k_sb + hk * k_sh, vb = v_off + b * v_sb + hk * v_sh;
  const ulong mb = m_off + b * m_sb + h * m_sh + i * m_sl;
  const ulong drow = base + (ulong)row * (ulong)((S + 3) / 4);

  float qr[DQK], gr[DV], acc[DQK];
  const ulong qb = q_off + b * q_sb + h * q_sh + i * q_sl;
  const ulong gb = g_off + b * g_sb + h * g_sh + i * g_sl;
  for (int d = 0; d < DQK; ++d) {
    qr[d] = live ? scale * (float)LOAD(T, q, qb + d) : 0.0f;
    acc[d] = 0.0f;
  }
  for (int d = 0; d < DV; ++d) gr[d] = live ? (float)LOAD(T, g, gb + d) : 0.0f;
  const float lse_i = live ? lse[lse_off + row] : INFINITY;
  const float delta_i = live ? delta[delta_off + row] : 0.0f;

  const long kend = causal ? min(S, i0 + LWS) : S;
  for (long j0 = 0; j0 < kend; j0 += BT) {
    const int n = (int)min((long)BT, kend - j0);
    barrier(CLK_LOCAL_MEM_FENCE);
    LOAD_TILE(ks, DQK, k, kb, k_sl, j0, n, 1.0f)
    LOAD_TILE(vs, DV, v, vb, v_sl, j0, n, 1.0f)
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!live) continue;
    for (int jq = 0; jq < n; jq += 4) {
      uint4 w = (uint4)(0u);
      if (drop_thresh) w = drop_words(drow + (ulong)((j0 + jq) / 4), key0, key1);
      const uint ws[4] = {w.x, w.y, w.z, w.w};
      for (int t = 0; t < 4 && jq + t < n; ++t) {
        const int jj = jq + t;
        const long j = j0 + jj;
        float p = 0.0f;
        if (!(causal && j > i)) {
          float x = 0.0f;
          for (int d = 0; d < DQK; ++d) x += qr[d] * ks[jj * DQK + d];
          if (has_mask) x += (float)LOAD(M_T, mask, mb + j * m_ss);
          p = exp(x - lse_i);
        }
        float dp = 0.0f;
        for (int d = 0; d < DV; ++d) dp += gr[d] * vs[jj * DV + d];
        if (drop_thresh) dp *= keep_scale(ws[t], drop_thresh, drop_scale);
        const float ds = p * (dp - delta_i);
        if (has_ds) ds_out[ds_off + row * S + j] = ds;
        for (int d = 0; d < DQK; ++d) acc[d] += ds * ks[jj * DQK + d];
      }
    }
  }
  if (!live) return;
  if (has_ds) {  // keys after the causal range (never with a mask, but keep dS complete)
    for (long j = kend; j < S; ++j) ds_out[ds_off + row * S + j] = 0.0f;
  }
  const ulong ob = dq_off + b * dq_sb + h * dq_sh + i * dq_sl;
  for (int d = 0; d < DQK; ++d) STORE(T, dq, ob + d, CONVERT(T, scale * acc[d]));
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void attn_bwd_dkv(
    TENSOR(q), TENSOR(k), TENSOR(v), TENSOR(g), __global STORE_TYPE(T)* dk, ulong dk_off,
    long dk_sb, long dk_sh, long dk_sl, __global STORE_TYPE(T)* dv, ulong dv_off, long dv_sb,
    long dv_sh, long dv_sl, __global const float* lse, ulong lse_off, __global const float* delta,
    ulong delta_off, __global const STORE_TYPE(M_T)* mask, ulong m_off, long m_sb, long m_sh, long m_sl, long m_ss,
    int has_mask, int causal, long H, long GROUP, long L, long S, float scale, uint drop_thresh,
    float drop_scale, uint key0, uint key1, ulong base) {
  __local float qs[BT * DQK];
  __local float gs[BT * DV];
  __local float lse_s[BT];
  __local float delta_s[BT];
  const int lid = (int)get_local_id(0);
  const long HK = H / GROUP;
  const long bhk = get_group_id(1), b = bhk / HK, hk = bhk - b * HK;
  const long j0 = (long)get_group_id(0) * LWS, j = j0 + lid;
  const int live = j < S;
  const ulong S4 = (ulong)((S + 3) / 4);

  float kr[DQK], vr[DV], dka[DQK], dva[DV];
  const ulong kb = k_off + b * k_sb + hk * k_sh + j * k_sl;
  const ulong vb = v_off + b * v_sb + hk * v_sh + j * v_sl;
  for (int d = 0; d < DQK; ++d) {
    kr[d] = live ? (float)LOAD(T, k, kb + d) : 0.0f;
    dka[d] = 0.0f;
  }
  for (int d = 0; d < DV; ++d) {
    vr[d] = live ? (float)LOAD(T, v, vb + d) : 0.0f;
    dva[d] = 0.0f;
  }

  // With causal masking, query rows before the group's first key see none of its keys.
  const long istart = causal ? min(j0, L) : 0;
  for (long h = hk * GROUP; h < (hk + 1) * GROUP; ++h) {
    const long bh = b * H + h;
    const ulong qb = q_off + b * q_sb + h * q_sh, gb = g_off + b * g_sb + h * g_sh;
    const ulong mb = m_off + b * m_sb + h * m_sh + j * m_ss;
    for (long r0 = istart; r0 < L; r0 += BT) {
      const int n = (int)min((long)BT, L - r0);
      barrier(CLK_LOCAL_MEM_FENCE);
      LOAD_TILE(qs, DQK, q, qb, q_sl, r0, n, scale)
      LOAD_TILE(gs, DV, g, gb, g_sl, r0, n, 1.0f)
      if (lid < BT) {
        lse_s[lid] = lid < n ? lse[lse_off + bh * L + r0 + lid] : INFINITY;
        delta_s[lid] = lid < n ? delta[delta_off + bh * L + r0 + lid] : 0.0f;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (!live) continue;
      for (int ii = 0; ii < n; ++ii) {
        const long i = r0 + ii;
        if (causal && j > i) continue;
        float x = 0.0f;
        for (int d = 0; d < DQK; ++d) x += qs[ii * DQK + d] * kr[d];
        if (has_mask) x += (float)LOAD(M_T, mask, mb + i * m_sl);
        const float p = exp(x - lse_s[ii]);
        float z = 1.0f;
        if (drop_thresh) {
          const uint4 w = drop_words(base + (ulong)(bh * L + i) * S4 + (ulong)(j / 4), key0, key1);
          const int t = (int)(j & 3);
          z = keep_scale(t == 0 ? w.x : t == 1 ? w.y : t == 2 ? w.z : w.w, drop_thresh,
                         drop_scale);
        }
        float dp = 0.0f;
        for (int d = 0; d < DV; ++d) dp += gs[ii * DV + d] * vr[d];
        const float pz = p * z;
        const float ds = p * (dp * z - delta_s[ii]);
        for (int d = 0; d < DV; ++d) dva[d] += pz * gs[ii * DV + d];
        for (int d = 0; d < DQK; ++d) dka[d] += ds * qs[ii * DQK + d];
      }
    }
  }
  if (!live) return;
  const ulong kob = dk_off + b * dk_sb + hk * dk_sh + j * dk_sl;
  const ulong vob = dv_off + b * dv_sb + hk * dv_sh + j * dv_sl;
  for (int d = 0; d < DQK; ++d) STORE(T, dk, kob + d, CONVERT(T, dka[d]));
  for (int d = 0; d < DV; ++d) STORE(T, dv, vob + d, CONVERT(T, dva[d]));
}
