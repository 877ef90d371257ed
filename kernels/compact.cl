// Stream compaction: the elements, or the positions, where a flag array is non-zero, in order
// (masked_select, nonzero). Two passes over the same geometry: global = G * LWS, local = LWS;
// work-group g owns the flags [g * chunk, min(n, (g + 1) * chunk)).
//   count_blocks: counts[g] = how many flags of group g are non-zero;
//   compact:      the host has turned counts into offsets (exclusive prefix sums); group g writes
//                 its selected items from position offsets[g] on, in order, a tile of LWS flags
//                 at a time with a prefix sum in local memory.
//
// Build options (set by csrc/ops/Compact.cpp):
//   -DFLAG_T=<tag>        type of the flags (see common.clh); NaN counts as non-zero, -0.0 as zero
//   -DLWS=<k>             the work-group size, a power of two
//   -DSELECT_T=<tag>      compact copies the selected elements of `src` (same indices as the flags)
//   -DINDEX_NDIM=<0..8>   or compact writes the coordinates of each selected position as INDEX_NDIM
//                         longs (row-major, outermost dimension first)
// Arguments:
//   count_blocks(ulong n, ulong chunk, flags, ulong flags_off, __global long* counts,
//                ulong counts_off)
//   compact(ulong n, ulong chunk, flags, ulong flags_off, __global const long* offsets,
//           ulong offsets_off, out, ulong out_off, then src, ulong src_off (SELECT_T) or
//           long8 sizes, innermost first (INDEX_NDIM))
// Offsets are in elements.

#define FLAG_PTR __global const STORE_TYPE(FLAG_T)*
#define IS_SET(i) (LOAD(FLAG_T, flags, flags_off + (i)) != 0)

__kernel void count_blocks(ulong n, ulong chunk, FLAG_PTR flags, ulong flags_off,
                           __global long* counts, ulong counts_off) {
  __local long partial[LWS];
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const ulong start = g * chunk;
  const ulong end = min(n, start + chunk);
  long c = 0;
  for (ulong i = start + lid; i < end; i += LWS) c += IS_SET(i) ? 1 : 0;
  partial[lid] = c;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) counts[counts_off + g] = partial[0];
}

#if defined(SELECT_T)
#define OUT_PARAMS                                                                           \
  __global STORE_TYPE(SELECT_T)*out, ulong out_off, __global const STORE_TYPE(SELECT_T)*src, \
      ulong src_off
#elif defined(INDEX_NDIM)
#define OUT_PARAMS __global long *out, ulong out_off, long8 sizes
#endif

#ifdef OUT_PARAMS
__kernel void compact(ulong n, ulong chunk, FLAG_PTR flags, ulong flags_off,
                      __global const long* offsets, ulong offsets_off, OUT_PARAMS) {
  __local uint scan[2][LWS];
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const ulong start = g * chunk;
  const ulong end = min(n, start + chunk);
  ulong written = (ulong)offsets[offsets_off + g];
#ifdef INDEX_NDIM
  const long sz[8] = {sizes.s0, sizes.s1, sizes.s2, sizes.s3,
                      sizes.s4, sizes.s5, sizes.s6, sizes.s7};
#endif
  for (ulong base = start; base < end; base += LWS) {
    const ulong i = base + lid;
    const uint f = (i < end && IS_SET(i)) ? 1u : 0u;
    // Inclusive prefix sum of the tile's flags (Hillis-Steele, two buffers).
    int cur = 0;
    scan[0][lid] = f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < LWS; s <<= 1) {
      const uint v = scan[cur][lid] + (lid >= s ? scan[cur][lid - s] : 0u);
      scan[1 - cur][lid] = v;
      cur = 1 - cur;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (f) {
      const ulong pos = written + scan[cur][lid] - 1;
#if defined(SELECT_T)
      out[out_off + pos] = src[src_off + i];
#else
      // Coordinates from the linear index, innermost first; quotient and remainder without `%`
      // (see elementwise.cl: Oclgrind and LLVM's freeze).
      long rem = (long)i;
      for (int d = 0; d < INDEX_NDIM; ++d) {
        const long q = rem / sz[d];
        out[out_off + pos * INDEX_NDIM + (INDEX_NDIM - 1 - d)] = rem - q * sz[d];
        rem = q;
      }
#endif
    }
    written += scan[cur][LWS - 1];
    barrier(CLK_LOCAL_MEM_FENCE);  // the next tile overwrites scan[]
  }
}
#endif  // OUT_PARAMS
