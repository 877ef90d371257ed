// Moving elements between the packed buffer of a nested tensor and a padded dense tensor
// (csrc/ops/nested/NestedLayout.cpp): torch.nested's to_padded_tensor and _nested_from_padded
// (strided layout, per-component sizes known on the host) and the jagged layout's
// _jagged_to_padded_dense_forward / _padded_dense_to_jagged_forward (offsets on the device).
//
// Elements are moved as bits (E = uchar, short, int or long by the element's size), so one
// program serves every dtype; the padding value arrives as the bits of the dtype's value.
//
// Build options: -DE=<bits type> -DNDIM=<dims of a component, 1..8> -DIDX=<uint|ulong> (the
//   type of the position arithmetic: uint when the output has fewer than 2^32 elements, which
//   makes its divisions several times cheaper) (strided kernels), -DOFF_T=<long|int> (jagged).
// Launch: one work-item per element of the output, global = roundup(total, local).

#ifdef NDIM
// --- strided layout ---------------------------------------------------------------------
// meta (long, on the device): padded extents P[NDIM], then per component b:
//   offset (elements into the source buffer), sizes[NDIM], strides[NDIM].
#define COMP_WORDS (1 + 2 * NDIM)

// out (contiguous, [B, P...]) = component b's element at the position when inside its sizes,
// else the padding value. One work-item per row of out (total = B * P[0] * ... * P[NDIM - 2]),
// running along the last dimension: CPU devices prefer a run of consecutive elements per
// work-item to a division chain per element.
__kernel void nested_to_padded(ulong total, __global const long* meta, ulong meta_off,
                               __global const E* src, ulong src_off, __global E* dst, ulong dst_off,
                               long pad_bits) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  meta += meta_off;
  IDX rest = (IDX)g;
  long pos[NDIM];
  for (int d = NDIM - 2; d >= 0; --d) {
    const IDX p = (IDX)meta[d];
    pos[d] = (long)(rest % p);
    rest /= p;
  }
  const __global long* c = meta + NDIM + (ulong)rest * COMP_WORDS;
  long at = c[0];
  int inside = 1;
  for (int d = 0; d < NDIM - 1; ++d) {
    inside &= pos[d] < c[1 + d];
    at += pos[d] * c[1 + NDIM + d];
  }
  const long last = meta[NDIM - 1];
  const long len = inside ? min(c[NDIM], last) : 0;
  const long step = c[2 * NDIM];
  __global E* out = dst + dst_off + g * (ulong)last;
  const __global E* in = src + src_off + at;
  for (long j = 0; j < len; ++j) out[j] = in[j * step];
  for (long j = len; j < last; ++j) out[j] = (E)pad_bits;
}

// dst (a contiguous buffer, component after component, each [sizes...] row-major) from the
// padded source, one work-item per row of a component (total = all components' rows), running
// along the last dimension. meta: ncomp + 1 row starts (ascending), ncomp + 1 element starts in
// dst, then per component its sizes[NDIM]; the source's strides: stride_b, then strides[NDIM]
// (elements, may be permuted).
__kernel void padded_to_nested(ulong total, __global const long* meta, ulong meta_off, ulong ncomp,
                               __global const long* sstrides, ulong sstrides_off,
                               __global const E* src, ulong src_off, __global E* dst,
                               ulong dst_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  meta += meta_off;
  sstrides += sstrides_off;
  const __global long* rows = meta;
  const __global long* elems = meta + ncomp + 1;
  // The component holding row g: the last row start <= g (binary search; empty components share
  // their start with the next one and are skipped by taking the last).
  ulong lo = 0, hi = ncomp;  // invariant: rows[lo] <= g < rows[hi]
  while (hi - lo > 1) {
    const ulong mid = (lo + hi) / 2;
    if ((ulong)rows[mid] <= g)
      lo = mid;
    else
      hi = mid;
  }
  const __global long* sizes = meta + 2 * (ncomp + 1) + lo * NDIM;
  const ulong local_row = g - (ulong)rows[lo];
  IDX rest = (IDX)local_row;
  long at = (long)lo * sstrides[0];
  for (int d = NDIM - 2; d >= 0; --d) {
    const IDX s = (IDX)sizes[d];
    at += (long)(rest % s) * sstrides[1 + d];
    rest /= s;
  }
  const long last = sizes[NDIM - 1];
  const long step = sstrides[NDIM];
  __global E* out = dst + dst_off + elems[lo] + (long)local_row * last;
  const __global E* in = src + src_off + at;
  for (long j = 0; j < last; ++j) out[j] = in[j * step];
}

#endif  // NDIM

#ifdef OFF_T
// --- jagged layout ----------------------------------------------------------------------
// values: [sum of lengths, inner] contiguous; offsets: B + 1 ascending row starts.
// out [B, max_len, inner] contiguous: row t of batch b is values' row offsets[b] + t when
// t < min(offsets[b + 1] - offsets[b], max_len), else padding.
__kernel void jagged_to_padded(ulong total, ulong inner, ulong max_len,
                               __global const OFF_T* offsets, ulong offsets_off,
                               __global const E* src, ulong src_off, __global E* dst, ulong dst_off,
                               long pad_bits) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  offsets += offsets_off;
  const ulong i = g % inner;
  const ulong row = g / inner;
  const ulong t = row % max_len;
  const ulong b = row / max_len;
  const long start = (long)offsets[b];
  const long len = (long)offsets[b + 1] - start;
  dst[dst_off + g] =
      (long)t < len ? src[src_off + (start + (long)t) * (long)inner + (long)i] : (E)pad_bits;
}

// values (contiguous [total_rows, inner]) from padded [B, L, inner] (contiguous): values' row r
// is padded[b, r - offsets[b]] for the b with offsets[b] <= r < offsets[b + 1]; rows beyond the
// padded length L (offsets asking for more than the padded tensor holds) become 0.
__kernel void padded_to_jagged(ulong total, ulong inner, ulong padded_len, ulong nbatch,
                               __global const OFF_T* offsets, ulong offsets_off,
                               __global const E* src, ulong src_off, __global E* dst,
                               ulong dst_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  offsets += offsets_off;
  const ulong i = g % inner;
  const long r = (long)(g / inner);
  ulong lo = 0, hi = nbatch;  // the last b with offsets[b] <= r
  while (hi - lo > 1) {
    const ulong mid = (lo + hi) / 2;
    if ((long)offsets[mid] <= r)
      lo = mid;
    else
      hi = mid;
  }
  const long t = r - (long)offsets[lo];
  dst[dst_off + g] =
      t < (long)padded_len ? src[src_off + (lo * padded_len + (ulong)t) * inner + i] : (E)0;
}
#endif  // OFF_T
