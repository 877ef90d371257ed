// Fast Fourier transforms of complex rows (csrc/ops/Fft.cpp): Stockham autosort passes of radix
// 2, 3, 4, 5, 7, 8, 11, 13, 16 (mixed), and the pre- and post-processing of real transforms.
//
// A row of n complex values is transformed by one pass per radix R of n's factorisation, each
// reading the previous pass's result and writing the next (out of place, in natural order at the
// end: no bit reversal). Pass with radix R after radices whose product is p: work-item i of the
// n / R butterflies of a row (k = i mod p) reads u[r] = x[i + r n / R], multiplies u[r] by the
// twiddle w_{pR}^{r k}, takes the R-point DFT of u, and writes it to y[(i - k) R + k + r p].
// Twiddles come from a table of w_n^t = exp(-2 pi i t / n), t < n (computed on the host in double,
// one per length and dtype): w_{pR}^{rk} = w_n^{rk n / (pR)}, and an R-point DFT's constants are
// w_n^{m n / R}. Inverse transforms conjugate them.
//
// Build options: -DCPLX_T=cfloat|cdouble, -DRADIX=<R> (fft_pass), -DFFT_INVERSE, -DPER_ITEM=<k>
// (butterflies per work-item, from the device profile).

#define CT REG_TYPE(CPLX_T)
#define RT REG_TYPE(REAL_TAG(CPLX_T))
#define C2(re, im) ((CT)((RT)(re), (RT)(im)))

#ifndef PER_ITEM
#define PER_ITEM 1
#endif

