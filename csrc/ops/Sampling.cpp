// The random ops beyond the fills of Random.cpp, on the device's own Philox generator (so an
// ocl torch.Generator and torch.manual_seed reach them): normal with tensor means and/or
// standard deviations, randperm, and the per-element samplers of kernels/sampler.cl: poisson,
// _standard_gamma (Gamma, Beta, Dirichlet sampling), _sample_dirichlet and binomial; and
// bernoulli.out and _fused_dropout, the last generator ops that fell back to the CPU.
//
// normal: the values are normal_(0, 1) (or (0, std)) scaled and shifted on the device; the CPU's
// check that every std is >= 0 is made on the device (_assert_async, raised at the next host
// wait) instead of reading std's minimum on the host. randperm: 63-bit random keys (random_)
// sorted stably on the device (ops/Sort.h); the permutation is the sort's indices.
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/_assert_async.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "ops/KernelTypes.h"
#include "ops/Random.h"
#include "ops/Sort.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// ---- normal with tensor arguments ----

// The CPU's checks on a tensor std, the value check on the device (no host wait).
void check_std_tensor(const at::Tensor& std) {
  TORCH_CHECK(!std.is_complex(), "normal expects standard deviation to be non-complex");
  if (std.numel() > 0) {
    at::_assert_async(std.min().ge(0), "normal expects all elements of std >= 0.0");
  }
}

void check_std(double std) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
}

at::Tensor& normal_tensor_float_out(const at::Tensor& mean, double std,
                                    std::optional<at::Generator> gen, at::Tensor& out) {
  check_std(std);
  at::native::resize_output(out, mean.sizes());
  out.normal_(0, std, gen);
  return out.add_(mean);
}
at::Tensor normal_tensor_float(const at::Tensor& mean, double std,
                               std::optional<at::Generator> gen) {
  check_std(std);
  at::Tensor out = at::empty_like(mean, at::MemoryFormat::Contiguous);
  return normal_tensor_float_out(mean, std, std::move(gen), out);
}

at::Tensor& normal_float_tensor_out(double mean, const at::Tensor& std,
                                    std::optional<at::Generator> gen, at::Tensor& out) {
  check_std_tensor(std);
  at::native::resize_output(out, std.sizes());
  out.normal_(0, 1, gen);
  return out.mul_(std).add_(mean);
}
at::Tensor normal_float_tensor(double mean, const at::Tensor& std,
                               std::optional<at::Generator> gen) {
  check_std_tensor(std);
  at::Tensor out = at::empty_like(std, at::MemoryFormat::Contiguous);
  return normal_float_tensor_out(mean, std, std::move(gen), out);
}

at::Tensor& normal_tensor_tensor_out(const at::Tensor& mean, const at::Tensor& std,
                                     std::optional<at::Generator> gen, at::Tensor& out) {
  check_std_tensor(std);
  at::native::resize_output(out, at::infer_size(mean.sizes(), std.sizes()));
  out.normal_(0, 1, gen);
  return out.mul_(std).add_(mean);
}
at::Tensor normal_tensor_tensor(const at::Tensor& mean, const at::Tensor& std,
                                std::optional<at::Generator> gen) {
  check_std_tensor(std);
  at::Tensor out = at::empty(at::infer_size(mean.sizes(), std.sizes()), mean.options(),
                             at::MemoryFormat::Contiguous);
  return normal_tensor_tensor_out(mean, std, std::move(gen), out);
}

// ---- randperm ----

at::Tensor& randperm_out(int64_t n, std::optional<at::Generator> gen, at::Tensor& result) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  TORCH_CHECK(!gen.has_value() || !gen->defined() || gen->device().type() == result.device().type(),
              "Expected a '", result.device().type(), "' generator device but found '",
              gen->device().type(), "'");
  at::native::check_supported_max_int_with_precision(n, result);
  result.resize_({n});
  if (n == 0) return result;
  c10::DeviceGuard guard(result.device());
  const at::TensorOptions longs = result.options().dtype(at::kLong);
  at::Tensor keys = at::empty({n}, longs);
  keys.random_(gen);  // [0, 2^63): ties (probability about n^2 / 2^64) keep their order
  at::Tensor sorted = at::empty({n}, longs);
  const bool direct = result.scalar_type() == at::kLong && result.is_contiguous();
  at::Tensor perm = direct ? result : at::empty({n}, longs);
  sort_along(keys, 0, /*descending=*/false, sorted, perm);
  if (!direct) result.copy_(perm);
  return result;
}

// ---- the per-element samplers (kernels/sampler.cl) ----

constexpr const char* kBadRate = "invalid Poisson rate, expected rate to be non-negative";

void check_sampler_dtype(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t.scalar_type()), "\"", op,
                              "\" not implemented for '", c10::toString(t.scalar_type()), "'");
}

// The smallest normal value of a floating dtype (the gamma sampler's floor, as on the CPU).
const char* smallest_normal(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return "0x1.0p-1022";
    case at::kHalf:
      return "0x1.0p-14f";
    default:  // float, bfloat16
      return "0x1.0p-126f";
  }
}

