// Convolution building blocks (csrc/ops/Conv.cpp): im2col, a col2im that gathers (each element of
// the result sums its own contributions: deterministic, no atomics), and direct kernels for
// depthwise convolution (one input channel per group).
//
// Everything is written in the terms of a normal (not transposed) convolution with 3 spatial
// dims (1d and 2d convolutions pass size 1, stride 1, padding 0 and dilation 1 for the missing
// leading dims):
//   "input"  x [N, C, D, H, W]      (any strides, in elements)
//   "output" y [N, CO, OD, OH, OW]  with O* = (I* + 2 P* - DIL* (K* - 1) - 1) / S* + 1
//   weight     [CO, C / groups, KD, KH, KW]
// Vector arguments hold the three spatial dims as (.x, .y, .z) = (depth, height, width):
//   isz = (D, H, W), osz = (OD, OH, OW), ks = (KD, KH, KW), st = strides, pd = paddings,
//   dl = dilations; ints, .w unused. Tensor strides are longs: sn, sc for batch and channel and
//   ss = (sd, sh, sw) for the spatial dims. Buffers come with an element offset (`*_off`).
//
// Build option: -DT=float | -DT=double (double needs -DTORCH_OCL_FP64). float16/bfloat16 are
// converted to float by the host. Every kernel is launched 1d with global = roundup(count,
// local) for the count it documents; work-items past the count return. All sizes and counts
// fit in int (the host checks); memory offsets are computed in long.

#ifndef T
#define T float
#endif

// q = a / b and r = a - q * b (not `%`: next to a `/`, LLVM pairs them and inserts a `freeze`,
// which Oclgrind's uninitialised-value checker cannot execute; see elementwise.cl).
inline int div_rem(int a, int b, int* r) {
  const int q = a / b;
  *r = a - q * b;
  return q;
}

// im2col: cols[n * cn + r * ld + opos] for r = ((c * KD + kd) * KH + kh) * KW + kw, where
// L = OD * OH * OW, opos = (od * OH + oh) * OW + ow and n < nb (images n0.. of the batch: x
// points at image n0). Two layouts: [C * kvol, nb * L] (ld = nb * L, cn = L) and one
// [C * kvol, L] matrix per image (ld = L, cn = C * kvol * L). The value is
//   x[n, c, od*SD - PD + kd*DD, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW], 0 outside the input.
// One work-item per (c, kd, kh, n, od, oh): count = C * KD * KH * nb * OD * OH; it writes the
// KW * OW values of its rows.
__kernel void im2col(int count, int nb, int4 isz, int4 osz, int4 ks, int4 st, int4 pd, int4 dl,
                     __global const T* x, ulong x_off, long sn, long sc, long4 ss, __global T* cols,
                     ulong cols_off, long ld, long cn) {
  const int g = get_global_id(0);
  if (g >= count) return;
  int rest = g;
  int oh;
  rest = div_rem(rest, osz.y, &oh);
  int od;
  rest = div_rem(rest, osz.x, &od);
  int n;
  rest = div_rem(rest, nb, &n);
  int kh;
  rest = div_rem(rest, ks.y, &kh);
  int kd;
  const int c = div_rem(rest, ks.x, &kd);
  const int id = od * st.x - pd.x + kd * dl.x;
  const int ih = oh * st.y - pd.y + kh * dl.y;
  const bool row_ok = id >= 0 && id < isz.x && ih >= 0 && ih < isz.y;
  const long col0 = (long)n * cn + ((long)od * osz.y + oh) * osz.z;
  const long r0 = ((long)(c * ks.x + kd) * ks.y + kh) * ks.z;
  __global const T* src = x + x_off + n * sn + c * sc + (long)id * ss.x + (long)ih * ss.y;
  for (int kw = 0; kw < ks.z; ++kw) {
    __global T* dst = cols + cols_off + (r0 + kw) * ld + col0;
    const int iw0 = kw * dl.z - pd.z;  // iw = iw0 + ow * SW
    // Outputs [lo, hi) read inside the input; the ones before and after read padding.
    int lo = 0, hi = 0;
    if (row_ok) {
      lo = iw0 >= 0 ? 0 : (-iw0 + st.z - 1) / st.z;
      hi = iw0 >= isz.z ? 0 : (isz.z - 1 - iw0) / st.z + 1;
      lo = min(lo, osz.z);
      hi = clamp(hi, lo, osz.z);
    }
    for (int ow = 0; ow < lo; ++ow) dst[ow] = (T)0;
    if (st.z == 1 && ss.z == 1) {
      __global const T* s1 = src + (iw0 + lo);  // unit strides: a plain copy
      __global T* d1 = dst + lo;
      for (int j = 0; j < hi - lo; ++j) d1[j] = s1[j];
    } else {
      for (int ow = lo; ow < hi; ++ow) dst[ow] = src[(long)(iw0 + ow * st.z) * ss.z];
    }
    for (int ow = hi; ow < osz.z; ++ow) dst[ow] = (T)0;
  }
}

