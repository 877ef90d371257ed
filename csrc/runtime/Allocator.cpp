#include "runtime/Allocator.h"

#include <ATen/core/TensorBase.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_set>

#include "profiler/MemoryHistory.h"
#include "profiler/Record.h"
#include "runtime/Batch.h"
#include "runtime/Device.h"
#include "runtime/DeviceAddress.h"
#include "runtime/External.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

constexpr size_t kRound = 512;
constexpr size_t kSmallLimit = 1 << 20;     // requests up to 1 MiB share small segments
constexpr size_t kSmallSegment = 2 << 20;   // 2 MiB
constexpr size_t kLargeRound = 2 << 20;     // large segments are multiples of 2 MiB
constexpr size_t kMinLargeSplit = 1 << 20;  // split a large block only if >1 MiB remains
static_assert(kMaxDevices <= kDeviceAddressMaxDevices, "device addresses hold the device index");

struct Segment;

struct Block {
  Segment* seg = nullptr;
  size_t offset = 0;
  size_t size = 0;
  size_t requested = 0;
  int stream = 0;
  bool allocated = false;
  bool small = false;
  Block* prev = nullptr;
  Block* next = nullptr;
  std::unordered_set<int64_t> other_streams;  // stream ids recorded with record_stream
  std::vector<cl_event> pending;              // markers that must complete before reuse
};

struct Segment {
  int device = 0;
  cl_mem mem = nullptr;
  uint64_t base = 0;
  size_t size = 0;
  bool small = false;      // of the small pool (2 MiB segments shared by requests up to 1 MiB)
  Block* first = nullptr;  // the block at offset 0 (the others follow through next)
  bool external = false;   // an outside buffer (wrap_external_buffer): no blocks, not counted
};

struct BlockLess {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    if (a->size != b->size) return a->size < b->size;
    return a->seg->base + a->offset < b->seg->base + b->offset;
  }
};

struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void add(int64_t n) {
    current += n;
    allocated += n;
    peak = std::max(peak, current);
  }
  void sub(int64_t n) {
    current -= n;
    freed += n;
  }
};

// A statistic counted for all blocks and apart for each pool, as CUDA's allocator counts it
// (c10::CachingAllocator::StatType: AGGREGATE, SMALL_POOL, LARGE_POOL).
struct PoolStat {
  std::array<Stat, 3> of;
  void add(bool small, int64_t n) {
    of[0].add(n);
    of[small ? 1 : 2].add(n);
  }
  void sub(bool small, int64_t n) {
    of[0].sub(n);
    of[small ? 1 : 2].sub(n);
  }
  const Stat& all() const { return of[0]; }
};

// The allocator's statistics, with CUDA's names and meanings (torch.cuda.memory_stats):
// allocation/allocated_bytes: blocks held by tensors; active/active_bytes: those plus freed blocks
// that wait for other streams (record_stream) before reuse; segment/reserved_bytes: device
// buffers; inactive_split/inactive_split_bytes: free blocks in partly used segments (the memory
// empty_cache cannot release); requested_bytes: what tensors asked for, before rounding.
struct Stats {
  PoolStat allocation, allocated_bytes, active, active_bytes, segment, reserved_bytes,
      inactive_split, inactive_split_bytes, requested_bytes;
  template <class F>
  void for_each(F&& f) {
    for (PoolStat* s : {&allocation, &allocated_bytes, &active, &active_bytes, &segment,
                        &reserved_bytes, &inactive_split, &inactive_split_bytes, &requested_bytes})
      f(*s);
  }
};

struct DeviceState {
  std::set<Block*, BlockLess> small_free, large_free;
  std::map<uint64_t, Segment*> segments;  // by base address
  std::vector<Block*> pending_free;       // waiting for other streams
  uint64_t next_offset = 0;               // of the next segment in the device's address range
  Stats stats;
  int64_t num_alloc_retries = 0, num_ooms = 0, num_device_alloc = 0, num_device_free = 0;
};

// A free block that is not its whole segment: it keeps the segment from being released.
bool is_split(const Block* b) { return !(b->offset == 0 && b->size == b->seg->size); }

