// The elementwise op table: every op the elementwise kernels (kernels/elementwise.cl) compute.
//
// One line per op: X(name, dtypes, cpu_kernel, flags)
//   name        the op's identity (EwId::name) and its kernel expression EWOP_<name>(a, b, c)
//               in kernels/elementwise.cl (a, b, c: the operands in the compute type; p0, p1, p2:
//               the op's scalar parameters).
//   dtypes      the compute dtypes the CPU's kernel accepts (EwDtypes); others raise the CPU's
//               error: `"<cpu_kernel>" not implemented for '<dtype>'` (NotImplementedError).
//   cpu_kernel  the CPU kernel's name in that message.
//   flags       EwFlags: kBatch - tiny calls may run in the stream's batch kernel (float, half,
//               bfloat16; one or two operands); kZeroDivisor - integer division: a zero divisor
//               is found by the kernel and raised at the next wait as ZeroDivisionError;
//               kOpmathParams - the scalar parameters are range-checked against the opmath type
//               (float for half/bfloat16) as the CPU does, not the compute type; kVec - the
//               kernel expression is valid for float8 operands too (arithmetic and built-ins, no
//               compares or helper functions): contiguous float32 calls on CPU devices then run
//               8 lanes at a time (kernels/elementwise.cl, EW_VEC); kCplx - the op also takes
//               complex compute dtypes (complex64, complex128): kernels/elementwise.cl defines
//               its complex form under COMP_COMPLEX, with a complex result; kCplxReal - the same,
//               with a real result (comparisons: bool); kToCplx - real operands, complex result
//               (polar, complex). Complex dtypes reach no other op (NotImplementedError).
//
// How an op reaches its kernel is registered in ops/ElementwiseOps.cpp: the DispatchStub that
// ATen's CPU implementation calls (REGISTER_PRIVATEUSE1_DISPATCH), with ATen's structured
// implementation registered for the op, so shape checks, type promotion, out= and in-place
// handling and the CPU's error messages all come from ATen. Ops no stub reaches (copy, fill,
// where, masked_fill) are launched by their own glue with launch_elementwise.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>