// im2col_rows: the transposed layout, one row per output position, for channels-last outputs:
//   cols[j, (grp * kvol + k) * Cg + cl] = x[n, grp * Cg + cl, i(opos, k)]   (0 outside x)
// with j = n * L + opos (n < nb, x points at image n0), k = (kd * KH + kh) * KW + kw, G groups
// of Cg channels, row stride ld (>= G * kvol * Cg). One work-item per (n, opos, grp, k):
// count = nb * L * G * kvol; it writes Cg values (contiguous; reads along channels).
__kernel void im2col_rows(int count, int G, int Cg, int4 isz, int4 osz, int4 ks, int4 st, int4 pd,
                          int4 dl, __global const T* x, ulong x_off, long sn, long sc, long4 ss,
                          __global T* cols, ulong cols_off, long ld) {
  const int g = get_global_id(0);
  if (g >= count) return;
  int k, grp, ow, oh, od;
  int rest = div_rem(g, ks.x * ks.y * ks.z, &k);
  rest = div_rem(rest, G, &grp);
  rest = div_rem(rest, osz.z, &ow);
  rest = div_rem(rest, osz.y, &oh);
  const int n = div_rem(rest, osz.x, &od);
  int kw, kh;
  const int kd = div_rem(div_rem(k, ks.z, &kw), ks.y, &kh);
  const int id = od * st.x - pd.x + kd * dl.x;
  const int ih = oh * st.y - pd.y + kh * dl.y;
  const int iw = ow * st.z - pd.z + kw * dl.z;
  const int j = div_rem(g, G * ks.x * ks.y * ks.z, &rest);  // rest = grp * kvol + k
  __global T* dst = cols + cols_off + (long)j * ld + (long)rest * Cg;
  if (id < 0 || id >= isz.x || ih < 0 || ih >= isz.y || iw < 0 || iw >= isz.z) {
    for (int cl = 0; cl < Cg; ++cl) dst[cl] = (T)0;
    return;
  }
  __global const T* src = x + x_off + n * sn + (long)grp * Cg * sc + (long)id * ss.x +
                          (long)ih * ss.y + (long)iw * ss.z;
  if (sc == 1) {
    for (int cl = 0; cl < Cg; ++cl) dst[cl] = src[cl];
  } else {
    for (int cl = 0; cl < Cg; ++cl) dst[cl] = src[cl * sc];
  }
}

