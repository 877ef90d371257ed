// Tensor.record_stream(s): keep the tensor's memory from reuse until the work queued on `s` so
// far has finished (the allocator defers the free with a marker on that stream).
#include <torch/library.h>

#include "runtime/Allocator.h"

namespace torch_ocl {
namespace {

void record_stream_op(at::Tensor& self, at::Stream s) {
  TORCH_CHECK(s.device_type() == c10::DeviceType::PrivateUse1,
              "record_stream: expected an ocl stream, got ", s);
  record_stream(self.storage().data_ptr(), s);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("record_stream", record_stream_op); }

}  // namespace torch_ocl