// Every insertion into and removal from a free pool goes through these two (inactive_split).
void pool_insert(DeviceState& st, Block* b) {
  (b->small ? st.small_free : st.large_free).insert(b);
  if (is_split(b)) {
    st.stats.inactive_split.add(b->small, 1);
    st.stats.inactive_split_bytes.add(b->small, static_cast<int64_t>(b->size));
  }
}
void pool_erased(DeviceState& st, const Block* b) {
  if (is_split(b)) {
    st.stats.inactive_split.sub(b->small, 1);
    st.stats.inactive_split_bytes.sub(b->small, static_cast<int64_t>(b->size));
  }
}

std::recursive_mutex g_mutex;
std::array<DeviceState, kMaxDevices> g_state;

size_t round_size(size_t n) { return n < kRound ? kRound : (n + kRound - 1) / kRound * kRound; }

void release_segment(DeviceState& st, Segment* seg) {
  batch_flush_all();  // a pending batch may name this buffer
  profiler::note_memory(profiler::MemoryAction::kSegmentFree, seg->device, seg->base, seg->size, 0);
  st.segments.erase(seg->base);
  st.stats.reserved_bytes.sub(seg->small, static_cast<int64_t>(seg->size));
  st.stats.segment.sub(seg->small, 1);
  st.num_device_free++;
  cl().clReleaseMemObject(seg->mem);
  delete seg;
}

// Frees every cached segment of the device that has no allocated block.
void release_cached(DeviceState& st) {
  for (auto* pool : {&st.small_free, &st.large_free}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (!is_split(b)) {
        it = pool->erase(it);
        release_segment(st, b->seg);
        delete b;
      } else {
        ++it;
      }
    }
  }
}

void insert_free(DeviceState& st, Block* b) {
  // Merge with free neighbours of the same segment.
  auto& pool = b->small ? st.small_free : st.large_free;
  for (Block* n : {b->prev, b->next}) {
    if (!n || n->allocated || !n->pending.empty() || pool.count(n) == 0) continue;
    pool.erase(n);
    pool_erased(st, n);
    if (n == b->prev) {
      b->offset = n->offset;
      b->prev = n->prev;
      if (b->prev) b->prev->next = b;
    } else {
      b->next = n->next;
      if (b->next) b->next->prev = b;
    }
    b->size += n->size;
    delete n;
  }
  if (b->offset == 0) b->seg->first = b;
  pool_insert(st, b);
}

void process_pending(DeviceState& st) {
  for (auto it = st.pending_free.begin(); it != st.pending_free.end();) {
    Block* b = *it;
    bool done = true;
    for (cl_event e : b->pending) {
      cl_int status = CL_QUEUED;
      cl().clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
      if (status != CL_COMPLETE && status >= 0) done = false;
    }
    if (!done) {
      ++it;
      continue;
    }
    for (cl_event e : b->pending) cl().clReleaseEvent(e);
    b->pending.clear();
    it = st.pending_free.erase(it);
    st.stats.active.sub(b->small, 1);
    st.stats.active_bytes.sub(b->small, static_cast<int64_t>(b->size));
    insert_free(st, b);
  }
}

[[noreturn]] void raise_oom(int device, DeviceState& st, size_t size, const std::string& why) {
  st.num_ooms++;
  const DeviceInfo& info = device_info(device);
  const auto reserved = static_cast<uint64_t>(st.stats.reserved_bytes.all().current);
  profiler::note_memory(profiler::MemoryAction::kOom, device,
                        info.global_mem > reserved ? info.global_mem - reserved : 0, size, 0);
  TORCH_CHECK_WITH(OutOfMemoryError, false, "torch-ocl: out of memory on ocl:", device, " (",
                   info.name, "): tried to allocate ", size, " bytes; ", why, ". ",
                   st.stats.allocated_bytes.all().current, " bytes are allocated by tensors and ",
                   st.stats.reserved_bytes.all().current, " reserved by the caching allocator of ",
                   info.global_mem,
                   " on the device. Free tensors you no longer need, call "
                   "torch.ocl.empty_cache(), or use smaller batches.");
}

