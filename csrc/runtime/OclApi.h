// OpenCL entry points, resolved at run time from exactly one ICD loader per process.
// Nothing links against libOpenCL: a machine without OpenCL can still `import torch`.
#pragma once

#include <string>

#include "runtime/OpenCL.h"

namespace torch_ocl {

#define TORCH_OCL_CL_FUNCTIONS(X) \
  X(clGetPlatformIDs)             \
  X(clGetPlatformInfo)            \
  X(clGetDeviceIDs)               \
  X(clGetDeviceInfo)              \
  X(clCreateContext)              \
  X(clReleaseContext)             \
  X(clCreateCommandQueue)         \
  X(clReleaseCommandQueue)        \
  X(clCreateBuffer)               \
  X(clReleaseMemObject)           \
  X(clCreateProgramWithSource)    \
  X(clCreateProgramWithBinary)    \
  X(clBuildProgram)               \
  X(clGetProgramInfo)             \
  X(clGetProgramBuildInfo)        \
  X(clReleaseProgram)             \
  X(clCreateKernel)               \
  X(clReleaseKernel)              \
  X(clSetKernelArg)               \
  X(clGetKernelWorkGroupInfo)     \
  X(clGetKernelInfo)              \
  X(clEnqueueNDRangeKernel)       \
  X(clEnqueueReadBuffer)          \
  X(clEnqueueWriteBuffer)         \
  X(clEnqueueCopyBuffer)          \
  X(clEnqueueFillBuffer)          \
  X(clEnqueueMigrateMemObjects)   \
  X(clEnqueueMarkerWithWaitList)  \
  X(clEnqueueBarrierWithWaitList) \
  X(clFlush)                      \
  X(clFinish)                     \
  X(clWaitForEvents)              \
  X(clGetEventInfo)               \
  X(clGetEventProfilingInfo)      \
  X(clSetEventCallback)           \
  X(clRetainEvent)                \
  X(clReleaseEvent)               \
  X(clCreateUserEvent)            \
  X(clSetUserEventStatus)         \
  X(clGetMemObjectInfo)           \
  X(clRetainMemObject)            \
  X(clGetCommandQueueInfo)

// OpenCL 2.1's clGetDeviceAndHostTimer, declared here because the headers are used at 1.2.
using GetDeviceAndHostTimerFn = cl_int(CL_API_CALL*)(cl_device_id device,
                                                     cl_ulong* device_timestamp,
                                                     cl_ulong* host_timestamp);

struct ClApi {
#define TORCH_OCL_DECLARE(name) decltype(&::name) name = nullptr;
  TORCH_OCL_CL_FUNCTIONS(TORCH_OCL_DECLARE)
#undef TORCH_OCL_DECLARE
  // Optional: nullptr when the loader lacks it (the device may still refuse it).
  GetDeviceAndHostTimerFn clGetDeviceAndHostTimer = nullptr;
};

// Path of the loader to use; set by the Python package before first use (pyopencl's loader,
// TORCH_OCL_OPENCL_LIBRARY, or the system one). Empty means the platform default name.
void set_opencl_library_path(const std::string& path);
std::string opencl_library_path();

// Loads the library on first call. Returns nullptr (and fills *error) if it cannot be loaded.
const ClApi* try_load_cl_api(std::string* error);
// The loaded API; throws a RuntimeError with the load failure if OpenCL is unavailable.
const ClApi& cl();

const char* cl_error_name(cl_int code);

}  // namespace torch_ocl

#define OCL_CHECK(expr)                                                                 \
  do {                                                                                  \
    cl_int ocl_check_err_ = (expr);                                                     \
    TORCH_CHECK(ocl_check_err_ == CL_SUCCESS, "OpenCL call ", #expr, " failed with ",   \
                ::torch_ocl::cl_error_name(ocl_check_err_), " (", ocl_check_err_, ")"); \
  } while (0)