// col2im (gather): the adjoint of im2col. For images n < nb and every input position,
//   out[n, c, id, ih, iw] = (has_bias ? bias[c] : 0)
//       + sum over (kd, kh, kw) and output positions (od, oh, ow) with
//         od*SD - PD + kd*DD == id (and the same for h and w) of cols[r(c, kd, kh, kw), j(n, o)]
// with cols as in im2col (row stride ld, image offset cn). `out` has strides (sn, sc, ss). One
// work-item per (n, c, id, ih): count = nb * C * D * H; it writes the W values of its row.
__kernel void col2im(int count, int nb, int C, int4 isz, int4 osz, int4 ks, int4 st, int4 pd,
                     int4 dl, __global const T* cols, ulong cols_off, long ld, long cn,
                     __global T* out, ulong out_off, long sn, long sc, long4 ss, int has_bias,
                     __global const T* bias, ulong bias_off) {
  const int g = get_global_id(0);
  if (g >= count) return;
  int rest = g;
  int ih;
  rest = div_rem(rest, isz.y, &ih);
  int id;
  rest = div_rem(rest, isz.x, &id);
  int c;
  const int n = div_rem(rest, C, &c);
  const T b0 = has_bias ? bias[bias_off + c] : (T)0;
  __global const T* cbase = cols + cols_off + (long)n * cn;
  __global T* dst = out + out_off + n * sn + c * sc + (long)id * ss.x + (long)ih * ss.y;
  for (int iw = 0; iw < isz.z; ++iw) {
    T acc = b0;
    for (int kd = 0; kd < ks.x; ++kd) {
      const int tnum = id + pd.x - kd * dl.x;
      if (tnum < 0) continue;
      int tnum_rem;
      const int od = div_rem(tnum, st.x, &tnum_rem);
      if (tnum_rem != 0) continue;
      if (od >= osz.x) continue;
      for (int kh = 0; kh < ks.y; ++kh) {
        const int hnum = ih + pd.y - kh * dl.y;
        if (hnum < 0) continue;
        int hnum_rem;
        const int oh = div_rem(hnum, st.y, &hnum_rem);
        if (hnum_rem != 0) continue;
        if (oh >= osz.y) continue;
        const long rbase = (long)(c * ks.x + kd) * ks.y + kh;
        const long obase = ((long)od * osz.y + oh) * osz.z;
        for (int kw = 0; kw < ks.z; ++kw) {
          const int wnum = iw + pd.z - kw * dl.z;
          if (wnum < 0) continue;
          int wnum_rem;
          const int ow = div_rem(wnum, st.z, &wnum_rem);
          if (wnum_rem != 0) continue;
          if (ow >= osz.z) continue;
          acc += cbase[(rbase * ks.z + kw) * ld + obase + ow];
        }
      }
    }
    dst[(long)iw * ss.z] = acc;
  }
}

// Depthwise kernels: a work-item takes DW_CHUNK consecutive positions of one row along the
// width (a build option: the device's stream_chunk, 64 on CPU devices and 1 on GPUs; default 1),
// so count = rows * ceil(width / DW_CHUNK) and a row's chunk q covers [q * DW_CHUNK, ...). Where
// the stride along the width is 1, the chunk's positions whose every tap lies inside the row go
// in blocks of DW_VEC consecutive positions with their sums in registers (a CPU compiler turns a
// block into vector instructions); the other positions take their taps one at a time, each
// checked. A tap outside the input is skipped, never multiplied by zero, so NaN and Inf reach
// exactly the outputs that read them, and every output sums its terms in the order
// (kd, kh, kw[, j]) on either path, whatever DW_CHUNK is.
#ifndef DW_CHUNK
#define DW_CHUNK 1
#endif
#define DW_VEC 8
#define DW_BLOCKS (DW_CHUNK >= DW_VEC)

// The first and last (inclusive) o with 0 <= o * s + off < n, clamped to [0, m); hi < lo when none.
inline void dw_range(int off, int s, int n, int m, int* lo, int* hi) {
  if (s == 1) {  // no divisions
    *lo = max(-off, 0);
    *hi = min(n - 1 - off, m - 1);
    return;
  }
  *lo = off >= 0 ? 0 : (s - 1 - off) / s;
  *hi = n - 1 - off < 0 ? -1 : min((n - 1 - off) / s, m - 1);
}

// Depthwise forward (groups == C, weight [CO, 1, KD, KH, KW] contiguous, CO = C * mult):
//   y[n, co, o] = (has_bias ? bias[co] : 0) + sum_k x[n, co / mult, i(o, k)] * w[co, k]
// y has strides (ysn, ysc, yss). Rows (n, co, od, oh): count = N * CO * OD * OH * ceil(OW / DW_CHUNK).
// With stride 1 along the width, the chunk's positions whose every tap lies inside the input row
// go in blocks of DW_VEC, each block's sums held in registers; the others (borders, rows
// narrower than a block, strides > 1) take one position at a time with every tap checked.
#define DW_BLOCK(STEP)                                                       \
  for (int kw = 0; kw < ks.z; ++kw) {                                        \
    const T wv = wrow[kw];                                                   \
    const long base = (long)(ow0 + j - pd.z + kw * dl.z) * ss.z;             \
    for (int t = 0; t < DW_VEC; ++t) a[t] += srow[base + t * (STEP)] * wv;   \
  }
