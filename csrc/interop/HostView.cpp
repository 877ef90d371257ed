// torch.ops.ocl._host_map / _host_unmap: a CPU tensor that aliases an ocl tensor's device memory,
// mapped into the host's address space (runtime/HostMap.h), for host code that should work on
// the device memory in place (torch_ocl.distributed hands such tensors to Gloo on devices whose
// memory is the host's, instead of copying through pinned memory).
//
// The map is enqueued on the ocl tensor's current stream without waiting; the host may touch the
// CPU tensor once the work enqueued on that stream so far has completed (the caller records an
// event after the map and waits for it: that is the one host wait, counted where it happens).
// Only the bytes of the tensor's elements are mapped (a tensor may be a slice of a larger
// allocation, and allocations are carved out of larger buffers). _host_unmap enqueues the unmap
// on the same stream, so device work enqueued after it sees what the host wrote; the CPU
// tensor's memory must not be used after that. The mapping keeps the ocl tensor's storage alive
// until it is unmapped; a CPU tensor that dies still mapped is unmapped by its deleter (a safety
// net: the unmap is then ordered only by when the tensor died).
#include <ATen/core/Tensor.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

#include <atomic>
#include <exception>
#include <mutex>

#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/HostMap.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

struct Mapping {
  c10::Storage storage;  // the ocl tensor's: keeps the device memory alive while mapped
  c10::Stream stream;
  cl_mem mem = nullptr;
  void* ptr = nullptr;
  std::mutex mutex;
  bool mapped = true;
};

std::atomic<int64_t> g_live{0};  // mappings not unmapped yet

// Unmaps once; true if this call did.
bool unmap(Mapping* m) {
  std::lock_guard<std::mutex> lock(m->mutex);
  if (!m->mapped) return false;
  m->mapped = false;
  --g_live;
  c10::Storage keep = std::move(m->storage);  // released after the unmap is enqueued
  if (!in_bad_fork()) enqueue_unmap(m->stream, m->mem, m->ptr);
  return true;
}

// The CPU tensor's deleter; never throws (it runs in destructors).
void release_mapping(void* data) noexcept {
  auto* m = static_cast<Mapping*>(data);
  try {
    unmap(m);
  } catch (const std::exception& e) {
    static std::atomic<bool> reported{false};
    if (!reported.exchange(true)) {
      try {
        TORCH_WARN("torch-ocl: unmapping device memory from the host failed (", e.what(),
                   "). Further failures are not reported.");
      } catch (...) {
      }
    }
  }
  delete m;
}

Mapping* mapping_of(const at::Tensor& host) {
  if (host.device().type() != c10::DeviceType::CPU || !host.has_storage()) return nullptr;
  const c10::DataPtr& dp = host.storage().data_ptr();
  if (dp.get_deleter() != &release_mapping) return nullptr;
  return static_cast<Mapping*>(dp.get_context());
}

at::Tensor host_map(const at::Tensor& t, bool write, bool invalidate) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1,
              "torch-ocl: _host_map takes an ocl tensor, got one on ", t.device());
  TORCH_CHECK(t.numel() > 0 && t.storage().data() != nullptr,
              "torch-ocl: _host_map: an empty tensor has no device memory to map");
  int64_t last = 0;  // the last element's index relative to the first
  for (int64_t d = 0; d < t.dim(); ++d) {
    TORCH_CHECK(t.stride(d) >= 0, "torch-ocl: _host_map: negative strides are not supported");
    last += (t.size(d) - 1) * t.stride(d);
  }
  const size_t nbytes = static_cast<size_t>(last + 1) * t.itemsize();
  // Invalidating is only right where the range holds nothing but the tensor's own elements.
  invalidate = invalidate && write && t.is_non_overlapping_and_dense();
  const int device = t.device().index();
  const c10::Stream stream = current_stream(device);
  const BufferRef b = buffer_of(t);
  auto* m = new Mapping{t.storage(), stream, b.mem};
  try {
    m->ptr = enqueue_map(stream, b.mem, b.offset, nbytes, write, invalidate);
    // The memory may be freed once the unmap has run: order its reuse after this stream.
    record_stream(t.storage().data_ptr(), stream);
  } catch (...) {
    delete m;
    throw;
  }
  ++g_live;
  c10::DataPtr data(m->ptr, m, &release_mapping, c10::Device(c10::kCPU));
  c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes, std::move(data),
                       /*allocator=*/nullptr, /*resizable=*/false);
  auto host = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  host.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), 0);
  return host;
}

bool host_unmap(const at::Tensor& host) {
  Mapping* m = mapping_of(host);
  TORCH_CHECK(m, "torch-ocl: _host_unmap takes a CPU tensor made by _host_map");
  return unmap(m);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ocl, m) {
  m.def("_host_map_zero_copy(int device) -> bool",
        [](int64_t device) { return host_map_is_zero_copy(static_cast<int>(device)); });
  m.def("_host_map(Tensor t, bool write, bool invalidate) -> Tensor", host_map);
  m.def("_host_unmap(Tensor host) -> bool", host_unmap);
  m.def("_host_is_mapped(Tensor host) -> bool", [](const at::Tensor& host) {
    Mapping* m = mapping_of(host);
    if (!m) return false;
    std::lock_guard<std::mutex> lock(m->mutex);
    return m->mapped;
  });
  m.def("_host_map_count() -> int", []() -> int64_t { return g_live.load(); });
}

}  // namespace torch_ocl
