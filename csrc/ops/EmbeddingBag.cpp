// nn.EmbeddingBag / F.embedding_bag with kernels/embedding_bag.cl: _embedding_bag and
// _embedding_bag_forward_only (sum, mean, max; per_sample_weights; padding_idx;
// include_last_offset; ATen's composite embedding_bag turns 2-d input into 1-d input and
// offsets), _embedding_bag_dense_backward (all three modes, scale_grad_by_freq, deterministic:
// the sorted index runs of Embedding.h, no atomics) and _embedding_bag_per_sample_weights_backward.
//
// The auxiliary results follow the CUDA backend's layout (offset2bag[j] = the bag of position j, -1
// for a position in no bag; bag_size[b] = the bag's count of non-padding positions; max_indices
// [bags, dim] in max mode with -1 for an empty bag, else [bags] zeros): only this file's backward
// reads them. scale_grad_by_freq divides each row's gradient by the row's number of occurrences
// (as CUDA and nn.Embedding do; the CPU's embedding_bag backward divides by another row's count).
// An index outside the weight's rows is raised at the next host wait (runtime/DeviceError.h), not
// at once: the CPU reads the indices on the host, which would be a wait here.
#include <ATen/TensorUtils.h>
#include <ATen/ops/_embedding_bag_backward_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>

#include "ops/Embedding.h"
#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr int kModeSum = 0, kModeMean = 1, kModeMax = 2;
using Result4 = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

const char* idx_tag(const at::Tensor& t) { return t.scalar_type() == at::kLong ? "long" : "int"; }

