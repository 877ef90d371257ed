// embedding_dense_backward (nn.Embedding's weight gradient) with kernels/embedding.cl:
// deterministic, duplicate indices summed in the CPU's order (a stable sort of the indices, then
// one work-item per gradient element adding its row's run), padding_idx and scale_grad_by_freq
// as on the CPU. Indices outside [0, num_weights) are ignored, as the CPU ignores them. And
// embedding_renorm_ (nn.Embedding's max_norm), each named row once.
#include "ops/Embedding.h"

#include <ATen/OpMathType.h>
#include <ATen/TensorUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 256;

}  // namespace

IndexRuns sorted_index_runs(const at::Tensor& idx, int64_t num_weights, int64_t padding_idx) {
  const int device = idx.device().index();
  const int64_t n = idx.numel();
  TORCH_CHECK_NOT_IMPLEMENTED(n < (int64_t(1) << 31) && num_weights < (int64_t(1) << 31) - 1,
                              "torch-ocl: embedding backward with more than 2^31 indices "
                              "or weights is not supported yet");
  const at::TensorOptions u32 = idx.options().dtype(at::kInt);
  // Each row's run in the sorted indices: [start, end), both 0 for a row no index names.
  at::Tensor runs = at::zeros({2, num_weights}, u32);
  at::Tensor vals = at::empty({n}, u32);
  if (n == 0) return {runs, vals};
  at::Tensor keys = at::empty({n}, u32), keys2 = at::empty({n}, u32), vals2 = at::empty({n}, u32);
  {
    const std::string options =
        std::string("-DIDX_T=") + (idx.scalar_type() == at::kLong ? "long" : "int");
    KernelLaunch launch(get_kernel(device, "embedding.cl", "embedding_keys", options));
    launch.arg(static_cast<cl_ulong>(n)).buffer(buffer_of(idx), idx.itemsize());
    launch.arg(static_cast<cl_long>(num_weights)).arg(static_cast<cl_long>(padding_idx));
    launch.buffer(buffer_of(keys), 4).buffer(buffer_of(vals), 4);
    launch.enqueue1d(device, static_cast<size_t>(n), kLws);
  }
  // Keys lie in [0, num_weights] (num_weights: ignored): sort by as many bits as that needs.
  const int bits = std::bit_width(static_cast<uint64_t>(num_weights));
  const DeviceInfo& info = device_info(device);
  size_t lws = 1;
  while (lws * 2 <= std::min<size_t>(kLws, info.max_work_group)) lws *= 2;
  const int64_t tile = static_cast<int64_t>(lws);
  const int64_t max_groups = std::max<int64_t>(64, 8 * static_cast<int64_t>(info.compute_units));
  const int64_t groups = std::clamp<int64_t>((n + tile * 4 - 1) / (tile * 4), 1, max_groups);
  const int64_t chunk = (n + groups - 1) / groups;
  const std::string options = "-DLWS=" + std::to_string(lws);
  at::Tensor zeros = at::empty({groups}, u32);
  for (int bit = 0; bit < bits; ++bit) {
    {
      KernelLaunch launch(get_kernel(device, "embedding.cl", "radix_count", options));
      launch.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_ulong>(chunk));
      launch.buffer(buffer_of(keys), 4).arg(static_cast<cl_uint>(bit));
      launch.buffer(buffer_of(zeros), 4);
      launch.enqueue1d(device, static_cast<size_t>(groups) * lws, lws);
    }
    {
      KernelLaunch launch(get_kernel(device, "embedding.cl", "radix_split", options));
      launch.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_ulong>(chunk));
      launch.arg(static_cast<cl_uint>(groups)).buffer(buffer_of(zeros), 4);
      launch.arg(static_cast<cl_uint>(bit));
      launch.buffer(buffer_of(keys), 4).buffer(buffer_of(vals), 4);
      launch.buffer(buffer_of(keys2), 4).buffer(buffer_of(vals2), 4);
      launch.enqueue1d(device, static_cast<size_t>(groups) * lws, lws);
    }
    std::swap(keys, keys2);
    std::swap(vals, vals2);
  }
  KernelLaunch launch(get_kernel(device, "embedding.cl", "embedding_runs", options));
  launch.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_uint>(num_weights));
  launch.buffer(buffer_of(keys), 4);
  launch.buffer(buffer_of(runs[0]), 4).buffer(buffer_of(runs[1]), 4);
  launch.enqueue1d(device, static_cast<size_t>(n), kLws);
  return {runs, vals};
}

