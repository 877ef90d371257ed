// Max and average pooling (fixed windows and adaptive windows), forward and backward, over
// tensors viewed as [N, C, T, H, W] with arbitrary element strides (2-d pooling is T = OT = 1,
// kT = sT = dT = 1, pT = 0; the batch dim of an unbatched input is N = 1).
//
// Build options: -DT_=<float|double|half|bfloat16> (input, output and gradients)
//                -DACC_T=<float|double> (sums; double only for double data)
// Launch (every kernel): one work-item per element of the result (the output for forward kernels,
// grad_input for backward kernels, grad_output for the scatter) as a 3-d grid (w, h, (n, c, t)):
// global = {W' rounded up, H' rounded up, N*C*T'} with the result's extents W', H', T' (the
// kernel skips w >= W', h >= H'); any local size {L0, L1, 1} (the host's enqueue_grid). The
// split of the third id into (n, c, t) is the same for a whole row: no index division per element.
//
// Arguments shared by all kernels, in this order (the POOL_GEOM list):
//   total                          elements of the result (not read: the grid covers them)
//   C, T, H, W, OT, OH, OW         channels, input and output extents
//   kT, kH, kW, sT, sH, sW,        window size, stride, padding, dilation (fixed windows; unused
//   pT, pH, pW, dT, dH, dW         when adaptive != 0)
//   adaptive                       0: fixed windows; 1: adaptive windows, output o along a dim of
//                                  input extent I and output extent O covers
//                                  [floor(o*I/O), ceil((o+1)*I/O))
// then for each tensor its buffer, offset (elements) and 5 strides (elements) N, C, T, H, W.
//
// pool_max_forward(GEOM, in, out, idx): out = max over the window, idx = t*H*W + h*W + w of
//   the maximum (int64). NaN wins (the last NaN of the window), as in CPU torch; a window
//   without a larger value than -inf reports its first element.
// pool_max_backward(GEOM, grad_out, idx, grad_in): a gather: grad_in at (t, h, w) sums grad_out
//   over the windows containing (t, h, w) whose idx names it. No atomics.
// pool_avg_forward(GEOM, count_include_pad, divisor (0: none), in, out): fixed windows average
//   like CPU torch's avg_pool2d/3d (window clipped to input+padding for the pool size, to the
//   input for the sum; an empty window gives 0); adaptive windows give sum / kT / kH / kW.
// pool_avg_backward(GEOM, count_include_pad, divisor, grad_out, grad_in): a gather of
//   grad_out / divisor over the windows containing each input element.

#define ACC REG_TYPE(ACC_T)
#define DATA STORE_TYPE(T_)

#define POOL_GEOM                                                                               \
  ulong total, long C, long T, long H, long W, long OT, long OH, long OW, long kT, long kH,     \
      long kW, long sT, long sH, long sW, long pT, long pH, long pW, long dT, long dH, long dW, \
      int adaptive
#define TENSOR(type, p) \
  __global type *p, ulong p##_off, long p##N, long p##C, long p##T, long p##H, long p##W
#define AT(p, n, c, t, h, w) (p##_off + (n)*p##N + (c)*p##C + (t)*p##T + (h)*p##H + (w)*p##W)

// Adaptive window of output o along a dim: [floor(o*I/O), ceil((o+1)*I/O)).
inline long adaptive_start(long o, long I, long O) { return (o * I) / O; }
inline long adaptive_end(long o, long I, long O) { return ((o + 1) * I + O - 1) / O; }

// The work-item's element (n, c, a, b, d) of a result with extents (., C, A, B, D): d and b from
// the grid's first two ids (returning past the extents), (n, c, a) split from the third.
// Remainders as x - q * s, without `%` next to the `/` (see elementwise.cl: Oclgrind and LLVM's
// freeze).
#define GRID_ELEMENT(C, A, B, D, n, c, a, b, d) \
  const long d = (long)get_global_id(0);        \
  const long b = (long)get_global_id(1);        \
  if (d >= (D) || b >= (B)) return;             \
  const ulong z_ = get_global_id(2);            \
  const ulong q_ = z_ / (ulong)(A);             \
  const long a = (long)(z_ - q_ * (ulong)(A));  \
  const long n = (long)(q_ / (ulong)(C));       \
  const long c = (long)(q_ - (ulong)n * (ulong)(C))

// Max-pool window along one dim for output o: first valid input position *s, end *e (exclusive),
// step *st.
inline void max_window(long o, long I, long O, long k, long s, long p, long d, int adaptive,
                       long* first, long* end, long* step) {
  if (adaptive) {
    *first = adaptive_start(o, I, O);
    *end = adaptive_end(o, I, O);
    *step = 1;
    return;
  }
  long a = o * s - p;
  const long b = min(a + (k - 1) * d + 1, I);
  if (a < 0) a += ((-a + d - 1) / d) * d;
  *first = a;
  *end = b;
  *step = d;
}

