// resize_ and storage resizing. Native because the boxed CPU fallback would memcpy device
// handles (and recurse).
#include <ATen/ops/empty.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include "runtime/Allocator.h"
#include "runtime/Launch.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"

namespace torch_ocl {

void resize_storage_bytes(const c10::Storage& storage, size_t newsize) {
  TORCH_CHECK(storage.resizable(), "torch-ocl: trying to resize a storage that is not resizable");
  const c10::Device device = storage.device();
  c10::DeviceGuard guard(device);
  c10::DataPtr fresh = device_allocator()->allocate(newsize);
  const size_t keep = std::min(storage.nbytes(), newsize);
  if (keep > 0) {
    BufferRef src = buffer_at(storage.data());
    BufferRef dst = buffer_at(fresh.get());
    cl_command_queue q = current_queue(device.index());
    OCL_CHECK(cl().clEnqueueCopyBuffer(q, src.mem, dst.mem, src.offset, dst.offset, keep, 0,
                                       nullptr, nullptr));
    note_enqueued(q);
  }
  const_cast<c10::Storage&>(storage).set_data_ptr_noswap(std::move(fresh));
  const_cast<c10::Storage&>(storage).set_nbytes(newsize);
}

namespace {

const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  if (memory_format && *memory_format != at::MemoryFormat::Preserve) {
    impl->empty_tensor_restride(*memory_format);
  }
  const size_t needed =
      impl->numel() == 0 ? 0 : (impl->storage_offset() + impl->numel()) * self.itemsize();
  if (needed > self.storage().nbytes()) {
    // Non-contiguous restrides still fit in storage_offset + numel elements.
    resize_storage_bytes(self.storage(), needed);
  }
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("resize_", resize_); }

}  // namespace torch_ocl
