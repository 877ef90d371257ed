// Elementwise kernels, computed in REG_TYPE(COMP_T) and converted to the output's type:
//   `elementwise`: out[i] = OP(in0[i], in1[i], in2[i]) (with p0, p1) over n elements, strided;
//   `elementwise_batch`: a list of small contiguous ops run in order by one work-group (one launch
//   for many tiny ops; see csrc/ops/ElementwiseBatch.cpp).
// Every op is a macro EWOP_<name>(a, b, c) below, shared by both kernels.
//
// Build options of `elementwise` (set by csrc/ops/Elementwise.cpp):
//   -DEW_OP=EWOP_<name>    the operation (the full macro name: names like tanh are macros
//                          themselves in some compilers' headers); <name> as in the op table,
//                          csrc/ops/ElementwiseOps.h
//   -DLOAD_COND            operand 0 is a condition read in its own type (where)
//   -DOUT_T=<tag> -DCOMP_T=<tag> [-DCOMP_FLOAT when COMP_T is a floating type]
//   -DNIN=<0..3> -DIN0_T=<tag> -DIN1_T=<tag> -DIN2_T=<tag>
//   -DIN<k>_SCALAR         operand k is a kernel argument of type REG_TYPE(COMP_T), not a buffer
//   -DNDIM=<0..8>          0: every operand is contiguous and shares the index; else the rank
//   -DIDX64                64-bit index arithmetic (more than 2^31 elements or offsets)
//   -DCHUNK=<k>            contiguous case: elements per work-item (default 1)
// Arguments, in order:
//   ulong n, out buffer, ulong out_off,
//   for each input k: (buffer, ulong off) or (REG_TYPE(COMP_T) value) when IN<k>_SCALAR,
//   REG_TYPE(COMP_T) p0, p1, p2 (the op's scalar parameters),
//   when NDIM > 0: long8 sizes (innermost first), long8 out strides, long8 strides of every
//   input that is a buffer (in elements);
//   with -DEW_NONZERO_B: the error word (__global int*) and the code to record.
// Launch: 1-D, global = ceil(n / CHUNK) (CHUNK only when NDIM == 0) rounded up to the local
// size.
//
// Build options of `elementwise_batch` (set by csrc/ops/ElementwiseBatch.cpp):
//   -DBATCH_T=<tag>        the dtype of every operand (a floating tag; computed in float)
//   -DBATCH_MAX=<k>        capacity of the op list
//   -DBATCH_OPS=X(0,EWOP_add)X(1,EWOP_mul)...  op codes (the ops' EwId, csrc/ops/ElementwiseOps.h)
// Arguments: BATCH_SLOTS (8) buffers, then a batch_list by value (layout below).
// Launch: one work-group (global == local).

#ifdef BATCH_T
#define COMP_T float
#define COMP_FLOAT
#endif

#define COMP REG_TYPE(COMP_T)

#ifdef IDX64
typedef long idx_t;
#else
typedef int idx_t;
#endif

#ifdef COMP_FLOAT
#define ABS(x) fabs(x)
#else
// The abs() builtin (unsigned result, cast back: the minimum wraps like torch). `x < 0 ? -x : x`
// becomes LLVM's abs intrinsic, which Oclgrind cannot execute.
#define ABS(x) ((COMP)abs(x))
#endif

// Integer division never traps: x/0 gives 0 and MIN/-1 wraps (a hardware trap would kill the
// process). Division ops built with EW_NONZERO_B also record x/0 for the host to raise, as the
// CPU raises ZeroDivisionError.
#define IDIV(x, y) ((y) == 0 ? (COMP)0 : ((y) == (COMP)-1 ? (COMP)(-(x)) : (COMP)((x) / (y))))
#define IMOD(x, y) ((y) == 0 || (y) == (COMP)-1 ? (COMP)0 : (COMP)((x) % (y)))

// Floor division as CPU torch computes it; for half/bfloat16 every step is rounded to the dtype
// (R), as the CPU computes those in the dtype itself.
#define R(x) ROUND(COMP_T, x)
inline COMP floor_divide(COMP a, COMP b) {
#ifdef COMP_FLOAT
  if (b == 0) return R(a / b);
  COMP mod = fmod(a, b);
  COMP div = R(R(a - mod) / b);
  if (mod != 0 && ((b < 0) != (mod < 0))) div = R(div - 1);
  COMP fdiv;
  if (div != 0) {
    fdiv = floor(div);
    if (R(div - fdiv) > (COMP)0.5) fdiv = R(fdiv + 1);
  } else {
    fdiv = copysign((COMP)0, R(a / b));
  }
  return fdiv;
#else
  COMP q = IDIV(a, b);
  if (b != 0 && IMOD(a, b) != 0 && ((a < 0) != (b < 0))) q -= 1;
  return q;
#endif
}

