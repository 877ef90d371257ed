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

// True for an op whose result aliases an input without writing it (a view: `Tensor(a)`,
// `Tensor(a)[]`), or that changes an input's sizes/strides in place (tag inplace_view, e.g.
// `unsqueeze_`). Through the CPU fallback such an op would hand back a copy, or metadata changed
// on a host copy only, and silently break aliasing: writes through the "view" would not reach
// its base. In-place and out= ops (`Tensor(a!)`) write their results back and may fall back.
bool is_view_op(const c10::OperatorHandle& op) {
  for (const c10::Argument& ret : op.schema().returns()) {
    const c10::AliasInfo* alias = ret.alias_info();
    if (alias != nullptr && !alias->isWrite()) return true;
  }
  return op.hasTag(at::Tag::inplace_view);
}

void ocl_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = c10::toString(op.schema().operator_name());
  // Checked in every mode, before the op counts as a fallback.
  TORCH_CHECK_NOT_IMPLEMENTED(
      !is_view_op(op), "torch-ocl: the operator '", name, "' (", op.schema(),
      ") is a view op (its result aliases an input, or it changes an input's sizes and strides "
      "in place), and it has no native ocl kernel. A view op must be native: the CPU fallback "
      "would work on a copy that does not share memory with the input, so "
      "torch-ocl refuses it whatever TORCH_OCL_FALLBACK says. This is a torch-ocl bug; please "
      "report it with the operator's name.");
  announce_fallback(name);
  at::native::cpu_fallback(op, stack);
}

}  // namespace

void announce_fallback(const std::string& name) {
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
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  ocl_fallback(op, stack);
}

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
