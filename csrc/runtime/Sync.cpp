#include "runtime/Sync.h"

#include <ATen/record_function.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <string>
#include <unordered_map>

namespace torch_ocl {
namespace {
std::atomic<int> g_mode{0};
std::atomic<int64_t> g_waits{0};
}  // namespace

void set_sync_debug_mode(SyncDebugMode mode) { g_mode.store(static_cast<int>(mode)); }

SyncDebugMode sync_debug_mode() { return static_cast<SyncDebugMode>(g_mode.load()); }

void host_wait(const char* why) {
  g_waits.fetch_add(1, std::memory_order_relaxed);
  switch (sync_debug_mode()) {
    case SyncDebugMode::kDefault:
      return;
    case SyncDebugMode::kWarn:
      TORCH_WARN("torch-ocl: ", why,
                 " makes the host wait for the OpenCL device (sync debug mode 'warn').");
      return;
    case SyncDebugMode::kError:
      TORCH_CHECK(false, "torch-ocl: ", why,
                  " makes the host wait for the OpenCL device, which sync debug mode 'error' "
                  "forbids. Keep the value on the device, or call "
                  "torch.ocl.set_sync_debug_mode('default').");
  }
}

int64_t host_wait_count() { return g_waits.load(std::memory_order_relaxed); }

HostWait::HostWait(const char* why) {
  host_wait(why);
  // User scope: the wait is not an op, and the commands of the op that waits (its read) stay
  // correlated with that op rather than with this event.
  auto callbacks = at::getStepCallbacksUnlessEmpty(at::RecordScope::USER_SCOPE);
  if (!callbacks) return;
  event_ = new at::RecordFunction(std::move(*callbacks));
  if (event_->isActive()) {
    const std::unordered_map<std::string, c10::IValue> kwargs{{"reason", c10::IValue(why)}};
    event_->before("ocl::host_wait", &kwargs);
  }
}

HostWait::~HostWait() { delete event_; }

}  // namespace torch_ocl
