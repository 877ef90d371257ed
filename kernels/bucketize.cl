// searchsorted and bucketize: for every input value, the position of the first boundary of its
// row that is >= the value (right = 0) or > the value (right = 1), with CPU torch's comparisons
// (so a NaN value goes after every boundary, and NaN boundaries compare false). One work-item per
// input element (global = roundup(n, local)).
//
// Boundaries are one row (bd_rows = 1: every value searches it) or one row of m boundaries per
// row of `inner` input values (the leading dimensions match). With a sorter, the row is visited
// in the order bd[row_start + sorter[row_start + j]]. Every sorter entry is checked (the n
// work-items share the sorter_n entries, as the CPU checks them all before searching): one
// outside [0, m) records err_code in *err (raised at the host's next wait,
// runtime/DeviceError.h), and a search that meets it reads entry 0 instead.
//
// Build options (set by csrc/ops/Bucketize.cpp): -DT=<tag> (values and boundaries, common.clh),
// -DOUT_T=<int|long>.
// Arguments (offsets in elements):
//   search(ulong n, ulong inner, ulong m, int bd_rows_one, int right, values, values_off,
//          boundaries, bd_off, const long* sorter, sorter_off, ulong sorter_n (0: no sorter),
//          OUT_T* out, out_off, int* err, int err_code)

__kernel void search(ulong n, ulong inner, ulong m, int bd_rows_one, int right,
                     __global const STORE_TYPE(T)* values, ulong values_off,
                     __global const STORE_TYPE(T)* bd, ulong bd_off,
                     __global const long* sorter, ulong sorter_off, ulong sorter_n,
                     __global OUT_T* out, ulong out_off, __global int* err, int err_code) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  const bool has_sorter = sorter_n > 0;
  for (ulong s = i; s < sorter_n; s += n) {
    const long e = sorter[sorter_off + s];
    if (e < 0 || (ulong)e >= m) atomic_cmpxchg(err, 0, err_code);
  }
  const ulong start = bd_rows_one ? 0 : i / inner * m;
  const REG_TYPE(T) v = LOAD(T, values, values_off + i);
  ulong lo = 0, hi = m;
  while (lo < hi) {
    const ulong mid = lo + ((hi - lo) >> 1);
    ulong k = mid;
    if (has_sorter) {
      const long s = sorter[sorter_off + start + mid];
      k = s < 0 || (ulong)s >= m ? 0 : (ulong)s;
    }
    const REG_TYPE(T) b = LOAD(T, bd, bd_off + start + k);
    const bool after = right ? !(b > v) : !(b >= v);
    if (after)
      lo = mid + 1;
    else
      hi = mid;
  }
  out[out_off + i] = (OUT_T)lo;
}
