// Streams: each is an in-order OpenCL command queue of one device. Stream id 0 is the default
// stream; ids 1..kPoolSize come from a lazily created pool handed out round-robin.
//
// Thread-safety contract of the runtime (tests/runtime/test_threads.py checks it):
// - Any thread may enqueue on any stream at any time; the current stream is per thread, and every
//   thread starts on the default stream, so threads share it unless they pick their own.
// - On one stream, work runs in the order its enqueue calls returned, across threads. When thread
//   A's op happens-before thread B's op in the C++ sense (a join, a queue hand-off, a lock), B's
//   op runs after A's, pending tiny-op batches included (runtime/Batch.h).
// - A read (.cpu(), .item()) waits for everything enqueued on its stream before it, by any thread.
// - Ops of different threads on the same stream, not ordered by the program, run in some order;
//   writing one tensor from two threads without ordering them is a race, as on CUDA.
// - The allocator, program cache, generators and error words are safe to use from many threads.
// - Kernel launches of different threads take no common lock (each thread sets arguments on its
//   own kernel objects, runtime/Program.h), and no lock of the runtime is held while the host
//   waits for the device (a read, a synchronize), so a waiting thread holds up no other.
#pragma once

#include <c10/core/Stream.h>

#include "runtime/OpenCL.h"

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
// The queue without enqueueing the stream's pending work (for the flusher of runtime/Batch.h).
cl_command_queue raw_queue_of(c10::Stream s);
// The current stream's queue of `device` (the current device if -1).
cl_command_queue current_queue(int device = -1);

// Submits work so that the device makes progress without the host waiting.
void flush(cl_command_queue q);

// Has the driver allocate a new buffer on `device` now (a migration on the current stream's queue,
// without waiting), keeping its contents if `keep_contents` (CL_MEM_COPY_HOST_PTR), not otherwise;
// returns the driver's error code (a driver that allocates late reports a lack of memory here).
// Call it before any other thread can see the buffer: drivers may allocate a buffer at its first
// use, and PoCL 3.0 does so without a lock, so first uses from two threads at once reset each
// other's state (lost writes, or a crash on its next command).
cl_int place_buffer(int device, cl_mem mem, bool keep_contents);
// Counts an enqueued command and flushes every few commands.
void note_enqueued(cl_command_queue q);

bool query_stream(c10::Stream s);
void synchronize_stream(c10::Stream s, const char* why);
void synchronize_device(int device, const char* why);  // every stream created on the device

}  // namespace torch_ocl
