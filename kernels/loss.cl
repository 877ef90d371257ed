// Negative log-likelihood loss over log-probabilities `in` of shape [N, C] (element strides
// in_sn, in_sc) and class targets `target` [N] (int64).
//
// Build options: -DT=<tag of in/weight/outputs> -DACC_T=<float|double> [-DHAS_WEIGHT]
// Launch (both kernels): global = {roundup(N, LWS)}, local = {LWS} (LWS = 64).
//
// nll_loss_forward: loss[i] = -w[t_i] * in[i, t_i] and wsum[i] = w[t_i] (w = 1 without a weight),
//   both 0 when t_i == ignore_index. A target outside [0, C) gives NaN in both and stores err_code
//   in *err (if it is still 0): the host raises the error at its next wait (runtime/DeviceError.h).
//   Both kernels end with the arguments (__global int* err, int err_code).
// check_unit_interval: stores err_code in *err (if still 0) when an element of the contiguous
//   `in` (n elements) is outside [0, 1] or NaN (binary_cross_entropy's input check).
// nll_loss_backward: gin[i, t_i] = -w[t_i] * g * scale, where g = gout[gout_off + i*gout_stride]
//   (stride 0 for a reduced loss) and scale = 1 / total_weight[tw_off] when MEAN is defined, else
//   1. gin must be zero-filled beforehand; rows with ignored or invalid targets are left alone (an
//   invalid one also stores err_code in *err).

#define ACC REG_TYPE(ACC_T)

__kernel void nll_loss_forward(ulong N, ulong C, __global const STORE_TYPE(T)* in, ulong in_off,
                               long in_sn, long in_sc, __global const long* target, ulong t_off,
                               long t_stride, __global const STORE_TYPE(T)* weight, ulong w_off,
                               long ignore_index, __global STORE_TYPE(T)* loss, ulong loss_off,
                               __global STORE_TYPE(T)* wsum, ulong wsum_off, __global int* err,
                               int err_code) {
  const ulong i = get_global_id(0);
  if (i >= N) return;
  const long t = target[t_off + i * t_stride];
  ACC l = 0, w = 0;
  if (t != ignore_index) {
    if (t < 0 || (ulong)t >= C) {
      l = NAN;
      w = NAN;
      atomic_cmpxchg(err, 0, err_code);
    } else {
#ifdef HAS_WEIGHT
      w = LOAD(T, weight, w_off + t);
#else
      w = 1;
#endif
      l = -w * (ACC)LOAD(T, in, in_off + i * in_sn + t * in_sc);
    }
  }
  STORE(T, loss, loss_off + i, CONVERT(T, l));
  STORE(T, wsum, wsum_off + i, CONVERT(T, w));
}

__kernel void nll_loss_backward(ulong N, ulong C, __global STORE_TYPE(T)* gin, ulong gin_off,
                                long gin_sn, long gin_sc, __global const long* target, ulong t_off,
                                long t_stride, __global const STORE_TYPE(T)* weight, ulong w_off,
                                long ignore_index, __global const STORE_TYPE(T)* gout,
                                ulong gout_off, long gout_stride,
                                __global const STORE_TYPE(T)* total_weight, ulong tw_off,
                                __global int* err, int err_code) {
  const ulong i = get_global_id(0);
  if (i >= N) return;
  const long t = target[t_off + i * t_stride];
  if (t == ignore_index) return;
  if (t < 0 || (ulong)t >= C) {
    atomic_cmpxchg(err, 0, err_code);
    return;
  }
#ifdef HAS_WEIGHT
  const ACC w = LOAD(T, weight, w_off + t);
#else
  const ACC w = 1;
#endif
  ACC g = LOAD(T, gout, gout_off + i * gout_stride);
#ifdef MEAN
  g /= (ACC)LOAD(T, total_weight, tw_off);
#endif
  STORE(T, gin, gin_off + i * gin_sn + t * gin_sc, CONVERT(T, -w * g));
}

__kernel void check_unit_interval(ulong n, __global const STORE_TYPE(T)* in, ulong in_off,
                                  __global int* err, int err_code) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  const REG_TYPE(T) x = LOAD(T, in, in_off + i);
  if (!(x >= 0 && x <= 1)) atomic_cmpxchg(err, 0, err_code);
}
