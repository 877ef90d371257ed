// nn.EmbeddingBag / F.embedding_bag (csrc/ops/EmbeddingBag.cpp).
//
//   bag_forward:      one work-item per (d, bag) of an enqueue_grid (d fastest: a work-group reads
//                     consecutive columns of the same weight rows). Bag b covers the positions
//                     [offsets[b], end_b) with end_b = offsets[b + 1], or the number of indices n
//                     for the last bag (with include_last_offset too, whatever the last offset
//                     says, as the CPU and CUDA do), both clamped to [0, n].
//                     Positions whose index is padding_idx are skipped. mode 0 (sum, optionally
//                     times per_sample_weights[j]), 1 (mean: the sum over the bag's count of
//                     non-padding positions), 2 (max: the first value, replaced by larger ones,
//                     as the CPU compares: a NaN stays only if it comes first; max_idx[b, d] is the
//                     winning row, -1 for an empty bag whose output is 0). The items of column 0
//                     also write offset2bag[j] = b and bag_size[b]. An index outside [0,
//                     num_weights) records err_code.
//   bag_backward:     grad_weight[v, d] for every row v and column d, from the positions j with
//                     indices[j] == v in ascending j (the sorted runs of csrc/ops/Embedding.h;
//                     positions in no bag, offset2bag[j] = -1, are skipped):
//                     sum/mean add grad[offset2bag[j], d] (times per_sample_weights[j], over
//                     bag_size for mean, over the run's length with scale_grad_by_freq); max adds
//                     grad[b, d] once per bag b whose max_idx[b, d] == v. Deterministic, no
//                     atomics.
//   bag_psw_backward: grad_per_sample_weights[j] = <grad[offset2bag[j], :], weight[indices[j], :]>
//                     (0 for padding_idx), one work-group of LWS items per position j.
//
// Every buffer argument is followed by its offset in elements (ulong).
// Build options: -DT=<float tag> -DIDX_T=<long|int> [-DHAS_PSW] [-DLWS=<power of two>].

#ifdef BAG_FORWARD
__kernel void bag_forward(ulong n, ulong dim, ulong bags, __global const IDX_T* idx, ulong idx_off,
                          __global const IDX_T* offsets, ulong offsets_off,
                          __global const STORE_TYPE(T)* w, ulong w_off, long w_s0, long w_s1,
                          long num_weights, __global const STORE_TYPE(T)* psw, ulong psw_off,
                          long psw_s, int mode, long padding_idx, __global STORE_TYPE(T)* out,
                          ulong out_off, __global IDX_T* offset2bag, ulong o2b_off,
                          __global IDX_T* bag_size, ulong bs_off, __global IDX_T* max_idx,
                          ulong mi_off, __global int* err, int err_code) {
  const ulong d = get_global_id(0);
  const ulong b = get_global_id(1);
  if (b >= bags) return;
  idx += idx_off;
  offsets += offsets_off;
  long begin = (long)offsets[b];
  long end = b + 1 < bags ? (long)offsets[b + 1] : (long)n;  // the last bag ends at n
  begin = clamp(begin, 0L, (long)n);
  end = clamp(end, begin, (long)n);
  if (d == 0) {
    long count = 0;
    for (long j = begin; j < end; ++j) {
      offset2bag[o2b_off + j] = (IDX_T)b;
      const long v = (long)idx[j];
      if (v < 0 || v >= num_weights) atomic_cmpxchg(err, 0, err_code);
      if (v != padding_idx) ++count;
    }
    bag_size[bs_off + b] = (IDX_T)count;
  }
  if (d >= dim) return;
  REG_TYPE(T) acc = 0;
  long arg = -1;
  long count = 0;
  for (long j = begin; j < end; ++j) {
    const long v = (long)idx[j];
    if (v == padding_idx || v < 0 || v >= num_weights) continue;
    REG_TYPE(T) x = LOAD(T, w, w_off + (ulong)(v * w_s0 + (long)d * w_s1));
    if (mode == 2) {
      // the first value or a larger one, as the CPU compares (a NaN first stays; a later NaN
      // is never larger)
      if (count == 0 || x > acc) {
        acc = x;
        arg = v;
      }
    } else {
#ifdef HAS_PSW
      x = x * LOAD(T, psw, psw_off + (ulong)(j * psw_s));
#endif
      acc += x;
    }
    ++count;
  }
  // mean: the sum rounded to T, then divided (the CPU stores the sum in the output's dtype and
  // divides it there: two roundings for half and bfloat16)
  if (mode == 1 && count > 0) acc = ROUND(T, acc) / (REG_TYPE(T))count;
  STORE(T, out, out_off + b * dim + d, acc);
  if (mode == 2) max_idx[mi_off + b * dim + d] = (IDX_T)arg;
}
#endif

