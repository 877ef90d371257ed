// torch.histogram and torch.histogramdd with kernels/histogramdd.cl: histogram.bin_ct and
// histogram.bins_tensor (and their out=), _histogramdd_bin_edges, _histogramdd_from_bin_cts,
// _histogramdd_from_bin_tensors (ATen's composite histogramdd calls these). Weights and density
// as on the CPU; float32 and float64, as on the CPU.
//
// No host wait: without a range the edges come from the input's minimum and maximum on the
// device (a range that is not finite is raised at the next wait, runtime/DeviceError.h, where
// the CPU raises at once), and density divides by the device's own sum. Unweighted counts are
// exact (int atomics); weighted sums use atomic float adds, so their rounding order differs from
// the CPU's sequential sum (float64 weights need cl_khr_int64_base_atomics).
#include <ATen/TensorUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 256;

bool int64_atomics(int device) {
  return device_info(device).extensions.find("cl_khr_int64_base_atomics") != std::string::npos;
}

std::string hd_options(at::ScalarType t, int device, bool weighted) {
  std::string o = std::string("-DT=") + type_tag(t, device);
  if (weighted) o += " -DHAS_W";
  if (int64_atomics(device)) o += " -DINT64_ATOMICS";
  return o;
}

// The CPU's histogramdd_check_inputs, for D = the input's last dimension.
void check_inputs(const at::Tensor& self, int64_t n_edges_seqs,
                  const std::optional<at::Tensor>& weight, const char* op) {
  TORCH_CHECK(self.dim() >= 2, op, ": input tensor should have at least 2 dimensions, but got ",
              self.dim());
  const int64_t D = self.size(-1);
  TORCH_CHECK(n_edges_seqs == D, op, ": expected ", D, " sequences of bin edges for each of the ",
              D, " dimensions of input, but got ", n_edges_seqs);
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble,
                              "\"histogramdd\" not implemented for '", self.scalar_type(), "'");
  if (weight.has_value() && weight->defined()) {
    const at::Tensor& w = *weight;
    TORCH_CHECK(w.scalar_type() == self.scalar_type(), op, ": if weight tensor is provided ",
                "it should have the same dtype as the input tensor");
    auto expected = self.sizes().vec();
    expected.pop_back();
    TORCH_CHECK(w.sizes().vec() == expected, op, ": if weight tensor is provided it should have ",
                "the same shape as the input tensor excluding its innermost dimension, but got ",
                "input with shape ", self.sizes(), " and weight with shape ", w.sizes());
    TORCH_CHECK(w.device() == self.device(), op, ": weight is on ", w.device(), ", the input on ",
                self.device());
  }
}

// Fills `hist` (zeroed here) from the N x D input and the concatenated edges.
void count(at::Tensor& hist, const at::Tensor& in2d, const at::Tensor& edges,
           const std::vector<int64_t>& nums, bool linear, const std::optional<at::Tensor>& weight,
           bool density, const std::vector<at::Tensor>& edge_views) {
  const int device = hist.device().index();
  const int64_t D = static_cast<int64_t>(nums.size());
  const int64_t n = in2d.size(0);
  const bool weighted = weight.has_value() && weight->defined();
  const at::ScalarType t = in2d.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(!weighted || t != at::kDouble || int64_atomics(device),
                              "torch-ocl: histogramdd with float64 weights needs 64-bit atomics "
                              "(cl_khr_int64_base_atomics), which this device lacks; use float32 "
                              "weights or the CPU");
  std::vector<int64_t> meta(static_cast<size_t>(3 * D));
  int64_t first = 0, stride = 1;
  for (int64_t d = D - 1; d >= 0; --d) {
    meta[2 * D + d] = stride;
    stride *= nums[d] - 1;
  }
  for (int64_t d = 0; d < D; ++d) {
    meta[d] = first;
    meta[D + d] = nums[d];
    first += nums[d];
  }
  const at::Tensor meta_t =
      at::tensor(meta, at::TensorOptions().dtype(at::kLong)).to(hist.device(), true);
  at::Tensor counts = at::zeros(hist.sizes(), hist.options().dtype(weighted ? t : at::kInt));
  if (n > 0 && hist.numel() > 0) {
    const at::Tensor w = weighted ? weight->reshape({n}) : in2d;
    KernelLaunch l(
        get_kernel(device, "histogramdd.cl", "hd_count", hd_options(t, device, weighted)));
    l.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_uint>(D));
    l.buffer(buffer_of(in2d), in2d.itemsize()).buffer(buffer_of(edges), edges.itemsize());
    l.buffer(buffer_of(meta_t), 8).arg(static_cast<cl_int>(linear ? 1 : 0));
    l.buffer(buffer_of(w), w.itemsize()).arg(static_cast<cl_long>(weighted ? w.stride(0) : 0));
    l.buffer(buffer_of(counts), counts.itemsize()).buffer(buffer_of(counts), counts.itemsize());
    l.enqueue1d(device, static_cast<size_t>(n), kLws);
  }
  hist.copy_(counts);
  if (density) {
    hist.div_(hist.sum());
    for (int64_t d = 0; d < D; ++d) {
      const at::Tensor& e = edge_views[d];
      const at::Tensor len = e.narrow(0, 1, e.size(0) - 1) - e.narrow(0, 0, e.size(0) - 1);
      std::vector<int64_t> shape(static_cast<size_t>(D), 1);
      shape[d] = len.size(0);
      hist.div_(len.view(shape));
    }
  }
}

