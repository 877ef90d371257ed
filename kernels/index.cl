// The index family's kernels (csrc/ops/Index.cpp, Scatter.cpp):
//   index_select     out[o, j, i] = src[o, index[j], i]
//   index_elements   every op that moves elements to or from positions read from index tensors:
//                    x[idx], index_put_ (accumulate too), gather, scatter (src, value, reduce),
//                    scatter_add, scatter_reduce, index_add, index_copy, index_fill, take, put_
//   index_segments   the ordered (deterministic) form of index_elements' updates
//   masked_count / masked_scatter   masked_scatter_
// An index out of range stores err_code in *err (the host raises it at its next wait,
// runtime/DeviceError.h) and the element is skipped (index_select writes zero bits instead).
// Quotients and remainders are computed as q = a / b, r = a - q * b, never with `%` (see
// elementwise.cl: Oclgrind and LLVM's freeze).

// ---- index_select ----
// The source, contiguous, viewed as [outer, src_dim, inner], and a vector of n_idx indices;
// out = [outer, n_idx, inner] contiguous, one work-item per output element.
// Build options: -DT=<uchar|short|int|long> (the element's bits), -DIDX_T=<long|int>.

#ifdef INDEX_SELECT
__kernel void index_select(ulong total, ulong inner, ulong n_idx, long src_dim, __global T* out,
                           ulong out_off, __global const T* src, ulong src_off,
                           __global const IDX_T* index, ulong index_off, long index_stride,
                           __global int* err, int err_code) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  const ulong rest = g / inner;
  const ulong i = g - rest * inner;
  const ulong o = rest / n_idx;
  const ulong j = rest - o * n_idx;
  const long k = (long)index[index_off + (long)j * index_stride];
  if (k < 0 || k >= src_dim) {
    atomic_cmpxchg(err, 0, err_code);
    out[out_off + g] = (T)0;
    return;
  }
  out[out_off + g] = src[src_off + (o * (ulong)src_dim + (ulong)k) * inner + i];
}
#endif

// ---- index_elements ----
// An iteration space of n elements with up to 8 dimensions (`ndim` at run time, `sizes`
// innermost first) and, per element, the offsets (strides in elements, per dimension) of:
//   A      the tensor addressed through the indices: its element is A[a + sum_k idx_k * istride_k]
//   B      the other side (or the scalar `value`)
//   idx_k  NIDX index tensors, each read at its own offset; index k must lie in
//          [0, isize_k) ([-isize_k, isize_k) with WRAP, negative ones counting from the end).
// Then B = A[...] (GATHER), A[...] = B (plain copy), A[...] = value (VALUE), or
// A[...] = A[...] op B (REDUCE_*, an atomic read-modify-write: duplicate indices combine every
// contribution, in an unspecified order). Or, with -DTARGETS, nothing is moved: the kernel
// writes each position's offsets, keys[p] = A's (-1 where an index is out of range) and
// srcs[p] = B's (both relative to the operands' own offsets), for index_segments below.
// (A's buffer argument is then the long keys, with a_off its offset; B's the long srcs.)
//
// Build options:
//   -DT=<tag>          plain copies: the element's bits (uchar, short, int, long); VALUE and
//                      REDUCE_*: the dtype's tag (common.clh), with -DT_FLOAT for floating tags
//   -DIDX_T=<long|int> -DNIDX=<1..8>
//   -DGATHER | -DVALUE | -DREDUCE_ADD | -DREDUCE_MUL | -DREDUCE_MAX | -DREDUCE_MIN
//                      (REDUCE_* with -DVALUE: the scalar is the operand; with -DALPHA: B times
//                      alpha, index_add)
//   -DWRAP
//   -DINT64_ATOMICS    plain copies of 8-byte elements: the device has cl_khr_int64_base_atomics
//   -DTARGETS          the offsets pass (no VALUE, GATHER or REDUCE_*; T any bits tag)
// Arguments: ulong n, ulong chunk (positions per work-item), int ndim, long8 sizes,
//   A buffer, ulong a_off, long8 a_strides,
//   B buffer, ulong b_off, long8 b_strides   (or REG_TYPE(T) value with VALUE),
//   per index k: buffer, ulong off, long8 strides,
//   long8 isizes, long8 istrides (in elements of A),
//   [REG_TYPE(T) alpha with ALPHA], __global int* err, int err_code.
// Global: ceil(n / chunk) rounded up to the local size.
// REDUCE_* on 8-byte types needs cl_khr_int64_base_atomics (the host checks). Elements of 1 or
// 2 bytes are updated through a compare-and-swap on the aligned 32-bit word holding them (the
// allocator's buffers are multiples of 512 bytes, so that word lies inside the buffer).

