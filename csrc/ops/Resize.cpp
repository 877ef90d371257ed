// resize_: native because the boxed CPU fallback would memcpy device handles (and recurse). The
// storage itself grows in the allocator (resize_storage_bytes, runtime/Allocator.h).
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "ops/DeterministicFill.h"
#include "runtime/Allocator.h"

namespace torch_ocl {
namespace {

const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  // As on the CPU, a tensor that already has the size keeps its strides (an out= view that is
  // written in place, multinomial's for one).
  if (self.sizes() != size) impl->set_sizes_contiguous(size);
  if (memory_format && *memory_format != at::MemoryFormat::Preserve) {
    impl->empty_tensor_restride(*memory_format);
  }
  const size_t needed =
      impl->numel() == 0 ? 0 : (impl->storage_offset() + impl->numel()) * self.itemsize();
  const size_t old_nbytes = self.storage().nbytes();
  if (needed > old_nbytes) {
    // Non-contiguous restrides still fit in storage_offset + numel elements.
    resize_storage_bytes(self.storage(), needed);
    // As the CPU's and CUDA's resize_: under deterministic algorithms with
    // fill_uninitialized_memory, the grown part is filled (NaN, or the integer dtype's largest).
    if (C10_UNLIKELY(fill_uninitialized_memory())) {
      const int64_t from = static_cast<int64_t>(old_nbytes / self.itemsize());
      const int64_t to = static_cast<int64_t>(needed / self.itemsize());
      if (to > from) {
        at::Tensor grown = at::empty({0}, self.options());
        grown.set_(self.storage(), from, {to - from}, {1});
        fill_uninitialized(grown);
      }
    }
  }
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("resize_", resize_); }

}  // namespace torch_ocl
