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
//               (float for half/bfloat16) as the CPU does, not the compute type.
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
  kAll,       // every real dtype and bool
  kNoBool,    // every real dtype but bool
  kIntegral,  // integers and bool (bitwise ops)
  kFloating,  // floating dtypes only (the op's meta function promotes integers to float)
};

enum EwFlags : uint8_t {
  kNoFlags = 0,
  kBatch = 1,
  kZeroDivisor = 2,
  kOpmathParams = 4,
};

// clang-format off
#define TORCH_OCL_ELEMENTWISE_OPS(X)                                          \
  /* arithmetic */                                                            \
  X(add,               kAll,      "add_cpu",               kBatch)           \
  X(mul,               kAll,      "mul_cpu",               kBatch)           \
  X(div_true,          kAll,      "div_true_cpu",          kBatch)           \
  X(div_trunc,         kNoBool,   "div_trunc_cpu",         kZeroDivisor)     \
  X(div_floor,         kNoBool,   "div_floor_cpu",         kZeroDivisor)     \
  X(maximum,           kAll,      "maximum_cpu",           kBatch)           \
  X(minimum,           kAll,      "minimum_cpu",           kBatch)           \
  X(bitwise_and,       kIntegral, "bitwise_and_cpu",       kNoFlags)         \
  X(bitwise_or,        kIntegral, "bitwise_or_cpu",        kNoFlags)         \
  X(bitwise_xor,       kIntegral, "bitwise_xor_cpu",       kNoFlags)         \
  /* comparisons and logic (bool result, computed in the inputs' dtype) */   \
  X(eq,                kAll,      "eq_cpu",                kNoFlags)         \
  X(ne,                kAll,      "ne_cpu",                kNoFlags)         \
  X(lt,                kAll,      "lt_cpu",                kNoFlags)         \
  X(le,                kAll,      "le_cpu",                kNoFlags)         \
  X(gt,                kAll,      "gt_cpu",                kNoFlags)         \
  X(ge,                kAll,      "ge_cpu",                kNoFlags)         \
  X(logical_not,       kAll,      "logical_not_cpu",       kNoFlags)         \
  X(logical_and,       kAll,      "logical_and_cpu",       kNoFlags)         \
  X(logical_or,        kAll,      "logical_or_cpu",        kNoFlags)         \
  X(logical_xor,       kAll,      "logical_xor_cpu",       kNoFlags)         \
  /* unary */                                                                 \
  X(neg,               kNoBool,   "neg_cpu",               kBatch)           \
  X(abs,               kNoBool,   "abs_cpu",               kBatch)           \
  X(sign,              kAll,      "sign_cpu",              kBatch)           \
  X(ceil,              kNoBool,   "ceil_vml_cpu",          kBatch)           \
  X(floor,             kNoBool,   "floor_vml_cpu",         kBatch)           \
  X(round,             kNoBool,   "round_vml_cpu",         kBatch)           \
  X(trunc,             kNoBool,   "trunc_vml_cpu",         kBatch)           \
  X(exp,               kFloating, "exp_vml_cpu",           kBatch)           \
  X(log,               kFloating, "log_vml_cpu",           kBatch)           \
  X(sqrt,              kFloating, "sqrt_vml_cpu",          kBatch)           \
  X(rsqrt,             kFloating, "rsqrt_cpu",             kBatch)           \
  X(sigmoid,           kFloating, "sigmoid_cpu",           kBatch)           \
  X(tanh,              kFloating, "tanh_vml_cpu",          kBatch)           \
  X(sin,               kFloating, "sin_vml_cpu",           kBatch)           \
  X(cos,               kFloating, "cos_vml_cpu",           kBatch)           \
  X(reciprocal,        kFloating, "reciprocal_cpu",        kBatch)           \
  /* clamp with scalar bounds p0 (min), p1 (max) */                          \
  X(clamp,             kNoBool,   "clamp_scalar_cpu",      kBatch)           \
  X(clamp_min,         kNoBool,   "clamp_min_scalar_cpu",  kBatch)           \
  X(clamp_max,         kNoBool,   "clamp_max_scalar_cpu",  kBatch)           \
  /* three operands and parameters */                                        \
  X(addcmul,           kNoBool,   "addcmul_cpu_out",       kOpmathParams)    \
  X(addcdiv,           kNoBool,   "addcdiv_cpu_out",       kOpmathParams)    \
  X(lerp,              kFloating, "lerp_kernel_scalar",    kOpmathParams)    \
  /* gradients */                                                             \
  X(threshold,         kNoBool,   "threshold_cpu",         kBatch | kOpmathParams) \
  X(sigmoid_backward,  kFloating, "sigmoid_backward_cpu",  kBatch)           \
  X(tanh_backward,     kFloating, "tanh_backward_cpu",     kBatch)           \
  /* moving and selecting elements (own glue: Copy.cpp, Fill.cpp, Compare.cpp) */ \
  X(copy,              kAll,      "copy_",                 kNoFlags)         \
  X(fill,              kAll,      "fill_",                 kNoFlags)         \
  X(where,             kAll,      "where_cpu",             kNoFlags)
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
