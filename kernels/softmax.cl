// Softmax and log-softmax over rows of K contiguous elements (row m starts at off + m*K).
//
// Build options: -DIN_T=<tag> -DOUT_T=<tag> -DACC_T=<float|double> [-DLOG] [-DSAFE] -DLWS=<power
// of 2>. SAFE (softmax_forward without LOG): a row whose elements are all -inf gives 0s (ATen's
// _safe_softmax) instead of NaN.
// Launch (both kernels): global = {M*LWS}, local = {LWS}; one work-group per row.
//   softmax_forward:  out = exp(x - max) / sum(exp(x - max)), or with LOG
//                     out = (x - max) - log(sum(exp(x - max)))  (x - max first: it is exact
//                     for the largest logits, where x - (max + log(sum)) would cancel)
//   softmax_backward: y is the forward output, g the gradient of it; grad_in written to gin.
//                     LOG:  gin = g - exp(y) * sum(g)
//                     else: gin = y * (g - sum(g * y))
//   GIN_T is the tag of g, y and gin (all the same dtype).

#ifndef LWS
#define LWS 256
#endif

#define ACC REG_TYPE(ACC_T)

// Group-wide reduction of v (max when IS_MAX, else sum); every item gets the result.
inline ACC group_reduce(ACC v, __local ACC* scratch, uint lid, int is_max) {
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const ACC o = scratch[lid + s];
      const ACC m = scratch[lid];
      // max propagates NaN like torch
      scratch[lid] = is_max ? ((OCL_ISNAN(m) || m >= o) ? m : o) : m + o;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void softmax_forward(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off,
    __global STORE_TYPE(OUT_T)* out, ulong out_off) {
  __local ACC scratch[LWS];
  const ulong m = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (m >= M) return;
  const ulong ib = in_off + m * K, ob = out_off + m * K;
  ACC mx = -INFINITY;
  for (ulong k = lid; k < K; k += LWS) {
    const ACC x = LOAD(IN_T, in, ib + k);
    mx = (OCL_ISNAN(mx) || mx >= x) ? mx : x;
  }
  mx = group_reduce(mx, scratch, lid, 1);
  ACC s = 0;
  for (ulong k = lid; k < K; k += LWS) s += exp((ACC)LOAD(IN_T, in, ib + k) - mx);
  s = group_reduce(s, scratch, lid, 0);
#ifdef LOG
  const ACC log_s = log(s);
  for (ulong k = lid; k < K; k += LWS)
    STORE(OUT_T, out, ob + k, CONVERT(OUT_T, ((ACC)LOAD(IN_T, in, ib + k) - mx) - log_s));
#else
  const ACC inv = (ACC)1 / s;
#ifdef SAFE
  if (mx == -INFINITY) {  // every element -inf (the max propagates NaN, so none is NaN)
    for (ulong k = lid; k < K; k += LWS) STORE(OUT_T, out, ob + k, CONVERT(OUT_T, (ACC)0));
    return;
  }
#endif
  for (ulong k = lid; k < K; k += LWS)
    STORE(OUT_T, out, ob + k, CONVERT(OUT_T, exp((ACC)LOAD(IN_T, in, ib + k) - mx) * inv));
#endif
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void softmax_backward(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* g, ulong g_off,
    __global const STORE_TYPE(IN_T)* y, ulong y_off, __global STORE_TYPE(OUT_T)* gin,
    ulong gin_off) {
  __local ACC scratch[LWS];
  const ulong m = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (m >= M) return;
  const ulong gb = g_off + m * K, yb = y_off + m * K, ob = gin_off + m * K;
  ACC s = 0;
  for (ulong k = lid; k < K; k += LWS) {
#ifdef LOG
    s += (ACC)LOAD(IN_T, g, gb + k);
#else
    s += (ACC)LOAD(IN_T, g, gb + k) * (ACC)LOAD(IN_T, y, yb + k);
#endif
  }
  s = group_reduce(s, scratch, lid, 0);
  for (ulong k = lid; k < K; k += LWS) {
    const ACC gv = LOAD(IN_T, g, gb + k), yv = LOAD(IN_T, y, yb + k);
#ifdef LOG
    const ACC r = gv - exp(yv) * s;
#else
    const ACC r = yv * (gv - s);
#endif
    STORE(OUT_T, gin, ob + k, CONVERT(OUT_T, r));
  }
}