// out (contiguous, params' dtype) = kernel(params...), one Philox counter per element.
void launch_sampler(const char* kernel, const at::Tensor& out,
                    std::initializer_list<at::Tensor> params, std::optional<at::Generator> gen,
                    const char* error = nullptr) {
  const int64_t n = out.numel();
  if (n == 0) return;
  c10::DeviceGuard guard(out.device());
  const int device = out.device().index();
  const at::ScalarType t = out.scalar_type();
  std::string options = std::string("-DOUT_T=") + type_tag(t, device);
  if (device_info(device).fp64) options += " -DACC_DOUBLE";
  options += std::string(" -DOUT_MIN=") + smallest_normal(t);
  const PhiloxDraw d = philox_draw(std::move(gen), device, static_cast<uint64_t>(n));
  KernelLaunch launch(get_kernel(device, "sampler.cl", kernel, options));
  launch.buffer(buffer_of(out), out.itemsize()).arg(static_cast<cl_ulong>(n));
  launch.arg(d.key0).arg(d.key1).arg(static_cast<cl_ulong>(d.base));
  for (const at::Tensor& p : params) launch.buffer(buffer_of(p), p.itemsize());
  if (error) launch.arg(device_error_word(device)).arg(device_error_code(error));
  launch.enqueue1d(device, static_cast<size_t>(n), kLws);
}

at::Tensor poisson(const at::Tensor& rate, std::optional<at::Generator> gen) {
  check_sampler_dtype(rate, "poisson");
  const at::Tensor r = rate.contiguous();
  at::Tensor out = at::empty(rate.sizes(), rate.options(), at::MemoryFormat::Contiguous);
  launch_sampler("philox_poisson", out, {r}, std::move(gen), kBadRate);
  return out;
}

at::Tensor standard_gamma(const at::Tensor& alpha, std::optional<at::Generator> gen) {
  check_sampler_dtype(alpha, "gamma");
  const at::Tensor a = alpha.contiguous();
  at::Tensor out = at::empty(alpha.sizes(), alpha.options(), at::MemoryFormat::Contiguous);
  launch_sampler("philox_gamma", out, {a}, std::move(gen));
  return out;
}

// Gamma samples normalised along the last dimension, kept inside (0, 1) as on the CPU.
at::Tensor sample_dirichlet(const at::Tensor& alpha, std::optional<at::Generator> gen) {
  check_sampler_dtype(alpha, "dirichlet");
  const at::Tensor g = standard_gamma(alpha, std::move(gen));
  if (g.numel() == 0) return g;
  at::Tensor r = g / g.sum(-1, /*keepdim=*/true);
  double lo = 0, hi = 1;
  switch (alpha.scalar_type()) {
    case at::kDouble:
      lo = std::numeric_limits<double>::min();
      hi = std::nextafter(1.0, 0.0);
      break;
    case at::kHalf:
      lo = 0x1.0p-14;
      hi = 1.0 - 0x1.0p-11;
      break;
    case at::kBFloat16:
      lo = 0x1.0p-126;
      hi = 1.0 - 0x1.0p-8;
      break;
    default:
      lo = std::numeric_limits<float>::min();
      hi = std::nextafter(1.0f, 0.0f);
  }
  return r.clamp_(lo, hi);
}

at::Tensor binomial(const at::Tensor& count, const at::Tensor& prob,
                    std::optional<at::Generator> gen) {
  check_sampler_dtype(count, "binomial");
  TORCH_CHECK(prob.scalar_type() == count.scalar_type(), "Found dtype ", prob.scalar_type(),
              " but expected ", count.scalar_type());
  TORCH_CHECK(prob.device() == count.device(), "binomial: expected count and prob on the same ",
              "device, got ", count.device(), " and ", prob.device());
  const at::Tensor c = count.contiguous();
  const at::Tensor p = prob.expand(count.sizes()).contiguous();
  at::Tensor out = at::empty(count.sizes(), count.options(), at::MemoryFormat::Contiguous);
  launch_sampler("philox_binomial", out, {c, p}, std::move(gen));
  return out;
}

// ---- the remaining generator ops of ATen's CPU/CUDA lists ----

// torch.bernoulli(p, out=...): out (resized to p's shape) is 1 with probability p.
at::Tensor& bernoulli_out(const at::Tensor& p, std::optional<at::Generator> gen, at::Tensor& out) {
  at::native::resize_output(out, p.sizes());
  return out.bernoulli_(p, gen);
}

// _fused_dropout (CUDA's fused kernel; p is the probability to keep): the mask (uint8) keeps
// each element with probability p, the output is self * mask / p.
std::tuple<at::Tensor, at::Tensor> fused_dropout(const at::Tensor& self, double p,
                                                 std::optional<at::Generator> gen) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  at::Tensor mask = at::empty(self.sizes(), self.options().dtype(at::kByte));
  mask.bernoulli_(p, gen);
  at::Tensor out = p == 0 ? self.mul(mask) : self.mul(mask).mul_(1.0 / p);
  return {out, mask};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("normal.Tensor_float", normal_tensor_float);
  m.impl("normal.Tensor_float_out", normal_tensor_float_out);
  m.impl("normal.float_Tensor", normal_float_tensor);
  m.impl("normal.float_Tensor_out", normal_float_tensor_out);
  m.impl("normal.Tensor_Tensor", normal_tensor_tensor);
  m.impl("normal.Tensor_Tensor_out", normal_tensor_tensor_out);
  m.impl("randperm.generator_out", randperm_out);
  m.impl("poisson", poisson);
  m.impl("_standard_gamma", standard_gamma);
  m.impl("_sample_dirichlet", sample_dirichlet);
  m.impl("binomial", binomial);
  m.impl("bernoulli.out", bernoulli_out);
  m.impl("_fused_dropout", fused_dropout);
}

}  // namespace torch_ocl
