// Strided elementwise kernel: out[i] = OP(in0[i], in1[i], in2[i], p0, p1) over an iteration
// space of n elements, computed in REG_TYPE(COMP_T) and converted to the output's type.
//
// Build options (set by csrc/ops/Elementwise.cpp):
//   -DOP_<name>            the operation (see the list below)
//   -DOUT_T=<tag> -DCOMP_T=<tag> [-DCOMP_FLOAT when COMP_T is a floating type]
//   -DNIN=<0..3> -DIN0_T=<tag> -DIN1_T=<tag> -DIN2_T=<tag>
//   -DIN<k>_SCALAR         operand k is a kernel argument of type REG_TYPE(COMP_T), not a buffer
//   -DNDIM=<0..8>          0: every operand is contiguous and shares the index; else the rank
//   -DIDX64                64-bit index arithmetic (more than 2^31 elements or offsets)
// Arguments, in order:
//   ulong n, out buffer, ulong out_off,
//   for each input k: (buffer, ulong off) or (REG_TYPE(COMP_T) value) when IN<k>_SCALAR,
//   REG_TYPE(COMP_T) p0, REG_TYPE(COMP_T) p1,
//   when NDIM > 0: long8 sizes (innermost first), long8 out strides, long8 strides of every
//   input that is a buffer (in elements).
//   -DCHUNK=<k>            contiguous case: elements per work-item (default 1)
// Launch: 1-D, global = ceil(n / CHUNK) (CHUNK only when NDIM == 0) rounded up to the local
// size.

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

// Integer division never traps: x/0 gives 0 and MIN/-1 wraps (torch raises for x/0 on the CPU;
// a device kernel cannot, and a hardware trap would kill the process).
#define IDIV(x, y) ((y) == 0 ? (COMP)0 : ((y) == (COMP)-1 ? (COMP)(-(x)) : (COMP)((x) / (y))))
#define IMOD(x, y) ((y) == 0 || (y) == (COMP)-1 ? (COMP)0 : (COMP)((x) % (y)))

inline COMP floor_divide(COMP a, COMP b) {
#ifdef COMP_FLOAT
  if (b == 0) return a / b;
  COMP mod = fmod(a, b);
  COMP div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  COMP fdiv;
  if (div != 0) {
    fdiv = floor(div);
    if (div - fdiv > (COMP)0.5) fdiv += 1;
  } else {
    fdiv = copysign((COMP)0, a / b);
  }
  return fdiv;
#else
  COMP q = IDIV(a, b);
  if (b != 0 && IMOD(a, b) != 0 && ((a < 0) != (b < 0))) q -= 1;
  return q;
#endif
}

#if defined(OP_add)
#define OP(a, b, c) ((a) + p0 * (b))
#elif defined(OP_sub)
#define OP(a, b, c) ((a)-p0 * (b))
#elif defined(OP_mul)
#define OP(a, b, c) ((a) * (b))
#elif defined(OP_div_true)
#define OP(a, b, c) ((a) / (b))
#elif defined(OP_div_trunc)
#ifdef COMP_FLOAT
#define OP(a, b, c) trunc((a) / (b))
#else
#define OP(a, b, c) IDIV(a, b)
#endif
#elif defined(OP_div_floor)
#define OP(a, b, c) floor_divide(a, b)
#elif defined(OP_maximum)
#ifdef COMP_FLOAT
#define OP(a, b, c) (isnan(a) || isnan(b) ? (a) + (b) : fmax(a, b))
#else
#define OP(a, b, c) ((a) > (b) ? (a) : (b))
#endif
#elif defined(OP_minimum)
#ifdef COMP_FLOAT
#define OP(a, b, c) (isnan(a) || isnan(b) ? (a) + (b) : fmin(a, b))
#else
#define OP(a, b, c) ((a) < (b) ? (a) : (b))
#endif
#elif defined(OP_bitwise_and)
#define OP(a, b, c) ((a) & (b))
#elif defined(OP_bitwise_or)
#define OP(a, b, c) ((a) | (b))
#elif defined(OP_bitwise_xor)
#define OP(a, b, c) ((a) ^ (b))
#elif defined(OP_eq)
#define OP(a, b, c) ((a) == (b))
#elif defined(OP_ne)
#define OP(a, b, c) ((a) != (b))
#elif defined(OP_lt)
#define OP(a, b, c) ((a) < (b))
#elif defined(OP_le)
#define OP(a, b, c) ((a) <= (b))
#elif defined(OP_gt)
#define OP(a, b, c) ((a) > (b))
#elif defined(OP_ge)
#define OP(a, b, c) ((a) >= (b))
#elif defined(OP_logical_not)
#define OP(a, b, c) ((a) == 0)
#elif defined(OP_logical_and)
#define OP(a, b, c) ((a) != 0 && (b) != 0)
#elif defined(OP_logical_or)
#define OP(a, b, c) ((a) != 0 || (b) != 0)
#elif defined(OP_logical_xor)
#define OP(a, b, c) (((a) != 0) != ((b) != 0))
#elif defined(OP_copy)
#define OP(a, b, c) (a)
#elif defined(OP_fill)
#define OP(a, b, c) p0
#elif defined(OP_neg)
#define OP(a, b, c) (-(a))
#elif defined(OP_abs)
#define OP(a, b, c) ABS(a)
#elif defined(OP_sign)
#define OP(a, b, c) (COMP)(((a) > 0) - ((a) < 0))
#elif defined(OP_relu)
#define OP(a, b, c) ((a) < 0 ? (COMP)0 : (a))
#elif defined(OP_clamp)
inline COMP clamp_op(COMP a, COMP lo, COMP hi) {
#ifdef COMP_FLOAT
  if (isnan(a)) return a;
#endif
#ifdef HAS_LO
#ifdef COMP_FLOAT
  if (isnan(lo)) return lo;
#endif
  if (a < lo) a = lo;
#endif
#ifdef HAS_HI
#ifdef COMP_FLOAT
  if (isnan(hi)) return hi;
#endif
  if (a > hi) a = hi;
#endif
  return a;
}
#define OP(a, b, c) clamp_op(a, p0, p1)
#elif defined(OP_where)
#define OP(a, b, c) ((a) != 0 ? (b) : (c))
#elif defined(OP_addcmul)
#define OP(a, b, c) ((a) + p0 * (b) * (c))
#elif defined(OP_addcdiv)
#define OP(a, b, c) ((a) + p0 * ((b) / (c)))
#elif defined(OP_lerp)
#define OP(a, b, c) \
  (fabs(p0) < (COMP)0.5 ? (a) + p0 * ((b) - (a)) : (b) - ((b) - (a)) * ((COMP)1 - p0))
