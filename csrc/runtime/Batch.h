// Work recorded for a stream but not yet enqueued. The op layer may keep work back instead of
// enqueueing it at once (ops/ElementwiseBatch.cpp gathers tiny elementwise ops into one launch);
// the runtime makes that invisible: a stream's pending work is enqueued, through the flusher the
// op layer registers, before anything else is enqueued on that stream (queue_of) and before
// device memory is released, so stream order, events, queries and host reads see it exactly as
// if it had been enqueued when recorded. The runtime knows nothing of what the work is.
#pragma once

#include <cstdint>

namespace torch_ocl {

// Enqueues the pending work of one stream; called with no runtime lock held.
using PendingFlusher = void (*)(int device, int64_t stream_id);
void set_pending_flusher(PendingFlusher flusher);

// The op layer marks a stream once it has recorded work for it, and clears the mark only after
// that work is on the queue (or failed): a thread that sees no mark knows every piece of work
// recorded before it is already enqueued, so its own enqueue lands behind it.
void mark_pending(int device, int64_t stream_id);
void clear_pending(int device, int64_t stream_id);

// Enqueues the pending work of stream `stream_id` of `device`, if there is any.
void batch_flush(int device, int64_t stream_id);
// Enqueues the pending work of every stream (before device memory is released).
void batch_flush_all();

}  // namespace torch_ocl
