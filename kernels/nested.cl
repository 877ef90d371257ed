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
// else the padding value.
__kernel void nested_to_padded(ulong total, __global const long* meta, ulong meta_off,
                               __global const E* src, ulong src_off, __global E* dst, ulong dst_off,
                               long pad_bits) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  meta += meta_off;
  IDX rest = (IDX)g;
  long pos[NDIM];
  for (int d = NDIM - 1; d >= 0; --d) {
    const IDX p = (IDX)meta[d];
    pos[d] = (long)(rest % p);
    rest /= p;
  }
  const __global long* c = meta + NDIM + rest * COMP_WORDS;
  long at = c[0];
  int inside = 1;
  for (int d = 0; d < NDIM; ++d) {
    inside &= pos[d] < c[1 + d];
    at += pos[d] * c[1 + NDIM + d];
  }
  dst[dst_off + g] = inside ? src[src_off + at] : (E)pad_bits;
}

// dst (a contiguous buffer, component after component, each [sizes...] row-major) from the
// padded source. meta: ncomp + 1 component starts in dst (ascending), then per component its
// sizes[NDIM]; the source's strides: stride_b, then strides[NDIM] (elements, may be permuted).
__kernel void padded_to_nested(ulong total, __global const long* meta, ulong meta_off, ulong ncomp,
                               __global const long* sstrides, ulong sstrides_off,
                               __global const E* src, ulong src_off, __global E* dst,
                               ulong dst_off) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  meta += meta_off;
  sstrides += sstrides_off;
  // The component holding element g: the last start <= g (binary search; empty components
  // share their start with the next one and are skipped by taking the last).
  ulong lo = 0, hi = ncomp;  // invariant: meta[lo] <= g < meta[hi]
  while (hi - lo > 1) {
    const ulong mid = (lo + hi) / 2;
    if ((ulong)meta[mid] <= g)
      lo = mid;
    else
      hi = mid;
  }
  const __global long* sizes = meta + (ncomp + 1) + lo * NDIM;
  IDX rest = (IDX)(g - (ulong)meta[lo]);
  long at = (long)lo * sstrides[0];
  for (int d = NDIM - 1; d >= 0; --d) {
    const IDX s = (IDX)sizes[d];
    at += (long)(rest % s) * sstrides[1 + d];
    rest /= s;
  }
  dst[dst_off + g] = src[src_off + at];
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