bool has(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

Result4 embedding_bag_forward(const at::Tensor& weight, const at::Tensor& indices_,
                              const at::Tensor& offsets_, bool /*scale_grad_by_freq*/, int64_t mode,
                              bool sparse, const std::optional<at::Tensor>& per_sample_weights,
                              bool include_last_offset, int64_t padding_idx) {
  at::checkScalarTypes("embedding_bag", at::TensorArg(indices_, "indices", 2),
                       {at::kLong, at::kInt});
  at::checkScalarTypes("embedding_bag", at::TensorArg(offsets_, "offsets", 3),
                       {at::kLong, at::kInt});
  at::checkScalarTypes("embedding_bag", at::TensorArg(weight, "weight", 1),
                       {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble});
  TORCH_CHECK(mode >= kModeSum && mode <= kModeMax, "embedding_bag: mode must be 0 (sum), ",
              "1 (mean) or 2 (max), got ", mode);
  TORCH_CHECK(weight.dim() == 2, "embedding_bag: weight has to be a 2D Tensor, but got Tensor ",
              "of dimension ", weight.dim());
  TORCH_CHECK(indices_.dim() == 1, "input has to be a 1D or 2D Tensor, but got Tensor of ",
              "dimension ", indices_.dim());
  TORCH_CHECK(offsets_.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of ",
              "dimension ", offsets_.dim());
  TORCH_CHECK(!include_last_offset || offsets_.size(0) >= 1,
              "include_last_offset: number of offset should be at least 1");
  TORCH_CHECK(weight.device() == indices_.device() && weight.device() == offsets_.device(),
              "embedding_bag: expected weight, indices and offsets on the same device, got ",
              weight.device(), ", ", indices_.device(), " and ", offsets_.device());
  if (has(per_sample_weights)) {
    const at::Tensor& psw = *per_sample_weights;
    TORCH_CHECK(mode == kModeSum, "embedding_bag: per_sample_weights only supported with ",
                "mode='sum'");
    TORCH_CHECK(psw.scalar_type() == weight.scalar_type(), "embedding_bag: expected ",
                "per_sample_weights of the weight's dtype ", weight.scalar_type(), ", got ",
                psw.scalar_type());
    TORCH_CHECK(psw.dim() == 1, "embedding_bag: per_sample_weights has to be a 1D Tensor");
    TORCH_CHECK(psw.numel() == indices_.numel(), "embedding_bag: expected per_sample_weights ",
                "to be the same shape as input, got ", psw.sizes(), " and ", indices_.sizes());
    TORCH_CHECK(psw.device() == weight.device(), "embedding_bag: per_sample_weights is on ",
                psw.device(), ", the weight on ", weight.device());
  }
  (void)sparse;
  c10::DeviceGuard guard(weight.device());
  const int device = weight.device().index();
  // indices and offsets in one integer type (the wider one), as the CPU promotes them
  const at::ScalarType it =
      (indices_.scalar_type() == at::kLong || offsets_.scalar_type() == at::kLong) ? at::kLong
                                                                                   : at::kInt;
  const at::Tensor indices = indices_.to(it).contiguous();
  const at::Tensor offsets = offsets_.to(it).contiguous();
  const int64_t n = indices.numel();
  const int64_t n_offsets = offsets.size(0);
  const int64_t bags = include_last_offset ? n_offsets - 1 : n_offsets;
  const int64_t dim = weight.size(1);
  const at::TensorOptions iopt = indices.options();
  at::Tensor out = at::empty({bags, dim}, weight.options());
  at::Tensor offset2bag = at::full({n}, -1, iopt);  // -1: a position in no bag
  at::Tensor bag_size = at::empty({bags}, iopt);
  at::Tensor max_indices =
      mode == kModeMax ? at::empty({bags, dim}, iopt) : at::zeros({bags}, iopt);
  if (bags == 0) return {out, offset2bag, bag_size, max_indices};
  const bool with_psw = has(per_sample_weights);
  const at::Tensor psw = with_psw ? *per_sample_weights : weight;  // a placeholder buffer
  std::string options = std::string("-DBAG_FORWARD -DT=") + type_tag(weight.scalar_type(), device) +
                        " -DIDX_T=" + idx_tag(indices);
  if (with_psw) options += " -DHAS_PSW";
  KernelLaunch l(get_kernel(device, "embedding_bag.cl", "bag_forward", options));
  l.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_ulong>(dim)).arg(static_cast<cl_ulong>(bags));
  l.buffer(buffer_of(indices), indices.itemsize());
  l.buffer(buffer_of(offsets), offsets.itemsize());
  l.buffer(buffer_of(weight), weight.itemsize());
  l.arg(static_cast<cl_long>(weight.stride(0))).arg(static_cast<cl_long>(weight.stride(1)));
  l.arg(static_cast<cl_long>(weight.size(0)));
  l.buffer(buffer_of(psw), psw.itemsize()).arg(static_cast<cl_long>(with_psw ? psw.stride(0) : 0));
  l.arg(static_cast<cl_int>(mode)).arg(static_cast<cl_long>(padding_idx));
  l.buffer(buffer_of(out), out.itemsize());
  l.buffer(buffer_of(offset2bag), offset2bag.itemsize());
  l.buffer(buffer_of(bag_size), bag_size.itemsize());
  l.buffer(buffer_of(max_indices), max_indices.itemsize());
  l.arg(device_error_word(device))
      .arg(device_error_code("embedding_bag: an index is out of range: expected 0 <= index < "
                             "num_embeddings (the weight's rows)"));
  l.enqueue_grid(device, static_cast<size_t>(std::max<int64_t>(dim, 1)), static_cast<size_t>(bags),
                 1, 256);
  return {out, offset2bag, bag_size, max_indices};
}

