// Batch, layer, group and RMS normalisation, forward and backward, over tensors viewed as
// [N, C, S] with element strides (each tensor its own: x, y, dy, dx).
//
// Statistics rows: with per_channel != 0 (batch norm) row c holds the elements (n, c, s) for all
// n, s; otherwise (layer, group, RMS norm) C splits into G groups of CG = C / G channels and row
// n*G + g holds (n, c, s) for c in [g*CG, (g+1)*CG) and all s (layer norm is the view
// [rows, K, 1] with G = 1). The statistics of an element (n, c, s) live at
// statrow = per_channel ? c : n*G + c/CG.
//
// Build options: -DX_T=<tag> (x, y, dy, dx)  -DACC_T=<float|double> (sums; double only for double
//   data)  -DSTAT_T=<tag> (mean and rstd buffers read by apply/sums/dx: the statistics' dtype)
//   -DW_T=<tag> (weight and bias) [-DHAS_W] [-DHAS_B]
//   [-DRMS] no mean: xhat = x * rstd (RMS norm)
//   [-DVAR_IN] the rstd buffer holds a variance; rstd = 1 / sqrt(var + eps) (batch norm in eval
//     mode reading running_var)
//   [-DRUNNING -DRUN_T=<tag>] norm_stats also updates running_mean / running_var (batch norm)
// Launch: norm_stats and norm_sums: global = {rows*GS*LWS}, local = {LWS}: work-group r*GS + g
//   takes part g of row r's chunks (below: CHUNK_RANGE_BEGIN; GS = 1, qchunk = all the row's
//   chunks: one group per row; GS > 1 when the rows are too few to fill the device);
//   norm_apply and norm_dx (argument spt after the shape): 3-d, work-item (j, c, n) normalises
//   s in [j*spt, (j+1)*spt) of row (n, c): global = {ceil(S/spt) and C rounded up to the local
//   size, N}, any local size {L0, L1, 1} (the host's enqueue_grid; spt = the device's
//   stream_chunk: 64 on CPU devices, 1 on GPUs). No index division per element: on CPU devices a
//   64-bit division and a work-item per element cost more than the normalisation itself.
//
// norm_stats(N, C, S, G, per_channel, spt, eps, x, mean, rstd, GS, qchunk, npart[, momentum,
//   running_mean, running_var]):
//   two passes in ACC: mean, then the biased variance; rstd = 1 / sqrt(var + eps); mean and rstd
//   are ACC buffers (index = statrow). RMS: mean = 0 and var = mean(x^2). RUNNING:
//   running_mean = momentum*mean + (1-momentum)*running_mean, running_var likewise with the
//   unbiased variance (sum of squares / (count - 1)). GS > 1: work-group r*GS + g writes its part's
//   mean to mean[r*GS + g], its sum of squared deviations to rstd[..] and its count to npart[..]
//   (offsets added), and norm_stats_merge(GS, eps, those three, mean, rstd[, running]) - one
//   work-group per row - merges them (Chan et al.'s pairwise formula) and finishes as above.
// norm_apply(N, C, S, G, per_channel, spt, eps, x, mean, rstd, w, b, y):
//   y = (x - mean) * rstd * w[c] + b[c].
// norm_sums(N, C, S, G, per_channel, spt, by_channel, eps, x, dy, mean, rstd, w, A, B, GS,
//   qchunk): per row (by_channel: row c over all (n, s); else the statistics rows)
//   A = sum(w[c]*dy), B = sum(w[c]*dy*xhat) in ACC buffers (w = 1 without HAS_W); GS > 1: the
//   part sums at A[r*GS + g], B[r*GS + g], which the host adds up. norm_col_sums (at the end,
//   with -DTX): the same by-channel sums with the channels as the contiguous dim.
// norm_dx(N, C, S, G, per_channel, spt, use_sums, eps, x, dy, mean, rstd, w, A, B, dx) with
//   cnt = elements per statistics row:
//   per_channel (sums without w): dx = rstd * w[c] * (dy - A/cnt - xhat*B/cnt)
//   otherwise (sums with w):      dx = rstd * (w[c]*dy - A/cnt - xhat*B/cnt)  (RMS: no A term)
//   use_sums == 0:                dx = rstd * w[c] * dy (batch norm in eval mode)

