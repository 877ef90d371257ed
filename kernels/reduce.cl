// Reductions over the inner dimension of a 2-D view.
//
// Problem: for m < M,
//   out[out_off + m*out_stride] = FINISH(scale * REDUCE_{k<K} MAP(in[in_off + m*sm + at(k)]))
// with at(k) = t*sk + s*sk2 for k = t*K2 + s (s < K2): the reduced elements of a row form a
// K/K2 x K2 grid (K2 = 1, sk2 = 0 when they are one strided run; two runs are, for example, the
// dims (0, 2, 3) of an NCHW tensor reduced per channel). Element offsets/strides (sm, sk, sk2,
// out_stride >= 0). The scale applies to OP_SUM only (the
// host passes 1 for sum, 1/K for mean, 1/max(0, K - correction) for a variance); MAP and FINISH
// are the identity unless a MAP_ / FIN_ option is given. All index arithmetic is 64-bit.
//
// Build options:
//   -DIN_T=<tag>   input storage tag (common.clh tags)
//   -DOUT_T=<tag>  output storage tag
//   -DACC_T=<tag>  accumulator tag: float for float/half/bfloat16, double for
//                  double, long for integer/bool sums
//   exactly one of -DOP_SUM -DOP_PROD -DOP_MAX -DOP_MIN
//   at most one element map (applied to each loaded element, result in ACC_T):
//     -DMAP_ABS      |x|                       (1-norm, inf-norms)
//     -DMAP_SQUARE   x*x                       (2-norm)
//     -DMAP_POW      |x|^map_p                 (other p-norms; whole p by multiplication)
//     -DMAP_NONZERO  x != 0 as 1 or 0          (0-norm, count_nonzero; tested before conversion)
//     -DMAP_NANZERO  NaN -> 0                  (nansum)
//     -DMAP_SQDEV    (x - aux[aux_off + m])^2  (variance: aux holds each row's mean as ACC_T)
//   at most one finish: -DFIN_SQRT sqrt(v), -DFIN_POW pow(v, fin_p)
//   -DLWS=<n>      work-group size, a power of two (default 256)
// K == 0 gives FINISH(0) for OP_SUM and 1 for OP_PROD; OP_MAX/OP_MIN propagate NaN
// like torch (any NaN in a row makes the result NaN) and are not launched with
// K == 0.
//
// Arguments of the problem: M, K, in, in_off, sm, sk, K2, sk2, out (part), ...
// Arguments after the problem: ACC scale, ACC map_p, ACC fin_p, aux buffer + aux_off (ignored
// unless MAP_SQDEV; the host passes any buffer).
//
// Launch geometry (1-D NDRange, local size always explicit):
//   reduce_rows:    global = {M*LWS},            local = {LWS}
//                   one work-group per output row m = group id; the LWS items
//                   stride over k, then a local tree reduction; item 0 writes.
//   reduce_cols:    global = {roundup(M, LWS)},  local = {LWS}
//                   one work-item per output m = global id (items with m >= M
//                   do nothing); each loops over all K (good for sm == 1 and
//                   moderate K).
//   reduce_partial: global = {M*G*LWS},          local = {LWS}
//                   group id = m*G + g reduces MAP(x) for k in [g*chunk, min(K,(g+1)*chunk))
//                   and writes the unscaled, unfinished partial, as ACC_T, to
//                   part[part_off + m*G + g] (an empty chunk writes the identity: 0 sum, 1 prod,
//                   -inf/+inf or the integer limits for max/min).
//                   The host finishes with reduce_rows built with IN_T=ACC_T and no map
//                   (same OUT_T, ACC_T, OP, finish and LWS) on part with in_off=0, K2=1, sk2=0,
//                   sm=G, sk=1, K=G and the scale.
//   reduce_tiles:   (built with -DTX=<columns per group>, a power of two dividing LWS; GPUs'
//                   column reductions: the kept dims contiguous, the reduced ones strided)
//                   global = {roundup(M, TX), G*TY}, local = {TX, TY}, TY = LWS / TX.
//                   Work-group (x, g) takes outputs m in [x*TX, (x+1)*TX) - neighbouring
//                   work-items read neighbouring elements when sm == 1 - and the k in
//                   [g*chunk, min(K, (g+1)*chunk)), which its TY rows of work-items share
//                   (k = k0 + y, k0 + y + TY, ...); a tree over y in local memory. G == 1: the
//                   finished result goes to out; G > 1: the unscaled, unfinished partial, as ACC_T,
//                   to part[part_off + g*M + m], which the host reduces with reduce_tiles again
//                   (IN_T=ACC_T, no map; M, K=G, sm=1, sk=M, G=1).

