// torch.ops.ocl.*: the device-level functions the Python package calls. No CPython API here:
// everything crosses through the dispatcher as custom ops.
#include <torch/library.h>

#include "ops/ElementwiseBatch.h"
#include "ops/ElementwiseTiny.h"
#include "ops/Fallback.h"
#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Generator.h"
#include "runtime/OclApi.h"
#include "runtime/Program.h"
#include "runtime/Stream.h"
#include "runtime/Sync.h"
#include "runtime/Tuning.h"

namespace torch_ocl {
namespace {

std::vector<std::string> property_strings(int64_t device) {
  const DeviceInfo& d = device_info(static_cast<int>(device));
  return {d.name,    d.vendor,    d.platform_name, d.driver_version,
          d.version, d.c_version, d.extensions};
}

std::vector<int64_t> property_ints(int64_t device) {
  const DeviceInfo& d = device_info(static_cast<int>(device));
  const int64_t type = (d.type & CL_DEVICE_TYPE_GPU)           ? 0
                       : (d.type & CL_DEVICE_TYPE_ACCELERATOR) ? 1
                       : (d.type & CL_DEVICE_TYPE_CPU)         ? 2
                                                               : 3;
  return {static_cast<int64_t>(d.global_mem),
          static_cast<int64_t>(d.max_alloc),
          d.compute_units,
          static_cast<int64_t>(d.max_work_group),
          static_cast<int64_t>(d.local_mem),
          d.fp16,
          d.fp64,
          type};
}

template <typename Pairs>
std::tuple<std::vector<std::string>, std::vector<int64_t>> unzip(const Pairs& pairs) {
  std::vector<std::string> names;
  std::vector<int64_t> values;
  for (const auto& [k, v] : pairs) {
    names.push_back(k);
    values.push_back(v);
  }
  return {names, values};
}

OclGeneratorImpl* default_impl(int64_t device) {
  return at::check_generator<OclGeneratorImpl>(
      default_generator(static_cast<c10::DeviceIndex>(device)));
}

}  // namespace

TORCH_LIBRARY(ocl, m) {
  m.def("set_library_path(str path) -> ()",
        [](const std::string& path) { set_opencl_library_path(path); });
  m.def("library_path() -> str", [] { return opencl_library_path(); });
  m.def("device_count() -> int", []() -> int64_t { return device_count(); });
  m.def("init_error() -> str", [] { return init_error(); });
  m.def("is_in_bad_fork() -> bool", [] { return in_bad_fork(); });
  m.def("current_device() -> int", []() -> int64_t { return current_device(); });
  m.def("set_device(int device) -> ()",
        [](int64_t device) { set_device(static_cast<int>(device)); });
  m.def("property_strings(int device) -> str[]", property_strings);
  m.def("property_ints(int device) -> int[]", property_ints);
  m.def("_device_profile(int device) -> (str[], str[])", [](int64_t device) {
    std::vector<std::string> names, values;
    for (auto& [name, value] : device_profile(static_cast<int>(device)).params()) {
      names.push_back(name);
      values.push_back(value);
    }
    return std::make_tuple(names, values);
  });
  m.def("_tuning_file_name(str identity) -> str",
        [](const std::string& identity) { return tuning_file_name(identity); });
  m.def("_device_identity(int device) -> str",
        [](int64_t device) { return device_identity(static_cast<int>(device)); });
  m.def("synchronize(int device) -> ()", [](int64_t device) {
    synchronize_device(static_cast<int>(device), "torch.ocl.synchronize()");
  });
  m.def("memory_stats(int device) -> (str[], int[])",
        [](int64_t device) { return unzip(memory_stats(static_cast<int>(device))); });
  m.def("reset_peak_memory_stats(int device) -> ()",
        [](int64_t device) { reset_peak_memory_stats(static_cast<int>(device)); });
  m.def("reset_accumulated_memory_stats(int device) -> ()",
        [](int64_t device) { reset_accumulated_memory_stats(static_cast<int>(device)); });
  m.def("empty_cache() -> ()", [] { empty_cache(); });
  m.def("mem_get_info(int device) -> (int, int)", [](int64_t device) {
    const auto [free, total] = memory_info(static_cast<int>(device));
    return std::make_tuple(static_cast<int64_t>(free), static_cast<int64_t>(total));
  });
  m.def("set_sync_debug_mode(int mode) -> ()", [](int64_t mode) {
    TORCH_CHECK(mode >= 0 && mode <= 2, "sync debug mode must be 0, 1 or 2");
    set_sync_debug_mode(static_cast<SyncDebugMode>(mode));
  });
  m.def("get_sync_debug_mode() -> int",
        []() -> int64_t { return static_cast<int64_t>(sync_debug_mode()); });
  m.def("host_wait_count() -> int", [] { return host_wait_count(); });
  m.def("batch_counts() -> int[]", [] {
    const BatchCounts c = batch_counts();
    return std::vector<int64_t>{c.ops, c.launches, tiny_route_count()};
  });
  m.def("set_fallback_mode(str mode) -> ()",
        [](const std::string& mode) { set_fallback_mode(mode); });
  m.def("fallback_mode() -> str", [] { return fallback_mode(); });
  m.def("set_tuning_enabled(bool enabled) -> ()", [](bool on) { set_tuning_enabled(on); });
  m.def("tuning_enabled() -> bool", [] { return tuning_enabled(); });
  m.def("tuning_file(int device) -> str",
        [](int64_t device) { return tuning_file(static_cast<int>(device)); });
  m.def("clear_tuned_choices() -> ()", [] { clear_tuned_choices(); });
  // Test hooks of the tuning store: record and read a value as a tuner would.
  m.def("_record_tuned_value(int device, str key, str value) -> ()",
        [](int64_t device, const std::string& key, const std::string& value) {
          record_tuned_value(static_cast<int>(device), key, value);
        });
  m.def("_tuned_value(int device, str key) -> str?", [](int64_t device, const std::string& key) {
    return tuned_value(static_cast<int>(device), key);
  });
  m.def("fallback_counts() -> (str[], int[])", [] { return unzip(fallback_counts()); });
  m.def("reset_fallback_counts() -> ()", [] { reset_fallback_counts(); });
  m.def("manual_seed(int device, int seed) -> ()", [](int64_t device, int64_t seed) {
    OclGeneratorImpl* g = default_impl(device);
    std::lock_guard<std::mutex> lock(g->mutex_);
    g->set_current_seed(static_cast<uint64_t>(seed));
  });
  m.def("initial_seed(int device) -> int", [](int64_t device) -> int64_t {
    return static_cast<int64_t>(default_impl(device)->current_seed());
  });
  m.def("seed(int device) -> int", [](int64_t device) -> int64_t {
    OclGeneratorImpl* g = default_impl(device);
    std::lock_guard<std::mutex> lock(g->mutex_);
    return static_cast<int64_t>(g->seed());
  });
  m.def("get_rng_state(int device) -> Tensor", [](int64_t device) {
    OclGeneratorImpl* g = default_impl(device);
    std::lock_guard<std::mutex> lock(g->mutex_);
    return at::Tensor(g->get_state());
  });
  m.def("set_rng_state(int device, Tensor state) -> ()", [](int64_t device, const at::Tensor& s) {
    OclGeneratorImpl* g = default_impl(device);
    std::lock_guard<std::mutex> lock(g->mutex_);
    g->set_state(*s.unsafeGetTensorImpl());
  });
  m.def("_build_program_for_test(str source, str options) -> ()",
        [](const std::string& source, const std::string& options) {
          build_source_for_test(current_device(), source, options);
        });
  m.def("_thread_kernel_count() -> int", [] { return thread_kernel_count(); });
  m.def("_inject_free_failures(int count) -> ()",
        [](int64_t count) { inject_free_failures(static_cast<int>(count)); });
  m.def("torch_version() -> str", [] { return std::string(TORCH_OCL_TORCH_VERSION); });
}

}  // namespace torch_ocl
