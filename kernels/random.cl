// random: counter-based random numbers with Philox4x32-10.
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11):
// a 128-bit counter {c0, c1, c2, c3} and a 64-bit key {k0, k1}; ten rounds of
//   hi0:lo0 = 0xD2511F53 * c0,  hi1:lo1 = 0xCD9E8D57 * c2   (32 x 32 -> 64-bit products)
//   {c0, c1, c2, c3} = {hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0}
// with the key bumped by the Weyl constants {0x9E3779B9, 0xBB67AE85} between rounds.
//
// Work-item i (get_global_id(0)) encrypts the counter {lo32(base+i), hi32(base+i), 0, 0}
// with key {key0, key1} and gets four 32-bit words x0..x3.
//
// The counters {lo32(base+i), hi32(base+i), 1, 0} give work-item i's "second words"; only
// philox_bernoulli* use them, in rare cases (below), and no other draw uses a counter whose
// third word is not 0.
//
// ---------------------------------------------------------------------------------
// philox_fill(out, out_off, n, key0, key1, base, float p1, float p2)     OUT_T not double
//   Elements 4i+j (j = 0..3, only those < n) are written to out[out_off + 4i + j].
//   Launch: global = { roundup(ceil(n / 4), LWS) }, local = { LWS };
//           the host then advances its Philox offset (base) by ceil(n / 4).
//   Values are computed in float (24 random bits each) and converted with CONVERT(OUT_T, .).
//   Distribution (exactly one of these two options):
//   -DDIST_UNIFORM    u = (x >> 8) * 2^-24 in [0, 1); value = p1 + (p2 - p1) * u, in
//                     [p1, p2) (like torch.uniform_(from=p1, to=p2)): if rounding (in
//                     float, or in the half/bfloat16 output) would reach p2, the largest
//                     representable value below p2 is returned instead.
//   -DDIST_NORMAL     Box-Muller on (x0, x1) -> elements 4i, 4i+1 and (x2, x3) ->
//                     elements 4i+2, 4i+3: u1 = ((x_even >> 8) + 1) * 2^-24 in (0, 1],
//                     u2 = (x_odd >> 8) * 2^-24, r = sqrt(-2 log u1),
//                     z = {r cos(2 pi u2), r sin(2 pi u2)}; value = p1 + p2 * z
//                     (p1 = mean, p2 = std).
//   -DDIST_LOG_NORMAL  exp of the DIST_NORMAL value (p1 = mean, p2 = std of the logarithm).
//   The three below use u = ((x >> 8) | 1) * 2^-24, an odd multiple of 2^-24 in (0, 1) (never
//   0 or 1, so the values are finite; 23 random bits):
//   -DDIST_EXPONENTIAL value = -log(u) / p1 (p1 = lambda > 0): never 0 (multinomial's
//                     sampling without replacement divides by it).
//   -DDIST_CAUCHY     value = p1 + p2 * tan(pi * (u - 1/2)) (p1 = median, p2 = sigma).
//   -DDIST_GEOMETRIC  value = ceil(log(u) / p2), p2 = log1p(-p) computed by the host in double
//                     (p1 unused): the number of Bernoulli(p) trials up to the first success,
//                     >= 1. OUT_T may be an integer type here.
//
// philox_fill_f64(out, out_off, n, key0, key1, base, double p1, double p2)  OUT_T=double
//   The double version (53 random bits per uniform): two 53-bit numbers
//   k0 = (x0 | x1 << 32) >> 11 and k1 = (x2 | x3 << 32) >> 11 give elements 2i and 2i+1
//   (only those < n), computed in double.
//   -DDIST_UNIFORM    value = p1 + (p2 - p1) * (k * 2^-53), kept below p2 like above.
//   -DDIST_NORMAL     Box-Muller in double on u1 = (k0 + 1) * 2^-53 in (0, 1] and
//                     u2 = k1 * 2^-53: elements 2i, 2i+1 = p1 + p2 * {r cos(2 pi u2),
//                     r sin(2 pi u2)} with r = sqrt(-2 log u1).
//   -DDIST_LOG_NORMAL, -DDIST_EXPONENTIAL, -DDIST_CAUCHY, -DDIST_GEOMETRIC as for philox_fill,
//                     in double, with u = (k | 1) * 2^-53 in (0, 1) (52 random bits).
//   Launch: global = { roundup(ceil(n / 2), LWS) }, local = { LWS };
//           the host then advances its Philox offset (base) by ceil(n / 2).
//
// philox_bernoulli(out, out_off, n, key0, key1, base, ulong t)          -DDIST_BERNOULLI
//   Element 4i+j (j = 0..3, only those < n) is 1 with probability t / 2^53 (t in [0, 2^53];
//   the host passes t = ceil(p * 2^53), which is exact for a double p) and 0 otherwise: the
//   element's 53-bit number k = x_j * 2^21 + f is compared, k < t. f (21 bits) matters only
//   when x_j == t >> 21 (probability 2^-32 per element); it is then the top 21 bits of word j
//   of the element's second words. Launch and offset advance as for philox_fill (ceil(n / 4)).
//
// philox_bernoulli_tensor(out, out_off, n, key0, key1, base, p, p_off, err, err_code)
//   (-DDIST_BERNOULLI -DP_T=<tag of p>): like philox_bernoulli with a probability per element,
//   p[p_off + e] (REG_TYPE(P_T)), t = ceil(p * 2^53) computed in that type (exact). A p that is
//   not in [0, 1] (or NaN) gives 0 and stores err_code in *err if it is still 0: the host
//   raises the error at its next wait (runtime/DeviceError.h).
//
// philox_range(out, out_off, n, key0, key1, base, from, range)
//   Two 64-bit words r0 = x0 | x1 << 32 and r1 = x2 | x3 << 32 give elements 2i and 2i+1
//   (only those < n): value = from + (long)(r % range), computed with wrapping 64-bit
//   arithmetic; range == 0 means 2^64 (value = from + r, the full 64-bit range).
//   Launch: global = { roundup(ceil(n / 2), LWS) }, local = { LWS };
//           the host then advances its Philox offset (base) by ceil(n / 2).
//
// philox_multinomial(out, out_off, n_sample, n_cat, key0, key1, base, cdf, cdf_off, err,
//                    err_neg, err_inf, err_sum)      (with -DCDF_T=float or -DCDF_T=double)
//   multinomial with replacement: work-item (s, r) = (get_global_id(0), get_global_id(1))
//   writes sample s of distribution r, out[r * n_sample + s] (long), from cdf, the running sums
//   of the row's probabilities (n_dist x n_cat, contiguous, computed by the host): with the
//   counter base + r * n_sample + s it draws u in [0, 1) (word x0 in float: 24 bits; x0, x1 in
//   double: 53 bits) and returns the first category whose running sum exceeds u * total
//   (total = the row's last running sum), so a category of probability 0 is never drawn; if
//   rounding leaves none, the last category of non-zero probability. Work-item s = 0 also checks
//   the row and records err_inf (a running sum that is not finite: an Inf or NaN entry),
//   err_neg (a decreasing running sum: a negative entry) or err_sum (total <= 0) in *err.
//   Launch: global = { roundup(n_sample, LWS), n_dist }, local = { LWS, 1 };
//           the host then advances its Philox offset by n_dist * n_sample.
//
// Build options: -DOUT_T=<tag> with tag one of float, double (needs -DTORCH_OCL_FP64),
//   half, bfloat16, long, int, short, char, uchar, bool; at most one -DDIST_* option;
//   -DP_T=<tag> (a float tag) for philox_bernoulli_tensor; -DLWS=<local size>
//   (default 64; enforced with reqd_work_group_size).
// philox_range is always in the program; philox_fill (OUT_T not double) or philox_fill_f64
// (OUT_T=double) with one of the -DDIST_* fill options above; philox_bernoulli with
// -DDIST_BERNOULLI, and philox_bernoulli_tensor when P_T is given too.
// The uniform and bernoulli values are bit-exact (FP_CONTRACT OFF below); the normal
// values depend on the device's log/sqrt/cos/sin (within their OpenCL ulp bounds).
// ---------------------------------------------------------------------------------

