// Sorting along one dimension (sort; through it argsort, msort, topk, kthvalue, median, mode,
// unique), and picking from sorted rows (median, mode).
//
// The input is contiguous and viewed as (outer, n, inner): rows = outer * inner rows of n
// elements; row r = (o, i) has its element j at (o * n + j) * inner + i. Elements move as raw
// bits (KEY_T) with their position in the row (uint), so values come out bit-exact. Comparisons
// map the bits to an unsigned key in CPU torch's order: NaN above everything (all NaNs equal),
// -0.0 equal to 0.0; a descending sort inverts the key. Equal keys order by position, so every
// sort is stable (and all (key, position) pairs of a row are distinct).
//
//   sort_local: each work-group sorts tiles of TILE elements in local memory with a bitonic
//     network over blocks of P elements (P a power of two, runtime):
//       n <= TILE: P = the power of two >= n, a tile holds TILE / P rows, padded with sentinels
//                  (position UINT_MAX, after everything); the sorted rows go to the outputs
//                  (final_out = 1). global = ceil(rows / (TILE / P)) * LWS.
//       n >  TILE: P = TILE, tiles_per_row = ceil(n / TILE) tiles per row; each tile is sorted
//                  into runs of TILE elements in the row-major run buffers (final_out = 0).
//                  global = rows * tiles_per_row * LWS.
//   merge_runs: merges pairs of sorted runs of `run` elements (merge path: each work-item finds
//     where its EPT outputs start by a binary search, then merges EPT elements), into the other
//     run buffers, or into the outputs on the last pass (final_out = 1).
//     global = rows * ceil(n / EPT) rounded up to the work-group size.
//   topk_select: the first k (k <= KMAX) of each row's sort without sorting the row: one
//     work-group of TOPK_LWS = TILE / KMAX work-items per row; each work-item keeps the first k
//     of its elements (j = lid, lid + TOPK_LWS, ...) in private memory, then the work-group
//     sorts all TILE candidates in local memory and writes the first k to the outputs, laid
//     out (outer, k, inner). global = rows * TOPK_LWS.
//   median_pick: per row of sorted values (ascending), the median: the first NaN if there is one
//     (ignore_nan = 0), else the lower middle element; ignoring NaNs (nanmedian) the lower middle
//     of the non-NaN prefix. One work-item per row.
//   mode_pick: per row of sorted values, the smallest value among the most frequent ones, with
//     the largest position among its occurrences (NaNs never equal each other). One work-item
//     per row.
//
// Build options (set by csrc/ops/Sort.cpp):
//   -DT=<tag>                  element type (common.clh), for the pick kernels
//   -DKEY_BITS=<8|16|32|64>    element size in bits
//   -DKEY_FLOAT -DKEY_INF=<bits of +inf>  floating types;  -DKEY_SIGNED  signed integers;
//                              neither: unsigned integers and bool
//   -DLWS=<k> -DTILE=<k>       work-group size and tile size (powers of two, TILE >= 2 * LWS)
// Arguments (offsets in elements):
//   sort_local(ulong rows, ulong n, ulong inner, ulong P, ulong tiles_per_row, int desc,
//              src, src_off, out_vals, off, long* out_idx, off, KEY_T* run_keys, off,
//              uint* run_pos, off, int final_out)
//   merge_runs(ulong rows, ulong n, ulong inner, ulong run, int desc, const KEY_T* in_keys, off,
//              const uint* in_pos, off, KEY_T* run_keys, off, uint* run_pos, off, out_vals, off,
//              long* out_idx, off, int final_out)
//   median_pick(ulong rows, ulong n, ulong inner, vals, off, const long* idx, off, out_vals, off,
//               long* out_idx, off, int ignore_nan)
//   mode_pick(ulong rows, ulong n, ulong inner, vals, off, const long* idx, off, out_vals, off,
//             long* out_idx, off)
//   topk_select(ulong rows, ulong n, ulong inner, uint k, int desc, src, src_off, out_vals, off,
//               long* out_idx, off)
// The pick kernels write row r's result at r (rows in (outer, inner) order).

