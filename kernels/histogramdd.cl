// torch.histogram and torch.histogramdd (csrc/ops/HistogramDD.cpp): an N x D input, one
// sequence of bin edges per dimension (concatenated: dimension d's num[d] edges start at
// first[d]; meta = {first[D], num[D], hist_stride[D]}).
//
//   hd_edges: the edges of bin-count histograms, as the CPU's linspace computes them in T:
//             step = (hi - lo) / (num - 1), edge k = lo + step * k for k < num / 2, else
//             hi - step * (num - 1 - k). lo, hi per dimension come from lohi ([2, D]: host range
//             values, or the input's minimum and maximum with from_data = 1, which moves equal
//             ones apart by 0.5 as the CPU does and records err_code for a range that is not
//             finite). One work-item per edge of all dimensions (global = total edges).
//   hd_count: one work-item per input row: per dimension, rows outside [edge 0, last edge] and NaN
//             are skipped; the bin is the CPU's: a linear estimate corrected by a search of the
//             neighbouring edges (linear = 1, bin-count histograms) or a binary search
//             (linear = 0, given edges), the last edge belonging to the last bin. Counts go to
//             int counts (atomic_inc); with -DHAS_W the row's weight is added to sums (an atomic
//             compare-exchange loop on the bit pattern, which never spins on NaN).
//
// Every buffer argument is followed by its offset in elements (ulong).
// Build options: -DT=<float tag> [-DHAS_W] [-DINT64_ATOMICS].

#ifdef INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

__kernel void hd_edges(uint D, ulong total, __global const long* meta, ulong meta_off,
                       __global const STORE_TYPE(T)* lohi, ulong lohi_off, int from_data,
                       __global STORE_TYPE(T)* edges, ulong edges_off, __global int* err,
                       int err_code) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  meta += meta_off;
  uint d = 0;
  while (d + 1 < D && (ulong)meta[d + 1] <= g) ++d;
  const long k = (long)g - meta[d];
  const long num = meta[D + d];
  REG_TYPE(T) lo = LOAD(T, lohi, lohi_off + d), hi = LOAD(T, lohi, lohi_off + D + d);
  if (from_data) {
    if (!OCL_ISFINITE(lo) || !OCL_ISFINITE(hi)) {
      atomic_cmpxchg(err, 0, err_code);
      lo = 0;
      hi = 1;
    }
    if (lo == hi) {
      lo = ROUND(T, lo - (REG_TYPE(T))0.5);
      hi = ROUND(T, hi + (REG_TYPE(T))0.5);
    }
  }
  const REG_TYPE(T) step = (hi - lo) / (REG_TYPE(T))(num - 1);
  const REG_TYPE(T) v =
      k < num / 2 ? lo + step * (REG_TYPE(T))k : hi - step * (REG_TYPE(T))(num - 1 - k);
  STORE(T, edges, edges_off + g, v);
}

#ifdef HAS_W
#if REG_BYTES(T) == 8
#ifdef INT64_ATOMICS
inline void hd_add(__global double* p, double v) {
  __global volatile ulong* q = (__global volatile ulong*)p;
  ulong old = atom_cmpxchg(q, (ulong)0, (ulong)0);  // an atomic load
  for (;;) {
    const ulong want = as_ulong(as_double(old) + v);
    const ulong got = atom_cmpxchg(q, old, want);
    if (got == old) break;  // compared as integers: NaN cannot make this spin
    old = got;
  }
}
#endif
#else
inline void hd_add(__global float* p, float v) {
  __global volatile uint* q = (__global volatile uint*)p;
  uint old = atomic_cmpxchg(q, 0u, 0u);  // an atomic load
  for (;;) {
    const uint want = as_uint(as_float(old) + v);
    const uint got = atomic_cmpxchg(q, old, want);
    if (got == old) break;  // compared as integers: NaN cannot make this spin
    old = got;
  }
}
#endif
#endif

// The last position in [lo, hi) whose edge is <= x, plus one (std::upper_bound).
inline long hd_upper(__global const STORE_TYPE(T)* e, long lo, long hi, REG_TYPE(T) x) {
  while (lo < hi) {
    const long mid = (lo + hi) >> 1;
    if (LOAD(T, e, mid) <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

__kernel void hd_count(ulong n, uint D, __global const STORE_TYPE(T)* in, ulong in_off,
                       __global const STORE_TYPE(T)* edges, ulong edges_off,
                       __global const long* meta, ulong meta_off, int linear,
                       __global const STORE_TYPE(T)* w, ulong w_off, long w_s, __global int* counts,
                       ulong counts_off, __global REG_TYPE(T)* sums, ulong sums_off) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  meta += meta_off;
  in += in_off + i * D;
  long at = 0;
  for (uint d = 0; d < D; ++d) {
    __global const STORE_TYPE(T)* e = edges + edges_off + meta[d];
    const long num = meta[D + d];
    const REG_TYPE(T) x = LOAD(T, in, d);
    const REG_TYPE(T) left = LOAD(T, e, 0), right = LOAD(T, e, num - 1);
    if (!(x >= left && x <= right)) return;
    long pos;
    if (linear) {
      pos = (long)((x - left) * (REG_TYPE(T))(num - 1) / (right - left));
      const long lo = max(0L, pos - 1), hi = min(pos + 2, num);
      pos = hd_upper(e, lo, hi, x) - 1;
    } else {
      pos = hd_upper(e, 0, num, x) - 1;
    }
    if (pos == num - 1) pos -= 1;
    at += meta[2 * D + d] * pos;
  }
#ifdef HAS_W
  hd_add(sums + sums_off + at, LOAD(T, w, w_off + (long)i * w_s));
#else
  atomic_inc(counts + counts_off + at);
#endif
}
