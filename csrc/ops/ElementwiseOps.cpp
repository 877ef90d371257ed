// The elementwise ops' registration: the table's entries (ops/ElementwiseOps.h), the
// DispatchStubs ATen's implementations call, and those implementations registered for our key.
//
// An op reaches its kernel through ATen's own structured implementation: its meta function
// builds the TensorIterator (shapes, broadcasting, type promotion, out= and in-place checks, the
// CPU's error messages), its impl calls a DispatchStub, and the stub runs our kernel. So every
// variant (functional, in-place, out=) of every overload comes from one table line and one stub
// line here; ops without a structured implementation register ATen's native function instead.
#include "ops/ElementwiseOps.h"

#include <ATen/native/Activation.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Lerp.h>
#include <ATen/native/PointwiseOps.h>
#include <ATen/native/TensorCompare.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/ops/abs_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/addcdiv_native.h>
#include <ATen/ops/addcmul_native.h>
#include <ATen/ops/bitwise_and_native.h>
#include <ATen/ops/bitwise_or_native.h>
#include <ATen/ops/bitwise_xor_native.h>
#include <ATen/ops/ceil_native.h>
#include <ATen/ops/clamp_max_native.h>
#include <ATen/ops/clamp_min_native.h>
#include <ATen/ops/clamp_native.h>
#include <ATen/ops/cos_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/eq_native.h>
#include <ATen/ops/exp_native.h>
#include <ATen/ops/floor_divide_native.h>
#include <ATen/ops/floor_native.h>
#include <ATen/ops/ge_native.h>
#include <ATen/ops/gt_native.h>
#include <ATen/ops/isnan_native.h>
#include <ATen/ops/le_native.h>
#include <ATen/ops/lerp_native.h>
#include <ATen/ops/log_native.h>
#include <ATen/ops/logical_and_native.h>
#include <ATen/ops/logical_not_native.h>
#include <ATen/ops/logical_or_native.h>
#include <ATen/ops/logical_xor_native.h>
#include <ATen/ops/lt_native.h>
#include <ATen/ops/maximum_native.h>
#include <ATen/ops/minimum_native.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/ne_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/reciprocal_native.h>
#include <ATen/ops/relu_native.h>
#include <ATen/ops/round_native.h>
#include <ATen/ops/rsqrt_native.h>
#include <ATen/ops/sgn_native.h>
#include <ATen/ops/sigmoid_backward_native.h>
#include <ATen/ops/sigmoid_native.h>
#include <ATen/ops/sign_native.h>
#include <ATen/ops/sin_native.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/sub_native.h>
#include <ATen/ops/tanh_backward_native.h>
#include <ATen/ops/tanh_native.h>
#include <ATen/ops/threshold_backward_native.h>
#include <ATen/ops/threshold_native.h>
#include <ATen/ops/trunc_native.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "ops/Elementwise.h"
#include "ops/Structured.h"

