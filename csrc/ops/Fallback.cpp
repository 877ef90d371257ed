#include "ops/Fallback.h"

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace torch_ocl {
namespace {

enum class Mode { kWarn, kSilent, kError };

std::mutex g_mutex;
std::map<std::string, int64_t> g_counts;
bool g_mode_set = false;
Mode g_mode = Mode::kWarn;

Mode parse(const std::string& s) {
  if (s == "warn" || s.empty()) return Mode::kWarn;
  if (s == "silent") return Mode::kSilent;
  if (s == "error") return Mode::kError;
  TORCH_CHECK(false, "torch-ocl: unknown fallback mode '", s,
              "'; use 'warn', 'silent' or 'error' (TORCH_OCL_FALLBACK).");
}

Mode mode_locked() {
  if (!g_mode_set) {
    const char* env = std::getenv("TORCH_OCL_FALLBACK");
    g_mode = parse(env ? env : "warn");
    g_mode_set = true;
  }
  return g_mode;
}

void ocl_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = c10::toString(op.schema().operator_name());
  Mode mode;
  bool first;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    mode = mode_locked();
    first = g_counts[name]++ == 0;
  }
  TORCH_CHECK_NOT_IMPLEMENTED(
      mode != Mode::kError, "torch-ocl: the operator '", name,
      "' has no native ocl kernel, and the CPU fallback is disabled (TORCH_OCL_FALLBACK=error). "
      "Set TORCH_OCL_FALLBACK=warn to run it on the CPU, or report the missing op.");
  if (mode == Mode::kWarn && first) {
    TORCH_WARN("torch-ocl: the operator '", name,
               "' has no native ocl kernel and runs on the CPU, copying its tensors to the host "
               "and back (slow). TORCH_OCL_FALLBACK=silent hides this warning; "
               "torch.ocl.fallback_counts() lists every op that fell back.");
  }
  at::native::cpu_fallback(op, stack);
}

}  // namespace

void set_fallback_mode(const std::string& mode) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_mode = parse(mode);
  g_mode_set = true;
}

std::string fallback_mode() {
  std::lock_guard<std::mutex> lock(g_mutex);
  switch (mode_locked()) {
    case Mode::kWarn:
      return "warn";
    case Mode::kSilent:
      return "silent";
    case Mode::kError:
      return "error";
  }
  return "warn";
}

std::vector<std::pair<std::string, int64_t>> fallback_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return {g_counts.begin(), g_counts.end()};
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_counts.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&ocl_fallback>());
}

}  // namespace torch_ocl
