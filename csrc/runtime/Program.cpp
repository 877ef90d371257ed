#include "runtime/Program.h"

#include <c10/util/Exception.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "runtime/Device.h"
#include "runtime/OclApi.h"

namespace torch_ocl {

std::string embedded_kernel(const char* name);  // generated from kernels/

namespace {

namespace fs = std::filesystem;

std::mutex g_mutex;
std::unordered_map<std::string, cl_program> g_programs;  // key: device|file|options
std::unordered_map<std::string, cl_kernel> g_kernels;    // key: program key|kernel

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

fs::path cache_dir() {
  const char* off = std::getenv("TORCH_OCL_CACHE");
  if (off && std::string(off) == "0") return {};
  if (const char* dir = std::getenv("TORCH_OCL_CACHE_DIR")) return fs::path(dir);
#ifdef _WIN32
  if (const char* local = std::getenv("LOCALAPPDATA"))
    return fs::path(local) / "torch_ocl" / "cache";
#else
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) return fs::path(xdg) / "torch_ocl";
  if (const char* home = std::getenv("HOME")) return fs::path(home) / ".cache" / "torch_ocl";
#endif
  return {};
}

std::string build_log(const DeviceInfo& info, cl_program prog) {
  size_t size = 0;
  cl().clGetProgramBuildInfo(prog, info.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size)
    cl().clGetProgramBuildInfo(prog, info.id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

cl_program try_binary(const DeviceInfo& info, const fs::path& file, const std::string& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return nullptr;
  std::vector<unsigned char> bin((std::istreambuf_iterator<char>(in)), {});
  if (bin.empty()) return nullptr;
  const unsigned char* data = bin.data();
  size_t size = bin.size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program prog =
      cl().clCreateProgramWithBinary(info.context, 1, &info.id, &size, &data, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) return nullptr;
  if (cl().clBuildProgram(prog, 1, &info.id, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    cl().clReleaseProgram(prog);
    return nullptr;
  }
  return prog;
}

void save_binary(const DeviceInfo& info, cl_program prog, const fs::path& file) {
  size_t size = 0;
  if (cl().clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) !=
          CL_SUCCESS ||
      size == 0)
    return;
  std::vector<unsigned char> bin(size);
  unsigned char* ptr = bin.data();
  if (cl().clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS)
    return;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return;
  // Write to a unique temporary name and rename, so concurrent processes never see half a file.
  const fs::path tmp = file.string() + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(&bin));
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return;
    out.write(reinterpret_cast<const char*>(bin.data()), static_cast<std::streamsize>(size));
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
}

cl_program build(int device, const std::string& source, const std::string& options,
                 const std::string& what) {
  const DeviceInfo& info = device_info(device);
  const std::string all_options = device_build_options(device) + " " + options;
  fs::path cached;
  const fs::path dir = cache_dir();
  if (!dir.empty()) {
    uint64_t h = fnv1a(info.name);
    h = fnv1a(info.vendor, h);
    h = fnv1a(info.driver_version, h);
    h = fnv1a(info.platform_version, h);
    h = fnv1a(source, h);
    h = fnv1a(all_options, h);
    char name[32];
    std::snprintf(name, sizeof(name), "%016llx.bin", static_cast<unsigned long long>(h));
    cached = dir / name;
    if (cl_program prog = try_binary(info, cached, all_options)) return prog;
  }
  const char* src = source.c_str();
  size_t len = source.size();
  cl_int err = CL_SUCCESS;
  cl_program prog = cl().clCreateProgramWithSource(info.context, 1, &src, &len, &err);
  OCL_CHECK(err);
  err = cl().clBuildProgram(prog, 1, &info.id, all_options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = build_log(info, prog);
    cl().clReleaseProgram(prog);
    TORCH_CHECK(false, "torch-ocl: failed to build the OpenCL program for ", what,
                " on ocl:", device, " (", info.name, ", ", info.platform_name, ") with options '",
                all_options, "': ", cl_error_name(err), ". Compiler log:\n", log);
  }
  if (!cached.empty()) save_binary(info, prog, cached);
  return prog;
}

}  // namespace

std::string device_build_options(int device) {
  const DeviceInfo& info = device_info(device);
  std::string opts = info.c_major >= 2 ? "-cl-std=CL2.0" : "-cl-std=CL1.2";
  if (info.fp64) opts += " -DTORCH_OCL_FP64";
  return opts;
}

cl_kernel get_kernel(int device, const char* file, const char* kernel, const std::string& options) {
  std::string key;
  key.reserve(64 + options.size());
  key += static_cast<char>('0' + device);
  key += '|';
  key += file;
  key += '|';
  key += options;
  const size_t program_key_len = key.size();
  key += '|';
  key += kernel;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_kernels.find(key);
  if (it != g_kernels.end()) return it->second;
  const std::string program_key = key.substr(0, program_key_len);
  cl_program prog = nullptr;
  auto pit = g_programs.find(program_key);
  if (pit != g_programs.end()) {
    prog = pit->second;
  } else {
    const std::string common = embedded_kernel("common.clh");
    const std::string body = embedded_kernel(file);
    TORCH_CHECK(!body.empty(), "torch-ocl: no embedded kernel file ", file);
    prog = build(device, common + "\n" + body, options, std::string("kernels/") + file);
    g_programs[program_key] = prog;
  }
  cl_int err = CL_SUCCESS;
  cl_kernel k = cl().clCreateKernel(prog, kernel, &err);
  TORCH_CHECK(err == CL_SUCCESS, "torch-ocl: kernel '", kernel, "' not found in kernels/", file,
              " (", cl_error_name(err), ")");
  g_kernels[key] = k;
  return k;
}

void build_source_for_test(int device, const std::string& source, const std::string& options) {
  cl_program prog = build(device, source, options, "a test program");
  cl().clReleaseProgram(prog);
}

}  // namespace torch_ocl
