// Random sampling with the per-device Philox generator and kernels/random.cl: uniform_,
// normal_, bernoulli_ (float p), random_ (all three forms). Non-contiguous outputs are
// generated into a contiguous temporary and copied on the device.
#include <ATen/core/DistributionsHelper.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <torch/library.h>

#include <limits>
#include <mutex>

#include "ops/Elementwise.h"
#include "runtime/Generator.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// Reserves counters and returns (key0, key1, base).
struct Draw {
  uint32_t key0, key1;
  uint64_t base;
};

Draw draw(std::optional<at::Generator> gen, int device, uint64_t counters) {
  auto* g = at::get_generator_or_default<OclGeneratorImpl>(
      gen, default_generator(static_cast<c10::DeviceIndex>(device)));
  std::lock_guard<std::mutex> lock(g->mutex_);
  const uint64_t seed = g->current_seed();
  return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), g->reserve(counters)};
}

// Runs `fill` on a contiguous tensor (self or a temporary) and copies back if needed.
template <typename F>
at::Tensor& on_contiguous(at::Tensor& self, F fill) {
  if (self.numel() == 0) return self;
  if (self.is_contiguous()) {
    fill(self);
  } else {
    at::Tensor tmp = at::empty(self.sizes(), self.options());
    fill(tmp);
    self.copy_(tmp);
  }
  return self;
}

void philox_fill(at::Tensor& out, const char* dist, float p1, float p2,
                 std::optional<at::Generator> gen) {
  const int device = out.device().index();
  const uint64_t n = out.numel();
  const uint64_t counters = (n + 3) / 4;
  const Draw d = draw(gen, device, counters);
  std::string opts = std::string("-DOUT_T=") + type_tag(out.scalar_type(), device) + " -D" + dist;
  cl_kernel k = get_kernel(device, "random.cl", "philox_fill", opts);
  KernelLaunch launch(k);
  launch.buffer(buffer_of(out), out.itemsize()).arg(static_cast<cl_ulong>(n));
  launch.arg(d.key0).arg(d.key1).arg(static_cast<cl_ulong>(d.base)).arg(p1).arg(p2);
  launch.enqueue1d(device, counters, kLws);
}

void philox_range(at::Tensor& out, int64_t from, uint64_t range, std::optional<at::Generator> gen) {
  const int device = out.device().index();
  const uint64_t n = out.numel();
  const uint64_t counters = (n + 1) / 2;
  const Draw d = draw(gen, device, counters);
  std::string opts = std::string("-DOUT_T=") + type_tag(out.scalar_type(), device);
  cl_kernel k = get_kernel(device, "random.cl", "philox_range", opts);
  KernelLaunch launch(k);
  launch.buffer(buffer_of(out), out.itemsize()).arg(static_cast<cl_ulong>(n));
  launch.arg(d.key0).arg(d.key1).arg(static_cast<cl_ulong>(d.base));
  launch.arg(static_cast<cl_long>(from)).arg(static_cast<cl_ulong>(range));
  launch.enqueue1d(device, counters, kLws);
}

void check_floating(const at::Tensor& self, const char* name) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), name,
              " is implemented for floating point dtypes only, got ", self.scalar_type());
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  check_floating(self, "uniform_");
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  return on_contiguous(self, [&](at::Tensor& t) {
    philox_fill(t, "DIST_UNIFORM", static_cast<float>(from), static_cast<float>(to), gen);
  });
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  check_floating(self, "normal_");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return on_contiguous(self, [&](at::Tensor& t) {
    philox_fill(t, "DIST_NORMAL", static_cast<float>(mean), static_cast<float>(std), gen);
  });
}

at::Tensor& bernoulli_float(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return on_contiguous(self, [&](at::Tensor& t) {
    philox_fill(t, "DIST_BERNOULLI", static_cast<float>(p), 0.0f, gen);
  });
}

// bernoulli_(p) with a tensor of probabilities: uniform samples compared with p on the device.
at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p,
                             std::optional<at::Generator> gen) {
  at::Tensor u = at::empty(self.sizes(), self.options().dtype(at::kFloat));
  uniform_(u, 0.0, 1.0, gen);
  self.copy_(u.lt(p.to(self.device())));
  return self;
}

// Dropout: keep each element with probability 1 - p and scale the kept ones by 1 / (1 - p).
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (input.numel() == 0 || (train.has_value() && !*train) || p == 0) {
    return {input.clone(), at::ones(input.sizes(), input.options().dtype(at::kBool))};
  }
  at::Tensor mask = at::empty(input.sizes(), input.options().dtype(at::kBool));
  if (p == 1) {
    mask.zero_();
    return {input.mul(mask), mask};
  }
  bernoulli_float(mask, 1.0 - p, std::nullopt);
  at::Tensor output = input.mul(mask).mul_(1.0 / (1.0 - p));
  return {output, mask};
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  return grad.mul(mask).mul_(scale);
}

// Largest integer N such that [0, N] is exactly representable in the dtype (like torch's
// random_() default range).
int64_t default_to(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return (int64_t(1) << 24) + 1;
    case at::kDouble:
      return (int64_t(1) << 53) + 1;
    case at::kHalf:
      return (int64_t(1) << 11) + 1;
    case at::kBFloat16:
      return (int64_t(1) << 8) + 1;
    case at::kBool:
      return 2;
    case at::kByte:
      return int64_t(std::numeric_limits<uint8_t>::max()) + 1;
    case at::kChar:
      return int64_t(std::numeric_limits<int8_t>::max()) + 1;
    case at::kShort:
      return int64_t(std::numeric_limits<int16_t>::max()) + 1;
    case at::kInt:
      return int64_t(std::numeric_limits<int32_t>::max()) + 1;
    default:
      return std::numeric_limits<int64_t>::max();
  }
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> gen) {
  uint64_t range;
  if (to) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
    range = static_cast<uint64_t>(*to) - static_cast<uint64_t>(from);
  } else {
    range = self.scalar_type() == at::kLong
                ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - from + 1
                : static_cast<uint64_t>(default_to(self.scalar_type())) - from;
  }
  return on_contiguous(self, [&](at::Tensor& t) { philox_range(t, from, range, gen); });
}
at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return random_from(self, 0, to, gen);
}
at::Tensor& random_default(at::Tensor& self, std::optional<at::Generator> gen) {
  return random_from(self, 0, default_to(self.scalar_type()), gen);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("uniform_", uniform_);
  m.impl("normal_", normal_);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("bernoulli_.Tensor", bernoulli_tensor);
  m.impl("native_dropout", native_dropout);
  m.impl("native_dropout_backward", native_dropout_backward);
  m.impl("random_.from", random_from);
  m.impl("random_.to", random_to);
  m.impl("random_", random_default);
}

}  // namespace torch_ocl
