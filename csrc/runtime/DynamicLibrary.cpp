#include "runtime/DynamicLibrary.h"

#include <filesystem>
#include <fstream>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace torch_ocl {

const char* default_opencl_library_name() {
#if defined(_WIN32)
  return "OpenCL.dll";
#elif defined(__APPLE__)
  return "/System/Library/Frameworks/OpenCL.framework/OpenCL";
#else
  return "libOpenCL.so.1";
#endif
}

void* open_library(const std::string& path, std::string* error) {
  const std::string name = path.empty() ? default_opencl_library_name() : path;
#ifdef _WIN32
  HMODULE handle = LoadLibraryA(name.c_str());
  if (!handle && error) *error = name + ": LoadLibrary error " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(handle);
#else
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle && error) {
    const char* msg = dlerror();
    *error = msg ? msg : name + ": cannot be opened";
  }
  return handle;
#endif
}

void* library_symbol(void* handle, const char* name) {
#ifdef _WIN32
  return reinterpret_cast<void*>(GetProcAddress(reinterpret_cast<HMODULE>(handle), name));
#else
  return dlsym(handle, name);
#endif
}

void preload_icd_vendors(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".icd") continue;
    std::ifstream in(entry.path());
    std::string name;
    std::getline(in, name);
    while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.pop_back();
    if (name.empty()) continue;
    const fs::path lib = fs::path(name).is_absolute() ? fs::path(name) : fs::path(dir) / name;
    if (fs::exists(lib, ec)) open_library(lib.string(), nullptr);
  }
}

}  // namespace torch_ocl
