// Pinned host memory: page-aligned host allocations that asynchronous copies may read from or
// write to without a host wait. A block freed while a copy still uses it is reused only after
// the copy's event completes.
#pragma once

#include <c10/core/Allocator.h>

#include "runtime/OpenCL.h"

namespace torch_ocl {

c10::Allocator* host_allocator();
bool is_pinned(const void* ptr);
// Keeps the pinned block holding `ptr` from reuse until `event` completes (takes a reference).
void record_host_use(const void* ptr, cl_event event);

}  // namespace torch_ocl