#ifndef LWS
#define LWS 256
#endif

#if (LWS & (LWS - 1)) != 0 || LWS < 1
#error "LWS must be a power of two"
#endif

#if defined(OP_SUM) + defined(OP_PROD) + defined(OP_MAX) + defined(OP_MIN) != 1
#error "define exactly one of OP_SUM, OP_PROD, OP_MAX, OP_MIN"
#endif

// clang-format off
#if defined(MAP_ABS) + defined(MAP_SQUARE) + defined(MAP_POW) + defined(MAP_NONZERO) + \
    defined(MAP_NANZERO) + defined(MAP_SQDEV) > 1
#error "define at most one MAP_ option"
#endif
// clang-format on
#if defined(FIN_SQRT) + defined(FIN_POW) > 1
#error "define at most one FIN_ option"
#endif

#define ACC REG_TYPE(ACC_T)
#define IN REG_TYPE(IN_T)

// Per-tag properties of the accumulator type.
#define RED_IS_FLOAT_float 1
#define RED_IS_FLOAT_double 1
#define RED_IS_FLOAT_half 1
#define RED_IS_FLOAT_bfloat16 1
#define RED_IS_FLOAT_long 0
#define RED_IS_FLOAT_int 0
#define RED_IS_FLOAT_short 0
#define RED_IS_FLOAT_char 0
#define RED_IS_FLOAT_uchar 0
#define RED_IS_FLOAT_bool 0
#define ACC_IS_FLOAT OCL_CAT(RED_IS_FLOAT_, ACC_T)

#define RED_LOWEST_float (-INFINITY)
#define RED_LOWEST_double (-(double)INFINITY)
#define RED_LOWEST_half (-INFINITY)
#define RED_LOWEST_bfloat16 (-INFINITY)
#define RED_LOWEST_long LONG_MIN
#define RED_LOWEST_int INT_MIN
#define RED_LOWEST_short SHRT_MIN
#define RED_LOWEST_char CHAR_MIN
#define RED_LOWEST_uchar 0
#define RED_LOWEST_bool 0

#define RED_HIGHEST_float INFINITY
#define RED_HIGHEST_double ((double)INFINITY)
#define RED_HIGHEST_half INFINITY
#define RED_HIGHEST_bfloat16 INFINITY
#define RED_HIGHEST_long LONG_MAX
#define RED_HIGHEST_int INT_MAX
#define RED_HIGHEST_short SHRT_MAX
#define RED_HIGHEST_char CHAR_MAX
#define RED_HIGHEST_uchar UCHAR_MAX
#define RED_HIGHEST_bool 1

#if defined(OP_SUM)
#define RED_IDENTITY ((ACC)0)
#elif defined(OP_PROD)
#define RED_IDENTITY ((ACC)1)
#elif defined(OP_MAX)
#define RED_IDENTITY ((ACC)OCL_CAT(RED_LOWEST_, ACC_T))
#else
#define RED_IDENTITY ((ACC)OCL_CAT(RED_HIGHEST_, ACC_T))
#endif

// Elements reduced sequentially into one block partial before the partial is
// folded into the running accumulator (two-level summation for accuracy).
#define RED_BLOCK 64

inline ACC red_mul(ACC a, ACC b) {
#if ACC_IS_FLOAT
  return a * b;
#else
  // Integers wrap like torch; go through ulong to avoid signed overflow.
  return (ACC)((ulong)a * (ulong)b);
#endif
}

inline ACC red_combine(ACC a, ACC b) {
#if defined(OP_SUM)
#if ACC_IS_FLOAT
  return a + b;
#else
  return (ACC)((ulong)a + (ulong)b);
#endif
#elif defined(OP_PROD)
  return red_mul(a, b);
#elif defined(OP_MAX)
#if ACC_IS_FLOAT
  return (OCL_ISNAN(a) || a > b) ? a : b;
#else
  return a > b ? a : b;
#endif
#else
#if ACC_IS_FLOAT
  return (OCL_ISNAN(a) || a < b) ? a : b;
#else
  return a < b ? a : b;
#endif
#endif
}