namespace torch_ocl {

namespace {

constexpr EwOp kOps[] = {
#define TORCH_OCL_EW_ENTRY(name, dtypes, cpu_kernel, flags) \
  {EwId::name, #name, EwDtypes::dtypes, cpu_kernel, flags},
    TORCH_OCL_ELEMENTWISE_OPS(TORCH_OCL_EW_ENTRY)
#undef TORCH_OCL_EW_ENTRY
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == static_cast<size_t>(EwId::kCount));

bool takes_dtype(EwDtypes dtypes, at::ScalarType t) {
  switch (dtypes) {
    case EwDtypes::kAll:
      return true;
    case EwDtypes::kNoBool:
      return t != at::kBool;
    case EwDtypes::kIntegral:
      return at::isIntegralType(t, /*includeBool=*/true);
    case EwDtypes::kFloating:
      return at::isFloatingType(t);
  }
  return false;
}

}  // namespace

const EwOp& ew_op(EwId id) { return kOps[static_cast<size_t>(id)]; }

void check_ew_dtype(const EwOp& op, at::ScalarType t) {
  TORCH_CHECK_NOT_IMPLEMENTED(takes_dtype(op.dtypes, t), "\"", op.cpu_kernel,
                              "\" not implemented for '", c10::toString(t), "'");
}

namespace {

// ---- the stubs: every stub argument after the iterator is a scalar parameter p0, p1, p2 ----

void set_param(EwParams& params, int i, const c10::Scalar& v) {
  (i == 0 ? params.p0 : i == 1 ? params.p1 : params.p2) = v;
}

template <EwId kOp, class Iter, class... P>
void stub_kernel(Iter& iter, P... p) {
  static_assert(sizeof...(P) <= 3, "elementwise ops take at most three scalar parameters");
  EwParams params;
  int i = 0;
  (set_param(params, i++, c10::Scalar(p)), ...);
  launch_elementwise(iter, kOp, params);
}

// a - alpha * b is add with -alpha.
void sub_kernel(at::TensorIteratorBase& iter, const c10::Scalar& alpha) {
  EwParams params;
  params.p0 = -alpha;
  launch_elementwise(iter, EwId::add, params);
}

}  // namespace

}  // namespace torch_ocl

// The stubs and their registration live in at::native.
namespace at::native {

#define TORCH_OCL_EW_STUB(stub, op) \
  REGISTER_PRIVATEUSE1_DISPATCH(stub, &torch_ocl::stub_kernel<torch_ocl::EwId::op>)

// clang-format off
TORCH_OCL_EW_STUB(add_stub, add);
REGISTER_PRIVATEUSE1_DISPATCH(sub_stub, &torch_ocl::sub_kernel);
TORCH_OCL_EW_STUB(mul_stub, mul);
TORCH_OCL_EW_STUB(div_true_stub, div_true);
TORCH_OCL_EW_STUB(div_trunc_stub, div_trunc);
TORCH_OCL_EW_STUB(div_floor_stub, div_floor);
TORCH_OCL_EW_STUB(maximum_stub, maximum);
TORCH_OCL_EW_STUB(minimum_stub, minimum);
TORCH_OCL_EW_STUB(bitwise_and_stub, bitwise_and);
TORCH_OCL_EW_STUB(bitwise_or_stub, bitwise_or);
TORCH_OCL_EW_STUB(bitwise_xor_stub, bitwise_xor);
TORCH_OCL_EW_STUB(eq_stub, eq);
TORCH_OCL_EW_STUB(ne_stub, ne);
TORCH_OCL_EW_STUB(lt_stub, lt);
TORCH_OCL_EW_STUB(le_stub, le);
TORCH_OCL_EW_STUB(gt_stub, gt);
TORCH_OCL_EW_STUB(ge_stub, ge);
TORCH_OCL_EW_STUB(logical_not_stub, logical_not);
TORCH_OCL_EW_STUB(logical_and_stub, logical_and);
TORCH_OCL_EW_STUB(logical_or_stub, logical_or);
TORCH_OCL_EW_STUB(logical_xor_stub, logical_xor);
TORCH_OCL_EW_STUB(neg_stub, neg);
TORCH_OCL_EW_STUB(abs_stub, abs);
TORCH_OCL_EW_STUB(sign_stub, sign);
TORCH_OCL_EW_STUB(ceil_stub, ceil);
TORCH_OCL_EW_STUB(floor_stub, floor);
TORCH_OCL_EW_STUB(round_stub, round);
TORCH_OCL_EW_STUB(trunc_stub, trunc);
TORCH_OCL_EW_STUB(exp_stub, exp);
TORCH_OCL_EW_STUB(log_stub, log);
TORCH_OCL_EW_STUB(sqrt_stub, sqrt);
TORCH_OCL_EW_STUB(rsqrt_stub, rsqrt);
TORCH_OCL_EW_STUB(sigmoid_stub, sigmoid);
TORCH_OCL_EW_STUB(tanh_stub, tanh);
TORCH_OCL_EW_STUB(sin_stub, sin);
TORCH_OCL_EW_STUB(cos_stub, cos);
TORCH_OCL_EW_STUB(reciprocal_stub, reciprocal);
TORCH_OCL_EW_STUB(clamp_scalar_stub, clamp);
TORCH_OCL_EW_STUB(clamp_min_scalar_stub, clamp_min);
TORCH_OCL_EW_STUB(clamp_max_scalar_stub, clamp_max);
TORCH_OCL_EW_STUB(addcmul_stub, addcmul);
TORCH_OCL_EW_STUB(addcdiv_stub, addcdiv);
TORCH_OCL_EW_STUB(lerp_kernel_scalar_weight, lerp);
TORCH_OCL_EW_STUB(threshold_stub, threshold);
TORCH_OCL_EW_STUB(sigmoid_backward_stub, sigmoid_backward);
TORCH_OCL_EW_STUB(tanh_backward_stub, tanh_backward);
// clang-format on
#undef TORCH_OCL_EW_STUB

}  // namespace at::native

namespace torch_ocl {

// ---- the ATen ops: structured implementations (functional, in-place, out=) and native ones ----

#define TORCH_OCL_STRUCTURED(cls, fn_name, inplace_name, out_name) \
  m.impl(fn_name, AtenStructured<at::native::cls>::functional);    \
  m.impl(inplace_name, AtenStructured<at::native::cls>::inplace);  \
  m.impl(out_name, AtenStructured<at::native::cls>::out);
#define TORCH_OCL_STRUCTURED_NO_INPLACE(cls, fn_name, out_name) \
  m.impl(fn_name, AtenStructured<at::native::cls>::functional); \
  m.impl(out_name, AtenStructured<at::native::cls>::out);
#define TORCH_OCL_UNARY(name) \
  TORCH_OCL_STRUCTURED(structured_##name##_out, #name, #name "_", #name ".out")
#define TORCH_OCL_COMPARISON(name)                                                        \
  TORCH_OCL_STRUCTURED(structured_##name##_Tensor_out, #name ".Tensor", #name "_.Tensor", \
                       #name ".Tensor_out")                                               \
  TORCH_OCL_STRUCTURED(structured_##name##_Scalar_out, #name ".Scalar", #name "_.Scalar", \
                       #name ".Scalar_out")
#define TORCH_OCL_BITWISE(name)                                                    \
  TORCH_OCL_STRUCTURED(structured_##name##_out, #name ".Tensor", #name "_.Tensor", \
                       #name ".Tensor_out")

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // clang-format off
  TORCH_OCL_STRUCTURED(structured_ufunc_add_CPU, "add.Tensor", "add_.Tensor", "add.out")
  TORCH_OCL_STRUCTURED(structured_sub_out, "sub.Tensor", "sub_.Tensor", "sub.out")
  TORCH_OCL_STRUCTURED(structured_mul_out, "mul.Tensor", "mul_.Tensor", "mul.out")
  TORCH_OCL_STRUCTURED(structured_div_out, "div.Tensor", "div_.Tensor", "div.out")
  TORCH_OCL_STRUCTURED(structured_div_out_mode, "div.Tensor_mode", "div_.Tensor_mode", "div.out_mode")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_maximum_out, "maximum", "maximum.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_minimum_out, "minimum", "minimum.out")
  TORCH_OCL_BITWISE(bitwise_and)
  TORCH_OCL_BITWISE(bitwise_or)
  TORCH_OCL_BITWISE(bitwise_xor)
  TORCH_OCL_COMPARISON(eq)
  TORCH_OCL_COMPARISON(ne)
  TORCH_OCL_COMPARISON(lt)
  TORCH_OCL_COMPARISON(le)
  TORCH_OCL_COMPARISON(gt)
  TORCH_OCL_COMPARISON(ge)
  TORCH_OCL_UNARY(neg)
  TORCH_OCL_UNARY(sign)
  TORCH_OCL_UNARY(sgn)
  TORCH_OCL_UNARY(ceil)
  TORCH_OCL_UNARY(floor)
  TORCH_OCL_UNARY(round)
  TORCH_OCL_UNARY(trunc)
  TORCH_OCL_UNARY(exp)
  TORCH_OCL_UNARY(log)
  TORCH_OCL_UNARY(sqrt)
  TORCH_OCL_UNARY(rsqrt)
  TORCH_OCL_UNARY(sigmoid)
  TORCH_OCL_UNARY(tanh)
  TORCH_OCL_UNARY(sin)
  TORCH_OCL_UNARY(cos)
  TORCH_OCL_UNARY(reciprocal)
  TORCH_OCL_UNARY(clamp)
  TORCH_OCL_UNARY(clamp_min)
  TORCH_OCL_UNARY(clamp_max)
  TORCH_OCL_UNARY(addcmul)
  TORCH_OCL_UNARY(addcdiv)
  TORCH_OCL_UNARY(threshold)
  TORCH_OCL_STRUCTURED(structured_lerp_Scalar, "lerp.Scalar", "lerp_.Scalar", "lerp.Scalar_out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_threshold_backward_out, "threshold_backward", "threshold_backward.grad_input")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_sigmoid_backward_out, "sigmoid_backward", "sigmoid_backward.grad_input")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_tanh_backward_out, "tanh_backward", "tanh_backward.grad_input")
  // clang-format on
  // Not structured in ATen: its native functions (the functional variants of abs and the
  // logical ops are composite and call these).
  m.impl("abs.out", at::native::abs_out);
  m.impl("logical_not.out", at::native::logical_not_out);
  m.impl("logical_and.out", at::native::logical_and_out);
  m.impl("logical_or.out", at::native::logical_or_out);
  m.impl("logical_xor.out", at::native::logical_xor_out);
  m.impl("floor_divide", static_cast<at::Tensor (*)(const at::Tensor&, const at::Tensor&)>(
                             at::native::floor_divide));
  m.impl("floor_divide_.Tensor",
         static_cast<at::Tensor& (*)(at::Tensor&, const at::Tensor&)>(at::native::floor_divide_));
  m.impl("floor_divide.out", at::native::floor_divide_out);
  m.impl("relu", at::native::relu);
  m.impl("relu_", at::native::relu_);
  m.impl("isnan", at::native::isnan);
}

#undef TORCH_OCL_STRUCTURED
#undef TORCH_OCL_STRUCTURED_NO_INPLACE
#undef TORCH_OCL_UNARY
#undef TORCH_OCL_COMPARISON
#undef TORCH_OCL_BITWISE

}  // namespace torch_ocl
