// The multi-tensor elementwise launcher of the _foreach_* ops (ops/Foreach.cpp), for other op
// families that are foreach ops in disguise (AMP's unscale).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <vector>

namespace torch_ocl {

// Where an op's scalar `s` comes from: none, one value, one value per tensor, or element 0 of a
// tensor on the device (read by the kernel: no host wait).
struct ForeachScalar {
  enum class Mode { kNone, kValue, kList, kTensor };
  Mode mode = Mode::kNone;
  c10::Scalar value = 0;
  at::ArrayRef<c10::Scalar> list;
  const at::Tensor* tensor = nullptr;

  static ForeachScalar of(const c10::Scalar& v) { return {Mode::kValue, v, {}, nullptr}; }
  static ForeachScalar of_list(at::ArrayRef<c10::Scalar> l) { return {Mode::kList, 0, l, nullptr}; }
  static ForeachScalar of_tensor(const at::Tensor& t) { return {Mode::kTensor, 0, {}, &t}; }
};

// out[i] = FE_<op>(a, b, c) of kernels/foreach.cl over every tensor i: a, b, c are ins[0..2][i];
// out is outs[i], or ins[0][i] (in place) when outs is empty. The tensors are dense, on one ocl
// device, of one floating dtype (see foreach_fast_route). `second_scalar`: binary ops take s as
// their second operand. `found_inf` (a float32 tensor on the device): set to 1 when an element of
// ins[0] is not finite.
void foreach_apply(const char* op, const std::vector<at::TensorList>& ins, at::TensorList outs,
                   const ForeachScalar& s, const c10::Scalar& alpha = 1, bool second_scalar = false,
                   const at::Tensor* found_inf = nullptr);

// Whether the multi-tensor kernels can run these lists: ATen's fast-route conditions (one device
// and dtype, dense, same sizes and strides, scalars that do not change the result dtype), on an
// ocl device, a floating dtype the device supports, 32-bit element indices.
bool foreach_fast_route(const std::vector<at::TensorList>& lists,
                        at::ArrayRef<c10::Scalar> scalars = {});

// Whether an in-place op writing `outs` while reading `ins` could see another tensor's writes
// (tensors sharing memory other than an input that is its own output), so that running all
// tensors at once would differ from the CPU's one-after-another.
bool foreach_has_hazard(at::TensorList outs, const std::vector<at::TensorList>& ins);

}  // namespace torch_ocl
