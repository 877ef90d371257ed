// Copies between the host and the device and on the device (_copy_from, the op copy_ calls for
// PrivateUse1), and _local_scalar_dense (Tensor.item()).
//
// Host-to-device copies never wait: pinned sources are read asynchronously; pageable sources
// are first copied into a staging buffer that the driver frees when the transfer completes.
// Device-to-host copies wait (the host needs the data), except into pinned memory with
// non_blocking=True. Copies between two devices (two contexts) pass through host memory without
// the host waiting: the read on the source's stream, the write on the destination's stream behind
// a bridge event (runtime/CrossContext.h).
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorIterator.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <optional>

#include "ops/Elementwise.h"
#include "profiler/Record.h"
#include "runtime/Allocator.h"
#include "runtime/CrossContext.h"
#include "runtime/DeviceError.h"
#include "runtime/HostAllocator.h"
#include "runtime/Launch.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"
#include "runtime/Sync.h"

namespace torch_ocl {
namespace {

bool is_ocl(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

void CL_CALLBACK free_staging(cl_event, cl_int, void* data) { std::free(data); }

// Writes nbytes of host memory into dst's buffer; returns without waiting.
void write_async(const at::Tensor& dst, const void* src, size_t nbytes, bool src_pinned) {
  BufferRef b = buffer_of(dst);
  cl_command_queue q = current_queue(dst.device().index());
  cl_event done = nullptr;
  const int device = dst.device().index();
  profiler::Recorder rec;
  if (src_pinned) {
    OCL_CHECK(cl().clEnqueueWriteBuffer(q, b.mem, CL_FALSE, b.offset, nbytes, src, 0, nullptr,
                                        rec.event(&done)));
    rec.copy(profiler::CommandKind::kCopyH2D, device, current_stream(device).id(), nbytes);
    record_host_use(src, done);
  } else {
    void* staging = std::malloc(nbytes);
    TORCH_CHECK_WITH(OutOfMemoryError, staging, "torch-ocl: out of host memory staging a ", nbytes,
                     "-byte copy");
    std::memcpy(staging, src, nbytes);
    const cl_int err = cl().clEnqueueWriteBuffer(q, b.mem, CL_FALSE, b.offset, nbytes, staging, 0,
                                                 nullptr, rec.event(&done));
    if (err != CL_SUCCESS) std::free(staging);
    OCL_CHECK(err);
    rec.copy(profiler::CommandKind::kCopyH2D, device, current_stream(device).id(), nbytes);
    OCL_CHECK(cl().clSetEventCallback(done, CL_COMPLETE, &free_staging, staging));
  }
  flush(q);
  cl().clReleaseEvent(done);
}

// Reads a contiguous device tensor into host memory.
void read(const at::Tensor& src, void* dst, size_t nbytes, bool non_blocking) {
  BufferRef b = buffer_of(src);
  cl_command_queue q = current_queue(src.device().index());
  const bool async = non_blocking && is_pinned(dst);
  std::optional<HostWait> wait;
  if (!async) wait.emplace("copying an ocl tensor to the CPU (.cpu(), .item(), .tolist(), print)");
  cl_event done = nullptr;
  const int device = src.device().index();
  profiler::Recorder rec;
  OCL_CHECK(cl().clEnqueueReadBuffer(q, b.mem, async ? CL_FALSE : CL_TRUE, b.offset, nbytes, dst, 0,
                                     nullptr, rec.event(async ? &done : nullptr)));
  rec.copy(profiler::CommandKind::kCopyD2H, device, current_stream(device).id(), nbytes);
  if (async) {
    flush(q);
    record_host_use(dst, done);
    cl().clReleaseEvent(done);
  } else {
    check_device_errors(current_stream(src.device().index()));
  }
}

void copy_on_device(const at::Tensor& src, const at::Tensor& dst);

// Copies src (device A) into dst (device B, another context) through a host staging buffer:
// a read on A's current stream, then a write on B's current stream that waits for the read
// through a bridge event. Neither the host nor A waits; B's stream waits for A's work before the
// copy (stream order on both sides, as a CUDA peer copy). The staging memory is freed when the
// write completes.
void copy_between_devices(const at::Tensor& self, const at::Tensor& dst) {
  at::Tensor src;
  {
    c10::DeviceGuard guard(self.device());
    src = self.expand(dst.sizes()).contiguous();  // on A, in A's stream order
  }
  const size_t nbytes = src.nbytes();
  const int a = src.device().index(), b = dst.device().index();
  void* staging = std::malloc(nbytes);
  TORCH_CHECK_WITH(OutOfMemoryError, staging, "torch-ocl: out of host memory staging a ", nbytes,
                   "-byte copy from ocl:", a, " to ocl:", b);
  cl_event read_done = nullptr, bridge = nullptr, write_done = nullptr;
  try {
    const BufferRef s = buffer_of(src);
    cl_command_queue qa = current_queue(a);
    profiler::Recorder rec;
    OCL_CHECK(cl().clEnqueueReadBuffer(qa, s.mem, CL_FALSE, s.offset, nbytes, staging, 0, nullptr,
                                       rec.event(&read_done)));
    rec.copy(profiler::CommandKind::kCopyD2H, a, current_stream(a).id(), nbytes);
    flush(qa);
    bridge = bridge_event(read_done, b);
  } catch (...) {
    if (read_done) {  // the read may still be writing into the staging memory
      cl().clWaitForEvents(1, &read_done);
      cl().clReleaseEvent(read_done);
    }
    std::free(staging);
    throw;
  }
  cl().clReleaseEvent(read_done);
  c10::DeviceGuard guard(dst.device());
  const bool direct = dst.is_contiguous() && dst.scalar_type() == src.scalar_type();
  at::Tensor target = direct ? dst : at::empty(dst.sizes(), dst.options().dtype(src.dtype()));
  const BufferRef d = buffer_of(target);
  cl_command_queue qb = current_queue(b);
  profiler::Recorder rec;
  const cl_int err = cl().clEnqueueWriteBuffer(qb, d.mem, CL_FALSE, d.offset, nbytes, staging, 1,
                                               &bridge, rec.event(&write_done));
  cl().clReleaseEvent(bridge);
  if (err != CL_SUCCESS) {
    // The read still targets the staging memory: leak it rather than free it under the driver.
    OCL_CHECK(err);
  }
  rec.copy(profiler::CommandKind::kCopyH2D, b, current_stream(b).id(), nbytes);
  OCL_CHECK(cl().clSetEventCallback(write_done, CL_COMPLETE, &free_staging, staging));
  cl().clReleaseEvent(write_done);
  flush(qb);
  if (!direct) copy_on_device(target, dst);
}

// Device-to-device copy with broadcasting and dtype conversion (same device).
void copy_on_device(const at::Tensor& src, const at::Tensor& dst) {
  if (src.dtype() == dst.dtype() && src.sizes() == dst.sizes() && src.is_contiguous() &&
      dst.is_contiguous() && !src.is_neg() && !src.is_conj()) {
    if (dst.numel() == 0) return;
    BufferRef s = buffer_of(src), d = buffer_of(dst);
    if (s.mem == d.mem && s.offset == d.offset) return;
    // The CPU's error for x[1:] = x[:-1] (clEnqueueCopyBuffer would fail with
    // CL_MEM_COPY_OVERLAP); the TensorIterator below checks the other layouts the same way.
    at::assert_no_partial_overlap(dst, src);
    const int device = dst.device().index();
    cl_command_queue q = current_queue(device);
    profiler::Recorder rec;
    OCL_CHECK(cl().clEnqueueCopyBuffer(q, s.mem, d.mem, s.offset, d.offset, dst.nbytes(), 0,
                                       nullptr, rec.event()));
    rec.copy(profiler::CommandKind::kCopyD2D, device, current_stream(device).id(), dst.nbytes());
    note_enqueued(q);
    return;
  }
  // Same dtype: move the bits as an integer of the same size, as the CPU copies elements (going
  // through float would quiet half's signalling NaNs and could change NaN payloads).
  if (src.scalar_type() == dst.scalar_type() && !src.is_neg() && !src.is_conj() &&
      at::isFloatingType(src.scalar_type())) {
    const at::ScalarType bits = bits_dtype(src.itemsize());
    const at::Tensor dst_bits = dst.view(bits), src_bits = src.view(bits);
    auto iter = at::TensorIteratorConfig()
                    .add_output(dst_bits)
                    .add_const_input(src_bits)
                    .resize_outputs(false)
                    .build();
    EwParams params;
    params.compute = bits;
    launch_elementwise(iter, EwId::copy, params);
    return;
  }
  auto iter = at::TensorIteratorConfig()
                  .add_output(dst)
                  .add_const_input(src)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .check_all_same_device(false)
                  .build();
  EwParams params;
  params.compute = src.scalar_type();
  launch_elementwise(iter, EwId::copy, params);
}

// The stored values of a neg view (torch._neg_view): the same memory without the bit.
at::Tensor stored(const at::Tensor& t) {
  at::Tensor s = t.alias();
  s._set_neg(false);
  return s;
}

// The stored values of a conjugate view (x.conj() of a complex x): the same memory without the bit.
at::Tensor stored_conj(const at::Tensor& t) {
  at::Tensor s = t.alias();
  s._set_conj(false);
  return s;
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  if (dst.numel() == 0) return dst;
  // Conjugate views, like neg views below: copy the stored values, then conjugate the
  // destination's where the two bits differ (conj_physical_, on the device that holds dst).
  if (self.is_conj() || dst.is_conj()) {
    const bool conjugate = self.is_conj() != dst.is_conj();
    at::Tensor dst_stored = stored_conj(dst);
    copy_from(stored_conj(self), dst_stored, non_blocking && !conjugate);
    if (conjugate && dst_stored.is_complex()) dst_stored.conj_physical_();
    return dst;
  }
  // Neg views reach this op directly (the Negative key lets _copy_from through, below): copy the
  // stored values, then negate the destination's where the two bits differ, as the CPU's copy
  // does. (ATen's negation fallback would resolve `self` with a clone, which copies through this
  // op again: an endless recursion.)
  if (self.is_neg() || dst.is_neg()) {
    const bool negate = self.is_neg() != dst.is_neg();
    at::Tensor dst_stored = stored(dst);
    copy_from(stored(self), dst_stored, non_blocking && !negate);
    if (negate) dst_stored.neg_();
    return dst;
  }
  if (is_ocl(self) && is_ocl(dst)) {
    if (self.device() != dst.device()) {
      copy_between_devices(self, dst);  // separate contexts: through the host
      return dst;
    }
    c10::DeviceGuard guard(dst.device());
    copy_on_device(self, dst);
    return dst;
  }
  if (is_ocl(dst)) {  // host -> device
    c10::DeviceGuard guard(dst.device());
    at::Tensor src = self;
    if (src.dtype() != dst.dtype() || src.sizes() != dst.sizes() || !src.is_contiguous()) {
      src = self.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
    }
    if (dst.is_contiguous()) {
      write_async(dst, src.data_ptr(), dst.nbytes(), non_blocking && is_pinned(src.data_ptr()));
    } else {
      at::Tensor tmp = at::empty(dst.sizes(), dst.options());
      write_async(tmp, src.data_ptr(), tmp.nbytes(), non_blocking && is_pinned(src.data_ptr()));
      copy_on_device(tmp, dst);
    }
    return dst;
  }
  // device -> host
  c10::DeviceGuard guard(self.device());
  at::Tensor src = self;
  if (!src.is_contiguous()) {
    src = at::empty(self.sizes(), self.options());
    copy_on_device(self, src);
  }
  if (dst.is_contiguous() && dst.dtype() == src.dtype() && dst.sizes() == src.sizes()) {
    read(src, dst.data_ptr(), src.nbytes(), non_blocking);
  } else {
    at::Tensor host = at::empty(src.sizes(), src.options().device(at::kCPU));
    read(src, host.data_ptr(), src.nbytes(), false);
    dst.copy_(host);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

c10::Scalar local_scalar_dense(const at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  at::Tensor host = at::empty({}, self.options().device(at::kCPU));
  at::Tensor src = self;
  if (src.is_neg()) src = src.resolve_neg();
  if (src.is_conj()) src = src.resolve_conj();
  BufferRef b = buffer_of(src);
  cl_command_queue q = current_queue(self.device().index());
  HostWait wait("Tensor.item() / _local_scalar_dense");
  const int device = self.device().index();
  profiler::Recorder rec;
  OCL_CHECK(cl().clEnqueueReadBuffer(q, b.mem, CL_TRUE, b.offset, self.itemsize(), host.data_ptr(),
                                     0, nullptr, rec.event()));
  rec.copy(profiler::CommandKind::kCopyD2H, device, current_stream(device).id(), self.itemsize());
  check_device_errors(current_stream(self.device().index()));
  return host.item();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
}

// Neg and conjugate views are copied by _copy_from itself (above).
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}

}  // namespace torch_ocl
