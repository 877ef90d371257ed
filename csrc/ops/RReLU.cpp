// rrelu_with_noise (F.rrelu, nn.RReLU): in training, every element x <= 0 is multiplied by a
// slope drawn uniformly from [lower, upper] with the device's generator (an ocl
// torch.Generator, or the default one), and noise records the slopes (1 where x > 0), which
// rrelu_with_noise_backward (ATen's composite) multiplies the gradient with; in evaluation a
// leaky ReLU with slope (lower + upper) / 2 and noise untouched, as on the CPU. Built from native
// ops (uniform_ of Random.cpp, where, mul): three launches, no host wait.
#include <ATen/ops/empty_like.h>
#include <ATen/ops/le.h>
#include <ATen/ops/leaky_relu.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/where.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Scalar.h>
#include <torch/library.h>

#include <optional>
#include <utility>

namespace torch_ocl {
namespace {

void check_args(const at::Tensor& self, const at::Tensor& noise, const c10::Scalar& lower,
                const c10::Scalar& upper) {
  TORCH_CHECK(upper.toDouble() >= lower.toDouble(), "Lower bound should be less than or equal ",
              "to the upper bound");
  TORCH_CHECK(noise.device() == self.device(), "rrelu_with_noise: noise is on ", noise.device(),
              ", the input on ", self.device());
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "rrelu_with_noise: expected a floating ",
              "point input, got ", self.scalar_type());
}

// The slopes of a training step, written into noise (resized to self's shape).
at::Tensor draw_slopes(const at::Tensor& self, const at::Tensor& noise, const c10::Scalar& lower,
                       const c10::Scalar& upper, const std::optional<at::Generator>& gen) {
  at::Tensor r = at::empty_like(self, at::MemoryFormat::Contiguous);
  r.uniform_(lower.toDouble(), upper.toDouble(), gen);
  at::Tensor slopes = at::where(at::le(self, 0), r, at::ones_like(r));
  if (!noise.sizes().equals(self.sizes())) noise.resize_(self.sizes());
  noise.copy_(slopes);
  return slopes;
}

at::Tensor& rrelu_out(const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                      const c10::Scalar& upper, bool training, std::optional<at::Generator> gen,
                      at::Tensor& out) {
  check_args(self, noise, lower, upper);
  c10::DeviceGuard guard(self.device());
  if (!training) {
    const double slope = (lower.toDouble() + upper.toDouble()) / 2.0;
    return at::leaky_relu_out(out, self, slope);
  }
  const at::Tensor slopes = draw_slopes(self, noise, lower, upper, gen);
  return at::mul_out(out, self, slopes);
}

at::Tensor rrelu_functional(const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                            const c10::Scalar& upper, bool training,
                            std::optional<at::Generator> gen) {
  at::Tensor out = at::empty_like(self);
  rrelu_out(self, noise, lower, upper, training, std::move(gen), out);
  return out;
}

at::Tensor& rrelu_inplace(at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                          const c10::Scalar& upper, bool training,
                          std::optional<at::Generator> gen) {
  check_args(self, noise, lower, upper);
  c10::DeviceGuard guard(self.device());
  if (!training) {
    const double slope = (lower.toDouble() + upper.toDouble()) / 2.0;
    return at::leaky_relu_(self, slope);
  }
  const at::Tensor slopes = draw_slopes(self, noise, lower, upper, gen);
  return self.mul_(slopes);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("rrelu_with_noise", rrelu_functional);
  m.impl("rrelu_with_noise.out", rrelu_out);
  m.impl("rrelu_with_noise_", rrelu_inplace);
}

}  // namespace torch_ocl
