// Pending work per stream (runtime/Batch.h).
#include "runtime/Batch.h"

#include <array>
#include <atomic>

#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

constexpr int kNumStreams = kStreamPoolSize + 1;

std::atomic<PendingFlusher> g_flusher{nullptr};
// Set (release) when work is recorded, cleared (release) after it is enqueued, read (acquire)
// without a lock on every enqueue.
std::array<std::array<std::atomic<bool>, kNumStreams>, kMaxDevices> g_pending{};

bool valid(int device, int64_t stream_id) {
  return device >= 0 && device < kMaxDevices && stream_id >= 0 && stream_id < kNumStreams;
}

}  // namespace

void set_pending_flusher(PendingFlusher flusher) {
  g_flusher.store(flusher, std::memory_order_release);
}

void mark_pending(int device, int64_t stream_id) {
  if (valid(device, stream_id)) g_pending[device][stream_id].store(true, std::memory_order_release);
}

void clear_pending(int device, int64_t stream_id) {
  if (valid(device, stream_id))
    g_pending[device][stream_id].store(false, std::memory_order_release);
}

void batch_flush(int device, int64_t stream_id) {
  if (!valid(device, stream_id)) return;
  if (!g_pending[device][stream_id].load(std::memory_order_acquire)) return;
  if (PendingFlusher f = g_flusher.load(std::memory_order_acquire)) f(device, stream_id);
}

void batch_flush_all() {
  for (int d = 0; d < kMaxDevices; ++d)
    for (int s = 0; s < kNumStreams; ++s) batch_flush(d, s);
}

}  // namespace torch_ocl
