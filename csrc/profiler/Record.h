// What the runtime and the op layer tell the profiler about the commands they enqueue. The
// profiler (profiler/Tracer.h) turns them into device activities for torch.profiler; the code
// that enqueues only says what kind of command it was and on which stream, never which op asked
// for it (the profiler knows that from torch.profiler's correlation ids).
//
// Cost when nothing profiles: one relaxed atomic load per enqueue (recording()), and no
// OpenCL event is requested. Use:
//
//   profiler::Recorder rec;  // notes the host time while recording
//   OCL_CHECK(cl().clEnqueueCopyBuffer(..., rec.event(own_event_or_nullptr)));
//   rec.copy(profiler::CommandKind::kCopyD2D, device, stream_id, nbytes);
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/OpenCL.h"

namespace torch_ocl::profiler {

enum class CommandKind : uint8_t { kKernel, kCopyH2D, kCopyD2H, kCopyD2D, kFill };

namespace detail {
extern std::atomic<bool> g_recording;
}  // namespace detail

// True while a torch.profiler session with the ocl device activity records commands.
inline bool recording() { return detail::g_recording.load(std::memory_order_relaxed); }

// The correlation id of the innermost ATen op running on this thread while recording (0 when
// none or not recording): work recorded now but enqueued later (runtime/Batch.h) keeps it.
uint64_t current_correlation();

// A share of one batched kernel launch: the op that recorded it and its label.
struct BatchPart {
  uint64_t correlation;
  const char* label;  // static storage (an op's name)
};

// Host clock (c10::getTime, nanoseconds since the epoch).
int64_t host_now_ns();

// Records one enqueue. Construct it right before the enqueue call and pass event() to it.
class Recorder {
 public:
  Recorder() : on_(recording()) {
    if (on_) begin_ns_ = host_now_ns();
  }
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  bool on() const { return on_; }
  // The event pointer to give the enqueue call: the caller's own (which the recorder retains),
  // or, while recording, the recorder's; nullptr otherwise.
  cl_event* event(cl_event* own = nullptr) {
    own_ = own;
    return own ? own : (on_ ? &event_ : nullptr);
  }

  // After a successful enqueue: records the command (no-op when not recording).
  void kernel(int device, int64_t stream, cl_kernel k, cl_uint dims, const size_t* global,
              const size_t* local) {
    if (on_) record_kernel(device, stream, k, dims, global, local, nullptr, 0);
  }
  // A batched launch that runs several ops' work: one share per op (parts[0..n)).
  void batch(int device, int64_t stream, cl_kernel k, cl_uint dims, const size_t* global,
             const size_t* local, const BatchPart* parts, size_t n) {
    if (on_) record_kernel(device, stream, k, dims, global, local, parts, n);
  }
  void copy(CommandKind kind, int device, int64_t stream, uint64_t bytes) {
    if (on_) record_copy(kind, device, stream, bytes);
  }

 private:
  cl_event take_event();
  void record_kernel(int device, int64_t stream, cl_kernel k, cl_uint dims, const size_t* global,
                     const size_t* local, const BatchPart* parts, size_t n);
  void record_copy(CommandKind kind, int device, int64_t stream, uint64_t bytes);

  bool on_;
  int64_t begin_ns_ = 0;
  cl_event event_ = nullptr;
  cl_event* own_ = nullptr;
};

}  // namespace torch_ocl::profiler
