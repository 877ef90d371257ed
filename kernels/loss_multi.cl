// multi_margin_loss forward and backward (F.multi_margin_loss), as ATen's LossMultiMargin.cpp
// computes them: for row t with target y,
//   loss[t] = sum over d != y of max(0, margin - x[t, y] + x[t, d])^p (times weight[y]) / dim.
// multi_margin_forward: one work-item per row, the row's loss (reductions sum those on the
//   host's side with a device sum: deterministic).
// multi_margin_backward: one work-item per row, writing the row's gradient (scaled by `g`, the
//   CPU's 1 / dim or 1 / (nframe * dim), and by grad_output: one value (stride 0) or per row).
// A target outside [0, dim) is recorded in the device error word and its row left as zero.
//
// Build options: -DT_=<float|double>

#define DATA T_

__kernel void multi_margin_forward(long nframe, long dim, int p, DATA margin, int has_weight,
                                   __global const DATA* x, ulong x_off, long xs0, long xs1,
                                   __global const long* target, ulong t_off, long ts,
                                   __global const DATA* weight, ulong w_off, long ws,
                                   __global DATA* out, ulong out_off, __global int* err,
                                   int err_code) {
  const long t = get_global_id(0);
  if (t >= nframe) return;
  const long y = target[t_off + t * ts];
  if (y < 0 || y >= dim) {
    atomic_cmpxchg(err, 0, err_code);
    out[out_off + t] = 0;
    return;
  }
  const ulong row = x_off + t * xs0;
  const DATA xy = x[row + y * xs1];
  DATA sum = 0;
  for (long d = 0; d < dim; ++d) {
    if (d == y) continue;
    const DATA z = margin - xy + x[row + d * xs1];
    if (z > 0) {
      DATA h = p == 1 ? z : z * z;
      if (has_weight) h *= weight[w_off + y * ws];
      sum += h;
    }
  }
  out[out_off + t] = sum / (DATA)dim;
}

// grad_input [nframe, dim] contiguous.
__kernel void multi_margin_backward(long nframe, long dim, int p, DATA margin, int has_weight,
                                    DATA g, __global const DATA* go, ulong go_off, long go_s,
                                    __global const DATA* x, ulong x_off, long xs0, long xs1,
                                    __global const long* target, ulong t_off, long ts,
                                    __global const DATA* weight, ulong w_off, long ws,
                                    __global DATA* gi, ulong gi_off, __global int* err,
                                    int err_code) {
  const long t = get_global_id(0);
  if (t >= nframe) return;
  const ulong out_row = gi_off + t * dim;
  const long y = target[t_off + t * ts];
  if (y < 0 || y >= dim) {
    atomic_cmpxchg(err, 0, err_code);
    for (long d = 0; d < dim; ++d) gi[out_row + d] = 0;
    return;
  }
  const ulong row = x_off + t * xs0;
  const DATA xy = x[row + y * xs1];
  const DATA scale = go[go_off + t * go_s];
  DATA gy = 0;
  for (long d = 0; d < dim; ++d) {
    if (d == y) continue;
    const DATA z = margin - xy + x[row + d * xs1];
    DATA h = 0;
    if (z > 0) {
      h = p == 1 ? g : 2 * g * z;
      if (has_weight) h *= weight[w_off + y * ws];
    }
    gy -= h;
    gi[out_row + d] = h * scale;
  }
  gi[out_row + y] = gy * scale;
}

// multilabel_margin_loss (ATen's LossMultiLabelMargin.cpp): row t's targets are target[t, 0..]
// up to the first -1; is_target[t, d] = 1 for those classes, and
//   loss[t] = sum over targets j and non-target classes d of max(0, 1 - x[t, j] + x[t, d]) / dim.
// multilabel_margin_forward: one work-item per row writes its is_target row (contiguous) and its
//   loss. Any target outside [-1, dim) is an error (device error word).
// multilabel_margin_backward: one work-item per row writes its gradient row (a row-local sum in
//   the CPU's order: deterministic), times g and grad_output (one value or per row).
__kernel void multilabel_margin_forward(long nframe, long dim, __global const DATA* x,
                                        ulong x_off, long xs0, long xs1,
                                        __global const long* target, ulong t_off, long ts0,
                                        long ts1, __global DATA* is_target, ulong it_off,
                                        __global DATA* out, ulong out_off, __global int* err,
                                        int err_code) {
  const long t = get_global_id(0);
  if (t >= nframe) return;
  const ulong row = x_off + t * xs0, trow = t_off + t * ts0, itrow = it_off + t * dim;
  for (long d = 0; d < dim; ++d) is_target[itrow + d] = 0;
  bool bad = false;
  for (long d = 0; d < dim; ++d) {
    const long y = target[trow + d * ts1];
    if (y < -1 || y >= dim) bad = true;
  }
  if (bad) {
    atomic_cmpxchg(err, 0, err_code);
    out[out_off + t] = 0;
    return;
  }
  for (long k = 0; k < dim; ++k) {
    const long y = target[trow + k * ts1];
    if (y < 0) break;
    is_target[itrow + y] = 1;
  }
  DATA sum = 0;
  for (long k = 0; k < dim; ++k) {
    const long y = target[trow + k * ts1];
    if (y < 0) break;
    const DATA xy = x[row + y * xs1];
    for (long d = 0; d < dim; ++d) {
      if (is_target[itrow + d] == 0) {
        const DATA z = 1 - xy + x[row + d * xs1];
        if (z > 0) sum += z;
      }
    }
  }
  out[out_off + t] = sum / (DATA)dim;
}

// grad_input [nframe, dim] contiguous; is_target with its strides.
__kernel void multilabel_margin_backward(long nframe, long dim, DATA g, __global const DATA* go,
                                         ulong go_off, long go_s, __global const DATA* x,
                                         ulong x_off, long xs0, long xs1,
                                         __global const long* target, ulong t_off, long ts0,
                                         long ts1, __global const DATA* is_target, ulong it_off,
                                         long its0, long its1, __global DATA* gi, ulong gi_off,
                                         __global int* err, int err_code) {
  const long t = get_global_id(0);
  if (t >= nframe) return;
  const ulong row = x_off + t * xs0, trow = t_off + t * ts0, itrow = it_off + t * its0;
  const ulong out_row = gi_off + t * dim;
  for (long d = 0; d < dim; ++d) gi[out_row + d] = 0;
  for (long d = 0; d < dim; ++d) {
    const long y = target[trow + d * ts1];
    if (y < -1 || y >= dim) {
      atomic_cmpxchg(err, 0, err_code);
      return;
    }
  }
  for (long k = 0; k < dim; ++k) {
    const long y = target[trow + k * ts1];
    if (y < 0) break;
    const DATA xy = x[row + y * xs1];
    for (long d = 0; d < dim; ++d) {
      if (is_target[itrow + d * its1] == 0) {
        const DATA z = 1 - xy + x[row + d * xs1];
        if (z > 0) {
          gi[out_row + y] -= g;
          gi[out_row + d] += g;
        }
      }
    }
  }
  const DATA scale = go[go_off + t * go_s];
  for (long d = 0; d < dim; ++d) gi[out_row + d] *= scale;
}
