// Reductions over the inner dimension of a 2-D view.
//
// Problem: for m < M,
//   out[out_off + m*out_stride] = FINISH(REDUCE_{k<K} in[in_off + m*sm + k*sk])
// with element offsets/strides (sm, sk, out_stride >= 0). FINISH multiplies by
// `scale` for OP_SUM (the host passes 1 for sum, 1/K for mean) and is the
// identity for the other ops. All index arithmetic is 64-bit.
//
// Build options:
//   -DIN_T=<tag>   input storage tag (common.clh tags)
//   -DOUT_T=<tag>  output storage tag
//   -DACC_T=<tag>  accumulator tag: float for float/half/bfloat16, double for
//                  double, long for integer/bool sums
//   exactly one of -DOP_SUM -DOP_PROD -DOP_MAX -DOP_MIN
//   -DLWS=<n>      work-group size, a power of two (default 256)
//   vector norms (linalg_vector_norm), on floating ACC_T:
//   -DMAP_ABS | -DMAP_SQUARE | -DMAP_NONZERO | -DMAP_POW -DRED_P=<p>
//                  each element x is replaced by |x|, x*x, (x != 0) or |x|^p as it is
//                  loaded (the first pass only: the host leaves it out when reducing partials)
//   -DFINISH_SQRT | -DFINISH_ROOT -DRED_P=<p>
//                  the result r becomes sqrt(r) or r^(1/p) before it is stored (the last pass)
// K == 0 gives 0 for OP_SUM and 1 for OP_PROD; OP_MAX/OP_MIN propagate NaN
// like torch (any NaN in a row makes the result NaN) and are not launched with
// K == 0.
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
//                   group id = m*G + g reduces k in [g*chunk, min(K,(g+1)*chunk))
//                   and writes the unscaled partial, as ACC_T, to part[part_off + m*G + g]
//                   (an empty chunk writes the identity: 0 sum, 1 prod,
//                   -inf/+inf or the integer limits for max/min).
//                   The host finishes with reduce_rows built with IN_T=ACC_T
//                   (same OUT_T, ACC_T, OP and LWS) on part with in_off=0,
//                   sm=G, sk=1, K=G and the scale.

#ifndef LWS
#define LWS 256
#endif

#if (LWS & (LWS - 1)) != 0 || LWS < 1
#error "LWS must be a power of two"
#endif

#if defined(OP_SUM) + defined(OP_PROD) + defined(OP_MAX) + defined(OP_MIN) != 1
#error "define exactly one of OP_SUM, OP_PROD, OP_MAX, OP_MIN"
#endif

#define ACC REG_TYPE(ACC_T)

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
  return (isnan(a) || a > b) ? a : b;
#else
  return a > b ? a : b;
#endif
#else
#if ACC_IS_FLOAT
  return (isnan(a) || a < b) ? a : b;
#else
  return a < b ? a : b;
#endif
#endif
}

#if defined(MAP_ABS)
#define RED_MAP(x) fabs(x)
#elif defined(MAP_SQUARE)
#define RED_MAP(x) ((x) * (x))
#elif defined(MAP_NONZERO)
#define RED_MAP(x) ((ACC)((x) != 0))
#elif defined(MAP_POW)
#define RED_MAP(x) pow(fabs(x), (ACC)RED_P)
#else
#define RED_MAP(x) (x)
#endif

// Reduce the n elements in[idx + j*step], j < n.
inline ACC red_strided(__global const STORE_TYPE(IN_T)* in, long idx, long step, ulong n) {
  ACC acc = RED_IDENTITY;
  ulong j = 0;
  while (j < n) {
    ulong end = min(n, j + (ulong)RED_BLOCK);
    ACC blk = RED_IDENTITY;
    for (; j < end; ++j) {
      blk = red_combine(blk, RED_MAP(CONVERT(ACC_T, LOAD(IN_T, in, idx))));
      idx += step;
    }
    acc = red_combine(acc, blk);
  }
  return acc;
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

inline void red_store(__global STORE_TYPE(OUT_T)* out, long idx, ACC v, ACC scale) {
#if defined(FINISH_SQRT)
  v = sqrt(v);
#elif defined(FINISH_ROOT)
  v = pow(v, (ACC)1 / (ACC)RED_P);
#endif
#if defined(OP_SUM)
#if ACC_IS_FLOAT
  v = v * scale;
#else
  v = red_mul(v, scale);
#endif
#endif
  STORE(OUT_T, out, idx, CONVERT(OUT_T, v));
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void reduce_rows(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off, long sm, long sk,
    __global STORE_TYPE(OUT_T)* out, ulong out_off, long out_stride, ACC scale) {
  __local ACC scratch[LWS];
  const ulong m = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (m >= M) return;  // uniform over the group
  const long base = (long)in_off + (long)m * sm + (long)lid * sk;
  ACC v = red_strided(in, base, (long)LWS * sk, red_count(K, lid));
  v = red_group(v, scratch, lid);
  if (lid == 0) red_store(out, (long)out_off + (long)m * out_stride, v, scale);
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void reduce_cols(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off, long sm, long sk,
    __global STORE_TYPE(OUT_T)* out, ulong out_off, long out_stride, ACC scale) {
  const ulong m = get_global_id(0);
  if (m >= M) return;
  ACC v = red_strided(in, (long)in_off + (long)m * sm, sk, K);
  red_store(out, (long)out_off + (long)m * out_stride, v, scale);
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void reduce_partial(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off, long sm, long sk,
    __global STORE_TYPE(ACC_T)* part, ulong part_off, ulong G, ulong chunk) {
  __local ACC scratch[LWS];
  const ulong grp = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (grp >= M * G) return;  // uniform over the group
  const ulong m = grp / G;
  const ulong g = grp - m * G;
  const ulong k0 = min(K, g * chunk);
  const ulong k1 = min(K, k0 + chunk);
  const long base = (long)in_off + (long)m * sm + (long)(k0 + lid) * sk;
  ACC v = red_strided(in, base, (long)LWS * sk, red_count(k1 - k0, lid));
  v = red_group(v, scratch, lid);
  if (lid == 0) STORE(ACC_T, part, (long)part_off + (long)grp, v);
}
