// The short route of tiny elementwise calls. A small call whose operands are already in their
// simplest form - ocl tensors of one float dtype (float, half, bfloat16), the same sizes, default
// contiguous strides, no neg bit; or a Python number as the second operand - has nothing for ATen's
// structured meta function and TensorIterator to decide: no broadcasting, no type promotion, no
// resizing, no strides to collapse. For such a call the registered op records the kernel straight
// into the stream's batch (ops/ElementwiseBatch.h), which saves about a third of a tiny op's host
// time; every other call, and any call the batch does not take, goes through ATen's structured
// implementation as before, so errors, out= resizing and overlap handling stay ATen's.
//
// An op takes this route by its registration line in ops/ElementwiseOps.cpp:
//     m.impl("exp", Tiny<at::native::structured_exp_out, EwId::exp>::functional);
// The op's arguments after `self` say what the kernel gets: nothing (unary), `other` (binary: an
// ocl tensor like self, or a Python int or float as in x * 0.5), `other, alpha` (alpha is the
// parameter p0; kNegate passes -alpha, for sub), or one Scalar (p0: clamp_min, clamp_max). The
// result is exactly what the structured route computes: the same batch kernel with the same
// operands, parameter checks and parameter.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/Scalar.h>

#include "ops/ElementwiseOps.h"
#include "ops/Structured.h"

namespace torch_ocl {

// One tiny call: out = op(a[, b]) with parameter p0 (0 when absent).
struct TinyCall {
  EwId op;
  const at::Tensor* b = nullptr;
  const c10::Scalar* p0 = nullptr;
  bool negate_p0 = false;
};

// Whether `a` and the call's other operands can take the short route (see above).
bool tiny_inputs_ok(const TinyCall& c, const at::Tensor& a);
// Whether `out` (self of an in-place call, or out=) can be written directly: a's device, dtype,
// sizes and layout, and sharing memory with an input only element for element.
bool tiny_output_ok(const TinyCall& c, const at::Tensor& a, const at::Tensor& out);
// Records the call into the batch; false (nothing done) when the batch does not take it. Raises
// the structured route's error for a parameter out of the dtype's range.
bool tiny_record(const TinyCall& c, const at::Tensor& a, const at::Tensor& out);
// Calls recorded by the short route so far (torch.ocl.batch_stats()["short_route"]).
int64_t tiny_route_count();

namespace tiny_detail {
inline TinyCall call_of(EwId op, bool) { return {op}; }
inline TinyCall call_of(EwId op, bool, const at::Tensor& b) { return {op, &b}; }
inline TinyCall call_of(EwId op, bool negate, const at::Tensor& b, const c10::Scalar& alpha) {
  return {op, &b, &alpha, negate};
}
inline TinyCall call_of(EwId op, bool negate, const c10::Scalar& p0) {
  return {op, nullptr, &p0, negate};
}
}  // namespace tiny_detail

template <class Impl, EwId kOp, bool kNegate = false,
          class Fn = decltype(&AtenStructured<Impl>::functional)>
struct Tiny;

template <class Impl, EwId kOp, bool kNegate, class... Rest>
struct Tiny<Impl, kOp, kNegate, at::Tensor (*)(const at::Tensor&, Rest...)> {
  using Aten = AtenStructured<Impl>;

  static at::Tensor functional(const at::Tensor& a, Rest... rest) {
    const TinyCall c = tiny_detail::call_of(kOp, kNegate, rest...);
    if (!tiny_inputs_ok(c, a)) return Aten::functional(a, rest...);
    at::Tensor out = at::empty(a.sizes(), a.options());
    if (!tiny_record(c, a, out)) Aten::out(a, rest..., out);
    return out;
  }
  static at::Tensor& inplace(at::Tensor& self, Rest... rest) {
    const TinyCall c = tiny_detail::call_of(kOp, kNegate, rest...);
    if (tiny_inputs_ok(c, self) && tiny_output_ok(c, self, self) && tiny_record(c, self, self))
      return self;
    return Aten::inplace(self, rest...);
  }
  static at::Tensor& out(const at::Tensor& a, Rest... rest, at::Tensor& out) {
    const TinyCall c = tiny_detail::call_of(kOp, kNegate, rest...);
    if (tiny_inputs_ok(c, a) && tiny_output_ok(c, a, out) && tiny_record(c, a, out)) return out;
    return Aten::out(a, rest..., out);
  }
};

}  // namespace torch_ocl