#ifdef NIDX

#if defined(REDUCE_ADD) || defined(REDUCE_MUL) || defined(REDUCE_MAX) || defined(REDUCE_MIN)
#define REDUCE
#endif

#if defined(VALUE) || defined(REDUCE)
#define REG REG_TYPE(T)
#endif

#define TSIZE_float 4
#define TSIZE_double 8
#define TSIZE_long 8
#define TSIZE_int 4
#define TSIZE_short 2
#define TSIZE_char 1
#define TSIZE_uchar 1
#define TSIZE_bool 1
#define TSIZE_half 2
#define TSIZE_bfloat16 2
#define TSIZE OCL_CAT(TSIZE_, T)

#if TSIZE < 4
// The aligned 32-bit word that holds element e of a 1- or 2-byte type, and the element's place
// in it (the allocator's buffers are multiples of 512 bytes, so the word lies inside the buffer).
inline volatile __global uint* word_of(__global void* a, ulong e, uint* shift, uint* mask) {
  const ulong byte = e * TSIZE;
#ifdef __ENDIAN_LITTLE__
  *shift = (uint)(byte & 3) * 8;
#else
  *shift = (uint)(4 - TSIZE - (byte & 3)) * 8;
#endif
  *mask = ((1u << (TSIZE * 8)) - 1u) << *shift;
  return (volatile __global uint*)a + (byte >> 2);
}
#endif

// ---- plain copies: A[e] = v, race-free ----
// Repeated indices send several values to one element of A. Which of them lands is unspecified
// (as on CUDA), but the stores must not race: each is an atomic exchange (1- and 2-byte elements:
// a compare-and-swap of the aligned 32-bit word holding them, word_of). 8-byte elements on a
// device without cl_khr_int64_base_atomics keep plain stores.
#if !defined(GATHER) && !defined(VALUE) && !defined(REDUCE)
#if TSIZE == 8 && defined(INT64_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
inline void store_at(__global T* a, ulong e, T v) {
#if TSIZE == 8 && defined(INT64_ATOMICS)
  atom_xchg((volatile __global long*)(a + e), (long)v);
#elif TSIZE == 8
  a[e] = v;
#elif TSIZE == 4
  atomic_xchg((volatile __global int*)(a + e), (int)v);
#else
  uint shift, mask;
  volatile __global uint* p = word_of(a, e, &shift, &mask);
  const uint bits = ((uint)(TSIZE == 1 ? (uint)(uchar)v : (uint)(ushort)v) << shift) & mask;
  uint old = atomic_cmpxchg(p, 0u, 0u);
  for (;;) {
    const uint nw = (old & ~mask) | bits;
    if (nw == old) return;
    const uint seen = atomic_cmpxchg(p, old, nw);
    if (seen == old) return;
    old = seen;
  }
#endif
}
#endif

// ---- atomic read-modify-write of one element ----
#ifdef REDUCE

inline uint half_word(float x) { return (uint)ocl_float_to_half(x); }
inline float half_value(uint w) { return ocl_half_to_float((ushort)w); }

