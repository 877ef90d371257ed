// unique and unique_consecutive over a flat array of values (sorted first for unique).
//   unique_flags:   flags[i] = 1 where a run of equal values starts (i == 0 or v[i] != v[i-1];
//                   NaN never equals anything, -0.0 equals 0.0, as CPU torch compares).
//   (the host scans the flags: pos[i] = the number of runs up to and including i)
//   unique_scatter: for run start i: out[pos[i] - 1] = v[i] (bit-exact), starts[...] = i; and for
//                   every i: inverse[perm[i]] (or inverse[i] without perm) = pos[i] - 1.
//   unique_counts:  counts[p] = starts[p + 1] (or n for the last run) - starts[p].
// One work-item per element (per run for unique_counts).
//
// Build options (set by csrc/ops/Unique.cpp): -DT=<tag> (common.clh), -DBITS_T=<uchar|ushort|
// uint|ulong> (the unsigned type of T's size).
// Arguments (offsets in elements):
//   unique_flags(ulong n, v, v_off, long* flags, flags_off)
//   unique_scatter(ulong n, v, v_off, const long* pos, pos_off, const long* perm, perm_off,
//                  out, out_off, long* starts, starts_off, long* inverse, inverse_off,
//                  int has_perm, int want_inverse, int want_starts)
//   unique_counts(ulong runs, ulong n, const long* starts, starts_off, long* counts, counts_off)

#define VAL_PTR __global STORE_TYPE(T)*

__kernel void unique_flags(ulong n, VAL_PTR v, ulong v_off, __global long* flags,
                           ulong flags_off) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  long f = 1;
  if (i > 0) f = LOAD(T, v, v_off + i) == LOAD(T, v, v_off + i - 1) ? 0 : 1;
  flags[flags_off + i] = f;
}

__kernel void unique_scatter(ulong n, VAL_PTR v, ulong v_off, __global const long* pos,
                             ulong pos_off, __global const long* perm, ulong perm_off,
                             VAL_PTR out, ulong out_off, __global long* starts, ulong starts_off,
                             __global long* inverse, ulong inverse_off, int has_perm,
                             int want_inverse, int want_starts) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  const long p = pos[pos_off + i] - 1;
  if (i == 0 || pos[pos_off + i - 1] != p + 1) {
    ((__global BITS_T*)out)[out_off + p] = ((__global const BITS_T*)v)[v_off + i];
    if (want_starts) starts[starts_off + p] = (long)i;
  }
  if (want_inverse) inverse[inverse_off + (has_perm ? (ulong)perm[perm_off + i] : i)] = p;
}

__kernel void unique_counts(ulong runs, ulong n, __global const long* starts, ulong starts_off,
                            __global long* counts, ulong counts_off) {
  const ulong p = get_global_id(0);
  if (p >= runs) return;
  const long next = p + 1 < runs ? starts[starts_off + p + 1] : (long)n;
  counts[counts_off + p] = next - starts[starts_off + p];
}
