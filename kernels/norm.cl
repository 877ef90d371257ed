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
// Launch: norm_stats and norm_sums: global = {rows*LWS}, local = {LWS} (one group per row);
//   norm_apply and norm_dx: global = {N*C*S rounded up to LWS}, local = {LWS}.
//
// norm_stats(N, C, S, G, per_channel, eps, x, mean, rstd[, momentum, running_mean, running_var]):
//   two passes in ACC: mean, then the biased variance; rstd = 1 / sqrt(var + eps); mean and rstd
//   are ACC buffers (index = statrow). RMS: mean = 0 and var = mean(x^2). RUNNING:
//   running_mean = momentum*mean + (1-momentum)*running_mean, running_var likewise with the
//   unbiased variance (sum of squares / (count - 1)).
// norm_apply(N, C, S, G, per_channel, eps, x, mean, rstd, w, b, y):
//   y = (x - mean) * rstd * w[c] + b[c].
// norm_sums(N, C, S, G, per_channel, by_channel, eps, x, dy, mean, rstd, w, A, B): per row
//   (by_channel: row c over all (n, s); else the statistics rows) A = sum(w[c]*dy),
//   B = sum(w[c]*dy*xhat) in ACC buffers (w = 1 without HAS_W).
// norm_dx(N, C, S, G, per_channel, use_sums, eps, x, dy, mean, rstd, w, A, B, dx) with
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

// Element k of a row: its (n, c, s). Channel rows (by_channel) span all n and s of channel r;
// group rows span CG channels of one sample.
inline void row_element(ulong k, long r, int by_channel, long C, long S, long G, long* n, long* c,
                        long* s) {
  // remainders as x - q * s, without `%` (see elementwise.cl: Oclgrind and LLVM's freeze)
  const long t = (long)(k / (ulong)S);
  *s = (long)k - t * S;
  if (by_channel) {
    *n = t;
    *c = r;
  } else {
    const long CG = C / G;
    *n = r / G;
    *c = (r - *n * G) * CG + t;
  }
}

// (n, c, s) of linear index i in [N, C, S].
inline void split_ncs(ulong i, long C, long S, long* n, long* c, long* s) {
  const long q = (long)(i / (ulong)S);
  *s = (long)i - q * S;
  *n = q / C;
  *c = q - *n * C;
}

inline long stat_row(long n, long c, long C, long G, int per_channel) {
  return per_channel ? c : n * G + c / (C / G);
}

