// grid_sampler_2d / grid_sampler_3d (F.grid_sample) forward and backward.
//
// Tensors are viewed as input [N, C, D, H, W], grid [N, OD, OH, OW, DIMS] and output
// [N, C, OD, OH, OW] with arbitrary element strides; a 2-d op has D = OD = 1 and two grid
// components (x, y), a 3-d op three (x, y, z). Source positions follow ATen's GridSampler.h:
// unnormalize (align_corners or not), then the padding (zeros: none; border: clip; reflection:
// reflect then clip); nearest rounds half to even (nearbyint); bilinear (trilinear in 3-d) takes
// the 2^DIMS corners; bicubic (2-d only) takes 4x4 taps of the unnormalized position, each tap
// padded on its own, with A = -0.75. Out-of-range taps read zero and still count as a term (a NaN
// weight gives NaN as on the CPU's vectorized kernel).
//
// grid_sampler_forward: one work-item per output point (n, od, oh, ow), looping over channels.
// grid_sampler_backward_grid: one work-item per output point: the grid gradient, a sum over the
//   channels and taps of that point (a gather).
// grid_sampler_backward_input: one work-item per input plane (n, c): zeroes the plane, then
//   visits the output points of batch n in order and adds each tap's share. Each plane has one
//   writer, so sums are deterministic and need no atomics; the parallelism is N * C.
//
// Build options: -DT_=<floating tag> -DACC_T=<float|double> -DDIMS=<2|3>
//   -DMODE_BILINEAR | -DMODE_NEAREST | -DMODE_BICUBIC
// Arguments: see the kernels; GEOM is long N, C, D, H, W, OD, OH, OW, int padding (0 zeros,
//   1 border, 2 reflection), int align_corners. Each tensor is buffer, offset, strides.

#define ACC REG_TYPE(ACC_T)
#define DATA STORE_TYPE(T_)

#define GEOM                                                                               \
  long N, long C, long D, long H, long W, long OD, long OH, long OW, int padding, int align

// A tensor argument: buffer, offset, 5 strides ([N, C, D, H, W] or [N, OD, OH, OW, component]).
#define TENSOR(type, p) \
  __global type *p, ulong p##_off, long p##0, long p##1, long p##2, long p##3, long p##4

#define PAD_ZEROS 0
#define PAD_BORDER 1
#define PAD_REFLECTION 2

inline ACC unnormalize(ACC coord, long size, int align, ACC* grad) {
  if (align) {
    *grad = (ACC)(size - 1) / 2;
    return ((coord + 1) / 2) * (ACC)(size - 1);
  }
  *grad = (ACC)size / 2;
  return ((coord + 1) * (ACC)size - 1) / 2;
}

inline ACC clip_coord(ACC in, long size, ACC* grad) {
  if (in <= (ACC)0) {
    *grad = 0;
    return 0;
  }
  const ACC hi = (ACC)(size - 1);
  if (in >= hi) {
    *grad = 0;
    return hi;
  }
  *grad = 1;
  return in;
}

// Reflects `in` into [twice_low / 2, twice_high / 2].
inline ACC reflect_coord(ACC in, long twice_low, long twice_high, ACC* grad) {
  if (twice_low == twice_high) {
    *grad = 0;
    return 0;
  }
  const ACC lo = (ACC)twice_low / 2;
  const ACC span = (ACC)(twice_high - twice_low) / 2;
  in = in - lo;
  ACC sign = 1;
  if (in < (ACC)0) {
    sign = -1;
    in = -in;
  }
  const ACC extra = fmod(in, span);
  const int flips = (int)floor(in / span);
  if (flips % 2 == 0) {
    *grad = sign;
    return extra + lo;
  }
  *grad = -sign;
  return span - extra + lo;
}

// The padding applied to an unnormalized coordinate; *grad gets its derivative.
inline ACC pad_coord(ACC x, long size, int padding, int align, ACC* grad) {
  ACC g_clip, g_refl;
  if (padding == PAD_BORDER) {
    x = clip_coord(x, size, &g_clip);
    *grad = g_clip;
  } else if (padding == PAD_REFLECTION) {
    x = align ? reflect_coord(x, 0, 2 * (size - 1), &g_refl)
              : reflect_coord(x, -1, 2 * size - 1, &g_refl);
    x = clip_coord(x, size, &g_clip);
    *grad = g_refl * g_clip;
  } else {
    *grad = 1;
  }
  return x;
}

