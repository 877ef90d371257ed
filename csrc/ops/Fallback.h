// The boxed CPU fallback for every op without a native ocl kernel, controlled by
// TORCH_OCL_FALLBACK: "warn" (default; one warning per op name), "silent", or "error".
// View ops (a result aliasing an input, or tag inplace_view) never fall back, in any mode: the
// fallback raises NotImplementedError for them, since a copy on the host would break aliasing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace c10 {
class OperatorHandle;
struct IValue;
}  // namespace c10
namespace torch::jit {
using Stack = std::vector<c10::IValue>;
}  // namespace torch::jit

namespace torch_ocl {

// The fallback itself (mode checks, warning, counts, then the CPU), for a native kernel that
// handles some of an op's arguments and hands the rest on (Lstsq.cpp: the CPU-only drivers).
void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// The fallback's policy for work a native op hands to the CPU itself (ops/StubOnCpu.h): counts
// `name` as a fallback, raises NotImplementedError when TORCH_OCL_FALLBACK=error, warns once per
// name when it is "warn".
void announce_fallback(const std::string& name);

void set_fallback_mode(const std::string& mode);
std::string fallback_mode();
std::vector<std::pair<std::string, int64_t>> fallback_counts();
void reset_fallback_counts();

}  // namespace torch_ocl
