// torch.profiler's device activity for ocl: Kineto's PrivateUse1 activity profiler plugin
// (torch/csrc/profiler/standalone/privateuse1_profiler.h, REGISTER_PRIVATEUSE1_PROFILER), fed by
// profiler/Tracer.h. torch.profiler.profile(activities=[CPU, PrivateUse1]) configures a session
// (profiling state KINETO_PRIVATEUSE1); the session records while Kineto traces and turns each
// recorded command into:
// - a device activity (CONCURRENT_KERNEL, GPU_MEMCPY or GPU_MEMSET) on the row of its device and
//   stream, with start and end on the host clock, linked to the ATen op that enqueued it (so
//   key_averages() counts it in that op's device time) and its launch geometry as arguments;
// - a PRIVATEUSE1_RUNTIME activity "clEnqueue..." on the enqueuing thread's row spanning the
//   enqueue call, with a flow arrow to the device activity.
// A kernel that ran several batched ops (ops/ElementwiseBatch.h) becomes one share per op, the
// kernel's time split evenly, each linked to its op.
//
// Built only when torch ships Kineto's headers (USE_KINETO, set by CMakeLists.txt).
#pragma once

#ifdef USE_KINETO

#include <IActivityProfiler.h>

#include <set>
#include <string>

namespace torch_ocl::profiler {

class OclActivityProfiler : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override;
  const std::set<libkineto::ActivityType>& availableActivities() const override;
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& activity_types,
      const libkineto::Config& config) override;
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t ts_ms, int64_t duration_ms, const std::set<libkineto::ActivityType>& activity_types,
      const libkineto::Config& config) override;
};

}  // namespace torch_ocl::profiler

#endif  // USE_KINETO
