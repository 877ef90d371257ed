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
//   -DCHUNK=<k>            consecutive elements per work-item (default 1)
//   -DEW_VEC               contiguous case: the chunk as float8 vectors (see EW_VEC below)
// Arguments, in order:
//   ulong n, out buffer, ulong out_off,
//   for each input k: (buffer, ulong off) or (REG_TYPE(COMP_T) value) when IN<k>_SCALAR,
//   REG_TYPE(COMP_T) p0, p1, p2 (the op's scalar parameters),
//   when NDIM > 0: long8 sizes (innermost first), long8 out strides, long8 strides of every
//   input that is a buffer (in elements);
//   with -DEW_NONZERO_B: the error word (__global int*) and the code to record.
// Launch: 1-D, global = ceil(n / CHUNK) rounded up to the local size.
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
// The op's result type: the compute type's, unless the host says otherwise (-DRES_T: a complex
// comparison's real result, polar's and complex()'s complex result over real operands).
#ifndef RES_T
#define RES_T COMP_T
#endif
#define RES REG_TYPE(RES_T)

#ifdef IDX64
typedef long idx_t;
#else
typedef int idx_t;
#endif

#ifdef COMP_COMPLEX
// ---- Complex compute (COMP_T cfloat or cdouble; COMP is float2 / double2, .x the real part, .y
// the imaginary part; CR the parts' type). The ops flagged kCplx / kCplxReal in the op table, as
// the CPU's c10::complex computes them (division by Smith's scaling, principal branches). ----
#define CR REG_TYPE(REAL_TAG(COMP_T))
#define CX(re, im) ((COMP)((CR)(re), (CR)(im)))

