// Timing events: torch.ocl.Event(enable_timing=True) and the legacy profiler's markers.
#pragma once

#include "runtime/OpenCL.h"

namespace torch_ocl {

// Enqueues on `q` (a queue of `device`) a command that completes when every command enqueued
// before it has, and returns its event, whose CL_PROFILING_COMMAND_END is that time. A
// clEnqueueMarker would do, but some implementations give markers no timestamps (Intel's CPU
// runtime reports 0 for START and END), so this is a one-work-item kernel that does nothing.
cl_event enqueue_timing_marker(int device, cl_command_queue q);

}  // namespace torch_ocl