Segment* create_segment(int device, DeviceState& st, size_t size, bool small) {
  const DeviceInfo& info = device_info(device);
  if (size > info.max_alloc) {
    raise_oom(device, st, size,
              "one buffer on this device can hold at most " + std::to_string(info.max_alloc) +
                  " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool fits =
        static_cast<uint64_t>(st.stats.reserved_bytes.all().current) + size <= info.global_mem;
    cl_int err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    cl_mem mem = nullptr;
    if (fits) mem = cl().clCreateBuffer(info.context, CL_MEM_READ_WRITE, size, nullptr, &err);
    if (err == CL_SUCCESS) {
      // Placed while no other thread knows the buffer (see place_buffer).
      try {
        err = place_buffer(device, mem, false);
      } catch (...) {
        cl().clReleaseMemObject(mem);
        throw;
      }
      if (err != CL_SUCCESS) cl().clReleaseMemObject(mem);
    }
    if (err == CL_SUCCESS) {
      // Segments get increasing addresses in the device's range, with a gap between them.
      const uint64_t range = (size + kLargeRound) / kLargeRound * kLargeRound;
      if (st.next_offset + range > kDeviceAddressSpan) {
        cl().clReleaseMemObject(mem);
        raise_oom(device, st, size, "the device's address range is used up");
      }
      auto* seg = new Segment{device, mem, device_range_base(device) + st.next_offset, size, small};
      st.next_offset += range;
      st.segments[seg->base] = seg;
      st.stats.reserved_bytes.add(small, static_cast<int64_t>(size));
      st.stats.segment.add(small, 1);
      st.num_device_alloc++;
      profiler::note_memory(profiler::MemoryAction::kSegmentAlloc, device, seg->base, size, 0);
      return seg;
    }
    if (attempt == 0) {
      st.num_alloc_retries++;
      release_cached(st);
      continue;
    }
    raise_oom(device, st, size,
              fits ? std::string("allocating the buffer failed with ") + cl_error_name(err)
                   : "the device has " + std::to_string(info.global_mem) + " bytes in all");
  }
  return nullptr;  // unreachable
}

Block* allocate_block(int device, size_t requested, int stream) {
  DeviceState& st = g_state[device];
  if (!st.pending_free.empty()) process_pending(st);
  const size_t size = round_size(requested);
  const bool small = size <= kSmallLimit;
  auto& pool = small ? st.small_free : st.large_free;
  Segment probe_seg{device, nullptr, 0, 0};
  Block probe;
  probe.seg = &probe_seg;
  probe.size = size;
  probe.stream = stream;
  auto it = pool.lower_bound(&probe);
  Block* b = nullptr;
  if (it != pool.end() && (*it)->stream == stream) {
    b = *it;
    pool.erase(it);
    pool_erased(st, b);
  } else {
    const size_t seg_size =
        small ? kSmallSegment : (size + kLargeRound - 1) / kLargeRound * kLargeRound;
    Segment* seg = create_segment(device, st, seg_size, small);
    b = new Block;
    b->seg = seg;
    b->size = seg_size;
    b->stream = stream;
    b->small = small;
    seg->first = b;
  }
  const size_t remaining = b->size - size;
  if ((small && remaining >= kRound) || (!small && remaining > kMinLargeSplit)) {
    auto* rest = new Block;
    rest->seg = b->seg;
    rest->offset = b->offset + size;
    rest->size = remaining;
    rest->stream = stream;
    rest->small = small;
    rest->prev = b;
    rest->next = b->next;
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    insert_free(st, rest);
  }
  b->allocated = true;
  b->requested = requested;
  const auto bytes = static_cast<int64_t>(b->size);
  st.stats.allocation.add(small, 1);
  st.stats.allocated_bytes.add(small, bytes);
  st.stats.active.add(small, 1);
  st.stats.active_bytes.add(small, bytes);
  st.stats.requested_bytes.add(small, static_cast<int64_t>(requested));
  return b;
}

// ---------------------------------------------------------------------------------------------
// Freeing. A tensor's memory is freed from destructors, where an exception ends the process:
// nothing on this path throws. A failure is reported once per process on stderr, and the block is
// leaked (kept out of every pool, so it is never reused; its segment stays reserved).

std::atomic<int> g_injected_free_failures{0};  // test hook: inject_free_failures()

// torch.profiler(profile_memory=True) and its memory timeline see each allocation (size > 0)
// and free (size < 0) with the device's totals after it; a no-op unless a profiler listens on
// this thread. Called with the allocator's lock held, so that reports of one address stay in
// order (a free before the reuse of its block).
void report_to_profiler(void* addr, int64_t size, const DeviceState& st, int device) noexcept {
  try {
    c10::reportMemoryUsageToProfiler(addr, size,
                                     static_cast<size_t>(st.stats.allocated_bytes.all().current),
                                     static_cast<size_t>(st.stats.reserved_bytes.all().current),
                                     c10::Device(c10::DeviceType::PrivateUse1, device));
  } catch (...) {
  }
}

void report_free_failure(const std::exception* e) noexcept {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  try {
    const auto* c10_error = dynamic_cast<const c10::Error*>(e);
    const char* what = c10_error ? c10_error->what_without_backtrace()
                       : e       ? e->what()
                                 : "an unknown error";
    TORCH_WARN("torch-ocl: freeing device memory failed (", what,
               "); the block is leaked, not reused. Further failures of this kind are not "
               "reported.");
  } catch (...) {
  }
}

// Simulates a failure of the free path's next OpenCL step (see inject_free_failures).
void maybe_injected_failure() {
  int n = g_injected_free_failures.load();
  while (n > 0 && !g_injected_free_failures.compare_exchange_weak(n, n - 1)) {
  }
  TORCH_CHECK(n <= 0, "torch-ocl: injected failure of the free path (test hook)");
}

// Enqueues a marker on every other stream that used `b` (record_stream), so that `b` is reused
// only once they are done with it. Throws; on failure releases the markers it made.
void mark_other_streams(Block* b) {
  try {
    for (int64_t sid : b->other_streams) {
      maybe_injected_failure();
      const c10::Stream s(c10::Stream::UNSAFE,
                          c10::Device(c10::DeviceType::PrivateUse1, b->seg->device), sid);
      cl_command_queue q = queue_of(s);
      cl_event marker = nullptr;
      OCL_CHECK(cl().clEnqueueMarkerWithWaitList(q, 0, nullptr, &marker));
      try {
        b->pending.push_back(marker);
      } catch (...) {
        cl().clReleaseEvent(marker);
        throw;
      }
      flush(q);
    }
  } catch (...) {
    for (cl_event e : b->pending) cl().clReleaseEvent(e);
    b->pending.clear();
    throw;
  }
}

void free_block(Block* b) noexcept {
  try {
    profiler::MemoryContext context;  // the stack, for _record_memory_history (before the lock)
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    DeviceState& st = g_state[b->seg->device];
    b->allocated = false;
    const auto bytes = static_cast<int64_t>(b->size);
    st.stats.allocation.sub(b->small, 1);
    st.stats.allocated_bytes.sub(b->small, bytes);
    st.stats.requested_bytes.sub(b->small, static_cast<int64_t>(b->requested));
    report_to_profiler(reinterpret_cast<void*>(b->seg->base + b->offset),
                       -static_cast<int64_t>(b->size), st, b->seg->device);
    profiler::note_memory(profiler::MemoryAction::kFree, b->seg->device, b->seg->base + b->offset,
                          b->size, b->stream);
    try {
      if (!b->other_streams.empty() && !in_bad_fork()) {
        mark_other_streams(b);
        b->other_streams.clear();
        st.pending_free.push_back(b);  // still active until the other streams are done
        return;
      }
      st.stats.active.sub(b->small, 1);
      st.stats.active_bytes.sub(b->small, bytes);
      insert_free(st, b);
    } catch (const std::exception& e) {
      // The block stays out of every pool (insert_free adds it last): leaked, never reused.
      report_free_failure(&e);
    }
  } catch (const std::exception& e) {
    report_free_failure(&e);
  } catch (...) {
    report_free_failure(nullptr);
  }
}

void delete_block(void* ctx) noexcept { free_block(static_cast<Block*>(ctx)); }

// A c10::DeviceAllocator, so that torch.accelerator's memory functions (memory_allocated,
// memory_stats, empty_cache, get_memory_info, ...) reach this allocator as they reach CUDA's.
struct OclAllocator final : public c10::DeviceAllocator {
  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t) override { empty_cache(); }
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    record_stream(ptr, stream);
  }
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    reset_accumulated_memory_stats(device);
  }
  void resetPeakStats(c10::DeviceIndex device) override { reset_peak_memory_stats(device); }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    return memory_info(device);
  }

  c10::DataPtr allocate(size_t n) override {
    const int device = current_device();
    const c10::Device dev(c10::DeviceType::PrivateUse1, device);
    if (n == 0) return {nullptr, nullptr, &c10::detail::deleteNothing, dev};
    device_info(device);  // validates availability, index and fork state
    TORCH_CHECK(device < kMaxDevices,
                "torch-ocl: the allocator handles ocl:0 to ocl:", kMaxDevices - 1,
                ", not ocl:", device);
    const int stream = static_cast<int>(current_stream(device).id());
    profiler::MemoryContext context;  // the stack, for _record_memory_history (before the lock)
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    Block* b = allocate_block(device, n, stream);
    void* addr = reinterpret_cast<void*>(b->seg->base + b->offset);
    const DeviceState& st = g_state[device];
    report_to_profiler(addr, static_cast<int64_t>(b->size), st, device);
    profiler::note_memory(profiler::MemoryAction::kAlloc, device, b->seg->base + b->offset, b->size,
                          stream);
    return {addr, b, &delete_block, dev};
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count == 0) return;
    BufferRef d = buffer_at(dest), s = buffer_at(src);
    const int device = current_device();
    cl_command_queue q = current_queue(device);
    profiler::Recorder rec;
    OCL_CHECK(cl().clEnqueueCopyBuffer(q, s.mem, d.mem, s.offset, d.offset, count, 0, nullptr,
                                       rec.event()));
    rec.copy(profiler::CommandKind::kCopyD2D, device, current_stream(device).id(), count);
    note_enqueued(q);
  }
};

