// torch.ops.ocl._interop_*: the native half of torch_ocl.interop (python/torch_ocl/interop.py).
// Hands a tensor's OpenCL objects (context, the queue of a stream, the buffer and byte offset) to
// outside code, and wraps an outside buffer as a tensor without copying it. Handles cross as
// integers: the Python side turns them into pyopencl objects (or anything else that takes them).
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

#include <atomic>
#include <vector>

#include "runtime/Allocator.h"
#include "runtime/Batch.h"
#include "runtime/Device.h"
#include "runtime/External.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

template <typename T>
int64_t handle(T h) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(h));
}

template <typename T>
T from_handle(int64_t h) {
  return reinterpret_cast<T>(static_cast<intptr_t>(h));
}

// The owner's release function for a wrapped buffer: a C function pointer and its argument
// (from Python: a ctypes callback that drops the reference to the pyopencl object). Calls stop
// once the owner says it is going away (interpreter shutdown), leaving the owner's objects alone.
std::atomic<bool> g_release_calls{true};

struct Owner {
  ExternalFree fn = nullptr;
  void* context = nullptr;
};

void release_owner(void* data) {
  auto* owner = static_cast<Owner*>(data);
  if (owner->fn && g_release_calls.load()) owner->fn(owner->context);
  delete owner;
}

c10::Stream stream_of(int64_t device, int64_t stream_id) {
  device_info(static_cast<int>(device));
  TORCH_CHECK(stream_id >= 0 && stream_id <= kStreamPoolSize, "torch-ocl: invalid stream id ",
              stream_id, " on ocl:", device);
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1, static_cast<int>(device)),
                     static_cast<c10::StreamId>(stream_id));
}

// The queue of a stream, for outside code to enqueue on: the stream's pending batch of tiny ops
// is enqueued first and everything is submitted, so that outside commands run after all the work
// recorded so far.
int64_t queue_for_outside(int64_t device, int64_t stream_id) {
  const c10::Stream s = stream_of(device, stream_id);
  cl_command_queue q = queue_of(s);  // enqueues the pending batch
  share_stream_queue(s);
  flush(q);
  return handle(q);
}

// (cl_mem, byte offset of the first element, device) of a tensor.
std::tuple<int64_t, int64_t, int64_t> tensor_buffer(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1,
              "torch_ocl.interop: expected an ocl tensor, got a tensor on ", t.device());
  TORCH_CHECK(t.storage().data() != nullptr,
              "torch_ocl.interop: this tensor has no OpenCL buffer (it is empty: a storage of 0 "
              "bytes has none)");
  const BufferRef b = buffer_of(t);
  return {handle(b.mem), static_cast<int64_t>(b.offset), t.device().index()};
}

template <typename T>
T mem_info(cl_mem mem, cl_mem_info what) {
  T v{};
  const cl_int err = cl().clGetMemObjectInfo(mem, what, sizeof(T), &v, nullptr);
  TORCH_CHECK(err == CL_SUCCESS, "torch_ocl.interop: ", handle(mem),
              " is not a valid OpenCL buffer (clGetMemObjectInfo failed with ", cl_error_name(err),
              ")");
  return v;
}

// The device whose context holds `mem`; a clear error for a buffer of another context.
int64_t device_of_buffer(int64_t mem_handle) {
  require_devices();
  auto mem = from_handle<cl_mem>(mem_handle);
  TORCH_CHECK(mem, "torch_ocl.interop: a null cl_mem is not a buffer");
  TORCH_CHECK(mem_info<cl_mem_object_type>(mem, CL_MEM_TYPE) == CL_MEM_OBJECT_BUFFER,
              "torch_ocl.interop: only OpenCL buffers can become tensors, not images or pipes");
  const int device = device_of_context(mem_info<cl_context>(mem, CL_MEM_CONTEXT));
  TORCH_CHECK(device >= 0,
              "torch_ocl.interop: the buffer belongs to an OpenCL context that is not one of "
              "torch-ocl's (each ocl device has a context of its own; a buffer of another context "
              "cannot be used by its kernels). Create the buffer in "
              "torch_ocl.interop.context(device) (pyopencl: pass that context to cl.Buffer), or "
              "copy it through the host (e.g. torch.from_numpy(array.get()).to('ocl')).");
  return device;
}

