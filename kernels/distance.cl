// p-norm distances: cdist (_cdist_forward / _cdist_backward) and pdist (_pdist_forward /
// _pdist_backward), the kernels behind ATen's cdist_stub, cdist_backward_stub, pdist_forward_stub
// and pdist_backward_stub (ATen's Distance.cpp does the checks, batching and allocation).
//
// Distance of rows a, b: p = 0: count of a_k != b_k; p = 1: sum |d|; p = 2: sqrt(sum d^2);
// p = inf: max |d|; else (sum |d|^p)^(1/p). MODE selects p's case at build time
// (-DMODE_P0, _P1, _P2, _PINF, _PLT2 (0 < p < 2, p != 1), _PGEN (p > 2)); p itself is an argument.
// Gradients (of one coordinate difference d, with dist the pair's distance and g its gradient):
// p = 0: 0; p = 1: g sign(d); p < 2: 0 if dist == 0 or (d == 0 and p < 1), else
// sign(d) |d|^(p-1) g / dist^(p-1); p = 2: 0 if dist == 0, else g d / dist; p = inf:
// g sign(d) (|d| == dist); p > 2: 0 if dist == 0, else d |d|^(p-2) g / dist^(p-1).
// The backwards are gathers (one work-item per gradient element, summing over the other rows):
// deterministic, no atomics.
//
// Build options: -DT_=<float|double> -DMODE_...
// Launch: global = roundup(total, local).

#define ACC T_
#define DATA T_

inline ACC dist_term(ACC d, ACC p) {
  const ACC a = fabs(d);
#if defined(MODE_P0)
  return OCL_ISNAN(d) ? d : (d != (ACC)0 ? (ACC)1 : (ACC)0);  // NaN propagates as on the CPU
#elif defined(MODE_P1)
  return a;
#elif defined(MODE_P2)
  return d * d;
#elif defined(MODE_PINF)
  return a;
#else
  return pow(a, p);
#endif
}

// p = inf: the CPU's pdist propagates NaN (a vectorized maximum), its cdist skips it (std::max).
inline ACC dist_accumulate(ACC agg, ACC term, bool nan_max) {
#if defined(MODE_PINF)
  return (term > agg || (nan_max && OCL_ISNAN(term))) ? term : agg;
#else
  return agg + term;
#endif
}

inline ACC dist_finish(ACC agg, ACC p) {
#if defined(MODE_P2)
  return sqrt(agg);
#elif defined(MODE_PLT2) || defined(MODE_PGEN)
  return pow(agg, (ACC)1 / p);
#else
  return agg;
#endif
}

inline ACC dist_grad(ACC d, ACC g, ACC dist, ACC p) {
#if defined(MODE_P0)
  return 0;
#elif defined(MODE_P1)
  return g * sign(d);
#elif defined(MODE_PLT2)
  return (dist == (ACC)0 || (d == (ACC)0 && p < (ACC)1))
             ? (ACC)0
             : sign(d) * pow(fabs(d), p - 1) * g / pow(dist, p - 1);
#elif defined(MODE_P2)
  return dist == (ACC)0 ? (ACC)0 : g * d / dist;
#elif defined(MODE_PINF)
  return g * sign(d) * (fabs(d) == dist ? (ACC)1 : (ACC)0);
#else
  return dist == (ACC)0 ? (ACC)0 : d * pow(fabs(d), p - 2) * g / pow(dist, p - 1);
#endif
}

// x1 [B, R1, M], x2 [B, R2, M], out [B, R1, R2], all contiguous.
__kernel void cdist_forward(ulong total, long R1, long R2, long M, ACC p,
                            __global const DATA* x1, ulong x1_off, __global const DATA* x2,
                            ulong x2_off, __global DATA* out, ulong out_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  const long j = g % R2, i = (g / R2) % R1, b = g / R2 / R1;
  const ulong a = x1_off + (b * R1 + i) * M, c = x2_off + (b * R2 + j) * M;
  ACC agg = 0;
  for (long k = 0; k < M; ++k) {
    agg = dist_accumulate(agg, dist_term(x1[a + k] - x2[c + k], p), false);
  }
  out[out_off + g] = dist_finish(agg, p);
}

// grad_x1 [B, R1, M] from grad and dist [B, R1, R2] (contiguous), x1, x2 as above.
__kernel void cdist_backward(ulong total, long R1, long R2, long M, ACC p,
                             __global const DATA* grad, ulong grad_off, __global const DATA* x1,
                             ulong x1_off, __global const DATA* x2, ulong x2_off,
                             __global const DATA* dist, ulong dist_off, __global DATA* out,
                             ulong out_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  const long k = g % M, i = (g / M) % R1, b = g / M / R1;
  const ACC v = x1[x1_off + g];
  const ulong row = (b * R1 + i) * R2;
  ACC acc = 0;
  for (long j = 0; j < R2; ++j) {
    const ACC d = v - x2[x2_off + (b * R2 + j) * M + k];
    acc += dist_grad(d, grad[grad_off + row + j], dist[dist_off + row + j], p);
  }
  out[out_off + g] = acc;
}

// The index of pair (i, j), i < j, among the n (n - 1) / 2 pairs in row-major order.
inline long pair_start(long i, long n) { return i * (2 * n - i - 1) / 2; }

// self [N, M] contiguous, out [N (N - 1) / 2].
__kernel void pdist_forward(ulong total, long N, long M, ACC p, __global const DATA* x,
                            ulong x_off, __global DATA* out, ulong out_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  const long q = (long)g;
  // Row i of pair q: an estimate from the quadratic formula, then corrected exactly.
  const float nf = (float)N;
  long i = (long)(nf - 0.5f - sqrt((nf - 0.5f) * (nf - 0.5f) - 2.0f * (float)q));
  i = clamp(i, 0L, N - 2);
  while (i > 0 && pair_start(i, N) > q) --i;
  while (i < N - 2 && pair_start(i + 1, N) <= q) ++i;
  const long j = q - pair_start(i, N) + i + 1;
  const ulong a = x_off + i * M, c = x_off + j * M;
  ACC agg = 0;
  for (long k = 0; k < M; ++k) agg = dist_accumulate(agg, dist_term(x[a + k] - x[c + k], p), true);
  out[out_off + g] = dist_finish(agg, p);
}

// grad_self [N, M] (contiguous) from grad [pairs] (stride grad_stride) and pdist (contiguous).
__kernel void pdist_backward(ulong total, long N, long M, ACC p, __global const DATA* grad,
                             ulong grad_off, long grad_stride, __global const DATA* x,
                             ulong x_off, __global const DATA* dist, ulong dist_off,
                             __global DATA* out, ulong out_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  const long k = g % M, i = g / M;
  const ACC v = x[x_off + g];
  ACC acc = 0;
  for (long j = 0; j < N; ++j) {
    if (j == i) continue;
    const long q = i < j ? pair_start(i, N) + j - i - 1 : pair_start(j, N) + i - j - 1;
    const ACC d = v - x[x_off + j * M + k];
    acc += dist_grad(d, grad[grad_off + q * grad_stride], dist[dist_off + q], p);
  }
  out[out_off + g] = acc;
}