// BODY once per input row (kd, kh) inside the input, with srow = that row of x and wrow = the
// weight row (kd, kh) of channel co.
#define DW_FWD_ROWS(...)                                                \
  for (int kd = 0; kd < ks.x; ++kd) {                                   \
    const int id = od * st.x - pd.x + kd * dl.x;                        \
    if (id < 0 || id >= isz.x) continue;                                \
    for (int kh = 0; kh < ks.y; ++kh) {                                 \
      const int ih = oh * st.y - pd.y + kh * dl.y;                      \
      if (ih < 0 || ih >= isz.y) continue;                              \
      __global const T* srow = src + (long)id * ss.x + (long)ih * ss.y; \
      __global const T* wrow = wk + (kd * ks.y + kh) * ks.z;            \
      __VA_ARGS__                                                       \
    }                                                                   \
  }
__kernel void dw_forward(int count, int CO, int mult, int4 isz, int4 osz, int4 ks, int4 st, int4 pd,
                         int4 dl, __global const T* x, ulong x_off, long sn, long sc, long4 ss,
                         __global const T* w, ulong w_off, int has_bias, __global const T* bias,
                         ulong bias_off, __global T* y, ulong y_off, long ysn, long ysc,
                         long4 yss) {
  const int g = get_global_id(0);
  if (g >= count) return;
  const int nq = (osz.z + DW_CHUNK - 1) / DW_CHUNK;
  int q;
  int rest = div_rem(g, nq, &q);
  int oh;
  rest = div_rem(rest, osz.y, &oh);
  int od;
  rest = div_rem(rest, osz.x, &od);
  int co;
  const int n = div_rem(rest, CO, &co);
  const int c = co / mult;
  const int ow0 = q * DW_CHUNK;
  const int m = min(DW_CHUNK, osz.z - ow0);
  const int kvol = ks.x * ks.y * ks.z;
  __global const T* wk = w + w_off + (long)co * kvol;
  __global const T* src = x + x_off + n * sn + c * sc;
  __global T* dst = y + y_off + n * ysn + co * ysc + (long)od * yss.x + (long)oh * yss.y +
                    (long)ow0 * yss.z;
  const T b0 = has_bias ? bias[bias_off + co] : (T)0;
  int vlo = 0, vhi = 0;  // the blocks: positions [vlo, vhi) of the chunk
  if (DW_BLOCKS && st.z == 1) {
    vlo = max(pd.z - ow0, 0);
    const int end = min(isz.z - (ks.z - 1) * dl.z + pd.z - ow0, m);
    vhi = end - vlo >= DW_VEC ? end : vlo;
  }
  // Blocks from vlo; the last one ends at vhi (it may overlap the one before: those positions
  // are computed twice, the same way, and written twice with the same value).
  for (int jb = vlo; jb < vhi; jb += DW_VEC) {
    const int j = min(jb, vhi - DW_VEC);
    T a[DW_VEC];
    for (int t = 0; t < DW_VEC; ++t) a[t] = b0;
    DW_FWD_ROWS(if (ss.z == 1) { DW_BLOCK(1) } else { DW_BLOCK(ss.z) })
    for (int t = 0; t < DW_VEC; ++t) dst[(j + t) * yss.z] = a[t];
  }
  for (int j = 0; j < m; ++j) {
    if (j == vlo) j = vhi;
    if (j >= m) break;
    const int ow = ow0 + j;
    T acc = b0;
    DW_FWD_ROWS(for (int kw = 0; kw < ks.z; ++kw) {
      const int iw = ow * st.z - pd.z + kw * dl.z;
      if (iw < 0 || iw >= isz.z) continue;
      acc += srow[(long)iw * ss.z] * wrow[kw];
    })
    dst[j * yss.z] = acc;
  }
}

// The output index o with o * s - p + k * d == i, or -1 when no whole o lies in [0, n).
inline int dw_source(int i, int p, int k, int d, int s, int n) {
  const int num = i + p - k * d;
  if (num < 0) return -1;
  int r;
  const int o = div_rem(num, s, &r);
  return (r != 0 || o >= n) ? -1 : o;
}

// BODY once per (kd, kh) whose output row (od, oh) takes input row (id, ih) of the gradient.
#define DW_GX_ROWS(...)                                          \
  for (int kd = 0; kd < ks.x; ++kd) {                            \
    const int od = dw_source(id, pd.x, kd, dl.x, st.x, osz.x);   \
    if (od < 0) continue;                                        \
    for (int kh = 0; kh < ks.y; ++kh) {                          \
      const int oh = dw_source(ih, pd.y, kh, dl.y, st.y, osz.y); \
      if (oh < 0) continue;                                      \
      __VA_ARGS__                                                \
    }                                                            \
  }