__kernel void pool_max_forward(POOL_GEOM, TENSOR(const DATA, in), TENSOR(DATA, out),
                               TENSOR(long, idx)) {
  GRID_ELEMENT(C, OT, OH, OW, n, c, ot, oh, ow);
  long t0, t1, ts, h0, h1, hs, w0, w1, ws;
  max_window(ot, T, OT, kT, sT, pT, dT, adaptive, &t0, &t1, &ts);
  max_window(oh, H, OH, kH, sH, pH, dH, adaptive, &h0, &h1, &hs);
  max_window(ow, W, OW, kW, sW, pW, dW, adaptive, &w0, &w1, &ws);
  ACC best = -INFINITY;
  long best_i = (t0 * H + h0) * W + w0;
  for (long t = t0; t < t1; t += ts)
    for (long h = h0; h < h1; h += hs)
      for (long w = w0; w < w1; w += ws) {
        const ACC v = LOAD(T_, in, AT(in, n, c, t, h, w));
        if (v > best || OCL_ISNAN(v)) {
          best = v;
          best_i = (t * H + h) * W + w;
        }
      }
  STORE(T_, out, AT(out, n, c, ot, oh, ow), CONVERT(T_, best));
  idx[AT(idx, n, c, ot, oh, ow)] = best_i;
}

// The outputs along one dim whose window can contain input position x: [*lo, *hi] (inclusive),
// step 1; for fixed windows the caller still checks the dilation grid.
inline void outputs_containing(long x, long I, long O, long k, long s, long p, long d, int adaptive,
                               long* lo, long* hi) {
  if (adaptive) {
    *lo = (x * O) / I;
    *hi = min(((x + 1) * O + I - 1) / I - 1, O - 1);
    return;
  }
  // x = o*s - p + j*d for some j in [0, k): o*s in [x + p - (k-1)*d, x + p]
  const long num = x + p - (k - 1) * d;
  *lo = num <= 0 ? 0 : (num + s - 1) / s;
  *hi = min((x + p) / s, O - 1);
}

__kernel void pool_max_backward(POOL_GEOM, TENSOR(const DATA, go), TENSOR(const long, idx),
                                TENSOR(DATA, gi)) {
  GRID_ELEMENT(C, T, H, W, n, c, t, h, w);
  const long me = (t * H + h) * W + w;
  long tlo, thi, hlo, hhi, wlo, whi;
  outputs_containing(t, T, OT, kT, sT, pT, dT, adaptive, &tlo, &thi);
  outputs_containing(h, H, OH, kH, sH, pH, dH, adaptive, &hlo, &hhi);
  outputs_containing(w, W, OW, kW, sW, pW, dW, adaptive, &wlo, &whi);
  ACC acc = 0;
  for (long ot = tlo; ot <= thi; ++ot)
    for (long oh = hlo; oh <= hhi; ++oh)
      for (long ow = wlo; ow <= whi; ++ow)
        if (idx[AT(idx, n, c, ot, oh, ow)] == me) acc += LOAD(T_, go, AT(go, n, c, ot, oh, ow));
  STORE(T_, gi, AT(gi, n, c, t, h, w), CONVERT(T_, acc));
}

// pool_max_backward for windows that do not overlap (fixed windows, kernel <= stride and
// dilation 1 in every dim; the host zero-fills grad_in first): one work-item per *output*
// element writes its gradient to the input position its idx names, if that position lies in its
// own window - the same result as the gather, with a quarter of the work-items for 2x2 windows.
// Windows do not overlap, so no two work-items write one element. total = elements of grad_out.
__kernel void pool_max_backward_scatter(POOL_GEOM, TENSOR(const DATA, go), TENSOR(const long, idx),
                                        TENSOR(DATA, gi)) {
  GRID_ELEMENT(C, OT, OH, OW, n, c, ot, oh, ow);
  const long m = idx[AT(idx, n, c, ot, oh, ow)];
  // the window position whose flat index (t*H + h)*W + w is m, found by comparing (no division)
  const long t0 = ot * sT - pT, h0 = oh * sH - pH, w0 = ow * sW - pW;
  for (long t = max(t0, 0L); t < min(t0 + kT, T); ++t)
    for (long h = max(h0, 0L); h < min(h0 + kH, H); ++h) {
      const long w = m - (t * H + h) * W;
      if (w >= max(w0, 0L) && w < min(w0 + kW, W)) {
        STORE(T_, gi, AT(gi, n, c, t, h, w),
              CONVERT(T_, (ACC)LOAD(T_, go, AT(go, n, c, ot, oh, ow))));
        return;
      }
    }
}