namespace {

at::Tensor embedding_dense_backward_impl(const at::Tensor& grad_, const at::Tensor& indices,
                                         int64_t num_weights, int64_t padding_idx,
                                         bool scale_grad_by_freq) {
  at::checkScalarTypes("embedding_backward", at::TensorArg(indices, "indices", 2),
                       {at::kLong, at::kInt});
  TORCH_CHECK(grad_.device() == indices.device(),
              "embedding_dense_backward: expected grad and indices on the same device, got ",
              grad_.device(), " and ", indices.device());
  c10::DeviceGuard guard(grad_.device());
  const int64_t dim = grad_.size(-1);
  const int64_t n = indices.numel();
  at::Tensor out = at::empty({num_weights, dim}, grad_.options());
  if (out.numel() == 0) return out;
  const int device = grad_.device().index();
  const at::Tensor grad = grad_.contiguous().view({n, dim});
  if (n == 0) return out.zero_();
  const auto [runs, vals] = sorted_index_runs(indices.contiguous(), num_weights, padding_idx);
  const std::string options = std::string("-DT=") + type_tag(grad.scalar_type(), device);
  KernelLaunch launch(get_kernel(device, "embedding.cl", "embedding_sum", options));
  launch.arg(static_cast<cl_ulong>(out.numel())).arg(static_cast<cl_ulong>(dim));
  launch.buffer(buffer_of(runs[0]), 4).buffer(buffer_of(runs[1]), 4);
  launch.buffer(buffer_of(vals), 4);
  launch.buffer(buffer_of(grad), grad.itemsize()).buffer(buffer_of(out), out.itemsize());
  launch.arg(static_cast<cl_int>(scale_grad_by_freq ? 1 : 0));
  launch.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
  return out;
}

at::Tensor& embedding_renorm_impl(at::Tensor& self, const at::Tensor& indices, double max_norm,
                                  double norm_type) {
  at::checkDim("embedding_renorm_", at::TensorArg(self, "self", 1), 2);
  at::checkScalarTypes("embedding_renorm_", at::TensorArg(indices, "indices", 2),
                       {at::kLong, at::kInt});
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "norm(): input dtype should be either floating point or complex. Got ",
              self.scalar_type(), " instead.");
  TORCH_CHECK(indices.device() == self.device(), "embedding_renorm_: expected indices on ",
              self.device(), ", but they are on ", indices.device());
  const int64_t n = indices.numel();
  if (n == 0 || self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  const int device = self.device().index();
  const at::Tensor idx = indices.contiguous();
  const at::Tensor claimed = at::zeros({self.size(0)}, self.options().dtype(at::kInt));
  int p_kind = 0;
  if (norm_type == 1.0) {
    p_kind = 1;
  } else if (norm_type == 2.0) {
    p_kind = 2;
  } else if (norm_type == std::numeric_limits<double>::infinity()) {
    p_kind = 3;
  } else if (norm_type == 0.0) {
    p_kind = 4;
  }
  const DeviceInfo& info = device_info(device);
  size_t lws = 1;
  while (lws * 2 <= std::min<size_t>(kLws, info.max_work_group)) lws *= 2;
  const std::string options = std::string("-DRENORM -DT=") + type_tag(self.scalar_type(), device) +
                              " -DIDX_T=" + (idx.scalar_type() == at::kLong ? "long" : "int") +
                              " -DLWS=" + std::to_string(lws);
  KernelLaunch launch(get_kernel(device, "embedding.cl", "embedding_renorm", options));
  launch.arg(static_cast<cl_ulong>(n)).buffer(buffer_of(idx), idx.itemsize());
  launch.arg(static_cast<cl_long>(self.size(0))).buffer(buffer_of(claimed), 4);
  launch.buffer(buffer_of(self), self.itemsize());
  launch.arg(static_cast<cl_long>(self.stride(0))).arg(static_cast<cl_long>(self.stride(1)));
  launch.arg(static_cast<cl_ulong>(self.size(1)));
  push_compute_scalar(launch, max_norm, at::toOpMathType(self.scalar_type()));
  push_compute_scalar(launch, norm_type, at::toOpMathType(self.scalar_type()));
  launch.arg(static_cast<cl_int>(p_kind));
  launch.arg(device_error_word(device))
      .arg(device_error_code("embedding_renorm_: an index is out of range for the weight's rows"));
  launch.enqueue1d(device, static_cast<size_t>(n) * lws, lws);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("embedding_dense_backward", embedding_dense_backward_impl);
  m.impl("embedding_renorm_", embedding_renorm_impl);
}

}  // namespace torch_ocl