// The edges of a bin-count histogram (concatenated), from `range` or from the input's extremes.
at::Tensor linear_edges(const at::Tensor& in2d, at::IntArrayRef bins,
                        std::optional<at::ArrayRef<double>> range, const char* op) {
  const int device = in2d.device().index();
  const int64_t D = static_cast<int64_t>(bins.size());
  std::vector<int64_t> meta(static_cast<size_t>(2 * D));
  int64_t total = 0;
  for (int64_t d = 0; d < D; ++d) {
    TORCH_CHECK(bins[d] > 0, op, "(): bins must be > 0, but got ", bins[d], " for dimension ", d);
    meta[d] = total;
    meta[D + d] = bins[d] + 1;
    total += bins[d] + 1;
  }
  at::Tensor lohi;
  bool from_data = false;
  if (range.has_value()) {
    TORCH_CHECK(static_cast<int64_t>(range->size()) == 2 * D, op, ": for a ", D,
                "-dimensional histogram range should have ", 2 * D, " elements, but got ",
                range->size());
    std::vector<double> v(static_cast<size_t>(2 * D));
    for (int64_t d = 0; d < D; ++d) {
      double lo = (*range)[2 * d], hi = (*range)[2 * d + 1];
      TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), op, ": dimension ", d, "'s range [", lo,
                  ", ", hi, "] is not finite");
      TORCH_CHECK(lo <= hi, op, ": min should not exceed max, but got min ", lo, " max ", hi,
                  " for dimension ", d);
      if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
      }
      v[d] = lo;
      v[D + d] = hi;
    }
    lohi = at::tensor(v, at::TensorOptions().dtype(at::kDouble))
               .to(in2d.scalar_type())
               .to(in2d.device(), true);
  } else if (in2d.size(0) > 0) {
    lohi = at::cat({at::amin(in2d, 0), at::amax(in2d, 0)});
    from_data = true;
  } else {  // no data: the CPU's [0, 1] in every dimension
    lohi = at::cat({at::zeros({D}, in2d.options()), at::ones({D}, in2d.options())});
  }
  at::Tensor edges = at::empty({total}, in2d.options());
  const at::Tensor meta_t =
      at::tensor(meta, at::TensorOptions().dtype(at::kLong)).to(in2d.device(), true);
  KernelLaunch l(get_kernel(device, "histogramdd.cl", "hd_edges",
                            hd_options(in2d.scalar_type(), device, false)));
  l.arg(static_cast<cl_uint>(D)).arg(static_cast<cl_ulong>(total));
  l.buffer(buffer_of(meta_t), 8).buffer(buffer_of(lohi), lohi.itemsize());
  l.arg(static_cast<cl_int>(from_data ? 1 : 0)).buffer(buffer_of(edges), edges.itemsize());
  l.arg(device_error_word(device))
      .arg(device_error_code("torch.histogramdd: the input's range [min, max] is not finite "
                             "(it holds NaN or infinity): pass range= or clean the input"));
  l.enqueue1d(device, static_cast<size_t>(total), kLws);
  return edges;
}

