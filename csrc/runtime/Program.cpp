// OpenCL programs: built from kernels/*.cl (embedded at build time) or from test sources, kept in
// memory for the life of the process, and cached on disk as the driver's binaries.
//
// On-disk cache (TORCH_OCL_CACHE_DIR; TORCH_OCL_CACHE=0 disables it; TORCH_OCL_CACHE_LOG=1 reports
// every hit, miss, rejection and write on stderr). One file per program, named
// "<16 hex digits>-v1.bin" after a 64-bit FNV-1a hash of the cache key. Layout, integers
// little-endian:
//
//   offset  size  field
//        0     8  magic "TOCLBIN\0"
//        8     4  format version (1)
//       12     4  key size K
//       16     8  payload size P
//       24     8  FNV-1a 64 checksum of the payload
//       32     K  the cache key, verbatim: device name, vendor, driver version, platform version,
//                 the implementations' compiler settings from the environment (only when any is
//                 set, see compiler_environment), build options and the program's full source
//                 text, each length-prefixed
//     32+K     P  payload: the driver's binary (CL_PROGRAM_BINARIES)
//
// Guarantees:
// - A file is used only if it is a regular file, its size is exactly 32 + K + P, magic, version and
//   key match (so a file under another entry's name, or a hash collision of names, is a miss) and
//   the payload's checksum matches. Only then do its bytes reach clCreateProgramWithBinary, and the
//   driver's own binary status and clBuildProgram must succeed as well.
// - Any doubt is a miss: the file is removed (best effort, regular files only), the program is
//   built from source and the file written again. If a kernel cannot be created from a program that
//   came from the cache, that program is rebuilt from source once before anything is reported.
// - Writes go to a unique temporary file (pid, thread, counter) in the same directory; every write
//   and the close are checked, and only a complete file is renamed into place (atomic on POSIX), so
//   readers never see part of a file. A full disk, an unwritable or uncreatable directory, or any
//   other I/O failure means no caching for that program, silently. There is no fsync: a file torn
//   by a power loss fails its size or checksum test and is rebuilt.
// - No exception from the cache reaches the caller, and a cache problem never replaces a real
//   compiler error: building from source reports its errors as usual.
// - A process that dies between creating and renaming a temporary file leaves a "*.tmp.*" file
//   that is never read.
#include "runtime/Program.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#ifdef _WIN32
#include <process.h>
#include <stdlib.h>  // _environ
#else
#include <unistd.h>
#endif
#ifdef __APPLE__
#include <crt_externs.h>  // _NSGetEnviron: a shared library cannot use `environ` on macOS
#endif

#include "runtime/Device.h"
#include "runtime/OclApi.h"

#if !defined(_WIN32) && !defined(__APPLE__)
extern "C" char** environ;
#endif

namespace torch_ocl {

std::string embedded_kernel(const char* name);  // generated from kernels/

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;

// ---------------------------------------------------------------------------------------------
// Cache location, key and log

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

void cache_log(const std::string& message) {
  static const bool enabled = [] {
    const char* v = std::getenv("TORCH_OCL_CACHE_LOG");
    return v && *v && std::string(v) != "0";
  }();
  if (enabled) std::cerr << "torch-ocl cache: " << message << std::endl;
}

// For the catch blocks of the cache: reports `e` and never throws (not even std::bad_alloc).
void log_exception(const char* action, const fs::path& file, const std::exception& e) noexcept {
  try {
    cache_log(std::string(action) + " " + file.string() + ": " + e.what());
  } catch (...) {
  }
}

uint64_t fnv1a(const unsigned char* data, size_t size) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 1099511628211ull;
  }
  return h;
}
// The string overload (declared in Program.h) beside this one.
using ::torch_ocl::fnv1a;

void append_field(std::string& out, const char* name, const std::string& value) {
  out += name;
  out += '[';
  out += std::to_string(value.size());
  out += "]=";
  out += value;
  out += '\n';
}

