// Antialiased bilinear and bicubic resizing (csrc/ops/UpsampleAA.cpp): F.interpolate(...,
// antialias=True), torchvision's resize. Separable filters whose support widens with the
// downscale factor, as ATen computes them (the CPU's _compute_indices_min_size_weights_aa):
//   center = scale * (i + 0.5), support = (taps / 2) * max(scale, 1),
//   xmin = max((long)(center - support + 0.5), 0),
//   xsize = clamp(min((long)(center + support + 0.5), in) - xmin, 0, max_taps),
//   w[j] = filter((j + xmin - center + 0.5) / max(scale, 1)), normalised to sum 1 (if non-zero),
// filter the triangle (bilinear) or Keys' cubic with a = -0.5 (bicubic, Pillow's).
//
//   aa_weights:  one work-item per output index of one axis: xmin, xsize, max_taps weights.
//   aa_forward:  one work-item per output element (x, y, plane) of an enqueue_grid:
//                out = sum_i wy[i] * sum_j wx[j] * in[ymin + i, xmin + j].
//   aa_backward: one work-item per input element: the gather of every output whose window holds
//                it (windows move monotonically, so a binary search finds the first), a
//                deterministic sum without atomics.
//
// Every buffer argument is followed by its offset in elements (ulong).
// Build options: -DT_=<float tag> -DW=<float|double> (the weights' and sums' type)
// [-DFILTER_CUBIC].

inline W aa_filter(W x) {
  x = fabs(x);
#ifdef FILTER_CUBIC
  const W a = (W)-0.5;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
#else
  return x < 1 ? 1 - x : 0;
#endif
}

__kernel void aa_weights(long out_size, long in_size, W scale, W support, long max_taps,
                         __global int* xmin_out, ulong xmin_off, __global int* xsize_out,
                         ulong xsize_off, __global W* w, ulong w_off) {
  const long i = get_global_id(0);
  if (i >= out_size) return;
  const W center = scale * ((W)i + (W)0.5);
  const W invscale = scale >= 1 ? (W)1 / scale : (W)1;
  const long xmin = max((long)(center - support + (W)0.5), 0L);
  const long xsize = clamp(min((long)(center + support + (W)0.5), in_size) - xmin, 0L, max_taps);
  w += w_off + i * max_taps;
  W total = 0;
  for (long j = 0; j < xsize; ++j) {
    const W v = aa_filter(((W)(j + xmin) - center + (W)0.5) * invscale);
    w[j] = v;
    total += v;
  }
  for (long j = 0; j < xsize; ++j) w[j] = total != 0 ? w[j] / total : w[j];
  for (long j = xsize; j < max_taps; ++j) w[j] = 0;
  xmin_out[xmin_off + i] = (int)xmin;
  xsize_out[xsize_off + i] = (int)xsize;
}

__kernel void aa_forward(long channels, long in_h, long in_w, long out_h, long out_w,
                         __global const STORE_TYPE(T_)* in, ulong in_off, long is0, long is1,
                         long is2, long is3, __global STORE_TYPE(T_)* out, ulong out_off, long os0,
                         long os1, long os2, long os3, __global const int* ymin, ulong ymin_off,
                         __global const int* ysize, ulong ysize_off, __global const W* wy,
                         ulong wy_off, long taps_y, __global const int* xmin, ulong xmin_off,
                         __global const int* xsize, ulong xsize_off, __global const W* wx,
                         ulong wx_off, long taps_x) {
  const long x = get_global_id(0), y = get_global_id(1), p = get_global_id(2);
  if (x >= out_w || y >= out_h) return;
  const long n = p / channels, c = p - n * channels;
  const long y0 = ymin[ymin_off + y], ny = ysize[ysize_off + y];
  const long x0 = xmin[xmin_off + x], nx = xsize[xsize_off + x];
  wy += wy_off + y * taps_y;
  wx += wx_off + x * taps_x;
  in += in_off + n * is0 + c * is1;
  W acc = 0;
  for (long i = 0; i < ny; ++i) {
    __global const STORE_TYPE(T_)* row = in + (y0 + i) * is2;
    W r = 0;
    for (long j = 0; j < nx; ++j) r += wx[j] * (W)LOAD(T_, row, (x0 + j) * is3);
    acc += wy[i] * r;
  }
  STORE(T_, out, out_off + n * os0 + c * os1 + y * os2 + x * os3, CONVERT(T_, acc));
}

// The first output index whose window ends after input index v (windows ascend).
inline long aa_first(long v, long out_size, __global const int* xmin, __global const int* xsize) {
  long lo = 0, hi = out_size;
  while (lo < hi) {
    const long mid = (lo + hi) >> 1;
    if ((long)xmin[mid] + (long)xsize[mid] > v)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

__kernel void aa_backward(long channels, long in_h, long in_w, long out_h, long out_w,
                          __global const STORE_TYPE(T_)* go, ulong go_off, long gs0, long gs1,
                          long gs2, long gs3, __global STORE_TYPE(T_)* gi, ulong gi_off, long is0,
                          long is1, long is2, long is3, __global const int* ymin, ulong ymin_off,
                          __global const int* ysize, ulong ysize_off, __global const W* wy,
                          ulong wy_off, long taps_y, __global const int* xmin, ulong xmin_off,
                          __global const int* xsize, ulong xsize_off, __global const W* wx,
                          ulong wx_off, long taps_x) {
  const long x = get_global_id(0), y = get_global_id(1), p = get_global_id(2);
  if (x >= in_w || y >= in_h) return;
  const long n = p / channels, c = p - n * channels;
  ymin += ymin_off;
  ysize += ysize_off;
  xmin += xmin_off;
  xsize += xsize_off;
  wy += wy_off;
  wx += wx_off;
  go += go_off + n * gs0 + c * gs1;
  const long fy = aa_first(y, out_h, ymin, ysize), fx = aa_first(x, out_w, xmin, xsize);
  W acc = 0;
  for (long oy = fy; oy < out_h && ymin[oy] <= y; ++oy) {
    const long ky = y - ymin[oy];
    if (ky >= ysize[oy]) continue;
    const W a = wy[oy * taps_y + ky];
    W r = 0;
    for (long ox = fx; ox < out_w && xmin[ox] <= x; ++ox) {
      const long kx = x - xmin[ox];
      if (kx >= xsize[ox]) continue;
      r += wx[ox * taps_x + kx] * (W)LOAD(T_, go, oy * gs2 + ox * gs3);
    }
    acc += a * r;
  }
  STORE(T_, gi, gi_off + n * is0 + c * is1 + y * is2 + x * is3, CONVERT(T_, acc));
}
