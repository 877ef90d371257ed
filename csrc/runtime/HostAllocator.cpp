#include "runtime/HostAllocator.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/Device.h"
#include "runtime/OclApi.h"

namespace torch_ocl {
namespace {

constexpr size_t kPage = 4096;

struct HostBlock {
  void* ptr = nullptr;
  size_t size = 0;
  bool in_use = false;
  std::vector<cl_event> events;
};

std::mutex g_mutex;
std::map<uintptr_t, HostBlock*> g_blocks;  // every block, by address
std::multimap<size_t, HostBlock*> g_free;  // free blocks by size

bool events_done(HostBlock* b) {
  for (auto it = b->events.begin(); it != b->events.end();) {
    cl_int status = CL_QUEUED;
    cl().clGetEventInfo(*it, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
    if (status != CL_COMPLETE && status >= 0) return false;
    cl().clReleaseEvent(*it);
    it = b->events.erase(it);
  }
  return true;
}

void* aligned_alloc_page(size_t size) {
#ifdef _WIN32
  return _aligned_malloc(size, kPage);
#else
  void* p = nullptr;
  return posix_memalign(&p, kPage, size) == 0 ? p : nullptr;
#endif
}

size_t round_pow2(size_t n) {
  size_t r = kPage;
  while (r < n) r <<= 1;
  return r;
}

// Runs in destructors, so it never throws: a block that cannot go back to the pool is leaked
// (reported once).
void free_host(void* ctx) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto* b = static_cast<HostBlock*>(ctx);
    b->in_use = false;
    g_free.emplace(b->size, b);
  } catch (const std::exception& e) {
    static std::atomic<bool> reported{false};
    if (reported.exchange(true)) return;
    try {
      TORCH_WARN("torch-ocl: freeing pinned host memory failed (", e.what(),
                 "); the block is leaked. Further failures are not reported.");
    } catch (...) {
    }
  }
}

struct OclHostAllocator final : public c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    if (n == 0) return {nullptr, nullptr, &c10::detail::deleteNothing, c10::Device(c10::kCPU)};
    const size_t size = round_pow2(n);
    std::lock_guard<std::mutex> lock(g_mutex);
    HostBlock* found = nullptr;
    for (auto it = g_free.lower_bound(size); it != g_free.end() && it->first == size; ++it) {
      if (events_done(it->second)) {
        found = it->second;
        g_free.erase(it);
        break;
      }
    }
    if (!found) {
      void* p = aligned_alloc_page(size);
      TORCH_CHECK_WITH(OutOfMemoryError, p, "torch-ocl: out of pinned host memory allocating ",
                       size, " bytes");
      found = new HostBlock{p, size};
      g_blocks[reinterpret_cast<uintptr_t>(p)] = found;
    }
    found->in_use = true;
    return {found->ptr, found, &free_host, c10::Device(c10::kCPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

OclHostAllocator g_host_allocator;

HostBlock* find_block(const void* ptr) {
  const auto addr = reinterpret_cast<uintptr_t>(ptr);
  auto it = g_blocks.upper_bound(addr);
  if (it == g_blocks.begin()) return nullptr;
  --it;
  HostBlock* b = it->second;
  return addr < it->first + b->size ? b : nullptr;
}

}  // namespace

c10::Allocator* host_allocator() { return &g_host_allocator; }

bool is_pinned(const void* ptr) {
  std::lock_guard<std::mutex> lock(g_mutex);
  HostBlock* b = find_block(ptr);
  return b && b->in_use;
}

void record_host_use(const void* ptr, cl_event event) {
  std::lock_guard<std::mutex> lock(g_mutex);
  HostBlock* b = find_block(ptr);
  if (!b) return;
  cl().clRetainEvent(event);
  b->events.push_back(event);
}

}  // namespace torch_ocl