// dw_backward_input's positions [iw0, iw0 + m) of one row when the stride along the width is
// > 1: tap kw reaches every SW-th position, from the first whose output column o is whole, so
// each tap runs one loop over consecutive o (no division per position). acc[j] gets the terms of
// position iw0 + j in the order (kd, kh, kw, j).
inline void dw_gx_strided(T* acc, int m, int iw0, int n, int c, int id, int ih, int mult, int4 isz,
                          int4 osz, int4 ks, int4 st, int4 pd, int4 dl, __global const T* gy,
                          long sn, long sc, long4 ss, __global const T* w) {
  const int kvol = ks.x * ks.y * ks.z;
  for (int j = 0; j < m; ++j) acc[j] = (T)0;
  DW_GX_ROWS(
    for (int kw = 0; kw < ks.z; ++kw) {
      // The first output column o whose input column o * SW + base is >= iw0, and that column.
      const int base = kw * dl.z - pd.z;
      const int need = iw0 - base;
      const int o0 = need <= 0 ? 0 : (need + st.z - 1) / st.z;
      const int j0 = o0 * st.z + base - iw0;  // its place in the chunk
      if (j0 >= m || o0 >= osz.z) continue;
      const int cnt = min((m - 1 - j0) / st.z + 1, osz.z - o0);
      const int k = (kd * ks.y + kh) * ks.z + kw;
      for (int jj = 0; jj < mult; ++jj) {
        const int co = c * mult + jj;
        const T wv = w[(long)co * kvol + k];
        __global const T* gp =
            gy + n * sn + co * sc + (long)od * ss.x + (long)oh * ss.y + (long)o0 * ss.z;
        for (int t = 0; t < cnt; ++t) acc[j0 + t * st.z] += gp[t * ss.z] * wv;
      }
    }
  )
}

// Depthwise input gradient (the adjoint of dw_forward in x):
//   gx[n, c, i] = sum_{j < mult} sum_k gy[n, c * mult + j, o(i, k)] * w[c * mult + j, k]
// over the output positions o with o*S - P + k*DIL == i. gy has strides (sn, sc, ss), gx has
// strides (xsn, xsc, xss). Rows (n, c, id, ih): count = N * C * D * H * ceil(W / DW_CHUNK).
// With stride 1 along the width, o = i + PW - kw * DW: the chunk's positions whose every tap
// reads inside gy's row go in blocks of DW_VEC as in dw_forward; the others one at a time.
#define DW_BLOCK_GX(STEP)                                                    \
  for (int kw = 0; kw < ks.z; ++kw) {                                        \
    const long base = (long)(iw0 + j + pd.z - kw * dl.z) * ss.z;             \
    const int k = (kd * ks.y + kh) * ks.z + kw;                              \
    for (int jj = 0; jj < mult; ++jj) {                                      \
      const int co = c * mult + jj;                                          \
      const T wv = w[w_off + (long)co * kvol + k];                           \
      __global const T* grow = gyrow + (long)co * sc;                        \
      for (int t = 0; t < DW_VEC; ++t) a[t] += grow[base + t * (STEP)] * wv; \
    }                                                                        \
  }
