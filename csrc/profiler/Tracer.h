// The ocl command tracer behind torch.profiler's device activity (profiler/ActivityProfiler.h).
// While recording, every command enqueued through profiler/Record.h keeps its OpenCL event, the
// correlation id of the ATen op that enqueued it (pushed by Kineto on the op's thread), its
// stream, its launch geometry and the host time of the enqueue call. drain() waits for the
// commands, reads their device timestamps (CL_PROFILING_COMMAND_START/END) and maps them to the
// host clock (c10::getTime) per device:
// - "device_and_host_timer": clGetDeviceAndHostTimer (OpenCL 2.1+) read between two host clock
//   readings, when recording starts on the device and again at drain, interpolated between;
// - "queued": each command's CL_PROFILING_COMMAND_QUEUED (device clock, taken inside the
//   enqueue call) must fall between the host times before and after that call; the offsets
//   allowed by all commands of the session are intersected (median if they disagree).
// TORCH_OCL_PROFILER_CLOCK=queued forces the second method. No Kineto or CPython here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/Record.h"
#include "runtime/OpenCL.h"

namespace torch_ocl::profiler {

struct Activity {
  CommandKind kind = CommandKind::kKernel;
  int device = 0;
  int64_t stream = 0;
  uint64_t id = 0;           // unique per enqueued command (shared by the shares of a batch)
  uint64_t correlation = 0;  // the ATen op's correlation id; 0: enqueued outside any op
  int32_t thread = 0;        // system thread id of the enqueuing thread
  int64_t enqueue_begin_ns = 0, enqueue_end_ns = 0;  // host clock, around the enqueue call
  int64_t start_ns = 0, end_ns = 0;                  // device execution, mapped to host clock
  bool timed = false;                                // start_ns/end_ns are valid
  std::string name;                                  // kernel function or copy kind
  std::string label;                                 // the op of a share of a batch
  std::string options;                               // a kernel's build options (its variant)
  cl_uint dims = 0;
  size_t global[3] = {0, 0, 0}, local[3] = {0, 0, 0};
  uint64_t bytes = 0;
  int part = 0, parts = 1;
};

// Starts a recording (dropping anything left of an earlier one) / stops recording new commands.
void start_recording();
void stop_recording();
// The commands recorded since start_recording(), timed; waits for those still running. Problems
// (a failed command, no profiling info) leave the command untimed and are appended to *errors.
std::vector<Activity> drain(std::vector<std::string>* errors);

// Kineto's correlation stack of the calling thread.
void push_correlation(uint64_t id);
void pop_correlation();

// The clock mapping used for `device` in the last drain ("" if none).
std::string clock_method(int device);

}  // namespace torch_ocl::profiler