std::vector<at::Tensor> split_edges(const at::Tensor& edges, at::IntArrayRef bins) {
  std::vector<at::Tensor> out;
  int64_t first = 0;
  for (int64_t b : bins) {
    out.push_back(edges.narrow(0, first, b + 1));
    first += b + 1;
  }
  return out;
}

std::vector<int64_t> hist_shape(at::IntArrayRef bins) { return bins.vec(); }

at::Tensor as_rows(const at::Tensor& self) {
  return self.reshape({-1, self.size(-1)}).contiguous();
}

std::vector<at::Tensor> bin_edges_impl(const at::Tensor& self, at::IntArrayRef bins,
                                       std::optional<at::ArrayRef<double>> range,
                                       const std::optional<at::Tensor>& weight, bool /*density*/) {
  check_inputs(self, static_cast<int64_t>(bins.size()), weight, "torch.histogramdd");
  c10::DeviceGuard guard(self.device());
  const at::Tensor edges = linear_edges(as_rows(self), bins, range, "torch.histogramdd");
  std::vector<at::Tensor> out;
  for (const at::Tensor& e : split_edges(edges, bins)) out.push_back(e.clone());
  return out;
}

at::Tensor from_bin_cts_impl(const at::Tensor& self, at::IntArrayRef bins,
                             std::optional<at::ArrayRef<double>> range,
                             const std::optional<at::Tensor>& weight, bool density) {
  check_inputs(self, static_cast<int64_t>(bins.size()), weight, "torch.histogramdd");
  c10::DeviceGuard guard(self.device());
  const at::Tensor rows = as_rows(self);
  const at::Tensor edges = linear_edges(rows, bins, range, "torch.histogramdd");
  at::Tensor hist = at::empty(hist_shape(bins), self.options());
  std::vector<int64_t> nums;
  for (int64_t b : bins) nums.push_back(b + 1);
  count(hist, rows, edges, nums, true, weight, density, split_edges(edges, bins));
  return hist;
}

at::Tensor from_bin_tensors_impl(const at::Tensor& self, at::TensorList bins,
                                 const std::optional<at::Tensor>& weight, bool density) {
  check_inputs(self, static_cast<int64_t>(bins.size()), weight, "torch.histogramdd");
  c10::DeviceGuard guard(self.device());
  std::vector<int64_t> nums, shape;
  std::vector<at::Tensor> views;
  for (size_t d = 0; d < bins.size(); ++d) {
    const at::Tensor& b = bins[d];
    TORCH_CHECK(b.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ",
                b.dim(), " dimensions in the bins tensor for dimension ", d);
    TORCH_CHECK(b.numel() > 0, "torch.histogramdd: bins tensor should have at least 1 element, ",
                "but got ", b.numel(), " elements in the bins tensor for dimension ", d);
    TORCH_CHECK(b.scalar_type() == self.scalar_type(), "torch.histogramdd: input tensor and ",
                "bins tensors should have the same dtype, but got input ", self.scalar_type(),
                " and bins for dimension ", d, " ", b.scalar_type());
    TORCH_CHECK(b.device() == self.device(), "torch.histogramdd: bins for dimension ", d,
                " are on ", b.device(), ", the input on ", self.device());
    nums.push_back(b.numel());
    shape.push_back(std::max<int64_t>(b.numel() - 1, 0));
    views.push_back(b);
  }
  at::Tensor hist = at::zeros(shape, self.options());
  for (int64_t s : shape)
    if (s == 0) return hist;
  const at::Tensor edges = at::cat(views).contiguous();
  count(hist, as_rows(self), edges, nums, false, weight, density, views);
  return hist;
}

