// torch.ops.ocl.* of the profiler (python/torch_ocl/profiler.py).
#include <torch/library.h>

#include <string>

#include "profiler/MemoryHistory.h"
#include "profiler/Tracer.h"

namespace torch_ocl::profiler {

TORCH_LIBRARY_FRAGMENT(ocl, m) {
  // Whether this build has torch.profiler's device activity (torch shipped Kineto's headers).
  m.def("_profiler_has_device_activity() -> bool", []() {
#ifdef USE_KINETO
    return true;
#else
    return false;
#endif
  });
  // How the last profile mapped the device's clock to the host's ("" if it did not use it).
  m.def("_profiler_clock_method(int device) -> str",
        [](int64_t device) { return clock_method(static_cast<int>(device)); });
  // torch.ocl.memory._record_memory_history / _snapshot (python/torch_ocl/memory.py).
  m.def("_record_memory_history(bool enabled, int max_entries, bool stacks) -> ()",
        [](bool enabled, int64_t max_entries, bool stacks) {
          set_memory_history(enabled, max_entries, stacks);
        });
  m.def("_memory_snapshot_json() -> str", []() { return memory_snapshot_json(); });
  // Whether commands are being recorded now (test hook).
  m.def("_profiler_recording() -> bool", []() { return recording(); });
}

}  // namespace torch_ocl::profiler