// WORD(x): the bits of a value already CONVERTed to T; VALUE_OF(w): the value of T's bits.
#define WORD_float(x) as_uint(x)
#define WORD_double(x) as_ulong(x)
#define WORD_long(x) as_ulong(x)
#define WORD_int(x) as_uint(x)
#define WORD_short(x) ((uint)(ushort)(x))
#define WORD_char(x) ((uint)(uchar)(x))
#define WORD_uchar(x) ((uint)(x))
#define WORD_bool(x) ((uint)(x))
#define WORD_half(x) half_word(x)
#define WORD_bfloat16(x) ((uint)ocl_float_to_bf16(x))
#define WORD(x) OCL_CAT(WORD_, T)(x)
#define VALUE_OF_float(w) as_float(w)
#define VALUE_OF_double(w) as_double(w)
#define VALUE_OF_long(w) as_long(w)
#define VALUE_OF_int(w) as_int(w)
#define VALUE_OF_short(w) ((short)(ushort)(w))
#define VALUE_OF_char(w) ((char)(uchar)(w))
#define VALUE_OF_uchar(w) ((uchar)(w))
#define VALUE_OF_bool(w) ((uchar)((w) != 0))
#define VALUE_OF_half(w) half_value(w)
#define VALUE_OF_bfloat16(w) as_float((uint)(w) << 16)
#define VALUE_OF(w) OCL_CAT(VALUE_OF_, T)(w)

// The CPU's reductions: max/min as std::max/std::min, except that a NaN operand wins.
#if defined(REDUCE_ADD)
#define COMBINE(cur, v) ((cur) + (v))
#elif defined(REDUCE_MUL)
#define COMBINE(cur, v) ((cur) * (v))
#elif defined(T_FLOAT) && defined(REDUCE_MAX)
#define COMBINE(cur, v) (OCL_ISNAN(v) ? (v) : ((cur) < (v) ? (v) : (cur)))
#elif defined(T_FLOAT)
#define COMBINE(cur, v) (OCL_ISNAN(v) ? (v) : ((v) < (cur) ? (v) : (cur)))
#elif defined(REDUCE_MAX)
#define COMBINE(cur, v) ((cur) < (v) ? (v) : (cur))
#else
#define COMBINE(cur, v) ((v) < (cur) ? (v) : (cur))
#endif

#if TSIZE == 8
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define A_PTR __global ulong*
#else
#define A_PTR __global uint*
#endif

// A[e] = COMBINE(A[e], v), atomically. `a` is A's buffer as words, e counts elements of T.
// The first read is a compare-and-swap of 0 with 0 (an atomic load that never changes the
// word): a plain load would race with the other work-items' swaps, and an atomic add of 0
// becomes a full fence plus a load on x86 (PoCL), 5-8x slower here.
inline void reduce_at(A_PTR a, ulong e, REG v) {
#if TSIZE == 8
  volatile __global ulong* p = (volatile __global ulong*)(a + e);
  ulong old = atom_cmpxchg(p, (ulong)0, (ulong)0);
  for (;;) {
    const ulong nw = WORD(CONVERT(T, COMBINE(VALUE_OF(old), v)));
    if (nw == old) return;
    const ulong seen = atom_cmpxchg(p, old, nw);
    if (seen == old) return;
    old = seen;
  }
#elif TSIZE == 4 && defined(REDUCE_ADD) && !defined(T_FLOAT)
  atomic_add((volatile __global int*)(a + e), v);
#elif TSIZE == 4
  volatile __global uint* p = (volatile __global uint*)(a + e);
  uint old = atomic_cmpxchg(p, 0u, 0u);
  for (;;) {
    const uint nw = WORD(CONVERT(T, COMBINE(VALUE_OF(old), v)));
    if (nw == old) return;
    const uint seen = atomic_cmpxchg(p, old, nw);
    if (seen == old) return;
    old = seen;
  }
#else
  uint shift, mask;
  volatile __global uint* p = word_of(a, e, &shift, &mask);
  uint old = atomic_cmpxchg(p, 0u, 0u);
  for (;;) {
    const uint bits = WORD(CONVERT(T, COMBINE(VALUE_OF((old & mask) >> shift), v)));
    const uint nw = (old & ~mask) | ((bits << shift) & mask);
    if (nw == old) return;
    const uint seen = atomic_cmpxchg(p, old, nw);
    if (seen == old) return;
    old = seen;
  }
#endif
}
#endif  // REDUCE

// ---- parameters ----
#if defined(TARGETS)
#define A_PARAM __global long* keys
#elif defined(REDUCE)
#define A_PARAM A_PTR a
#elif defined(GATHER)
#define A_PARAM __global const STORE_TYPE(T)* a
#else
#define A_PARAM __global STORE_TYPE(T)* a
#endif

