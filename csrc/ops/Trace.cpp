// trace: ATen's CPU implementation (trace_cpu) is a loop of its own, no DispatchStub; on the
// device it is the sum of the diagonal view, which our reduction computes with the CPU's dtype
// rules (integers and bool accumulate into int64).
#include <ATen/ops/sum.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

at::Tensor trace(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  // The CPU's kernel takes every dtype but bool.
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool,
                              "\"trace\" not implemented for 'Bool'");
  return at::sum(self.diagonal());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("trace", trace); }

}  // namespace torch_ocl
