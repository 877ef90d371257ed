// Random sampling with the per-device Philox generator and kernels/random.cl: uniform_,
// normal_, bernoulli_ (float and tensor p), random_ (all three forms); exponential_, cauchy_,
// log_normal_, geometric_ and multinomial through ATen's own functions (argument checks,
// multinomial's sampling without replacement as exponential_ + div + topk) with our kernels for
// their DispatchStubs. Non-contiguous outputs
// are generated into a contiguous temporary and copied on the device.
// Resolution: float32/half/bfloat16 values come from 24 random bits, float64 values from 53
// (philox_fill_f64), random_ from 64-bit words, and bernoulli_ compares 53-bit numbers with
// ceil(p * 2^53), so a double p keeps its resolution whatever the output dtype.
#include "ops/Random.h"

#include <ATen/TensorIterator.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/ops/cauchy_native.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exponential_native.h>
#include <ATen/ops/geometric_native.h>
#include <ATen/ops/log_normal_native.h>
#include <ATen/ops/multinomial_native.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/view_as_real.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <utility>

#include "ops/KernelTypes.h"
#include "runtime/DeviceError.h"
#include "runtime/Generator.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;
constexpr const char* kBadProbability =
    "bernoulli_ expects p to be in [0, 1]: Expected p_in >= 0 && p_in <= 1 to be true, but got "
    "false (a value of the probability tensor p is < 0, > 1 or NaN)";

using Draw = PhiloxDraw;

Draw draw(std::optional<at::Generator> gen, int device, uint64_t counters) {
  return philox_draw(std::move(gen), device, counters);
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

// uniform_ / normal_ / ... (dist "DIST_UNIFORM" / "DIST_NORMAL" / ..., kernels/random.cl)
// with parameters p1, p2: float
// outputs through philox_fill (4 values per counter, computed in float), double outputs
// through philox_fill_f64 (2 values per counter, 53 random bits each, computed in double).
void philox_fill(at::Tensor& out, const char* dist, double p1, double p2,
                 std::optional<at::Generator> gen) {
  const int device = out.device().index();
  const uint64_t n = out.numel();
  const bool f64 = out.scalar_type() == at::kDouble;
  const uint64_t counters = f64 ? (n + 1) / 2 : (n + 3) / 4;
  const Draw d = draw(gen, device, counters);
  std::string opts = std::string("-DOUT_T=") + type_tag(out.scalar_type(), device) + " -D" + dist;
  cl_kernel k = get_kernel(device, "random.cl", f64 ? "philox_fill_f64" : "philox_fill", opts);
  KernelLaunch launch(k);
  launch.buffer(buffer_of(out), out.itemsize()).arg(static_cast<cl_ulong>(n));
  launch.arg(d.key0).arg(d.key1).arg(static_cast<cl_ulong>(d.base));
  if (f64) {
    launch.arg(static_cast<cl_double>(p1)).arg(static_cast<cl_double>(p2));
  } else {
    launch.arg(static_cast<float>(p1)).arg(static_cast<float>(p2));
  }
  launch.enqueue1d(device, counters, kLws);
}

// bernoulli_ with a scalar p (in [0, 1]): 1 with probability ceil(p * 2^53) / 2^53.
void philox_bernoulli(at::Tensor& out, double p, std::optional<at::Generator> gen) {
  const int device = out.device().index();
  const uint64_t n = out.numel();
  const uint64_t counters = (n + 3) / 4;
  const auto t = static_cast<uint64_t>(std::ceil(std::ldexp(p, 53)));  // exact
  const Draw d = draw(gen, device, counters);
  std::string opts =
      std::string("-DOUT_T=") + type_tag(out.scalar_type(), device) + " -DDIST_BERNOULLI";
  KernelLaunch launch(get_kernel(device, "random.cl", "philox_bernoulli", opts));
  launch.buffer(buffer_of(out), out.itemsize()).arg(static_cast<cl_ulong>(n));
  launch.arg(d.key0).arg(d.key1).arg(static_cast<cl_ulong>(d.base)).arg(static_cast<cl_ulong>(t));
  launch.enqueue1d(device, counters, kLws);
}

// bernoulli_ with a contiguous probability tensor p of out's size (a floating dtype). A p
// outside [0, 1] is raised at the next host wait (runtime/DeviceError.h).
void philox_bernoulli_tensor(at::Tensor& out, const at::Tensor& p,
                             std::optional<at::Generator> gen) {
  const int device = out.device().index();
  const uint64_t n = out.numel();
  const uint64_t counters = (n + 3) / 4;
  const Draw d = draw(gen, device, counters);
  std::string opts = std::string("-DOUT_T=") + type_tag(out.scalar_type(), device) +
                     " -DDIST_BERNOULLI -DP_T=" + type_tag(p.scalar_type(), device);
  KernelLaunch launch(get_kernel(device, "random.cl", "philox_bernoulli_tensor", opts));
  launch.buffer(buffer_of(out), out.itemsize()).arg(static_cast<cl_ulong>(n));
  launch.arg(d.key0).arg(d.key1).arg(static_cast<cl_ulong>(d.base));
  launch.buffer(buffer_of(p), p.itemsize());
  launch.arg(device_error_word(device)).arg(device_error_code(kBadProbability));
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

// The largest finite value of a floating dtype, as a double.
double dtype_max(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return std::numeric_limits<double>::max();
    case at::kHalf:
      return 65504.0;
    case at::kBFloat16:
      return 0x1.fep127;
    default:
      return std::numeric_limits<float>::max();
  }
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  if (self.is_complex()) {  // as the CPU: both parts uniform in [from, to)
    at::Tensor parts = at::view_as_real(self);
    uniform_(parts, from, to, gen);
    return self;
  }
  check_floating(self, "uniform_");
  // The checks of CPU torch: finite bounds within the dtype, from <= to, a finite range.
  const double max = dtype_max(self.scalar_type());
  TORCH_CHECK(from >= -max && from <= max, "from is out of bounds for ", self.dtype());
  TORCH_CHECK(to >= -max && to <= max, "to is out of bounds for ", self.dtype());
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  TORCH_CHECK(to - from <= max, "uniform_ expects to-from <= std::numeric_limits<",
              c10::toString(self.scalar_type()), ">::max(), but found to=", to, " and from=", from,
              " which result in to-from to exceed the limit");
  return on_contiguous(self, [&](at::Tensor& t) { philox_fill(t, "DIST_UNIFORM", from, to, gen); });
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (self.is_complex()) {  // as the CPU: two normals of variance std^2 / 2 (E|z|^2 = std^2)
    at::Tensor parts = at::view_as_real(self);
    normal_(parts, mean, std / std::sqrt(2.0), gen);
    return self;
  }
  check_floating(self, "normal_");
  return on_contiguous(self, [&](at::Tensor& t) { philox_fill(t, "DIST_NORMAL", mean, std, gen); });
}

at::Tensor& bernoulli_float(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return on_contiguous(self, [&](at::Tensor& t) { philox_bernoulli(t, p, gen); });
}

// bernoulli_(p) with a tensor of probabilities (broadcast to self): p is checked on the device
// and an invalid one raised at the next host wait, so the normal path does not wait.
at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p_,
                             std::optional<at::Generator> gen) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(p_.scalar_type()),
                              "bernoulli_: a probability tensor p of dtype ", p_.scalar_type(),
                              " is not supported (use a floating dtype)");
  if (self.numel() == 0) return self;
  const at::Tensor p = p_.to(self.device()).expand(self.sizes()).contiguous();
  return on_contiguous(self, [&](at::Tensor& t) { philox_bernoulli_tensor(t, p, gen); });
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
  at::Tensor r = grad.mul(mask);
  // An integer or bool gradient gives a float result, as on the CPU (type promotion with scale).
  return r.is_floating_point() ? r.mul_(scale) : r.mul(scale);
}

