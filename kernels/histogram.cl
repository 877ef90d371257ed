// histc and bincount: how many elements fall into each bin, or (bincount with weights) the sum
// of their weights. Work-groups of LWS work-items stride over the input (global = G * LWS);
// counts go to a per-group histogram in local memory when there are at most LOCAL_BINS bins,
// then are added to the global counts (int, converted to the result dtype by the host).
//
// histc bins like CPU torch's linear-interpolation histogram (Histogram.cpp): an element x in
// [lo, hi] goes to bin (long)((x - lo) * bins / (hi - lo)), each step rounded to T as the CPU
// computes in T, and x == hi to the last bin; NaN and elements outside are skipped. lo and hi are
// host arguments (range_on_device = 0), or the input's minimum and maximum read from
// range_lo[0] / range_hi[0] (range_on_device = 1), moved apart by 1 when equal as the CPU does;
// a range that is not finite records err_code in *err (runtime/DeviceError.h) and counts nothing.
//
// Build options (set by csrc/ops/Histogram.cpp):
//   -DT=<tag>               input type (common.clh)
//   -DHISTC                 histc's build (T floating)
//   -DW_T=<float|double>    bincount's weights (and sums) type
//   -DLWS=<k> -DLOCAL_BINS=<k>
//   -DINT64_ATOMICS         the device has cl_khr_int64_base_atomics (double weights)
// Arguments (offsets in elements):
//   histc(ulong n, in, in_off, range_lo, lo_off, range_hi, hi_off, int range_on_device,
//         ACC lo, ACC hi, uint bins, int* counts, counts_off, int* err, int err_code)
//         (ACC: double for T = double, else float)
//   bincount_counts(ulong n, in, in_off, uint bins, int* counts, counts_off)
//   bincount_weights(ulong n, in, in_off, weights, w_off, W_T* sums, sums_off)

#ifdef INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#define ACC REG_TYPE(T)
#define IN_PTR __global const STORE_TYPE(T)*

// The per-group histogram: cleared, then filled by count(), then added to the global counts.
#define LOCAL_HIST_BEGIN(bins)                                             \
  __local int hist[LOCAL_BINS];                                            \
  const uint lid = (uint)get_local_id(0);                                  \
  const bool local_hist = (bins) <= LOCAL_BINS;                            \
  if (local_hist)                                                          \
    for (uint k = lid; k < (bins); k += LWS) hist[k] = 0;                  \
  barrier(CLK_LOCAL_MEM_FENCE)

#define COUNT(pos)                   \
  do {                               \
    if (local_hist)                  \
      atomic_inc(&hist[pos]);        \
    else                             \
      atomic_inc(&counts[pos]);      \
  } while (0)

#define LOCAL_HIST_END(bins)                              \
  barrier(CLK_LOCAL_MEM_FENCE);                           \
  if (local_hist)                                         \
    for (uint k = lid; k < (bins); k += LWS)              \
      if (hist[k] != 0) atomic_add(&counts[k], hist[k])

#ifdef HISTC
__kernel void histc(ulong n, IN_PTR in, ulong in_off, IN_PTR range_lo, ulong lo_off,
                    IN_PTR range_hi, ulong hi_off, int range_on_device, ACC lo, ACC hi, uint bins,
                    __global int* counts, ulong counts_off, __global int* err, int err_code) {
  in += in_off;
  counts += counts_off;
  if (range_on_device) {
    lo = LOAD(T, range_lo, lo_off);
    hi = LOAD(T, range_hi, hi_off);
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    if (!OCL_ISFINITE(lo) || !OCL_ISFINITE(hi)) {
      if (get_global_id(0) == 0) atomic_cmpxchg(err, 0, err_code);
      return;  // every work-item of every group returns here: no barrier is reached
    }
    lo = ROUND(T, lo);  // the edges as the CPU's linspace in T
    hi = ROUND(T, hi);
  }
  LOCAL_HIST_BEGIN(bins);
  const ACC width = ROUND(T, hi - lo);
  const ACC scale = ROUND(T, (ACC)bins);
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const ACC x = LOAD(T, in, i);
    if (!(x >= lo && x <= hi)) continue;
    const ACC q = ROUND(T, ROUND(T, ROUND(T, x - lo) * scale) / width);
    long pos = (long)q;
    pos = clamp(pos, 0L, (long)bins - 1);  // x == hi lands on bins
    COUNT(pos);
  }
  LOCAL_HIST_END(bins);
}
#endif  // HISTC

__kernel void bincount_counts(ulong n, IN_PTR in, ulong in_off, uint bins, __global int* counts,
                              ulong counts_off) {
  in += in_off;
  counts += counts_off;
  LOCAL_HIST_BEGIN(bins);
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const long pos = (long)LOAD(T, in, i);  // in [0, bins): the host checked min and max
    COUNT(pos);
  }
  LOCAL_HIST_END(bins);
}

#ifdef W_T
inline void add_weight(__global W_T* p, W_T v) {
#if defined(INT64_ATOMICS) && defined(TORCH_OCL_FP64)
  if (sizeof(W_T) == 8) {
    volatile __global ulong* q = (volatile __global ulong*)p;
    ulong old = atom_cmpxchg(q, (ulong)0, (ulong)0);  // an atomic load (a plain one races)
    while (true) {
      const ulong want = as_ulong(as_double(old) + (double)v);
      const ulong got = atom_cmpxchg(q, old, want);
      if (got == old) return;
      old = got;
    }
  }
#endif
  volatile __global uint* q = (volatile __global uint*)p;
  uint old = atomic_cmpxchg(q, 0u, 0u);  // an atomic load (a plain one races)
  while (true) {
    const uint want = as_uint(as_float(old) + (float)v);
    const uint got = atomic_cmpxchg(q, old, want);
    if (got == old) return;
    old = got;
  }
}

__kernel void bincount_weights(ulong n, IN_PTR in, ulong in_off, __global const W_T* w,
                               ulong w_off, __global W_T* sums, ulong sums_off) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    add_weight(sums + sums_off + (long)LOAD(T, in, in_off + i), w[w_off + i]);
}
#endif
