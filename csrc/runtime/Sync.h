// Every place where the host waits for the device goes through host_wait(), which counts the
// wait and applies torch.ocl.set_sync_debug_mode ("default", "warn", "error"); a HostWait scope
// around the waiting call does the same and also shows the wait to torch.profiler as an event
// "ocl::host_wait" on the waiting thread's row (a user-scope RecordFunction: it nests under the
// op that waits, carries the Python stack with with_stack=True, and its "reason" argument with
// record_shapes=True).
#pragma once

#include <cstdint>

namespace at {
struct RecordFunction;
}  // namespace at

namespace torch_ocl {

enum class SyncDebugMode : int { kDefault = 0, kWarn = 1, kError = 2 };

void set_sync_debug_mode(SyncDebugMode mode);
SyncDebugMode sync_debug_mode();

// Call before a blocking OpenCL call; `why` names the op that needs the value on the host.
void host_wait(const char* why);
int64_t host_wait_count();

// Counts the wait like host_wait (and may throw the same way) and, while torch.profiler records,
// spans the wait with an "ocl::host_wait" event. Construct it right before the blocking call.
class HostWait {
 public:
  explicit HostWait(const char* why);
  ~HostWait();
  HostWait(const HostWait&) = delete;
  HostWait& operator=(const HostWait&) = delete;

 private:
  at::RecordFunction* event_ = nullptr;  // only while a profiler listens
};

}  // namespace torch_ocl