#if defined(TARGETS)
#define B_PARAMS __global long* srcs, ulong b_off, long8 b_st
#elif defined(VALUE)
#define B_PARAMS REG value
#elif defined(GATHER)
#define B_PARAMS __global STORE_TYPE(T)* b, ulong b_off, long8 b_st
#else
#define B_PARAMS __global const STORE_TYPE(T)* b, ulong b_off, long8 b_st
#endif

#define IDX_PARAM(k) , __global const IDX_T *i##k, ulong i##k##_off, long8 i##k##_st
// Index k: bounds, wrap, and its contribution to A's offset (ok = 0 when out of range).
#ifdef WRAP
#define LOWER(sz) (-(sz))
#else
#define LOWER(sz) 0
#endif
#define IDX_APPLY(k, comp)                                            \
  if (ok) {                                                           \
    long v = (long)i##k[i##k##_off + i##k##_b + c0 * i##k##_st.s0];   \
    const long sz = isizes.comp;                                      \
    if (v < LOWER(sz) || v >= sz) {                                   \
      atomic_cmpxchg(err, 0, err_code);                               \
      ok = 0;                                                         \
    } else {                                                          \
      if (v < 0) v += sz;                                             \
      ao += v * istrides.comp;                                        \
    }                                                                 \
  }
#define IDX_BASE(k, comp) i##k##_b += c * i##k##_st.comp;

#if NIDX > 0
#define IP0 IDX_PARAM(0)
#define IS0(comp) IDX_BASE(0, comp)
#define IA0 IDX_APPLY(0, s0)
#define IO0 i0_b = 0;
#define IV0 long i0_b;
#else
#define IP0
#define IS0(comp)
#define IA0
#define IO0
#define IV0
#endif
#if NIDX > 1
#define IP1 IDX_PARAM(1)
#define IS1(comp) IDX_BASE(1, comp)
#define IA1 IDX_APPLY(1, s1)
#define IO1 i1_b = 0;
#define IV1 long i1_b;
#else
#define IP1
#define IS1(comp)
#define IA1
#define IO1
#define IV1
#endif
#if NIDX > 2
#define IP2 IDX_PARAM(2)
#define IS2(comp) IDX_BASE(2, comp)
#define IA2 IDX_APPLY(2, s2)
#define IO2 i2_b = 0;
#define IV2 long i2_b;
#else
#define IP2
#define IS2(comp)
#define IA2
#define IO2
#define IV2
#endif
#if NIDX > 3
#define IP3 IDX_PARAM(3)
#define IS3(comp) IDX_BASE(3, comp)
#define IA3 IDX_APPLY(3, s3)
#define IO3 i3_b = 0;
#define IV3 long i3_b;
#else
#define IP3
#define IS3(comp)
#define IA3
#define IO3
#define IV3
#endif
#if NIDX > 4
#define IP4 IDX_PARAM(4)
#define IS4(comp) IDX_BASE(4, comp)
#define IA4 IDX_APPLY(4, s4)
#define IO4 i4_b = 0;
#define IV4 long i4_b;
#else
#define IP4
#define IS4(comp)
#define IA4
#define IO4
#define IV4
#endif
#if NIDX > 5
#define IP5 IDX_PARAM(5)
#define IS5(comp) IDX_BASE(5, comp)
#define IA5 IDX_APPLY(5, s5)
#define IO5 i5_b = 0;
#define IV5 long i5_b;
#else
#define IP5
#define IS5(comp)
#define IA5
#define IO5
#define IV5
#endif
#if NIDX > 6
#define IP6 IDX_PARAM(6)
#define IS6(comp) IDX_BASE(6, comp)
#define IA6 IDX_APPLY(6, s6)
#define IO6 i6_b = 0;
#define IV6 long i6_b;
#else
#define IP6
#define IS6(comp)
#define IA6
#define IO6
#define IV6
#endif
#if NIDX > 7
#define IP7 IDX_PARAM(7)
#define IS7(comp) IDX_BASE(7, comp)
#define IA7 IDX_APPLY(7, s7)
#define IO7 i7_b = 0;
#define IV7 long i7_b;
#else
#define IP7
#define IS7(comp)
#define IA7
#define IO7
#define IV7
#endif