#define EWOP_add(a, b, c) ((a) + p0 * (b))
#define EWOP_mul(a, b, c) ((a) * (b))
#define EWOP_div_true(a, b, c) ((a) / (b))
#ifdef COMP_FLOAT
#define EWOP_div_trunc(a, b, c) trunc(R((a) / (b)))
#else
#define EWOP_div_trunc(a, b, c) IDIV(a, b)
#endif
#define EWOP_div_floor(a, b, c) floor_divide(a, b)
#ifdef COMP_FLOAT
#define EWOP_maximum(a, b, c) (isnan(a) || isnan(b) ? (a) + (b) : fmax(a, b))
#else
#define EWOP_maximum(a, b, c) ((a) > (b) ? (a) : (b))
#endif
#ifdef COMP_FLOAT
#define EWOP_minimum(a, b, c) (isnan(a) || isnan(b) ? (a) + (b) : fmin(a, b))
#else
#define EWOP_minimum(a, b, c) ((a) < (b) ? (a) : (b))
#endif
#define EWOP_bitwise_and(a, b, c) ((a) & (b))
#define EWOP_bitwise_or(a, b, c) ((a) | (b))
#define EWOP_bitwise_xor(a, b, c) ((a) ^ (b))
#define EWOP_eq(a, b, c) ((a) == (b))
#define EWOP_ne(a, b, c) ((a) != (b))
#define EWOP_lt(a, b, c) ((a) < (b))
#define EWOP_le(a, b, c) ((a) <= (b))
#define EWOP_gt(a, b, c) ((a) > (b))
#define EWOP_ge(a, b, c) ((a) >= (b))
#define EWOP_logical_not(a, b, c) ((a) == 0)
#define EWOP_logical_and(a, b, c) ((a) != 0 && (b) != 0)
#define EWOP_logical_or(a, b, c) ((a) != 0 || (b) != 0)
#define EWOP_logical_xor(a, b, c) (((a) != 0) != ((b) != 0))
#define EWOP_copy(a, b, c) (a)
#define EWOP_fill(a, b, c) p0
#define EWOP_neg(a, b, c) (-(a))
#define EWOP_abs(a, b, c) ABS(a)
#define EWOP_sign(a, b, c) (COMP)(((a) > 0) - ((a) < 0))
// clamp: a NaN input or a NaN bound gives NaN, as on the CPU.
inline COMP clamp_lo(COMP a, COMP lo) {
#ifdef COMP_FLOAT
  if (isnan(a)) return a;
  if (isnan(lo)) return lo;
#endif
  return a < lo ? lo : a;
}
inline COMP clamp_hi(COMP a, COMP hi) {
#ifdef COMP_FLOAT
  if (isnan(a)) return a;
  if (isnan(hi)) return hi;
#endif
  return a > hi ? hi : a;
}
#define EWOP_clamp(a, b, c) clamp_hi(clamp_lo(a, p0), p1)
#define EWOP_clamp_min(a, b, c) clamp_lo(a, p0)
#define EWOP_clamp_max(a, b, c) clamp_hi(a, p0)
#define EWOP_where(a, b, c) ((a) != 0 ? (b) : (c))
#define EWOP_addcmul(a, b, c) ((a) + p0 * (b) * (c))
#define EWOP_addcdiv(a, b, c) ((a) + p0 * ((b) / (c)))
#define EWOP_lerp(a, b, c) \
  (fabs(p0) < (COMP)0.5 ? (a) + p0 * ((b) - (a)) : (b) - ((b) - (a)) * ((COMP)1 - p0))
// threshold(x, other): x <= threshold (p0) ? value (p1) : other (relu's gradient: x the input,
// other the gradient, value 0).
#define EWOP_threshold(a, b, c) ((a) <= p0 ? p1 : (b))
#define EWOP_sigmoid_backward(a, b, c) ((a) * ((COMP)1 - (b)) * (b))
#define EWOP_tanh_backward(a, b, c) ((a) * ((COMP)1 - (b) * (b)))
#ifdef COMP_FLOAT
#define EWOP_ceil(a, b, c) ceil(a)
#else
#define EWOP_ceil(a, b, c) (a)
#endif
#ifdef COMP_FLOAT
#define EWOP_floor(a, b, c) floor(a)
#else
#define EWOP_floor(a, b, c) (a)
#endif
#ifdef COMP_FLOAT
#define EWOP_round(a, b, c) rint(a)
#else
#define EWOP_round(a, b, c) (a)
#endif
#ifdef COMP_FLOAT
#define EWOP_trunc(a, b, c) trunc(a)
#else
#define EWOP_trunc(a, b, c) (a)
#endif
#define EWOP_reciprocal(a, b, c) ((COMP)1 / (a))
#define EWOP_exp(a, b, c) exp(a)
#define EWOP_log(a, b, c) log(a)
#define EWOP_sqrt(a, b, c) sqrt(a)
#define EWOP_rsqrt(a, b, c) rsqrt(a)
#define EWOP_sin(a, b, c) sin(a)
#define EWOP_cos(a, b, c) cos(a)
#define EWOP_tanh(a, b, c) tanh(a)
#define EWOP_sigmoid(a, b, c) ((COMP)1 / ((COMP)1 + exp(-(a))))

