// Three-operand pointwise ops used by optimizers: addcmul, addcdiv, lerp (scalar weight).
#include <ATen/OpMathType.h>
#include <ATen/native/TensorIterator.h>
#include <torch/library.h>

#include "ops/Elementwise.h"

namespace torch_ocl {
namespace {

at::Tensor run3(at::Tensor out, const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                const at::Scalar& p0, const char* op) {
  at::TensorBase out_base = out;
  auto iter = at::TensorIteratorConfig()
                  .add_output(out_base)
                  .add_const_input(a)
                  .add_const_input(b)
                  .add_const_input(c)
                  .promote_inputs_to_common_dtype(true)
                  .cast_common_dtype_to_outputs(true)
                  .enforce_safe_casting_to_output(true)
                  .allow_cpu_scalars(true)
                  .build();
  EwParams params;
  params.p0 = p0;
  params.param_dtype = at::toOpMathType(iter.common_dtype());  // the CPU checks the opmath type
  launch_elementwise(iter, op, params);
  return iter.output();
}

#define TORCH_OCL_TERNARY(name)                                                         \
  at::Tensor name(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,        \
                  const at::Scalar& v) {                                                \
    return run3({}, a, b, c, v, #name);                                                 \
  }                                                                                     \
  at::Tensor& name##_(at::Tensor& a, const at::Tensor& b, const at::Tensor& c,          \
                      const at::Scalar& v) {                                            \
    run3(a, a, b, c, v, #name);                                                         \
    return a;                                                                           \
  }                                                                                     \
  at::Tensor& name##_out(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, \
                         const at::Scalar& v, at::Tensor& out) {                        \
    run3(out, a, b, c, v, #name);                                                       \
    return out;                                                                         \
  }
TORCH_OCL_TERNARY(addcmul)
TORCH_OCL_TERNARY(addcdiv)
#undef TORCH_OCL_TERNARY

// lerp's weight is a scalar: the third operand slot is unused (the end tensor is passed twice).
// Like the CPU, lerp takes no type promotion between self and end.
void check_lerp(const at::Tensor& a, const at::Tensor& end) {
  TORCH_CHECK(a.dtype() == end.dtype(), "expected dtype ", a.dtype(), " for `end` but got dtype ",
              end.dtype());
}
at::Tensor lerp(const at::Tensor& a, const at::Tensor& end, const at::Scalar& w) {
  check_lerp(a, end);
  return run3({}, a, end, end, w, "lerp");
}
at::Tensor& lerp_(at::Tensor& a, const at::Tensor& end, const at::Scalar& w) {
  check_lerp(a, end);
  run3(a, a, end, end, w, "lerp");
  return a;
}
at::Tensor& lerp_out(const at::Tensor& a, const at::Tensor& end, const at::Scalar& w,
                     at::Tensor& out) {
  check_lerp(a, end);
  run3(out, a, end, end, w, "lerp");
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("addcmul", addcmul);
  m.impl("addcmul_", addcmul_);
  m.impl("addcmul.out", addcmul_out);
  m.impl("addcdiv", addcdiv);
  m.impl("addcdiv_", addcdiv_);
  m.impl("addcdiv.out", addcdiv_out);
  m.impl("lerp.Scalar", lerp);
  m.impl("lerp_.Scalar", lerp_);
  m.impl("lerp.Scalar_out", lerp_out);
}

}  // namespace torch_ocl
