// Upsampling (interpolate) forward and backward: nearest, nearest-exact, linear (1-d linear,
// bilinear, trilinear) and cubic (bicubic) over tensors viewed as [N, C, D, H, W] with arbitrary
// element strides. `spatial` (1, 2 or 3) says which of D, H, W are interpolated; the others are
// absent (extent 1, a single tap of weight 1).
//
// Source positions follow ATen's UpSample.h exactly (nearest_idx, nearest_exact_idx,
// compute_source_index_and_lambda with guard_index_and_lambda, the cubic coefficients with
// A = -0.75), with the CPU's precisions: nearest scales in float, the others in ACC_T (float,
// double for double data). Every tap is its own term, as on the CPU, so a zero weight times an
// infinity gives NaN there and here alike.
//
// upsample_forward: one work-item per output element, in logical [N, C, OD, OH, OW] order.
// upsample_backward: one work-item per grad_input element, in logical [N, C, D, H, W] order: a
//   gather over the output positions that read it (found by binary search: the source index is
//   monotonic in the output position), so sums are deterministic and no atomics are needed.
//
// Build options: -DT_=<tag> (data; a floating tag, or any tag for the nearest modes)
//   -DACC_T=<float|double> -DMODE_NEAREST | -DMODE_NEAREST_EXACT | -DMODE_LINEAR | -DMODE_CUBIC
// Arguments (both kernels): ulong total (elements of the result), int spatial, long C, D, H, W
//   (input extents), long OD, OH, OW (output extents), SCALE rD, rH, rW (per-dim scales: float
//   for the nearest modes, else ACC), int align_corners, then the source and the result tensor,
//   each as buffer, offset and 5 strides (N, C, D, H, W).
// Launch: global = roundup(total, local).

// Floating-point contraction stays at OpenCL's default (allowed): the CPU's kernels are built
// with FMA contraction too (its AVX2 build), and matching its rounding keeps bicubic's
// cancellations near zero within float32 tolerances of its results.

#define ACC REG_TYPE(ACC_T)
#define DATA STORE_TYPE(T_)
#define TENSOR(type, p) \
  __global type *p, ulong p##_off, long p##N, long p##C, long p##D, long p##H, long p##W

#if defined(MODE_NEAREST) || defined(MODE_NEAREST_EXACT)
#define SCALE float
#define MAX_TAPS 1
#elif defined(MODE_LINEAR)
#define SCALE ACC
#define MAX_TAPS 2
#else
#define SCALE ACC
#define MAX_TAPS 4
#endif

// The index that orders output positions along a dim (non-decreasing in o), and the taps of
// output position o: input positions idx[k] with weights w[k]. Returns the number of taps.
#if defined(MODE_NEAREST) || defined(MODE_NEAREST_EXACT)
inline long key_of(long o, long I, long O, float scale, int align) {
#ifdef MODE_NEAREST_EXACT
  return min((long)floor(((float)o + 0.5f) * scale), I - 1);
#else
  if (O == I) return o;
  if (O == 2 * I) return o >> 1;
  return min((long)floor((float)o * scale), I - 1);
#endif
}

inline int taps_of(long o, long I, long O, float scale, int align, long* idx, ACC* w) {
  idx[0] = key_of(o, I, O, scale, align);
  w[0] = 1;
  return 1;
}
// Output positions whose key is in [i - KEY_BELOW, i + KEY_ABOVE] can read input position i.
#define KEY_BELOW 0
#define KEY_ABOVE 0

#else
inline ACC source_position(long o, ACC r, int align) {
  if (align) return r * (ACC)o;
  const ACC real = r * ((ACC)o + (ACC)0.5) - (ACC)0.5;
#ifdef MODE_LINEAR
  return real < (ACC)0 ? (ACC)0 : real;  // linear modes clamp at 0, cubic does not
#else
  return real;
#endif
}

// guard_index_and_lambda: the CPU floors in float (floorf), whatever the data's type.
inline long guarded_index(ACC real, long I) { return min((long)floor((float)real), I - 1); }