at::Tensor wrap_buffer(int64_t mem_handle, int64_t nbytes, at::ScalarType dtype,
                       at::IntArrayRef size, at::IntArrayRef stride, int64_t storage_offset,
                       int64_t on_free, int64_t on_free_context) {
  const int device = static_cast<int>(device_of_buffer(mem_handle));
  auto mem = from_handle<cl_mem>(mem_handle);
  const auto mem_size = static_cast<int64_t>(mem_info<size_t>(mem, CL_MEM_SIZE));
  if (nbytes < 0) nbytes = mem_size;  // the whole buffer
  TORCH_CHECK(nbytes > 0 && nbytes <= mem_size, "torch_ocl.interop: ", nbytes,
              " bytes requested of a buffer of ", mem_size);
  TORCH_CHECK(size.size() == stride.size(), "torch_ocl.interop: ", size.size(), " sizes but ",
              stride.size(), " strides");
  const auto itemsize = static_cast<int64_t>(c10::elementSize(dtype));
  TORCH_CHECK(storage_offset >= 0, "torch_ocl.interop: negative offset");
  int64_t last = storage_offset;  // the last element's index, if there is an element
  bool empty = false;
  for (size_t i = 0; i < size.size(); ++i) {
    TORCH_CHECK(size[i] >= 0 && stride[i] >= 0, "torch_ocl.interop: negative size or stride");
    if (size[i] == 0) empty = true;
    last += (size[i] - 1) * stride[i];
  }
  TORCH_CHECK(empty || (last + 1) * itemsize <= nbytes, "torch_ocl.interop: sizes ", size,
              ", strides ", stride, " and offset ", storage_offset, " reach beyond the ", nbytes,
              "-byte buffer");
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, device));
  auto* owner = new Owner{reinterpret_cast<ExternalFree>(static_cast<intptr_t>(on_free)),
                          from_handle<void*>(on_free_context)};
  c10::DataPtr data;
  try {
    data = wrap_external_buffer(device, mem, static_cast<size_t>(nbytes), &release_owner, owner);
  } catch (...) {
    delete owner;  // the owner keeps its reference: the Python side drops it on this error
    throw;
  }
  c10::Storage storage(c10::Storage::use_byte_size_t(), static_cast<size_t>(nbytes),
                       std::move(data), /*allocator=*/nullptr, /*resizable=*/false);
  auto t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::scalarTypeToTypeMeta(dtype));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(size, stride, storage_offset);
  return t;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ocl, m) {
  m.def("_interop_context(int device) -> int",
        [](int64_t device) { return handle(device_info(static_cast<int>(device)).context); });
  m.def("_interop_device_id(int device) -> int",
        [](int64_t device) { return handle(device_info(static_cast<int>(device)).id); });
  m.def("_interop_queue(int device, int stream_id) -> int", queue_for_outside);
  m.def("_interop_buffer(Tensor t) -> (int, int, int)", tensor_buffer);
  m.def("_interop_device_of_buffer(int mem) -> int", device_of_buffer);
  m.def("_interop_device_of_context(int context) -> int", [](int64_t context) -> int64_t {
    return device_of_context(from_handle<cl_context>(context));
  });
  m.def(
      "_interop_wrap(int mem, int nbytes, ScalarType dtype, int[] size, int[] stride, "
      "int storage_offset, int on_free, int on_free_context) -> Tensor",
      wrap_buffer);
  m.def("_interop_external_count() -> int", []() -> int64_t { return external_buffer_count(); });
  // Test hook: stream `stream_id` of `device` no longer counts as shared with outside code.
  m.def("_interop_unshare_stream(int device, int stream_id) -> ()",
        [](int64_t device, int64_t stream_id) {
          share_stream_queue(stream_of(device, stream_id), false);
        });
  m.def("_interop_stream_shared(int device, int stream_id) -> bool",
        [](int64_t device, int64_t stream_id) {
          return stream_queue_shared(stream_of(device, stream_id));
        });
  m.def("_interop_set_release_calls(bool enabled) -> ()",
        [](bool enabled) { g_release_calls.store(enabled); });
}

}  // namespace torch_ocl