// The source position of a grid coordinate along a dim of `size`; *grad gets d(position)/d(coord).
inline ACC source_index(ACC coord, long size, int padding, int align, ACC* grad) {
  ACC g_un, g_pad;
  const ACC x = unnormalize(coord, size, align, &g_un);
  const ACC r = pad_coord(x, size, padding, align, &g_pad);
  *grad = g_un * g_pad;
  return r;
}

// An integral-valued position as an index, clamped to [-2, size + 2] first: positions far outside
// [0, size) stay out of range after adding a corner's +1, and no float-to-integer conversion is
// undefined (NaN clamps to -2: clamp is fmin(fmax(f, lo), hi), which drop a NaN operand). A
// clamp rather than `in range ? (long)f : FAR`: Intel's CPU runtime (opencl-rt 2021.2, vectoriser
// on) miscompiled that select in bicubic's tap loop, some lanes taking tap -1 for tap 0
// (ci/intel_grid_sampler_miscompile.py reproduces it with pyopencl alone).
inline long to_index(ACC f, long size) { return (long)clamp(f, (ACC)-2, (ACC)(size + 2)); }

inline bool in_range(long i, long size) { return i >= 0 && i < size; }

// The grid point (n, od, oh, ow): its coordinates x, y, z.
inline void grid_point(__global const DATA* grid, ulong grid_off, long g0, long g1, long g2,
                       long g3, long g4, long n, long od, long oh, long ow, ACC* x, ACC* y,
                       ACC* z) {
  const ulong base = grid_off + n * g0 + od * g1 + oh * g2 + ow * g3;
  *x = LOAD(T_, grid, base);
  *y = LOAD(T_, grid, base + g4);
#if DIMS == 3
  *z = LOAD(T_, grid, base + 2 * g4);
#else
  *z = 0;
#endif
}

#if DIMS == 3
#define NCORNERS 8
#else
#define NCORNERS 4
#endif

