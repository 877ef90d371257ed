// torch.segment_reduce and its backward (csrc/ops/SegmentReduce.cpp). The data is viewed as
// [outer, len, inner] around the reduced axis; segment s of row o covers [off[o, s], off[o, s + 1])
// (off: [outer, S + 1], from the lengths' cumulative sum or the given offsets).
//
//   seg_forward:  one work-item per output element (i, s, o) of an enqueue_grid (i fastest, so a
//                 group reads consecutive inner elements). reduce: 0 sum, 1 mean, 2 max, 3 min,
//                 4 prod, from `init` (the caller's initial value, or 0 / 0 / lowest / highest /
//                 1), rounded to T after every step as the CPU computes in T; max and min
//                 propagate NaN; mean divides by the length, and an empty segment's mean is
//                 `init` when one was given, else NaN. With check = 1 a segment outside [0, len],
//                 a negative length or lengths that do not add up to len record err_code.
//   seg_backward: one work-item per output element, writing its segment's input gradients (the
//                 result is zeroed first): sum grad, mean grad / length, max/min grad to every
//                 element equal to the output (or NaN) and, with two or more, the positive ones
//                 divided by their count (the CPU's rule), prod grad * out / x, or for x == 0 or
//                 NaN grad times the product of the others (from `init`).
//
// Every buffer argument is followed by its offset in elements (ulong).
// Build options: -DT=<float tag> -DOFF_T=<long|int>.

__kernel void seg_forward(long outer, long len, long inner, long segs,
                          __global const STORE_TYPE(T)* x, ulong x_off, __global const OFF_T* off,
                          ulong off_off, int reduce, REG_TYPE(T) init, int has_init, int check,
                          __global STORE_TYPE(T)* out, ulong out_off, __global int* err,
                          int err_code) {
  const long i = get_global_id(0), s = get_global_id(1), o = get_global_id(2);
  if (i >= inner || s >= segs) return;
  off += off_off + o * (segs + 1);
  long start = (long)off[s], end = (long)off[s + 1];
  if (check && (start < 0 || end < start || end > len || (s == segs - 1 && end != len) ||
                (s == 0 && start != 0))) {
    atomic_cmpxchg(err, 0, err_code);
  }
  start = clamp(start, 0L, len);
  end = clamp(end, start, len);
  x += x_off + o * len * inner + i;
  REG_TYPE(T) acc = init;
  for (long j = start; j < end; ++j) {
    const REG_TYPE(T) v = LOAD(T, x, j * inner);
    if (reduce == 0 || reduce == 1) {
      acc = ROUND(T, acc + v);
    } else if (reduce == 2) {
      acc = OCL_ISNAN(v) ? v : (acc < v ? v : acc);
    } else if (reduce == 3) {
      acc = OCL_ISNAN(v) ? v : (v < acc ? v : acc);
    } else {
      acc = ROUND(T, acc * v);
    }
  }
  if (reduce == 1) {
    if (end > start)
      acc = ROUND(T, acc / (REG_TYPE(T))(end - start));
    else if (!has_init)
      acc = NAN;
  }
  STORE(T, out, out_off + (o * segs + s) * inner + i, acc);
}

__kernel void seg_backward(long outer, long len, long inner, long segs,
                           __global const STORE_TYPE(T)* x, ulong x_off, __global const OFF_T* off,
                           ulong off_off, int reduce, REG_TYPE(T) init,
                           __global const STORE_TYPE(T)* grad, ulong grad_off,
                           __global const STORE_TYPE(T)* res, ulong res_off,
                           __global STORE_TYPE(T)* gi, ulong gi_off) {
  const long i = get_global_id(0), s = get_global_id(1), o = get_global_id(2);
  if (i >= inner || s >= segs) return;
  off += off_off + o * (segs + 1);
  long start = clamp((long)off[s], 0L, len);
  long end = clamp((long)off[s + 1], start, len);
  const ulong at = (o * segs + s) * inner + i;
  const REG_TYPE(T) g = LOAD(T, grad, grad_off + at);
  const REG_TYPE(T) r = LOAD(T, res, res_off + at);
  x += x_off + o * len * inner + i;
  gi += gi_off + o * len * inner + i;
  if (reduce == 0 || reduce == 1) {
    const REG_TYPE(T) v = reduce == 1 ? ROUND(T, g / (REG_TYPE(T))(end - start)) : g;
    for (long j = start; j < end; ++j) STORE(T, gi, j * inner, v);
  } else if (reduce == 2 || reduce == 3) {
    long count = 0;
    for (long j = start; j < end; ++j) {
      const REG_TYPE(T) v = LOAD(T, x, j * inner);
      if (OCL_ISNAN(v) || v == r) {
        STORE(T, gi, j * inner, g);
        ++count;
      }
    }
    if (count >= 2 && g > 0) {
      const REG_TYPE(T) share = ROUND(T, g / (REG_TYPE(T))count);
      for (long j = start; j < end; ++j) {
        const REG_TYPE(T) v = LOAD(T, x, j * inner);
        if (OCL_ISNAN(v) || v == r) STORE(T, gi, j * inner, share);
      }
    }
  } else {
    for (long j = start; j < end; ++j) {
      const REG_TYPE(T) v = LOAD(T, x, j * inner);
      REG_TYPE(T) d;
      if (OCL_ISNAN(v) || v == 0) {
        REG_TYPE(T) p = init;
        for (long k = start; k < end; ++k)
          if (k != j) p = ROUND(T, p * LOAD(T, x, k * inner));
        d = ROUND(T, g * p);
      } else {
        d = ROUND(T, ROUND(T, g * r) / v);
      }
      STORE(T, gi, j * inner, d);
    }
  }
}