#ifdef BAG_BACKWARD
__kernel void bag_backward(ulong total, ulong dim, __global const uint* start, ulong start_off,
                           __global const uint* end, ulong end_off, __global const uint* vals,
                           ulong vals_off, __global const IDX_T* offset2bag, ulong o2b_off,
                           __global const IDX_T* bag_size, ulong bs_off,
                           __global const IDX_T* max_idx, ulong mi_off,
                           __global const STORE_TYPE(T)* psw, ulong psw_off, long psw_s,
                           __global const STORE_TYPE(T)* grad, ulong grad_off, long g_s0, long g_s1,
                           __global STORE_TYPE(T)* out, ulong out_off, int mode,
                           int scale_by_freq) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  start += start_off;
  end += end_off;
  vals += vals_off;
  offset2bag += o2b_off;
  const ulong v = g / dim;
  const ulong d = g - v * dim;
  const uint s = start[v], e = end[v];
  REG_TYPE(T) acc = 0;
  const REG_TYPE(T) freq = scale_by_freq && e > s ? (REG_TYPE(T))1 / (REG_TYPE(T))(e - s) : 1;
  long prev_bag = -1;
  for (uint k = s; k < e; ++k) {
    const uint j = vals[k];
    const long b = (long)offset2bag[j];
    if (b < 0) continue;  // in no bag (before the first offset or after the last)
    REG_TYPE(T) x;
    if (mode == 2) {
      // once per bag (positions ascend, so a bag's positions are adjacent in the run)
      if (b == prev_bag) continue;
      prev_bag = b;
      if ((long)max_idx[mi_off + (ulong)b * dim + d] != (long)v) continue;
      x = LOAD(T, grad, grad_off + (ulong)(b * g_s0 + (long)d * g_s1));
    } else {
      x = LOAD(T, grad, grad_off + (ulong)(b * g_s0 + (long)d * g_s1));
#ifdef HAS_PSW
      x = x * LOAD(T, psw, psw_off + (ulong)((long)j * psw_s));
#endif
      if (mode == 1) x = x / (REG_TYPE(T))bag_size[bs_off + b];
    }
    acc += freq * x;
  }
  STORE(T, out, out_off + g, acc);
}
#endif

#ifdef BAG_PSW_BACKWARD
__kernel void bag_psw_backward(ulong n, ulong dim, __global const IDX_T* idx, ulong idx_off,
                               __global const IDX_T* offset2bag, ulong o2b_off,
                               __global const STORE_TYPE(T)* grad, ulong grad_off, long g_s0,
                               long g_s1, __global const STORE_TYPE(T)* w, ulong w_off, long w_s0,
                               long w_s1, long num_weights, long padding_idx,
                               __global STORE_TYPE(T)* out, ulong out_off) {
  __local REG_TYPE(T) partial[LWS];
  const ulong j = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (j >= n) return;  // uniform: whole groups only
  const long v = (long)idx[idx_off + j];
  const long b = (long)offset2bag[o2b_off + j];
  const bool live = v != padding_idx && v >= 0 && v < num_weights && b >= 0;
  REG_TYPE(T) acc = 0;
  if (live) {
    for (ulong d = lid; d < dim; d += LWS)
      acc += LOAD(T, grad, grad_off + (ulong)(b * g_s0 + (long)d * g_s1)) *
             LOAD(T, w, w_off + (ulong)(v * w_s0 + (long)d * w_s1));
  }
  partial[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) STORE(T, out, out_off + j, partial[0]);
}
#endif
