// Binary arithmetic: add, sub, mul, div (all rounding modes), maximum, minimum, bitwise ops,
// threshold_backward (relu's gradient), sigmoid/tanh backward. Functional, in-place and out=.
#include <ATen/OpMathType.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/TensorIterator.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <string_view>

#include "ops/Elementwise.h"

namespace torch_ocl {
namespace {

using Builder = at::TensorIterator (*)(at::TensorBase&, const at::TensorBase&,
                                       const at::TensorBase&);

at::TensorIterator binary(at::TensorBase& out, const at::TensorBase& a, const at::TensorBase& b) {
  return at::TensorIterator::borrowing_binary_op(out, a, b);
}
at::TensorIterator binary_float(at::TensorBase& out, const at::TensorBase& a,
                                const at::TensorBase& b) {
  return at::TensorIterator::binary_float_op(out, a, b);
}

// The dtype checks the CPU kernels make, so that the same calls fail with the same errors.
void check_operands(const char* op, const at::Tensor& a, const at::Tensor& b) {
  if (std::string_view(op) != "sub") return;
  const bool a_bool = a.scalar_type() == at::kBool, b_bool = b.scalar_type() == at::kBool;
  TORCH_CHECK(!(a_bool && b_bool),
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
              "`^` or `logical_xor()` operator instead.");
  TORCH_CHECK(!a_bool && !b_bool,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
              "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}
void check_dtypes(const char* op, const at::TensorIteratorBase& iter) {
  const at::ScalarType t = iter.common_dtype();
  if (std::string_view(op).rfind("bitwise_", 0) == 0) {
    TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(t, /*includeBool=*/true), "\"", op,
                                "_cpu\" not implemented for '", c10::toString(t), "'");
  }
}

// out == undefined: functional; out == a: in-place; else out=.
at::Tensor run(at::Tensor out, const at::Tensor& a, const at::Tensor& b, Builder build,
               const char* op, const EwParams& params = {}) {
  check_operands(op, a, b);
  if (!out.defined() && (build == binary || a.is_floating_point()) && fast_path_ok({&a, &b})) {
    if (a.scalar_type() == at::kBool || std::string_view(op).rfind("bitwise_", 0) == 0) {
      // let the iterator path raise the CPU's dtype errors
    } else {
      return launch_same_shape(op, {&a, &b}, params);
    }
  }
  // Tiny float ops that the stream's batch can take: with a CPU scalar (x * 2: the result keeps
  // a's floating dtype) or in place.
  if (a.is_floating_point() && a.device().type() == c10::DeviceType::PrivateUse1 &&
      batch_size_ok(a) && (!out.defined() || out.is_same(a))) {
    if (b.device().is_cpu() && b.dim() == 0) {
      at::Tensor result = out.defined() ? out : at::empty(a.sizes(), a.options());
      const c10::Scalar s = b.item();
      if (try_batch(op, result, a, nullptr, &s, params)) return result;
    } else if (out.defined() && try_batch(op, out, a, &b, nullptr, params)) {
      return out;
    }
  }
  at::TensorBase out_base = out;
  auto iter = build(out_base, a, b);
  check_dtypes(op, iter);
  launch_elementwise(iter, op, params);
  return iter.output();
}

// add/sub's alpha, with ATen's own check (no float alpha for integer tensors, no alpha for bool).
EwParams alpha(const at::Tensor& a, const at::Tensor& b, const at::Scalar& al) {
  at::native::alpha_check(at::result_type(a, b), al);
  EwParams p;
  p.p0 = al;
  return p;
}

at::Tensor add(const at::Tensor& a, const at::Tensor& b, const at::Scalar& al) {
  return run({}, a, b, binary, "add", alpha(a, b, al));
}
at::Tensor& add_(at::Tensor& a, const at::Tensor& b, const at::Scalar& al) {
  run(a, a, b, binary, "add", alpha(a, b, al));
  return a;
}
at::Tensor& add_out(const at::Tensor& a, const at::Tensor& b, const at::Scalar& al,
                    at::Tensor& out) {
  run(out, a, b, binary, "add", alpha(a, b, al));
  return out;
}
at::Tensor sub(const at::Tensor& a, const at::Tensor& b, const at::Scalar& al) {
  return run({}, a, b, binary, "sub", alpha(a, b, al));
}
at::Tensor& sub_(at::Tensor& a, const at::Tensor& b, const at::Scalar& al) {
  run(a, a, b, binary, "sub", alpha(a, b, al));
  return a;
}
at::Tensor& sub_out(const at::Tensor& a, const at::Tensor& b, const at::Scalar& al,
                    at::Tensor& out) {
  run(out, a, b, binary, "sub", alpha(a, b, al));
  return out;
}

const char* div_op(std::optional<c10::string_view> mode) {
  if (!mode) return "div_true";
  if (*mode == "trunc") return "div_trunc";
  if (*mode == "floor") return "div_floor";
  TORCH_CHECK(false,
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
              *mode, "'");
}
Builder div_builder(std::optional<c10::string_view> mode) { return mode ? binary : binary_float; }
// Integer division by zero raises on the CPU; here the kernel finds it (runtime/DeviceError.h).
EwParams div_params() {
  EwParams p;
  p.zero_divisor_error = "ZeroDivisionError (integer division by zero in div/floor_divide)";
  return p;
}

at::Tensor div_mode(const at::Tensor& a, const at::Tensor& b,
                    std::optional<c10::string_view> mode) {
  return run({}, a, b, div_builder(mode), div_op(mode), div_params());
}
at::Tensor& div_mode_(at::Tensor& a, const at::Tensor& b, std::optional<c10::string_view> mode) {
  run(a, a, b, div_builder(mode), div_op(mode), div_params());
  return a;
}
at::Tensor& div_mode_out(const at::Tensor& a, const at::Tensor& b,
                         std::optional<c10::string_view> mode, at::Tensor& out) {
  run(out, a, b, div_builder(mode), div_op(mode), div_params());
  return out;
}

// floor_divide (x // y) is div with rounding_mode="floor".
at::Tensor floor_divide(const at::Tensor& a, const at::Tensor& b) {
  return run({}, a, b, binary, "div_floor", div_params());
}
at::Tensor& floor_divide_(at::Tensor& a, const at::Tensor& b) {
  run(a, a, b, binary, "div_floor", div_params());
  return a;
}
at::Tensor& floor_divide_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  run(out, a, b, binary, "div_floor", div_params());
  return out;
}

#define TORCH_OCL_BINARY(name, builder, op)                                                        \
  at::Tensor name(const at::Tensor& a, const at::Tensor& b) { return run({}, a, b, builder, op); } \
  at::Tensor& name##_(at::Tensor& a, const at::Tensor& b) {                                        \
    run(a, a, b, builder, op);                                                                     \
    return a;                                                                                      \
  }                                                                                                \
  at::Tensor& name##_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {              \
    run(out, a, b, builder, op);                                                                   \
    return out;                                                                                    \
  }

