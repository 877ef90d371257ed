// Run-time source kernels (see SourceKernel.h).
#include "runtime/SourceKernel.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/OclApi.h"
#include "runtime/Program.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

namespace fs = std::filesystem;

struct Entry {
  std::string source, name, options;
  // Per device: the shared kernel (get_source_kernel's) and its CL_KERNEL_WORK_GROUP_SIZE, set
  // once by the first thread that needs them (a race builds nothing twice: the program cache
  // returns the same kernel to both).
  std::array<std::atomic<cl_kernel>, kMaxDevices> kernels{};
  std::array<std::atomic<size_t>, kMaxDevices> max_group{};
};

std::mutex g_mutex;  // guards the two containers below; never held while building or launching
std::deque<std::unique_ptr<Entry>> g_entries;      // handle = index; never erased
std::unordered_map<std::string, int64_t> g_index;  // exact (options, name, source) -> handle
std::atomic<int64_t> g_launches{0};

Entry& entry_of(int64_t handle) {
  std::lock_guard<std::mutex> lock(g_mutex);
  TORCH_CHECK(handle >= 0 && handle < static_cast<int64_t>(g_entries.size()),
              "torch-ocl: no run-time source kernel has handle ", handle,
              " (handles come from torch.ops.ocl._compile_source in this process)");
  return *g_entries[static_cast<size_t>(handle)];
}

// Writes the full program text to a file for the user to read beside the compiler log; returns
// its path, or "" if it cannot be written.
std::string write_failed_source(const std::string& text) {
  try {
    fs::path dir = cache_directory();
    if (dir.empty()) dir = fs::temp_directory_path() / "torch_ocl";
    dir /= "failed-sources";
    std::error_code ec;
    fs::create_directories(dir, ec);
    char name[40];
    std::snprintf(name, sizeof(name), "%016llx.cl", static_cast<unsigned long long>(fnv1a(text)));
    const fs::path file = dir / name;
    std::FILE* f = std::fopen(file.string().c_str(), "wb");
    if (!f) return {};
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    return ok && closed ? file.string() : std::string();
  } catch (const std::exception&) {
    return {};
  }
}

cl_kernel kernel_for(Entry& e, int device) {
  cl_kernel k = e.kernels[device].load(std::memory_order_acquire);
  if (k) return k;
  try {
    k = get_source_kernel(device, e.source, e.name, e.options,
                          "the generated kernel '" + e.name + "'");
  } catch (const c10::Error& err) {
    const std::string path = write_failed_source(source_program_text(e.source));
    TORCH_CHECK(false, err.msg(), "\nThe program's full text (the lines the log refers to) is in ",
                path.empty() ? std::string("<could not be written>") : path,
                ". This is a bug of torch-ocl's code generator: please report it with that file; "
                "meanwhile torch.compile(..., backend=\"aot_eager\") runs the model without "
                "generated kernels.");
  }
  size_t group = 0;
  if (cl().clGetKernelWorkGroupInfo(k, device_info(device).id, CL_KERNEL_WORK_GROUP_SIZE,
                                    sizeof(group), &group, nullptr) != CL_SUCCESS ||
      group == 0)
    group = device_profile(device).max_work_group;
  e.max_group[device].store(group, std::memory_order_relaxed);
  e.kernels[device].store(k, std::memory_order_release);
  return k;
}

size_t pow2_at_most(size_t v) {
  size_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

}  // namespace

int64_t register_source_kernel(const std::string& source, const std::string& name,
                               const std::string& options) {
  TORCH_CHECK(!name.empty(), "torch-ocl: a run-time source kernel needs a kernel name");
  std::string key = std::to_string(options.size()) + ':' + options + '|' + name + '|' + source;
  Entry* e = nullptr;
  int64_t handle = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_index.find(key);
    if (it != g_index.end()) {
      handle = it->second;
      e = g_entries[static_cast<size_t>(handle)].get();
    } else {
      auto entry = std::make_unique<Entry>();
      entry->source = source;
      entry->name = name;
      entry->options = options;
      e = entry.get();
      handle = static_cast<int64_t>(g_entries.size());
      g_entries.push_back(std::move(entry));
      g_index.emplace(std::move(key), handle);
    }
  }
  kernel_for(*e, current_device());
  return handle;
}

void launch_source_kernel(int64_t handle, const std::vector<at::TensorBase>& tensors,
                          c10::ArrayRef<int64_t> ints, c10::ArrayRef<double> floats,
                          c10::ArrayRef<int64_t> global, c10::ArrayRef<int64_t> local) {
  Entry& e = entry_of(handle);
  const size_t dims = global.size();
  TORCH_CHECK(dims >= 1 && dims <= 3 && local.size() == dims, "torch-ocl: kernel '", e.name,
              "' needs 1 to 3 global sizes and as many local "
              "sizes, got ",
              global.size(), " and ", local.size());
  int device = -1;
  for (const at::TensorBase& t : tensors) {
    TORCH_CHECK(t.defined(), "torch-ocl: kernel '", e.name, "' got an undefined tensor");
    TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "torch-ocl: kernel '", e.name,
                "' takes ocl tensors, got one on ", t.device());
    const int d = t.device().index();
    TORCH_CHECK(device < 0 || d == device, "torch-ocl: kernel '", e.name,
                "' got tensors on ocl:", device, " and ocl:", d, "; move them to one device");
    device = d;
  }
  if (device < 0) device = current_device();
  size_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
  for (size_t i = 0; i < dims; ++i) {
    TORCH_CHECK(global[i] >= 0 && local[i] >= 1, "torch-ocl: kernel '", e.name,
                "': bad launch sizes (global ", global[i], ", local ", local[i], ")");
    if (global[i] == 0) return;  // nothing to do (OpenCL refuses empty ranges)
    g[i] = static_cast<size_t>(global[i]);
    l[i] = static_cast<size_t>(local[i]);
  }
  const cl_kernel k = kernel_for(e, device);
  // The work-group must fit the kernel and the device: shrink the first dimension (the one the
  // generated kernels give more than one work-item) to a power of two.
  const size_t limit = e.max_group[device].load(std::memory_order_relaxed);
  const size_t others = l[1] * l[2];
  TORCH_CHECK(others <= limit, "torch-ocl: kernel '", e.name, "': work-group of ", others,
              " items in dimensions 1-2 exceeds the kernel's limit ", limit);
  if (l[0] * others > limit) l[0] = pow2_at_most(limit / others);
  for (size_t i = 0; i < dims; ++i) g[i] = (g[i] + l[i] - 1) / l[i] * l[i];

  const bool fp64 = device_info(device).fp64;
  KernelLaunch launch(k);
  for (const at::TensorBase& t : tensors) {
    const BufferRef b = buffer_of(t);
    const size_t item = t.itemsize();
    TORCH_CHECK(b.offset % item == 0, "torch-ocl: kernel '", e.name, "': a ", t.dtype().name(),
                " tensor starts ", b.offset, " bytes into its buffer, not a whole number of ",
                "elements; make it contiguous (.clone()) first");
    launch.buffer(b, item);
  }
  for (int64_t v : ints) launch.arg(static_cast<cl_long>(v));
  for (double v : floats) {
    if (fp64)
      launch.arg(static_cast<cl_double>(v));
    else
      launch.arg(static_cast<cl_float>(v));
  }
  launch.enqueue(device, static_cast<cl_uint>(dims), g, l);
  g_launches.fetch_add(1, std::memory_order_relaxed);
}

int64_t source_launch_count() { return g_launches.load(std::memory_order_relaxed); }

}  // namespace torch_ocl
