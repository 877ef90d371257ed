// A DispatchStub's CPU kernel run for a native op on dtypes its ocl kernels do not cover (the
// LAPACK-style stubs of Linalg.cpp with complex tensors): the stub's tensors are copied to the
// host, the CPU's kernel runs on the copies, and the tensors it changed are copied back. It counts
// as a CPU fallback: TORCH_OCL_FALLBACK decides (announce_fallback: raise, warn once, or run).
#pragma once

#include <ATen/ATen.h>

#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/Fallback.h"

namespace torch_ocl {

namespace stub_on_cpu_detail {

struct Staged {
  at::Tensor device, host, before;  // `before`: the host copy as it went in
};

template <class T>
auto stage(std::vector<Staged>& staged, T&& arg) {
  if constexpr (std::is_same_v<std::decay_t<T>, at::Tensor>) {
    if (!arg.defined() || arg.device().is_cpu()) return at::Tensor(arg);
    at::Tensor host = at::empty_strided(arg.sizes(), arg.strides(), arg.options().device(at::kCPU));
    host.copy_(arg);
    staged.push_back({arg, host, host.clone()});
    return host;
  } else {
    return std::decay_t<T>(std::forward<T>(arg));
  }
}

}  // namespace stub_on_cpu_detail

// Runs `stub` for the CPU on host copies of `args` (the stub's own argument list), after
// announce_fallback(what). Every tensor whose values the CPU's kernel changed is copied back.
template <class Stub, class... Args>
void run_stub_on_cpu(const std::string& what, Stub& /*stub*/, Args&&... args) {
  announce_fallback(what);
  std::vector<stub_on_cpu_detail::Staged> staged;
  staged.reserve(sizeof...(Args));
  // (a tuple keeps the host copies alive as lvalues: stubs take some tensors as Tensor&)
  auto host_args = std::make_tuple(stub_on_cpu_detail::stage(staged, std::forward<Args>(args))...);
  // The stub's baseline CPU kernel (its DEFAULT pointer, exported by libtorch_cpu; calling the
  // stub itself would need the CPU-capability build macros libtorch was compiled with).
  const auto kernel = std::remove_reference_t<Stub>::DEFAULT;
  TORCH_CHECK(kernel != nullptr, "torch-ocl: the CPU's kernel for ", what, " is not available");
  std::apply([&](auto&... a) { kernel(a...); }, host_args);
  for (const auto& s : staged) {
    if (!s.host.equal(s.before)) s.device.copy_(s.host);
  }
}

}  // namespace torch_ocl
