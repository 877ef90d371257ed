// sampler: distributions drawn by rejection or by counting, one element per work-item, each
// with its own stream of Philox4x32-10 words (csrc/ops/Sampling.cpp):
//   philox_poisson    torch.poisson(rates)
//   philox_gamma      torch._standard_gamma(alpha) (Gamma, Beta and Dirichlet sampling)
//   philox_binomial   torch.binomial(count, prob)
//
// Streams: element i owns the Philox counter base + i (the host reserves n counters) and draws
// the blocks {lo32(base+i), hi32(base+i), j, 0} for j = 0, 1, 2, ... (PHILOX4X32_10_C2 of
// common.clh), four 32-bit words per block, as many as its sampler needs. So every element's
// numbers are fixed by the seed and the generator's offset, whatever the launch geometry.
// Uniforms: in double (-DACC_DOUBLE, the device has fp64) 53 bits from two words; in float 24
// bits from one word, in [0, 1).
//
// The samplers (the CPU's algorithms, computed in ACC: double where the device has it):
//   poisson(lambda):  lambda >= 10: the transformed rejection with squeeze of Hormann (PTRS,
//                     1993); 0 < lambda < 10: multiply uniforms until the product falls to
//                     exp(-lambda) or below, counting the factors before that one; lambda = 0: 0.
//                     A negative or NaN rate gives NaN and records err_code.
//   gamma(alpha):     Marsaglia and Tsang (2000) on a normal (Box-Muller of two uniforms) and a
//                     uniform; alpha < 1 is boosted to alpha + 1 with a factor u^(1/alpha);
//                     alpha = 0 gives 0. The result is at least the dtype's smallest normal
//                     value (as the CPU clamps it), which is also the result for a negative
//                     or NaN alpha (as on the CPU).
//   binomial(n, p):   n * min(p, 1-p) >= 10: BTRS (Hormann 1993) with Stirling tails;
//                     otherwise the inversion by geometric waiting times; p > 1/2 by symmetry
//                     (n - sample(n, 1 - p)). n <= 0 or p <= 0 gives 0, p >= 1 gives n.
//
// Build options: -DOUT_T=<float tag> (float, double, half, bfloat16: out and the parameters'
//   dtype), -DACC_DOUBLE (with -DTORCH_OCL_FP64), -DOUT_MIN=<smallest normal value of OUT_T>
//   (gamma), -DLWS (default 64).
// Arguments: out, out_off, n, key0, key1, base, the parameter tensors (each buffer, offset;
//   contiguous, n elements), then for poisson __global int* err, int err_code.
// Launch: global = { roundup(n, LWS) }, local = { LWS }; the host advances the generator's
//   offset by n.

#ifndef LWS
#define LWS 64
#endif
#ifndef OUT_T
#define OUT_T float
#endif

#ifdef ACC_DOUBLE
typedef double acc_t;
#define TWO_PI (2 * M_PI)
#else
typedef float acc_t;
#define TWO_PI (2 * M_PI_F)
#endif

typedef struct {
  ulong ctr;
  uint key0, key1, block, used;
  uint w0, w1, w2, w3;
} stream_t;

inline void stream_init(stream_t* s, ulong ctr, uint key0, uint key1) {
  s->ctr = ctr;
  s->key0 = key0;
  s->key1 = key1;
  s->block = 0;
  s->used = 4;
}

inline uint next_word(stream_t* s) {
  if (s->used == 4) {
    uint x0, x1, x2, x3;
    PHILOX4X32_10_C2(s->ctr, s->block, s->key0, s->key1, x0, x1, x2, x3);
    s->w0 = x0;
    s->w1 = x1;
    s->w2 = x2;
    s->w3 = x3;
    s->block += 1;
    s->used = 0;
  }
  const uint k = s->used++;
  return k == 0 ? s->w0 : k == 1 ? s->w1 : k == 2 ? s->w2 : s->w3;
}

// A uniform in [0, 1).
inline acc_t uniform(stream_t* s) {
#ifdef ACC_DOUBLE
  const ulong hi = next_word(s) >> 5, lo = next_word(s) >> 6;  // 27 + 26 bits
  return (double)(hi * 67108864UL + lo) * 0x1.0p-53;
#else
  return (float)(next_word(s) >> 8) * 0x1.0p-24f;
#endif
}