#ifdef VALUE
#define B_BASE(comp)
#define B_ZERO
#else
#define B_BASE(comp) bb += c * b_st.comp;
#define B_ZERO bb = 0;
#endif

// Dimension d >= 1 of a linear position: the operands' base offsets.
#define DIM_STEP(d, comp)                                                          \
  if (ndim > d) {                                                                  \
    const ulong s = (ulong)sizes.comp;                                             \
    const ulong q = rest / s;                                                      \
    const long c = (long)(rest - q * s);                                           \
    rest = q;                                                                      \
    ab += c * a_st.comp;                                                           \
    B_BASE(comp)                                                                   \
    IS0(comp) IS1(comp) IS2(comp) IS3(comp) IS4(comp) IS5(comp) IS6(comp) IS7(comp) \
  }
// Position `lin`: its coordinate c0 along dimension 0 and the base offsets of the others.
#define DECOMPOSE(lin)                                        \
  {                                                           \
    ulong rest = (lin);                                       \
    const ulong q0 = rest / size0;                            \
    c0 = (long)(rest - q0 * size0);                           \
    rest = q0;                                                \
    ab = 0;                                                   \
    B_ZERO IO0 IO1 IO2 IO3 IO4 IO5 IO6 IO7                    \
    DIM_STEP(1, s1)                                           \
    DIM_STEP(2, s2)                                           \
    DIM_STEP(3, s3)                                           \
    DIM_STEP(4, s4)                                           \
    DIM_STEP(5, s5)                                           \
    DIM_STEP(6, s6)                                           \
    DIM_STEP(7, s7)                                           \
  }

#ifdef ALPHA
#define ALPHA_PARAM , REG alpha
#else
#define ALPHA_PARAM
#endif

// Work-item g handles the positions [g * chunk, (g + 1) * chunk): consecutive positions step
// along dimension 0 without a division.
__kernel void index_elements(ulong n, ulong chunk, int ndim, long8 sizes, A_PARAM, ulong a_off,
                             long8 a_st, B_PARAMS IP0 IP1 IP2 IP3 IP4 IP5 IP6 IP7, long8 isizes,
                             long8 istrides ALPHA_PARAM, __global int* err, int err_code) {
  const ulong first = get_global_id(0) * chunk;
  if (first >= n) return;
  const ulong end = min(n, first + chunk);
  const ulong size0 = ndim > 0 ? (ulong)sizes.s0 : 1;
  long c0, ab;
#ifndef VALUE
  long bb;
#endif
  IV0 IV1 IV2 IV3 IV4 IV5 IV6 IV7
  DECOMPOSE(first)
  for (ulong e = first; e < end; ++e, ++c0) {
    if ((ulong)c0 == size0) DECOMPOSE(e)
    long ao = ab + c0 * a_st.s0;
    int ok = 1;
    IA0 IA1 IA2 IA3 IA4 IA5 IA6 IA7
#ifdef TARGETS
    keys[a_off + e] = ok ? ao : -1;
    srcs[b_off + e] = bb + c0 * b_st.s0;
#else
    if (!ok) continue;
    const ulong ae = a_off + (ulong)ao;
#ifndef VALUE
    const ulong be = b_off + (ulong)(bb + c0 * b_st.s0);
#endif
#if defined(GATHER)
    b[be] = a[ae];
#elif defined(REDUCE)
#ifdef VALUE
    REG v = value;
#else
    REG v = LOAD(T, b, be);
#endif
#ifdef ALPHA
    v = v * alpha;
#endif
    reduce_at(a, ae, v);
#elif defined(VALUE)
    STORE(T, a, ae, value);
#else
    store_at(a, ae, b[be]);
#endif
#endif  // TARGETS
  }
}

#endif  // NIDX

