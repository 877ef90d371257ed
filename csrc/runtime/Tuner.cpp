#include "runtime/Tuner.h"

#include <c10/util/Exception.h>

#include <exception>

#include "runtime/OclApi.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

// Seconds between the command's start and end (the host has already waited for it).
double event_seconds(cl_event ev) {
  cl_ulong t0 = 0, t1 = 0;
  const cl_int e0 =
      cl().clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, nullptr);
  const cl_int e1 =
      cl().clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, nullptr);
  cl().clReleaseEvent(ev);
  if (e0 != CL_SUCCESS || e1 != CL_SUCCESS || t1 < t0) return -1;
  return static_cast<double>(t1 - t0) * 1e-9;
}

}  // namespace

TimedCandidates time_candidates(int device, size_t count,
                                const std::function<void(size_t, cl_event*)>& run,
                                const std::function<bool(size_t)>& accept, int reps,
                                const char* why) {
  TimedCandidates r;
  r.seconds.assign(count, -1.0);
  for (size_t i = 0; i < count; ++i) {
    try {
      cl_event warm = nullptr;
      run(i, &warm);
      synchronize_device(device, why);
      if (warm) cl().clReleaseEvent(warm);
    } catch (const std::exception&) {
      continue;  // does not build or launch on this device: not a candidate
    }
    if (!accept(i)) continue;
    double best = -1;
    for (int k = 0; k < std::max(reps, 1); ++k) {
      cl_event ev = nullptr;
      run(i, &ev);
      synchronize_device(device, why);
      if (!ev) continue;
      const double s = event_seconds(ev);
      if (s >= 0 && (best < 0 || s < best)) best = s;
    }
    r.seconds[i] = best;
    if (best >= 0 && (!r.best || best < r.seconds[*r.best])) r.best = i;
  }
  return r;
}

}  // namespace torch_ocl
