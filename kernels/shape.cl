// Shape ops and factories: remap writes a run of its result per work-item, the others one element.
//
// remap: out[o] = in[j(o)] over tensors of equal rank (up to 8 dims, innermost first), copied as
//   bits. Per dim d, the output coordinate o_d becomes the input coordinate j_d by the dim's mode
//   (modes.s<d>) and offset a_d, with I_d the input extent:
//     0 SHIFT      j = o - a; outside [0, I) the element is `fill` (constant padding, narrowing)
//     1 REFLECT    j = o - a reflected at the edges without repeating them (-1 -> 1, I -> I - 2);
//                  the host guarantees one reflection suffices (padding < I)
//     2 REPLICATE  j = clamp(o - a, 0, I - 1)
//     3 WRAP       j = (o - a) mod I, in [0, I) (roll); the host passes a in [0, I), so only
//                  non-negative values are divided
//     4 FLIP       j = I - 1 - o
//   tri (0: none, 1: lower, 2: upper) keeps only elements whose coordinates (row: dim row_dim,
//   col: dim col_dim) satisfy col - row <= k (lower) or col - row >= k (upper); the others are
//   `fill` (tril/triu).
//   Build options: -DT=<uchar|short|int|long> (the element's size; values are copied as bits).
//   Arguments: ulong n (elements of out), out buffer + offset, in buffer + offset, int ndim,
//   long8 out sizes, long8 out strides, long8 in sizes, long8 in strides, long8 offsets a,
//   int8 modes, T fill, int tri, long k, int row_dim, int col_dim.
//   Build option -DCHUNK=<k> (default 1): a work-item writes a run of up to k elements along dim 0.
//   Launch: global = roundup((n / size0) * ceil(size0 / CHUNK), local).
//
// range_fill: out[i] (contiguous, n elements) of an arithmetic or geometric sequence, computed in
//   REG_TYPE(ACC_T) (double where the device has it, else float) and converted like the CPU:
//     RANGE_MODE 0 (arange)    start + step * i
//     RANGE_MODE 1 (linspace)  i < n / 2 ? start + step * i : end - step * (n - 1 - i), every
//                              step rounded to OUT_T (only half and bfloat16 round)
//     RANGE_MODE 2 (logspace)  pow(base, the linspace value computed in ACC_T)
//   Integer outputs of arange compute in long (exact); all other cases in ACC_T, converted to
//   the output with CONVERT (truncation toward zero for integers, as C casts).
//   Build options: -DOUT_T=<tag> -DACC_T=<float|double> -DRANGE_MODE=<0|1|2> [-DINT_ARANGE]
//   Arguments: ulong n, out buffer + offset, ACC start, ACC end, ACC step, ACC base (INT_ARANGE:
//   long start, long step instead of the four).
//
// tri_indices: the coordinates of the lower (UPPER undefined) or upper (UPPER defined) triangle
//   of a row x col matrix with diagonal offset `offset`, in row-major order, as out[0, i] (row)
//   and out[1, i] (column) of a contiguous [2, n] tensor.
//   Build options: -DIDX_T=<int|long> [-DUPPER]
//   Arguments: ulong n, out buffer + offset, long row, long col, long offset.

#ifdef T
// The input coordinate j of output coordinate o along a dim of extent `ext`, by `mode` and the
// shift a (see above); `outside` is set for SHIFT coordinates past the input. Reflection uses the
// abs() builtin, not `j < 0 ? -j : j`, which LLVM turns into an intrinsic that Oclgrind cannot run.
#define MAP_COORD(o, ext, mode, a, j, outside)   \
  do {                                           \
    j = (mode) == 4 ? (ext)-1 - (o) : (o) - (a); \
    if ((mode) == 0) {                           \
      outside = outside || j < 0 || j >= (ext);  \
    } else if ((mode) == 1) {                    \
      j = (long)abs(j);                          \
      j = j >= (ext) ? 2 * ((ext)-1) - j : j;    \
    } else if ((mode) == 2) {                    \
      j = clamp(j, 0L, (ext)-1);                 \
    } else if ((mode) == 3) {                    \
      j = j < 0 ? j + (ext) : j;                 \
      const long jq = j / (ext);                 \
      j = j - jq * (ext);                        \
    }                                            \
  } while (0)

// One outer dim (d >= 1) of remap: split the run's row index, map the coordinate (components of
// the long8s are named, so the macro is spelled out per dim).
#define DIM_STEP(d, comp)                                         \
  if (ndim > d) {                                                 \
    const long s = osize.comp;                                    \
    const long q = (ndim == d + 1) ? 0 : rem / s;                 \
    const long o = rem - q * s;                                   \
    rem = q;                                                      \
    oo += o * ostride.comp;                                       \
    long j;                                                       \
    MAP_COORD(o, isize.comp, modes.comp, shift.comp, j, outside); \
    io += j * istride.comp;                                       \
    if (d == col_dim) col = o;                                    \
    if (d == row_dim) row = o;                                    \
  }