// Environment variables through which OpenCL implementations change the code their compiler
// makes for the same source and options. Intel's CPU runtime reads its settings from
// CL_CONFIG_* variables (vectoriser mode, target ISA, fast relaxed math, loop unrolling, ...):
// every one of them counts, as the runtime's own list of them is not public. PoCL's: extra
// compiler flags, the work-group method, and the work-group compiler's parameters, which also
// shape the work-group functions a binary carries with POCL_BINARY_SPECIALIZE_WG (measured on
// PoCL 3.0: POCL_WORK_GROUP_METHOD, POCL_EXTRA_BUILD_FLAGS and POCL_BINARY_SPECIALIZE_WG change
// the size of the binary). PoCL's others (POCL_DEBUG, POCL_CACHE_DIR, POCL_KERNEL_CACHE,
// POCL_DEVICES, POCL_MAX_PTHREAD_COUNT, POCL_AFFINITY, POCL_MEMORY_LIMIT, tracing, ...) select,
// log or schedule, and leave the binary alone.
bool affects_compiler(const std::string& name) {
  static const char* const kPocl[] = {
      "POCL_EXTRA_BUILD_FLAGS",         "POCL_WORK_GROUP_METHOD",
      "POCL_BINARY_SPECIALIZE_WG",      "POCL_WORK_GROUP_SPECIALIZATION",
      "POCL_WILOOPS_MAX_UNROLL_COUNT",  "POCL_FULL_REPLICATION_THRESHOLD",
      "POCL_FORCE_PARALLEL_OUTER_LOOP",
  };
  if (name.rfind("CL_CONFIG_", 0) == 0) return true;
  for (const char* p : kPocl)
    if (name == p) return true;
  return false;
}

// "NAME=value" lines of the compiler-affecting variables set in this process, sorted by name;
// "" when none is set (the key is then what it was before these settings counted, so existing
// cache entries stay valid). Read once: the implementations read them when they load.
const std::string& compiler_environment() {
  static const std::string env = [] {
#if defined(_WIN32)
    char** vars = _environ;
#elif defined(__APPLE__)
    char** vars = *_NSGetEnviron();
#else
    char** vars = environ;
#endif
    std::vector<std::string> found;
    for (char** v = vars; v && *v; ++v) {
      const std::string entry(*v);
      const size_t eq = entry.find('=');
      if (eq != std::string::npos && affects_compiler(entry.substr(0, eq))) found.push_back(entry);
    }
    std::sort(found.begin(), found.end());
    std::string out;
    for (const std::string& e : found) out += e + '\n';
    return out;
  }();
  return env;
}

// Everything the driver's binary depends on, stored verbatim in the file.
std::string cache_key(const DeviceInfo& info, const std::string& source,
                      const std::string& options) {
  std::string key;
  key.reserve(source.size() + options.size() + 256);
  append_field(key, "device", info.name);
  append_field(key, "vendor", info.vendor);
  append_field(key, "driver", info.driver_version);
  append_field(key, "platform", info.platform_version);
  if (!compiler_environment().empty()) append_field(key, "compiler_env", compiler_environment());
  append_field(key, "options", options);
  append_field(key, "source", source);
  return key;
}

fs::path cache_file(const fs::path& dir, const std::string& key) {
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx-v1.bin", static_cast<unsigned long long>(fnv1a(key)));
  return dir / name;
}

// ---------------------------------------------------------------------------------------------
// File format (see the top of this file)

constexpr unsigned char kMagic[8] = {'T', 'O', 'C', 'L', 'B', 'I', 'N', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 32;
constexpr uint64_t kMaxFileSize = uint64_t{1} << 30;  // anything larger is not ours

void put_le(Bytes& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<unsigned char>(value >> (8 * i)));
}

uint64_t get_le(const unsigned char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(p[i]) << (8 * i);
  return value;
}

Bytes encode_entry(const std::string& key, const Bytes& binary) {
  Bytes out;
  out.reserve(kHeaderSize + key.size() + binary.size());
  out.insert(out.end(), std::begin(kMagic), std::end(kMagic));
  put_le(out, kFormatVersion, 4);
  put_le(out, key.size(), 4);
  put_le(out, binary.size(), 8);
  put_le(out, fnv1a(binary.data(), binary.size()), 8);
  out.insert(out.end(), key.begin(), key.end());
  out.insert(out.end(), binary.begin(), binary.end());
  return out;
}