TORCH_OCL_BINARY(mul, binary, "mul")
TORCH_OCL_BINARY(div, binary_float, "div_true")
TORCH_OCL_BINARY(maximum, binary, "maximum")
TORCH_OCL_BINARY(minimum, binary, "minimum")
TORCH_OCL_BINARY(bitwise_and, binary, "bitwise_and")
TORCH_OCL_BINARY(bitwise_or, binary, "bitwise_or")
TORCH_OCL_BINARY(bitwise_xor, binary, "bitwise_xor")
TORCH_OCL_BINARY(sigmoid_backward, binary, "sigmoid_backward")
TORCH_OCL_BINARY(tanh_backward, binary, "tanh_backward")
#undef TORCH_OCL_BINARY

// Logical ops: bool result (or the out= tensor's dtype), computed in the inputs' common dtype.
at::Tensor logical(at::Tensor out, const at::Tensor& a, const at::Tensor& b, const char* op) {
  if (!out.defined()) out = at::empty({0}, a.options().dtype(at::kBool));
  at::TensorBase out_base = out;
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(true)
                  .add_output(out_base)
                  .add_const_input(a)
                  .add_const_input(b)
                  .allow_cpu_scalars(true)
                  .check_all_same_dtype(false)
                  .promote_inputs_to_common_dtype(true)
                  .cast_common_dtype_to_outputs(false)
                  .build();
  launch_elementwise(iter, op);
  return out;
}
#define TORCH_OCL_LOGICAL(name)                                                                  \
  at::Tensor name(const at::Tensor& a, const at::Tensor& b) { return logical({}, a, b, #name); } \
  at::Tensor& name##_(at::Tensor& a, const at::Tensor& b) {                                      \
    logical(a, a, b, #name);                                                                     \
    return a;                                                                                    \
  }                                                                                              \
  at::Tensor& name##_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {            \
    logical(out, a, b, #name);                                                                   \
    return out;                                                                                  \
  }
TORCH_OCL_LOGICAL(logical_and)
TORCH_OCL_LOGICAL(logical_or)
TORCH_OCL_LOGICAL(logical_xor)
#undef TORCH_OCL_LOGICAL

// The CPU checks the threshold against the opmath type (float for half/bfloat16).
EwParams threshold_params(const at::Tensor& grad, const at::Tensor& self,
                          const at::Scalar& threshold) {
  EwParams p;
  p.p0 = threshold;
  p.param_dtype = at::toOpMathType(at::result_type(grad, self));
  return p;
}
at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& self,
                              const at::Scalar& threshold) {
  return run({}, grad, self, binary, "threshold_backward", threshold_params(grad, self, threshold));
}
at::Tensor& threshold_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                   const at::Scalar& threshold, at::Tensor& out) {
  run(out, grad, self, binary, "threshold_backward", threshold_params(grad, self, threshold));
  return out;
}