#ifndef LWS
#define LWS 64
#endif
#ifndef OUT_T
#define OUT_T float
#endif

// Bit-exact results: no fused multiply-add in the uniform/bernoulli transforms.
#pragma OPENCL FP_CONTRACT OFF

// PHILOX4X32_10 / PHILOX4X32_10_C2 (the rounds described above) live in common.clh, shared with
// attention.cl's dropout.

// 24 random bits -> float in [0, 1).
#define U01(x) ((float)((x) >> 8) * 0x1.0p-24f)
// 24 random bits -> float in (0, 1].
#define U01_OPEN0(x) ((float)(((x) >> 8) + 1u) * 0x1.0p-24f)

// 23 random bits -> an odd multiple of 2^-24, in (0, 1) (never 0 or 1).
#define U01_OPEN(x) ((float)(((x) >> 8) | 1u) * 0x1.0p-24f)

// The distributions philox_fill / philox_fill_f64 draw.
#if defined(DIST_UNIFORM) || defined(DIST_NORMAL) || defined(DIST_LOG_NORMAL) || \
    defined(DIST_EXPONENTIAL) || defined(DIST_CAUCHY) || defined(DIST_GEOMETRIC)
#define DIST_FILL 1
#endif

// 53 random bits (the top bits of lo | hi << 32) as a ulong in [0, 2^53).
#define U53(lo, hi) ((((ulong)(hi) << 32) | (ulong)(lo)) >> 11)

