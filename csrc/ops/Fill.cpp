// fill_ and zero_: a nullary elementwise kernel (or a broadcast copy for a device-tensor value,
// which keeps the value on the device instead of reading it back).
//
// A fill is idempotent, so like ATen's CPU and CUDA kernels it accepts a tensor whose elements
// share memory (an expanded tensor: `torch.zeros(3).expand(4, 3).fill_(2)`). Each memory
// location needs writing only once: dimensions of stride 0 shrink to one element first, so no
// two work-items write the same element of an expanded tensor.
#include <ATen/native/TensorIterator.h>
#include <ATen/ops/as_strided_native.h>
#include <torch/library.h>

#include "ops/Elementwise.h"

namespace torch_ocl {
namespace {

// `self` without its broadcast dimensions (stride 0, size > 1): the same memory locations, each
// once per remaining index. Other overlapping layouts (e.g. as_strided with strides smaller than
// sizes) are left as they are; every work-item writes the same value there.
at::Tensor without_broadcast_dims(const at::Tensor& self) {
  bool any = false;
  for (int64_t d = 0; d < self.dim(); ++d) {
    any = any || (self.stride(d) == 0 && self.size(d) > 1);
  }
  if (!any) return self;
  std::vector<int64_t> sizes = self.sizes().vec();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.stride(d) == 0) sizes[d] = std::min<int64_t>(sizes[d], 1);
  }
  return at::native::as_strided_tensorimpl(self, sizes, self.strides(), self.storage_offset());
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  at::TensorBase base = without_broadcast_dims(self);
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(false)  // idempotent: overlapping elements are fine
                  .add_output(base)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .build();
  EwParams p;
  p.p0 = value;
  p.compute = self.scalar_type();
  // The value must fit the dtype ("value cannot be converted to type float without overflow"),
  // except that the CPU fills a one-element half/bfloat16 tensor without a check, so that
  // torch.scalar_tensor(1e39, dtype=torch.half) (and where(c, half_x, 1e39)) is inf there:
  // checking against double lets every value through.
  const bool reduced = self.scalar_type() == at::kHalf || self.scalar_type() == at::kBFloat16;
  if (self.numel() == 1 && reduced) p.param_dtype = at::kDouble;
  launch_elementwise(iter, EwId::fill, p);
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  if (value.device().is_cpu()) return fill_scalar(self, value.item());
  if (self.numel() == 0) return self;
  // A value that is an element of self (x.fill_(x[1])) is read before anything is written.
  const at::Tensor src = self.is_alias_of(value) ? value.clone() : value;
  without_broadcast_dims(self).copy_(src);  // broadcast on the device, no host wait
  return self;
}

at::Tensor& zero_(at::Tensor& self) { return fill_scalar(self, 0); }

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero_);
}

}  // namespace torch_ocl