OclAllocator g_allocator;

}  // namespace

c10::Allocator* device_allocator() { return &g_allocator; }

BufferRef buffer_at(const void* device_ptr) {
  const auto addr = reinterpret_cast<uint64_t>(device_ptr);
  const int device = device_of_address(addr);
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "torch-ocl: ", device_ptr,
              " is not an ocl device address");
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  auto& segs = g_state[device].segments;
  auto it = segs.upper_bound(addr);
  TORCH_CHECK(it != segs.begin(), "torch-ocl: unknown device address ", device_ptr);
  --it;
  Segment* seg = it->second;
  TORCH_CHECK(addr < seg->base + seg->size, "torch-ocl: unknown device address ", device_ptr);
  return {seg->mem, addr - seg->base, device};
}

BufferRef buffer_of(const at::TensorBase& t) {
  // Ops whose registration has no device check of its own (ATen's generated wrappers check only
  // for CUDA) reach here with the caller's CPU tensor: name the problem as PyTorch does.
  TORCH_CHECK(
      !t.defined() || t.device().type() == c10::DeviceType::PrivateUse1,
      "Expected all tensors to be on the same device, but found at least two devices, ",
      c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(current_device())),
      " and ", t.device(), "! (torch-ocl: an ocl op was given a tensor on ", t.device(),
      "; move it with .to(\"ocl\"), or the ocl tensors to ", t.device(), ")");
  const c10::Storage& storage = t.storage();
  const c10::DataPtr& dp = storage.data_ptr();
  auto* b = static_cast<Block*>(dp.get_context());
  if (!b || dp.get_deleter() != &delete_block) {
    if (!dp.get()) return {};
    return buffer_at(static_cast<const char*>(dp.get()) + t.storage_offset() * t.itemsize());
  }
  return {b->seg->mem, b->offset + static_cast<uint64_t>(t.storage_offset()) * t.itemsize(),
          b->seg->device};
}

