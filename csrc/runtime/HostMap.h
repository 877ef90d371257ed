// Mapping a range of a device buffer into the host's address space (clEnqueueMapBuffer), so that
// host code (a communication library, for instance) can work on device memory in place instead
// of on a copy. Commands are enqueued on a stream without the host waiting: a mapped pointer may
// be used once the work enqueued on that stream so far has completed (record an event after the
// map and wait for it), and must be unmapped on a stream before device work uses the range again.
#pragma once

#include <c10/core/Stream.h>

#include <cstddef>

#include "runtime/OpenCL.h"

namespace torch_ocl {

// Whether mapping a buffer of `device` hands the host the device memory itself, with no copy in
// either direction: a CPU device whose memory is the host's (CL_DEVICE_TYPE_CPU with
// CL_DEVICE_HOST_UNIFIED_MEMORY: PoCL's CPU device, Intel's CPU runtime). Integrated GPUs share
// the host's memory too, but whether a map copies depends on how the buffer was created and
// aligned, so they answer false here. Answered once per device.
bool host_map_is_zero_copy(int device);

// Enqueues a map of bytes [offset, offset + nbytes) of `mem` on stream `s` (after everything
// enqueued there so far, pending tiny-op batches included) and submits it, without waiting.
// `write`: the host will write the range (CL_MAP_READ | CL_MAP_WRITE), with `invalidate` the host
// overwrites all of it and its old contents need not be read (CL_MAP_WRITE_INVALIDATE_REGION);
// neither: read only (CL_MAP_READ).
void* enqueue_map(c10::Stream s, cl_mem mem, size_t offset, size_t nbytes, bool write,
                  bool invalidate);
// Enqueues the unmap of `ptr` (from enqueue_map on `mem`) on stream `s` and submits it, without
// waiting: device work enqueued on `s` afterwards sees what the host wrote.
void enqueue_unmap(c10::Stream s, cl_mem mem, void* ptr);

}  // namespace torch_ocl
