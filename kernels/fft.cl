// Fast Fourier transforms of complex rows and columns (csrc/ops/Fft.cpp): Stockham autosort passes
// of radix 2, 3, 4, 5, 7, 8, 11, 13, 16 (mixed), and the pre- and post-processing of real
// transforms.
//
// A transform of n complex values is one pass per radix R of n's factorisation, each reading the
// previous pass's result and writing the next (out of place, in natural order at the end: no bit
// reversal). Pass with radix R after radices whose product is p: butterfly i of the n / R of a
// transform (i = q p + k, k < p) reads u[r] = x[i + r n / R], multiplies u[r] by the twiddle
// w_{pR}^{r k}, takes the R-point DFT of u, and writes it to y[q p R + k + r p].
//
// The arithmetic is on real scalars (a complex value is a pair of RT): a loop of vector-typed
// (float2) operations is not vectorised across work-items by PoCL's work-group compiler, scalar
// code is, which makes a pass about as fast as a copy on CPU devices.
//
// Twiddles come from a per-length table (computed in double on the host, one per length and
// dtype): the pass with p keeps w_{pR}^{r k} at [r p + k] (r = 1..R-1, k < p: the passes' parts
// tile [1, n) exactly), so the twiddles of neighbouring k are neighbours; the
// R-th roots of unity of the radices without constants of their own (3, 5, 7, 11, 13) follow at
// `wr_off`. Inverse transforms conjugate them.
//
// Layouts of a pass over a [rows, n, cols] view (FFT_LAYOUT, chosen by the host; work-items of
// launch dimension 0 run together on vector lanes or in a warp, so that dimension walks
// neighbouring addresses):
//   0 (columns): dim 0 = column c (cols > 1: a transform along a non-innermost dimension, its
//     columns side by side), dim 1 = (row, butterfly i);
//   1 (rows, k first): cols == 1, dim 0 = k (reads and writes of neighbouring k are neighbours:
//     p >= 8), dim 1 = (row, q);
//   2 (rows, q first): cols == 1, dim 0 = q (the first passes, p small: neighbouring reads),
//     dim 1 = (row, k).
// The host launches exact grids (a bounds test on dimension 0 keeps PoCL from vectorising the
// work-group's loop: 2x slower): dimension 0 in work-groups of a power of two l0, and where l0
// does not divide it, a second launch of its last l0 lanes from lane0.
//
// The input's rows: row b = b1 * rows2 + b2 starts at b1 * in_sb1 + b2 * in_sb2, its elements
// in_sn apart and its columns in_sc apart (the first pass reads a strided input in place); the
// output is contiguous [rows, n, cols].
//
// Build options: -DCPLX_T=cfloat|cdouble, -DRADIX=<R> and -DFFT_LAYOUT=<0|1|2> (fft_pass),
// -DFFT_INVERSE, -DPER_ITEM=<k> (butterflies a work-item takes along launch dimension 1, from the
// device profile).

#define CT REG_TYPE(CPLX_T)
#define RT REG_TYPE(REAL_TAG(CPLX_T))
#define C2(re, im) ((CT)((RT)(re), (RT)(im)))

#ifndef PER_ITEM
#define PER_ITEM 1
#endif

