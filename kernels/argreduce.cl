// Index-tracking reductions (argmax/argmin, max/min along a dim) over the 2-D view
// v[m, k] = in[in_off + m*sm + k*sk], m < M, k < K (K > 0).
//
// Build options: -DIN_T=<tag> -DOP_ARGMAX | -DOP_ARGMIN -DLWS=<power of two> [-DWITH_VALUES]
//   [-DPARTS] (the second pass of a split row, below)
// Launch: global = {M*G*LWS}, local = {LWS}; work-group m*G + g takes the k in
//   [g*chunk, min(K, (g+1)*chunk)) of row m (G = 1, chunk = K: one work-group per row) and writes
//   idx[idx_off + m*G + g] and, when WITH_VALUES, val[val_off + m*G + g] (IN_T). Rows split among
//   G > 1 work-groups (few long rows: GPUs would sit idle) write these partials, built with
//   WITH_VALUES, then the host runs the kernel built with -DPARTS on them (M, K = G, in = the
//   partial values, sm = G, sk = 1, G = 1) with pidx = the partial indices: the index of an
//   element is then pidx[pidx_off + m*K + k], not k.
// Like torch, the first index of the extreme wins and NaN counts as larger (argmax) / smaller
// (argmin) than everything, so the first NaN is chosen.

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
    __global long* idx, ulong idx_off, __global STORE_TYPE(IN_T)* val, ulong val_off, ulong G,
    ulong chunk, __global const long* pidx, ulong pidx_off) {
  __local V sv[LWS];
  __local long si[LWS];
  const ulong grp = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (grp >= M * G) return;  // uniform over the group
  const ulong m = grp / G;
  const ulong k0 = min(K, (grp - m * G) * chunk), k1 = min(K, k0 + chunk);
  const long base = (long)in_off + (long)m * sm;
  V best = 0;
  long bi = -1;
  for (ulong k = k0 + lid; k < k1; k += LWS) {
    const V x = LOAD(IN_T, in, base + (long)k * sk);
#ifdef PARTS
    const long ki = pidx[pidx_off + m * K + k];
    if (ki < 0) continue;  // an empty chunk's partial
#else
    const long ki = (long)k;
#endif
    if (bi < 0 || beats(best, bi, x, ki)) {
      best = x;
      bi = ki;
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
    idx[idx_off + grp] = si[0];
#ifdef WITH_VALUES
    STORE(IN_T, val, val_off + grp, sv[0]);
#endif
  }
}
