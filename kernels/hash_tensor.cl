// torch.hash_tensor (csrc/ops/HashTensor.cpp), mode 0: the XOR of the elements' 64-bit patterns
// along the reduced dimensions, as the CPU defines them: a floating element as the bits of the
// float64 it widens to, an integer as the bits of the int64 it widens to (bool 0/1).
// The input is [outer, inner] (the reduced dimensions last, contiguous); one work-item per
// output element. The widening of float/half/bfloat16 is done on the bit patterns, so devices
// without fp64 give the same result.
//
// Every buffer argument is followed by its offset in elements (ulong).
// Build options: -DT=<type tag>.

// The float64 bit pattern of a float32's bits (exact: every float is a double).
inline ulong ht_f32_to_f64(uint u) {
  const ulong sign = (ulong)(u >> 31) << 63;
  const uint e = (u >> 23) & 0xffu;
  uint m = u & 0x7fffffu;
  if (e == 0xffu) return sign | 0x7ff0000000000000UL | ((ulong)m << 29);  // Inf, NaN
  if (e != 0u) return sign | ((ulong)(e + 896u) << 52) | ((ulong)m << 29);
  if (m == 0u) return sign;
  // subnormal: m * 2^-149 with the leading bit at position p
  const uint p = 31u - (uint)clz(m);
  const ulong exp = (ulong)(p + 874u);  // p - 149 + 1023
  const ulong mant = ((ulong)m << (52u - p)) & 0xfffffffffffffUL;
  return sign | (exp << 52) | mant;
}

inline ulong ht_bits(__global const STORE_TYPE(T)* x, ulong i) {
#if defined(HT_DOUBLE)
  return as_ulong(x[i]);
#elif defined(HT_FLOATING)
  return ht_f32_to_f64(as_uint((float)LOAD(T, x, i)));
#else
  return (ulong)(long)LOAD(T, x, i);
#endif
}

__kernel void hash_xor(ulong outer, ulong inner, __global const STORE_TYPE(T)* x, ulong x_off,
                       __global ulong* out, ulong out_off) {
  const ulong o = get_global_id(0);
  if (o >= outer) return;
  x += x_off + o * inner;
  ulong acc = 0;
  for (ulong r = 0; r < inner; ++r) acc ^= ht_bits(x, r);
  out[out_off + o] = acc;
}