// The payload of `file` if it is a valid entry for `key`; otherwise empty, with the reason in
// `why`.
Bytes decode_entry(const Bytes& file, const std::string& key, std::string& why) {
  if (file.size() < kHeaderSize) {
    why = "shorter than a header";
    return {};
  }
  const unsigned char* p = file.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    why = "bad magic";
    return {};
  }
  if (get_le(p + 8, 4) != kFormatVersion) {
    why = "unknown format version";
    return {};
  }
  const uint64_t key_size = get_le(p + 12, 4);
  const uint64_t payload_size = get_le(p + 16, 8);
  if (payload_size == 0 || payload_size > kMaxFileSize ||
      file.size() != kHeaderSize + key_size + payload_size) {
    why = "size does not match the header (truncated or extended)";
    return {};
  }
  const unsigned char* stored_key = p + kHeaderSize;
  if (key_size != key.size() || std::memcmp(stored_key, key.data(), key.size()) != 0) {
    why = "written for another program or device";
    return {};
  }
  const unsigned char* payload = stored_key + key_size;
  if (fnv1a(payload, payload_size) != get_le(p + 24, 8)) {
    why = "checksum mismatch";
    return {};
  }
  return Bytes(payload, payload + payload_size);
}

// ---------------------------------------------------------------------------------------------
// File I/O. These throw nothing on I/O errors (they report through `why`), but may throw
// std::bad_alloc or filesystem errors; the callers catch std::exception.

enum class ReadStatus { kRead, kAbsent, kUnusable };

ReadStatus read_regular_file(const fs::path& path, Bytes& out, std::string& why) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || status.type() == fs::file_type::not_found) return ReadStatus::kAbsent;
  if (status.type() != fs::file_type::regular) {
    why = "not a regular file";
    return ReadStatus::kUnusable;
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > kMaxFileSize) {
    why = ec ? "size unreadable" : "too large";
    return ReadStatus::kUnusable;
  }
  std::FILE* f = std::fopen(path.string().c_str(), "rb");
  if (!f) {
    why = "cannot open";
    return ReadStatus::kUnusable;
  }
  out.resize(static_cast<size_t>(size));
  const size_t got = out.empty() ? 0 : std::fread(out.data(), 1, out.size(), f);
  const bool more = std::fgetc(f) != EOF;  // grew since file_size: not a stable file
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (got != out.size() || more || failed) {
    why = "read failed or size changed while reading";
    return ReadStatus::kUnusable;
  }
  return ReadStatus::kRead;
}

void remove_if_regular(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(path, ec))) fs::remove(path, ec);
}

unsigned long process_id() {
#ifdef _WIN32
  return static_cast<unsigned long>(_getpid());
#else
  return static_cast<unsigned long>(getpid());
#endif
}

// A name in `file`'s directory that no other process, thread or call uses at the same time.
fs::path temporary_name(const fs::path& file) {
  static std::atomic<unsigned long long> counter{0};
  const size_t thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
  char suffix[96];
  std::snprintf(suffix, sizeof(suffix), ".tmp.%lu.%zx.%llu", process_id(), thread,
                counter.fetch_add(1));
  return fs::path(file.string() + suffix);
}

bool write_whole_file(const fs::path& path, const Bytes& bytes) {
  std::FILE* f = std::fopen(path.string().c_str(), "wb");
  if (!f) return false;
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool flushed = std::fflush(f) == 0;
  const bool closed = std::fclose(f) == 0;
  return written && flushed && closed;
}