#ifdef MODE_BICUBIC
inline void cubic_coeffs(ACC t, ACC* c) {
  const ACC A = (ACC)-0.75;
  ACC x = t + 1;
  c[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  x = t;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 1 - t;
  c[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 2 - t;
  c[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

inline void cubic_coeffs_grad(ACC t, ACC* c) {
  const ACC A = (ACC)-0.75;
  ACC x = -1 - t;
  c[0] = (-3 * A * x - 10 * A) * x - 8 * A;
  x = -t;
  c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 1 - t;
  c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 2 - t;
  c[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

// A bicubic tap at unpadded position p along a dim of `size`: its padded index (-1 if outside).
inline long cubic_tap(ACC p, long size, int padding, int align) {
  ACC unused;
  return to_index(pad_coord(p, size, padding, align, &unused), size);
}
#endif

// The taps of a grid point: element offsets within a plane (-1: outside, reads zero), weights,
// and the weights' derivatives by the source positions (dw[k * 3 + axis]). Returns their count.
// g[axis] is d(source position)/d(grid coordinate) for the grid gradient.
#if defined(MODE_BICUBIC)
#define MAX_TAPS 16
#elif defined(MODE_BILINEAR)
#define MAX_TAPS NCORNERS
#else
#define MAX_TAPS 1
#endif

inline int taps(ACC x, ACC y, ACC z, long D, long H, long W, long sD, long sH, long sW,
                int padding, int align, long* off, ACC* w, ACC* dw, ACC* g) {
#if defined(MODE_NEAREST)
  const ACC ix = source_index(x, W, padding, align, &g[0]);
  const ACC iy = source_index(y, H, padding, align, &g[1]);
  const long i = to_index(rint(ix), W), j = to_index(rint(iy), H);
#if DIMS == 3
  const ACC iz = source_index(z, D, padding, align, &g[2]);
  const long k = to_index(rint(iz), D);
#else
  const long k = 0;
#endif
  off[0] = (in_range(i, W) && in_range(j, H) && in_range(k, D)) ? k * sD + j * sH + i * sW : -1;
  w[0] = 1;
  dw[0] = dw[1] = dw[2] = 0;
  return 1;
#elif defined(MODE_BILINEAR)
  const ACC ix = source_index(x, W, padding, align, &g[0]);
  const ACC iy = source_index(y, H, padding, align, &g[1]);
  const ACC fx = floor(ix), fy = floor(iy);
  const long i0 = to_index(fx, W), j0 = to_index(fy, H);
  // Weights of the low and high corner along each dim.
  const ACC wx[2] = {fx + 1 - ix, ix - fx}, wy[2] = {fy + 1 - iy, iy - fy};
#if DIMS == 3
  const ACC iz = source_index(z, D, padding, align, &g[2]);
  const ACC fz = floor(iz);
  const long k0 = to_index(fz, D);
  const ACC wz[2] = {fz + 1 - iz, iz - fz};
#else
  const long k0 = 0;
  const ACC wz[2] = {1, 0};
#endif
  for (int c = 0; c < NCORNERS; ++c) {
    const int a = c & 1, b = (c >> 1) & 1, e = (c >> 2) & 1;
    const long i = i0 + a, j = j0 + b, k = k0 + e;
    off[c] = (in_range(i, W) && in_range(j, H) && in_range(k, D)) ? k * sD + j * sH + i * sW : -1;
    w[c] = wx[a] * wy[b] * wz[e];
    const ACC sx = a ? (ACC)1 : (ACC)-1, sy = b ? (ACC)1 : (ACC)-1, sz = e ? (ACC)1 : (ACC)-1;
    dw[c * 3 + 0] = sx * wy[b] * wz[e];
    dw[c * 3 + 1] = wx[a] * sy * wz[e];
    dw[c * 3 + 2] = wx[a] * wy[b] * sz;
  }
  return NCORNERS;
#else  // MODE_BICUBIC (2-d)
  // Unnormalized positions; padding applies per tap. The grid gradient takes only the
  // unnormalization's factor (as the CPU's).
  const ACC ix = unnormalize(x, W, align, &g[0]);
  const ACC iy = unnormalize(y, H, align, &g[1]);
  g[2] = 0;
  const ACC fx = floor(ix), fy = floor(iy);
  const ACC tx = ix - fx, ty = iy - fy;
  ACC cx[4], cy[4], gx[4], gy[4];
  cubic_coeffs(tx, cx);
  cubic_coeffs(ty, cy);
  cubic_coeffs_grad(tx, gx);
  cubic_coeffs_grad(ty, gy);
  long ti[4], tj[4];
  for (int t = 0; t < 4; ++t) {
    ti[t] = cubic_tap(fx - 1 + t, W, padding, align);
    tj[t] = cubic_tap(fy - 1 + t, H, padding, align);
  }
  for (int b = 0; b < 4; ++b) {
    for (int a = 0; a < 4; ++a) {
      const int c = b * 4 + a;
      off[c] = (in_range(ti[a], W) && in_range(tj[b], H)) ? tj[b] * sH + ti[a] * sW : -1;
      w[c] = cx[a] * cy[b];
      // The CPU's grid gradient subtracts val * coeff_grad: the derivative by t is minus that.
      dw[c * 3 + 0] = -gx[a] * cy[b];
      dw[c * 3 + 1] = -cx[a] * gy[b];
      dw[c * 3 + 2] = 0;
    }
  }
  return 16;
#endif
}

__kernel void grid_sampler_forward(GEOM, TENSOR(const DATA, in), TENSOR(const DATA, grid),
                                   TENSOR(DATA, out)) {
  const ulong p = get_global_id(0);
  const ulong points = (ulong)N * OD * OH * OW;
  if (p >= points) return;
  const long ow = p % OW, oh = (p / OW) % OH, od = (p / OW / OH) % OD, n = p / OW / OH / OD;
  ACC x, y, z;
  grid_point(grid, grid_off, grid0, grid1, grid2, grid3, grid4, n, od, oh, ow, &x, &y, &z);
  long off[MAX_TAPS];
  ACC w[MAX_TAPS], dw[MAX_TAPS * 3], g[3];
  const int nt = taps(x, y, z, D, H, W, in2, in3, in4, padding, align, off, w, dw, g);
  for (long c = 0; c < C; ++c) {
    const ulong ib = in_off + n * in0 + c * in1;
    ACC acc = 0;
    for (int t = 0; t < nt; ++t) {
      const ACC v = off[t] >= 0 ? (ACC)LOAD(T_, in, ib + off[t]) : (ACC)0;
#if defined(MODE_NEAREST)
      acc = v;
#else
      acc += v * w[t];
#endif
    }
    STORE(T_, out, out_off + n * out0 + c * out1 + od * out2 + oh * out3 + ow * out4, acc);
  }
}

// grad_grid [N, OD, OH, OW, DIMS] (written through its strides).
__kernel void grid_sampler_backward_grid(GEOM, TENSOR(const DATA, go), TENSOR(const DATA, in),
                                         TENSOR(const DATA, grid), TENSOR(DATA, gg)) {
  const ulong p = get_global_id(0);
  const ulong points = (ulong)N * OD * OH * OW;
  if (p >= points) return;
  const long ow = p % OW, oh = (p / OW) % OH, od = (p / OW / OH) % OD, n = p / OW / OH / OD;
  ACC x, y, z;
  grid_point(grid, grid_off, grid0, grid1, grid2, grid3, grid4, n, od, oh, ow, &x, &y, &z);
  long off[MAX_TAPS];
  ACC w[MAX_TAPS], dw[MAX_TAPS * 3], g[3];
  const int nt = taps(x, y, z, D, H, W, in2, in3, in4, padding, align, off, w, dw, g);
  ACC gx = 0, gy = 0, gz = 0;
#if !defined(MODE_NEAREST)
  for (long c = 0; c < C; ++c) {
    const ulong ib = in_off + n * in0 + c * in1;
    const ACC gout = LOAD(T_, go, go_off + n * go0 + c * go1 + od * go2 + oh * go3 + ow * go4);
    // The CPU's order, which decides what an infinite gradient gives: in 2-d a channel's sum
    // times its gradient (an infinity), in 3-d each term times it (inf - inf: NaN).
#if DIMS == 2
    ACC cx = 0, cy = 0, cz = 0;
#endif
    for (int t = 0; t < nt; ++t) {
      const ACC v = off[t] >= 0 ? (ACC)LOAD(T_, in, ib + off[t]) : (ACC)0;
#if DIMS == 2
      cx += v * dw[t * 3 + 0];
      cy += v * dw[t * 3 + 1];
      cz += v * dw[t * 3 + 2];
#else
      gx += v * dw[t * 3 + 0] * gout;
      gy += v * dw[t * 3 + 1] * gout;
      gz += v * dw[t * 3 + 2] * gout;
#endif
    }
#if DIMS == 2
    gx += cx * gout;
    gy += cy * gout;
    gz += cz * gout;
#endif
  }
  gx *= g[0];
  gy *= g[1];
  gz *= g[2];
#endif
  const ulong ob = gg_off + n * gg0 + od * gg1 + oh * gg2 + ow * gg3;
  STORE(T_, gg, ob, gx);
  STORE(T_, gg, ob + gg4, gy);
#if DIMS == 3
  STORE(T_, gg, ob + 2 * gg4, gz);
#endif
}

// grad_input [N, C, D, H, W]: one work-item per (n, c) plane.
__kernel void grid_sampler_backward_input(GEOM, TENSOR(const DATA, go), TENSOR(const DATA, grid),
                                          TENSOR(DATA, gi)) {
  const ulong p = get_global_id(0);
  if (p >= (ulong)N * C) return;
  const long c = p % C, n = p / C;
  const ulong ib = gi_off + n * gi0 + c * gi1;
  for (long d = 0; d < D; ++d)
    for (long h = 0; h < H; ++h)
      for (long w = 0; w < W; ++w) STORE(T_, gi, ib + d * gi2 + h * gi3 + w * gi4, (ACC)0);
  long off[MAX_TAPS];
  ACC wt[MAX_TAPS], dw[MAX_TAPS * 3], g[3];
  for (long od = 0; od < OD; ++od) {
    for (long oh = 0; oh < OH; ++oh) {
      for (long ow = 0; ow < OW; ++ow) {
        ACC x, y, z;
        grid_point(grid, grid_off, grid0, grid1, grid2, grid3, grid4, n, od, oh, ow, &x, &y, &z);
        const int nt = taps(x, y, z, D, H, W, gi2, gi3, gi4, padding, align, off, wt, dw, g);
        const ACC gout =
            LOAD(T_, go, go_off + n * go0 + c * go1 + od * go2 + oh * go3 + ow * go4);
        for (int t = 0; t < nt; ++t) {
          if (off[t] < 0) continue;
          const ulong at = ib + off[t];
          STORE(T_, gi, at, (ACC)LOAD(T_, gi, at) + wt[t] * gout);
        }
      }
    }
  }
}