__kernel void dw_backward_input(int count, int C, int mult, int4 isz, int4 osz, int4 ks, int4 st,
                                int4 pd, int4 dl, __global const T* gy, ulong gy_off, long sn,
                                long sc, long4 ss, __global const T* w, ulong w_off, __global T* gx,
                                ulong gx_off, long xsn, long xsc, long4 xss) {
  const int g = get_global_id(0);
  if (g >= count) return;
  const int nq = (isz.z + DW_CHUNK - 1) / DW_CHUNK;
  int q;
  int rest = div_rem(g, nq, &q);
  int ih;
  rest = div_rem(rest, isz.y, &ih);
  int id;
  rest = div_rem(rest, isz.x, &id);
  int c;
  const int n = div_rem(rest, C, &c);
  const int iw0 = q * DW_CHUNK;
  const int m = min(DW_CHUNK, isz.z - iw0);
  const int kvol = ks.x * ks.y * ks.z;
  __global T* dst = gx + gx_off + n * xsn + c * xsc + (long)id * xss.x + (long)ih * xss.y +
                    (long)iw0 * xss.z;
  if (st.z > 1) {
    T acc_row[DW_CHUNK];
    dw_gx_strided(acc_row, m, iw0, n, c, id, ih, mult, isz, osz, ks, st, pd, dl, gy + gy_off, sn,
                  sc, ss, w + w_off);
    for (int j = 0; j < m; ++j) dst[j * xss.z] = acc_row[j];
    return;
  }
  int vlo = 0, vhi = 0;  // blocks cover positions [vlo, vhi) of the chunk
  if (DW_BLOCKS) {
    // i + PW - (KW - 1) DW >= 0 and i + PW <= OW - 1
    vlo = max((ks.z - 1) * dl.z - pd.z - iw0, 0);
    const int end = min(osz.z - pd.z - iw0, m);
    vhi = end - vlo >= DW_VEC ? end : vlo;
  }
  for (int jb = vlo; jb < vhi; jb += DW_VEC) {
    const int j = min(jb, vhi - DW_VEC);  // the last block may overlap the one before
    T a[DW_VEC];
    for (int t = 0; t < DW_VEC; ++t) a[t] = (T)0;
    DW_GX_ROWS(
      __global const T* gyrow = gy + gy_off + n * sn + (long)od * ss.x + (long)oh * ss.y;
      if (ss.z == 1) {
        DW_BLOCK_GX(1)
      } else {
        DW_BLOCK_GX(ss.z)
      }
    )
    for (int t = 0; t < DW_VEC; ++t) dst[(j + t) * xss.z] = a[t];
  }
  for (int j = 0; j < m; ++j) {
    if (j == vlo) j = vhi;
    if (j >= m) break;
    const int iw = iw0 + j;
    T acc = (T)0;
    DW_GX_ROWS(
      for (int kw = 0; kw < ks.z; ++kw) {
        const int ow = dw_source(iw, pd.z, kw, dl.z, st.z, osz.z);
        if (ow < 0) continue;
        const long opos = (long)od * ss.x + (long)oh * ss.y + (long)ow * ss.z;
        const int k = (kd * ks.y + kh) * ks.z + kw;
        for (int jj = 0; jj < mult; ++jj) {
          const int co = c * mult + jj;
          acc += gy[gy_off + n * sn + co * sc + opos] * w[w_off + (long)co * kvol + k];
        }
      }
    )
    dst[j * xss.z] = acc;
  }
}

// Depthwise weight gradient:
//   gw[co, k] = sum_n sum_o gy[n, co, o] * x[n, co / mult, o*S - P + k*DIL]   (0 outside x)
// gw is contiguous [CO, KD, KH, KW]. One work-group of DW_LWS work-items per weight element
// (global = CO * kvol * DW_LWS, local = DW_LWS): the work-items share the rows (n, od, oh)
// round-robin and the partial sums are added by a fixed tree, so results are reproducible.
// Along a row whose x and gy positions are both consecutive in memory, a work-item keeps DW_VEC
// partial sums (vector instructions on CPUs) and adds them in a fixed order.
#ifndef DW_LWS
#define DW_LWS 64  // -DDW_LWS=<smaller power of two> on devices allowing fewer work-items
#endif
__kernel __attribute__((reqd_work_group_size(DW_LWS, 1, 1))) void dw_backward_weight(
    int N, int mult, int4 isz, int4 osz, int4 ks, int4 st, int4 pd, int4 dl, __global const T* x,
    ulong x_off, long sn, long sc, long4 ss, __global const T* gy, ulong gy_off, long gsn, long gsc,
    long4 gss, __global T* gw, ulong gw_off) {
  __local T part[DW_LWS];
  const int lid = get_local_id(0);
  const int e = get_group_id(0);  // co * kvol + k
  const int kvol = ks.x * ks.y * ks.z;
  const int co = e / kvol;
  const int k = e - co * kvol;
  int kw, kh;
  const int kd = div_rem(div_rem(k, ks.z, &kw), ks.y, &kh);
  const int c = co / mult;
  const int rows = N * osz.x * osz.y;
  T acc = (T)0;
  for (int r = lid; r < rows; r += DW_LWS) {
    int oh, od;
    const int n = div_rem(div_rem(r, osz.y, &oh), osz.x, &od);
    const int id = od * st.x - pd.x + kd * dl.x;
    const int ih = oh * st.y - pd.y + kh * dl.y;
    if (id < 0 || id >= isz.x || ih < 0 || ih >= isz.y) continue;
    __global const T* srow = x + x_off + n * sn + c * sc + (long)id * ss.x + (long)ih * ss.y;
    __global const T* grow = gy + gy_off + n * gsn + co * gsc + (long)od * gss.x + (long)oh * gss.y;
    const int iw0 = kw * dl.z - pd.z;
    int lo, hi;
    dw_range(iw0, st.z, isz.z, osz.z, &lo, &hi);
    const long sstep = (long)st.z * ss.z;
    const long s0 = (long)iw0 * ss.z;
    int ow = lo;
    if (sstep == 1 && gss.z == 1) {  // DW_VEC partial sums, added up in a fixed order
      T a[DW_VEC];
      for (int t = 0; t < DW_VEC; ++t) a[t] = (T)0;
      for (; ow + DW_VEC - 1 <= hi; ow += DW_VEC)
        for (int t = 0; t < DW_VEC; ++t) a[t] += grow[ow + t] * srow[s0 + ow + t];
      for (int t = 0; t < DW_VEC; ++t) acc += a[t];
    }
    for (; ow <= hi; ++ow) acc += grow[(long)ow * gss.z] * srow[s0 + ow * sstep];
  }
  part[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int half_n = DW_LWS / 2; half_n > 0; half_n >>= 1) {
    if (lid < half_n) part[lid] += part[lid + half_n];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) gw[gw_off + e] = part[0];
}