// Writes `bytes` to `file` so that readers see either the old file, no file, or all of `bytes`.
bool write_atomically(const fs::path& file, const Bytes& bytes, std::string& why) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) {
    why = "cannot create the directory: " + ec.message();
    return false;
  }
  const fs::path tmp = temporary_name(file);
  if (!write_whole_file(tmp, bytes)) {
    fs::remove(tmp, ec);
    why = "cannot write a temporary file (disk full or not writable?)";
    return false;
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    why = "cannot rename into place: " + ec.message();
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// OpenCL

std::string build_log(const DeviceInfo& info, cl_program prog) {
  size_t size = 0;
  cl().clGetProgramBuildInfo(prog, info.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size)
    cl().clGetProgramBuildInfo(prog, info.id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// A program from a driver binary, or nullptr if the driver refuses it.
cl_program program_from_binary(const DeviceInfo& info, const Bytes& binary,
                               const std::string& options) {
  const unsigned char* data = binary.data();
  const size_t size = binary.size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program prog =
      cl().clCreateProgramWithBinary(info.context, 1, &info.id, &size, &data, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    if (prog) cl().clReleaseProgram(prog);
    return nullptr;
  }
  if (cl().clBuildProgram(prog, 1, &info.id, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    cl().clReleaseProgram(prog);
    return nullptr;
  }
  return prog;
}

// The driver's binary of a built program (empty if it offers none).
Bytes program_binary(cl_program prog) {
  size_t size = 0;
  if (cl().clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) !=
          CL_SUCCESS ||
      size == 0)
    return {};
  Bytes binary(size);
  unsigned char* ptr = binary.data();
  if (cl().clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS)
    return {};
  return binary;
}

// Builds `source`; throws with the compiler log on failure.
cl_program program_from_source(int device, const DeviceInfo& info, const std::string& source,
                               const std::string& options, const std::string& what) {
  const char* src = source.c_str();
  size_t len = source.size();
  cl_int err = CL_SUCCESS;
  cl_program prog = cl().clCreateProgramWithSource(info.context, 1, &src, &len, &err);
  OCL_CHECK(err);
  err = cl().clBuildProgram(prog, 1, &info.id, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = build_log(info, prog);
    cl().clReleaseProgram(prog);
    TORCH_CHECK(false, "torch-ocl: failed to build the OpenCL program for ", what,
                " on ocl:", device, " (", info.name, ", ", info.platform_name, ") with options '",
                options, "': ", cl_error_name(err), ". Compiler log:\n", log);
  }
  return prog;
}

// ---------------------------------------------------------------------------------------------
// The disk cache: load and store never throw and never fail the caller.

// The program cached in `file` for `key`, or nullptr (a miss; a bad file is removed).
cl_program load_cached(const DeviceInfo& info, const fs::path& file, const std::string& key,
                       const std::string& options) noexcept {
  try {
    Bytes bytes;
    std::string why;
    const ReadStatus read = read_regular_file(file, bytes, why);
    if (read == ReadStatus::kAbsent) {
      cache_log("miss " + file.string());
      return nullptr;
    }
    Bytes binary;
    if (read == ReadStatus::kRead) binary = decode_entry(bytes, key, why);
    cl_program prog = binary.empty() ? nullptr : program_from_binary(info, binary, options);
    if (!prog) {
      if (why.empty()) why = "refused by the driver";
      cache_log("rejected " + file.string() + ": " + why);
      remove_if_regular(file);
      return nullptr;
    }
    cache_log("hit " + file.string());
    return prog;
  } catch (const std::exception& e) {
    log_exception("rejected", file, e);
    return nullptr;
  }
}

void store_cached(cl_program prog, const fs::path& file, const std::string& key) noexcept {
  try {
    const Bytes binary = program_binary(prog);
    if (binary.empty()) return;
    std::string why;
    if (write_atomically(file, encode_entry(key, binary), why))
      cache_log("wrote " + file.string());
    else
      cache_log("not written " + file.string() + ": " + why);
  } catch (const std::exception& e) {
    log_exception("not written", file, e);
  }
}

struct Built {
  cl_program program = nullptr;
  bool from_cache = false;
};

// Builds `source` for `device`, through the disk cache unless `read_cache` is false (the result is
// written to the cache either way). Throws only for a real compiler (or OpenCL) error.
Built build(int device, const std::string& source, const std::string& options,
            const std::string& what, bool read_cache) {
  const DeviceInfo& info = device_info(device);
  const std::string all_options = device_build_options(device) + " " + options;
  const fs::path dir = cache_dir();
  std::string key;
  fs::path file;
  if (!dir.empty()) {
    key = cache_key(info, source, all_options);
    file = cache_file(dir, key);
    if (read_cache)
      if (cl_program prog = load_cached(info, file, key, all_options)) return {prog, true};
  }
  cl_program prog = program_from_source(device, info, source, all_options, what);
  cache_log("built " + what + " from source");
  if (!file.empty()) store_cached(prog, file, key);
  return {prog, false};
}

// ---------------------------------------------------------------------------------------------
// In-memory caches (see the contract in Program.h)

struct ProgramSource {
  std::string options;
  std::string what;                   // for messages: "kernels/<file>" or "a test program"
  std::function<std::string()> text;  // the full source, produced only when a build needs it
};

// One program per exact key. `mutex` serialises the builds of this key only, so threads building
// other programs, or fetching kernels that exist, never wait for a compiler.
struct ProgramSlot {
  std::mutex mutex;
  cl_program program = nullptr;  // guarded by mutex; built programs live as long as the process
  bool from_cache = false;
};

// Where a shared kernel (get_kernel's) comes from, so that threads can make their own copies.
struct KernelOrigin {
  cl_program program = nullptr;
  std::string name;
};

std::mutex g_mutex;  // guards the three maps below, and nothing else: never held while building
std::unordered_map<std::string, std::unique_ptr<ProgramSlot>> g_programs;  // key: program_key()
std::unordered_map<std::string, cl_kernel> g_kernels;   // key: program key + '|' + kernel name
std::unordered_map<cl_kernel, KernelOrigin> g_origins;  // every kernel in g_kernels

// Exact keys, never hashes: the origin (kernel file or test source) is length-prefixed, and kernel
// names (C identifiers) cannot contain the '|' that follows the options.
std::string program_key(int device, const std::string& origin, const std::string& options) {
  std::string key = std::to_string(device);
  key += '|';
  key += std::to_string(origin.size());
  key += ':';
  key += origin;
  key += '|';
  key += options;
  return key;
}

ProgramSlot& program_slot(const std::string& key) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::unique_ptr<ProgramSlot>& slot = g_programs[key];
  if (!slot) slot = std::make_unique<ProgramSlot>();
  return *slot;  // slots are never erased, and unordered_map nodes do not move
}

// The slot's program, built (through the disk cache) by the first caller; a failed build leaves
// the slot empty, so the next caller tries again and sees the compiler error too.
Built ensure_built(int device, ProgramSlot& slot, const ProgramSource& source) {
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (!slot.program) {
    const Built built = build(device, source.text(), source.options, source.what, true);
    slot.program = built.program;
    slot.from_cache = built.from_cache;
  }
  return {slot.program, slot.from_cache};
}

// Replaces the slot's program `suspect` (one that came from the disk cache) by a build from
// source, unless another thread already did. The old program is not released: kernels made from it
// may be in use, and this happens at most once per slot.
cl_program rebuild_from_source(int device, ProgramSlot& slot, cl_program suspect,
                               const ProgramSource& source) {
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.program == suspect && slot.from_cache) {
    const Built built = build(device, source.text(), source.options, source.what, false);
    slot.program = built.program;
    slot.from_cache = false;
  }
  return slot.program;
}

// A new kernel object for `kernel` of the slot's program, and the program it was created from.
std::pair<cl_kernel, cl_program> create_kernel(int device, ProgramSlot& slot,
                                               const ProgramSource& source, const char* kernel) {
  const Built program = ensure_built(device, slot, source);
  cl_program from = program.program;
  cl_int err = CL_SUCCESS;
  cl_kernel k = cl().clCreateKernel(from, kernel, &err);
  if (err != CL_SUCCESS && program.from_cache) {
    cache_log(std::string("kernel '") + kernel + "' is missing from the cached " + source.what +
              "; rebuilding it from source");
    from = rebuild_from_source(device, slot, program.program, source);
    k = cl().clCreateKernel(from, kernel, &err);
  }
  TORCH_CHECK(err == CL_SUCCESS, "torch-ocl: kernel '", kernel, "' not found in ", source.what,
              " (", cl_error_name(err), ")");
  return {k, from};
}

// ---------------------------------------------------------------------------------------------
// Per-thread kernel objects (see thread_kernel in Program.h)

std::atomic<int64_t> g_thread_kernels{0};  // live per-thread kernel objects, for tests

// Per-thread kernels of threads that have exited, released later by a live thread.
//
// A thread's own kernels are never released from its thread-exit destructor: when a thread
// exits, C++ destroys its thread_local objects in the reverse order of their construction, and
// the driver's own thread-locals may already be gone by the time ours is destroyed. Oclgrind
// keeps a thread_local std::stack of API names that every entry point pushes to; it is
// constructed by the thread's first OpenCL call, which is often the clCreateKernel in
// ThreadKernels::create, after the ThreadKernels object itself was constructed. It is then
// destroyed first, and each clReleaseKernel from ~ThreadKernels pushed into its freed memory
// (glibc: "free(): corrupted unsorted chunks", "tcache_thread_shutdown(): unaligned tcache chunk
// detected"). At process exit the autograd engine's device threads also run their thread-exit
// destructors while the main thread goes on through static destructors and the driver's own
// teardown. A live thread that enters the driver has the driver's thread state intact, so the
// dead threads' kernels are released there.
//
// Never destroyed: threads exiting during static destruction still reach it.
struct RetiredKernels {
  std::mutex mutex;
  std::vector<cl_kernel> kernels;
};
RetiredKernels& retired_kernels() {
  static auto* retired = new RetiredKernels;
  return *retired;
}

// Releases the kernels of exited threads; called by live threads only. Never throws.
void release_retired_kernels() noexcept {
  if (in_bad_fork()) return;  // the driver's objects belong to the parent
  std::vector<cl_kernel> kernels;
  RetiredKernels& retired = retired_kernels();
  {
    std::lock_guard<std::mutex> lock(retired.mutex);
    if (retired.kernels.empty()) return;
    kernels.swap(retired.kernels);
  }
  try {
    const ClApi& api = cl();
    for (cl_kernel k : kernels) api.clReleaseKernel(k);
    g_thread_kernels.fetch_sub(static_cast<int64_t>(kernels.size()), std::memory_order_relaxed);
  } catch (...) {
  }
}

// This thread's own copies of shared kernels, handed to retired_kernels() when the thread exits.
// The last lookup is remembered: a thread that launches the same kernel again finds it without
// hashing.
class ThreadKernels {
 public:
  cl_kernel get(cl_kernel shared) {
    if (shared == last_shared_) return last_own_;
    auto it = own_.find(shared);
    cl_kernel own = it != own_.end() ? it->second : create(shared);
    last_shared_ = shared;
    last_own_ = own;
    return own;
  }

  ~ThreadKernels() {
    // No OpenCL call here (see RetiredKernels). A forked child leaves the parent's objects alone
    // (and does not take a lock that a parent thread may have held at the fork). Never throws:
    // kernels that cannot be handed over are left to the process's end.
    if (own_.empty() || in_bad_fork()) return;
    try {
      RetiredKernels& retired = retired_kernels();
      std::lock_guard<std::mutex> lock(retired.mutex);
      for (const auto& entry : own_) retired.kernels.push_back(entry.second);
    } catch (...) {
    }
  }

 private:
  cl_kernel create(cl_kernel shared) {
    KernelOrigin origin;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      auto it = g_origins.find(shared);
      TORCH_CHECK(it != g_origins.end(),
                  "torch-ocl: KernelLaunch needs a kernel returned by get_kernel");
      origin = it->second;
    }
    release_retired_kernels();
    cl_int err = CL_SUCCESS;
    cl_kernel own = cl().clCreateKernel(origin.program, origin.name.c_str(), &err);
    TORCH_CHECK(err == CL_SUCCESS, "torch-ocl: clCreateKernel('", origin.name, "') failed with ",
                cl_error_name(err));
    try {
      own_.emplace(shared, own);
    } catch (...) {
      cl().clReleaseKernel(own);
      throw;
    }
    g_thread_kernels.fetch_add(1, std::memory_order_relaxed);
    return own;
  }

  std::unordered_map<cl_kernel, cl_kernel> own_;  // shared kernel -> this thread's copy
  cl_kernel last_shared_ = nullptr;
  cl_kernel last_own_ = nullptr;
};