#define TAG_IS_half_half 1
#define TAG_IS_bfloat16_bfloat16 1
#define TAG_IS_double_double 1
#define OUT_IS_HALF OCL_CAT(TAG_IS_half_, OUT_T)
#define OUT_IS_BF16 OCL_CAT(TAG_IS_bfloat16_, OUT_T)
#define OUT_IS_DOUBLE OCL_CAT(TAG_IS_double_, OUT_T)

// The representable value just below the one with bits b (16-bit half/bfloat16 layout,
// toward -infinity; b is finite).
inline ushort rnd_bits16_down(ushort b) {
  if (b == 0u) return (ushort)0x8001u;       // +0 -> smallest negative subnormal
  if (b & 0x8000u) return (ushort)(b + 1u);  // negative: larger magnitude
  return (ushort)(b - 1u);
}

// Largest float strictly below f (f finite).
inline float rnd_float_down(float f) {
  const uint b = as_uint(f);
  if ((b & 0x7fffffffu) == 0u) return as_float(0x80000001u);
  return as_float((b & 0x80000000u) ? b + 1u : b - 1u);
}

#ifdef DIST_UNIFORM
// p1 + (p2 - p1) * u, kept below p2 also after rounding to the output type.
inline float rnd_uniform(uint x, float p1, float p2) {
  const float range = p2 - p1;
  const float scaled = range * U01(x);
  float v = p1 + scaled;
  if (!(p1 < p2) || !OCL_ISFINITE(p2)) return v;
  if (v >= p2) v = rnd_float_down(p2);
#if OUT_IS_HALF
  ushort h = ocl_float_to_half(v);
  if (ocl_half_to_float(h) >= p2) {
    h = rnd_bits16_down(h);
    v = ocl_half_to_float(h);
  }
#elif OUT_IS_BF16
  const ushort h = ocl_float_to_bf16(v);
  if (as_float((uint)h << 16) >= p2) v = as_float((uint)rnd_bits16_down(h) << 16);
#endif
  return v;
}
#endif