BufferRef buffer_in(const at::TensorBase& t, const void* ptr) {
  const c10::DataPtr& dp = t.storage().data_ptr();
  auto* b = static_cast<Block*>(dp.get_context());
  if (!b || dp.get_deleter() != &delete_block) return buffer_at(ptr);
  const auto delta = static_cast<const char*>(ptr) - static_cast<const char*>(dp.get());
  return {b->seg->mem, b->offset + static_cast<uint64_t>(delta), b->seg->device};
}

void record_stream(const c10::DataPtr& ptr, c10::Stream stream) {
  if (ptr.get_deleter() != &delete_block) return;
  auto* b = static_cast<Block*>(ptr.get_context());
  // Another device's streams cannot use this memory; an invalid id is refused here rather than
  // found when the memory is freed.
  if (stream.device_type() != c10::DeviceType::PrivateUse1 ||
      stream.device_index() != b->seg->device)
    return;
  TORCH_CHECK(stream.id() >= 0 && stream.id() <= kStreamPoolSize, "torch-ocl: invalid stream ",
              stream);
  if (stream.id() == b->stream) return;
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  b->other_streams.insert(stream.id());
}

void resize_storage_bytes(const c10::Storage& storage, size_t newsize) {
  TORCH_CHECK(storage.resizable(), "torch-ocl: trying to resize a storage that is not resizable");
  const c10::Device device = storage.device();
  c10::DeviceGuard guard(device);
  c10::DataPtr fresh = g_allocator.allocate(newsize);
  const size_t keep = std::min(storage.nbytes(), newsize);
  if (keep > 0) {
    const BufferRef src = buffer_at(storage.data());
    const BufferRef dst = buffer_at(fresh.get());
    cl_command_queue q = current_queue(device.index());
    profiler::Recorder rec;
    OCL_CHECK(cl().clEnqueueCopyBuffer(q, src.mem, dst.mem, src.offset, dst.offset, keep, 0,
                                       nullptr, rec.event()));
    rec.copy(profiler::CommandKind::kCopyD2D, device.index(), current_stream(device.index()).id(),
             keep);
    note_enqueued(q);
  }
  const_cast<c10::Storage&>(storage).set_data_ptr_noswap(std::move(fresh));
  const_cast<c10::Storage&>(storage).set_nbytes(newsize);
}

