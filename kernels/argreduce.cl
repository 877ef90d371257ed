// Index-tracking reductions (argmax/argmin, max/min along a dim) over the 2-D view
// v[m, k] = in[in_off + m*sm + k*sk], m < M, k < K (K > 0).
//
// Build options: -DIN_T=<tag> -DOP_ARGMAX | -DOP_ARGMIN -DLWS=<power of two>
// Launch: global = {M*LWS}, local = {LWS}; one work-group per row.
// Writes idx[idx_off + m] (int64) and, when WITH_VALUES, val[val_off + m] (IN_T). Like torch,
// the first index of the extreme wins and NaN counts as larger (argmax) / smaller (argmin)
// than everything, so the first NaN is chosen.

#ifndef LWS
#define LWS 256
#endif

#define V REG_TYPE(IN_T)

// true if (b, ib) beats (a, ia)
inline int beats(V a, long ia, V b, long ib) {
  const int na = OCL_ISNAN((float)a), nb = OCL_ISNAN((float)b);
  if (na || nb) return nb && (!na || ib < ia);
#ifdef OP_ARGMAX
  if (b > a) return 1;
#else
  if (b < a) return 1;
#endif
  return b == a && ib < ia;
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void arg_reduce(
    ulong M, ulong K, __global const STORE_TYPE(IN_T)* in, ulong in_off, long sm, long sk,
    __global long* idx, ulong idx_off, __global STORE_TYPE(IN_T)* val, ulong val_off) {
  __local V sv[LWS];
  __local long si[LWS];
  const ulong m = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (m >= M) return;
  const long base = (long)in_off + (long)m * sm;
  V best = 0;
  long bi = -1;
  for (ulong k = lid; k < K; k += LWS) {
    const V x = LOAD(IN_T, in, base + (long)k * sk);
    if (bi < 0 || beats(best, bi, x, (long)k)) {
      best = x;
      bi = (long)k;
    }
  }
  sv[lid] = best;
  si[lid] = bi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const long ob = si[lid + s];
      if (ob >= 0 && (si[lid] < 0 || beats(sv[lid], si[lid], sv[lid + s], ob))) {
        sv[lid] = sv[lid + s];
        si[lid] = ob;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    idx[idx_off + m] = si[0];
#ifdef WITH_VALUES
    STORE(IN_T, val, val_off + m, sv[0]);
#endif
  }
}