#if KEY_BITS == 64
#define KEY_T ulong
#define BITS_T ulong
#define KEY_MASK 0xffffffffffffffffUL
#define KEY_SIGN 0x8000000000000000UL
#else
#define KEY_T uint
#if KEY_BITS == 32
#define BITS_T uint
#define KEY_MASK 0xffffffffu
#elif KEY_BITS == 16
#define BITS_T ushort
#define KEY_MASK 0xffffu
#else
#define BITS_T uchar
#define KEY_MASK 0xffu
#endif
#define KEY_SIGN ((KEY_MASK >> 1) + 1u)
#endif

#define SENTINEL 0xffffffffu
#define EPT 8  // merge_runs: outputs per work-item
#define KMAX 16  // topk_select: the largest k
#define TOPK_LWS (TILE / KMAX)

// The order key of an element's bits (see the top of the file).
inline KEY_T order_key(KEY_T raw, int desc) {
  KEY_T k;
#if defined(KEY_FLOAT)
  const KEY_T mag = raw & (KEY_SIGN - 1);
  if (mag > (KEY_T)(KEY_INF))
    k = KEY_MASK;  // NaN: above +inf
  else if (mag == 0)
    k = KEY_SIGN;  // -0.0 == 0.0
  else
    k = (raw & KEY_SIGN) ? (~raw & KEY_MASK) : (raw | KEY_SIGN);
#elif defined(KEY_SIGNED)
  k = raw ^ KEY_SIGN;
#else
  k = raw;
#endif
  return desc ? (~k & KEY_MASK) : k;
}

// (key, position) order; a sentinel (position UINT_MAX) is after everything.
inline bool before(KEY_T ka, uint pa, KEY_T kb, uint pb) {
  return ka < kb || (ka == kb && pa < pb);
}

inline ulong elem(ulong row, ulong j, ulong n, ulong inner) {
  const ulong o = row / inner;
  return (o * n + j) * inner + (row - o * inner);
}