void inject_free_failures(int count) { g_injected_free_failures.store(count); }

// ---------------------------------------------------------------------------------------------
// Outside buffers (runtime/External.h): a segment of their own in the device's address range, so
// that buffer_at() resolves addresses inside them like any other; no blocks, no statistics.

namespace {

std::atomic<int> g_external_count{0};

struct ExternalBuffer {
  Segment* seg = nullptr;
  ExternalFree on_free = nullptr;
  void* on_free_context = nullptr;
};

void delete_external(void* ctx) noexcept {
  auto* ext = static_cast<ExternalBuffer*>(ctx);
  try {
    batch_flush_all();  // a pending batch may name this buffer
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_state[ext->seg->device].segments.erase(ext->seg->base);
    // Commands already enqueued keep the buffer alive until they finish (OpenCL's rule).
    if (!in_bad_fork()) cl().clReleaseMemObject(ext->seg->mem);
  } catch (const std::exception& e) {
    report_free_failure(&e);
  } catch (...) {
    report_free_failure(nullptr);
  }
  delete ext->seg;
  g_external_count.fetch_sub(1);
  if (ext->on_free) ext->on_free(ext->on_free_context);
  delete ext;
}

}  // namespace

c10::DataPtr wrap_external_buffer(int device, cl_mem mem, size_t nbytes, ExternalFree on_free,
                                  void* on_free_context) {
  device_info(device);
  TORCH_CHECK(device < kMaxDevices,
              "torch-ocl: the allocator handles ocl:0 to ocl:", kMaxDevices - 1,
              ", not ocl:", device);
  const c10::Device dev(c10::DeviceType::PrivateUse1, device);
  auto ext = std::make_unique<ExternalBuffer>();
  ext->on_free = on_free;
  ext->on_free_context = on_free_context;
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  DeviceState& st = g_state[device];
  const uint64_t range = (nbytes + kLargeRound) / kLargeRound * kLargeRound;
  TORCH_CHECK(st.next_offset + range <= kDeviceAddressSpan,
              "torch-ocl: the address range of ocl:", device, " is used up");
  OCL_CHECK(cl().clRetainMemObject(mem));
  ext->seg = new Segment{device, mem, device_range_base(device) + st.next_offset, nbytes};
  ext->seg->external = true;
  st.next_offset += range;
  st.segments[ext->seg->base] = ext->seg;
  g_external_count.fetch_add(1);
  void* addr = reinterpret_cast<void*>(ext->seg->base);
  return {addr, ext.release(), &delete_external, dev};
}

int external_buffer_count() { return g_external_count.load(); }

std::vector<SegmentView> allocator_segments() {
  std::vector<SegmentView> out;
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  for (int device = 0; device < kMaxDevices; ++device) {
    const DeviceState& st = g_state[device];
    for (const auto& [base, seg] : st.segments) {
      if (seg->external) continue;  // not the allocator's memory
      SegmentView v;
      v.device = device;
      v.address = base;
      v.size = seg->size;
      for (const Block* b = seg->first; b; b = b->next) {
        v.stream = b->stream;
        v.small = b->small;
        v.blocks.push_back({seg->base + b->offset, b->size, b->requested, b->allocated,
                            !b->allocated && !b->pending.empty()});
      }
      out.push_back(std::move(v));
    }
  }
  return out;
}