inline CT fft_mul(CT a, CT b) { return C2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
// a * (-i) forward, a * i inverse: the rotation by w_4.
#ifdef FFT_INVERSE
#define ROT4(a) C2(-(a).y, (a).x)
#define TW(t) C2(tw[t].x, -tw[t].y)
#define W8_SIGN ((RT)1)
#else
#define ROT4(a) C2((a).y, -(a).x)
#define TW(t) tw[t]
#define W8_SIGN ((RT)-1)
#endif

#ifdef RADIX
// In-place 4-point DFT of v0..v3.
#define DFT4(v0, v1, v2, v3)      \
  do {                            \
    const CT a0_ = v0 + v2;       \
    const CT a1_ = v0 - v2;       \
    const CT a2_ = v1 + v3;       \
    const CT a3_ = ROT4(v1 - v3); \
    v0 = a0_ + a2_;               \
    v2 = a0_ - a2_;               \
    v1 = a1_ + a3_;               \
    v3 = a1_ - a3_;               \
  } while (0)

// The input's rows: row b = b1 * rows2 + b2 starts at b1 * in_batch1 + b2 * in_batch2, its
// elements in_stride apart (any layout of up to two batch dimensions, read in place); the output
// is contiguous [rows, n].
__kernel void fft_pass(__global const CT* in, ulong in_off, long in_stride, long in_batch1,
                       long in_batch2, int rows2, __global CT* out, ulong out_off,
                       __global const CT* tw, ulong tw_off, int n, int p, RT scale, long rows) {
  in += in_off;
  out += out_off;
  tw += tw_off;
  const int count = n / RADIX;  // butterflies per row
  const long b = get_global_id(1);
  if (b >= rows) return;
  const long b1 = b / rows2;
  in += b1 * in_batch1 + (b - b1 * rows2) * in_batch2;
  out += b * (long)n;
  const int tw_step = n / (p * RADIX);  // w_{pR} = w_n^tw_step
#if RADIX == 16
  CT w16[10];  // w_16^m, m <= 9
#pragma unroll
  for (int m = 0; m < 10; ++m) w16[m] = TW(m * count);
#elif RADIX != 2 && RADIX != 4 && RADIX != 8
  CT wr[RADIX];  // w_R^m = w_n^{m n / R}
#pragma unroll
  for (int m = 0; m < RADIX; ++m) wr[m] = TW(m * count);
#endif
  for (int t = 0; t < PER_ITEM; ++t) {
    const int i = (int)get_global_id(0) * PER_ITEM + t;
    if (i >= count) return;
    const int k = i % p;
    CT u[RADIX];
#pragma unroll
    for (int r = 0; r < RADIX; ++r) u[r] = in[(long)(i + r * count) * in_stride];
    if (p > 1) {
#pragma unroll
      for (int r = 1; r < RADIX; ++r) u[r] = fft_mul(u[r], TW(r * k * tw_step));
    }
#if RADIX == 2
    const CT s = u[0] + u[1];
    u[1] = u[0] - u[1];
    u[0] = s;
#elif RADIX == 4
    DFT4(u[0], u[1], u[2], u[3]);
#elif RADIX == 8
    {
      // Decimation in frequency: a_r = u_r + u_{r+4} give the even outputs, (u_r - u_{r+4})
      // w_8^r the odd ones, each a 4-point DFT.
      const RT h = (RT)0.707106781186547524400844362104849039;
      CT a0 = u[0] + u[4], a1 = u[1] + u[5], a2 = u[2] + u[6], a3 = u[3] + u[7];
      CT b0 = u[0] - u[4], b1 = u[1] - u[5], b2 = u[2] - u[6], b3 = u[3] - u[7];
      b1 = fft_mul(b1, C2(h, W8_SIGN * h));
      b2 = ROT4(b2);
      b3 = fft_mul(b3, C2(-h, W8_SIGN * h));
      DFT4(a0, a1, a2, a3);
      DFT4(b0, b1, b2, b3);
      u[0] = a0;
      u[2] = a1;
      u[4] = a2;
      u[6] = a3;
      u[1] = b0;
      u[3] = b1;
      u[5] = b2;
      u[7] = b3;
    }
#elif RADIX == 16
    {
      // 16 = 4 x 4: 4-point DFTs over r1 (u[4 r1 + r2]), twiddles w_16^{r2 k1}, 4-point DFTs over
      // r2; X[k1 + 4 k2] is then in u[4 k1 + k2] (written transposed below).
#pragma unroll
      for (int r2 = 0; r2 < 4; ++r2) DFT4(u[r2], u[4 + r2], u[8 + r2], u[12 + r2]);
#pragma unroll
      for (int k1 = 1; k1 < 4; ++k1)
#pragma unroll
        for (int r2 = 1; r2 < 4; ++r2) u[4 * k1 + r2] = fft_mul(u[4 * k1 + r2], w16[r2 * k1]);
#pragma unroll
      for (int k1 = 0; k1 < 4; ++k1) DFT4(u[4 * k1], u[4 * k1 + 1], u[4 * k1 + 2], u[4 * k1 + 3]);
    }
#else
    {
      CT v[RADIX];
#pragma unroll
      for (int s = 0; s < RADIX; ++s) {
        CT acc = u[0];
#pragma unroll
        for (int r = 1; r < RADIX; ++r) acc += fft_mul(u[r], wr[(r * s) % RADIX]);
        v[s] = acc;
      }
#pragma unroll
      for (int s = 0; s < RADIX; ++s) u[s] = v[s];
    }
#endif
    const int j = (i - k) * RADIX + k;
#if RADIX == 16
#pragma unroll
    for (int k1 = 0; k1 < 4; ++k1)
#pragma unroll
      for (int k2 = 0; k2 < 4; ++k2) out[j + (k1 + 4 * k2) * p] = u[4 * k1 + k2] * scale;
#else
#pragma unroll
    for (int r = 0; r < RADIX; ++r) out[j + r * p] = u[r] * scale;
#endif
  }
}
#endif  // RADIX

// Real-to-complex post-processing: z (rows of h complex values) is the h-point transform of a
// real row x of length n = 2h read as complex pairs (x_{2j} + i x_{2j+1}); out[k], k <= h:
//   E = (z_k + conj z_{h-k}) / 2, O = -i (z_k - conj z_{h-k}) / 2, X_k = E + w_n^k O
// (indices mod h). tw: the table of n.
__kernel void fft_r2c_post(__global const CT* z, ulong z_off, __global CT* out, ulong out_off,
                           __global const CT* tw, ulong tw_off, int h, RT scale, long rows) {
  const int k = get_global_id(0);
  const long b = get_global_id(1);
  if (k > h || b >= rows) return;
  z += z_off + b * (long)h;
  out += out_off + b * (long)(h + 1);
  tw += tw_off;
  const CT zk = z[k == h ? 0 : k];
  const CT zc = z[k == 0 ? 0 : h - k];
  const CT zm = C2(zc.x, -zc.y);
  const CT e = (zk + zm) * (RT)0.5;
  const CT d = (zk - zm) * (RT)0.5;
  const CT o = C2(d.y, -d.x);  // -i d
  const CT w = k == h ? C2(-1, 0) : tw[k];
  out[k] = (e + fft_mul(w, o)) * scale;
}

// Complex-to-real pre-processing for an even length n = 2h: from the half spectrum X (h + 1
// values a row, the imaginary parts of X_0 and X_h ignored as the CPU's c2r does),
//   Y_k = (X_k + conj X_{h-k}) + i w_n^{-k} (X_k - conj X_{h-k}),  k < h,
// whose unnormalised inverse h-point transform is x_{2j} + i x_{2j+1}. tw: the table of n.
__kernel void fft_c2r_pre(__global const CT* x, ulong x_off, __global CT* y, ulong y_off,
                          __global const CT* tw, ulong tw_off, int h, long rows) {
  const int k = get_global_id(0);
  const long b = get_global_id(1);
  if (k >= h || b >= rows) return;
  x += x_off + b * (long)(h + 1);
  y += y_off + b * (long)h;
  tw += tw_off;
  CT a = x[k];
  CT c = x[h - k];
  if (k == 0) {
    a.y = 0;
    c.y = 0;
  }
  const CT cc = C2(c.x, -c.y);
  const CT s = a + cc;
  const CT d = fft_mul(C2(tw[k].x, -tw[k].y), a - cc);  // w_n^{-k} (a - conj c)
  y[k] = s + C2(-d.y, d.x);                             // + i d
}

// The full spectrum of n values from a half spectrum of n / 2 + 1 (Hermitian symmetry, the
// imaginary part of X_0, and of X_{n/2} for even n, ignored): odd lengths of c2r.
__kernel void fft_hermitian_extend(__global const CT* x, ulong x_off, __global CT* y, ulong y_off,
                                   int n, long rows) {
  const int k = get_global_id(0);
  const long b = get_global_id(1);
  if (k >= n || b >= rows) return;
  const int nh = n / 2 + 1;
  x += x_off + b * (long)nh;
  y += y_off + b * (long)n;
  CT v = k < nh ? x[k] : x[n - k];
  if (k >= nh) v.y = -v.y;
  if (k == 0 || 2 * k == n) v.y = 0;
  y[k] = v;
}