#if defined(DIST_EXPONENTIAL) || defined(DIST_CAUCHY) || defined(DIST_GEOMETRIC)
// The value of one element from its uniform u in (0, 1) (float, or double in philox_fill_f64).
#define RND_FROM_U(u, p1, p2, PI)
#if defined(DIST_EXPONENTIAL)
#undef RND_FROM_U
#define RND_FROM_U(u, p1, p2, PI) (-log(u) / (p1))
#elif defined(DIST_CAUCHY)
#undef RND_FROM_U
#define RND_FROM_U(u, p1, p2, PI) ((p1) + (p2) * tan((PI) * ((u) - 0.5f)))
#else
#undef RND_FROM_U
#define RND_FROM_U(u, p1, p2, PI) ceil(log(u) / (p2))
#endif
#endif

#if defined(DIST_FILL) && !OUT_IS_DOUBLE
__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_fill(
    __global STORE_TYPE(OUT_T)* out, ulong out_off, ulong n, uint key0, uint key1, ulong base,
    float p1, float p2) {
  const ulong i = get_global_id(0);
  const ulong e0 = 4 * i;
  if (e0 >= n) return;
  uint x0, x1, x2, x3;
  PHILOX4X32_10(base + i, key0, key1, x0, x1, x2, x3);
  float v[4];
#if defined(DIST_UNIFORM)
  v[0] = rnd_uniform(x0, p1, p2);
  v[1] = rnd_uniform(x1, p1, p2);
  v[2] = rnd_uniform(x2, p1, p2);
  v[3] = rnd_uniform(x3, p1, p2);
#elif defined(DIST_EXPONENTIAL) || defined(DIST_CAUCHY) || defined(DIST_GEOMETRIC)
  v[0] = RND_FROM_U(U01_OPEN(x0), p1, p2, 3.14159265358979f);
  v[1] = RND_FROM_U(U01_OPEN(x1), p1, p2, 3.14159265358979f);
  v[2] = RND_FROM_U(U01_OPEN(x2), p1, p2, 3.14159265358979f);
  v[3] = RND_FROM_U(U01_OPEN(x3), p1, p2, 3.14159265358979f);
#else
  {
    const float two_pi = 6.283185307179586f;
    const float r01 = sqrt(-2.0f * log(U01_OPEN0(x0)));
    const float r23 = sqrt(-2.0f * log(U01_OPEN0(x2)));
    const float t01 = two_pi * U01(x1);
    const float t23 = two_pi * U01(x3);
    v[0] = p1 + p2 * (r01 * cos(t01));
    v[1] = p1 + p2 * (r01 * sin(t01));
    v[2] = p1 + p2 * (r23 * cos(t23));
    v[3] = p1 + p2 * (r23 * sin(t23));
#ifdef DIST_LOG_NORMAL
    v[0] = exp(v[0]);
    v[1] = exp(v[1]);
    v[2] = exp(v[2]);
    v[3] = exp(v[3]);
#endif
  }
#endif
  out += out_off;
  if (e0 + 4 <= n) {
    STORE(OUT_T, out, e0 + 0, CONVERT(OUT_T, v[0]));
    STORE(OUT_T, out, e0 + 1, CONVERT(OUT_T, v[1]));
    STORE(OUT_T, out, e0 + 2, CONVERT(OUT_T, v[2]));
    STORE(OUT_T, out, e0 + 3, CONVERT(OUT_T, v[3]));
  } else {
    for (int j = 0; j < 3; ++j)
      if (e0 + j < n) STORE(OUT_T, out, e0 + j, CONVERT(OUT_T, v[j]));
  }
}
#endif  // DIST_FILL, OUT_T not double

#if defined(DIST_FILL) && OUT_IS_DOUBLE
#ifdef DIST_UNIFORM
// Largest double strictly below d (d finite).
inline double rnd_double_down(double d) {
  const long b = as_long(d);
  if ((b & 0x7fffffffffffffffL) == 0) return as_double(as_long((ulong)0x8000000000000001UL));
  return as_double(b < 0 ? b + 1 : b - 1);
}

