// histc and bincount with kernels/histogram.cl.
//
// histc: the CPU's checks and messages (Histogram.cpp); its data range (min == max, the default)
// comes from the device's own amin/amax and is read by the kernel, so histc never waits for the
// device (ATen's CPU path and CUDA's read the extrema on the host); a non-finite data range is
// raised at the next wait (runtime/DeviceError.h) instead of at once.
// bincount: the number of bins is max(input) + 1, so the input's minimum and maximum are read
// back once (the result's size depends on the data, as on the CPU and CUDA).
#include <ATen/Context.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "ops/HostRead.h"
#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

// Work-group size: 256 or the device's limit.
size_t hist_lws(int device) { return device_profile(device).fit_lws(256); }
constexpr uint32_t kLocalBins = 1024;
constexpr const char* kRangeNotFinite =
    "torch.histc: range of [min, max] is not finite (the input's minimum or maximum is infinite "
    "or NaN)";

std::string histogram_options(at::ScalarType t, int device) {
  const DeviceInfo& info = device_info(device);
  std::string o = std::string("-DT=") + type_tag(t, device) +
                  " -DLWS=" + std::to_string(hist_lws(device)) +
                  " -DLOCAL_BINS=" + std::to_string(kLocalBins);
  if (info.extensions.find("cl_khr_int64_base_atomics") != std::string::npos)
    o += " -DINT64_ATOMICS";
  return o;
}

// Work-groups for a strided pass over n elements.
size_t groups_for(int64_t n, int device) {
  const int64_t cus = std::max<int64_t>(1, device_info(device).compute_units);
  return static_cast<size_t>(std::clamp<int64_t>((n + 4095) / 4096, 1, 8 * cus));
}

// A host edge as the CPU's linspace stores it: rounded to the input's dtype.
double round_to(double v, at::ScalarType t) {
  switch (t) {
    case at::kHalf:
      return static_cast<float>(c10::Half(static_cast<float>(v)));
    case at::kBFloat16:
      return static_cast<float>(c10::BFloat16(static_cast<float>(v)));
    case at::kDouble:
      return v;
    default:
      return static_cast<float>(v);
  }
}

at::Tensor& histc_out_ocl(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                          const at::Scalar& max, at::Tensor& hist) {
  TORCH_CHECK(self.dtype() == hist.dtype(),
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
              "input ",
              self.dtype(), " and hist ", hist.dtype());
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  at::native::resize_output(hist, {bins});
  double lo = min.to<double>(), hi = max.to<double>();
  const bool from_data = lo == hi && self.numel() > 0;
  if (!from_data) {
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi,
                "] is not finite");
    TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  }
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"histogram_cpu\" not implemented for '",
                              c10::toString(t), "'");
  c10::DeviceGuard guard(self.device());
  const int device = self.device().index();
  at::Tensor counts = at::zeros({bins}, self.options().dtype(at::kInt));
  if (self.numel() > 0) {
    const at::Tensor x = self.contiguous();
    at::Tensor range_lo = x, range_hi = x;  // read only when from_data
    if (from_data) {
      range_lo = at::amin(x);
      range_hi = at::amax(x);
    }
    KernelLaunch l(
        get_kernel(device, "histogram.cl", "histc", histogram_options(t, device) + " -DHISTC"));
    l.arg(static_cast<cl_ulong>(x.numel())).buffer(buffer_of(x), x.itemsize());
    l.buffer(buffer_of(range_lo), x.itemsize()).buffer(buffer_of(range_hi), x.itemsize());
    l.arg(static_cast<cl_int>(from_data));
    if (t == at::kDouble) {
      l.arg(static_cast<cl_double>(lo)).arg(static_cast<cl_double>(hi));
    } else {
      l.arg(static_cast<cl_float>(round_to(lo, t))).arg(static_cast<cl_float>(round_to(hi, t)));
    }
    l.arg(static_cast<cl_uint>(bins)).buffer(buffer_of(counts), 4);
    l.arg(device_error_word(device)).arg(device_error_code(kRangeNotFinite));
    l.enqueue1d(device, groups_for(x.numel(), device) * hist_lws(device), hist_lws(device));
  }
  hist.copy_(counts);
  return hist;
}

