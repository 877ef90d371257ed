"""OpenCL C put in front of every generated kernel (after kernels/common.clh)."""

from __future__ import annotations

# Helpers every generated kernel may use (beside kernels/common.clh): integer floor division
# and modulo with Python's signs, float remainder with the divisor's sign, NaN-propagating
# max/min, and the type of floating scalar arguments.
PREAMBLE = r"""
#ifdef TORCH_OCL_FP64
#define OCL_SCALAR_T double
#else
#define OCL_SCALAR_T float
#endif
#define OCL_IFLOORDIV(a, b) (((a) / (b)) - ((((a) % (b)) != 0) && (((a) < 0) != ((b) < 0))))
#define OCL_IMOD(a, b) \
  ((((a) % (b)) != 0 && ((((a) % (b)) < 0) != ((b) < 0))) ? ((a) % (b)) + (b) : ((a) % (b)))
#define OCL_FREM(a, b) \
  ((fmod(a, b) != 0 && ((fmod(a, b) < 0) != ((b) < 0))) ? fmod(a, b) + (b) : fmod(a, b))
#define OCL_MAXP(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))
#define OCL_MINP(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))
// Atomic float add for scatter stores (index_put with accumulate, embedding backward): a
// compare-and-swap loop that compares bit patterns as integers (a NaN in memory never makes a
// float comparison succeed, so comparing floats would spin forever).
inline void ocl_atomic_add_float(__global float* p, float v) {
  volatile __global uint* u = (volatile __global uint*)p;
  uint old = *u, seen;
  do {
    seen = old;
    old = atomic_cmpxchg(u, seen, as_uint(as_float(seen) + v));
  } while (old != seen);
}
// Random numbers of Inductor's ops.rand/randn/randint64: Philox4x32-10 (kernels/common.clh)
// keyed by the seed, with the element's offset as the counter.
inline uint4 ocl_philox(long seed, long offset) {
  uint x0, x1, x2, x3;
  PHILOX4X32_10((ulong)offset, (uint)seed, (uint)((ulong)seed >> 32), x0, x1, x2, x3);
  return (uint4)(x0, x1, x2, x3);
}
inline float ocl_rand(long seed, long offset) {  // uniform in [0, 1)
  return (float)(ocl_philox(seed, offset).x >> 8) * 5.9604644775390625e-8f;
}
inline float ocl_randn(long seed, long offset) {  // standard normal (Box-Muller)
  const uint4 r = ocl_philox(seed, offset);
  const float u1 = (float)((r.x >> 8) + 1u) * 5.9604644775390625e-8f;  // (0, 1]
  const float u2 = (float)(r.y >> 8) * 5.9604644775390625e-8f;
  return sqrt(-2.0f * log(u1)) * cos(6.283185307179586f * u2);
}
inline long ocl_randint64(long seed, long offset, long low, long high) {
  const uint4 r = ocl_philox(seed, offset);
  const ulong bits = ((ulong)r.y << 32) | (ulong)r.x;
  return low + (long)(bits % (ulong)(high - low));
}
"""


def special_header(types: set[str]) -> str:
    """The special functions of the package's elementwise kernels (kernels/special.clh: digamma,
    erfinv, Bessel functions, incomplete gamma, orthogonal polynomials, ...), for a kernel that
    calls them with arguments of these compute types. The header computes in one type, COMP:
    double when any argument is double (float arguments then convert, and their results round
    once), else float - so float kernels never compute in double, which many GPUs run slowly.
    The native library expands the #include (runtime/Program.cpp)."""
    comp = "double" if "double" in types else "float"
    return "\n".join(
        [
            f"#define COMP {comp}",
            f"#define COMP_T {comp}",
            "#define COMP_FLOAT",
            "#define R(x) (x)",
            '#include "special.clh"',
            "",
        ]
    )


# Atomic adds beyond float32/int32 (scatter stores: index_put with accumulate, embedding
# backward), put in front of a kernel that needs them.
_ATOMIC_HELPERS = {
    # 16-bit floats: a compare-and-swap on the aligned 32-bit word holding the element (a
    # neighbour updated at the same time makes the exchange fail and retry, never lost).
    "half16": r"""
#ifdef __ENDIAN_LITTLE__
#define OCL_HALF_SHIFT(p) ((((size_t)(p)) & 2) ? 16u : 0u)
#else
#define OCL_HALF_SHIFT(p) ((((size_t)(p)) & 2) ? 0u : 16u)
#endif
#define OCL_ATOMIC_ADD_16(NAME, TO_FLOAT, FROM_FLOAT)                                  \
  inline void NAME(__global ushort* p, float v) {                                     \
    volatile __global uint* w = (volatile __global uint*)((size_t)p & ~(size_t)3);    \
    const uint shift = OCL_HALF_SHIFT(p);                                             \
    uint old = *w, seen;                                                              \
    do {                                                                              \
      seen = old;                                                                     \
      const ushort sum = FROM_FLOAT(TO_FLOAT((ushort)(seen >> shift)) + v);           \
      old = atomic_cmpxchg(w, seen, (seen & ~(0xffffu << shift)) | ((uint)sum << shift)); \
    } while (old != seen);                                                            \
  }
inline float ocl_bf16_bits_to_float(ushort b) { return as_float(((uint)b) << 16); }
OCL_ATOMIC_ADD_16(ocl_atomic_add_half, ocl_half_to_float, ocl_float_to_half)
OCL_ATOMIC_ADD_16(ocl_atomic_add_bf16, ocl_bf16_bits_to_float, ocl_float_to_bf16)
""",
    # 64-bit: cl_khr_int64_base_atomics (the code generator checks the device has it).
    "int64": r"""
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
""",
    "double": r"""
inline void ocl_atomic_add_double(__global double* p, double v) {
  volatile __global ulong* u = (volatile __global ulong*)p;
  ulong old = *u, seen;
  do {
    seen = old;
    old = atom_cmpxchg(u, seen, as_ulong(as_double(seen) + v));
  } while (old != seen);
}
""",
}


def atomic_helpers(kinds: set[str]) -> str:
    """The helpers for these kinds of atomic add ("half16", "int64", "double"; "double" needs
    "int64"'s pragma, which is emitted first)."""
    return "".join(_ATOMIC_HELPERS[k] for k in ("half16", "int64", "double") if k in kinds)
