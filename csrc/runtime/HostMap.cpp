#include "runtime/HostMap.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <mutex>
#include <string>

#include "runtime/Device.h"
#include "runtime/DynamicLibrary.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

// The two entry points come from the loader the rest of the runtime uses (runtime/OclApi.h), by
// its path: opening a loaded library again returns the same one.
struct MapApi {
  decltype(&::clEnqueueMapBuffer) map = nullptr;
  decltype(&::clEnqueueUnmapMemObject) unmap = nullptr;
};

const MapApi& map_api() {
  static const MapApi api = [] {
    cl();  // loads the runtime's loader first (or throws its error)
    std::string error;
    void* handle = open_library(opencl_library_path(), &error);
    TORCH_CHECK(handle, "torch-ocl: cannot open the OpenCL loader again to map buffers: ", error);
    MapApi a;
    a.map = reinterpret_cast<decltype(a.map)>(library_symbol(handle, "clEnqueueMapBuffer"));
    a.unmap =
        reinterpret_cast<decltype(a.unmap)>(library_symbol(handle, "clEnqueueUnmapMemObject"));
    TORCH_CHECK(a.map && a.unmap,
                "torch-ocl: the OpenCL loader lacks clEnqueueMapBuffer/clEnqueueUnmapMemObject");
    return a;
  }();
  return api;
}

// Per device: 0 unknown, 1 no, 2 yes.
std::array<std::atomic<int>, kMaxDevices> g_zero_copy{};

}  // namespace

bool host_map_is_zero_copy(int device) {
  const DeviceInfo& info = device_info(device);
  std::atomic<int>& known = g_zero_copy[device];
  int v = known.load(std::memory_order_acquire);
  if (v == 0) {
    cl_bool unified = CL_FALSE;
    const cl_int err = cl().clGetDeviceInfo(info.id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified),
                                            &unified, nullptr);
    const bool cpu = (info.type & CL_DEVICE_TYPE_CPU) != 0;
    v = err == CL_SUCCESS && unified && cpu ? 2 : 1;
    known.store(v, std::memory_order_release);
  }
  return v == 2;
}

void* enqueue_map(c10::Stream s, cl_mem mem, size_t offset, size_t nbytes, bool write,
                  bool invalidate) {
  const MapApi& api = map_api();
  cl_command_queue q = queue_of(s);  // enqueues the stream's pending batch first
  cl_map_flags flags = CL_MAP_READ;
  if (write) flags = invalidate ? CL_MAP_WRITE_INVALIDATE_REGION : (CL_MAP_READ | CL_MAP_WRITE);
  cl_int err = CL_SUCCESS;
  void* ptr = api.map(q, mem, CL_FALSE, flags, offset, nbytes, 0, nullptr, nullptr, &err);
  TORCH_CHECK(err == CL_SUCCESS && ptr, "torch-ocl: mapping ", nbytes, " bytes of a device buffer ",
              "into host memory failed with ", cl_error_name(err));
  flush(q);
  return ptr;
}

void enqueue_unmap(c10::Stream s, cl_mem mem, void* ptr) {
  const MapApi& api = map_api();
  cl_command_queue q = queue_of(s);
  OCL_CHECK(api.unmap(q, mem, ptr, 0, nullptr, nullptr));
  flush(q);
}

}  // namespace torch_ocl