// The shared kernel for (program key, kernel name): created once, kept for the process.
cl_kernel create_shared_kernel(int device, const ProgramSource& source, const char* kernel,
                               const std::string& key, const std::string& kernel_key) {
  const auto [k, program] = create_kernel(device, program_slot(key), source, kernel);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto [it, inserted] = g_kernels.emplace(kernel_key, k);
  if (inserted) {
    g_origins.emplace(k, KernelOrigin{program, kernel});
  } else {
    cl().clReleaseKernel(k);  // another thread created it meanwhile
  }
  return it->second;
}

}  // namespace

std::string cache_directory() { return cache_dir().string(); }

std::string device_identity(int device) {
  const DeviceInfo& info = device_info(device);
  std::string id;
  append_field(id, "device", info.name);
  append_field(id, "vendor", info.vendor);
  append_field(id, "driver", info.driver_version);
  append_field(id, "platform", info.platform_version);
  if (!compiler_environment().empty()) append_field(id, "compiler_env", compiler_environment());
  return id;
}

std::string device_build_options(int device) {
  const DeviceInfo& info = device_info(device);
  std::string opts = info.c_major >= 2 ? "-cl-std=CL2.0" : "-cl-std=CL1.2";
  if (info.fp64) opts += " -DTORCH_OCL_FP64";
  return opts;
}