namespace {

// The statistics in the pools' order of c10::CachingAllocator::StatType, under CUDA's names.
constexpr const char* kPoolNames[3] = {"all", "small_pool", "large_pool"};

template <class F>
void for_each_named(const Stats& stats, F&& f) {
  auto& m = const_cast<Stats&>(stats);
  const std::pair<const char*, const PoolStat*> named[] = {
      {"allocation", &m.allocation},
      {"allocated_bytes", &m.allocated_bytes},
      {"active", &m.active},
      {"active_bytes", &m.active_bytes},
      {"segment", &m.segment},
      {"reserved_bytes", &m.reserved_bytes},
      {"inactive_split", &m.inactive_split},
      {"inactive_split_bytes", &m.inactive_split_bytes},
      {"requested_bytes", &m.requested_bytes}};
  for (const auto& [name, stat] : named) f(name, *stat);
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> memory_stats(int device) {
  device_info(device);
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  const DeviceState& st = g_state[device];
  std::vector<std::pair<std::string, int64_t>> out;
  for_each_named(st.stats, [&](const char* name, const PoolStat& ps) {
    for (size_t pool = 0; pool < 3; ++pool) {
      const std::string key = std::string(name) + "." + kPoolNames[pool] + ".";
      const Stat& s = ps.of[pool];
      out.emplace_back(key + "current", s.current);
      out.emplace_back(key + "peak", s.peak);
      out.emplace_back(key + "allocated", s.allocated);
      out.emplace_back(key + "freed", s.freed);
    }
  });
  out.emplace_back("num_alloc_retries", st.num_alloc_retries);
  out.emplace_back("num_ooms", st.num_ooms);
  out.emplace_back("num_device_alloc", st.num_device_alloc);
  out.emplace_back("num_device_free", st.num_device_free);
  return out;
}

std::pair<size_t, size_t> memory_info(int device) {
  const uint64_t total = device_info(device).global_mem;
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  const auto reserved = static_cast<uint64_t>(g_state[device].stats.reserved_bytes.all().current);
  return {total > reserved ? total - reserved : 0, total};
}

c10::CachingDeviceAllocator::DeviceStats OclAllocator::getDeviceStats(c10::DeviceIndex device) {
  device_info(device);
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  const DeviceState& st = g_state[device];
  c10::CachingDeviceAllocator::DeviceStats out;
  auto put = [](c10::CachingDeviceAllocator::StatArray& to, const PoolStat& from) {
    for (size_t pool = 0; pool < 3; ++pool) {
      to[pool].current = from.of[pool].current;
      to[pool].peak = from.of[pool].peak;
      to[pool].allocated = from.of[pool].allocated;
      to[pool].freed = from.of[pool].freed;
    }
  };
  put(out.allocation, st.stats.allocation);
  put(out.segment, st.stats.segment);
  put(out.active, st.stats.active);
  put(out.inactive_split, st.stats.inactive_split);
  put(out.allocated_bytes, st.stats.allocated_bytes);
  put(out.reserved_bytes, st.stats.reserved_bytes);
  put(out.active_bytes, st.stats.active_bytes);
  put(out.inactive_split_bytes, st.stats.inactive_split_bytes);
  put(out.requested_bytes, st.stats.requested_bytes);
  out.num_alloc_retries = st.num_alloc_retries;
  out.num_ooms = st.num_ooms;
  out.num_device_alloc = st.num_device_alloc;
  out.num_device_free = st.num_device_free;
  return out;
}

void reset_peak_memory_stats(int device) {
  device_info(device);
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  g_state[device].stats.for_each([](PoolStat& ps) {
    for (Stat& s : ps.of) s.peak = s.current;
  });
}

void reset_accumulated_memory_stats(int device) {
  device_info(device);
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  DeviceState& st = g_state[device];
  st.stats.for_each([](PoolStat& ps) {
    for (Stat& s : ps.of) s.allocated = s.freed = 0;
  });
  st.num_alloc_retries = st.num_ooms = st.num_device_alloc = st.num_device_free = 0;
}

void empty_cache() {
  if (in_bad_fork()) return;
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  for (DeviceState& st : g_state) {
    if (!st.pending_free.empty()) process_pending(st);
    release_cached(st);
  }
}

}  // namespace torch_ocl
