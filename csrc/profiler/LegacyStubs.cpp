// torch.autograd.profiler.profile(use_device="ocl", use_kineto=False): the legacy profiler's
// device timing (ProfilerState.KINETO_PRIVATEUSE1_FALLBACK) through torch's ProfilerStubs. At the
// start and end of each op it enqueues a marker on the current stream; the op's device time is
// the time between the two markers' completions (what the device spent on the commands enqueued
// between them, and any time it waited for the host). The default (use_kineto=True) uses the
// device activity of profiler/ActivityProfiler.h instead.
#include <c10/util/ApproximateClock.h>
#include <c10/util/Exception.h>
#include <torch/csrc/profiler/stubs/base.h>

#include <functional>
#include <memory>

#include "runtime/Device.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"
#include "runtime/TimingMarker.h"

namespace torch_ocl::profiler {
namespace {

struct Marker {
  cl_event event = nullptr;
  ~Marker() {
    if (event && !in_bad_fork()) cl().clReleaseEvent(event);
  }
};

cl_ulong completion(const torch::profiler::impl::ProfilerVoidEventStub* stub) {
  const auto* m = static_cast<const Marker*>(stub ? stub->get() : nullptr);
  TORCH_CHECK(m && m->event, "torch-ocl: a legacy profiler event was not recorded");
  cl_event e = m->event;
  OCL_CHECK(cl().clWaitForEvents(1, &e));  // the profile's own post-processing, not the program's
  cl_ulong t = 0;
  OCL_CHECK(cl().clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(t), &t, nullptr));
  return t;
}

class OclProfilerStubs final : public torch::profiler::impl::ProfilerStubs {
 public:
  void record(c10::DeviceIndex* device, torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    const int d = current_device();
    if (device) *device = static_cast<c10::DeviceIndex>(d);
    auto marker = std::make_shared<Marker>();
    cl_command_queue q = current_queue(d);
    marker->event = enqueue_timing_marker(d, q);  // a marker has no timestamps on some drivers
    note_enqueued(q);
    if (cpu_ns) *cpu_ns = c10::getTime();
    *event = std::move(marker);
  }
  float elapsed(const torch::profiler::impl::ProfilerVoidEventStub* start,
                const torch::profiler::impl::ProfilerVoidEventStub* end) const override {
    const cl_ulong a = completion(start), b = completion(end);
    return b > a ? static_cast<float>(b - a) / 1000.0f : 0.0f;  // microseconds
  }
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }
  void onEachDevice(std::function<void(int)> op) const override {
    const int saved = current_device();
    for (int d = 0; d < device_count(); ++d) {
      set_device(d);
      op(d);
    }
    set_device(saved);
  }
  void synchronize() const override {
    for (int d = 0; d < device_count(); ++d)
      synchronize_device(d, "torch.autograd.profiler (legacy device timing)");
  }
};

OclProfilerStubs g_stubs;
const bool g_registered = [] {
  torch::profiler::impl::registerPrivateUse1Methods(&g_stubs);
  return true;
}();

}  // namespace
}  // namespace torch_ocl::profiler