// torch.histogram: a 1-d histogram of every element (the input as N x 1).
std::tuple<at::Tensor, at::Tensor> histogram_bins_tensor(const at::Tensor& self,
                                                         const at::Tensor& bins,
                                                         const std::optional<at::Tensor>& weight,
                                                         bool density) {
  TORCH_CHECK(bins.dim() == 1, "torch.histogram: bins tensor should have 1 dimension, but got ",
              bins.dim(), " dimensions");
  TORCH_CHECK(!weight.has_value() || !weight->defined() || weight->sizes() == self.sizes(),
              "torch.histogram: if weight tensor is provided, it should have the same shape as ",
              "the input tensor");
  const std::optional<at::Tensor> w = weight.has_value() && weight->defined()
                                          ? std::optional<at::Tensor>(weight->reshape({-1}))
                                          : std::nullopt;
  at::Tensor hist = from_bin_tensors_impl(self.reshape({-1, 1}), {bins}, w, density);
  return {hist, bins.clone()};
}

std::tuple<at::Tensor, at::Tensor> histogram_bin_ct(const at::Tensor& self, int64_t bins,
                                                    std::optional<at::ArrayRef<double>> range,
                                                    const std::optional<at::Tensor>& weight,
                                                    bool density) {
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  TORCH_CHECK(!weight.has_value() || !weight->defined() || weight->sizes() == self.sizes(),
              "torch.histogram: if weight tensor is provided, it should have the same shape as ",
              "the input tensor");
  const std::optional<at::Tensor> w = weight.has_value() && weight->defined()
                                          ? std::optional<at::Tensor>(weight->reshape({-1}))
                                          : std::nullopt;
  const at::Tensor rows = self.reshape({-1, 1});
  const int64_t b[1] = {bins};
  at::Tensor hist = from_bin_cts_impl(rows, b, range, w, density);
  std::vector<at::Tensor> edges = bin_edges_impl(rows, b, range, w, density);
  return {hist, edges[0]};
}

// The CPU's checks and resize of histogram's out tensors (a dtype other than the input's raises;
// a non-empty out of another shape is resized with PyTorch's warning).
void check_histogram_outs(const at::Tensor& self, const at::Tensor& hist,
                          const at::Tensor& bin_edges) {
  TORCH_CHECK(self.dtype() == hist.dtype(),
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
              "input ",
              self.dtype(), " and hist ", hist.dtype());
  TORCH_CHECK(self.dtype() == bin_edges.dtype(),
              "torch.histogram: input tensor and bin_edges tensor should have the same dtype, but "
              "got input ",
              self.dtype(), " and bin_edges ", bin_edges.dtype(), " for dimension 0");
}
void write_out(at::Tensor& out, const at::Tensor& value) {
  at::native::resize_output(out, value.sizes());
  out.copy_(value);
}

std::tuple<at::Tensor&, at::Tensor&> histogram_bins_tensor_out(
    const at::Tensor& self, const at::Tensor& bins, const std::optional<at::Tensor>& weight,
    bool density, at::Tensor& hist, at::Tensor& bin_edges) {
  check_histogram_outs(self, hist, bin_edges);
  auto [h, e] = histogram_bins_tensor(self, bins, weight, density);
  write_out(hist, h);
  write_out(bin_edges, e);
  return {hist, bin_edges};
}

std::tuple<at::Tensor&, at::Tensor&> histogram_bin_ct_out(const at::Tensor& self, int64_t bins,
                                                          std::optional<at::ArrayRef<double>> range,
                                                          const std::optional<at::Tensor>& weight,
                                                          bool density, at::Tensor& hist,
                                                          at::Tensor& bin_edges) {
  check_histogram_outs(self, hist, bin_edges);
  auto [h, e] = histogram_bin_ct(self, bins, range, weight, density);
  write_out(hist, h);
  write_out(bin_edges, e);
  return {hist, bin_edges};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("histogram.bins_tensor", histogram_bins_tensor);
  m.impl("histogram.bin_ct", histogram_bin_ct);
  m.impl("histogram.bins_tensor_out", histogram_bins_tensor_out);
  m.impl("histogram.bin_ct_out", histogram_bin_ct_out);
  m.impl("_histogramdd_bin_edges", bin_edges_impl);
  m.impl("_histogramdd_from_bin_cts", from_bin_cts_impl);
  m.impl("_histogramdd_from_bin_tensors", from_bin_tensors_impl);
}

}  // namespace torch_ocl
