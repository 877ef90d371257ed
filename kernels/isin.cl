// isin: membership of each element in a (small) set of test elements, the DispatchStub kernel of
// torch.isin for the sizes where ATen compares every pair (ATen sorts for the others).
//
// isin(e, e_off, n, t, t_off, m, out, out_off, invert)
//   out[i] = (e[i] equals some t[j], j < m) != invert, for i < n; e, t contiguous of one dtype T
//   (compared as REG_TYPE(T): float for half/bfloat16, so NaN is in no set), out bool (uchar).
//   Launch: global = { roundup(n, LWS) }, local = { LWS }.
// Build options: -DT=<tag> (any tag of common.clh); -DLWS=<local size> (default 64).

#ifndef LWS
#define LWS 64
#endif

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void isin(
    __global const STORE_TYPE(T)* e, ulong e_off, ulong n, __global const STORE_TYPE(T)* t,
    ulong t_off, ulong m, __global uchar* out, ulong out_off, int invert) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  e += e_off;
  t += t_off;
  const REG_TYPE(T) v = LOAD(T, e, i);
  int found = 0;
  for (ulong j = 0; j < m && !found; ++j) found = LOAD(T, t, j) == v;
  out[out_off + i] = (uchar)(found != invert);
}
