// aten::_has_compatible_shallow_copy_type for ocl tensors. nn.Module._apply (`.to("ocl")`,
// `.cpu()`, `.half()`) swaps a parameter's data in place - keeping the Parameter object, so
// optimizers and tied weights keep pointing at it - only when this op says the old and new
// tensors are compatible. c10's own answer lists CPU, CUDA and the other in-tree dense backends
// but not PrivateUse1, so without this override `.to("ocl")` replaced every parameter with a new
// one: optimizers kept stepping the stale CPU tensors and tied weights came apart.
//
// The op is CompositeImplicitAutograd; a kernel registered directly for PrivateUse1 takes
// precedence for tensors with the PrivateUse1 key (the dispatcher then uses it for
// AutogradPrivateUse1 too), and a call with one CPU and one ocl tensor dispatches here.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

// Dense strided tensors on the CPU or an ocl device can exchange their data in place, as CPU and
// CUDA tensors do.
bool dense_host_or_ocl(const at::Tensor& t) {
  const c10::DeviceType d = t.device().type();
  return t.layout() == c10::kStrided && !t.is_quantized() && !t.is_nested() &&
         (d == c10::DeviceType::CPU || d == c10::DeviceType::PrivateUse1);
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (dense_host_or_ocl(self) && dense_host_or_ocl(from)) return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
}

}  // namespace torch_ocl