// Mantissa digits of a floating dtype (0 for the others).
int float_digits(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return 24;
    case at::kDouble:
      return 53;
    case at::kHalf:
      return 11;
    case at::kBFloat16:
      return 8;
    default:
      return 0;
  }
}

// v rounded to the floating dtype t (to nearest, like the kernels' conversion) and back to
// int64; saturates at the int64 range.
int64_t through_dtype(int64_t v, at::ScalarType t) {
  double d;
  switch (t) {
    case at::kDouble:
      d = static_cast<double>(v);
      break;
    case at::kHalf:
      d = static_cast<float>(c10::Half(static_cast<float>(v)));
      break;
    case at::kBFloat16:
      d = static_cast<float>(c10::BFloat16(static_cast<float>(v)));
      break;
    default:
      d = static_cast<float>(v);
  }
  if (d >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (d <= -0x1p63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

// floor(log2(|v|)) for v != 0.
int log2_floor(int64_t v) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int n = 0;
  while (u >>= 1) ++n;
  return n;
}

// Like CPU torch's random_ on a floating dtype: `from` moves up and `to` down to the next
// integers that stay inside [from, to) after rounding to the dtype.
int64_t adjust_from(int64_t from, at::ScalarType t) {
  const int64_t up = through_dtype(from + 1, t);
  if (up >= from) return from;
  return up + (int64_t(1) << (log2_floor(from + 1) - float_digits(t) + 1));
}
int64_t adjust_to(int64_t to, at::ScalarType t) {
  const int64_t down = through_dtype(to - 1, t);
  if (down < to) return to;
  return down - (int64_t(1) << (log2_floor(to - 1) - float_digits(t) + 1));
}

// The inclusive range [lo, hi] of values random_ may produce for dtype t.
std::pair<int64_t, int64_t> random_bounds(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    case at::kDouble:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    case at::kHalf:
      return {-65504, 65504};
    case at::kBFloat16:  // beyond int64 in both directions
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    case at::kBool:
      return {0, 1};
    case at::kByte:
      return {0, 255};
    case at::kChar:
      return {-128, 127};
    case at::kShort:
      return {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
    case at::kInt:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

void check_random_bounds(const at::Tensor& self, int64_t from, int64_t to_inc) {
  const auto [lo, hi] = random_bounds(self.scalar_type());
  TORCH_CHECK(from >= lo && from <= hi, "from is out of bounds for ", self.dtype());
  TORCH_CHECK(to_inc >= lo && to_inc <= hi, "to - 1 is out of bounds for ", self.dtype());
  const int digits = float_digits(self.scalar_type());
  if (digits) {
    const int64_t lim = int64_t(1) << digits;
    if (from < -lim || from > lim || to_inc < -lim || to_inc > lim) {
      TORCH_WARN((from < -lim || from > lim) ? "from" : "to - 1", " is out of bounds [-(2^", digits,
                 "), 2^", digits, "]. Due to precision limitations ", self.dtype(),
                 " can support discrete uniform distribution only within this range.");
    }
  }
}

// random_ as in CPU torch: [from, to) with `to`, [from, largest value of the dtype (2^digits
// for floats)] without, the whole int64 range for from = INT64_MIN without `to`. The values
// come from 64-bit words (philox_range).
at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> gen) {
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isIntegralType(t, /*includeBool=*/true),
              "random_ is implemented for floating point, integral and bool dtypes only, got ", t);
  const bool floating = at::isFloatingType(t);
  uint64_t range = 0;  // 2^64
  if (to) {
    int64_t hi = *to;
    TORCH_CHECK(from < hi, "random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", hi);
    if (floating) {
      from = adjust_from(from, t);
      hi = adjust_to(hi, t);
      TORCH_CHECK(from < hi,
                  "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                  "but got from=",
                  from, " >= to=", hi);
    }
    check_random_bounds(self, from, hi - 1);
    range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(from);
  } else if (from != std::numeric_limits<int64_t>::min()) {
    int64_t to_inc;
    if (floating) {
      to_inc = int64_t(1) << float_digits(t);
      from = adjust_from(from, t);
      TORCH_CHECK(from < to_inc,
                  "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                  "casted to dtype, but got from=",
                  from, " > to_inc=", to_inc);
    } else {
      to_inc = random_bounds(t).second;
    }
    check_random_bounds(self, from, to_inc);
    range = static_cast<uint64_t>(to_inc) - static_cast<uint64_t>(from) + 1;
  }
  return on_contiguous(self, [&](at::Tensor& tmp) { philox_range(tmp, from, range, gen); });
}
at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return random_from(self, 0, to, gen);
}
at::Tensor& random_default(at::Tensor& self, std::optional<at::Generator> gen) {
  return random_from(self, 0, std::nullopt, gen);
}

// The DispatchStub kernels of exponential_, cauchy_, log_normal_ and geometric_: ATen's
// functions have checked the parameters and pass a TensorIterator over self; the dtype checks
// are the CPU kernels' (same messages).
void fill_iter(at::TensorIteratorBase& iter, const char* dist, double p1, double p2,
               std::optional<at::Generator> gen) {
  at::Tensor self = iter.tensor(0);
  on_contiguous(self, [&](at::Tensor& t) { philox_fill(t, dist, p1, p2, gen); });
}
void exponential_kernel(at::TensorIteratorBase& iter, double lambda,
                        std::optional<at::Generator> gen) {
  TORCH_CHECK(at::isFloatingType(iter.dtype(0)),
              "Exponential distribution is a continuous probability distribution. dtype must be a "
              "floating point but you specified ",
              iter.dtype(0));
  fill_iter(iter, "DIST_EXPONENTIAL", lambda, 0.0, gen);
}
void cauchy_kernel(at::TensorIteratorBase& iter, double median, double sigma,
                   std::optional<at::Generator> gen) {
  TORCH_CHECK(at::isFloatingType(iter.dtype(0)),
              "Cauchy distribution is a continuous probability distribution. dtype must be a "
              "floating point but you specified ",
              iter.dtype(0));
  fill_iter(iter, "DIST_CAUCHY", median, sigma, gen);
}
void log_normal_kernel(at::TensorIteratorBase& iter, double mean, double std,
                       std::optional<at::Generator> gen) {
  const at::ScalarType t = iter.dtype(0);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"log_normal_\" not implemented for '",
                              c10::toString(t), "'");
  fill_iter(iter, "DIST_LOG_NORMAL", mean, std, gen);
}
// Integer outputs too (as on the CPU), not bool. The kernel gets log1p(-p), computed here in
// double.
void geometric_kernel(at::TensorIteratorBase& iter, double p, std::optional<at::Generator> gen) {
  const at::ScalarType t = iter.dtype(0);
  TORCH_CHECK_NOT_IMPLEMENTED(
      t != at::kBool && (at::isFloatingType(t) || at::isIntegralType(t, /*includeBool=*/false)),
      "\"geometric_\" not implemented for '", c10::toString(t), "'");
  fill_iter(iter, "DIST_GEOMETRIC", 0.0, std::log1p(-p), gen);
}