#ifdef EW_OP
#define OP(a, b, c) EW_OP(a, b, c)

// Operand k's kernel parameters and how to read element `off` of it.
#define BUF_PARAM(k, T) , __global const STORE_TYPE(T)*in##k, ulong in##k##_off
#define SCALAR_PARAM(k) , COMP in##k##_val

#if NIN > 0
#ifdef IN0_SCALAR
#define P0 SCALAR_PARAM(0)
#else
#define P0 BUF_PARAM(0, IN0_T)
#endif
#else
#define P0
#endif
#if NIN > 1
#ifdef IN1_SCALAR
#define P1 SCALAR_PARAM(1)
#else
#define P1 BUF_PARAM(1, IN1_T)
#endif
#else
#define P1
#endif
#if NIN > 2
#ifdef IN2_SCALAR
#define P2 SCALAR_PARAM(2)
#else
#define P2 BUF_PARAM(2, IN2_T)
#endif
#else
#define P2
#endif

// Strides only for buffer operands.
#if NIN > 0 && !defined(IN0_SCALAR)
#define S0 , long8 st0
#else
#define S0
#endif
#if NIN > 1 && !defined(IN1_SCALAR)
#define S1 , long8 st1
#else
#define S1
#endif
#if NIN > 2 && !defined(IN2_SCALAR)
#define S2 , long8 st2
#else
#define S2
#endif

#if NDIM > 0
#define STRIDE_PARAMS , long8 sizes, long8 sto S0 S1 S2
#else
#define STRIDE_PARAMS
#endif

// The condition of `where` keeps its own type; every other operand converts to COMP.
#ifdef LOAD_COND
#define LOAD_IN0(off) (LOAD(IN0_T, in0, off) != 0)
#else
#define LOAD_IN0(off) CONVERT(COMP_T, LOAD(IN0_T, in0, off))
#endif

// Load, compute and store one element at offsets (o, o0, o1, o2) of out and the inputs.
#if NIN > 0
#ifdef IN0_SCALAR
#define LOAD_A(o0) in0_val
#else
#define LOAD_A(o0) LOAD_IN0(in0_off + (o0))
#endif
#else
#define LOAD_A(o0) 0
#endif
#if NIN > 1
#ifdef IN1_SCALAR
#define LOAD_B(o1) in1_val
#else
#define LOAD_B(o1) CONVERT(COMP_T, LOAD(IN1_T, in1, in1_off + (o1)))
#endif
#else
#define LOAD_B(o1) 0
#endif
#if NIN > 2
#ifdef IN2_SCALAR
#define LOAD_C(o2) in2_val
#else
#define LOAD_C(o2) CONVERT(COMP_T, LOAD(IN2_T, in2, in2_off + (o2)))
#endif
#else
#define LOAD_C(o2) 0
#endif
// EW_NONZERO_B (integer division): a zero second operand records err_code in *err, which the
// host raises at its next wait (csrc/runtime/DeviceError.h); the quotient itself stays IDIV's 0.
#ifdef EW_NONZERO_B
#define ERR_PARAMS , __global int *err, int err_code
#define CHECK_B(b) \
  if ((b) == 0) atomic_cmpxchg(err, 0, err_code)
#else
#define ERR_PARAMS
#define CHECK_B(b)
#endif
#define EW_AT(o, o0, o1, o2)                                       \
  do {                                                             \
    const COMP a = LOAD_A(o0), b = LOAD_B(o1), c = LOAD_C(o2);     \
    CHECK_B(b);                                                    \
    STORE(OUT_T, out, out_off + (o), CONVERT(OUT_T, OP(a, b, c))); \
  } while (0)

// CHUNK (contiguous case only): consecutive elements per work-item. 1 suits GPUs (neighbouring
// work-items touch neighbouring elements); CPU devices run a work-item's loop as vector code, so
// the host passes a larger chunk there.
#ifndef CHUNK
#define CHUNK 1
#endif

