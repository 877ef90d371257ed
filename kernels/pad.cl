// Backward of reflection and replication padding as a gather: one work-item per element of
// grad_input, summing grad_output over every output position whose forward value was read from
// that element. No atomics, so the sums are deterministic. (The forwards are the remap kernel of
// shape.cl.)
//
// Tensors are viewed as [N, C, D, H, W] with arbitrary element strides (1-d and 2-d padding:
// D = H = 1 or D = 1; unbatched: N = 1). Along a padded dim of input extent I, padding before
// `a` (negative: the forward dropped elements) and output extent O, output position o read input
//   REFLECT    j = o - a reflected at the edges (-1 -> 1, I -> I - 2; |a| and the far pad < I)
//   REPLICATE  j = clamp(o - a, 0, I - 1)
//
// Build options: -DT_=<float|double|half|bfloat16> -DACC_T=<float|double> -DREFLECT|-DREPLICATE
// Arguments: ulong total (elements of grad_input), long C, D, H, W (input extents), long OD, OH,
//   OW (output extents), long aD, aH, aW (padding before), then grad_output and grad_input, each
//   as buffer, offset and 5 strides (N, C, D, H, W).
// Launch: global = roundup(total, local), in logical [N, C, D, H, W] order of grad_input.

#define ACC REG_TYPE(ACC_T)
#define DATA STORE_TYPE(T_)
#define TENSOR(type, p) \
  __global type *p, ulong p##_off, long p##N, long p##C, long p##D, long p##H, long p##W

// The output positions that read input position i along one dim, as up to three ranges
// [lo[k], hi[k]] (reflection: up to three single positions; replication: one range). Returns the
// number of ranges.
inline int sources(long i, long I, long a, long O, long* lo, long* hi) {
  int n = 0;
#ifdef REFLECT
  long cand[3];
  int m = 0;
  cand[m++] = i + a;                               // read directly
  if (i > 0) cand[m++] = a - i;                    // reflected at the start
  if (i < I - 1) cand[m++] = a + 2 * (I - 1) - i;  // reflected at the end
  for (int k = 0; k < m; ++k) {
    if (cand[k] >= 0 && cand[k] < O) {
      lo[n] = cand[k];
      hi[n] = cand[k];
      ++n;
    }
  }
#else
  long first = i == 0 ? 0 : i + a;
  long last = i == I - 1 ? O - 1 : i + a;
  first = max(first, 0L);
  last = min(last, O - 1);
  if (first <= last) {
    lo[0] = first;
    hi[0] = last;
    n = 1;
  }
#endif
  return n;
}

__kernel void pad_backward(ulong total, long C, long D, long H, long W, long OD, long OH, long OW,
                           long aD, long aH, long aW, TENSOR(const DATA, go), TENSOR(DATA, gi)) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  // g = (((n * C + c) * D + d) * H + h) * W + w, remainders without `%` (see elementwise.cl).
  const ulong q_w = g / (ulong)W;
  const long w = (long)(g - q_w * (ulong)W);
  const ulong q_h = q_w / (ulong)H;
  const long h = (long)(q_w - q_h * (ulong)H);
  const ulong q_d = q_h / (ulong)D;
  const long d = (long)(q_h - q_d * (ulong)D);
  const ulong q_c = q_d / (ulong)C;
  const long c = (long)(q_d - q_c * (ulong)C);
  const long n = (long)q_c;
  long dlo[3], dhi[3], hlo[3], hhi[3], wlo[3], whi[3];
  const int nd = sources(d, D, aD, OD, dlo, dhi);
  const int nh = sources(h, H, aH, OH, hlo, hhi);
  const int nw = sources(w, W, aW, OW, wlo, whi);
  const ulong base = go_off + n * goN + c * goC;
  ACC acc = 0;
  for (int kd = 0; kd < nd; ++kd) {
    for (long od = dlo[kd]; od <= dhi[kd]; ++od) {
      for (int kh = 0; kh < nh; ++kh) {
        for (long oh = hlo[kh]; oh <= hhi[kh]; ++oh) {
          for (int kw = 0; kw < nw; ++kw) {
            for (long ow = wlo[kw]; ow <= whi[kw]; ++ow) {
              acc += (ACC)LOAD(T_, go, base + od * goD + oh * goH + ow * goW);
            }
          }
        }
      }
    }
  }
  STORE(T_, gi, gi_off + n * giN + c * giC + d * giD + h * giH + w * giW, CONVERT(T_, acc));
}
