// im2col (F.unfold) and col2im (F.fold), each the other's backward.
//
// im2col: input [N, C, H, W] (any strides) -> columns [N, C * KH * KW, OH * OW] (contiguous):
//   one work-item per column element; positions in the padding read zero.
// col2im: columns [N, C * KH * KW, OH * OW] (any strides) -> image [N, C, H, W] (contiguous):
//   one work-item per image element, a gather over the kernel offsets that land on it, summed in
//   the CPU's order (kernel row, then column): deterministic, no atomics.
//
// Build options: -DT_=<tag> -DACC_T=<float|double>
// Arguments: ulong total, long C, H, W, KH, KW, DH, DW, PH, PW, SH, SW, OH, OW, then the source
//   (buffer, offset, its 4 or 3 strides) and the result (buffer, offset).
// Launch: global = roundup(total, local).

#define ACC REG_TYPE(ACC_T)
#define DATA STORE_TYPE(T_)
#define GEOM                                                                                     \
  ulong total, long C, long H, long W, long KH, long KW, long DH, long DW, long PH, long PW, \
      long SH, long SW, long OH, long OW

__kernel void im2col(GEOM, __global const DATA* in, ulong in_off, long sN, long sC, long sH,
                     long sW, __global DATA* out, ulong out_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  const long L = OH * OW, K = KH * KW;
  const long l = g % L, row = (g / L) % (C * K), n = g / L / (C * K);
  const long ox = l % OW, oy = l / OW;
  const long kx = row % KW, ky = (row / KW) % KH, c = row / K;
  const long y = oy * SH - PH + ky * DH, x = ox * SW - PW + kx * DW;
  ACC v = 0;
  if (y >= 0 && y < H && x >= 0 && x < W) v = LOAD(T_, in, in_off + n * sN + c * sC + y * sH + x * sW);
  STORE(T_, out, out_off + g, v);
}

__kernel void col2im(GEOM, __global const DATA* cols, ulong cols_off, long sN, long sR, long sL,
                     __global DATA* out, ulong out_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  const long x = g % W, y = (g / W) % H, c = (g / W / H) % C, n = g / W / H / C;
  ACC acc = 0;
  for (long ky = 0; ky < KH; ++ky) {
    const long ty = y + PH - ky * DH;
    if (ty < 0 || ty % SH != 0 || ty / SH >= OH) continue;
    for (long kx = 0; kx < KW; ++kx) {
      const long tx = x + PW - kx * DW;
      if (tx < 0 || tx % SW != 0 || tx / SW >= OW) continue;
      const long row = (c * KH + ky) * KW + kx, l = (ty / SH) * OW + tx / SW;
      acc += (ACC)LOAD(T_, cols, cols_off + n * sN + row * sR + l * sL);
    }
  }
  STORE(T_, out, out_off + g, acc);
}
