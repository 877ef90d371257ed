// Unary elementwise ops: neg, abs, sign, relu, rounding, and the floating functions (exp, log,
// sqrt, rsqrt, sigmoid, tanh, sin, cos, reciprocal), functional, in-place and out=.
#include <ATen/native/TensorIterator.h>
#include <ATen/ops/empty.h>
#include <torch/headeronly/version.h>
#include <torch/library.h>

#include <string_view>

#include "ops/Elementwise.h"

namespace torch_ocl {
namespace {

using Builder = at::TensorIterator (*)(at::TensorBase&, const at::TensorBase&);

at::TensorIterator same(at::TensorBase& out, const at::TensorBase& a) {
  return at::TensorIterator::unary_op(out, a);
}
at::TensorIterator to_float(at::TensorBase& out, const at::TensorBase& a) {
  return at::TensorIterator::unary_float_op(out, a);
}

// The CPU's error for an op that takes no bool input (null: bool is fine); `dispatch` errors are
// the "not implemented for 'Bool'" kind, which the CPU raises as NotImplementedError.
struct BoolError {
  const char* message;
  bool dispatch;
};
// torch 2.14 raises the neg/relu errors as NotImplementedError too (2.13: RuntimeError).
constexpr bool kNegReluNotImplemented = TORCH_VERSION_MAJOR > 2 ||
                                        (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 14);
BoolError bool_input_error(std::string_view op) {
  if (op == "neg")
    return {
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
        "invert a mask, use the `~` or `logical_not()` operator instead.",
        kNegReluNotImplemented};
  if (op == "relu") return {"Boolean inputs not supported for relu", kNegReluNotImplemented};
  if (op == "abs") return {"\"abs_cpu\" not implemented for 'Bool'", true};
  if (op == "ceil") return {"\"ceil_vml_cpu\" not implemented for 'Bool'", true};
  if (op == "floor") return {"\"floor_vml_cpu\" not implemented for 'Bool'", true};
  if (op == "round") return {"\"round_vml_cpu\" not implemented for 'Bool'", true};
  if (op == "trunc") return {"\"trunc_vml_cpu\" not implemented for 'Bool'", true};
  return {nullptr, false};
}

at::Tensor run(at::Tensor out, const at::Tensor& a, Builder build, const char* op) {
  if (a.scalar_type() == at::kBool) {
    const BoolError e = bool_input_error(op);
    TORCH_CHECK_NOT_IMPLEMENTED(!e.message || !e.dispatch, e.message);
    TORCH_CHECK(!e.message, e.message);
  }
  if (!out.defined() && (build == same || a.is_floating_point()) && a.scalar_type() != at::kBool &&
      fast_path_ok({&a})) {
    return launch_same_shape(op, {&a});
  }
  if (out.defined() && out.is_same(a) && a.is_floating_point() && batch_size_ok(a) &&
      try_batch(op, a, a, nullptr, nullptr)) {
    return out;  // in place, in the stream's batch of tiny ops
  }
  at::TensorBase out_base = out;
  auto iter = build(out_base, a);
  launch_elementwise(iter, op);
  return iter.output();
}

#define TORCH_OCL_UNARY(name, builder)                                        \
  at::Tensor name(const at::Tensor& a) { return run({}, a, builder, #name); } \
  at::Tensor& name##_(at::Tensor& a) {                                        \
    run(a, a, builder, #name);                                                \
    return a;                                                                 \
  }                                                                           \
  at::Tensor& name##_out(const at::Tensor& a, at::Tensor& out) {              \
    run(out, a, builder, #name);                                              \
    return out;                                                               \
  }

TORCH_OCL_UNARY(neg, same)
TORCH_OCL_UNARY(abs, same)
TORCH_OCL_UNARY(sign, same)
TORCH_OCL_UNARY(ceil, same)
TORCH_OCL_UNARY(floor, same)
TORCH_OCL_UNARY(round, same)
TORCH_OCL_UNARY(trunc, same)
TORCH_OCL_UNARY(exp, to_float)
TORCH_OCL_UNARY(log, to_float)
TORCH_OCL_UNARY(sqrt, to_float)
TORCH_OCL_UNARY(rsqrt, to_float)
TORCH_OCL_UNARY(sigmoid, to_float)
TORCH_OCL_UNARY(tanh, to_float)
TORCH_OCL_UNARY(sin, to_float)
TORCH_OCL_UNARY(cos, to_float)
TORCH_OCL_UNARY(reciprocal, to_float)
#undef TORCH_OCL_UNARY

at::Tensor relu(const at::Tensor& a) { return run({}, a, same, "relu"); }
at::Tensor& relu_(at::Tensor& a) {
  run(a, a, same, "relu");
  return a;
}

at::Tensor logical_not_impl(at::Tensor out, const at::Tensor& a) {
  if (!out.defined()) out = at::empty({0}, a.options().dtype(at::kBool));
  at::TensorBase out_base = out;
  auto iter = at::TensorIteratorConfig()
                  .add_output(out_base)
                  .add_const_input(a)
                  .check_all_same_dtype(false)
                  .build();
  EwParams p;
  p.compute = a.scalar_type();
  launch_elementwise(iter, "logical_not", p);
  return out;
}
at::Tensor logical_not(const at::Tensor& a) { return logical_not_impl({}, a); }
at::Tensor& logical_not_(at::Tensor& a) {
  logical_not_impl(a, a);
  return a;
}
at::Tensor& logical_not_out(const at::Tensor& a, at::Tensor& out) {
  logical_not_impl(out, a);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define TORCH_OCL_REG(name)   \
  m.impl(#name, name);        \
  m.impl(#name "_", name##_); \
  m.impl(#name ".out", name##_out);
  TORCH_OCL_REG(neg)
  TORCH_OCL_REG(abs)
  TORCH_OCL_REG(sign)
  TORCH_OCL_REG(exp)
  TORCH_OCL_REG(log)
  TORCH_OCL_REG(sqrt)
  TORCH_OCL_REG(rsqrt)
  TORCH_OCL_REG(sigmoid)
  TORCH_OCL_REG(tanh)
  TORCH_OCL_REG(sin)
  TORCH_OCL_REG(cos)
  TORCH_OCL_REG(reciprocal)
  TORCH_OCL_REG(ceil)
  TORCH_OCL_REG(floor)
  TORCH_OCL_REG(round)
  TORCH_OCL_REG(trunc)
  m.impl("sgn", sign);  // sgn is sign for real dtypes
  m.impl("sgn_", sign_);
  m.impl("sgn.out", sign_out);
  m.impl("relu", relu);
  m.impl("relu_", relu_);
#undef TORCH_OCL_REG
  m.impl("logical_not", logical_not);
  m.impl("logical_not_", logical_not_);
  m.impl("logical_not.out", logical_not_out);
}

}  // namespace torch_ocl
