// where and masked_fill_: selecting between operands with a condition (the `where` kernel).
// equal: eq + all, read back (its result is a host bool, as on CUDA).
// They keep CPU scalar operands as kernel arguments (ATen's where_self_out would copy them to
// the device first).
#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorIterator.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include "ops/Elementwise.h"

namespace torch_ocl {
namespace {

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
    launch_elementwise(iter, EwId::where, p);
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
  launch_elementwise(iter, EwId::where, p);
  return out;
}

at::Tensor where(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  const at::ScalarType result = at::result_type(self, other);
  at::Tensor out = at::empty(
      {0}, self.options().dtype(result).device(self.is_cpu() ? other.device() : self.device()));
  return where_out(cond, self, other, out);
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
  launch_elementwise(iter, EwId::where, p);
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

// torch.equal: same shape and equal elements (NaN equals nothing), in the promoted dtype.
bool equal_impl(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(),
              "Cannot compare two tensors on different devices. Got: ", self.device(), " and ",
              other.device());
  if (!self.is_same_size(other)) return false;
  if (self.numel() == 0) return true;
  return at::eq(self, other).all().item<bool>();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("equal", equal_impl);
  m.impl("where.self", where);
  m.impl("where.self_out", where_out);
  m.impl("masked_fill_.Scalar", masked_fill_scalar);
  m.impl("masked_fill_.Tensor", masked_fill_tensor);
}

}  // namespace torch_ocl