// p1 + (p2 - p1) * k * 2^-53, kept below p2.
inline double rnd_uniform_f64(ulong k, double p1, double p2) {
  const double v = p1 + (p2 - p1) * ((double)k * 0x1.0p-53);
  if (!(p1 < p2) || !OCL_ISFINITE(p2)) return v;
  return v >= p2 ? rnd_double_down(p2) : v;
}
#endif

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_fill_f64(
    __global double* out, ulong out_off, ulong n, uint key0, uint key1, ulong base, double p1,
    double p2) {
  const ulong i = get_global_id(0);
  const ulong e0 = 2 * i;
  if (e0 >= n) return;
  uint x0, x1, x2, x3;
  PHILOX4X32_10(base + i, key0, key1, x0, x1, x2, x3);
  const ulong k0 = U53(x0, x1);
  const ulong k1 = U53(x2, x3);
#ifdef DIST_UNIFORM
  const double v0 = rnd_uniform_f64(k0, p1, p2);
  const double v1 = rnd_uniform_f64(k1, p1, p2);
#elif defined(DIST_EXPONENTIAL) || defined(DIST_CAUCHY) || defined(DIST_GEOMETRIC)
  const double v0 = RND_FROM_U((double)(k0 | 1) * 0x1.0p-53, p1, p2, 3.141592653589793);
  const double v1 = RND_FROM_U((double)(k1 | 1) * 0x1.0p-53, p1, p2, 3.141592653589793);
#else
  const double r = sqrt(-2.0 * log((double)(k0 + 1) * 0x1.0p-53));
  const double t = 6.283185307179586 * ((double)k1 * 0x1.0p-53);
  double v0 = p1 + p2 * (r * cos(t));
  double v1 = p1 + p2 * (r * sin(t));
#ifdef DIST_LOG_NORMAL
  v0 = exp(v0);
  v1 = exp(v1);
#endif
#endif
  out += out_off;
  out[e0] = v0;
  if (e0 + 1 < n) out[e0 + 1] = v1;
}
#endif  // DIST_FILL, OUT_T double

#ifdef DIST_BERNOULLI
// 1 with probability t / 2^53 (t <= 2^53) for element word x_j of the counter ctr (see the
// comment at the top: the second words decide only when x_j == t >> 21).
inline int rnd_bernoulli(uint x, int j, ulong t, ulong ctr, uint key0, uint key1) {
  const ulong th = t >> 21;
  if ((ulong)x != th) return (ulong)x < th;
  uint y[4];
  PHILOX4X32_10_C2(ctr, 1u, key0, key1, y[0], y[1], y[2], y[3]);
  return (y[j] >> 11) < (uint)(t & 0x1fffffUL);
}