#if defined(MAP_POW)
// a^p for a >= 0: by repeated squaring when p is a whole number up to 16 in magnitude (a few
// roundings; pow() can cost hundreds of ns per element, e.g. on PoCL), else pow().
inline ACC red_pow(ACC a, ACC p) {
  if (p == rint(p) && fabs(p) <= (ACC)16) {
    uint n = (uint)fabs(p);
    ACC r = (ACC)1, b = a;
    while (n != 0) {
      if (n & 1u) r *= b;
      b *= b;
      n >>= 1;
    }
    return p < 0 ? (ACC)1 / r : r;
  }
  return pow(a, p);
}
#endif

// The element map: x (an input element) -> the value reduced, in ACC. `row` is the row's
// value from aux (MAP_SQDEV), `p` the exponent (MAP_POW).
inline ACC red_map(IN x, ACC row, ACC p) {
#if defined(MAP_ABS)
  return fabs(CONVERT(ACC_T, x));
#elif defined(MAP_SQUARE)
  const ACC v = CONVERT(ACC_T, x);
  return v * v;
#elif defined(MAP_POW)
  return red_pow(fabs(CONVERT(ACC_T, x)), p);
#elif defined(MAP_NONZERO)
  return x != 0 ? (ACC)1 : (ACC)0;
#elif defined(MAP_NANZERO)
  const ACC v = CONVERT(ACC_T, x);
  return OCL_ISNAN(v) ? (ACC)0 : v;
#elif defined(MAP_SQDEV)
  const ACC d = CONVERT(ACC_T, x) - row;
  return d * d;
#else
  return CONVERT(ACC_T, x);
#endif
}

// Reduce the n mapped elements in[idx + j*step], j < n.
inline ACC red_strided(__global const STORE_TYPE(IN_T)* in, long idx, long step, ulong n, ACC row,
                       ACC p) {
  ACC acc = RED_IDENTITY;
  ulong j = 0;
  while (j < n) {
    ulong end = min(n, j + (ulong)RED_BLOCK);
    ACC blk = RED_IDENTITY;
    for (; j < end; ++j) {
      blk = red_combine(blk, red_map(LOAD(IN_T, in, idx), row, p));
      idx += step;
    }
    acc = red_combine(acc, blk);
  }
  return acc;
}

// Reduce the n mapped elements k = k0, k0 + step, ... of a row at in[base + at(k)] (see the
// problem above). With K2 > 1 the walk keeps (t, s) of k and adds the step's quotient and
// remainder, with a carry: no division per element.
inline ACC red_walk(__global const STORE_TYPE(IN_T)* in, long base, ulong k0, ulong step, ulong n,
                    long sk, ulong K2, long sk2, ACC row, ACC p) {
  if (K2 <= 1) return red_strided(in, base + (long)k0 * sk, (long)step * sk, n, row, p);
  long t = (long)(k0 / K2), s = (long)k0 - t * (long)K2;
  const long dt = (long)(step / K2), ds = (long)step - dt * (long)K2;
  ACC acc = RED_IDENTITY;
  ulong j = 0;
  while (j < n) {
    ulong end = min(n, j + (ulong)RED_BLOCK);
    ACC blk = RED_IDENTITY;
    for (; j < end; ++j) {
      blk = red_combine(blk, red_map(LOAD(IN_T, in, base + t * sk + s * sk2), row, p));
      s += ds;
      t += dt;
      if (s >= (long)K2) {
        s -= (long)K2;
        ++t;
      }
    }
    acc = red_combine(acc, blk);
  }
  return acc;
}

// The row value of MAP_SQDEV (0 otherwise).
inline ACC red_row(__global const STORE_TYPE(ACC_T)* aux, ulong aux_off, ulong m) {
#if defined(MAP_SQDEV)
  return LOAD(ACC_T, aux, (long)aux_off + (long)m);
#else
  return (ACC)0;
#endif
}

// Number of k in [0, n) with k % LWS == lid (lid < LWS; 0 when n <= lid).
inline ulong red_count(ulong n, ulong lid) { return (n + (LWS - 1) - lid) / LWS; }