// Sorts each block of p slots (a power of two) of the tile in local memory, by (key, position),
// with a bitonic network run by `items` work-items (lid < items); a barrier ends every stage.
inline void bitonic(__local KEY_T* raw, __local uint* pos, uint p, int desc, uint lid,
                    uint items) {
  for (uint size = 2; size <= p; size <<= 1) {
    for (uint stride = size >> 1; stride > 0; stride >>= 1) {
      for (uint q = lid; q < TILE / 2; q += items) {
        const uint a = 2 * q - (q & (stride - 1));
        const uint b = a + stride;
        const bool asc = size == p || (a & size) == 0;
        const uint pa = pos[a], pb = pos[b];
        const KEY_T ra = raw[a], rb = raw[b];
        const KEY_T ka = pa == SENTINEL ? KEY_MASK : order_key(ra, desc);
        const KEY_T kb = pb == SENTINEL ? KEY_MASK : order_key(rb, desc);
        if (before(kb, pb, ka, pa) == asc) {
          raw[a] = rb;
          raw[b] = ra;
          pos[a] = pb;
          pos[b] = pa;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}

__kernel void sort_local(ulong rows, ulong n, ulong inner, ulong P, ulong tiles_per_row, int desc,
                         __global const BITS_T* src, ulong src_off, __global BITS_T* out_vals,
                         ulong out_vals_off, __global long* out_idx, ulong out_idx_off,
                         __global KEY_T* run_keys, ulong run_keys_off, __global uint* run_pos,
                         ulong run_pos_off, int final_out) {
  __local KEY_T raw[TILE];
  __local uint pos[TILE];
  src += src_off;
  out_vals += out_vals_off;
  out_idx += out_idx_off;
  run_keys += run_keys_off;
  run_pos += run_pos_off;
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const uint p = (uint)P;
  // Slot k of the tile holds (row, j): several rows per tile when P < TILE, else part of one.
  ulong row0, j0;
  if (p < TILE) {
    row0 = g * (TILE / p);
    j0 = 0;
  } else {
    row0 = g / tiles_per_row;
    j0 = (g - row0 * tiles_per_row) * TILE;
  }
  for (uint k = lid; k < TILE; k += LWS) {
    const ulong row = row0 + k / p;
    const ulong j = j0 + (k & (p - 1));
    if (row < rows && j < n) {
      raw[k] = (KEY_T)src[elem(row, j, n, inner)];
      pos[k] = (uint)j;
    } else {
      raw[k] = 0;
      pos[k] = SENTINEL;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  bitonic(raw, pos, p, desc, lid, LWS);
  for (uint k = lid; k < TILE; k += LWS) {
    const ulong row = row0 + k / p;
    const ulong j = j0 + (k & (p - 1));
    if (row < rows && j < n) {
      if (final_out) {
        const ulong e = elem(row, j, n, inner);
        out_vals[e] = (BITS_T)raw[k];
        out_idx[e] = (long)pos[k];
      } else {
        run_keys[row * n + j] = raw[k];
        run_pos[row * n + j] = pos[k];
      }
    }
  }
}

__kernel void merge_runs(ulong rows, ulong n, ulong inner, ulong run, int desc,
                         __global const KEY_T* in_keys, ulong in_keys_off,
                         __global const uint* in_pos, ulong in_pos_off, __global KEY_T* run_keys,
                         ulong run_keys_off, __global uint* run_pos, ulong run_pos_off,
                         __global BITS_T* out_vals, ulong out_vals_off, __global long* out_idx,
                         ulong out_idx_off, int final_out) {
  in_keys += in_keys_off;
  in_pos += in_pos_off;
  run_keys += run_keys_off;
  run_pos += run_pos_off;
  out_vals += out_vals_off;
  out_idx += out_idx_off;
  const ulong per_row = (n + EPT - 1) / EPT;
  const ulong gid = get_global_id(0);
  if (gid >= rows * per_row) return;
  const ulong row = gid / per_row;
  const ulong p0 = (gid - row * per_row) * EPT;
  const ulong a0 = p0 / (2 * run) * (2 * run);
  const ulong a1 = min(a0 + run, n), b1 = min(a0 + 2 * run, n);
  const ulong lenA = a1 - a0, lenB = b1 - a1, d = p0 - a0;
  __global const KEY_T* keys = in_keys + row * n;
  __global const uint* poss = in_pos + row * n;
  // How many of the first d outputs come from A.
  // lo = max(d - lenB, 0) in signed arithmetic: the unsigned form `d > lenB ? d - lenB : 0`
  // became LLVM's usub.sat intrinsic, which Oclgrind cannot run (merge_runs failed to load)
  ulong lo = (ulong)max((long)d - (long)lenB, 0L), hi = min(d, lenA);
  while (lo < hi) {
    const ulong mid = (lo + hi) / 2;
    const ulong ia = a0 + mid, ib = a1 + (d - mid - 1);
    if (before(order_key(keys[ia], desc), poss[ia], order_key(keys[ib], desc), poss[ib]))
      lo = mid + 1;
    else
      hi = mid;
  }
  ulong ia = a0 + lo, ib = a1 + (d - lo);
  const ulong end = min(p0 + EPT, b1);
  for (ulong q = p0; q < end; ++q) {
    bool take_a;
    if (ib >= b1)
      take_a = true;
    else if (ia >= a1)
      take_a = false;
    else
      take_a = before(order_key(keys[ia], desc), poss[ia], order_key(keys[ib], desc), poss[ib]);
    const ulong from = take_a ? ia++ : ib++;
    if (final_out) {
      const ulong e = elem(row, q, n, inner);
      out_vals[e] = (BITS_T)keys[from];
      out_idx[e] = (long)poss[from];
    } else {
      run_keys[row * n + q] = keys[from];
      run_pos[row * n + q] = poss[from];
    }
  }
}


__kernel __attribute__((reqd_work_group_size(TOPK_LWS, 1, 1))) void topk_select(
    ulong rows, ulong n, ulong inner, uint k, int desc, __global const BITS_T* src,
    ulong src_off, __global BITS_T* out_vals, ulong out_vals_off, __global long* out_idx,
    ulong out_idx_off) {
  __local KEY_T raw[TILE];
  __local uint pos[TILE];
  src += src_off;
  out_vals += out_vals_off;
  out_idx += out_idx_off;
  const ulong row = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  // This work-item's first k elements, in order: keys, bits and positions.
  KEY_T bk[KMAX], br[KMAX];
  uint bp[KMAX];
  uint count = 0;
  for (ulong j = lid; j < n; j += TOPK_LWS) {
    const KEY_T r = (KEY_T)src[elem(row, j, n, inner)];
    const KEY_T kk = order_key(r, desc);
    const uint jj = (uint)j;
    if (count == k && !before(kk, jj, bk[k - 1], bp[k - 1])) continue;
    uint t = count < k ? count++ : k - 1;
    while (t > 0 && before(kk, jj, bk[t - 1], bp[t - 1])) {
      bk[t] = bk[t - 1];
      br[t] = br[t - 1];
      bp[t] = bp[t - 1];
      --t;
    }
    bk[t] = kk;
    br[t] = r;
    bp[t] = jj;
  }
  for (uint t = 0; t < KMAX; ++t) {
    raw[lid * KMAX + t] = t < count ? br[t] : 0;
    pos[lid * KMAX + t] = t < count ? bp[t] : SENTINEL;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  bitonic(raw, pos, TILE, desc, lid, TOPK_LWS);
  for (uint t = lid; t < k; t += TOPK_LWS) {
    const ulong e = elem(row, t, k, inner);
    out_vals[e] = (BITS_T)raw[t];
    out_idx[e] = (long)pos[t];
  }
}

#define VAL_PTR __global STORE_TYPE(T)*
#define IS_NAN(x) ((x) != (x))

__kernel void median_pick(ulong rows, ulong n, ulong inner, VAL_PTR vals, ulong vals_off,
                          __global const long* idx, ulong idx_off, VAL_PTR out_vals,
                          ulong out_vals_off, __global long* out_idx, ulong out_idx_off,
                          int ignore_nan) {
  const ulong row = get_global_id(0);
  if (row >= rows) return;
  // NaNs sort last: the number of non-NaN elements by a binary search.
  ulong lo = 0, hi = n;
  while (lo < hi) {
    const ulong mid = (lo + hi) / 2;
    if (IS_NAN(LOAD(T, vals, vals_off + elem(row, mid, n, inner))))
      hi = mid;
    else
      lo = mid + 1;
  }
  ulong j;
  if (ignore_nan)
    j = lo == 0 ? 0 : (lo - 1) / 2;
  else
    j = lo < n ? lo : (n - 1) / 2;
  const ulong e = elem(row, j, n, inner);
  // Copied as bits through the value type: exact for every tag (a NaN keeps its payload).
  ((__global BITS_T*)out_vals)[out_vals_off + row] = ((__global BITS_T*)vals)[vals_off + e];
  out_idx[out_idx_off + row] = idx[idx_off + e];
}

__kernel void mode_pick(ulong rows, ulong n, ulong inner, VAL_PTR vals, ulong vals_off,
                        __global const long* idx, ulong idx_off, VAL_PTR out_vals,
                        ulong out_vals_off, __global long* out_idx, ulong out_idx_off) {
  const ulong row = get_global_id(0);
  if (row >= rows) return;
  ulong best = 0, best_count = 0, start = 0;
  REG_TYPE(T) v = LOAD(T, vals, vals_off + elem(row, 0, n, inner));
  for (ulong j = 0; j < n; ++j) {
    const bool last = j + 1 == n;
    REG_TYPE(T) w = v;
    if (!last) w = LOAD(T, vals, vals_off + elem(row, j + 1, n, inner));
    if (last || !(v == w)) {
      if (j + 1 - start > best_count) {
        best_count = j + 1 - start;
        best = j;
      }
      start = j + 1;
    }
    v = w;
  }
  const ulong e = elem(row, best, n, inner);
  ((__global BITS_T*)out_vals)[out_vals_off + row] = ((__global BITS_T*)vals)[vals_off + e];
  out_idx[out_idx_off + row] = idx[idx_off + e];
}
