// Caching device allocator.
//
// Device memory comes in segments (one cl_mem each). Every segment gets a range in a private
// virtual address space (runtime/DeviceAddress.h), so a tensor's data_ptr() is an opaque "device
// address" that supports pointer arithmetic like a CUDA pointer but is never dereferenced on the
// host. Blocks are carved out of segments (split), returned to a per-stream free pool on release
// (reused without waiting, since a stream is an in-order queue), and merged with free neighbours.
// Freeing never throws (it runs in destructors): a failure there is reported once on stderr and
// the block is leaked.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Storage.h>
#include <c10/core/Stream.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/OpenCL.h"

namespace at {
class TensorBase;
}

namespace torch_ocl {

// A buffer and a byte offset into it: what a kernel argument needs; and the device whose memory
// it is (-1: unknown), so that a launch can refuse tensors of two devices (runtime/Launch.h).
struct BufferRef {
  cl_mem mem = nullptr;
  uint64_t offset = 0;
  int device = -1;
};

c10::Allocator* device_allocator();

// The buffer behind a device address (any address inside an allocation).
BufferRef buffer_at(const void* device_ptr);
// The buffer and byte offset of a tensor's first element.
BufferRef buffer_of(const at::TensorBase& t);
// The buffer and byte offset of `ptr`, an address inside t's storage (no lookup needed).
BufferRef buffer_in(const at::TensorBase& t, const void* ptr);

// Marks an allocation as used by `stream`, so that its memory is not reused before the work
// queued there has finished (torch's Tensor.record_stream).
void record_stream(const c10::DataPtr& ptr, c10::Stream stream);

// Gives `storage` a new allocation of `newsize` bytes on its device, keeping the first
// min(old size, newsize) bytes (copied on the current stream, without waiting).
void resize_storage_bytes(const c10::Storage& storage, size_t newsize);

// Test hook: the free path's next `count` OpenCL steps (markers for streams recorded with
// record_stream) fail as if the driver had refused them. Freeing never throws: the failure is
// reported once as a warning and the block is leaked.
void inject_free_failures(int count);

// Statistics: (name, value) pairs, named like torch.cuda.memory_stats().
std::vector<std::pair<std::string, int64_t>> memory_stats(int device);
// (free, total) bytes: the device's global memory less what this process's allocator reserved
// (core OpenCL cannot tell what other processes use).
std::pair<size_t, size_t> memory_info(int device);
void reset_peak_memory_stats(int device);
void reset_accumulated_memory_stats(int device);
void empty_cache();

// The allocator's segments and their blocks, in address order (torch.ocl.memory._snapshot()).
struct BlockView {
  uint64_t address = 0, size = 0, requested = 0;
  bool allocated = false, pending_free = false;
};
struct SegmentView {
  int device = 0;
  uint64_t address = 0, size = 0;
  int stream = 0;
  bool small = false;
  std::vector<BlockView> blocks;
};
std::vector<SegmentView> allocator_segments();

}  // namespace torch_ocl
