// max_unpool2d / max_unpool3d forward (their backwards are ATen composites: a gather by the
// indices). Tensors are viewed as [N, C, D, H, W] with arbitrary element strides (a 2-d op has
// D = 1). One work-item per (n, c) plane: it zeroes its output plane, then writes each input
// element at its index in the input's (d, h, w) order, so a duplicate index keeps the last value
// as on the CPU, deterministically and without atomics on data. An index outside the output
// plane is recorded in the device error word (raised at the next host wait) and skipped.
//
// Build options: -DDATA=<ushort|uint|ulong>: the elements' bits (the kernel only moves values; a
//   zero of those bits is +0.0)
// Arguments: ulong planes, long C, ID, IH, IW, OD, OH, OW, then input, indices and output (each
//   buffer, offset, 5 strides), the error word and this op's error code.

#define TENSOR(type, p) \
  __global type *p, ulong p##_off, long p##N, long p##C, long p##D, long p##H, long p##W

__kernel void max_unpool_forward(ulong planes, long C, long ID, long IH, long IW, long OD,
                                 long OH, long OW, TENSOR(const DATA, in),
                                 TENSOR(const long, idx), TENSOR(DATA, out),
                                 __global int* err, int err_code) {
  const ulong p = get_global_id(0);
  if (p >= planes) return;
  const long c = p % C, n = p / C;
  const ulong ob = out_off + n * outN + c * outC;
  for (long d = 0; d < OD; ++d)
    for (long h = 0; h < OH; ++h)
      for (long w = 0; w < OW; ++w) out[ob + d * outD + h * outH + w * outW] = (DATA)0;
  const long volume = OD * OH * OW;
  const ulong ib = in_off + n * inN + c * inC, xb = idx_off + n * idxN + c * idxC;
  for (long d = 0; d < ID; ++d) {
    for (long h = 0; h < IH; ++h) {
      for (long w = 0; w < IW; ++w) {
        const long k = idx[xb + d * idxD + h * idxH + w * idxW];
        if (k < 0 || k >= volume) {
          atomic_cmpxchg(err, 0, err_code);
          continue;
        }
        const long od = k / (OH * OW), oh = (k / OW) % OH, ow = k % OW;
        out[ob + od * outD + oh * outH + ow * outW] = in[ib + d * inD + h * inH + w * inW];
      }
    }
  }
}