__kernel void elementwise(ulong n, __global STORE_TYPE(OUT_T)* out, ulong out_off P0 P1 P2, COMP p0,
                          COMP p1, COMP p2 STRIDE_PARAMS ERR_PARAMS) {
#if NDIM == 0
  const idx_t base = (idx_t)get_global_id(0) * CHUNK;
  if (base + CHUNK <= (idx_t)n) {
    for (int j = 0; j < CHUNK; ++j) EW_AT(base + j, base + j, base + j, base + j);
  } else {
    for (idx_t i = base; i < (idx_t)n; ++i) EW_AT(i, i, i, i);
  }
#else
  const idx_t i = (idx_t)get_global_id(0);
  if (i >= (idx_t)n) return;
  idx_t rem = i, o = 0, o0 = 0, o1 = 0, o2 = 0;
#define STEP_IN(k, comp) o##k += c * (idx_t)st##k.comp;
#if NIN > 0 && !defined(IN0_SCALAR)
#define STEP0(comp) STEP_IN(0, comp)
#else
#define STEP0(comp)
#endif
#if NIN > 1 && !defined(IN1_SCALAR)
#define STEP1(comp) STEP_IN(1, comp)
#else
#define STEP1(comp)
#endif
#if NIN > 2 && !defined(IN2_SCALAR)
#define STEP2(comp) STEP_IN(2, comp)
#else
#define STEP2(comp)
#endif
// The quotient and remainder are computed as q = rem / s, c = rem - q * s: with a `%` next to
// the `/`, LLVM pairs them and inserts a `freeze`, which Oclgrind's uninitialised-value checker
// cannot execute.
#define DIM(d, comp)                               \
  if (NDIM > d) {                                  \
    const idx_t s = (idx_t)sizes.comp;             \
    const idx_t q = (NDIM == d + 1) ? 0 : rem / s; \
    const idx_t c = rem - q * s;                   \
    rem = q;                                       \
    o += c * (idx_t)sto.comp;                      \
    STEP0(comp) STEP1(comp) STEP2(comp)            \
  }
  DIM(0, s0);
  DIM(1, s1);
  DIM(2, s2);
  DIM(3, s3);
  DIM(4, s4);
  DIM(5, s5);
  DIM(6, s6);
  DIM(7, s7);
  EW_AT(o, o0, o1, o2);
#endif
}
#endif  // EW_OP

#ifdef BATCH_T
#define BATCH_SLOTS 8

// One op of a batch: out = EWOP(a, b) over n contiguous elements; operands are (slot, offset in
// elements) pairs; with b_slot >= BATCH_SLOTS, b is the value bv (a scalar operand; unary ops
// ignore it). Only 32-bit fields, so the host's struct has the same layout.
typedef struct {
  uint op, n, out_slot, a_slot, b_slot, out_off, a_off, b_off;
  float p0, p1, bv;
} batch_op;

typedef struct {
  batch_op ops[BATCH_MAX];
  uint count;
} batch_list;

inline float batch_apply(uint op, float a, float b, float p0, float p1) {
  const float c = 0, p2 = 0;
  switch (op) {
#define X(code, op) \
  case code:        \
    return op(a, b, c);
    BATCH_OPS
#undef X
  }
  return a;
}

#define BATCH_PTR __global STORE_TYPE(BATCH_T)*

__kernel void elementwise_batch(BATCH_PTR m0, BATCH_PTR m1, BATCH_PTR m2, BATCH_PTR m3,
                                BATCH_PTR m4, BATCH_PTR m5, BATCH_PTR m6, BATCH_PTR m7,
                                batch_list list) {
  BATCH_PTR m[BATCH_SLOTS] = {m0, m1, m2, m3, m4, m5, m6, m7};
  const uint lid = (uint)get_local_id(0), lsize = (uint)get_local_size(0);
  for (uint k = 0; k < list.count; ++k) {
    const batch_op o = list.ops[k];
    BATCH_PTR out = m[o.out_slot];
    BATCH_PTR a = m[o.a_slot];
    BATCH_PTR b = m[o.b_slot < BATCH_SLOTS ? o.b_slot : o.a_slot];
    const bool binary = o.b_slot < BATCH_SLOTS;
    for (uint i = lid; i < o.n; i += lsize) {
      const float x = LOAD(BATCH_T, a, o.a_off + i);
      const float y = binary ? LOAD(BATCH_T, b, o.b_off + i) : o.bv;
      STORE(BATCH_T, out, o.out_off + i, CONVERT(BATCH_T, batch_apply(o.op, x, y, o.p0, o.p1)));
    }
    // The next op may read what this one wrote (work-items of one group share global memory
    // after a barrier).
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}
#endif  // BATCH_T