namespace {
// A program's text: kernels/common.clh, then the body with each line `#include "<name>.clh"`
// replaced by that embedded header (programs are built from strings, so there is no directory
// for the compiler's own #include to search). One level: headers include nothing.
std::string program_text(const std::string& body) {
  constexpr std::string_view kInclude = "#include \"";
  std::string out = embedded_kernel("common.clh");
  out += '\n';
  out.reserve(out.size() + body.size());
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string::npos) end = body.size();
    const std::string_view line(body.data() + pos, end - pos);
    if (line.starts_with(kInclude) && line.ends_with(".clh\"")) {
      const std::string name(line.substr(kInclude.size(), line.size() - kInclude.size() - 1));
      const std::string header = embedded_kernel(name.c_str());
      TORCH_CHECK(!header.empty(), "torch-ocl: a kernel source includes \"", name,
                  "\", which is not one of the package's kernels/*.clh headers");
      out += header;
    } else {
      out.append(line);
    }
    out += '\n';
    pos = end + 1;
  }
  return out;
}
}  // namespace

cl_kernel get_kernel(int device, const char* file, const char* kernel, const std::string& options) {
  const std::string key = program_key(device, file, options);
  std::string kernel_key = key + '|' + kernel;
  // Kernels are never erased, so what a thread has seen stays valid: its own map spares it the
  // global lock.
  thread_local std::unordered_map<std::string, cl_kernel> seen;
  if (auto it = seen.find(kernel_key); it != seen.end()) return it->second;
  cl_kernel found = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_kernels.find(kernel_key);
    if (it != g_kernels.end()) found = it->second;
  }
  if (!found) {
    const ProgramSource source{options, std::string("kernels/") + file, [file] {
                                 const std::string body = embedded_kernel(file);
                                 TORCH_CHECK(!body.empty(), "torch-ocl: no embedded kernel file ",
                                             file);
                                 return program_text(body);
                               }};
    found = create_shared_kernel(device, source, kernel, key, kernel_key);
  }
  seen.emplace(std::move(kernel_key), found);
  return found;
}