#ifndef LWS
#define LWS 128
#endif

#ifndef STAT_T
#define STAT_T ACC_T
#endif
#ifndef W_T
#define W_T X_T
#endif

#define ACC REG_TYPE(ACC_T)
#define T3(type, p) __global type *p, ulong p##_off, long p##N, long p##C, long p##S
#define AT3(p, n, c, s) (p##_off + (n)*p##N + (c)*p##C + (s)*p##S)
#define SHAPE long N, long C, long S, long G, int per_channel

inline ACC group_sum(ACC v, __local ACC* scratch, uint lid) {
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = LWS / 2; h > 0; h >>= 1) {
    if (lid < h) scratch[lid] += scratch[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// The elements of a row, k = t*S + s for t in [0, cnt / S) and s in [0, S): element (n, c, s)
// with n = n0 + t*dn, c = c0 + t*dc, and its statistics row srow0 + t*dsrow. Channel rows
// (by_channel) span all n and s of channel r; group rows span the CG = C / G channels of group
// r - (r/G)*G of sample r/G. per_channel: the statistics are per channel (batch norm).
typedef struct {
  long n0, dn, c0, dc, srow0, dsrow;
} RowWalk;

inline RowWalk row_walk(long r, int by_channel, int per_channel, long C, long G) {
  RowWalk w;
  const long CG = C / G;
  if (by_channel) {
    w.n0 = 0;
    w.dn = 1;
    w.c0 = r;
    w.dc = 0;
    // per channel: row c; else sample t's group of channel r
    w.srow0 = per_channel ? r : r / CG;
    w.dsrow = per_channel ? 0 : G;
  } else {
    w.n0 = r / G;
    w.dn = 0;
    w.c0 = (r - w.n0 * G) * CG;
    w.dc = 1;
    w.srow0 = r;
    w.dsrow = 0;
  }
  return w;
}

// A work-item's walk over the row's (t, s) grid in chunks of spt consecutive s (of one t): chunk
// q = t*nsb + b (nsb = ceil(S / spt) chunks per t) covers s in [b*spt, min((b+1)*spt, S)), and
// the work-item takes q = q0 + lid, q0 + lid + LWS, ... < q1 (a work-group's share of the row's
// rows_t*nsb chunks: all of them, or one part of a split row). One division to start, then
// additions with a carry. spt = 1 (GPUs) visits single elements, neighbours in neighbouring
// work-items; CPU devices take runs (stream_chunk) that RUN_SUM adds with four partial sums.
#define CHUNK_RANGE_BEGIN(q0, q1, S, spt, lid, t, s0, s1)   \
  const long nsb_ = max(((long)(S) + (spt)-1) / (spt), 1L); \
  const ulong qs_ = (ulong)(q0) + (lid);                    \
  long t = (long)qs_ / nsb_;                                \
  long b_ = (long)qs_ - t * nsb_;                           \
  const long step_t_ = LWS / nsb_;                          \
  const long step_b_ = LWS - step_t_ * nsb_;                \
  for (ulong q_ = qs_; q_ < (ulong)(q1); q_ += LWS) {       \
    const long s0 = b_ * (spt), s1 = min(s0 + (spt), (long)(S));
#define CHUNK_LOOP_END(t) \
  b_ += step_b_;          \
  t += step_t_;           \
  if (b_ >= nsb_) {       \
    b_ -= nsb_;           \
    ++t;                  \
  }                       \
  }

// acc += F(k) summed over k in [s0, s1), in four partial sums (independent chains of additions).
#define RUN_SUM(acc, s0, s1, F)             \
  do {                                      \
    ACC p0_ = 0, p1_ = 0, p2_ = 0, p3_ = 0; \
    long k_ = (s0);                         \
    for (; k_ + 4 <= (s1); k_ += 4) {       \
      p0_ += F(k_);                         \
      p1_ += F(k_ + 1);                     \
      p2_ += F(k_ + 2);                     \
      p3_ += F(k_ + 3);                     \
    }                                       \
    for (; k_ < (s1); ++k_) p0_ += F(k_);   \
    (acc) += (p0_ + p1_) + (p2_ + p3_);     \
  } while (0)

inline long stat_row(long n, long c, long C, long G, int per_channel) {
  return per_channel ? c : n * G + c / (C / G);
}

inline ulong row_count(int by_channel, long N, long C, long S, long G) {
  return (ulong)(by_channel ? N : C / G) * (ulong)S;
}

// Elements in the first q chunks of a row (chunks as in CHUNK_RANGE_BEGIN).
inline ulong chunk_elems(ulong q, long S, int spt) {
  const ulong nsb = (ulong)max((S + spt - 1) / spt, 1L);
  const ulong t = q / nsb;
  return t * (ulong)S + min((q - t * nsb) * (ulong)spt, (ulong)S);
}

// The share [q0, q1) of a row's Q chunks that work-group g of GS takes (qchunk each).
inline void split_range(ulong Q, ulong g, ulong qchunk, ulong* q0, ulong* q1) {
  *q0 = min(Q, g * qchunk);
  *q1 = min(Q, *q0 + qchunk);
}

// (n, mean, M2) += (nb, mb, m2b): Chan et al.'s pairwise update of a count, a mean and a sum of
// squared deviations from it.
inline void chan_merge(ACC* n, ACC* mu, ACC* m2, ACC nb, ACC mb, ACC m2b) {
  if (nb == 0) return;
  const ACC na = *n, nt = na + nb, d = mb - *mu;
  *mu += d * (nb / nt);
  *m2 += m2b + d * d * (na * (nb / nt));
  *n = nt;
}

#ifdef RUNNING
#define RUNNING_PARAMS                                               \
  , ACC momentum, __global STORE_TYPE(RUN_T)*rmean, ulong rmean_off, \
      __global STORE_TYPE(RUN_T)*rvar, ulong rvar_off
#define RUNNING_ARGS , momentum, rmean, rmean_off, rvar, rvar_off
#else
#define RUNNING_PARAMS
#define RUNNING_ARGS
#endif

// Row r's statistics from its count, mean and sum of squared deviations: mean, rstd and (RUNNING)
// the running statistics with the unbiased variance.
inline void stats_store(long r, ACC cnt, ACC mu, ACC sq, ACC eps, __global ACC* mean,
                        ulong mean_off, __global ACC* rstd, ulong rstd_off RUNNING_PARAMS) {
  const ACC var = sq / cnt;
  mean[mean_off + r] = mu;
  rstd[rstd_off + r] = (ACC)1 / sqrt(var + eps);
#ifdef RUNNING
  const ACC unbiased = sq / (cnt - 1);
  const ACC rm = LOAD(RUN_T, rmean, rmean_off + r), rv = LOAD(RUN_T, rvar, rvar_off + r);
  STORE(RUN_T, rmean, rmean_off + r, CONVERT(RUN_T, momentum * mu + ((ACC)1 - momentum) * rm));
  STORE(RUN_T, rvar, rvar_off + r, CONVERT(RUN_T, momentum * unbiased + ((ACC)1 - momentum) * rv));
#endif
}

// mean and rstd of statistics row `row` as ACC.
inline ACC load_mean(__global const STORE_TYPE(STAT_T)* mean, ulong mean_off, long row) {
#ifdef RMS
  return 0;
#else
  return LOAD(STAT_T, mean, mean_off + row);
#endif
}
inline ACC load_rstd(__global const STORE_TYPE(STAT_T)* rstd, ulong rstd_off, long row, ACC eps) {
#ifdef VAR_IN
  return (ACC)1 / sqrt((ACC)LOAD(STAT_T, rstd, rstd_off + row) + eps);
#else
  return LOAD(STAT_T, rstd, rstd_off + row);
#endif
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void norm_stats(
    SHAPE, int spt, ACC eps, T3(const STORE_TYPE(X_T), x), __global ACC* mean, ulong mean_off,
    __global ACC* rstd, ulong rstd_off, ulong GS, ulong qchunk, __global ACC* npart,
    ulong npart_off RUNNING_PARAMS) {
  __local ACC scratch[LWS];
  const ulong grp = get_group_id(0);
  const long r = (long)(grp / GS);
  const uint lid = (uint)get_local_id(0);
  const RowWalk rw = row_walk(r, per_channel, per_channel, C, G);
  // element (t, s) of the row: x_row + t * x_t + s * xS
  const long x_row = x_off + rw.n0 * xN + rw.c0 * xC, x_t = rw.dn * xN + rw.dc * xC;
  const long rows_t = per_channel ? N : C / G;
  ulong q0, q1;
  split_range((ulong)rows_t * (ulong)max((S + spt - 1) / spt, 1L), grp - (ulong)r * GS, qchunk, &q0,
              &q1);
  const ulong cnt = chunk_elems(q1, S, spt) - chunk_elems(q0, S, spt);
  ACC mu = 0;
#define X_AT(k) ((ACC)LOAD(X_T, x, xb + (k)*xS))
#ifndef RMS
  ACC sum = 0;
  {
    CHUNK_RANGE_BEGIN(q0, q1, S, spt, lid, t, s0, s1)
    const long xb = x_row + t * x_t;
    RUN_SUM(sum, s0, s1, X_AT);
    CHUNK_LOOP_END(t)
  }
  mu = group_sum(sum, scratch, lid);
  if (cnt != 0) mu /= (ACC)cnt;
#endif
  ACC sq = 0;
  {
#define SQDEV_AT(k) ((X_AT(k) - mu) * (X_AT(k) - mu))
    CHUNK_RANGE_BEGIN(q0, q1, S, spt, lid, t, s0, s1)
    const long xb = x_row + t * x_t;
    RUN_SUM(sq, s0, s1, SQDEV_AT);
    CHUNK_LOOP_END(t)
#undef SQDEV_AT
  }
#undef X_AT
  sq = group_sum(sq, scratch, lid);
  if (lid != 0) return;
  if (GS == 1) {
    stats_store(r, (ACC)cnt, mu, sq, eps, mean, mean_off, rstd, rstd_off RUNNING_ARGS);
  } else {
    // A split row's part: its count, mean and sum of squared deviations, for norm_stats_merge.
    mean[mean_off + grp] = mu;
    rstd[rstd_off + grp] = sq;
    npart[npart_off + grp] = (ACC)cnt;
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void norm_stats_merge(
    ulong GS, ACC eps, __global const ACC* pmean, ulong pmean_off, __global const ACC* psq,
    ulong psq_off, __global const ACC* pn, ulong pn_off, __global ACC* mean, ulong mean_off,
    __global ACC* rstd, ulong rstd_off RUNNING_PARAMS) {
  __local ACC sn[LWS], smu[LWS], ssq[LWS];
  const long r = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  ACC n = 0, mu = 0, sq = 0;
  for (ulong j = lid; j < GS; j += LWS) {
    const ulong at = (ulong)r * GS + j;
    chan_merge(&n, &mu, &sq, pn[pn_off + at], pmean[pmean_off + at], psq[psq_off + at]);
  }
  sn[lid] = n;
  smu[lid] = mu;
  ssq[lid] = sq;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = LWS / 2; h > 0; h >>= 1) {
    if (lid < h) {
      ACC a = sn[lid], m = smu[lid], q = ssq[lid];
      chan_merge(&a, &m, &q, sn[lid + h], smu[lid + h], ssq[lid + h]);
      sn[lid] = a;
      smu[lid] = m;
      ssq[lid] = q;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    stats_store(r, sn[0], smu[0], ssq[0], eps, mean, mean_off, rstd, rstd_off RUNNING_ARGS);
}

__kernel void norm_apply(SHAPE, int spt, ACC eps, T3(const STORE_TYPE(X_T), x),
                         __global const STORE_TYPE(STAT_T)* mean, ulong mean_off,
                         __global const STORE_TYPE(STAT_T)* rstd, ulong rstd_off,
                         __global const STORE_TYPE(W_T)* w, ulong w_off,
                         __global const STORE_TYPE(W_T)* b, ulong b_off, T3(STORE_TYPE(X_T), y)) {
  const long s0 = get_global_id(0) * spt, c = get_global_id(1), n = get_global_id(2);
  if (s0 >= S || c >= C) return;
  const long row = stat_row(n, c, C, G, per_channel);
  // y = (x - mean) * scale + shift (the subtraction first: x*scale - mean*scale would lose
  // the digits of x - mean when the mean is large)
  const ACC mu = load_mean(mean, mean_off, row);
  ACC scale = load_rstd(rstd, rstd_off, row, eps), shift = 0;
#ifdef HAS_W
  scale *= (ACC)LOAD(W_T, w, w_off + c);
#endif
#ifdef HAS_B
  shift = (ACC)LOAD(W_T, b, b_off + c);
#endif
  const long xb = x_off + n * xN + c * xC, yb = y_off + n * yN + c * yC;
  const long s1 = min(s0 + spt, S);
  for (long s = s0; s < s1; ++s)
    STORE(X_T, y, yb + s * yS, CONVERT(X_T, ((ACC)LOAD(X_T, x, xb + s * xS) - mu) * scale + shift));
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void norm_sums(
    SHAPE, int spt, int by_channel, ACC eps, T3(const STORE_TYPE(X_T), x),
    T3(const STORE_TYPE(X_T), dy), __global const STORE_TYPE(STAT_T)* mean, ulong mean_off,
    __global const STORE_TYPE(STAT_T)* rstd, ulong rstd_off, __global const STORE_TYPE(W_T)* w,
    ulong w_off, __global ACC* A, ulong A_off, __global ACC* B, ulong B_off, ulong GS,
    ulong qchunk) {
  __local ACC scratch[LWS];
  const ulong grp = get_group_id(0);
  const long r = (long)(grp / GS);
  const uint lid = (uint)get_local_id(0);
  const int chan = by_channel || per_channel;
  const RowWalk rw = row_walk(r, chan, per_channel, C, G);
  const long x_row = x_off + rw.n0 * xN + rw.c0 * xC, x_t = rw.dn * xN + rw.dc * xC;
  const long dy_row = dy_off + rw.n0 * dyN + rw.c0 * dyC, dy_t = rw.dn * dyN + rw.dc * dyC;
  const long rows_t = chan ? N : C / G;
  ulong q0, q1;
  split_range((ulong)rows_t * (ulong)max((S + spt - 1) / spt, 1L), grp - (ulong)r * GS, qchunk, &q0,
              &q1);
  ACC a = 0, bsum = 0;
  CHUNK_RANGE_BEGIN(q0, q1, S, spt, lid, t, s0, s1)
  const long row = rw.srow0 + t * rw.dsrow;
  const ACC m = load_mean(mean, mean_off, row), rs = load_rstd(rstd, rstd_off, row, eps);
#ifdef HAS_W
  const ACC wc = (ACC)LOAD(W_T, w, w_off + rw.c0 + t * rw.dc);
#else
  const ACC wc = 1;
#endif
  const long xb = x_row + t * x_t, gb = dy_row + t * dy_t;
#define G_AT(k) ((ACC)LOAD(X_T, dy, gb + (k)*dyS) * wc)
#define GXHAT_AT(k) (G_AT(k) * (((ACC)LOAD(X_T, x, xb + (k)*xS) - m) * rs))
  RUN_SUM(a, s0, s1, G_AT);
  RUN_SUM(bsum, s0, s1, GXHAT_AT);
#undef G_AT
#undef GXHAT_AT
  CHUNK_LOOP_END(t)
  a = group_sum(a, scratch, lid);
  bsum = group_sum(bsum, scratch, lid);
  if (lid == 0) {
    A[A_off + grp] = a;
    B[B_off + grp] = bsum;
  }
}

__kernel void norm_dx(SHAPE, int spt, int use_sums, ACC eps, T3(const STORE_TYPE(X_T), x),
                      T3(const STORE_TYPE(X_T), dy), __global const STORE_TYPE(STAT_T)* mean,
                      ulong mean_off, __global const STORE_TYPE(STAT_T)* rstd, ulong rstd_off,
                      __global const STORE_TYPE(W_T)* w, ulong w_off, __global const ACC* A,
                      ulong A_off, __global const ACC* B, ulong B_off, T3(STORE_TYPE(X_T), dx)) {
  const long s0 = get_global_id(0) * spt, c = get_global_id(1), n = get_global_id(2);
  if (s0 >= S || c >= C) return;
  const long row = stat_row(n, c, C, G, per_channel);
  const ACC rs = load_rstd(rstd, rstd_off, row, eps);
#ifdef HAS_W
  const ACC wc = LOAD(W_T, w, w_off + c);
#else
  const ACC wc = 1;
#endif
  // dx = g * kg + (x - mean) * kx + k0, with xhat = (x - mean) * rs
  ACC kg = rs * wc, kx = 0, k0 = 0, mu = 0;
  // The count is computed outside the `if`: Intel's CPU runtime (opencl-rt 2021.2) crashes while
  // vectorising this kernel when the division by a count chosen by per_channel sits under
  // `if (use_sums)` before the loop over s (its vectoriser recurses until the stack overflows;
  // ci/intel_norm_crash.py reproduces it with pyopencl alone).
  const ACC cnt = (ACC)row_count(per_channel, N, C, S, G);
  if (use_sums) {
    mu = load_mean(mean, mean_off, row);
#ifdef RMS
    const ACC a = 0;
#else
    const ACC a = A[A_off + row] / cnt;
#endif
    const ACC bb = B[B_off + row] / cnt;
    // per_channel: rs * wc * (g - a - xhat * bb); otherwise: rs * (wc * g - a - xhat * bb)
    const ACC f = per_channel ? rs * wc : rs;
    kx = -f * rs * bb;
    k0 = -f * a;
  }
  const long xb = x_off + n * xN + c * xC, gb = dy_off + n * dyN + c * dyC,
             ob = dx_off + n * dxN + c * dxC;
  const long s1 = min(s0 + spt, S);
  for (long s = s0; s < s1; ++s) {
    const ACC g = LOAD(X_T, dy, gb + s * dyS);
    const ACC v = use_sums ? g * kg + ((ACC)LOAD(X_T, x, xb + s * xS) - mu) * kx + k0 : g * kg;
    STORE(X_T, dx, ob + s * dxS, CONVERT(X_T, v));
  }
}

#ifdef TX
#define TY (LWS / TX)
// norm_col_stats: norm_stats for batch norm (per_channel) with the channels as the contiguous dim
// (channels-last): rows q < nq of elements (q, c) at x_off + q*xq + c*xC. Launch as
// norm_col_sums (below). Work-group (x, g) takes rows [g*qchunk, min(nq, (g+1)*qchunk)) of
// channels [x*TX, (x+1)*TX): their mean, then the sum of squared deviations from it (two passes
// over the part, a tree over its TY rows of work-items each time); GS == 1: the statistics (and
// running statistics) of each channel, as norm_stats; GS > 1: the part's mean, sum of squared
// deviations and count at [c*GS + g] of mean, rstd and npart for norm_stats_merge.
__kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void norm_col_stats(
    SHAPE, ulong nq, long xq, ACC eps, T3(const STORE_TYPE(X_T), x), __global ACC* mean,
    ulong mean_off, __global ACC* rstd, ulong rstd_off, ulong GS, ulong qchunk, __global ACC* npart,
    ulong npart_off RUNNING_PARAMS) {
  __local ACC scratch[LWS];
  const uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);
  const long c = (long)(get_group_id(0) * TX + lx);
  const ulong g = get_group_id(1);
  ulong q0, q1;
  split_range(nq, g, qchunk, &q0, &q1);
  const uint at = ly * TX + lx;
  const long cc = min(c, C - 1);  // work-items past the last channel load a real one, unused
  ACC sum = 0;
  for (ulong q = q0 + ly; q < q1; q += TY) sum += (ACC)LOAD(X_T, x, x_off + (long)q * xq + cc * xC);
  scratch[at] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = TY / 2; h > 0; h >>= 1) {
    if (ly < h) scratch[at] += scratch[at + h * TX];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC cnt = (ACC)(q1 - q0);
  const ACC mu = q1 > q0 ? scratch[lx] / cnt : (ACC)0;
  barrier(CLK_LOCAL_MEM_FENCE);
  ACC sq = 0;
  for (ulong q = q0 + ly; q < q1; q += TY) {
    const ACC d = (ACC)LOAD(X_T, x, x_off + (long)q * xq + cc * xC) - mu;
    sq += d * d;
  }
  scratch[at] = sq;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = TY / 2; h > 0; h >>= 1) {
    if (ly < h) scratch[at] += scratch[at + h * TX];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (ly != 0 || c >= C) return;
  if (GS == 1) {
    stats_store(c, cnt, mu, scratch[lx], eps, mean, mean_off, rstd, rstd_off RUNNING_ARGS);
  } else {
    const ulong p = (ulong)c * GS + g;
    mean[mean_off + p] = mu;
    rstd[rstd_off + p] = scratch[lx];
    npart[npart_off + p] = cnt;
  }
}

// norm_col_sums: the by-channel sums of norm_sums where the channels are the contiguous dim
// (layer norm's weight and bias gradients; channels-last batch norm): rows q < nq of elements
// (q, c) at x_off + q*xq + c*xC (dy likewise with dyq), statistics row c (per_channel) or q (the
// layer-norm view, S = 1). Launch: global = {roundup(C, TX), GS*TY}, local = {TX, TY = LWS/TX};
// work-group (x, g) sums channels [x*TX, (x+1)*TX) - neighbouring work-items on neighbouring
// channels - over rows [g*qchunk, min(nq, (g+1)*qchunk)), its TY rows of work-items sharing
// them, and writes A[A_off + g*C + c], B[B_off + g*C + c] (GS > 1: partials the host sums).
__kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void norm_col_sums(
    SHAPE, ulong nq, long xq, long dyq, ACC eps, T3(const STORE_TYPE(X_T), x),
    T3(const STORE_TYPE(X_T), dy), __global const STORE_TYPE(STAT_T)* mean, ulong mean_off,
    __global const STORE_TYPE(STAT_T)* rstd, ulong rstd_off, __global const STORE_TYPE(W_T)* w,
    ulong w_off, __global ACC* A, ulong A_off, __global ACC* B, ulong B_off, ulong GS,
    ulong qchunk) {
  __local ACC sa[LWS], sb[LWS];
  const uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);
  const long c = (long)(get_group_id(0) * TX + lx);
  const ulong g = get_group_id(1);
  ulong q0, q1;
  split_range(nq, g, qchunk, &q0, &q1);
  ACC a = 0, bsum = 0;
  if (c < C) {
#ifdef HAS_W
    const ACC wc = (ACC)LOAD(W_T, w, w_off + c);
#else
    const ACC wc = 1;
#endif
    for (ulong q = q0 + ly; q < q1; q += TY) {
      const long row = per_channel ? c : (long)q * G + c / (C / G);
      const ACC m = load_mean(mean, mean_off, row), rs = load_rstd(rstd, rstd_off, row, eps);
      const ACC gv = (ACC)LOAD(X_T, dy, dy_off + (long)q * dyq + c * dyC) * wc;
      a += gv;
      bsum += gv * (((ACC)LOAD(X_T, x, x_off + (long)q * xq + c * xC) - m) * rs);
    }
  }
  const uint at = ly * TX + lx;
  sa[at] = a;
  sb[at] = bsum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = TY / 2; h > 0; h >>= 1) {
    if (ly < h) {
      sa[at] += sa[at + h * TX];
      sb[at] += sb[at + h * TX];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (ly == 0 && c < C) {
    A[A_off + g * (ulong)C + (ulong)c] = sa[lx];
    B[B_off + g * (ulong)C + (ulong)c] = sb[lx];
  }
}
#endif
