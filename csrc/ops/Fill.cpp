// fill_ and zero_: a nullary elementwise kernel (or a broadcast copy for a device-tensor value,
// which keeps the value on the device instead of reading it back).
#include <ATen/native/TensorIterator.h>
#include <torch/library.h>

#include "ops/Elementwise.h"

namespace torch_ocl {
namespace {

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  at::TensorBase base = self;
  auto iter = at::TensorIteratorConfig()
                  .add_output(base)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .build();
  EwParams p;
  p.p0 = value;
  p.compute = self.scalar_type();
  launch_elementwise(iter, "fill", p);
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  if (value.device().is_cpu()) return fill_scalar(self, value.item());
  self.copy_(value);  // broadcast on the device, no host wait
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