inline void store_bernoulli4(__global STORE_TYPE(OUT_T)* out, ulong e0, ulong n, const int* b) {
  if (e0 + 4 <= n) {
    STORE(OUT_T, out, e0 + 0, CONVERT(OUT_T, b[0]));
    STORE(OUT_T, out, e0 + 1, CONVERT(OUT_T, b[1]));
    STORE(OUT_T, out, e0 + 2, CONVERT(OUT_T, b[2]));
    STORE(OUT_T, out, e0 + 3, CONVERT(OUT_T, b[3]));
  } else {
    for (int j = 0; j < 3; ++j)
      if (e0 + j < n) STORE(OUT_T, out, e0 + j, CONVERT(OUT_T, b[j]));
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_bernoulli(
    __global STORE_TYPE(OUT_T)* out, ulong out_off, ulong n, uint key0, uint key1, ulong base,
    ulong t) {
  const ulong i = get_global_id(0);
  const ulong e0 = 4 * i;
  if (e0 >= n) return;
  uint x[4];
  PHILOX4X32_10(base + i, key0, key1, x[0], x[1], x[2], x[3]);
  int b[4];
  for (int j = 0; j < 4; ++j) b[j] = rnd_bernoulli(x[j], j, t, base + i, key0, key1);
  store_bernoulli4(out + out_off, e0, n, b);
}

#ifdef P_T
__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_bernoulli_tensor(
    __global STORE_TYPE(OUT_T)* out, ulong out_off, ulong n, uint key0, uint key1, ulong base,
    __global const STORE_TYPE(P_T)* p, ulong p_off, __global int* err, int err_code) {
  const ulong i = get_global_id(0);
  const ulong e0 = 4 * i;
  if (e0 >= n) return;
  uint x[4];
  PHILOX4X32_10(base + i, key0, key1, x[0], x[1], x[2], x[3]);
  p += p_off;
  int b[4];
  for (int j = 0; j < 4; ++j) {
    b[j] = 0;
    if (e0 + j >= n) continue;
    const REG_TYPE(P_T) pj = LOAD(P_T, p, e0 + j);
    if (pj >= 0 && pj <= 1) {
      // Exact: pj * 2^53 is a scaling by a power of two, and its ceiling is at most 2^53.
      const ulong t = (ulong)ceil(pj * 0x1.0p53f);
      b[j] = rnd_bernoulli(x[j], j, t, base + i, key0, key1);
    } else {
      atomic_cmpxchg(err, 0, err_code);
    }
  }
  store_bernoulli4(out + out_off, e0, n, b);
}
#endif  // P_T
#endif  // DIST_BERNOULLI

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_range(
    __global STORE_TYPE(OUT_T)* out, ulong out_off, ulong n, uint key0, uint key1, ulong base,
    long from, ulong range) {
  const ulong i = get_global_id(0);
  const ulong e0 = 2 * i;
  if (e0 >= n) return;
  uint x0, x1, x2, x3;
  PHILOX4X32_10(base + i, key0, key1, x0, x1, x2, x3);
  ulong r0 = (ulong)x0 | ((ulong)x1 << 32);
  ulong r1 = (ulong)x2 | ((ulong)x3 << 32);
  if (range != 0) {
    r0 %= range;
    r1 %= range;
  }
  // Wrapping addition in unsigned arithmetic (signed overflow is undefined).
  const long v0 = as_long((ulong)from + r0);
  const long v1 = as_long((ulong)from + r1);
  out += out_off;
  STORE(OUT_T, out, e0, CONVERT(OUT_T, v0));
  if (e0 + 1 < n) STORE(OUT_T, out, e0 + 1, CONVERT(OUT_T, v1));
}

#ifdef CDF_T
__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_multinomial(
    __global long* out, ulong out_off, ulong n_sample, ulong n_cat, uint key0, uint key1,
    ulong base, __global const CDF_T* cdf, ulong cdf_off, __global int* err, int err_neg,
    int err_inf, int err_sum) {
  const ulong s = get_global_id(0);
  const ulong r = get_global_id(1);
  if (s >= n_sample) return;
  out += out_off;
  cdf += cdf_off + r * n_cat;
  const CDF_T total = cdf[n_cat - 1];
  if (s == 0) {
    int code = 0;
    CDF_T prev = 0;
    for (ulong i = 0; i < n_cat && code == 0; ++i) {
      const CDF_T c = cdf[i];
      if (!OCL_ISFINITE(c))
        code = err_inf;
      else if (c < prev)
        code = err_neg;
      prev = c;
    }
    if (code == 0 && !(total > 0)) code = err_sum;
    if (code != 0) atomic_cmpxchg(err, 0, code);
  }
  uint x0, x1, x2, x3;
  PHILOX4X32_10(base + r * n_sample + s, key0, key1, x0, x1, x2, x3);
#if OCL_CAT(TAG_IS_double_, CDF_T)
  const CDF_T target = (CDF_T)U53(x0, x1) * 0x1.0p-53 * total;
#else
  const CDF_T target = U01(x0) * total;
#endif
  // The first i with cdf[i] > target, in [lo, hi).
  ulong lo = 0, hi = n_cat;
  while (lo < hi) {
    const ulong mid = lo + (hi - lo) / 2;
    if (cdf[mid] > target)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo >= n_cat) {
    // u * total rounded up to total: the last category with a non-zero probability.
    lo = n_cat - 1;
    while (lo > 0 && cdf[lo] == cdf[lo - 1]) --lo;
  }
  out[r * n_sample + s] = (long)lo;
}
#endif  // CDF_T
