// Reading a few values of device data on the host (ops/HostRead.h).
#include "ops/HostRead.h"

#include <c10/core/DeviceGuard.h>

#include "profiler/Record.h"
#include "runtime/Allocator.h"
#include "runtime/DeviceError.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"
#include "runtime/Sync.h"

namespace torch_ocl {

std::vector<int64_t> read_longs(const at::Tensor& t, const char* why) {
  TORCH_INTERNAL_ASSERT(t.scalar_type() == at::kLong && t.is_contiguous());
  std::vector<int64_t> host(static_cast<size_t>(t.numel()));
  if (host.empty()) return host;
  c10::DeviceGuard guard(t.device());
  const int device = t.device().index();
  const BufferRef b = buffer_of(t);
  cl_command_queue q = current_queue(device);
  HostWait wait(why);
  profiler::Recorder rec;
  OCL_CHECK(cl().clEnqueueReadBuffer(q, b.mem, CL_TRUE, b.offset, host.size() * sizeof(int64_t),
                                     host.data(), 0, nullptr, rec.event()));
  rec.copy(profiler::CommandKind::kCopyD2H, device, current_stream(device).id(),
           host.size() * sizeof(int64_t));
  check_device_errors(current_stream(device));
  return host;
}

}  // namespace torch_ocl