namespace torch_ocl {

enum class EwDtypes : uint8_t {
  kAll,          // every real dtype and bool
  kNoBool,       // every real dtype but bool
  kIntegral,     // integers and bool (bitwise ops)
  kFloating,     // floating dtypes only (the op's meta function promotes integers to float)
  kInteger,      // integers without bool (shifts, gcd)
  kFloatDouble,  // float32 and float64 only (the CPU's special functions such as zeta)
};

enum EwFlags : uint8_t {
  kNoFlags = 0,
  kBatch = 1,
  kZeroDivisor = 2,
  kOpmathParams = 4,
  kVec = 8,
  kCplx = 16,
  kCplxReal = 32,
  kToCplx = 64,
};

// clang-format off
#define TORCH_OCL_ELEMENTWISE_OPS(X)                                          \
  /* arithmetic */                                                            \
  X(add,               kAll,      "add_cpu",               kBatch | kCplx)           \
  X(mul,               kAll,      "mul_cpu",               kBatch | kCplx)           \
  X(div_true,          kAll,      "div_true_cpu",          kBatch | kCplx)           \
  X(div_trunc,         kNoBool,   "div_trunc_cpu",         kZeroDivisor)     \
  X(div_floor,         kNoBool,   "div_floor_cpu",         kZeroDivisor)     \
  X(maximum,           kAll,      "maximum_cpu",           kBatch)           \
  X(minimum,           kAll,      "minimum_cpu",           kBatch)           \
  X(bitwise_and,       kIntegral, "bitwise_and_cpu",       kNoFlags)         \
  X(bitwise_or,        kIntegral, "bitwise_or_cpu",        kNoFlags)         \
  X(bitwise_xor,       kIntegral, "bitwise_xor_cpu",       kNoFlags)         \
  /* comparisons and logic (bool result, computed in the inputs' dtype) */   \
  X(eq,                kAll,      "eq_cpu",                kCplxReal)         \
  X(ne,                kAll,      "ne_cpu",                kCplxReal)         \
  X(lt,                kAll,      "lt_cpu",                kNoFlags)         \
  X(le,                kAll,      "le_cpu",                kNoFlags)         \
  X(gt,                kAll,      "gt_cpu",                kNoFlags)         \
  X(ge,                kAll,      "ge_cpu",                kNoFlags)         \
  X(logical_not,       kAll,      "logical_not_cpu",       kCplxReal)        \
  X(logical_and,       kAll,      "logical_and_cpu",       kCplxReal)        \
  X(logical_or,        kAll,      "logical_or_cpu",        kCplxReal)        \
  X(logical_xor,       kAll,      "logical_xor_cpu",       kCplxReal)        \
  /* unary */                                                                 \
  X(neg,               kNoBool,   "neg_cpu",               kBatch | kCplx)           \
  X(abs,               kNoBool,   "abs_cpu",               kBatch | kCplx)           \
  X(sign,              kAll,      "sign_cpu",              kBatch)           \
  X(ceil,              kFloating, "ceil_vml_cpu",          kBatch)           \
  X(floor,             kFloating, "floor_vml_cpu",         kBatch)           \
  X(round,             kFloating, "round_vml_cpu",         kBatch)           \
  X(trunc,             kFloating, "trunc_vml_cpu",         kBatch)           \
  X(exp,               kFloating, "exp_vml_cpu",           kBatch | kVec | kCplx)    \
  X(log,               kFloating, "log_vml_cpu",           kBatch | kVec | kCplx)    \
  X(sqrt,              kFloating, "sqrt_vml_cpu",          kBatch | kVec | kCplx)    \
  X(rsqrt,             kFloating, "rsqrt_cpu",             kBatch | kVec | kCplx)    \
  X(sigmoid,           kFloating, "sigmoid_cpu",           kBatch | kVec | kCplx)    \
  X(tanh,              kFloating, "tanh_vml_cpu",          kBatch | kCplx)           \
  X(sin,               kFloating, "sin_vml_cpu",           kBatch | kVec | kCplx)    \
  X(cos,               kFloating, "cos_vml_cpu",           kBatch | kVec | kCplx)    \
  X(reciprocal,        kFloating, "reciprocal_cpu",        kBatch | kVec | kCplx)    \
  /* clamp with scalar bounds p0 (min), p1 (max) */                          \
  X(clamp,             kNoBool,   "clamp_scalar_cpu",      kBatch)           \
  X(clamp_min,         kNoBool,   "clamp_min_scalar_cpu",  kBatch)           \
  X(clamp_max,         kNoBool,   "clamp_max_scalar_cpu",  kBatch)           \
  /* three operands and parameters */                                        \
  X(addcmul,           kNoBool,   "addcmul_cpu_out",       kOpmathParams | kCplx)    \
  X(addcdiv,           kNoBool,   "addcdiv_cpu_out",       kOpmathParams | kCplx)    \
  X(lerp,              kFloating, "lerp_kernel_scalar",    kOpmathParams | kCplx) \
  /* gradients */                                                             \
  X(threshold,         kNoBool,   "threshold_cpu",         kBatch | kOpmathParams) \
  X(sigmoid_backward,  kFloating, "sigmoid_backward_cpu",  kBatch)           \
  X(tanh_backward,     kFloating, "tanh_backward_cpu",     kBatch)           \
  /* more arithmetic */                                                       \
  X(pow,               kNoBool,   "pow",                   kCplx)         \
  X(pow_scalar,        kNoBool,   "pow",                   kBatch | kCplx)           \
  X(fmod,              kNoBool,   "fmod_cpu",              kZeroDivisor)     \
  X(remainder,         kNoBool,   "remainder_cpu",         kZeroDivisor)     \
  X(fmax,              kAll,      "fmax_cpu",              kNoFlags)         \
  X(fmin,              kAll,      "fmin_cpu",              kNoFlags)         \
  X(heaviside,         kAll,      "heaviside_cpu",         kNoFlags)         \
  X(gcd,               kInteger,  "gcd_cpu",               kNoFlags)         \
  X(lcm,               kInteger,  "lcm_cpu",               kNoFlags)         \
  X(bitwise_not,       kIntegral, "bitwise_not_cpu",       kNoFlags)         \
  X(lshift,            kInteger,  "lshift_cpu",            kNoFlags)         \
  X(rshift,            kInteger,  "rshift_cpu",            kNoFlags)         \
  X(clamp_tensor,      kNoBool,   "clamp_cpu",             kNoFlags)         \
  X(lerp_tensor,       kFloating, "lerp_kernel_tensor",    kCplx)            \
  X(signbit,           kAll,      "signbit_cpu",           kNoFlags)         \
  X(isposinf,          kFloating, "isposinf_cpu",          kNoFlags)         \
  X(isneginf,          kFloating, "isneginf_cpu",          kNoFlags)         \
  /* nan_to_num: p0 the NaN replacement, p1 +inf's, p2 -inf's */           \
  X(nan_to_num,        kFloating, "nan_to_num",            kNoFlags)         \
  /* round(x, decimals): p0 10^|decimals|, p1 decimals < 0 */               \
  X(round_decimals,    kFloating, "round_cpu",             kNoFlags)         \
  X(frac,              kFloating, "frac_cpu",              kNoFlags)         \
  /* floating math (integer inputs are promoted to float by the meta functions) */ \
  X(atan2,             kFloating, "atan2_cpu",             kNoFlags)         \
  X(hypot,             kFloating, "hypot_cpu",             kNoFlags)         \
  X(copysign,          kFloating, "copysign_cpu",          kNoFlags)         \
  X(nextafter,         kFloating, "nextafter_cpu",         kNoFlags)         \
  X(xlogy,             kFloating, "xlogy_cpu",             kNoFlags)         \
  X(xlog1py,           kFloating, "xlog1py_cpu",           kNoFlags)         \
  X(logaddexp,         kFloating, "logaddexp_cpu",         kCplx)            \
  X(logaddexp2,        kFloating, "logaddexp2_cpu",        kNoFlags)         \
  X(zeta,              kFloatDouble, "zeta_cpu",           kNoFlags)         \
  X(chebyshev_t,       kFloatDouble, "chebyshev_polynomial_t_cpu", kNoFlags) \
  X(chebyshev_u,       kFloatDouble, "chebyshev_polynomial_u_cpu", kNoFlags) \
  X(chebyshev_v,       kFloatDouble, "chebyshev_polynomial_v_cpu", kNoFlags) \
  X(chebyshev_w,       kFloatDouble, "chebyshev_polynomial_w_cpu", kNoFlags) \
  X(shifted_chebyshev_t, kFloatDouble, "shifted_chebyshev_polynomial_t_cpu", kNoFlags) \
  X(shifted_chebyshev_u, kFloatDouble, "shifted_chebyshev_polynomial_u_cpu", kNoFlags) \
  X(shifted_chebyshev_v, kFloatDouble, "shifted_chebyshev_polynomial_v_cpu", kNoFlags) \
  X(shifted_chebyshev_w, kFloatDouble, "shifted_chebyshev_polynomial_w_cpu", kNoFlags) \
  X(hermite_h,         kFloatDouble, "hermite_polynomial_h_cpu", kNoFlags) \
  X(hermite_he,        kFloatDouble, "hermite_polynomial_he_cpu", kNoFlags) \
  X(laguerre_l,        kFloatDouble, "laguerre_polynomial_l_cpu", kNoFlags) \
  X(legendre_p,        kFloatDouble, "legendre_polynomial_p_cpu", kNoFlags) \
  X(erf,               kFloating, "erf_cpu",               kBatch | kVec)    \
  X(erfc,              kFloating, "erfc_cpu",              kVec)             \
  X(erfinv,            kFloating, "erfinv_cpu",            kNoFlags)         \
  X(expm1,             kFloating, "expm1_cpu",             kVec | kCplx)     \
  X(log1p,             kFloating, "log1p_cpu",             kVec | kCplx)     \
  X(log2,              kFloating, "log2_cpu",              kVec | kCplx)             \
  X(log10,             kFloating, "log10_cpu",             kVec | kCplx)             \
  X(exp2,              kFloating, "exp2_cpu",              kVec | kCplx)     \
  X(lgamma,            kFloating, "lgamma_cpu",            kNoFlags)         \
  X(digamma,           kFloating, "digamma",               kNoFlags)         \
  X(polygamma,         kFloating, "polygamma",             kNoFlags)         \
  X(tan,               kFloating, "tan_cpu",               kVec | kCplx)             \
  X(asin,              kFloating, "asin_cpu",              kVec | kCplx)     \
  X(acos,              kFloating, "acos_cpu",              kVec | kCplx)     \
  X(atan,              kFloating, "atan_cpu",              kVec | kCplx)     \
  X(sinh,              kFloating, "sinh_cpu",              kVec | kCplx)             \
  X(cosh,              kFloating, "cosh_cpu",              kVec | kCplx)             \
  X(asinh,             kFloating, "asinh_cpu",             kVec | kCplx)     \
  X(acosh,             kFloating, "acosh_cpu",             kVec | kCplx)     \
  X(atanh,             kFloating, "atanh_cpu",             kVec | kCplx)     \
  X(sinc,              kFloating, "sinc_cpu",              kCplx)            \
  X(i0,                kFloating, "i0_cpu",                kNoFlags)         \
  X(i0e,               kFloating, "i0e_cpu",               kNoFlags)         \
  X(i1,                kFloating, "i1_cpu",                kNoFlags)         \
  X(i1e,               kFloating, "i1e_cpu",               kNoFlags)         \
  X(entr,              kFloating, "entr_cpu",              kNoFlags)         \
  X(modified_bessel_i0, kFloatDouble, "modified_bessel_i0_cpu", kNoFlags)   \
  X(modified_bessel_i1, kFloatDouble, "modified_bessel_i1_cpu", kNoFlags)   \
  X(spherical_bessel_j0, kFloatDouble, "spherical_bessel_j0_cpu", kNoFlags) \
  X(igamma,            kFloating, "igamma_cpu",            kNoFlags)         \
  X(igammac,           kFloating, "igammac_cpu",           kNoFlags)         \
  X(airy_ai, kFloatDouble, "airy_ai_cpu", kNoFlags) \
  X(bessel_j0, kFloatDouble, "bessel_j0_cpu", kNoFlags) \
  X(bessel_j1, kFloatDouble, "bessel_j1_cpu", kNoFlags) \
  X(bessel_y0, kFloatDouble, "bessel_y0_cpu", kNoFlags) \
  X(bessel_y1, kFloatDouble, "bessel_y1_cpu", kNoFlags) \
  X(modified_bessel_k0, kFloatDouble, "modified_bessel_k0_cpu", kNoFlags) \
  X(modified_bessel_k1, kFloatDouble, "modified_bessel_k1_cpu", kNoFlags) \
  X(scaled_modified_bessel_k0, kFloatDouble, "scaled_modified_bessel_k0_cpu", kNoFlags) \
  X(scaled_modified_bessel_k1, kFloatDouble, "scaled_modified_bessel_k1_cpu", kNoFlags) \
  X(erfcx,             kFloatDouble, "erfcx_cpu",          kNoFlags)         \
  X(log_ndtr,          kFloatDouble, "log_ndtr_cpu",       kNoFlags)         \
  X(ndtri,             kFloatDouble, "ndtri_cpu",          kNoFlags)         \
  X(angle,             kFloating, "angle_cpu",             kCplx)            \
  /* complex only: sgn (z / |z|), conj_physical; polar and complex build complex values */ \
  X(sgn,               kFloating, "sgn_cpu",               kCplx)            \
  X(conj,              kAll,      "conj_cpu",              kCplx)            \
  X(polar,             kFloating, "polar_cpu",             kToCplx)          \
  X(complex,           kFloating, "complex_cpu",           kToCplx)          \
  /* frexp: two launches over the input, one per output */                  \
  X(frexp_mantissa,    kFloating, "frexp_cpu",             kNoFlags)         \
  X(frexp_exponent,    kFloating, "frexp_cpu",             kNoFlags)         \
  X(logit,             kFloating, "logit_cpu",             kNoFlags)         \
  X(logit_backward,    kFloating, "logit_backward_cpu",    kNoFlags)         \
  /* activations (p0.. their scalar arguments, in the stub's order) */      \
  X(gelu,              kFloating, "GeluKernelImpl",        kBatch | kOpmathParams | kVec) \
  X(gelu_tanh,         kFloating, "GeluKernelImpl",        kOpmathParams)    \
  X(gelu_backward,     kFloating, "GeluBackwardKernelImpl", kBatch | kOpmathParams) \
  X(gelu_tanh_backward, kFloating, "GeluBackwardKernelImpl", kOpmathParams)  \
  X(silu,              kFloating, "silu_cpu",              kBatch | kVec | kCplx) \
  X(silu_backward,     kFloating, "silu_backward_cpu",     kBatch)           \
  X(mish,              kFloating, "mish_cpu",              kNoFlags)         \
  X(mish_backward,     kFloating, "mish_backward_cpu",     kNoFlags)         \
  X(hardswish,         kFloating, "hardswish_cpu",         kNoFlags)         \
  X(hardswish_backward, kFloating, "hardswish_backward_cpu", kNoFlags)       \
  X(hardsigmoid,       kFloating, "hardsigmoid_cpu",       kNoFlags)         \
  X(hardsigmoid_backward, kFloating, "hardsigmoid_backward", kNoFlags)       \
  X(leaky_relu,        kFloating, "leaky_relu_cpu",        kBatch | kOpmathParams) \
  X(leaky_relu_backward, kFloating, "leaky_relu_backward_cpu", kBatch | kOpmathParams) \
  X(elu,               kFloating, "elu_cpu",               kOpmathParams)    \
  X(elu_backward,      kFloating, "elu_backward_cpu",      kOpmathParams)    \
  X(elu_backward_result, kFloating, "elu_backward_cpu",    kOpmathParams)    \
  X(softplus,          kFloating, "softplus_cpu",          kOpmathParams)    \
  X(softplus_backward, kFloating, "softplus_backward_cpu", kOpmathParams)    \
  X(hardtanh_backward, kFloating, "hardtanh_backward_cpu", kBatch | kOpmathParams) \
  X(hardshrink,        kFloating, "hardshrink_cpu",        kOpmathParams)    \
  X(softshrink,        kFloating, "softshrink_cpu",        kOpmathParams)    \
  X(shrink_backward,   kFloating, "shrink_backward_cpu",   kOpmathParams)    \
  X(glu,               kFloating, "glu_cpu",               kNoFlags)         \
  X(glu_backward,      kFloating, "glu_backward_cpu",      kNoFlags)         \
  X(prelu,             kFloating, "prelu_cpu",             kNoFlags)         \
  X(prelu_backward_input, kFloating, "prelu_backward_cpu", kNoFlags)         \
  X(prelu_backward_weight, kFloating, "prelu_backward_cpu", kNoFlags)        \
  X(log_sigmoid,       kFloating, "log_sigmoid_cpu",       kNoFlags)         \
  X(log_sigmoid_backward, kFloating, "log_sigmoid_backward_cpu", kNoFlags)   \
  /* losses (unreduced; ATen reduces) */                                     \
  X(mse,               kFloating, "mse_cpu",               kBatch)           \
  X(mse_backward,      kFloating, "mse_backward_cpu",      kOpmathParams)    \
  X(smooth_l1,         kFloating, "smooth_l1_cpu",         kOpmathParams)    \
  X(smooth_l1_backward, kFloating, "smooth_l1_backward_cpu", kOpmathParams)  \
  X(huber,             kFloating, "huber_cpu",             kOpmathParams)    \
  X(huber_backward,    kFloating, "huber_backward_cpu",    kOpmathParams)    \
  X(bce,               kFloating, "binary_cross_entropy",  kNoFlags)         \
  X(bce_backward,      kFloating, "binary_cross_entropy_backward", kNoFlags) \
  /* moving and selecting elements (own glue: Copy.cpp, Fill.cpp, Compare.cpp) */ \
  X(copy,              kAll,      "copy_",                 kCplx)         \
  X(fill,              kAll,      "fill_",                 kCplx)         \
  X(where,             kAll,      "where_cpu",             kCplx)
// clang-format on

enum class EwId : uint16_t {
#define TORCH_OCL_EW_ID(name, dtypes, cpu_kernel, flags) name,
  TORCH_OCL_ELEMENTWISE_OPS(TORCH_OCL_EW_ID)
#undef TORCH_OCL_EW_ID
      kCount
};

struct EwOp {
  EwId id;
  const char* name;
  EwDtypes dtypes;
  const char* cpu_kernel;
  uint8_t flags;
};

// The table's entry for an op.
const EwOp& ew_op(EwId id);

// Raises the CPU's "not implemented for" error if op does not take compute dtype t.
void check_ew_dtype(const EwOp& op, at::ScalarType t);

}  // namespace torch_ocl
