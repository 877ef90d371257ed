// The one place that knows how each OS opens a shared library.
#pragma once

#include <string>

namespace torch_ocl {

// Opens `path` (or the OS's default OpenCL loader name when empty). Returns nullptr and fills
// *error on failure.
void* open_library(const std::string& path, std::string* error);
void* library_symbol(void* handle, const char* name);
const char* default_opencl_library_name();

// Loads, by absolute path, the vendor libraries named by the *.icd files in `dir`. A loader
// bundled in a wheel (pyopencl's) finds its vendors (PoCL) by their file name only, which the
// dynamic linker resolves once a library of that name is loaded.
void preload_icd_vendors(const std::string& dir);

}  // namespace torch_ocl
