#include "runtime/OclApi.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <filesystem>
#include <mutex>

#include "runtime/DynamicLibrary.h"

namespace torch_ocl {
namespace {

std::mutex g_mutex;
std::string g_path;
bool g_tried = false;
ClApi g_api;
bool g_loaded = false;
std::atomic<const ClApi*> g_ready{nullptr};
std::string g_error;

}  // namespace

void set_opencl_library_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  TORCH_CHECK(!g_tried || path == g_path, "torch-ocl: the OpenCL library is already loaded from '",
              g_path, "'; it cannot be changed to '", path, "' in a running process.");
  g_path = path;
}

std::string opencl_library_path() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_path;
}

const ClApi* try_load_cl_api(std::string* error) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_tried) {
    g_tried = true;
    if (!g_path.empty()) {
      preload_icd_vendors(std::filesystem::path(g_path).parent_path().string());
    }
    void* handle = open_library(g_path, &g_error);
    if (handle) {
      std::string missing;
#define TORCH_OCL_RESOLVE(name)                                                       \
  g_api.name = reinterpret_cast<decltype(g_api.name)>(library_symbol(handle, #name)); \
  if (!g_api.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
      TORCH_OCL_CL_FUNCTIONS(TORCH_OCL_RESOLVE)
#undef TORCH_OCL_RESOLVE
      g_api.clGetDeviceAndHostTimer = reinterpret_cast<GetDeviceAndHostTimerFn>(
          library_symbol(handle, "clGetDeviceAndHostTimer"));
      if (missing.empty()) {
        g_loaded = true;
        g_ready.store(&g_api, std::memory_order_release);
      } else {
        g_error = "the OpenCL library '" +
                  (g_path.empty() ? std::string(default_opencl_library_name()) : g_path) +
                  "' lacks OpenCL 1.2 functions: " + missing;
      }
    } else {
      g_error = "could not load the OpenCL library (" + g_error + ")";
    }
  }
  if (!g_loaded && error) *error = g_error;
  return g_loaded ? &g_api : nullptr;
}

const ClApi& cl() {
  // Fast path: once loaded, the table never changes.
  if (const ClApi* api = g_ready.load(std::memory_order_acquire)) return *api;
  std::string error;
  const ClApi* api = try_load_cl_api(&error);
  TORCH_CHECK(api, "torch-ocl: ", error,
              ". Install an OpenCL driver for your GPU, or the CPU runtime with "
              "`pip install torch-ocl[pocl]`; TORCH_OCL_OPENCL_LIBRARY selects a loader by path.");
  return *api;
}

const char* cl_error_name(cl_int code) {
  switch (code) {
#define TORCH_OCL_ERR(e) \
  case e:                \
    return #e;
    TORCH_OCL_ERR(CL_SUCCESS)
    TORCH_OCL_ERR(CL_DEVICE_NOT_FOUND)
    TORCH_OCL_ERR(CL_DEVICE_NOT_AVAILABLE)
    TORCH_OCL_ERR(CL_COMPILER_NOT_AVAILABLE)
    TORCH_OCL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TORCH_OCL_ERR(CL_OUT_OF_RESOURCES)
    TORCH_OCL_ERR(CL_OUT_OF_HOST_MEMORY)
    TORCH_OCL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    TORCH_OCL_ERR(CL_BUILD_PROGRAM_FAILURE)
    TORCH_OCL_ERR(CL_MAP_FAILURE)
    TORCH_OCL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    TORCH_OCL_ERR(CL_INVALID_VALUE)
    TORCH_OCL_ERR(CL_INVALID_DEVICE_TYPE)
    TORCH_OCL_ERR(CL_INVALID_PLATFORM)
    TORCH_OCL_ERR(CL_INVALID_DEVICE)
    TORCH_OCL_ERR(CL_INVALID_CONTEXT)
    TORCH_OCL_ERR(CL_INVALID_QUEUE_PROPERTIES)
    TORCH_OCL_ERR(CL_INVALID_COMMAND_QUEUE)
    TORCH_OCL_ERR(CL_INVALID_MEM_OBJECT)
    TORCH_OCL_ERR(CL_INVALID_BINARY)
    TORCH_OCL_ERR(CL_INVALID_BUILD_OPTIONS)
    TORCH_OCL_ERR(CL_INVALID_PROGRAM)
    TORCH_OCL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    TORCH_OCL_ERR(CL_INVALID_KERNEL_NAME)
    TORCH_OCL_ERR(CL_INVALID_KERNEL)
    TORCH_OCL_ERR(CL_INVALID_ARG_INDEX)
    TORCH_OCL_ERR(CL_INVALID_ARG_VALUE)
    TORCH_OCL_ERR(CL_INVALID_ARG_SIZE)
    TORCH_OCL_ERR(CL_INVALID_KERNEL_ARGS)
    TORCH_OCL_ERR(CL_INVALID_WORK_DIMENSION)
    TORCH_OCL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    TORCH_OCL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    TORCH_OCL_ERR(CL_INVALID_GLOBAL_OFFSET)
    TORCH_OCL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    TORCH_OCL_ERR(CL_INVALID_EVENT)
    TORCH_OCL_ERR(CL_INVALID_OPERATION)
    TORCH_OCL_ERR(CL_INVALID_BUFFER_SIZE)
    TORCH_OCL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    TORCH_OCL_ERR(CL_INVALID_PROPERTY)
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
#undef TORCH_OCL_ERR
    default:
      return "an OpenCL error";
  }
}

}  // namespace torch_ocl