// Tree-reduce the per-item values of the group (all LWS slots are written, so
// no uninitialised local memory is read); every item gets the group result.
inline ACC red_group(ACC v, __local ACC* scratch, uint lid) {
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = red_combine(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

inline void red_store(__global STORE_TYPE(OUT_T)* out, long idx, ACC v, ACC scale, ACC fin_p) {
#if defined(OP_SUM)
#if ACC_IS_FLOAT
  v = v * scale;
#else
  v = red_mul(v, scale);
#endif
#endif
#if defined(FIN_SQRT)
  v = sqrt(v);
#elif defined(FIN_POW)
  v = pow(v, fin_p);
#endif
  STORE(OUT_T, out, idx, CONVERT(OUT_T, v));
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void reduce_rows(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off, long sm, long sk, ulong K2,
    long sk2, __global STORE_TYPE(OUT_T)* out, ulong out_off, long out_stride, ACC scale, ACC map_p,
    ACC fin_p, __global const STORE_TYPE(ACC_T)* aux, ulong aux_off) {
  __local ACC scratch[LWS];
  const ulong m = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (m >= M) return;  // uniform over the group
  ACC v = red_walk(in, (long)in_off + (long)m * sm, lid, LWS, red_count(K, lid), sk, K2, sk2,
                   red_row(aux, aux_off, m), map_p);
  v = red_group(v, scratch, lid);
  if (lid == 0) red_store(out, (long)out_off + (long)m * out_stride, v, scale, fin_p);
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void reduce_cols(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off, long sm, long sk, ulong K2,
    long sk2, __global STORE_TYPE(OUT_T)* out, ulong out_off, long out_stride, ACC scale, ACC map_p,
    ACC fin_p, __global const STORE_TYPE(ACC_T)* aux, ulong aux_off) {
  const ulong m = get_global_id(0);
  if (m >= M) return;
  ACC v = red_walk(in, (long)in_off + (long)m * sm, 0, 1, K, sk, K2, sk2, red_row(aux, aux_off, m),
                   map_p);
  red_store(out, (long)out_off + (long)m * out_stride, v, scale, fin_p);
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void reduce_partial(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off, long sm, long sk, ulong K2,
    long sk2, __global STORE_TYPE(ACC_T)* part, ulong part_off, ulong G, ulong chunk, ACC map_p,
    __global const STORE_TYPE(ACC_T)* aux, ulong aux_off) {
  __local ACC scratch[LWS];
  const ulong grp = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (grp >= M * G) return;  // uniform over the group
  const ulong m = grp / G;
  const ulong g = grp - m * G;
  const ulong k0 = min(K, g * chunk);
  const ulong k1 = min(K, k0 + chunk);
  ACC v = red_walk(in, (long)in_off + (long)m * sm, k0 + lid, LWS, red_count(k1 - k0, lid), sk, K2,
                   sk2, red_row(aux, aux_off, m), map_p);
  v = red_group(v, scratch, lid);
  if (lid == 0) STORE(ACC_T, part, (long)part_off + (long)grp, v);
}

#ifdef TX
#if (TX & (TX - 1)) != 0 || TX > LWS
#error "TX must be a power of two no larger than LWS"
#endif
#define TY (LWS / TX)

__kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void reduce_tiles(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off, long sm, long sk, ulong K2,
    long sk2, __global STORE_TYPE(OUT_T)* out, ulong out_off, long out_stride, ACC scale, ACC map_p,
    ACC fin_p, __global const STORE_TYPE(ACC_T)* aux, ulong aux_off, ulong G, ulong chunk,
    __global STORE_TYPE(ACC_T)* part, ulong part_off) {
  __local ACC scratch[LWS];
  const uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);
  const ulong m = get_group_id(0) * TX + lx;
  const ulong g = get_group_id(1);
  const ulong k0 = min(K, g * chunk);
  const ulong k1 = min(K, k0 + chunk);
  // Work-items past the last output (m >= M) reduce nothing but take part in the barriers.
  const ulong n = m < M && k0 + ly < k1 ? (k1 - k0 - ly + TY - 1) / TY : 0;
  ACC v = RED_IDENTITY;
  if (n != 0)
    v = red_walk(in, (long)in_off + (long)m * sm, k0 + ly, TY, n, sk, K2, sk2,
                 red_row(aux, aux_off, m), map_p);
  const uint at = ly * TX + lx;
  scratch[at] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = TY / 2; s > 0; s >>= 1) {
    if (ly < s) scratch[at] = red_combine(scratch[at], scratch[at + s * TX]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (ly != 0 || m >= M) return;
  if (G == 1)
    red_store(out, (long)out_off + (long)m * out_stride, scratch[lx], scale, fin_p);
  else
    STORE(ACC_T, part, (long)part_off + (long)(g * M + m), scratch[lx]);
}
#endif