// multinomial with replacement (ATen's multinomial_out has checked the arguments and sized
// result: n_sample columns, one row per distribution). The running sums of each row are computed
// in float (double for double probabilities); the kernel checks each row and raises an invalid
// row at the next host wait.
void multinomial_with_replacement_kernel(at::Tensor& result, const at::Tensor& self,
                                         int64_t n_sample, std::optional<at::Generator> gen) {
  if (result.numel() == 0) return;
  const int device = self.device().index();
  const bool f64 = self.scalar_type() == at::kDouble;
  const at::Tensor probs = self.dim() == 1 ? self.unsqueeze(0) : self;
  const int64_t n_dist = probs.size(0), n_cat = probs.size(1);
  const at::Tensor cdf = at::cumsum(probs, 1, f64 ? at::kDouble : at::kFloat).contiguous();
  at::Tensor out = result.is_contiguous() ? result : at::empty(result.sizes(), result.options());
  const uint64_t counters = static_cast<uint64_t>(n_dist) * static_cast<uint64_t>(n_sample);
  const Draw d = draw(gen, device, counters);
  std::string opts = std::string("-DCDF_T=") + (f64 ? "double" : "float");
  KernelLaunch launch(get_kernel(device, "random.cl", "philox_multinomial", opts));
  launch.buffer(buffer_of(out), 8)
      .arg(static_cast<cl_ulong>(n_sample))
      .arg(static_cast<cl_ulong>(n_cat));
  launch.arg(d.key0).arg(d.key1).arg(static_cast<cl_ulong>(d.base));
  launch.buffer(buffer_of(cdf), cdf.itemsize());
  launch.arg(device_error_word(device))
      .arg(device_error_code(
          "multinomial: invalid multinomial distribution (encountering probability entry < 0)"))
      .arg(device_error_code("multinomial: invalid multinomial distribution (encountering "
                             "probability entry = infinity or NaN)"))
      .arg(device_error_code(
          "multinomial: invalid multinomial distribution (sum of probabilities <= 0)"));
  const size_t global[2] = {(static_cast<size_t>(n_sample) + kLws - 1) / kLws * kLws,
                            static_cast<size_t>(n_dist)};
  const size_t local[2] = {kLws, 1};
  launch.enqueue(device, 2, global, local);
  if (!out.is_same(result)) result.copy_(out);
}

}  // namespace

