// Programs built from kernels/*.cl (embedded at build time), specialised with build options,
// cached in memory per device and on disk (TORCH_OCL_CACHE_DIR, TORCH_OCL_CACHE=0 disables).
#pragma once

#include <CL/cl.h>

#include <string>

namespace torch_ocl {

// The kernel `kernel` of kernels/<file> built with `options` (plus the device's own options:
// -cl-std, fp64) for `device`. Builds on first use; throws with the compiler log on failure.
cl_kernel get_kernel(int device, const char* file, const char* kernel, const std::string& options);

// Builds arbitrary source on `device` and throws like get_kernel does on failure (test hook).
void build_source_for_test(int device, const std::string& source, const std::string& options);

// The options every program on `device` gets (for example "-cl-std=CL1.2 -DTORCH_OCL_FP64").
std::string device_build_options(int device);

}  // namespace torch_ocl
