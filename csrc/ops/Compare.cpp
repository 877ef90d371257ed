// Comparisons (eq, ne, lt, le, gt, ge with tensor or scalar), isnan, where, and clamp.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorIterator.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/zeros.h>
#include <torch/headeronly/version.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <string_view>

#include "ops/Elementwise.h"

namespace torch_ocl {
namespace {

at::Tensor compare(at::Tensor out, const at::Tensor& a, const at::Tensor& b, const char* op) {
  at::TensorBase out_base = out;
  auto iter = at::TensorIterator::comparison_op(out_base, a, b);
  launch_elementwise(iter, op);
  return iter.output();
}

#define TORCH_OCL_COMPARE(name)                                                                  \
  at::Tensor name(const at::Tensor& a, const at::Tensor& b) { return compare({}, a, b, #name); } \
  at::Tensor& name##_(at::Tensor& a, const at::Tensor& b) {                                      \
    compare(a, a, b, #name);                                                                     \
    return a;                                                                                    \
  }                                                                                              \
  at::Tensor& name##_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {            \
    compare(out, a, b, #name);                                                                   \
    return out;                                                                                  \
  }                                                                                              \
  at::Tensor name##_s(const at::Tensor& a, const at::Scalar& b) {                                \
    return compare({}, a, at::native::wrapped_scalar_tensor(b), #name);                          \
  }                                                                                              \
  at::Tensor& name##_s_(at::Tensor& a, const at::Scalar& b) {                                    \
    compare(a, a, at::native::wrapped_scalar_tensor(b), #name);                                  \
    return a;                                                                                    \
  }                                                                                              \
  at::Tensor& name##_s_out(const at::Tensor& a, const at::Scalar& b, at::Tensor& out) {          \
    compare(out, a, at::native::wrapped_scalar_tensor(b), #name);                                \
    return out;                                                                                  \
  }
TORCH_OCL_COMPARE(eq)
TORCH_OCL_COMPARE(ne)
TORCH_OCL_COMPARE(lt)
TORCH_OCL_COMPARE(le)
TORCH_OCL_COMPARE(gt)
TORCH_OCL_COMPARE(ge)
#undef TORCH_OCL_COMPARE

at::Tensor& where_out(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other,
                      at::Tensor& out) {
  TORCH_CHECK(cond.scalar_type() == at::kBool || cond.scalar_type() == at::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              cond.scalar_type());
  const at::ScalarType result = at::result_type(self, other);
  TORCH_CHECK(out.scalar_type() == result, "Expected out type to be ", result, " but got ",
              out.scalar_type());
  // Floats of one dtype on the device: select bits (an integer of the same size), as the CPU
  // selects elements; going through float would quiet half's signalling NaNs.
  if (at::isFloatingType(result) && self.scalar_type() == result && other.scalar_type() == result &&
      out.scalar_type() == result && !self.device().is_cpu() && !other.device().is_cpu() &&
      !self.is_neg() && !other.is_neg()) {
    at::native::resize_output(
        out, at::infer_size_dimvector(cond.sizes(),
                                      at::infer_size_dimvector(self.sizes(), other.sizes())));
    const at::ScalarType bits = bits_dtype(out.itemsize());
    const at::Tensor out_bits = out.view(bits), self_bits = self.view(bits),
                     other_bits = other.view(bits);
    auto iter = at::TensorIteratorConfig()
                    .check_all_same_dtype(false)
                    .resize_outputs(false)
                    .add_output(out_bits)
                    .add_const_input(cond)
                    .add_const_input(self_bits)
                    .add_const_input(other_bits)
                    .build();
    EwParams p;
    p.compute = bits;
    launch_elementwise(iter, "where", p);
    return out;
  }
  at::TensorBase out_base = out;
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .allow_cpu_scalars(true)
                  .add_output(out_base)
                  .add_const_input(cond)
                  .add_const_input(self)
                  .add_const_input(other)
                  .build();
  EwParams p;
  p.compute = result;
  launch_elementwise(iter, "where", p);
  return out;
}

at::Tensor where(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  const at::ScalarType result = at::result_type(self, other);
  at::Tensor out = at::empty(
      {0}, self.options().dtype(result).device(self.is_cpu() ? other.device() : self.device()));
  return where_out(cond, self, other, out);
}

// From torch 2.15 the CPU clamps an integer tensor with a bound beyond its dtype's range to that
// range, and raises when the bound leaves no value (a min above the maximum, a max below the
// minimum); before, the bound had to fit the dtype. Returns the bound to pass to the kernel.
at::Scalar integer_clamp_bound(const at::Scalar& bound, at::ScalarType t, const char* which) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 15)
  if (!at::isIntegralType(t, /*includeBool=*/false) || bound.isFloatingPoint()) return bound;
  int64_t lowest = 0, highest = 0;
  AT_DISPATCH_INTEGRAL_TYPES(t, "clamp", [&] {
    lowest = std::numeric_limits<scalar_t>::lowest();
    highest = std::numeric_limits<scalar_t>::max();
  });
  const int64_t v = bound.toLong();
  const bool is_min = std::string_view(which) == "min";
  TORCH_CHECK(is_min ? v <= highest : v >= lowest, "Clamp ", which, " value ", bound.toDouble(),
              " is outside the representable range of ", t);
  return std::clamp(v, lowest, highest);
#else
  return bound;
#endif
}

// clamp with scalar bounds: the result dtype follows type promotion with the bounds (an int
// tensor clamped to 0.5 is float), NaN inputs and NaN bounds give NaN like the CPU.
at::Tensor clamp_impl(at::Tensor out, const at::Tensor& a, const std::optional<at::Scalar>& lo,
                      const std::optional<at::Scalar>& hi) {
  TORCH_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  at::native::ResultTypeState state{};
  state = at::native::update_result_type_state(a, state);
  if (lo)
    state = at::native::update_result_type_state(at::native::wrapped_scalar_tensor(*lo), state);
  if (hi)
    state = at::native::update_result_type_state(at::native::wrapped_scalar_tensor(*hi), state);
  const at::ScalarType result = at::native::result_type(state);
  if (!out.defined()) {
    out = at::empty({0}, a.options().dtype(result));
  } else {
    // The CPU's checks in its words: in place, self keeps its dtype if the result casts to it;
    // out= must have the result's dtype.
    if (out.is_same(a)) {
      TORCH_CHECK(at::canCast(result, out.scalar_type()), "result type ", result,
                  " can't be cast to the desired output type ", out.dtype());
    } else {
      TORCH_CHECK(out.scalar_type() == result, "Found dtype ", out.scalar_type(), " but expected ",
                  result);
    }
  }
  at::TensorBase out_base = out;
  auto iter = at::TensorIteratorConfig()
                  .add_output(out_base)
                  .add_const_input(a)
                  .check_all_same_dtype(false)
                  .build();
  EwParams p;
  p.compute = result;
  if (lo) p.p0 = integer_clamp_bound(*lo, result, "min");
  if (hi) p.p1 = integer_clamp_bound(*hi, result, "max");
  p.extra = lo && hi ? "-DHAS_LO -DHAS_HI" : lo ? "-DHAS_LO" : "-DHAS_HI";
  launch_elementwise(iter, "clamp", p);
  return out;
}

at::Tensor clamp(const at::Tensor& a, const std::optional<at::Scalar>& lo,
                 const std::optional<at::Scalar>& hi) {
  return clamp_impl({}, a, lo, hi);
}
at::Tensor& clamp_(at::Tensor& a, const std::optional<at::Scalar>& lo,
                   const std::optional<at::Scalar>& hi) {
  clamp_impl(a, a, lo, hi);
  return a;
}
at::Tensor& clamp_out(const at::Tensor& a, const std::optional<at::Scalar>& lo,
                      const std::optional<at::Scalar>& hi, at::Tensor& out) {
  clamp_impl(out, a, lo, hi);
  return out;
}
at::Tensor clamp_min(const at::Tensor& a, const at::Scalar& lo) {
  return clamp_impl({}, a, lo, {});
}
at::Tensor& clamp_min_(at::Tensor& a, const at::Scalar& lo) {
  clamp_impl(a, a, lo, {});
  return a;
}
at::Tensor& clamp_min_out(const at::Tensor& a, const at::Scalar& lo, at::Tensor& out) {
  clamp_impl(out, a, lo, {});
  return out;
}
at::Tensor clamp_max(const at::Tensor& a, const at::Scalar& hi) {
  return clamp_impl({}, a, {}, hi);
}
at::Tensor& clamp_max_(at::Tensor& a, const at::Scalar& hi) {
  clamp_impl(a, a, {}, hi);
  return a;
}
at::Tensor& clamp_max_out(const at::Tensor& a, const at::Scalar& hi, at::Tensor& out) {
  clamp_impl(out, a, {}, hi);
  return out;
}

// masked_fill_: self = mask ? value : self, through the `where` kernel. `value` is a 0-dim tensor:
// a CPU one (a Python number) becomes a kernel argument, a device one stays on the device.
at::Tensor& masked_fill_impl(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  TORCH_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  at::TensorBase out_base = self;
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .allow_cpu_scalars(true)
                  .resize_outputs(false)
                  .add_output(out_base)
                  .add_const_input(mask)
                  .add_const_input(value)
                  .add_const_input(self)
                  .build();
  EwParams p;
  p.compute = self.scalar_type();
  p.checked_operands = true;  // masked_fill(x, m, 1e300) raises on the CPU
  launch_elementwise(iter, "where", p);
  return self;
}
at::Tensor& masked_fill_scalar(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  return masked_fill_impl(self, mask, at::native::wrapped_scalar_tensor(value));
}
at::Tensor& masked_fill_tensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  if (value.device().is_cpu() && value.dim() == 0) {
    return masked_fill_impl(self, mask, at::native::wrapped_scalar_tensor(value.item()));
  }
  return masked_fill_impl(self, mask, value);
}

// isnan: x != x for floating types (NaN is the only value unequal to itself), all false else.
at::Tensor isnan(const at::Tensor& a) {
  if (a.is_floating_point()) return at::ne(a, a);
  return at::zeros(a.sizes(), a.options().dtype(at::kBool));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("isnan", isnan);
#define TORCH_OCL_REG(name)                \
  m.impl(#name ".Tensor", name);           \
  m.impl(#name "_.Tensor", name##_);       \
  m.impl(#name ".Tensor_out", name##_out); \
  m.impl(#name ".Scalar", name##_s);       \
  m.impl(#name "_.Scalar", name##_s_);     \
  m.impl(#name ".Scalar_out", name##_s_out);
  TORCH_OCL_REG(eq)
  TORCH_OCL_REG(ne)
  TORCH_OCL_REG(lt)
  TORCH_OCL_REG(le)
  TORCH_OCL_REG(gt)
  TORCH_OCL_REG(ge)
#undef TORCH_OCL_REG
  m.impl("where.self", where);
  m.impl("where.self_out", where_out);
  m.impl("clamp", clamp);
  m.impl("clamp_", clamp_);
  m.impl("clamp.out", clamp_out);
  m.impl("clamp_min", clamp_min);
  m.impl("clamp_min_", clamp_min_);
  m.impl("clamp_min.out", clamp_min_out);
  m.impl("clamp_max.out", clamp_max_out);
  m.impl("masked_fill_.Scalar", masked_fill_scalar);
  m.impl("masked_fill_.Tensor", masked_fill_tensor);
  m.impl("clamp_max", clamp_max);
  m.impl("clamp_max_", clamp_max_);
}

}  // namespace torch_ocl