at::Tensor histc_ocl(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                     const at::Scalar& max) {
  at::Tensor hist = at::empty({0}, self.options(), at::MemoryFormat::Contiguous);
  return histc_out_ocl(self, bins, min, max, hist);
}

// bincount: the CPU's checks and result dtypes (int64 counts; sums in float for float weights,
// else in double).
at::Tensor bincount_ocl(const at::Tensor& self, const std::optional<at::Tensor>& weights_opt,
                        int64_t minlength) {
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(t, /*includeBool=*/false),
                              "\"bincount_cpu\" not implemented for '", c10::toString(t), "'");
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  c10::DeviceGuard guard(self.device());
  if (self.dim() == 1 && self.numel() == 0)
    return at::zeros({minlength}, self.options().dtype(at::kLong));
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  const at::Tensor weights = weights_opt.value_or(at::Tensor());
  const bool has_weights = weights.defined();
  TORCH_CHECK(!(has_weights && (weights.dim() != 1 || weights.size(0) != self.size(0))),
              "weights should be 1-d and have the same length as input");
  const int device = self.device().index();
  const at::Tensor x = self.contiguous();
  // The one host wait: the number of bins is the input's maximum + 1.
  const at::Tensor extrema =
      at::cat({at::amin(x).reshape({1}), at::amax(x).reshape({1})}).to(at::kLong);
  const std::vector<int64_t> mm =
      read_longs(extrema, "bincount (the result's size depends on the data)");
  TORCH_CHECK(mm[0] >= 0, "bincount only supports 1-d non-negative integral inputs.");
  const int64_t nbins = std::max(mm[1] + 1, minlength);
  TORCH_CHECK(nbins < static_cast<int64_t>(std::numeric_limits<int32_t>::max()) &&
                  x.numel() < static_cast<int64_t>(std::numeric_limits<int32_t>::max()),
              "torch-ocl: bincount supports fewer than 2^31 elements and bins");
  std::string options = histogram_options(t, device);
  const size_t global = groups_for(x.numel(), device) * hist_lws(device);
  if (!has_weights) {
    at::Tensor counts = at::zeros({nbins}, self.options().dtype(at::kInt));
    KernelLaunch l(get_kernel(device, "histogram.cl", "bincount_counts", options));
    l.arg(static_cast<cl_ulong>(x.numel())).buffer(buffer_of(x), x.itemsize());
    l.arg(static_cast<cl_uint>(nbins)).buffer(buffer_of(counts), 4);
    l.enqueue1d(device, global, hist_lws(device));
    return counts.to(at::kLong);
  }
  const at::ScalarType wt = weights.scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
  const at::Tensor w = weights.to(wt).contiguous();
  at::Tensor sums = at::zeros({nbins}, weights.options().dtype(wt));
  // The kernel adds the weights to their bins atomically, in no fixed order (as on CUDA). Under
  // deterministic algorithms, and for float64 weights on a device without 64-bit atomics, they
  // go through index_add_ instead, whose ordered form (ops/IndexOrdered.cpp) adds them in the
  // input's order, as the CPU does.
  const bool atomics64 = options.find("-DINT64_ATOMICS") != std::string::npos;
  if (at::globalContext().deterministicAlgorithms() || (wt == at::kDouble && !atomics64)) {
    return sums.index_add_(0, x.to(at::kLong), w);
  }
  options += std::string(" -DW_T=") + type_tag(wt, device);
  KernelLaunch l(get_kernel(device, "histogram.cl", "bincount_weights", options));
  l.arg(static_cast<cl_ulong>(x.numel())).buffer(buffer_of(x), x.itemsize());
  l.buffer(buffer_of(w), w.itemsize()).buffer(buffer_of(sums), sums.itemsize());
  l.enqueue1d(device, global, hist_lws(device));
  return sums;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("histc", histc_ocl);
  m.impl("histc.out", histc_out_ocl);
  m.impl("bincount", bincount_ocl);
}

}  // namespace torch_ocl