PhiloxDraw philox_draw(std::optional<at::Generator> gen, int device, uint64_t counters) {
  auto* g = at::get_generator_or_default<OclGeneratorImpl>(
      gen, default_generator(static_cast<c10::DeviceIndex>(device)));
  std::lock_guard<std::mutex> lock(g->mutex_);
  const uint64_t seed = g->current_seed();
  return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), g->reserve(counters)};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("exponential_", at::native::exponential_);
  m.impl("cauchy_", at::native::cauchy_);
  m.impl("log_normal_", at::native::log_normal_);
  m.impl("geometric_", at::native::geometric_);
  m.impl("multinomial", at::native::multinomial);
  m.impl("multinomial.out", at::native::multinomial_out);
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

// The stubs' registrations live in at::native.
namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(exponential_stub, &torch_ocl::exponential_kernel);
REGISTER_PRIVATEUSE1_DISPATCH(cauchy_stub, &torch_ocl::cauchy_kernel);
REGISTER_PRIVATEUSE1_DISPATCH(log_normal_stub, &torch_ocl::log_normal_kernel);
REGISTER_PRIVATEUSE1_DISPATCH(geometric_stub, &torch_ocl::geometric_kernel);
REGISTER_PRIVATEUSE1_DISPATCH(multinomial_with_replacement_stub,
                              &torch_ocl::multinomial_with_replacement_kernel);
}  // namespace at::native
