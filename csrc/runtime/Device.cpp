#include "runtime/Device.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/External.h"
#include "runtime/OclApi.h"

#ifndef _WIN32
#include <pthread.h>
#endif

namespace torch_ocl {
namespace {

std::once_flag g_once;
std::vector<DeviceInfo> g_devices;
std::string g_error;
bool g_initialized = false;
bool g_bad_fork = false;
thread_local int t_current_device = 0;

std::string platform_string(const ClApi& api, cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (api.clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  api.clGetPlatformInfo(p, what, size, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::string device_string(const ClApi& api, cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (api.clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  api.clGetDeviceInfo(d, what, size, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <typename T>
T device_value(const ClApi& api, cl_device_id d, cl_device_info what) {
  T v{};
  api.clGetDeviceInfo(d, what, sizeof(T), &v, nullptr);
  return v;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// GPUs, then accelerators, then CPUs; simulators (Oclgrind) last unless selected by name.
int device_rank(const DeviceInfo& d) {
  if (d.platform_name.find("Oclgrind") != std::string::npos) return 4;
  if (d.type & CL_DEVICE_TYPE_GPU) return 0;
  if (d.type & CL_DEVICE_TYPE_ACCELERATOR) return 1;
  if (d.type & CL_DEVICE_TYPE_CPU) return 2;
  return 3;
}

void mark_forked() {
  if (g_initialized) g_bad_fork = true;
}

void enumerate() {
#ifndef _WIN32
  pthread_atfork(nullptr, nullptr, &mark_forked);
#endif
  std::string load_error;
  const ClApi* api = try_load_cl_api(&load_error);
  if (!api) {
    g_error = load_error;
    return;
  }
  cl_uint nplat = 0;
  cl_int err = api->clGetPlatformIDs(0, nullptr, &nplat);
  if (err != CL_SUCCESS || nplat == 0) {
    g_error = "no OpenCL platform is installed (clGetPlatformIDs: " +
              std::string(err == CL_SUCCESS ? "0 platforms" : cl_error_name(err)) + ")";
    return;
  }
  std::vector<cl_platform_id> platforms(nplat);
  api->clGetPlatformIDs(nplat, platforms.data(), nullptr);
  const char* filter_env = std::getenv("TORCH_OCL_DEVICES");
  const std::string filter = filter_env ? lower(filter_env) : std::string();
  std::vector<DeviceInfo> found;
  for (cl_platform_id p : platforms) {
    cl_uint ndev = 0;
    if (api->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(ndev);
    api->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, ids.data(), nullptr);
    for (cl_device_id d : ids) {
      DeviceInfo info;
      info.platform = p;
      info.id = d;
      info.platform_name = platform_string(*api, p, CL_PLATFORM_NAME);
      info.platform_version = platform_string(*api, p, CL_PLATFORM_VERSION);
      info.name = device_string(*api, d, CL_DEVICE_NAME);
      if (!filter.empty() &&
          lower(info.platform_name + " " + info.name).find(filter) == std::string::npos)
        continue;
      if (!device_value<cl_bool>(*api, d, CL_DEVICE_AVAILABLE)) continue;
      info.vendor = device_string(*api, d, CL_DEVICE_VENDOR);
      info.driver_version = device_string(*api, d, CL_DRIVER_VERSION);
      info.version = device_string(*api, d, CL_DEVICE_VERSION);
      info.c_version = device_string(*api, d, CL_DEVICE_OPENCL_C_VERSION);
      info.extensions = device_string(*api, d, CL_DEVICE_EXTENSIONS);
      info.type = device_value<cl_device_type>(*api, d, CL_DEVICE_TYPE);
      info.global_mem = device_value<cl_ulong>(*api, d, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.max_alloc = device_value<cl_ulong>(*api, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.local_mem = device_value<cl_ulong>(*api, d, CL_DEVICE_LOCAL_MEM_SIZE);
      info.compute_units = device_value<cl_uint>(*api, d, CL_DEVICE_MAX_COMPUTE_UNITS);
      info.vendor_id = device_value<cl_uint>(*api, d, CL_DEVICE_VENDOR_ID);
      info.mem_base_align_bits = device_value<cl_uint>(*api, d, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
      info.max_work_group = device_value<size_t>(*api, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      info.fp16 = info.extensions.find("cl_khr_fp16") != std::string::npos;
      info.fp64 = info.extensions.find("cl_khr_fp64") != std::string::npos ||
                  device_value<cl_device_fp_config>(*api, d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
      // "OpenCL C <major>.<minor> ..."
      if (std::sscanf(info.c_version.c_str(), "OpenCL C %d.%d", &info.c_major, &info.c_minor) !=
          2) {
        info.c_major = 1;
        info.c_minor = 2;
      }
      found.push_back(std::move(info));
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const DeviceInfo& a, const DeviceInfo& b) {
    return device_rank(a) < device_rank(b);
  });
  for (DeviceInfo& info : found) {
    cl_int cerr = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(info.platform), 0};
    info.context = api->clCreateContext(props, 1, &info.id, nullptr, nullptr, &cerr);
    if (cerr != CL_SUCCESS) continue;
    g_devices.push_back(std::move(info));
  }
  if (g_devices.empty()) {
    g_error = filter.empty()
                  ? "the OpenCL platforms report no usable device"
                  : "no OpenCL device matches TORCH_OCL_DEVICES='" + std::string(filter_env) + "'";
  }
  g_initialized = true;
}

void ensure_init() {
  std::call_once(g_once, [] {
    try {
      enumerate();
    } catch (const std::exception& e) {
      g_error = e.what();
    }
  });
}

}  // namespace

int device_count() noexcept {
  ensure_init();
  return static_cast<int>(g_devices.size());
}

std::string init_error() {
  ensure_init();
  return g_error;
}

bool in_bad_fork() { return g_bad_fork; }

void check_not_forked() {
  TORCH_CHECK(!g_bad_fork,
              "torch-ocl: cannot use the OpenCL device in a forked subprocess: the parent process "
              "had already initialised OpenCL, and a driver context does not survive fork(). "
              "Use the 'spawn' start method (multiprocessing.set_start_method('spawn') or "
              "DataLoader(multiprocessing_context='spawn')).");
}

void require_devices() {
  check_not_forked();
  if (device_count() > 0) return;
  TORCH_CHECK(false, "torch-ocl: no OpenCL device was found (", g_error,
              "). To run on the CPU, install PoCL with `pip install torch-ocl[pocl]`; for a GPU, "
              "install its vendor's driver with OpenCL support. `clinfo` lists what OpenCL sees.");
}

const DeviceInfo& device_info(int index) {
  require_devices();
  const int n = static_cast<int>(g_devices.size());
  TORCH_CHECK_INDEX(index >= 0 && index < n, "torch-ocl: invalid device index ocl:", index,
                    "; there ", n == 1 ? "is " : "are ", n, " OpenCL device", n == 1 ? "" : "s",
                    " (valid indices 0..", n - 1, "). TORCH_OCL_DEVICES selects devices.");
  return g_devices[index];
}

int device_of_context(cl_context context) {
  if (!context || device_count() == 0) return -1;
  for (size_t i = 0; i < g_devices.size(); ++i)
    if (g_devices[i].context == context) return static_cast<int>(i);
  return -1;
}

int current_device() { return t_current_device; }

void set_device(int index) {
  device_info(index);
  t_current_device = index;
}

int exchange_device(int index) {
  int old = t_current_device;
  if (index != old) set_device(index);
  return old;
}

}  // namespace torch_ocl
