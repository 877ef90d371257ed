// Setting kernel arguments and enqueueing a kernel on the current stream, without waiting.
#pragma once

#include <c10/util/Exception.h>

#include <cstdint>

#include "profiler/Record.h"
#include "runtime/Allocator.h"
#include "runtime/DeviceProfile.h"
#include "runtime/OclApi.h"
#include "runtime/OpenCL.h"
#include "runtime/Program.h"
#include "runtime/Stream.h"

namespace torch_ocl {

// Sets the arguments of, and enqueues, the calling thread's own copy of a kernel from get_kernel
// (runtime/Program.h, thread_kernel): threads launch the same kernel at once without a lock.
class KernelLaunch {
 public:
  explicit KernelLaunch(cl_kernel k) : k_(thread_kernel(k)) {}

  template <typename T>
  KernelLaunch& arg(const T& value) {
    set(sizeof(T), &value);
    return *this;
  }
  // A buffer argument followed by its offset in elements of `itemsize` bytes. Buffers of two
  // devices in one launch raise PyTorch's error for tensors on different devices.
  KernelLaunch& buffer(const BufferRef& b, size_t itemsize) {
    same_device(b.device);
    set(sizeof(cl_mem), &b.mem);
    const cl_ulong off = b.offset / itemsize;
    set(sizeof(off), &off);
    return *this;
  }
  KernelLaunch& raw(size_t size, const void* value) {
    set(size, value);
    return *this;
  }

  // Enqueues on the current stream of `device` with explicit global and local sizes. `event`
  // (optional, for timing: runtime/Tuner.h) receives the command's event, which the caller
  // releases.
  void enqueue(int device, cl_uint dims, const size_t* global, const size_t* local,
               cl_event* event = nullptr) {
    same_device(device);
    cl_command_queue q = current_queue(device);
    profiler::Recorder rec;  // torch.profiler's device activity (profiler/Record.h)
    OCL_CHECK(cl().clEnqueueNDRangeKernel(q, k_, dims, nullptr, global, local, 0, nullptr,
                                          rec.event(event)));
    if (rec.on()) rec.kernel(device, current_stream(device).id(), k_, dims, global, local);
    note_enqueued(q);
  }
  // `local` beyond the device's work-group limit becomes the largest power of two within it
  // (kernels whose size is fixed at build time, reqd_work_group_size, fit it themselves).
  void enqueue1d(int device, size_t global, size_t local) {
    local = fit_local(device, local);
    const size_t g = (global + local - 1) / local * local;
    enqueue(device, 1, &g, &local);
  }
  // One work-item per (x, y, z) of an n0 x n1 x n2 grid (n2 exact, n0 and n1 rounded up: the
  // kernel skips x >= n0, y >= n1), work-groups of L0 x L1 x 1 with L0 the power of two that covers
  // n0 (at most lws) and L1 the one that covers n1 within lws / L0. The kernel takes its row
  // (y, z) from the work-group, not from dividing a flat index per element.
  void enqueue_grid(int device, size_t n0, size_t n1, size_t n2, size_t lws) {
    lws = fit_local(device, lws);
    auto cover = [](size_t v, size_t cap) {
      size_t p = 1;
      while (p < cap && p < v) p *= 2;
      return p;
    };
    const size_t l0 = cover(n0, lws), l1 = cover(n1, lws / l0);
    const size_t global[3] = {(n0 + l0 - 1) / l0 * l0, (n1 + l1 - 1) / l1 * l1, n2};
    const size_t local[3] = {l0, l1, 1};
    enqueue(device, 3, global, local);
  }

 private:
  static size_t fit_local(int device, size_t local) {
    const DeviceProfile& p = device_profile(device);
    return local <= p.max_work_group ? local : p.fit_lws(local);
  }
  void same_device(int device) {
    if (device < 0) return;
    if (device_ < 0) device_ = device;
    TORCH_CHECK(device == device_,
                "Expected all tensors to be on the same device, but found at least two devices, "
                "ocl:",
                device_, " and ocl:", device, "!");
  }
  void set(size_t size, const void* value) {
    const cl_int err = cl().clSetKernelArg(k_, index_, size, value);
    TORCH_CHECK(err == CL_SUCCESS, "torch-ocl: clSetKernelArg(", index_, ") failed with ",
                cl_error_name(err));
    ++index_;
  }

  cl_kernel k_;
  cl_uint index_ = 0;
  int device_ = -1;  // of the buffers so far
};

}  // namespace torch_ocl