#elif defined(OP_threshold_backward)
#define OP(a, b, c) ((b) <= p0 ? (COMP)0 : (a))
#elif defined(OP_sigmoid_backward)
#define OP(a, b, c) ((a) * ((COMP)1 - (b)) * (b))
#elif defined(OP_tanh_backward)
#define OP(a, b, c) ((a) * ((COMP)1 - (b) * (b)))
#elif defined(OP_ceil)
#ifdef COMP_FLOAT
#define OP(a, b, c) ceil(a)
#else
#define OP(a, b, c) (a)
#endif
#elif defined(OP_floor)
#ifdef COMP_FLOAT
#define OP(a, b, c) floor(a)
#else
#define OP(a, b, c) (a)
#endif
#elif defined(OP_round)
#ifdef COMP_FLOAT
#define OP(a, b, c) rint(a)
#else
#define OP(a, b, c) (a)
#endif
#elif defined(OP_trunc)
#ifdef COMP_FLOAT
#define OP(a, b, c) trunc(a)
#else
#define OP(a, b, c) (a)
#endif
#elif defined(OP_reciprocal)
#define OP(a, b, c) ((COMP)1 / (a))
#elif defined(OP_exp)
#define OP(a, b, c) exp(a)
#elif defined(OP_log)
#define OP(a, b, c) log(a)
#elif defined(OP_sqrt)
#define OP(a, b, c) sqrt(a)
#elif defined(OP_rsqrt)
#define OP(a, b, c) rsqrt(a)
#elif defined(OP_sin)
#define OP(a, b, c) sin(a)
#elif defined(OP_cos)
#define OP(a, b, c) cos(a)
#elif defined(OP_tanh)
#define OP(a, b, c) tanh(a)
#elif defined(OP_sigmoid)
#define OP(a, b, c) ((COMP)1 / ((COMP)1 + exp(-(a))))
#else
#error "unknown elementwise OP"
#endif

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
#ifdef OP_where
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
#define EW_AT(o, o0, o1, o2)                                       \
  do {                                                             \
    const COMP a = LOAD_A(o0), b = LOAD_B(o1), c = LOAD_C(o2);     \
    STORE(OUT_T, out, out_off + (o), CONVERT(OUT_T, OP(a, b, c))); \
  } while (0)

// CHUNK (contiguous case only): consecutive elements per work-item. 1 suits GPUs (neighbouring
// work-items touch neighbouring elements); CPU devices run a work-item's loop as vector code, so
// the host passes a larger chunk there.
#ifndef CHUNK
#define CHUNK 1
#endif

__kernel void elementwise(ulong n, __global STORE_TYPE(OUT_T)* out, ulong out_off P0 P1 P2, COMP p0,
                          COMP p1 STRIDE_PARAMS) {
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