inline ACC guarded_lambda(ACC real, long idx) { return min(max(real - (ACC)idx, (ACC)0), (ACC)1); }

#ifdef MODE_LINEAR
inline long key_of(long o, long I, long O, ACC r, int align) {
  if (O == I) return o;
  return guarded_index(source_position(o, r, align), I);
}

inline int taps_of(long o, long I, long O, ACC r, int align, long* idx, ACC* w) {
  if (O == I) {
    idx[0] = o;
    idx[1] = o;
    w[0] = 1;
    w[1] = 0;
    return 2;
  }
  const ACC real = source_position(o, r, align);
  const long i0 = guarded_index(real, I);
  const ACC l1 = guarded_lambda(real, i0);
  idx[0] = i0;
  idx[1] = i0 + (i0 < I - 1 ? 1 : 0);
  w[0] = (ACC)1 - l1;
  w[1] = l1;
  return 2;
}
#define KEY_BELOW 1
#define KEY_ABOVE 0

#else  // MODE_CUBIC
inline long key_of(long o, long I, long O, ACC r, int align) {
  return guarded_index(source_position(o, r, align), I);
}

inline ACC cubic_near(ACC x, ACC A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
inline ACC cubic_far(ACC x, ACC A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

inline int taps_of(long o, long I, long O, ACC r, int align, long* idx, ACC* w) {
  const ACC A = (ACC)-0.75;
  const ACC real = source_position(o, r, align);
  const long i0 = guarded_index(real, I);
  const ACC t = guarded_lambda(real, i0);
  w[0] = cubic_far(t + (ACC)1, A);
  w[1] = cubic_near(t, A);
  w[2] = cubic_near((ACC)1 - t, A);
  w[3] = cubic_far(((ACC)1 - t) + (ACC)1, A);
  for (int k = 0; k < 4; ++k) idx[k] = clamp(i0 - 1 + k, 0L, I - 1);
  return 4;
}
#define KEY_BELOW 2
#define KEY_ABOVE 1
#endif
#endif

// Taps along a dim; an absent dim (not interpolated) has one tap of weight 1.
inline int dim_taps(int present, long o, long I, long O, SCALE r, int align, long* idx, ACC* w) {
  if (!present) {
    idx[0] = 0;
    w[0] = 1;
    return 1;
  }
  return taps_of(o, I, O, r, align, idx, w);
}

// The first output position o in [0, O] whose key exceeds t (O if none).
inline long first_above(long t, long I, long O, SCALE r, int align) {
  long lo = 0, hi = O;
  while (lo < hi) {
    const long mid = lo + (hi - lo) / 2;
    if (key_of(mid, I, O, r, align) > t) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// The output positions [*lo, *hi) that may read input position i along a dim.
inline void dim_range(int present, long i, long I, long O, SCALE r, int align, long* lo, long* hi) {
  if (!present) {
    *lo = 0;
    *hi = 1;
    return;
  }
  *lo = first_above(i - KEY_BELOW - 1, I, O, r, align);
  *hi = first_above(i + KEY_ABOVE, I, O, r, align);
}

// The weights of the taps of output position o that read input position i (one term each).
inline int dim_terms(int present, long o, long i, long I, long O, SCALE r, int align, ACC* w) {
  long idx[MAX_TAPS];
  ACC tw[MAX_TAPS];
  const int n = dim_taps(present, o, I, O, r, align, idx, tw);
  int m = 0;
  for (int k = 0; k < n; ++k) {
    if (idx[k] == i) w[m++] = tw[k];
  }
  return m;
}

#define GEOMETRY                                                                                 \
  ulong total, int spatial, long C, long D, long H, long W, long OD, long OH, long OW, SCALE rD, \
      SCALE rH, SCALE rW, int align

// Splits a linear index over [N, C, A, B, E] into its coordinates (remainders without `%`: see
// elementwise.cl).
#define SPLIT(g, A, B, E, n, c, a, b, e)         \
  const ulong q_e = (g) / (ulong)(E);            \
  const long e = (long)((g)-q_e * (ulong)(E));   \
  const ulong q_b = q_e / (ulong)(B);            \
  const long b = (long)(q_e - q_b * (ulong)(B)); \
  const ulong q_a = q_b / (ulong)(A);            \
  const long a = (long)(q_b - q_a * (ulong)(A)); \
  const ulong q_c = q_a / (ulong)C;              \
  const long c = (long)(q_a - q_c * (ulong)C);   \
  const long n = (long)q_c

__kernel void upsample_forward(GEOMETRY, TENSOR(const DATA, in), TENSOR(DATA, out)) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  SPLIT(g, OD, OH, OW, n, c, od, oh, ow);
  long id[MAX_TAPS], ih[MAX_TAPS], iw[MAX_TAPS];
  ACC wd[MAX_TAPS], wh[MAX_TAPS], ww[MAX_TAPS];
  const int nd = dim_taps(spatial >= 3, od, D, OD, rD, align, id, wd);
  const int nh = dim_taps(spatial >= 2, oh, H, OH, rH, align, ih, wh);
  const int nw = dim_taps(1, ow, W, OW, rW, align, iw, ww);
  const ulong base = in_off + n * inN + c * inC;
  const ulong dst = out_off + n * outN + c * outC + od * outD + oh * outH + ow * outW;
#if defined(MODE_NEAREST) || defined(MODE_NEAREST_EXACT)
  STORE(T_, out, dst, LOAD(T_, in, base + id[0] * inD + ih[0] * inH + iw[0] * inW));
#else
  ACC acc = 0;
  for (int a = 0; a < nd; ++a) {
    for (int b = 0; b < nh; ++b) {
      ACC row = 0;
      for (int k = 0; k < nw; ++k) {
        row += ww[k] * (ACC)LOAD(T_, in, base + id[a] * inD + ih[b] * inH + iw[k] * inW);
      }
      acc += wd[a] * wh[b] * row;
    }
  }
  STORE(T_, out, dst, CONVERT(T_, acc));
#endif
}

__kernel void upsample_backward(GEOMETRY, TENSOR(const DATA, go), TENSOR(DATA, gi)) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  SPLIT(g, D, H, W, n, c, d, h, w);
  const ulong dst = gi_off + n * giN + c * giC + d * giD + h * giH + w * giW;
#ifdef MODE_CUBIC
  // The CPU's bicubic backward copies when no dim changes size (its forward still weighs four
  // taps, so infinities there spread NaN; the gradient does not).
  if (D == OD && H == OH && W == OW) {
    STORE(T_, gi, dst, LOAD(T_, go, go_off + n * goN + c * goC + d * goD + h * goH + w * goW));
    return;
  }
#endif
  const int pd = spatial >= 3, ph = spatial >= 2;
  long d0, d1, h0, h1, w0, w1;
  dim_range(pd, d, D, OD, rD, align, &d0, &d1);
  dim_range(ph, h, H, OH, rH, align, &h0, &h1);
  dim_range(1, w, W, OW, rW, align, &w0, &w1);
  const ulong base = go_off + n * goN + c * goC;
  ACC acc = 0;
  ACC td[MAX_TAPS], th[MAX_TAPS], tw[MAX_TAPS];
  for (long od = d0; od < d1; ++od) {
    const int nd = dim_terms(pd, od, d, D, OD, rD, align, td);
    if (nd == 0) continue;
    for (long oh = h0; oh < h1; ++oh) {
      const int nh = dim_terms(ph, oh, h, H, OH, rH, align, th);
      if (nh == 0) continue;
      for (long ow = w0; ow < w1; ++ow) {
        const int nw = dim_terms(1, ow, w, W, OW, rW, align, tw);
        if (nw == 0) continue;
        const ACC v = LOAD(T_, go, base + od * goD + oh * goH + ow * goW);
        for (int a = 0; a < nd; ++a) {
          for (int b = 0; b < nh; ++b) {
            for (int k = 0; k < nw; ++k) acc += td[a] * th[b] * tw[k] * v;
          }
        }
      }
    }
  }
  STORE(T_, gi, dst, CONVERT(T_, acc));
}
