// fractional_max_pool2d / fractional_max_pool3d forward and backward. Tensors are viewed as
// [N, C, T, H, W] (a 2-d op has T = 1); samples [N, C, k] hold each plane's random offsets (2-d:
// W, H; 3-d: T, H, W). Window starts follow ATen's generate_intervals in the data's precision
// (float16/bfloat16 round each step, as the CPU's Half arithmetic does); the window's maximum
// is the first largest element, a NaN taking over (the CPU's `val > max || isnan(val)`), and its
// index is t * H * W + h * W + w within the plane.
//
// fractional_max_forward: one work-item per output element.
// fractional_max_backward: one work-item per (n, c) plane: zeroes its grad_input plane, then adds
//   each grad_output element at its index in output order (overlapping windows can share an
//   index): deterministic, no atomics.
//
// Build options: -DT_=<floating tag> -DACC_T=<float|double>

#define ACC REG_TYPE(ACC_T)
#define DATA STORE_TYPE(T_)
#define R(x) ROUND(T_, x)

// The start of output position i's window along a dim.
inline long interval_start(ACC sample, long i, long in, long out, long pool) {
  if (i == out - 1) return in - pool;
  const ACC alpha = R((ACC)R((ACC)(in - pool)) / (ACC)R((ACC)(out - 1)));
  return (long)(int)R(R(R((ACC)i) + sample) * alpha) - (long)(int)R(sample * alpha);
}

// Output [N, C, OT, OH, OW] and indices, contiguous; input and samples with their strides.
__kernel void fractional_max_forward(ulong total, long C, long T, long H, long W, long OT,
                                     long OH, long OW, long PT, long PH, long PW, int dims,
                                     __global const DATA* in, ulong in_off, long iN, long iC,
                                     long iT, long iH, long iW, __global const DATA* smp,
                                     ulong smp_off, long sN, long sC, long sK,
                                     __global DATA* out, ulong out_off, __global long* idx,
                                     ulong idx_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  const long ow = g % OW, oh = (g / OW) % OH, ot = (g / OW / OH) % OT, c = (g / OW / OH / OT) % C,
             n = g / OW / OH / OT / C;
  const ulong sb = smp_off + n * sN + c * sC;
  long t0 = 0, h0, w0;
  if (dims == 3) {
    t0 = interval_start(LOAD(T_, smp, sb), ot, T, OT, PT);
    h0 = interval_start(LOAD(T_, smp, sb + sK), oh, H, OH, PH);
    w0 = interval_start(LOAD(T_, smp, sb + 2 * sK), ow, W, OW, PW);
  } else {
    w0 = interval_start(LOAD(T_, smp, sb), ow, W, OW, PW);
    h0 = interval_start(LOAD(T_, smp, sb + sK), oh, H, OH, PH);
  }
  const ulong ib = in_off + n * iN + c * iC;
  ACC best = -INFINITY;
  long best_i = (t0 * H + h0) * W + w0;
  for (long t = t0; t < t0 + PT; ++t) {
    for (long h = h0; h < h0 + PH; ++h) {
      for (long w = w0; w < w0 + PW; ++w) {
        const ACC v = LOAD(T_, in, ib + t * iT + h * iH + w * iW);
        if (v > best || OCL_ISNAN(v)) {
          best = v;
          best_i = (t * H + h) * W + w;
        }
      }
    }
  }
  STORE(T_, out, out_off + g, best);
  idx[idx_off + g] = best_i;
}

// grad_input [N, C, T, H, W] contiguous from grad_output and indices [N, C, OT, OH, OW] (strided).
__kernel void fractional_max_backward(ulong planes, long C, long plane, long OT, long OH, long OW,
                                      __global const DATA* go, ulong go_off, long gN, long gC,
                                      long gT, long gH, long gW, __global const long* idx,
                                      ulong idx_off, long xN, long xC, long xT, long xH, long xW,
                                      __global DATA* gi, ulong gi_off) {
  const ulong p = get_global_id(0);
  if (p >= planes) return;
  const long c = p % C, n = p / C;
  const ulong ob = gi_off + p * plane;
  for (long i = 0; i < plane; ++i) STORE(T_, gi, ob + i, (ACC)0);
  for (long t = 0; t < OT; ++t) {
    for (long h = 0; h < OH; ++h) {
      for (long w = 0; w < OW; ++w) {
        const long k = idx[idx_off + n * xN + c * xC + t * xT + h * xH + w * xW];
        if (k < 0 || k >= plane) continue;  // not an index this op made
        const ACC v = LOAD(T_, go, go_off + n * gN + c * gC + t * gT + h * gH + w * gW);
        STORE(T_, gi, ob + k, (ACC)LOAD(T_, gi, ob + k) + v);
      }
    }
  }
}