inline ulong row_count(int by_channel, long N, long C, long S, long G) {
  return (ulong)(by_channel ? N : C / G) * (ulong)S;
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
    SHAPE, ACC eps, T3(const STORE_TYPE(X_T), x), __global ACC* mean, ulong mean_off,
    __global ACC* rstd, ulong rstd_off
#ifdef RUNNING
    ,
    ACC momentum, __global STORE_TYPE(RUN_T)* rmean, ulong rmean_off,
    __global STORE_TYPE(RUN_T)* rvar, ulong rvar_off
#endif
) {
  __local ACC scratch[LWS];
  const long r = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const ulong cnt = row_count(per_channel, N, C, S, G);
  long n, c, s;
  ACC mu = 0;
#ifndef RMS
  ACC sum = 0;
  for (ulong k = lid; k < cnt; k += LWS) {
    row_element(k, r, per_channel, C, S, G, &n, &c, &s);
    sum += LOAD(X_T, x, AT3(x, n, c, s));
  }
  mu = group_sum(sum, scratch, lid) / (ACC)cnt;
#endif
  ACC sq = 0;
  for (ulong k = lid; k < cnt; k += LWS) {
    row_element(k, r, per_channel, C, S, G, &n, &c, &s);
    const ACC d = (ACC)LOAD(X_T, x, AT3(x, n, c, s)) - mu;
    sq += d * d;
  }
  sq = group_sum(sq, scratch, lid);
  if (lid == 0) {
    const ACC var = sq / (ACC)cnt;
    mean[mean_off + r] = mu;
    rstd[rstd_off + r] = (ACC)1 / sqrt(var + eps);
#ifdef RUNNING
    const ACC unbiased = sq / (ACC)(cnt - 1);
    const ACC rm = LOAD(RUN_T, rmean, rmean_off + r), rv = LOAD(RUN_T, rvar, rvar_off + r);
    STORE(RUN_T, rmean, rmean_off + r, CONVERT(RUN_T, momentum * mu + ((ACC)1 - momentum) * rm));
    STORE(RUN_T, rvar, rvar_off + r,
          CONVERT(RUN_T, momentum * unbiased + ((ACC)1 - momentum) * rv));
#endif
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void norm_apply(
    SHAPE, ACC eps, T3(const STORE_TYPE(X_T), x), __global const STORE_TYPE(STAT_T)* mean,
    ulong mean_off, __global const STORE_TYPE(STAT_T)* rstd, ulong rstd_off,
    __global const STORE_TYPE(W_T)* w, ulong w_off, __global const STORE_TYPE(W_T)* b, ulong b_off,
    T3(STORE_TYPE(X_T), y)) {
  const ulong i = get_global_id(0);
  if (i >= (ulong)(N * C * S)) return;
  long n, c, s;
  split_ncs(i, C, S, &n, &c, &s);
  const long row = stat_row(n, c, C, G, per_channel);
  ACC v = ((ACC)LOAD(X_T, x, AT3(x, n, c, s)) - load_mean(mean, mean_off, row)) *
          load_rstd(rstd, rstd_off, row, eps);
#ifdef HAS_W
  v *= (ACC)LOAD(W_T, w, w_off + c);
#endif
#ifdef HAS_B
  v += (ACC)LOAD(W_T, b, b_off + c);
#endif
  STORE(X_T, y, AT3(y, n, c, s), CONVERT(X_T, v));
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void norm_sums(
    SHAPE, int by_channel, ACC eps, T3(const STORE_TYPE(X_T), x), T3(const STORE_TYPE(X_T), dy),
    __global const STORE_TYPE(STAT_T)* mean, ulong mean_off,
    __global const STORE_TYPE(STAT_T)* rstd, ulong rstd_off, __global const STORE_TYPE(W_T)* w,
    ulong w_off, __global ACC* A, ulong A_off, __global ACC* B, ulong B_off) {
  __local ACC scratch[LWS];
  const long r = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const int chan = by_channel || per_channel;
  const ulong cnt = row_count(chan, N, C, S, G);
  ACC a = 0, bsum = 0;
  for (ulong k = lid; k < cnt; k += LWS) {
    long n, c, s;
    row_element(k, r, chan, C, S, G, &n, &c, &s);
    const long row = stat_row(n, c, C, G, per_channel);
    const ACC xhat = ((ACC)LOAD(X_T, x, AT3(x, n, c, s)) - load_mean(mean, mean_off, row)) *
                     load_rstd(rstd, rstd_off, row, eps);
    ACC g = LOAD(X_T, dy, AT3(dy, n, c, s));
#ifdef HAS_W
    g *= (ACC)LOAD(W_T, w, w_off + c);
#endif
    a += g;
    bsum += g * xhat;
  }
  a = group_sum(a, scratch, lid);
  bsum = group_sum(bsum, scratch, lid);
  if (lid == 0) {
    A[A_off + r] = a;
    B[B_off + r] = bsum;
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void norm_dx(
    SHAPE, int use_sums, ACC eps, T3(const STORE_TYPE(X_T), x), T3(const STORE_TYPE(X_T), dy),
    __global const STORE_TYPE(STAT_T)* mean, ulong mean_off,
    __global const STORE_TYPE(STAT_T)* rstd, ulong rstd_off, __global const STORE_TYPE(W_T)* w,
    ulong w_off, __global const ACC* A, ulong A_off, __global const ACC* B, ulong B_off,
    T3(STORE_TYPE(X_T), dx)) {
  const ulong i = get_global_id(0);
  if (i >= (ulong)(N * C * S)) return;
  long n, c, s;
  split_ncs(i, C, S, &n, &c, &s);
  const long row = stat_row(n, c, C, G, per_channel);
  const ACC rs = load_rstd(rstd, rstd_off, row, eps);
  const ACC g = LOAD(X_T, dy, AT3(dy, n, c, s));
#ifdef HAS_W
  const ACC wc = LOAD(W_T, w, w_off + c);
#else
  const ACC wc = 1;
#endif
  ACC v;
  if (!use_sums) {
    v = rs * wc * g;
  } else {
    const ACC cnt = (ACC)row_count(per_channel, N, C, S, G);
    const ACC xhat = ((ACC)LOAD(X_T, x, AT3(x, n, c, s)) - load_mean(mean, mean_off, row)) * rs;
#ifdef RMS
    const ACC a = 0;
#else
    const ACC a = A[A_off + row] / cnt;
#endif
    const ACC bb = B[B_off + row] / cnt;
    v = per_channel ? rs * wc * (g - a - xhat * bb) : rs * (wc * g - a - xhat * bb);
  }
  STORE(X_T, dx, AT3(dx, n, c, s), CONVERT(X_T, v));
}