at::Tensor embedding_bag_dense_backward(const at::Tensor& grad, const at::Tensor& indices_,
                                        const at::Tensor& offset2bag_, const at::Tensor& bag_size_,
                                        const at::Tensor& max_indices_, int64_t num_weights,
                                        bool scale_grad_by_freq, int64_t mode,
                                        const std::optional<at::Tensor>& per_sample_weights,
                                        int64_t padding_idx) {
  at::checkScalarTypes("embedding_bag_backward", at::TensorArg(indices_, "indices", 2),
                       {at::kLong, at::kInt});
  TORCH_CHECK(mode >= kModeSum && mode <= kModeMax, "embedding_bag_backward: unknown mode ", mode);
  TORCH_CHECK(grad.dim() == 2, "embedding_bag_backward: expected a 2D grad, got ", grad.dim(),
              " dimensions");
  c10::DeviceGuard guard(grad.device());
  const int device = grad.device().index();
  const int64_t dim = grad.size(1);
  at::Tensor out = at::empty({num_weights, dim}, grad.options());
  if (out.numel() == 0) return out;
  const int64_t n = indices_.numel();
  if (n == 0) return out.zero_();
  const at::Tensor indices = indices_.contiguous();
  const at::ScalarType it = indices.scalar_type();
  const at::Tensor offset2bag = offset2bag_.to(it).contiguous();
  const at::Tensor bag_size = bag_size_.to(it).contiguous();
  const at::Tensor max_indices = max_indices_.to(it).contiguous();
  const auto [runs, vals] = sorted_index_runs(indices, num_weights, padding_idx);
  const bool with_psw = has(per_sample_weights) && mode != kModeMax;
  const at::Tensor psw = with_psw ? *per_sample_weights : grad;
  std::string options = std::string("-DBAG_BACKWARD -DT=") + type_tag(grad.scalar_type(), device) +
                        " -DIDX_T=" + idx_tag(indices);
  if (with_psw) options += " -DHAS_PSW";
  KernelLaunch l(get_kernel(device, "embedding_bag.cl", "bag_backward", options));
  l.arg(static_cast<cl_ulong>(out.numel())).arg(static_cast<cl_ulong>(dim));
  l.buffer(buffer_of(runs[0]), 4).buffer(buffer_of(runs[1]), 4).buffer(buffer_of(vals), 4);
  l.buffer(buffer_of(offset2bag), offset2bag.itemsize());
  l.buffer(buffer_of(bag_size), bag_size.itemsize());
  l.buffer(buffer_of(max_indices), max_indices.itemsize());
  l.buffer(buffer_of(psw), psw.itemsize()).arg(static_cast<cl_long>(with_psw ? psw.stride(0) : 0));
  l.buffer(buffer_of(grad), grad.itemsize());
  l.arg(static_cast<cl_long>(grad.stride(0))).arg(static_cast<cl_long>(grad.stride(1)));
  l.buffer(buffer_of(out), out.itemsize());
  l.arg(static_cast<cl_int>(mode)).arg(static_cast<cl_int>(scale_grad_by_freq ? 1 : 0));
  l.enqueue1d(device, static_cast<size_t>(out.numel()), 256);
  return out;
}

at::Tensor embedding_bag_psw_backward(const at::Tensor& grad, const at::Tensor& weight,
                                      const at::Tensor& indices_, const at::Tensor& /*offsets*/,
                                      const at::Tensor& offset2bag_, int64_t mode,
                                      int64_t padding_idx) {
  TORCH_CHECK(mode == kModeSum, "embedding_bag_backward: per_sample_weights only supported for ",
              "mode='sum'");
  TORCH_CHECK(grad.dim() == 2 && weight.dim() == 2,
              "embedding_bag_backward: expected 2D grad and weight");
  c10::DeviceGuard guard(grad.device());
  const int device = grad.device().index();
  const at::Tensor indices = indices_.contiguous();
  const int64_t n = indices.numel();
  at::Tensor out = at::empty({n}, grad.options());
  if (n == 0) return out;
  const at::Tensor offset2bag = offset2bag_.to(indices.scalar_type()).contiguous();
  const size_t lws = device_profile(device).fit_lws(64);
  const std::string options = std::string("-DBAG_PSW_BACKWARD -DT=") +
                              type_tag(grad.scalar_type(), device) +
                              " -DIDX_T=" + idx_tag(indices) + " -DLWS=" + std::to_string(lws);
  KernelLaunch l(get_kernel(device, "embedding_bag.cl", "bag_psw_backward", options));
  l.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_ulong>(grad.size(1)));
  l.buffer(buffer_of(indices), indices.itemsize());
  l.buffer(buffer_of(offset2bag), offset2bag.itemsize());
  l.buffer(buffer_of(grad), grad.itemsize());
  l.arg(static_cast<cl_long>(grad.stride(0))).arg(static_cast<cl_long>(grad.stride(1)));
  l.buffer(buffer_of(weight), weight.itemsize());
  l.arg(static_cast<cl_long>(weight.stride(0))).arg(static_cast<cl_long>(weight.stride(1)));
  l.arg(static_cast<cl_long>(weight.size(0))).arg(static_cast<cl_long>(padding_idx));
  l.buffer(buffer_of(out), out.itemsize());
  l.enqueue1d(device, static_cast<size_t>(n) * lws, lws);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_embedding_bag", embedding_bag_forward);
  m.impl("_embedding_bag_forward_only", embedding_bag_forward);
  // ATen's dispatcher between the dense and sparse backwards (argument checks, offset2bag)
  m.impl("_embedding_bag_backward", TORCH_FN(at::native::_embedding_bag_backward_symint));
  m.impl("_embedding_bag_dense_backward", embedding_bag_dense_backward);
  m.impl("_embedding_bag_per_sample_weights_backward", embedding_bag_psw_backward);
}

}  // namespace torch_ocl
