// The ocl allocator's history for torch.ocl.memory._record_memory_history() / _snapshot(), in
// the format of torch.cuda.memory._snapshot() that PyTorch's memory visualiser
// (https://pytorch.org/memory_viz, torch.cuda._memory_viz) reads: every allocation, free,
// segment allocation and free and out-of-memory error with the Python stack that caused it, and
// the allocator's segments and blocks at the time of the snapshot, each live block with the
// stack that allocated it.
//
// Stacks are gathered with torch's CapturedTraceback (the Python unwinder torch registers; no
// CPython API here) by MemoryContext, before the allocator takes its lock: gathering takes the
// GIL, and a thread that holds the GIL may be waiting for that lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace c10 {
struct GatheredContext;
}  // namespace c10

namespace torch_ocl::profiler {

enum class MemoryAction : uint8_t { kAlloc, kFree, kSegmentAlloc, kSegmentFree, kOom };

namespace detail {
extern std::atomic<bool> g_memory_history;
}  // namespace detail

inline bool memory_history_enabled() {
  return detail::g_memory_history.load(std::memory_order_relaxed);
}

// While alive on a thread (and history is on), the allocator's events of that thread carry the
// stack gathered when it was made.
class MemoryContext {
 public:
  MemoryContext();
  ~MemoryContext();
  MemoryContext(const MemoryContext&) = delete;
  MemoryContext& operator=(const MemoryContext&) = delete;

 private:
  std::shared_ptr<c10::GatheredContext> context_;
  std::shared_ptr<c10::GatheredContext>* previous_ = nullptr;
  bool active_ = false;
};

// Records an event of the allocator (called with its lock held; cheap when history is off). For
// kOom, `address` is the device's free memory as the allocator sees it.
void note_memory_slow(MemoryAction action, int device, uint64_t address, uint64_t size, int stream);
inline void note_memory(MemoryAction action, int device, uint64_t address, uint64_t size,
                        int stream) {
  if (memory_history_enabled()) note_memory_slow(action, device, address, size, stream);
}

// Starts (max_entries > 0; trace entries beyond it drop the oldest) or stops recording; stopping
// also forgets the recorded trace and stacks.
void set_memory_history(bool enabled, int64_t max_entries, bool stacks);

// The snapshot as JSON (the visualiser's pickle holds the same dict).
std::string memory_snapshot_json();

}  // namespace torch_ocl::profiler
