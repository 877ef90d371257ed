// index_select: the source, contiguous, viewed as [outer, src_dim, inner], and a vector of n_idx
// indices; out[o, j, i] = src[o, index[j], i] over out = [outer, n_idx, inner], one work-item per
// output element (global = roundup(outer * n_idx * inner, local)).
//
// Build options (set by csrc/ops/Index.cpp):
//   -DT=<uchar|short|int|long>  an unsigned-agnostic type of the element's size (copied as bits)
//   -DIDX_T=<long|int>          the index dtype
// An index outside [0, src_dim) stores err_code in *err (the host raises it at its next wait,
// runtime/DeviceError.h) and writes zero bits instead of reading out of bounds.

__kernel void index_select(ulong total, ulong inner, ulong n_idx, long src_dim, __global T* out,
                           ulong out_off, __global const T* src, ulong src_off,
                           __global const IDX_T* index, ulong index_off, long index_stride,
                           __global int* err, int err_code) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  // g = (o * n_idx + j) * inner + i, without `%` (see elementwise.cl: Oclgrind and LLVM's freeze)
  const ulong rest = g / inner;
  const ulong i = g - rest * inner;
  const ulong o = rest / n_idx;
  const ulong j = rest - o * n_idx;
  const long k = (long)index[index_off + (long)j * index_stride];
  if (k < 0 || k >= src_dim) {
    atomic_cmpxchg(err, 0, err_code);
    out[out_off + g] = (T)0;
    return;
  }
  out[out_off + g] = src[src_off + (o * (ulong)src_dim + (ulong)k) * inner + i];
}
