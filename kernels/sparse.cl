// Sparse tensors on ocl (csrc/ops/sparse/): the arithmetic that needs a kernel of its own.
//   segment_sum:  coalesce's sum of duplicate entries; out[s, e] = sum over p in
//                 [starts[s], starts[s + 1]) of values[perm[p], e], in p's order (the stable
//                 sort's order, so the sum is the same every run).
//   csr_spmm:     out[i, j] = beta * self[i, j] + alpha * sum over p in [crow[i], crow[i + 1])
//                 of val[p] * dense[col[p], j] (sparse x dense products, COO after sorting rows).
//   sampled_dot:  out[p] = beta * self[p] + alpha * sum over k of a[row[p], k] * b[k, col[p]]
//                 (sampled_addmm: the product evaluated at a CSR tensor's entries only).
// Every buffer argument is followed by its offset in elements (ulong); dense operands also take
// their strides in elements. Sums are accumulated in REG_TYPE(T) (float for half/bfloat16).
//
// Build options: -DT=<float|double|half|bfloat16> -DIDX_T=<long|int> (index dtype).
// Launch: one work-item per output element, global = roundup(total, local); csr_spmm: 2-d,
// (roundup(columns, local), rows), local (power of two covering the columns, 1).

#define DATA STORE_TYPE(T)
#define ACC REG_TYPE(T)

__kernel void segment_sum(ulong total, ulong inner, __global const long* starts, ulong starts_off,
                          __global const long* perm, ulong perm_off, __global const DATA* values,
                          ulong values_off, __global DATA* out, ulong out_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  starts += starts_off;
  perm += perm_off;
  values += values_off;
  const ulong s = g / inner, e = g % inner;
  ACC acc = 0;
  for (long p = starts[s]; p < starts[s + 1]; ++p) acc += LOAD(T, values, perm[p] * inner + e);
  STORE(T, out, out_off + g, acc);
}

__kernel void csr_spmm(ulong nrows, ulong ncols, __global const IDX_T* crow, ulong crow_off,
                       __global const IDX_T* col, ulong col_off, __global const DATA* val,
                       ulong val_off, __global const DATA* dense, ulong dense_off, long d0, long d1,
                       __global const DATA* self, ulong self_off, long s0, long s1,
                       __global DATA* out, ulong out_off, ACC beta, ACC alpha, int use_self) {
  // A 2-d launch, (columns, rows), one row per work-group: every work-item of a group runs the
  // same number of iterations, so CPU devices vectorise the group across columns.
  const ulong j = get_global_id(0);
  const ulong i = get_global_id(1);
  if (j >= ncols || i >= nrows) return;
  crow += crow_off;
  col += col_off;
  val += val_off;
  dense += dense_off;
  ACC acc = 0;
  const long end = (long)crow[i + 1];
  for (long p = (long)crow[i]; p < end; ++p)
    acc += LOAD(T, val, p) * LOAD(T, dense, (long)col[p] * d0 + (long)j * d1);
  ACC r = alpha * acc;
  if (use_self) r += beta * LOAD(T, self, (long)self_off + (long)i * s0 + (long)j * s1);
  STORE(T, out, out_off + i * ncols + j, r);
}

__kernel void sampled_dot(ulong total, ulong k, __global const long* row, ulong row_off,
                          __global const IDX_T* col, ulong col_off, __global const DATA* a,
                          ulong a_off, long a0, long a1, __global const DATA* b, ulong b_off,
                          long b0, long b1, __global const DATA* self, ulong self_off,
                          __global DATA* out, ulong out_off, ACC beta, ACC alpha, int use_self) {
  const ulong p = get_global_id(0);
  if (p >= total) return;
  row += row_off;
  col += col_off;
  a += a_off;
  b += b_off;
  const long i = row[p], j = (long)col[p];
  ACC acc = 0;
  for (long q = 0; q < (long)k; ++q)
    acc += LOAD(T, a, i * a0 + q * a1) * LOAD(T, b, q * b0 + j * b1);
  ACC r = alpha * acc;
  if (use_self) r += beta * LOAD(T, self, self_off + p);
  STORE(T, out, out_off + p, r);
}
