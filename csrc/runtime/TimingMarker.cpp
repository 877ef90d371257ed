#include "runtime/TimingMarker.h"

#include "runtime/OclApi.h"
#include "runtime/Program.h"

namespace torch_ocl {

cl_event enqueue_timing_marker(int device, cl_command_queue q) {
  // No arguments: one kernel object serves every thread (only clSetKernelArg is not thread-safe).
  cl_kernel k = get_kernel(device, "timing.cl", "timing_marker", "");
  const size_t one = 1;
  cl_event event = nullptr;
  OCL_CHECK(cl().clEnqueueNDRangeKernel(q, k, 1, nullptr, &one, &one, 0, nullptr, &event));
  return event;
}

}  // namespace torch_ocl
