// The short route of tiny elementwise calls (ops/ElementwiseTiny.h).
#include "ops/ElementwiseTiny.h"

#include <ATen/OpMathType.h>

#include <atomic>
#include <cmath>

#include "ops/ElementwiseBatch.h"
#include "ops/KernelTypes.h"
#include "runtime/Allocator.h"

namespace torch_ocl {
namespace {

std::atomic<int64_t> g_recorded{0};  // tiny_route_count()

// An ocl tensor with the default contiguous strides (size-1 dimensions included) and no
// neg bit.
bool plain(const at::Tensor& t) {
  if (t.device().type() != c10::DeviceType::PrivateUse1 || t.layout() != at::kStrided || t.is_neg())
    return false;
  int64_t expected = 1;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

// The same device, dtype and sizes as a, and plain.
bool like(const at::Tensor& t, const at::Tensor& a) {
  return t.defined() && t.device() == a.device() && t.scalar_type() == a.scalar_type() &&
         t.sizes().equals(a.sizes()) && plain(t);
}

// A Python int or float operand (x * 0.5): a wrapped-number CPU tensor, which takes the other
// operand's dtype in type promotion.
bool python_number(const at::Tensor& t) {
  return t.defined() && t.unsafeGetTensorImpl()->is_wrapped_number() &&
         (t.scalar_type() == at::kDouble || t.scalar_type() == at::kLong);
}

// Its value as the batch's operand value, converted without a check like the CPU's scalar
// operands (beyond float's range: +-inf).
float python_number_value(const at::Tensor& t) {
  const void* p = t.const_data_ptr();
  return scalar_as_float(t.scalar_type() == at::kDouble
                             ? c10::Scalar(*static_cast<const double*>(p))
                             : c10::Scalar(*static_cast<const int64_t*>(p)));
}

// out and an input share memory only element for element (the batch kernel reads an element
// before it writes the same element).
bool same_or_disjoint(const at::Tensor& out, const at::Tensor& in) {
  return !out.is_alias_of(in) || out.data_ptr() == in.data_ptr();
}

}  // namespace

bool tiny_inputs_ok(const TinyCall& c, const at::Tensor& a) {
  if (!(ew_op(c.op).flags & kBatch) || !a.defined() || !is_batch_dtype(a.scalar_type()))
    return false;
  const int64_t n = a.numel();
  if (n == 0 || n > kBatchNumelLimit || !plain(a)) return false;
  if (c.b && !like(*c.b, a) && !python_number(*c.b)) return false;
  // Parameters the structured route treats specially: a bool or complex alpha or bound (its meta
  // function's errors), a NaN bound (clamp_min/clamp_max fill the result instead).
  if (c.p0 && (c.p0->isBoolean() || c.p0->isComplex() || std::isnan(c.p0->toDouble())))
    return false;
  return true;
}

bool tiny_output_ok(const TinyCall& c, const at::Tensor& a, const at::Tensor& out) {
  return like(out, a) && same_or_disjoint(out, a) &&
         (!c.b || python_number(*c.b) || same_or_disjoint(out, *c.b));
}

bool tiny_record(const TinyCall& c, const at::Tensor& a, const at::Tensor& out) {
  const at::ScalarType t = a.scalar_type();
  float p0 = 0.f;
  if (c.p0) {
    const c10::Scalar v = c.negate_p0 ? -*c.p0 : *c.p0;
    // As launch_elementwise checks an op's parameters.
    check_scalar_fits(v, (ew_op(c.op).flags & kOpmathParams) ? at::toOpMathType(t) : t);
    p0 = scalar_as_float(v);
  }
  const BufferRef o = buffer_of(out), x = buffer_of(a);
  const bool b_buffer = c.b && !python_number(*c.b);
  BufferRef y;
  if (b_buffer) y = buffer_of(*c.b);
  const float bv = c.b && !b_buffer ? python_number_value(*c.b) : 0.f;
  if (!batch_record(a.device().index(), c.op, t, a.numel(), o, x, b_buffer ? &y : nullptr, p0, 0.f,
                    bv))
    return false;
  g_recorded.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t tiny_route_count() { return g_recorded.load(std::memory_order_relaxed); }

}  // namespace torch_ocl
