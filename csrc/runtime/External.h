// What the runtime offers to code that shares OpenCL objects with torch-ocl's (the interop
// layer, csrc/interop/): finding the device of a context, giving an outside buffer a device
// address so that tensors can live in it, and handing a stream's queue to outside code.
#pragma once

#include "runtime/OpenCL.h"
#include <c10/core/Allocator.h>
#include <c10/core/Stream.h>

#include <cstddef>

namespace torch_ocl {

// The index of the device whose context is `context`, or -1 if it is none of ours.
int device_of_context(cl_context context);

// A DataPtr on `device` for `nbytes` of the outside buffer `mem` (which must belong to the
// device's context): the buffer is retained, gets a range of the device's address space (so that
// buffer_at() and every kernel find it), and is released by the DataPtr's deleter, which then
// calls on_free(on_free_context) (if not null) to let the owner go. The caching allocator's
// statistics do not count it: the memory is not the allocator's.
using ExternalFree = void (*)(void* context);
c10::DataPtr wrap_external_buffer(int device, cl_mem mem, size_t nbytes, ExternalFree on_free,
                                  void* on_free_context);

// How many outside buffers are wrapped now (a test hook for their lifetime).
int external_buffer_count();

// Marks a stream's queue as shared with outside code, which may enqueue on it without telling
// the runtime: from then on query() asks the queue itself instead of trusting its own count of
// submitted commands.
// Work that the op layer holds back (tiny-op batches, runtime/Batch.h) is enqueued when the
// runtime hands out the queue, but outside code may keep the queue and enqueue later: on a shared
// stream the op layer enqueues everything at once instead (stream_queue_shared).
// `shared` false undoes it (a test hook: the caller promises outside code is done with the queue).
void share_stream_queue(c10::Stream s, bool shared = true);
bool stream_queue_shared(c10::Stream s);

}  // namespace torch_ocl