// ------------------------------------------------------------------------------------------
// Winograd F(2x2, 3x3) for 2d convolutions with 3x3 kernels, stride 1 and dilation 1 (a 2d
// problem passes depth 1): y = A^T [ (G g G^T) . (B^T d B) ] A per 2x2 output tile, the
// elementwise products summed over input channels by 16 batched GEMMs (csrc/ops/Conv.cpp):
//   U[b, co, c] = (G g[co, c] G^T)[b]                     b = 4 * i + j over the 4x4 tile
//   V[b, c, t]  = (B^T d[n, c, tile] B)[b]                t = (n * TH + ty) * TW + tx
//   M[b, co, t] = sum_c U[b, co, c] V[b, c, t]            (the GEMMs)
//   y[n, co, 2 ty + i, 2 tx + j] = (A^T M[., co, t] A)[i, j] + bias[co]
// with TH = ceil(OH / 2), TW = ceil(OW / 2) and the input tile rows 2 ty - PH .. 2 ty - PH + 3
// (columns likewise; 0 outside the input).
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
//   A^T = [1 1 1 0; 0 1 -1 -1].

// wino_weight: U (contiguous [16, CO, Cg]) from w [CO, Cg, 1, 3, 3] (contiguous); flip != 0
// reads the kernel rotated by 180 degrees (w[.., 2 - ky, 2 - kx]), as the input gradient of a
// convolution needs. One work-item per (co, c): count = CO * Cg.
__kernel void wino_weight(int count, int Cg, int flip, __global const T* w, ulong w_off,
                          __global T* U, ulong u_off) {
  const int g = get_global_id(0);
  if (g >= count) return;
  __global const T* src = w + w_off + (long)g * 9;
  T k[3][3];
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) k[y][x] = flip ? src[(2 - y) * 3 + (2 - x)] : src[y * 3 + x];
  // t = G k (4x3), then u = t G^T (4x4)
  T t[4][3];
  for (int x = 0; x < 3; ++x) {
    t[0][x] = k[0][x];
    t[1][x] = (T)0.5 * (k[0][x] + k[1][x] + k[2][x]);
    t[2][x] = (T)0.5 * (k[0][x] - k[1][x] + k[2][x]);
    t[3][x] = k[2][x];
  }
  const long plane = (long)count;  // CO * Cg
  __global T* dst = U + u_off + g;
  for (int i = 0; i < 4; ++i) {
    dst[(4 * i + 0) * plane] = t[i][0];
    dst[(4 * i + 1) * plane] = (T)0.5 * (t[i][0] + t[i][1] + t[i][2]);
    dst[(4 * i + 2) * plane] = (T)0.5 * (t[i][0] - t[i][1] + t[i][2]);
    dst[(4 * i + 3) * plane] = t[i][2];
  }
}