// A standard normal (Box-Muller; the sine half is dropped).
inline acc_t standard_normal(stream_t* s) {
  const acc_t u1 = (acc_t)1 - uniform(s);  // (0, 1]
  const acc_t u2 = uniform(s);
  return sqrt((acc_t)-2 * log(u1)) * cos(TWO_PI * u2);
}

#define ARGS_HEAD \
  __global STORE_TYPE(OUT_T)*out, ulong out_off, ulong n, uint key0, uint key1, ulong base

// ---- poisson ----
inline acc_t sample_poisson(acc_t lambda, stream_t* s) {
  if (lambda >= (acc_t)10) {
    const acc_t slam = sqrt(lambda);
    const acc_t loglam = log(lambda);
    const acc_t b = (acc_t)0.931 + (acc_t)2.53 * slam;
    const acc_t a = (acc_t)-0.059 + (acc_t)0.02483 * b;
    const acc_t invalpha = (acc_t)1.1239 + (acc_t)1.1328 / (b - (acc_t)3.4);
    const acc_t vr = (acc_t)0.9277 - (acc_t)3.6224 / (b - (acc_t)2);
    for (;;) {
      const acc_t u = uniform(s) - (acc_t)0.5;
      const acc_t v = uniform(s);
      const acc_t us = (acc_t)0.5 - fabs(u);
      const acc_t k = floor(((acc_t)2 * a / us + b) * u + lambda + (acc_t)0.43);
      if (us >= (acc_t)0.07 && v <= vr) return k;
      if (k < 0 || (us < (acc_t)0.013 && v > us)) continue;
      if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lambda + k * loglam - lgamma(k + 1))
        return k;
    }
  }
  if (lambda == 0) return 0;
  const acc_t enlam = exp(-lambda);
  acc_t prod = 1;
  acc_t x = 0;
  for (;;) {
    prod *= uniform(s);
    if (prod > enlam) {
      x += 1;
    } else {
      return x;
    }
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_poisson(
    ARGS_HEAD, __global const STORE_TYPE(OUT_T)* rate, ulong rate_off, __global int* err,
    int err_code) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  const acc_t lambda = (acc_t)LOAD(OUT_T, rate, rate_off + i);
  acc_t r;
  if (!(lambda >= 0)) {  // negative or NaN
    atomic_cmpxchg(err, 0, err_code);
    r = NAN;
  } else if (isinf(lambda)) {
    r = lambda;
  } else {
    stream_t s;
    stream_init(&s, base + i, key0, key1);
    r = sample_poisson(lambda, &s);
  }
  STORE(OUT_T, out, out_off + i, CONVERT(OUT_T, r));
}

