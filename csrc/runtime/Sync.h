// Every place where the host waits for the device goes through host_wait(), which counts the
// wait and applies torch.ocl.set_sync_debug_mode ("default", "warn", "error").
#pragma once

#include <cstdint>

namespace torch_ocl {

enum class SyncDebugMode : int { kDefault = 0, kWarn = 1, kError = 2 };

void set_sync_debug_mode(SyncDebugMode mode);
SyncDebugMode sync_debug_mode();

// Call before a blocking OpenCL call; `why` names the op that needs the value on the host.
void host_wait(const char* why);
int64_t host_wait_count();

}  // namespace torch_ocl