// wino_input: V (contiguous [16, C, T], T = nb * TH * TW) from images n < nb of x (x points at
// image n0, strides sn, sc, ss as elsewhere; isz/pd as in the other kernels, depth unused).
// One work-item per (n, c, ty, tx) in that order: count = nb * C * TH * TW.
__kernel void wino_input(int count, int C, int TH, int TW, int4 isz, int4 pd, __global const T* x,
                         ulong x_off, long sn, long sc, long4 ss, __global T* V, ulong v_off) {
  const int g = get_global_id(0);
  if (g >= count) return;
  int tx, ty, c;
  int rest = div_rem(g, TW, &tx);
  rest = div_rem(rest, TH, &ty);
  const int n = div_rem(rest, C, &c);
  const int y0 = 2 * ty - pd.y, x0 = 2 * tx - pd.z;
  __global const T* src = x + x_off + n * sn + c * sc;
  T d[4][4];
  for (int i = 0; i < 4; ++i) {
    const int iy = y0 + i;
    const bool row_in = iy >= 0 && iy < isz.y;
    for (int j = 0; j < 4; ++j) {
      const int ix = x0 + j;
      d[i][j] = row_in && ix >= 0 && ix < isz.z ? src[(long)iy * ss.y + (long)ix * ss.z] : (T)0;
    }
  }
  // t = B^T d, then v = t B
  T t[4][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = d[0][j] - d[2][j];
    t[1][j] = d[1][j] + d[2][j];
    t[2][j] = d[2][j] - d[1][j];
    t[3][j] = d[1][j] - d[3][j];
  }
  const int T_all = count / C;  // nb * TH * TW
  const long plane = (long)C * T_all;
  __global T* dst = V + v_off + (long)c * T_all + (long)(n * TH + ty) * TW + tx;
  for (int i = 0; i < 4; ++i) {
    dst[(4 * i + 0) * plane] = t[i][0] - t[i][2];
    dst[(4 * i + 1) * plane] = t[i][1] + t[i][2];
    dst[(4 * i + 2) * plane] = t[i][2] - t[i][1];
    dst[(4 * i + 3) * plane] = t[i][1] - t[i][3];
  }
}

// wino_output: y images n < nb (y points at image n0; any strides) from M (contiguous
// [16, CO, T]) plus bias[co] when has_bias. One work-item per (n, co, ty, tx): count =
// nb * CO * TH * TW; it writes the tile's outputs that lie inside (OH, OW) = osz.yz.
__kernel void wino_output(int count, int CO, int TH, int TW, int4 osz, __global const T* M,
                          ulong m_off, int has_bias, __global const T* bias, ulong bias_off,
                          __global T* y, ulong y_off, long sn, long sc, long4 ss) {
  const int g = get_global_id(0);
  if (g >= count) return;
  int tx, ty, co;
  int rest = div_rem(g, TW, &tx);
  rest = div_rem(rest, TH, &ty);
  const int n = div_rem(rest, CO, &co);
  const int T_all = count / CO;
  const long plane = (long)CO * T_all;
  __global const T* src = M + m_off + (long)co * T_all + (long)(n * TH + ty) * TW + tx;
  T m[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) m[i][j] = src[(4 * i + j) * plane];
  // t = A^T m (2x4), then r = t A (2x2)
  T t[2][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = m[0][j] + m[1][j] + m[2][j];
    t[1][j] = m[1][j] - m[2][j] - m[3][j];
  }
  const T b0 = has_bias ? bias[bias_off + co] : (T)0;
  __global T* dst = y + y_off + n * sn + co * sc;
  for (int i = 0; i < 2; ++i) {
    const int oy = 2 * ty + i;
    if (oy >= osz.y) break;
    const T r0 = t[i][0] + t[i][1] + t[i][2] + b0;
    const T r1 = t[i][1] - t[i][2] - t[i][3] + b0;
    const int ox = 2 * tx;
    dst[(long)oy * ss.y + (long)ox * ss.z] = r0;
    if (ox + 1 < osz.z) dst[(long)oy * ss.y + (long)(ox + 1) * ss.z] = r1;
  }
}