// Average-pool window along one dim for output o: summed range [*a, *b) and the range used for
// the pool size with padding [*pa, *pb).
inline void avg_window(long o, long I, long O, long k, long s, long p, int adaptive, long* a,
                       long* b, long* pa, long* pb) {
  if (adaptive) {
    *a = *pa = adaptive_start(o, I, O);
    *b = *pb = adaptive_end(o, I, O);
    return;
  }
  *pa = o * s - p;
  *pb = min(*pa + k, I + p);
  *a = max(*pa, 0L);
  *b = min(*pb, I);
}

// The divisor of output (ot, oh, ow); 0 for an empty window.
inline ACC avg_divisor(long t0, long t1, long pt0, long pt1, long h0, long h1, long ph0, long ph1,
                       long w0, long w1, long pw0, long pw1, int count_include_pad, long divisor) {
  if (t0 >= t1 || h0 >= h1 || w0 >= w1) return 0;
  if (divisor) return (ACC)divisor;
  if (count_include_pad) return (ACC)((pt1 - pt0) * (ph1 - ph0) * (pw1 - pw0));
  return (ACC)((t1 - t0) * (h1 - h0) * (w1 - w0));
}

__kernel void pool_avg_forward(POOL_GEOM, int count_include_pad, long divisor,
                               TENSOR(const DATA, in), TENSOR(DATA, out)) {
  GRID_ELEMENT(C, OT, OH, OW, n, c, ot, oh, ow);
  long t0, t1, pt0, pt1, h0, h1, ph0, ph1, w0, w1, pw0, pw1;
  avg_window(ot, T, OT, kT, sT, pT, adaptive, &t0, &t1, &pt0, &pt1);
  avg_window(oh, H, OH, kH, sH, pH, adaptive, &h0, &h1, &ph0, &ph1);
  avg_window(ow, W, OW, kW, sW, pW, adaptive, &w0, &w1, &pw0, &pw1);
  ACC sum = 0;
  for (long t = t0; t < t1; ++t)
    for (long h = h0; h < h1; ++h)
      for (long w = w0; w < w1; ++w) sum += LOAD(T_, in, AT(in, n, c, t, h, w));
  ACC r;
  if (adaptive) {
    r = sum / (ACC)(t1 - t0) / (ACC)(h1 - h0) / (ACC)(w1 - w0);
  } else {
    const ACC div = avg_divisor(t0, t1, pt0, pt1, h0, h1, ph0, ph1, w0, w1, pw0, pw1,
                                count_include_pad, divisor);
    r = div == 0 ? (ACC)0 : sum / div;
  }
  STORE(T_, out, AT(out, n, c, ot, oh, ow), CONVERT(T_, r));
}

__kernel void pool_avg_backward(POOL_GEOM, int count_include_pad, long divisor,
                                TENSOR(const DATA, go), TENSOR(DATA, gi)) {
  GRID_ELEMENT(C, T, H, W, n, c, t, h, w);
  long tlo, thi, hlo, hhi, wlo, whi;
  outputs_containing(t, T, OT, kT, sT, pT, 1, adaptive, &tlo, &thi);
  outputs_containing(h, H, OH, kH, sH, pH, 1, adaptive, &hlo, &hhi);
  outputs_containing(w, W, OW, kW, sW, pW, 1, adaptive, &wlo, &whi);
  ACC acc = 0;
  for (long ot = tlo; ot <= thi; ++ot) {
    long t0, t1, pt0, pt1;
    avg_window(ot, T, OT, kT, sT, pT, adaptive, &t0, &t1, &pt0, &pt1);
    if (t < t0 || t >= t1) continue;
    for (long oh = hlo; oh <= hhi; ++oh) {
      long h0, h1, ph0, ph1;
      avg_window(oh, H, OH, kH, sH, pH, adaptive, &h0, &h1, &ph0, &ph1);
      if (h < h0 || h >= h1) continue;
      for (long ow = wlo; ow <= whi; ++ow) {
        long w0, w1, pw0, pw1;
        avg_window(ow, W, OW, kW, sW, pW, adaptive, &w0, &w1, &pw0, &pw1);
        if (w < w0 || w >= w1) continue;
        const ACC g = LOAD(T_, go, AT(go, n, c, ot, oh, ow));
        if (adaptive) {
          acc += g / (ACC)(t1 - t0) / (ACC)(h1 - h0) / (ACC)(w1 - w0);
        } else {
          acc += g / avg_divisor(t0, t1, pt0, pt1, h0, h1, ph0, ph1, w0, w1, pw0, pw1,
                                 count_include_pad, divisor);
        }
      }
    }
  }
  STORE(T_, gi, AT(gi, n, c, t, h, w), CONVERT(T_, acc));
}