inline CT fft_mul(CT a, CT b) { return C2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

#ifdef FFT_INVERSE
#define TW_SIGN ((RT)1)
#else
#define TW_SIGN ((RT)-1)
#endif

#ifdef RADIX
// Neighbouring work-items of dimension 0 read neighbouring values (FFT_UNIT_LANE): a stride known
// to be 1 lets the compiler use vector loads instead of gathers.
#ifdef FFT_UNIT_LANE
#define LANE_STRIDE(s) 1
#else
#define LANE_STRIDE(s) (s)
#endif
#ifdef FFT_SCALE
#define SCALED(v) ((v) * scale)
#else
#define SCALED(v) (v)
#endif
// (ar + i ai) *= (br + i bi), scalars.
#define CMUL_(ar, ai, br, bi)                  \
  do {                                         \
    const RT m_br = (br), m_bi = (bi);         \
    const RT m_r = (ar) * m_br - (ai) * m_bi;  \
    (ai) = (ar) * m_bi + (ai) * m_br;          \
    (ar) = m_r;                                \
  } while (0)
// u[a] *= the forward root (c, -s) (c + i s inverse).
#define ROOT_(a, c, s) CMUL_(ur[a], ui[a], (RT)(c), TW_SIGN * (RT)(s))
// u[a] *= w_4 (-i forward, +i inverse).
#define ROT4_(a)                \
  do {                          \
    const RT t_ = ur[a];        \
    ur[a] = -TW_SIGN * ui[a];   \
    ui[a] = TW_SIGN * t_;       \
  } while (0)
// In-place 4-point DFT of u[a], u[b], u[c], u[d].
#define DFT4_(a, b, c, d)                                              \
  do {                                                                 \
    const RT s0r = ur[a] + ur[c], s0i = ui[a] + ui[c];                 \
    const RT d0r = ur[a] - ur[c], d0i = ui[a] - ui[c];                 \
    const RT s1r = ur[b] + ur[d], s1i = ui[b] + ui[d];                 \
    /* w_4 (u_b - u_d) */                                              \
    const RT d1r = -TW_SIGN * (ui[b] - ui[d]), d1i = TW_SIGN * (ur[b] - ur[d]); \
    ur[a] = s0r + s1r;                                                 \
    ui[a] = s0i + s1i;                                                 \
    ur[c] = s0r - s1r;                                                 \
    ui[c] = s0i - s1i;                                                 \
    ur[b] = d0r + d1r;                                                 \
    ui[b] = d0i + d1i;                                                 \
    ur[d] = d0r - d1r;                                                 \
    ui[d] = d0i - d1i;                                                 \
  } while (0)
#define H_ 0.707106781186547524400844362104849039
#define C16_ 0.923879532511286756128183189396788933
#define S16_ 0.382683432365089771728459984030398867

// Output r of the R-point DFT sits in u[OUT(r)].
#if RADIX == 16
#define OUT(r) (4 * ((r) & 3) + ((r) >> 2))
#else
#define OUT(r) (r)
#endif

__kernel void fft_pass(__global const RT* in, ulong in_off, long in_sn, long in_sc, long in_sb1,
                       long in_sb2, int rows2, __global RT* out, ulong out_off,
                       __global const RT* tw, ulong tw_off, int wr_off, int n, int p, int cols,
                       RT scale, long rows, int lane0) {
  in += in_off;
  out += out_off;
  tw += tw_off;
  const int count = n / RADIX;  // butterflies per transform
#if FFT_LAYOUT == 0
  const int c = lane0 + get_global_id(0);
  const int size1 = count;
  in += 2 * (long)c * LANE_STRIDE(in_sc);
  out += 2 * (long)c;
#elif FFT_LAYOUT == 1
  const int k = lane0 + get_global_id(0);
  const int size1 = count / p;
#else
  const int q = lane0 + get_global_id(0);
  const int size1 = p;
#endif
#if RADIX != 2 && RADIX != 4 && RADIX != 8 && RADIX != 16
  RT wrr[RADIX], wri[RADIX];  // w_R^m
#pragma unroll
  for (int m = 0; m < RADIX; ++m) {
    wrr[m] = tw[2 * (wr_off + m)];
    wri[m] = TW_SIGN * -tw[2 * (wr_off + m) + 1];
  }
#endif
  for (int t = 0; t < PER_ITEM; ++t) {
    // Launch dimension 1 runs over (row, position): b = g / size1.
    const long g = (long)get_global_id(1) * PER_ITEM + t;
#if PER_ITEM > 1
    if (g >= size1 * rows) return;
#endif
    const long b = g / size1;
    const int g1 = (int)(g - b * size1);
    const long b1 = b / rows2;
    __global const RT* src = in + 2 * (b1 * in_sb1 + (b - b1 * rows2) * in_sb2);
    __global RT* dst = out + 2 * b * n * (long)cols;
#if FFT_LAYOUT == 0
    const int q = g1 / p;
    const int k = g1 - q * p;
#elif FFT_LAYOUT == 1
    const int q = g1;
#else
    const int k = g1;
#endif
    RT ur[RADIX], ui[RADIX];
#pragma unroll
    for (int r = 0; r < RADIX; ++r) {
#if FFT_LAYOUT == 0
      const long a = 2 * (q * p + k + r * count) * in_sn;
#else
      const long a = 2 * (q * p + k + r * count) * LANE_STRIDE(in_sn);
#endif
      ur[r] = src[a];
      ui[r] = src[a + 1];
    }
    if (p > 1) {
#pragma unroll
      for (int r = 1; r < RADIX; ++r) {
        const int w = r * p + k;
        CMUL_(ur[r], ui[r], tw[2 * w], -TW_SIGN * tw[2 * w + 1]);
      }
    }
#if RADIX == 2
    {
      const RT sr = ur[0] + ur[1], si = ui[0] + ui[1];
      ur[1] = ur[0] - ur[1];
      ui[1] = ui[0] - ui[1];
      ur[0] = sr;
      ui[0] = si;
    }
#elif RADIX == 4
    DFT4_(0, 1, 2, 3);
#elif RADIX == 8
    // Decimation in frequency: a_r = u_r + u_{r+4} (into u[2 r]) give the even outputs,
    // (u_r - u_{r+4}) w_8^r (into u[2 r + 1]) the odd ones, each a 4-point DFT, which leaves
    // output r in u[r].
    {
      RT ar[8], ai[8];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        ar[2 * r] = ur[r] + ur[r + 4];
        ai[2 * r] = ui[r] + ui[r + 4];
        ar[2 * r + 1] = ur[r] - ur[r + 4];
        ai[2 * r + 1] = ui[r] - ui[r + 4];
      }
#pragma unroll
      for (int r = 0; r < 8; ++r) {
        ur[r] = ar[r];
        ui[r] = ai[r];
      }
      ROOT_(3, H_, H_);
      ROT4_(5);
      ROOT_(7, -H_, H_);
      DFT4_(0, 2, 4, 6);
      DFT4_(1, 3, 5, 7);
    }
#elif RADIX == 16
    // 16 = 4 x 4: 4-point DFTs over r1 (u[4 r1 + r2]), twiddles w_16^{r2 k1}, 4-point DFTs over
    // r2; X[k1 + 4 k2] is then in u[4 k1 + k2].
#pragma unroll
    for (int r2 = 0; r2 < 4; ++r2) DFT4_(r2, 4 + r2, 8 + r2, 12 + r2);
    ROOT_(5, C16_, S16_);
    ROOT_(6, H_, H_);
    ROOT_(7, S16_, C16_);
    ROOT_(9, H_, H_);
    ROT4_(10);
    ROOT_(11, -H_, H_);
    ROOT_(13, S16_, C16_);
    ROOT_(14, -H_, H_);
    ROOT_(15, -C16_, -S16_);
#pragma unroll
    for (int k1 = 0; k1 < 4; ++k1) DFT4_(4 * k1, 4 * k1 + 1, 4 * k1 + 2, 4 * k1 + 3);
#else
    {
      RT vr[RADIX], vi[RADIX];
#pragma unroll
      for (int s = 0; s < RADIX; ++s) {
        RT accr = ur[0], acci = ui[0];
#pragma unroll
        for (int r = 1; r < RADIX; ++r) {
          const int m = (r * s) % RADIX;
          accr += ur[r] * wrr[m] - ui[r] * wri[m];
          acci += ur[r] * wri[m] + ui[r] * wrr[m];
        }
        vr[s] = accr;
        vi[s] = acci;
      }
#pragma unroll
      for (int s = 0; s < RADIX; ++s) {
        ur[s] = vr[s];
        ui[s] = vi[s];
      }
    }
#endif
#pragma unroll
    for (int r = 0; r < RADIX; ++r) {
      const long a = 2 * (long)(q * p * RADIX + k + r * p) * cols;
      dst[a] = SCALED(ur[OUT(r)]);
      dst[a + 1] = SCALED(ui[OUT(r)]);
    }
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