// ---- gamma ----
#ifdef OUT_MIN
inline acc_t sample_gamma(acc_t alpha, stream_t* s) {
  acc_t scale = 1;
  if (alpha < 1) {
    if (alpha == 0) return 0;
    scale = pow((acc_t)1 - uniform(s), (acc_t)1 / alpha);
    alpha += 1;
  }
  const acc_t d = alpha - (acc_t)1 / (acc_t)3;
  const acc_t c = (acc_t)1 / sqrt((acc_t)9 * d);
  for (;;) {
    acc_t x, y;
    do {
      x = standard_normal(s);
      y = (acc_t)1 + c * x;
    } while (y <= 0);
    const acc_t v = y * y * y;
    const acc_t u = (acc_t)1 - uniform(s);
    const acc_t xx = x * x;
    if (u < (acc_t)1 - (acc_t)0.0331 * xx * xx) return scale * d * v;
    if (log(u) < (acc_t)0.5 * xx + d * ((acc_t)1 - v + log(v))) return scale * d * v;
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_gamma(
    ARGS_HEAD, __global const STORE_TYPE(OUT_T)* alpha, ulong alpha_off) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  const acc_t a = (acc_t)LOAD(OUT_T, alpha, alpha_off + i);
  acc_t r;
  if (!(a >= 0)) {
    r = (acc_t)OUT_MIN;  // the CPU's result for a negative or NaN alpha
  } else if (isinf(a)) {
    r = a;
  } else {
    stream_t s;
    stream_init(&s, base + i, key0, key1);
    r = fmax(sample_gamma(a, &s), (acc_t)OUT_MIN);
  }
  STORE(OUT_T, out, out_off + i, CONVERT(OUT_T, r));
}
#endif  // OUT_MIN

// ---- binomial ----
// log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2]: the error of Stirling's formula
// at k + 1, from a table below 10 and its series above.
inline acc_t stirling_tail(acc_t k) {
  const acc_t table[10] = {(acc_t)0.0810614667953272,  (acc_t)0.0413406959554092,
                           (acc_t)0.0276779256849983,  (acc_t)0.02079067210376509,
                           (acc_t)0.0166446911898211,  (acc_t)0.0138761288230707,
                           (acc_t)0.0118967099458917,  (acc_t)0.0104112652619720,
                           (acc_t)0.00925546218271273, (acc_t)0.00833056343336287};
  if (k <= 9) return table[(int)k];
  const acc_t kp1sq = (k + 1) * (k + 1);
  return ((acc_t)1 / (acc_t)12 - ((acc_t)1 / (acc_t)360 - (acc_t)1 / (acc_t)1260 / kp1sq) / kp1sq) /
         (k + 1);
}

inline acc_t binomial_btrs(acc_t count, acc_t prob, stream_t* s) {
  const acc_t stddev = sqrt(count * prob * (1 - prob));
  const acc_t b = (acc_t)1.15 + (acc_t)2.53 * stddev;
  const acc_t a = (acc_t)-0.0873 + (acc_t)0.0248 * b + (acc_t)0.01 * prob;
  const acc_t c = count * prob + (acc_t)0.5;
  const acc_t v_r = (acc_t)0.92 - (acc_t)4.2 / b;
  const acc_t r = prob / (1 - prob);
  const acc_t alpha = ((acc_t)2.83 + (acc_t)5.1 / b) * stddev;
  const acc_t m = floor((count + 1) * prob);
  for (;;) {
    const acc_t u = uniform(s) - (acc_t)0.5;
    acc_t v = uniform(s);
    const acc_t us = (acc_t)0.5 - fabs(u);
    const acc_t k = floor(((acc_t)2 * a / us + b) * u + c);
    if (k < 0 || k > count) continue;
    if (us >= (acc_t)0.07 && v <= v_r) return k;
    v = log(v * alpha / (a / (us * us) + b));
    const acc_t upper = (m + (acc_t)0.5) * log((m + 1) / (r * (count - m + 1))) +
                        (count + 1) * log((count - m + 1) / (count - k + 1)) +
                        (k + (acc_t)0.5) * log(r * (count - k + 1) / (k + 1)) + stirling_tail(m) +
                        stirling_tail(count - m) - stirling_tail(k) - stirling_tail(count - k);
    if (v <= upper) return k;
  }
}

inline acc_t binomial_inversion(acc_t count, acc_t prob, stream_t* s) {
  const acc_t logprob = log1p(-prob);
  acc_t geom_sum = 0, num = 0;
  for (;;) {
    const acc_t u = (acc_t)1 - uniform(s);  // (0, 1]: log(u) finite
    geom_sum += ceil(log(u) / logprob);
    if (geom_sum > count) return num;
    num += 1;
  }
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void philox_binomial(
    ARGS_HEAD, __global const STORE_TYPE(OUT_T)* count, ulong count_off,
    __global const STORE_TYPE(OUT_T)* prob, ulong prob_off) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  const acc_t cnt = (acc_t)LOAD(OUT_T, count, count_off + i);
  const acc_t p = (acc_t)LOAD(OUT_T, prob, prob_off + i);
  acc_t r;
  if (OCL_ISNAN(cnt) || OCL_ISNAN(p)) {
    r = NAN;
  } else if (cnt <= 0 || p <= 0) {
    r = 0;
  } else if (p >= 1) {
    r = cnt;
  } else {
    stream_t s;
    stream_init(&s, base + i, key0, key1);
    const int flip = p > (acc_t)0.5;
    const acc_t q = flip ? 1 - p : p;
    const acc_t k =
        cnt * q >= (acc_t)10 ? binomial_btrs(cnt, q, &s) : binomial_inversion(cnt, q, &s);
    r = flip ? cnt - k : k;
  }
  STORE(OUT_T, out, out_off + i, CONVERT(OUT_T, r));
}