// Scalar overloads of the bitwise ops are native (not composite) in ATen.
#define TORCH_OCL_BINARY_SCALAR(name)                                                        \
  at::Tensor name##_scalar(const at::Tensor& a, const at::Scalar& b) {                       \
    return torch_ocl::name(a, at::native::wrapped_scalar_tensor(b));                         \
  }                                                                                          \
  at::Tensor& name##_scalar_(at::Tensor& a, const at::Scalar& b) {                           \
    return torch_ocl::name##_(a, at::native::wrapped_scalar_tensor(b));                      \
  }                                                                                          \
  at::Tensor& name##_scalar_out(const at::Tensor& a, const at::Scalar& b, at::Tensor& out) { \
    return torch_ocl::name##_out(a, at::native::wrapped_scalar_tensor(b), out);              \
  }
TORCH_OCL_BINARY_SCALAR(bitwise_and)
TORCH_OCL_BINARY_SCALAR(bitwise_or)
TORCH_OCL_BINARY_SCALAR(bitwise_xor)
#undef TORCH_OCL_BINARY_SCALAR

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", add);
  m.impl("add_.Tensor", add_);
  m.impl("add.out", add_out);
  m.impl("sub.Tensor", sub);
  m.impl("sub_.Tensor", sub_);
  m.impl("sub.out", sub_out);
  m.impl("floor_divide", floor_divide);
  m.impl("floor_divide_.Tensor", floor_divide_);
  m.impl("floor_divide.out", floor_divide_out);
  m.impl("div.Tensor_mode", div_mode);
  m.impl("div_.Tensor_mode", div_mode_);
  m.impl("div.out_mode", div_mode_out);
#define TORCH_OCL_REG(name, schema)   \
  m.impl(#name "." schema, name);     \
  m.impl(#name "_." schema, name##_); \
  m.impl(#name ".out", name##_out);
  TORCH_OCL_REG(mul, "Tensor")
  TORCH_OCL_REG(div, "Tensor")
#undef TORCH_OCL_REG
#define TORCH_OCL_REG(name)          \
  m.impl(#name ".Tensor", name);     \
  m.impl(#name "_.Tensor", name##_); \
  m.impl(#name ".Tensor_out", name##_out);
  TORCH_OCL_REG(bitwise_and)
  TORCH_OCL_REG(bitwise_or)
  TORCH_OCL_REG(bitwise_xor)
#undef TORCH_OCL_REG
#define TORCH_OCL_REG(name)   \
  m.impl(#name, name);        \
  m.impl(#name "_", name##_); \
  m.impl(#name ".out", name##_out);
  TORCH_OCL_REG(logical_and)
  TORCH_OCL_REG(logical_or)
  TORCH_OCL_REG(logical_xor)
#undef TORCH_OCL_REG
  m.impl("maximum", maximum);
  m.impl("maximum.out", maximum_out);
  m.impl("minimum", minimum);
  m.impl("minimum.out", minimum_out);
  m.impl("sigmoid_backward", sigmoid_backward);
  m.impl("sigmoid_backward.grad_input", sigmoid_backward_out);
  m.impl("tanh_backward", tanh_backward);
  m.impl("tanh_backward.grad_input", tanh_backward_out);
  m.impl("threshold_backward", threshold_backward);
  m.impl("threshold_backward.grad_input", threshold_backward_out);
  m.impl("bitwise_and.Scalar", bitwise_and_scalar);
  m.impl("bitwise_and_.Scalar", bitwise_and_scalar_);
  m.impl("bitwise_and.Scalar_out", bitwise_and_scalar_out);
  m.impl("bitwise_or.Scalar", bitwise_or_scalar);
  m.impl("bitwise_or_.Scalar", bitwise_or_scalar_);
  m.impl("bitwise_or.Scalar_out", bitwise_or_scalar_out);
  m.impl("bitwise_xor.Scalar", bitwise_xor_scalar);
  m.impl("bitwise_xor_.Scalar", bitwise_xor_scalar_);
  m.impl("bitwise_xor.Scalar_out", bitwise_xor_scalar_out);
}

}  // namespace torch_ocl