// ---- index_segments: the ordered (deterministic) form of index_elements ----
// The host has run index_elements with -DTARGETS and sorted its keys stably (ops/Sort.h):
// keys[0..n) ascending, perm[j] the position the j-th key came from (positions of one key in
// increasing order), srcs[p] the B offset of position p. Work-item j that starts a run of equal
// keys k >= 0 combines its run into A[k] in position order, one contribution at a time:
//   REDUCE_ADD / REDUCE_MUL / REDUCE_MAX / REDUCE_MIN   A[k] = A[k] op B[...] (times alpha with
//                  -DALPHA), rounded to T after each step as the CPU's serial loop rounds
//                  (with -DWIDE: kept in REG_TYPE(T), float for half/bfloat16, and rounded once)
//   none           A[k] = B[...] of the run's last position (the CPU's serial loop: last wins)
// So the result does not depend on scheduling: the same bits on every run.
// Build options: -DSEGMENTS -DT=<tag> (the dtype's tag with REDUCE_*, with -DT_FLOAT for a
//   floating one; the element's bits for plain copies), one -DREDUCE_* or none, -DALPHA, -DWIDE.
// Slices: the dimensions of the op's space along which no index moves (every index stride 0)
// and A does (index_add_'s and index_put_'s rows, for instance) are left out of the offsets
// pass and the sort: keys then name the first element of a slice of A, and the m positions of
// a slice (sdim dimensions, ssizes innermost first, strides sa_st in A and sb_st in B) are
// combined by m work-items side by side, each in the run's order.
// Arguments: ulong n (sorted keys), ulong m (positions per slice), int sdim, long8 ssizes,
//   long8 sa_st, long8 sb_st, keys, keys_off, perm, perm_off, srcs, srcs_off, A, a_off, B,
//   b_off, [REG_TYPE(T) alpha]. Global: n * m rounded up to the local size; work-item
//   j * m + s handles key j, slice position s.
#ifdef SEGMENTS

#if defined(REDUCE_ADD) || defined(REDUCE_MUL) || defined(REDUCE_MAX) || defined(REDUCE_MIN)
#define SEG_REDUCE
#endif

#if defined(REDUCE_ADD)
#define SEG_COMBINE(cur, v) ((cur) + (v))
#elif defined(REDUCE_MUL)
#define SEG_COMBINE(cur, v) ((cur) * (v))
#elif defined(T_FLOAT) && defined(REDUCE_MAX)
#define SEG_COMBINE(cur, v) (OCL_ISNAN(v) ? (v) : ((cur) < (v) ? (v) : (cur)))
#elif defined(T_FLOAT) && defined(REDUCE_MIN)
#define SEG_COMBINE(cur, v) (OCL_ISNAN(v) ? (v) : ((v) < (cur) ? (v) : (cur)))
#elif defined(REDUCE_MAX)
#define SEG_COMBINE(cur, v) ((cur) < (v) ? (v) : (cur))
#elif defined(REDUCE_MIN)
#define SEG_COMBINE(cur, v) ((v) < (cur) ? (v) : (cur))
#endif

#ifdef ALPHA
#define SEG_ALPHA , REG_TYPE(T) alpha
#else
#define SEG_ALPHA
#endif

