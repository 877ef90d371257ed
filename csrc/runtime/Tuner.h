// Timing candidates of a kernel family on the device (the measuring half of an autotuner; which
// candidates exist, what is legal and what the winner means belong to the op family, and the
// results go to runtime/Tuning.h's store).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "runtime/OpenCL.h"

namespace torch_ocl {

struct TimedCandidates {
  std::optional<size_t> best;   // the fastest accepted candidate
  std::vector<double> seconds;  // each candidate's fastest run; negative: skipped or rejected
};

// `run(i, &event)` enqueues candidate i once on the current stream of `device` and stores the
// event of the command to time (released here). Each candidate runs once first (building its
// kernel; a candidate whose run throws - a build or launch failure - is skipped), then `accept(i)`
// checks that run's result (wrong results are rejected), then it runs `reps` times; its time is
// the fastest of those, measured with OpenCL profiling events (the queue's
// CL_QUEUE_PROFILING_ENABLE). The host waits for the device (`why` names the waits).
TimedCandidates time_candidates(int device, size_t count,
                                const std::function<void(size_t, cl_event*)>& run,
                                const std::function<bool(size_t)>& accept, int reps,
                                const char* why);

}  // namespace torch_ocl