inline COMP cx_mul(COMP a, COMP b) { return CX(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
// c10::complex's division: scaled by the larger part of the divisor (no overflow of |b|^2); a
// zero divisor gives the componentwise quotients by 0 (inf or NaN), as the CPU.
inline COMP cx_div(COMP a, COMP b) {
  const CR ac = fabs(b.x), ad = fabs(b.y);
  if (ac >= ad) {
    if (ac == 0 && ad == 0) return CX(a.x / ac, a.y / ad);
    const CR rat = b.y / b.x, scl = (CR)1 / (b.x + b.y * rat);
    return CX((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }
  const CR rat = b.x / b.y, scl = (CR)1 / (b.y + b.x * rat);
  return CX((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
inline CR cx_abs(COMP a) { return hypot(a.x, a.y); }
inline COMP cx_exp(COMP a) {
  if (a.y == 0) return CX(exp(a.x), a.y);  // a real exponent stays real (exp(inf) = inf)
  const CR e = exp(a.x);
  return CX(e * cos(a.y), e * sin(a.y));
}
inline COMP cx_log(COMP a) { return CX(log(cx_abs(a)), atan2(a.y, a.x)); }
// The principal square root, without cancellation: from the larger of |a| + |re| halves.
inline COMP cx_sqrt(COMP a) {
  if (a.x == 0 && a.y == 0) return CX(0, a.y);
  if (OCL_ISINF(a.y)) return CX(INFINITY, a.y);
  const CR t = sqrt((cx_abs(a) + fabs(a.x)) / 2);
  if (a.x >= 0) return CX(t, a.y / (2 * t));
  return CX(fabs(a.y) / (2 * t), copysign(t, a.y));
}
inline COMP cx_pow(COMP a, COMP b) {
  if (b.x == 0 && b.y == 0) return CX(1, 0);
  if (a.x == 0 && a.y == 0) {
    if (b.y == 0 && b.x > 0) return CX(0, 0);
  }
  return cx_exp(cx_mul(b, cx_log(a)));
}
inline COMP cx_sin(COMP a) { return CX(sin(a.x) * cosh(a.y), cos(a.x) * sinh(a.y)); }
inline COMP cx_cos(COMP a) { return CX(cos(a.x) * cosh(a.y), -sin(a.x) * sinh(a.y)); }
inline COMP cx_sinh(COMP a) { return CX(sinh(a.x) * cos(a.y), cosh(a.x) * sin(a.y)); }
inline COMP cx_cosh(COMP a) { return CX(cosh(a.x) * cos(a.y), sinh(a.x) * sin(a.y)); }
// tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); beyond |x| = 20 it is +-1 + 0i to
// the parts' precision (and cosh 2x would overflow float).
inline COMP cx_tanh(COMP a) {
  if (fabs(a.x) > 20) return CX(copysign((CR)1, a.x), copysign((CR)0, sin(2 * a.y)));
  const CR d = cosh(2 * a.x) + cos(2 * a.y);
  return CX(sinh(2 * a.x) / d, sin(2 * a.y) / d);
}
inline COMP cx_tan(COMP a) {  // tan z = -i tanh(iz)
  const COMP t = cx_tanh(CX(-a.y, a.x));
  return CX(t.y, -t.x);
}
inline COMP cx_sgn(COMP a) {
  const CR r = cx_abs(a);
  return r == 0 ? CX(0, 0) : CX(a.x / r, a.y / r);
}
// x + alpha * y with the complex product even for alpha = 1, as the CPU's kernels compute it:
// 1j + (inf + inf j) is NaN + NaN j there (0 * inf in the product), and here.
inline COMP cx_axpy(COMP x, COMP alpha, COMP y) { return x + cx_mul(alpha, y); }

#define EWOP_add(a, b, c) cx_axpy(a, p0, b)
#define EWOP_mul(a, b, c) cx_mul(a, b)
#define EWOP_div_true(a, b, c) cx_div(a, b)
#define EWOP_eq(a, b, c) ((a).x == (b).x && (a).y == (b).y)
#define EWOP_ne(a, b, c) ((a).x != (b).x || (a).y != (b).y)
#define EWOP_neg(a, b, c) (-(a))
#define EWOP_conj(a, b, c) CX((a).x, -(a).y)
// abs and angle as complex values with a zero imaginary part: ATen's abs and angle run complex
// inputs with a complex result and keep its real part.
#define EWOP_abs(a, b, c) CX(cx_abs(a), 0)
#define EWOP_angle(a, b, c) CX(atan2((a).y, (a).x), 0)
#define EWOP_sgn(a, b, c) cx_sgn(a)
#define EWOP_exp(a, b, c) cx_exp(a)
#define EWOP_log(a, b, c) cx_log(a)
#define EWOP_log2(a, b, c) (cx_log(a) / (CR)0.693147180559945309417232121458)
#define EWOP_log10(a, b, c) (cx_log(a) / (CR)2.30258509299404568401799145468)
#define EWOP_sqrt(a, b, c) cx_sqrt(a)
#define EWOP_rsqrt(a, b, c) cx_div(CX(1, 0), cx_sqrt(a))
#define EWOP_reciprocal(a, b, c) cx_div(CX(1, 0), a)
#define EWOP_pow(a, b, c) cx_pow(a, b)
#define EWOP_pow_scalar(a, b, c) cx_pow(a, p0)
#define EWOP_sin(a, b, c) cx_sin(a)
#define EWOP_cos(a, b, c) cx_cos(a)
#define EWOP_tan(a, b, c) cx_tan(a)
#define EWOP_sinh(a, b, c) cx_sinh(a)
#define EWOP_cosh(a, b, c) cx_cosh(a)
#define EWOP_tanh(a, b, c) cx_tanh(a)
#define EWOP_sigmoid(a, b, c) cx_div(CX(1, 0), CX(1, 0) + cx_exp(-(a)))
#define EWOP_addcmul(a, b, c) cx_axpy(a, p0, cx_mul(b, c))
#define EWOP_addcdiv(a, b, c) cx_axpy(a, p0, cx_div(b, c))
#define EWOP_copy(a, b, c) (a)
#define EWOP_fill(a, b, c) p0
#define EWOP_where(a, b, c) ((a).x != 0 ? (b) : (c))

// ---- the inverse functions and the ones that need care near 0 ----
// log(1 + a) without losing a small a: log|1 + a| = log1p(2x + x^2 + y^2) / 2 near 0.
inline COMP cx_log1p(COMP a) {
  if (fabs(a.x) < (CR)0.5 && fabs(a.y) < (CR)0.5) {
    return CX(log1p(a.x * ((CR)2 + a.x) + a.y * a.y) / 2, atan2(a.y, (CR)1 + a.x));
  }
  return cx_log(CX((CR)1 + a.x, a.y));
}
// exp(a) - 1 without losing a small a: Re = expm1(x) cos y - 2 sin^2(y / 2).
inline COMP cx_expm1(COMP a) {
  const CR s = sin(a.y / 2);
  return CX(expm1(a.x) * cos(a.y) - 2 * s * s, exp(a.x) * sin(a.y));
}
// asinh a = log(a + sqrt(a^2 + 1)) = log1p(a + a^2 / (1 + sqrt(1 + a^2))), on the half plane
// Re a >= 0 (odd function) where nothing cancels.
inline COMP cx_asinh(COMP a) {
  const bool flip = a.x < 0 || (a.x == 0 && signbit(a.x));
  const COMP z = flip ? -a : a;
  const COMP z2 = cx_mul(z, z);
  const COMP r = cx_sqrt(CX((CR)1 + z2.x, z2.y));
  const COMP w = cx_log1p(z + cx_div(z2, CX((CR)1 + r.x, r.y)));
  return flip ? -w : w;
}
// asin a = -i asinh(i a); atan a = -i atanh(i a).
inline COMP cx_asin(COMP a) {
  const COMP w = cx_asinh(CX(-a.y, a.x));
  return CX(w.y, -w.x);
}
inline COMP cx_acos(COMP a) {
  const COMP w = cx_asin(a);
  return CX((CR)1.57079632679489661923132169164 - w.x, -w.y);
}
// acosh a = log(a + sqrt(a + 1) sqrt(a - 1)) (the principal branch), as log1p near a = 1.
inline COMP cx_acosh(COMP a) {
  const COMP t = cx_mul(cx_sqrt(CX(a.x + 1, a.y)), cx_sqrt(CX(a.x - 1, a.y)));
  return cx_log1p(CX(a.x - 1 + t.x, a.y + t.y));
}
// atanh a = (log1p(a) - log1p(-a)) / 2.
inline COMP cx_atanh(COMP a) { return (cx_log1p(a) - cx_log1p(-a)) / (CR)2; }
inline COMP cx_atan(COMP a) {
  const COMP w = cx_atanh(CX(-a.y, a.x));
  return CX(w.y, -w.x);
}
// log(exp a + exp b) as the CPU: the operand with the larger real part m, then
// m + log1p(exp(n - m)); equal infinite real parts as the real function treats them.
inline COMP cx_logaddexp(COMP a, COMP b) {
  const COMP m = a.x >= b.x ? a : b, n = a.x >= b.x ? b : a;
  if (OCL_ISINF(m.x) && m.x == n.x) {
    if (m.x < 0) return CX(-INFINITY, m.y);  // both 0 in magnitude
  }
  return m + cx_log1p(cx_exp(n - m));
}
inline COMP cx_sinc(COMP a) {
  if (a.x == 0 && a.y == 0) return CX(1, 0);
  const COMP p = a * (CR)3.14159265358979323846264338328;
  return cx_div(cx_sin(p), p);
}

#define EWOP_log1p(a, b, c) cx_log1p(a)
#define EWOP_expm1(a, b, c) cx_expm1(a)
#define EWOP_exp2(a, b, c) cx_exp((a) * (CR)0.693147180559945309417232121458)
#define EWOP_asin(a, b, c) cx_asin(a)
#define EWOP_acos(a, b, c) cx_acos(a)
#define EWOP_atan(a, b, c) cx_atan(a)
#define EWOP_asinh(a, b, c) cx_asinh(a)
#define EWOP_acosh(a, b, c) cx_acosh(a)
#define EWOP_atanh(a, b, c) cx_atanh(a)
#define EWOP_logaddexp(a, b, c) cx_logaddexp(a, b)
#define EWOP_sinc(a, b, c) cx_sinc(a)
#define EWOP_silu(a, b, c) cx_div(a, CX(1, 0) + cx_exp(-(a)))
// lerp: the CPU's two forms, chosen by |weight| < 0.5.
#define EWOP_lerp(a, b, c) \
  (cx_abs(p0) < (CR)0.5 ? (a) + cx_mul(p0, (b) - (a)) : (b) - cx_mul((b) - (a), CX(1, 0) - p0))
#define EWOP_lerp_tensor(a, b, c) \
  (cx_abs(c) < (CR)0.5 ? (a) + cx_mul(c, (b) - (a)) : (b) - cx_mul((b) - (a), CX(1, 0) - (c)))
// The logical ops: an element is true when either part is nonzero (real result).
#define CX_TRUE(a) ((a).x != 0 || (a).y != 0)
#define EWOP_logical_not(a, b, c) (!CX_TRUE(a))
#define EWOP_logical_and(a, b, c) (CX_TRUE(a) && CX_TRUE(b))
#define EWOP_logical_or(a, b, c) (CX_TRUE(a) || CX_TRUE(b))
#define EWOP_logical_xor(a, b, c) (CX_TRUE(a) != CX_TRUE(b))

#else  // real compute
// conj_physical of a real tensor (ATen runs its stub for every dtype): a copy.
#define EWOP_conj(a, b, c) (a)
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
// (-1 is special for signed types only: for uchar, (COMP)-1 is 255, an ordinary divisor.)
#define EW_SIGNED ((COMP)-1 < (COMP)0)
#define IDIV(x, y) \
  ((y) == 0 ? (COMP)0 : (EW_SIGNED && (y) == (COMP)-1 ? (COMP)(-(x)) : (COMP)((x) / (y))))
#define IMOD(x, y) ((y) == 0 || (EW_SIGNED && (y) == (COMP)-1) ? (COMP)0 : (COMP)((x) % (y)))

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
// maximum/minimum/fmax/fmin as compares, not the fmax/fmin built-ins (out-of-line calls on PoCL,
// which keep a loop scalar). A tie of -0.0 and 0.0 gives the first operand (the CPU's scalar loop
// does the same, its vectorised loop gives the second).
#ifdef COMP_FLOAT
#define EWOP_maximum(a, b, c) (OCL_ISNAN(a) || OCL_ISNAN(b) ? (a) + (b) : ((a) < (b) ? (b) : (a)))
#else
#define EWOP_maximum(a, b, c) ((a) < (b) ? (b) : (a))
#endif
#ifdef COMP_FLOAT
#define EWOP_minimum(a, b, c) (OCL_ISNAN(a) || OCL_ISNAN(b) ? (a) + (b) : ((b) < (a) ? (b) : (a)))
#else
#define EWOP_minimum(a, b, c) ((b) < (a) ? (b) : (a))
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
  if (OCL_ISNAN(a)) return a;
  if (OCL_ISNAN(lo)) return lo;
#endif
  return a < lo ? lo : a;
}
inline COMP clamp_hi(COMP a, COMP hi) {
#ifdef COMP_FLOAT
  if (OCL_ISNAN(a)) return a;
  if (OCL_ISNAN(hi)) return hi;
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
#define EWOP_tanh(a, b, c) ew_tanh(a)
#define EWOP_sigmoid(a, b, c) ((COMP)1 / ((COMP)1 + exp(-(a))))

// ---- Math beyond the first ops: the special functions (kernels/special.clh). ----
#include "special.clh"

#ifndef COMP_FLOAT
// Integer pow with the CPU's semantics: negative exponents truncate (only 1 and -1 give
// non-zero results), overflow wraps.
inline COMP ew_powi(COMP a, COMP b) {
  if ((COMP)-1 < (COMP)0 && b < 0) {
    if (a == 1) return 1;
    if (a == (COMP)-1) return (b & 1) ? (COMP)-1 : (COMP)1;
    return 0;
  }
  ulong r = 1, base = (ulong)a, e = (ulong)b;
  while (e) {
    if (e & 1) r *= base;
    e >>= 1;
    base *= base;
  }
  return (COMP)r;
}
inline COMP ew_gcd(COMP a, COMP b) {
  a = ABS(a);
  b = ABS(b);
  while (a != 0) {
    const COMP c = a;
    a = IMOD(b, a);
    b = c;
  }
  return b;
}
inline COMP ew_lcm(COMP a, COMP b) {
  const COMP g = ew_gcd(a, b);
  return g == 0 ? (COMP)0 : (COMP)abs(IDIV(a, g) * b);
}
inline COMP ew_iremainder(COMP a, COMP b) {
  COMP r = IMOD(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// Shifts by a negative amount or by the width or more: left gives 0, right fills with the sign.
inline COMP ew_lshift(COMP a, COMP b) {
  if ((long)b < 0 || (long)b >= (long)(sizeof(COMP) * 8)) return 0;
  return (COMP)((ulong)a << (ulong)b);
}
inline COMP ew_rshift(COMP a, COMP b) {
  const bool is_signed = (COMP)-1 < (COMP)0;
  const long max_shift = (long)(sizeof(COMP) * 8) - (is_signed ? 1 : 0);
  if ((long)b < 0 || (long)b >= max_shift) return is_signed ? (COMP)(a >> max_shift) : (COMP)0;
  return (COMP)(a >> b);
}
#endif  // !COMP_FLOAT

// clamp with tensor bounds: a NaN bound gives NaN, a NaN input stays NaN, lo > hi gives hi.
inline COMP ew_clamp3(COMP a, COMP lo, COMP hi) {
#ifdef COMP_FLOAT
  if (OCL_ISNAN(lo) || OCL_ISNAN(hi)) return (COMP)NAN;
#endif
  return clamp_hi(clamp_lo(a, lo), hi);
}

// The ops (see the table, csrc/ops/ElementwiseOps.h).
#ifdef COMP_FLOAT
#define EWOP_pow(a, b, c) pow(a, b)
#define EWOP_pow_scalar(a, b, c) ew_pow_scalar(a, p0)
#define EWOP_fmod(a, b, c) fmod(a, b)
#define EWOP_remainder(a, b, c) ew_remainder(a, b)
#define EWOP_fmax(a, b, c) (OCL_ISNAN(b) || (b) < (a) ? (a) : (OCL_ISNAN(a) || (a) < (b) ? (b) : (a)))
#define EWOP_fmin(a, b, c) (OCL_ISNAN(b) || (a) < (b) ? (a) : (OCL_ISNAN(a) || (b) < (a) ? (b) : (a)))
#define EWOP_signbit(a, b, c) (signbit(a) != 0)
#else
#define EWOP_pow(a, b, c) ew_powi(a, b)
#define EWOP_pow_scalar(a, b, c) ew_powi(a, p0)
#define EWOP_fmod(a, b, c) IMOD(a, b)
#define EWOP_remainder(a, b, c) ew_iremainder(a, b)
#define EWOP_fmax(a, b, c) EWOP_maximum(a, b, c)
#define EWOP_fmin(a, b, c) EWOP_minimum(a, b, c)
#define EWOP_signbit(a, b, c) ((a) < 0)
#define EWOP_gcd(a, b, c) ew_gcd(a, b)
#define EWOP_lcm(a, b, c) ew_lcm(a, b)
#define EWOP_lshift(a, b, c) ew_lshift(a, b)
#define EWOP_rshift(a, b, c) ew_rshift(a, b)
#endif
#if EW_COMP_IS(bool)
#define EWOP_bitwise_not(a, b, c) ((a) == 0)
#else
#define EWOP_bitwise_not(a, b, c) (~(a))
#endif
#define EWOP_heaviside(a, b, c) ((a) == 0 ? (b) : (COMP)((a) > 0))
#define EWOP_clamp_tensor(a, b, c) ew_clamp3(a, b, c)
#define EWOP_lerp_tensor(a, b, c) \
  (fabs(c) < (COMP)0.5 ? (a) + (c) * ((b) - (a)) : (b) - ((b) - (a)) * ((COMP)1 - (c)))
#define EWOP_atan2(a, b, c) atan2(a, b)
#define EWOP_hypot(a, b, c) hypot(a, b)
#define EWOP_copysign(a, b, c) copysign(a, b)
#define EWOP_nextafter(a, b, c) ew_nextafter(a, b)
#define EWOP_xlogy(a, b, c) (OCL_ISNAN(b) ? (COMP)NAN : ((a) == 0 ? (COMP)0 : (a) * log(b)))
#define EWOP_xlog1py(a, b, c) (OCL_ISNAN(b) ? (COMP)NAN : ((a) == 0 ? (COMP)0 : (a) * log1p(b)))
#define EWOP_logaddexp(a, b, c) ew_logaddexp(a, b)
#define EWOP_logaddexp2(a, b, c) ew_logaddexp2(a, b)
#define EWOP_zeta(a, b, c) ew_zeta(a, b)
#define EWOP_erf(a, b, c) erf(a)
#define EWOP_erfc(a, b, c) erfc(a)
#define EWOP_erfinv(a, b, c) ew_erfinv(a)
#define EWOP_expm1(a, b, c) expm1(a)
#define EWOP_log1p(a, b, c) log1p(a)
#define EWOP_log2(a, b, c) log2(a)
#define EWOP_log10(a, b, c) log10(a)
#define EWOP_exp2(a, b, c) exp2(a)
#define EWOP_lgamma(a, b, c) lgamma(a)
#define EWOP_digamma(a, b, c) ew_digamma(a)
#define EWOP_polygamma(a, b, c) ew_polygamma(a, p0)
#define EWOP_tan(a, b, c) tan(a)
#define EWOP_asin(a, b, c) asin(a)
#define EWOP_acos(a, b, c) acos(a)
#define EWOP_atan(a, b, c) atan(a)
#define EWOP_sinh(a, b, c) sinh(a)
#define EWOP_cosh(a, b, c) cosh(a)
#define EWOP_asinh(a, b, c) asinh(a)
#define EWOP_acosh(a, b, c) acosh(a)
#define EWOP_atanh(a, b, c) atanh(a)
#define EWOP_sinc(a, b, c) ew_sinc(a)
#define EWOP_frac(a, b, c) ((a) - trunc(a))
#define EWOP_logit(a, b, c) ew_logit(a, p0)
#define EWOP_logit_backward(a, b, c) ew_logit_backward(a, b, p0)
#define EWOP_chebyshev_t(a, b, c) ew_chebyshev(a, b, 0, false)
#define EWOP_chebyshev_u(a, b, c) ew_chebyshev(a, b, 1, false)
#define EWOP_chebyshev_v(a, b, c) ew_chebyshev(a, b, 2, false)
#define EWOP_chebyshev_w(a, b, c) ew_chebyshev(a, b, 3, false)
#define EWOP_shifted_chebyshev_t(a, b, c) ew_chebyshev(a, b, 0, true)
#define EWOP_shifted_chebyshev_u(a, b, c) ew_chebyshev(a, b, 1, true)
#define EWOP_shifted_chebyshev_v(a, b, c) ew_chebyshev(a, b, 2, true)
#define EWOP_shifted_chebyshev_w(a, b, c) ew_chebyshev(a, b, 3, true)
#define EWOP_hermite_h(a, b, c) ew_hermite(a, b, false)
#define EWOP_hermite_he(a, b, c) ew_hermite(a, b, true)
#define EWOP_laguerre_l(a, b, c) ew_laguerre(a, b)
#define EWOP_legendre_p(a, b, c) ew_legendre(a, b)
#define EWOP_i0(a, b, c) ew_bessel_i(a, 0, false)
#define EWOP_modified_bessel_i0(a, b, c) ew_bessel_i(a, 0, false)
#define EWOP_modified_bessel_i1(a, b, c) ew_bessel_i(a, 1, false)
#define EWOP_spherical_bessel_j0(a, b, c) ew_spherical_bessel_j0(a)
#define EWOP_i0e(a, b, c) ew_bessel_i(a, 0, true)
#define EWOP_i1(a, b, c) ew_bessel_i(a, 1, false)
#define EWOP_i1e(a, b, c) ew_bessel_i(a, 1, true)
#define EWOP_entr(a, b, c) \
  (OCL_ISNAN(a) ? (a) : ((a) > 0 ? -(a) * log(a) : ((a) == 0 ? (COMP)0 : -(COMP)INFINITY)))
#define EWOP_erfcx(a, b, c) ew_erfcx(a)
#define EWOP_log_ndtr(a, b, c) ew_log_ndtr(a)
#define EWOP_ndtri(a, b, c) ew_ndtri(a)
#define EWOP_frexp_mantissa(a, b, c) ew_frexp(a, false)
#define EWOP_frexp_exponent(a, b, c) ew_frexp(a, true)
// angle of a real number: pi for negatives, 0 otherwise, NaN kept.
#define EWOP_angle(a, b, c) (OCL_ISNAN(a) ? (a) : ((a) < 0 ? EW_PI : (COMP)0))
#define EWOP_bessel_j0(a, b, c) ((COMP)ew_bessel_j((ew_wide)(a), 0))
#define EWOP_bessel_j1(a, b, c) ((COMP)ew_bessel_j((ew_wide)(a), 1))
#define EWOP_bessel_y0(a, b, c) ((COMP)ew_bessel_y((ew_wide)(a), 0))
#define EWOP_bessel_y1(a, b, c) ((COMP)ew_bessel_y((ew_wide)(a), 1))
#define EWOP_modified_bessel_k0(a, b, c) ((COMP)ew_bessel_k((ew_wide)(a), 0, false))
#define EWOP_modified_bessel_k1(a, b, c) ((COMP)ew_bessel_k((ew_wide)(a), 1, false))
#define EWOP_scaled_modified_bessel_k0(a, b, c) ((COMP)ew_bessel_k((ew_wide)(a), 0, true))
#define EWOP_scaled_modified_bessel_k1(a, b, c) ((COMP)ew_bessel_k((ew_wide)(a), 1, true))
#define EWOP_airy_ai(a, b, c) ((COMP)ew_airy_ai((ew_wide)(a)))
#define EWOP_igamma(a, b, c) ((COMP)ew_igamma((ew_wide)(a), (ew_wide)(b), false))
#define EWOP_igammac(a, b, c) ((COMP)ew_igamma((ew_wide)(a), (ew_wide)(b), true))
#define EWOP_isposinf(a, b, c) ((a) == (COMP)INFINITY)
#define EWOP_isneginf(a, b, c) ((a) == -(COMP)INFINITY)
#define EWOP_nan_to_num(a, b, c) \
  (OCL_ISNAN(a) ? p0 : (OCL_ISINF(a) ? ((a) > 0 ? p1 : p2) : (a)))
// round(x, decimals): p0 = 10^|decimals|, p1 = 1 when decimals < 0.
#define EWOP_round_decimals(a, b, c) \
  ((p1) != 0 ? rint((a) / (p0)) * (p0) : rint((a) * (p0)) / (p0))
// Activations (a: the input, or the gradient then the input for *_backward unless noted).
#define EWOP_gelu(a, b, c) ((a) * (COMP)0.5 * ((COMP)1 + erf((a) * EW_SQRT1_2)))
#define EWOP_gelu_tanh(a, b, c) ew_gelu_tanh(a)
#define EWOP_gelu_backward(a, b, c) ew_gelu_backward(a, b)
#define EWOP_gelu_tanh_backward(a, b, c) ew_gelu_tanh_backward(a, b)
#define EWOP_silu(a, b, c) ((a) / ((COMP)1 + exp(-(a))))
#define EWOP_silu_backward(a, b, c) ew_silu_backward(a, b)
#define EWOP_mish(a, b, c) ((a) * ew_tanh(log1p(exp(a))))
#define EWOP_mish_backward(a, b, c) ew_mish_backward(a, b)
#define EWOP_hardswish(a, b, c) ((a) * ew_relu6_shift3(a) / (COMP)6)
#define EWOP_hardswish_backward(a, b, c) ew_hardswish_backward(a, b)
// hardsigmoid's gradient multiplies by 1/6 rounded to float in every dtype, as CPU and CUDA torch
// do (`one_sixth(1.0f / 6.0f)`): float64 gradients match theirs, not a 3e-8 closer 1/6. (The
// CPU's forward divides by 6 on its vectorised path, which the forward here does too.)
#define EWOP_hardsigmoid(a, b, c) (ew_relu6_shift3(a) / (COMP)6)
#define EWOP_hardsigmoid_backward(a, b, c) \
  ((b) > (COMP)-3 && (b) < (COMP)3 ? (a) * (COMP)(1.0f / 6.0f) : (COMP)0)
// leaky_relu_backward: a is the input (or the result), b the gradient; p0 the slope.
#define EWOP_leaky_relu(a, b, c) ((a) > 0 ? (a) : (a) * p0)
#define EWOP_leaky_relu_backward(a, b, c) ((a) > 0 ? (b) : (b) * p0)
// elu: p0 alpha, p1 scale, p2 input_scale; the _result form takes the forward's result.
#define EWOP_elu(a, b, c) ((a) <= 0 ? (exp((a) * p2) - (COMP)1) * (p0 * p1) : (a) * p1)
#define EWOP_elu_backward(a, b, c) ((b) <= 0 ? (a) * p2 * (p0 * p1) * exp((b) * p2) : (a) * p1)
#define EWOP_elu_backward_result(a, b, c) ((b) <= 0 ? (a) * p2 * ((b) + p0 * p1) : (a) * p1)
// softplus: p0 beta, p1 threshold.
#define EWOP_softplus(a, b, c) ((a) * p0 > p1 ? (a) : log1p(exp((a) * p0)) / p0)
#define EWOP_softplus_backward(a, b, c) ew_softplus_backward(a, b, p0, p1)
// hardtanh_backward: p0 min, p1 max.
#define EWOP_hardtanh_backward(a, b, c) ((b) > p0 && (b) < p1 ? (a) : (COMP)0)
#define EWOP_hardshrink(a, b, c) ((a) >= -p0 && (a) <= p0 ? (COMP)0 : (a))
#define EWOP_softshrink(a, b, c) \
  ((a) > p0 ? (a) - p0 : ((a) < -p0 ? (a) + p0 : (OCL_ISNAN(a) ? (a) : (COMP)0)))
#define EWOP_shrink_backward(a, b, c) ((b) < -p0 || (b) > p0 ? (a) : (COMP)0)
// glu: a the first half, b the second.
#define EWOP_glu(a, b, c) ((a) * ((COMP)1 / ((COMP)1 + exp(-(b)))))
// glu_backward (second half of the gradient): a = sigmoid(second half), b the first half, c the
// gradient.
#define EWOP_glu_backward(a, b, c) (((COMP)1 - (a)) * (a) * (b) * (c))
// prelu: a the input, b the weight (c the gradient for the backward ops).
#define EWOP_prelu(a, b, c) ((a) > 0 ? (a) : (b) * (a))
#define EWOP_prelu_backward_input(a, b, c) ((a) > 0 ? (c) : (b) * (c))
#define EWOP_prelu_backward_weight(a, b, c) ((a) > 0 ? (COMP)0 : (a) * (c))
// log_sigmoid_backward: a the input, b the gradient.
#define EWOP_log_sigmoid(a, b, c) (((a) < 0 ? (a) : (COMP)0) - log1p(exp(-fabs(a))))
#define EWOP_log_sigmoid_backward(a, b, c) ew_log_sigmoid_backward(a, b)
// Losses: a the input, b the target, c the gradient; p0 the norm (1/numel for a mean) for the
// backward ops, p1 or p0 the loss' beta/delta.
#define EWOP_mse(a, b, c) (((a) - (b)) * ((a) - (b)))
#define EWOP_mse_backward(a, b, c) (p0 * ((a) - (b)) * (c))
#define EWOP_smooth_l1(a, b, c) \
  (fabs((a) - (b)) < p0 ? (COMP)0.5 * fabs((a) - (b)) * fabs((a) - (b)) / p0 \
                        : fabs((a) - (b)) - (COMP)0.5 * p0)
#define EWOP_smooth_l1_backward(a, b, c) ew_smooth_l1_backward(a, b, c, p0, p1)
#define EWOP_huber(a, b, c) \
  (fabs((a) - (b)) < p0 ? (COMP)0.5 * fabs((a) - (b)) * fabs((a) - (b)) \
                        : p0 * (fabs((a) - (b)) - (COMP)0.5 * p0))
#define EWOP_huber_backward(a, b, c) ew_huber_backward(a, b, c, p0, p1)
// binary_cross_entropy: a the input (checked to be in [0, 1] by the host's glue), b the target;
// the logs clamped at -100. Its gradient: a the gradient, b the input, c the target, the
// denominator at least 1e-12 (in the dtype, as the CPU: 0 for half).
#define EWOP_bce(a, b, c) \
  (((b) - (COMP)1) * fmax(log((COMP)1 - (a)), (COMP)-100) - (b) * fmax(log(a), (COMP)-100))
#define EWOP_bce_backward(a, b, c) \
  ((a) * ((b) - (c)) / fmax(((COMP)1 - (b)) * (b), R(EWK(1e-12))))

// polar(abs, angle) and complex(real, imag): real operands, a complex result (RES).
#define EWOP_polar(a, b, c) ((RES)((a) * cos(b), (a) * sin(b)))
#define EWOP_complex(a, b, c) ((RES)((a), (b)))
#endif  // COMP_COMPLEX

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
#define LOAD_IN0(off) CVT(COMP_T, IN0_T, LOAD(IN0_T, in0, off))
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
#define LOAD_B(o1) CVT(COMP_T, IN1_T, LOAD(IN1_T, in1, in1_off + (o1)))
#endif
#else
#define LOAD_B(o1) 0
#endif
#if NIN > 2
#ifdef IN2_SCALAR
#define LOAD_C(o2) in2_val
#else
#define LOAD_C(o2) CVT(COMP_T, IN2_T, LOAD(IN2_T, in2, in2_off + (o2)))
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
    STORE(OUT_T, out, out_off + (o), CVT(OUT_T, RES_T, OP(a, b, c))); \
  } while (0)

// EW_VEC (contiguous case, float operands and result, CHUNK a multiple of 8; the host sets it for
// ops flagged kVec on CPU devices): a whole chunk is computed 8 lanes at a time with the vector
// forms of the built-ins. PoCL calls the scalar exp, erf, sqrt, ... out of line, which keeps a
// loop scalar: exp over 1M floats took 3.9 ms element by element and 0.5 ms as float8.
#if NIN > 0 && defined(IN0_SCALAR)
#define VLOAD_A(i) ((float8)in0_val)
#elif NIN > 0
#define VLOAD_A(i) vload8(0, in0 + in0_off + (i))
#else
#define VLOAD_A(i) ((float8)0)
#endif
#if NIN > 1 && defined(IN1_SCALAR)
#define VLOAD_B(i) ((float8)in1_val)
#elif NIN > 1
#define VLOAD_B(i) vload8(0, in1 + in1_off + (i))
#else
#define VLOAD_B(i) ((float8)0)
#endif

// CHUNK: consecutive elements per work-item (strided case: in the iterator's order). 1 suits
// GPUs (neighbouring work-items touch neighbouring elements); CPU devices run a work-item's loop as
// vector code and pay for index divisions per work-item, so the host passes a larger chunk there.
#ifndef CHUNK
#define CHUNK 1
#endif

__kernel void elementwise(ulong n, __global STORE_TYPE(OUT_T)* out, ulong out_off P0 P1 P2, COMP p0,
                          COMP p1, COMP p2 STRIDE_PARAMS ERR_PARAMS) {
#if NDIM == 0
  const idx_t base = (idx_t)get_global_id(0) * CHUNK;
  if (base + CHUNK <= (idx_t)n) {
#ifdef EW_VEC
    for (int j = 0; j < CHUNK; j += 8) {
      const float8 a = VLOAD_A(base + j), b = VLOAD_B(base + j), c = (float8)0;
      vstore8(OP(a, b, c), 0, out + out_off + base + j);
    }
#else
    for (int j = 0; j < CHUNK; ++j) EW_AT(base + j, base + j, base + j, base + j);
#endif
  } else {
    for (idx_t i = base; i < (idx_t)n; ++i) EW_AT(i, i, i, i);
  }
#else
  // Strided: a work-item takes CHUNK consecutive elements in the iterator's order (dim 0
  // fastest). It splits its first index with divisions, then steps its coordinates like an
  // odometer, carrying into the next dim when one wraps: no division per element, whatever the
  // length of the rows.
  const idx_t base = (idx_t)get_global_id(0) * CHUNK;
  if (base >= (idx_t)n) return;
  const idx_t sz[8] = {sizes.s0, sizes.s1, sizes.s2, sizes.s3,
                       sizes.s4, sizes.s5, sizes.s6, sizes.s7};
  const idx_t so[8] = {sto.s0, sto.s1, sto.s2, sto.s3, sto.s4, sto.s5, sto.s6, sto.s7};
#define STRIDE_ARRAY(k)                                             \
  const idx_t s_in##k[8] = {st##k.s0, st##k.s1, st##k.s2, st##k.s3, \
                            st##k.s4, st##k.s5, st##k.s6, st##k.s7};
#define ADD_IN(k, c, d) o##k += (c)*s_in##k[d];
#if NIN > 0 && !defined(IN0_SCALAR)
  STRIDE_ARRAY(0)
#define ADD0(c, d) ADD_IN(0, c, d)
#else
#define ADD0(c, d)
#endif
#if NIN > 1 && !defined(IN1_SCALAR)
  STRIDE_ARRAY(1)
#define ADD1(c, d) ADD_IN(1, c, d)
#else
#define ADD1(c, d)
#endif
#if NIN > 2 && !defined(IN2_SCALAR)
  STRIDE_ARRAY(2)
#define ADD2(c, d) ADD_IN(2, c, d)
#else
#define ADD2(c, d)
#endif
#define ADD_ALL(c, d) \
  o += (c)*so[d];     \
  ADD0(c, d) ADD1(c, d) ADD2(c, d)
  idx_t cc[NDIM];
  idx_t rem = base, o = 0, o0 = 0, o1 = 0, o2 = 0;
  // The quotient and remainder are computed as q = rem / s, c = rem - q * s: with a `%` next to
  // the `/`, LLVM pairs them and inserts a `freeze`, which Oclgrind's uninitialised-value checker
  // cannot execute.
#pragma unroll
  for (int d = 0; d < NDIM; ++d) {
    const idx_t q = d == NDIM - 1 ? 0 : rem / sz[d];
    const idx_t c = rem - q * sz[d];
    rem = q;
    cc[d] = c;
    ADD_ALL(c, d)
  }
  const idx_t end = base + min((idx_t)CHUNK, (idx_t)n - base);  // no overflow past n
  for (idx_t i = base;;) {
    // The rest of the current row (a tight loop along dim 0), then one carry.
    const idx_t run = min(end - i, sz[0] - cc[0]);
    for (idx_t j = 0; j < run; ++j) {
      EW_AT(o, o0, o1, o2);
      ADD_ALL(1, 0)
    }
    i += run;
    if (i >= end) break;
    cc[0] = 0;
    ADD_ALL(-sz[0], 0)
#pragma unroll
    for (int d = 1; d < NDIM; ++d) {
      ++cc[d];
      ADD_ALL(1, d)
      if (cc[d] < sz[d] || d == NDIM - 1) break;
      cc[d] = 0;
      ADD_ALL(-sz[d], d)
    }
  }
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