// CHUNK: output elements per work-item, a run along dim 0 (1 on GPUs, more on CPU devices, where
// the index divisions per work-item cost more than the copy).
#ifndef CHUNK
#define CHUNK 1
#endif

__kernel void remap(ulong n, __global T* out, ulong out_off, __global const T* in, ulong in_off,
                    int ndim, long8 osize, long8 ostride, long8 isize, long8 istride, long8 shift,
                    int8 modes, T fill, int tri, long k, int row_dim, int col_dim) {
  const long s0 = osize.s0;
  const long runs = (s0 + CHUNK - 1) / CHUNK;  // runs per row of dim 0
  const long i = (long)get_global_id(0);
  const long r = i / runs;
  if (r >= (long)n / s0) return;
  const long c0 = (i - r * runs) * CHUNK;
  long rem = r, oo = 0, io = 0, row = 0, col = 0;
  bool outside = false;
  DIM_STEP(1, s1)
  DIM_STEP(2, s2)
  DIM_STEP(3, s3)
  DIM_STEP(4, s4)
  DIM_STEP(5, s5)
  DIM_STEP(6, s6)
  DIM_STEP(7, s7)
  const long c1 = min(c0 + (long)CHUNK, s0);
  for (long o = c0; o < c1; ++o) {
    long j;
    bool out0 = outside;
    MAP_COORD(o, isize.s0, modes.s0, shift.s0, j, out0);
    const long cl = col_dim == 0 ? o : col, rw = row_dim == 0 ? o : row;
    if (tri == 1) out0 = out0 || cl - rw > k;
    if (tri == 2) out0 = out0 || cl - rw < k;
    out[out_off + oo + o * ostride.s0] = out0 ? fill : in[in_off + io + j * istride.s0];
  }
}
#endif  // T

#ifdef RANGE_MODE
#define ACC REG_TYPE(ACC_T)
#if RANGE_MODE == 1
#define R(x) ROUND(OUT_T, x)
#else
#define R(x) (x)
#endif

#ifdef INT_ARANGE
__kernel void range_fill(ulong n, __global STORE_TYPE(OUT_T)* out, ulong out_off, long start,
                         long step) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  STORE(OUT_T, out, out_off + i, CONVERT(OUT_T, start + step * (long)i));
}
#else
__kernel void range_fill(ulong n, __global STORE_TYPE(OUT_T)* out, ulong out_off, ACC start,
                         ACC end, ACC step, ACC base) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
#if RANGE_MODE == 0
  const ACC v = start + step * (ACC)i;
#else
  // Each operation rounded to the output dtype (R: the identity except for half and bfloat16,
  // whose CPU kernel computes linspace in the dtype itself).
  const ulong halfway = n / 2;
  ACC v = i < halfway ? R(start + R(step * R((ACC)i))) : R(end - R(step * R((ACC)(n - 1 - i))));
#if RANGE_MODE == 2
  v = pow(base, v);
#endif
#endif
  STORE(OUT_T, out, out_off + i, CONVERT(OUT_T, v));
}
#endif  // INT_ARANGE
#endif  // RANGE_MODE

#ifdef IDX_T
// Elements of the lower triangle (column <= row + offset) in the first `row` rows of a matrix
// with `col` columns: rows contribute clamp(r + offset + 1, 0, col) each, a trapezoid on top of a
// rectangle.
inline long tril_count(long row, long col, long offset) {
  if (row <= 0 || col <= 0) return 0;
  const long first = offset > 0 ? min(col, 1 + offset) : (row + offset > 0 ? 1 : 0);
  const long last = max(0L, min(col, row + offset));
  const long rows = max(0L, min(row, row + offset));
  const long trapezoid_rows = last - first + 1;
  long count = (first + last) * trapezoid_rows / 2;
  if (rows > trapezoid_rows) count += (rows - trapezoid_rows) * col;
  return count;
}

// Elements of the triangle before row r (row-major order).
inline long before_row(long r, long col, long offset) {
#ifdef UPPER
  return r * col - tril_count(r, col, offset - 1);
#else
  return tril_count(r, col, offset);
#endif
}

__kernel void tri_indices(ulong n, __global IDX_T* out, ulong out_off, long row, long col,
                          long offset) {
  const ulong g = get_global_id(0);
  if (g >= n) return;
  const long i = (long)g;
  // The last row r with before_row(r) <= i (rows before it may be empty).
  long lo = 0, hi = row - 1;
  while (lo < hi) {
    const long mid = lo + (hi - lo + 1) / 2;
    if (before_row(mid, col, offset) <= i) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const long within = i - before_row(lo, col, offset);
#ifdef UPPER
  const long c = max(0L, lo + offset) + within;
#else
  const long c = within;
#endif
  out[out_off + g] = (IDX_T)lo;
  out[out_off + n + g] = (IDX_T)c;
}
#endif  // IDX_T