__kernel void index_segments(ulong n, ulong m, int sdim, long8 ssizes, long8 sa_st, long8 sb_st,
                             __global const long* keys, ulong keys_off, __global const long* perm,
                             ulong perm_off, __global const long* srcs, ulong srcs_off,
                             __global STORE_TYPE(T)* a, ulong a_off,
                             __global const STORE_TYPE(T)* b, ulong b_off SEG_ALPHA) {
  const ulong g = get_global_id(0);
  if (g >= n * m) return;
  const ulong j = g / m;
  ulong s = g - j * m;
  const long k = keys[keys_off + j];
  if (k < 0 || (j > 0 && keys[keys_off + j - 1] == k)) return;
  // The slice position s: its offsets in A and B (sdim dimensions, innermost first).
  const long sz[8] = {ssizes.s0, ssizes.s1, ssizes.s2, ssizes.s3,
                      ssizes.s4, ssizes.s5, ssizes.s6, ssizes.s7};
  const long ast[8] = {sa_st.s0, sa_st.s1, sa_st.s2, sa_st.s3, sa_st.s4, sa_st.s5, sa_st.s6, sa_st.s7};
  const long bst[8] = {sb_st.s0, sb_st.s1, sb_st.s2, sb_st.s3, sb_st.s4, sb_st.s5, sb_st.s6, sb_st.s7};
  long sa = 0, sb = 0;
  for (int d = 0; d < sdim; ++d) {
    const ulong q = s / (ulong)sz[d];
    const long c = (long)(s - q * (ulong)sz[d]);
    s = q;
    sa += c * ast[d];
    sb += c * bst[d];
  }
  const ulong ae = a_off + (ulong)(k + sa);
  const ulong bo = b_off + (ulong)sb;
#ifdef SEG_REDUCE
  REG_TYPE(T) acc = LOAD(T, a, ae);
  for (ulong r = j; r < n && keys[keys_off + r] == k; ++r) {
    const long p = perm[perm_off + r];
    REG_TYPE(T) v = LOAD(T, b, bo + (ulong)srcs[srcs_off + p]);
#ifdef ALPHA
    v = v * alpha;
#endif
#ifdef WIDE
    acc = SEG_COMBINE(acc, v);
#else
    acc = ROUND(T, CONVERT(T, SEG_COMBINE(acc, v)));
#endif
  }
  STORE(T, a, ae, CONVERT(T, acc));
#else
  ulong last = j;
  while (last + 1 < n && keys[keys_off + last + 1] == k) ++last;
  const long p = perm[perm_off + last];
  a[ae] = b[bo + (ulong)srcs[srcs_off + p]];
#endif
}
#endif  // SEGMENTS

// ---- masked_scatter ----
// self[i] = source[k] for the k-th set flag i, in order; flags (the mask broadcast to self) and
// self are contiguous and of n elements. Two passes over one geometry (global = G * LWS,
// local = LWS; group g owns [g * chunk, min(n, (g + 1) * chunk))):
//   masked_count:   counts[g] = how many flags of group g are set
//   masked_scatter: group g starts at the sum of the counts of the groups before it and writes
//                   a tile of LWS flags at a time, ranked by a prefix sum in local memory. A rank
//                   beyond the source's src_n elements records err_code.
// Build options: -DMASKED -DT=<uchar|short|int|long> (bits) -DLWS=<power of two>.

#ifdef MASKED
__kernel void masked_count(ulong n, ulong chunk, __global const uchar* flags, ulong flags_off,
                           __global long* counts, ulong counts_off) {
  __local long partial[LWS];
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const ulong start = g * chunk;
  const ulong end = min(n, start + chunk);
  long c = 0;
  for (ulong i = start + lid; i < end; i += LWS) c += flags[flags_off + i] != 0 ? 1 : 0;
  partial[lid] = c;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) counts[counts_off + g] = partial[0];
}

__kernel void masked_scatter(ulong n, ulong chunk, __global const uchar* flags, ulong flags_off,
                             __global const long* counts, ulong counts_off, __global T* self,
                             ulong self_off, __global const T* src, ulong src_off, ulong src_n,
                             __global int* err, int err_code) {
  __local uint scan[2][LWS];
  __local long partial[LWS];
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  // This group's first rank: the counts of the groups before it.
  long before = 0;
  for (ulong h = lid; h < g; h += LWS) before += counts[counts_off + h];
  partial[lid] = before;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  ulong written = (ulong)partial[0];
  const ulong start = g * chunk;
  const ulong end = min(n, start + chunk);
  for (ulong base = start; base < end; base += LWS) {
    const ulong i = base + lid;
    const uint f = (i < end && flags[flags_off + i] != 0) ? 1u : 0u;
    int cur = 0;
    scan[0][lid] = f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < LWS; s <<= 1) {
      const uint v = scan[cur][lid] + (lid >= s ? scan[cur][lid - s] : 0u);
      scan[1 - cur][lid] = v;
      cur = 1 - cur;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (f) {
      const ulong pos = written + scan[cur][lid] - 1;
      if (pos < src_n)
        self[self_off + i] = src[src_off + pos];
      else
        atomic_cmpxchg(err, 0, err_code);
    }
    written += scan[cur][LWS - 1];
    barrier(CLK_LOCAL_MEM_FENCE);  // the next tile overwrites scan[]
  }
}
#endif  // MASKED
