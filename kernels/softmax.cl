// Softmax and log-softmax over rows of K contiguous elements (row m starts at off + m*K).
//
// Build options: -DIN_T=<tag> -DOUT_T=<tag> -DACC_T=<float|double> [-DLOG] [-DSAFE] -DLWS=<power
// of 2>. SAFE (softmax_forward without LOG): a row whose elements are all -inf gives 0s (ATen's
// _safe_softmax) instead of NaN.
// Launch (both kernels): global = {M*LWS}, local = {LWS}; one work-group per row.
//   softmax_forward:  out = exp(x - max) / sum(exp(x - max)) (max and sum in one pass), or with LOG
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

// (m, s) <- (m, s) merged with (mb, sb): s sums exp(x - m) over the elements seen, m is their
// max (NaN propagates, -inf when every element is -inf: then s stays 0).
inline void online_merge(ACC* m, ACC* s, ACC mb, ACC sb) {
  const ACC ma = *m;
  if (OCL_ISNAN(ma) || OCL_ISNAN(mb)) {
    *m = *s = ma + mb;  // NaN
    return;
  }
  // An empty side (no elements, or all -inf: s = 0) adds nothing and costs no exp(): work-items
  // past a short row's end are most of the tree on CPU devices.
  if (mb == -INFINITY) return;
  if (ma == -INFINITY) {
    *m = mb;
    *s = sb;
    return;
  }
  if (ma >= mb) {
    *s += sb * exp(mb - ma);  // NaN for two +inf maxima, as exp(x - max) is
  } else {
    *s = *s * exp(ma - mb) + sb;
    *m = mb;
  }
}

// Group-wide online_merge of every work-item's (m, s); every item gets the result.
inline void group_merge(ACC* m, ACC* s, __local ACC* sm, __local ACC* ss, uint lid) {
  sm[lid] = *m;
  ss[lid] = *s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = LWS / 2; h > 0; h >>= 1) {
    if (lid < h) {
      ACC a = sm[lid], b = ss[lid];
      online_merge(&a, &b, sm[lid + h], ss[lid + h]);
      sm[lid] = a;
      ss[lid] = b;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *m = sm[0];
  *s = ss[0];
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void softmax_forward(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off,
    __global STORE_TYPE(OUT_T)* out, ulong out_off) {
  __local ACC sm[LWS], ss[LWS];
  const ulong m = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (m >= M) return;
  const ulong ib = in_off + m * K, ob = out_off + m * K;
  // One pass for the max and the sum (an online softmax: the sum is rescaled when the max
  // grows), a second one to write: the row is read twice, not three times.
  ACC mx = -INFINITY, s = 0;
  for (ulong k = lid; k < K; k += LWS) {
    const ACC x = LOAD(IN_T, in, ib + k);
    if (x > mx) {
      // exp(x - x): 1, or NaN for x = +inf (as exp(x - max) is in two passes)
      s = s * exp(mx - x) + (x == (ACC)INFINITY ? (ACC)NAN : (ACC)1);
      mx = x;
    } else if (OCL_ISNAN(x)) {
      mx = s = x;
    } else if (x != -INFINITY) {
      s += exp(x - mx);  // NaN once mx is NaN, and for +inf after +inf (as exp(x - max) is)
    }
  }
  group_merge(&mx, &s, sm, ss, lid);
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
