// triangular: tril / triu of the last two dims, on contiguous [batch, M, N] elements.
//
// tri(in, in_off, out, out_off, total, M, N, k): element e (< total) of [batch, M, N], at row
// i = (e / N) % M and column j = e % N, is copied from in when it is kept and written as zero
// bits (0, 0.0, false) otherwise. Kept: j - i <= k (tril), j - i >= k with -DTRIU. in may be
// out itself (in-place: each work-item reads only the element it writes).
// Launch: global = {roundup(total, local)}, one work-item per element.
//
// Build options: -DT=<uchar|short|int|long> (the element's size: copied as bits), [-DTRIU].

__kernel void tri(__global const T* in, ulong in_off, __global T* out, ulong out_off, ulong total,
                  ulong M, ulong N, long k) {
  const ulong e = get_global_id(0);
  if (e >= total) return;
  // without `%` (see elementwise.cl: Oclgrind and LLVM's freeze)
  const ulong row = e / N;
  const long i = (long)(row - row / M * M), j = (long)(e - row * N);
#ifdef TRIU
  const int keep = j - i >= k;
#else
  const int keep = j - i <= k;
#endif
  out[out_off + e] = keep ? in[in_off + e] : (T)0;
}