std::string source_program_text(const std::string& source) { return program_text(source); }

cl_kernel get_source_kernel(int device, const std::string& source, const std::string& kernel,
                            const std::string& options, const std::string& what) {
  // Run-time sources are few and each is looked up once per handle (runtime/SourceKernel.cpp
  // keeps the result), so no per-thread map here: the global lock is taken once per call.
  const std::string key = program_key(device, "source:" + source, options);
  const std::string kernel_key = key + '|' + kernel;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_kernels.find(kernel_key);
    if (it != g_kernels.end()) return it->second;
  }
  const ProgramSource spec{options, what, [&source] { return source_program_text(source); }};
  return create_shared_kernel(device, spec, kernel.c_str(), key, kernel_key);
}

cl_kernel thread_kernel(cl_kernel shared) {
  thread_local ThreadKernels kernels;
  return kernels.get(shared);
}

int64_t thread_kernel_count() {
  release_retired_kernels();
  return g_thread_kernels.load(std::memory_order_relaxed);
}

void build_source_for_test(int device, const std::string& source, const std::string& options) {
  const ProgramSource spec{options, "a test program", [&source] { return source; }};
  ensure_built(device, program_slot(program_key(device, "test:" + source, options)), spec);
}

uint64_t fnv1a(const std::string& s) {
  return fnv1a(reinterpret_cast<const unsigned char*>(s.data()), s.size());
}

}  // namespace torch_ocl
