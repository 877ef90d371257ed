// Streams: each is an in-order OpenCL command queue of one device. Stream id 0 is the default
// stream; ids 1..kPoolSize come from a lazily created pool handed out round-robin.
#pragma once

#include <CL/cl.h>
#include <c10/core/Stream.h>

namespace torch_ocl {

constexpr int kMaxDevices = 64;
constexpr int kStreamPoolSize = 16;

c10::Stream default_stream(int device);
c10::Stream current_stream(int device);         // this thread's current stream on `device`
c10::Stream set_current_stream(c10::Stream s);  // returns the previous one for its device
c10::Stream stream_from_pool(int device);
// The stream's queue, with the stream's pending batch of tiny ops (runtime/Batch.h) enqueued
// first: call it to enqueue on, query or wait for the stream.
cl_command_queue queue_of(c10::Stream s);
// The queue without enqueueing the pending batch (for runtime/Batch.cpp).
cl_command_queue raw_queue_of(c10::Stream s);
// The current stream's queue of `device` (the current device if -1).
cl_command_queue current_queue(int device = -1);

// Submits work so that the device makes progress without the host waiting.
void flush(cl_command_queue q);
// Counts an enqueued command and flushes every few commands.
void note_enqueued(cl_command_queue q);

bool query_stream(c10::Stream s);
void synchronize_stream(c10::Stream s, const char* why);
void synchronize_device(int device, const char* why);  // every stream created on the device

}  // namespace torch_ocl
