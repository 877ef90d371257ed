// Nested tensors (torch.nested, strided layout) on ocl: the NestedTensorPrivateUse1 kernels.
//
// A strided nested tensor is a dense buffer on the device plus per-component sizes, strides and
// offsets on the host. Most of ATen's NestedTensorCPU/CUDA kernels are written in terms of ops
// on that buffer (or on the components from unbind) and never touch the data themselves; PyTorch
// registers the same functions for HPU. Those are registered here for ocl as they are, and every
// op they call runs on the device. The ones that run a CPU kernel on the buffer (layer norm
// through LayerNormKernel(kCPU), the CPU's sum loop, the CPU's bias-and-rescale kernel) are
// written here from dense ops. Conversions to and from padded tensors are in NestedLayout.cpp,
// the transformer fast path in NestedTransformer.cpp.
#include <ATen/NestedTensorImpl.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/_nested_from_padded_and_nested_example_native.h>
#include <ATen/ops/_nested_select_backward_native.h>
#include <ATen/ops/_nested_tensor_size_native.h>
#include <ATen/ops/_nested_tensor_softmax_with_shape_native.h>
#include <ATen/ops/_nested_tensor_storage_offsets_native.h>
#include <ATen/ops/_nested_tensor_strides_native.h>
#include <ATen/ops/_safe_softmax_native.h>
#include <ATen/ops/_softmax_backward_data_native.h>
#include <ATen/ops/_softmax_native.h>
#include <ATen/ops/_to_copy_native.h>
#include <ATen/ops/_transform_bias_rescale_qkv.h>
#include <ATen/ops/abs_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/alias_native.h>
#include <ATen/ops/all_native.h>
#include <ATen/ops/bmm_native.h>
#include <ATen/ops/cat_native.h>
#include <ATen/ops/chunk_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/cos_native.h>
#include <ATen/ops/detach_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/embedding_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/eq_native.h>
#include <ATen/ops/fill_native.h>
#include <ATen/ops/ge_native.h>
#include <ATen/ops/gelu_backward_native.h>
#include <ATen/ops/gelu_native.h>
#include <ATen/ops/gt_native.h>
#include <ATen/ops/is_same_size_native.h>
#include <ATen/ops/isinf_native.h>
#include <ATen/ops/isnan_native.h>
#include <ATen/ops/isneginf_native.h>
#include <ATen/ops/isposinf_native.h>
#include <ATen/ops/linear_backward_native.h>
#include <ATen/ops/linear_native.h>
#include <ATen/ops/logical_not_native.h>
#include <ATen/ops/masked_fill_native.h>
#include <ATen/ops/matmul_backward_native.h>
#include <ATen/ops/matmul_native.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/narrow_native.h>
#include <ATen/ops/native_dropout_backward_native.h>
#include <ATen/ops/native_dropout_native.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/native_layer_norm_backward.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/normal_native.h>
#include <ATen/ops/ones_like_native.h>
#include <ATen/ops/relu_native.h>
#include <ATen/ops/select_native.h>
#include <ATen/ops/sgn_native.h>
#include <ATen/ops/silu_backward_native.h>
#include <ATen/ops/silu_native.h>
#include <ATen/ops/sin_native.h>
#include <ATen/ops/split_with_sizes_native.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/squeeze_native.h>
#include <ATen/ops/sub_native.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tanh_native.h>
#include <ATen/ops/threshold_backward_native.h>
#include <ATen/ops/transpose_native.h>
#include <ATen/ops/unbind_native.h>
#include <ATen/ops/unsqueeze_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/where_native.h>
#include <ATen/ops/zero_native.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

namespace torch_ocl {
namespace {

using at::native::get_nested_tensor_impl;

at::Tensor wrap(const at::Tensor& buffer, const at::Tensor& sizes) {
  return at::detail::make_tensor<at::native::NestedTensorImpl>(buffer.reshape({-1}), sizes);
}

// The last dimension shared by every component (the normalised dimension of a layer norm, the
// features of a linear layer), checked.
int64_t regular_last_dim(const at::native::NestedTensorImpl& nt, const char* op) {
  const at::Tensor& sizes = nt.get_nested_sizes();
  TORCH_CHECK(sizes.dim() == 2 && sizes.size(1) >= 1, op,
              ": expected nested components of at least one dimension");
  const int64_t n = sizes.size(0), k = sizes.size(1);
  const int64_t* s = sizes.const_data_ptr<int64_t>();
  const int64_t last = n > 0 ? s[k - 1] : 0;
  for (int64_t b = 1; b < n; ++b)
    TORCH_CHECK(s[b * k + k - 1] == last, op, ": the components' last dimensions differ (", last,
                " and ", s[b * k + k - 1], "); it must be the same for all of them");
  return last;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> nested_layer_norm(
    const at::Tensor& input, at::IntArrayRef normalized_shape,
    const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double eps) {
  const auto* nt = get_nested_tensor_impl(input);
  TORCH_CHECK_NOT_IMPLEMENTED(
      normalized_shape.size() == 1,
      "torch-ocl: layer_norm of a nested tensor over more than its last dimension is not "
      "implemented; normalise over the last dimension only");
  TORCH_CHECK(at::native::nested_tensor_impl_is_contiguous(nt),
              "layer_norm: expected a contiguous nested tensor (call .contiguous() first)");
  const int64_t n = regular_last_dim(*nt, "layer_norm");
  TORCH_CHECK(normalized_shape[0] == n, "layer_norm: normalized_shape ", normalized_shape,
              " does not match the components' last dimension ", n);
  const at::Tensor buffer = nt->get_buffer();
  auto [out, mean, rstd] =
      at::native_layer_norm(buffer.view({-1, n}), normalized_shape, weight, bias, eps);
  return {wrap(out, nt->get_nested_sizes().clone()), mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> nested_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
    const at::Tensor& mean, const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, std::array<bool, 3> output_mask) {
  const auto* nt = get_nested_tensor_impl(input);
  const auto* gt = get_nested_tensor_impl(grad_out);
  TORCH_CHECK_NOT_IMPLEMENTED(normalized_shape.size() == 1,
                              "torch-ocl: layer_norm backward of a nested tensor over more than "
                              "its last dimension is not implemented");
  const int64_t n = normalized_shape[0];
  const at::Tensor g = gt->get_buffer().view({-1, n});
  auto [gi, gw, gb] = at::native_layer_norm_backward(
      g, nt->get_buffer().view({-1, n}), normalized_shape, mean, rstd, weight, bias, output_mask);
  if (gi.defined()) gi = wrap(gi, nt->get_nested_sizes().clone());
  return {gi, gw, gb};
}

// sum over the last dimension, keepdim (the only reduction ATen's nested tensors have).
at::Tensor nested_sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                          std::optional<at::ScalarType> dtype) {
  const auto* nt = get_nested_tensor_impl(self);
  const auto d = dims.value_or(at::IntArrayRef{});
  TORCH_CHECK(d.size() == 1, "NestedTensor only allows reduction of a single dimension for now.");
  const int64_t dim = at::maybe_wrap_dim(d[0], self.dim());
  TORCH_CHECK(dim == self.dim() - 1,
              "NestedTensor can only be reduced across the last dimension for now got dimension ",
              dim, " instead.");
  TORCH_CHECK(keepdim, "NestedTensor always requires keepdim=True for now.");
  TORCH_CHECK(!dtype, "NestedTensor does not support dtype argument for now.");
  TORCH_CHECK(at::native::nested_tensor_impl_is_contiguous(nt),
              "NestedTensor does not support reductions when the input is noncontiguous for now.");
  if (nt->size(0) == 0) return self;
  const int64_t last = regular_last_dim(*nt, "sum");
  at::Tensor sizes = nt->get_nested_sizes().clone();
  sizes.select(1, -1).fill_(1);
  const at::Tensor buffer = nt->get_buffer();
  at::Tensor out;
  if (last == 0) {  // every row sums nothing: as many zeros as the components have rows
    int64_t rows = 0;
    const int64_t k = sizes.size(1);
    const int64_t* s = sizes.const_data_ptr<int64_t>();
    for (int64_t b = 0; b < sizes.size(0); ++b) {
      int64_t r = 1;
      for (int64_t j = 0; j + 1 < k; ++j) r *= s[b * k + j];
      rows += r;
    }
    out = at::zeros({rows}, buffer.options());
  } else {
    out = buffer.view({-1, last}).sum(-1);
  }
  return wrap(out, sizes);
}

// q, k, v of a nested qkv: as for a padded one (ops/Transformer.cpp), which is what ATen's CPU
// and CUDA kernels return for nested input too.
std::tuple<at::Tensor, at::Tensor, at::Tensor> nested_transform_bias_rescale_qkv(
    const at::Tensor& qkv, const at::Tensor& qkv_bias, int64_t num_heads) {
  return at::_transform_bias_rescale_qkv(qkv.to_padded_tensor(0), qkv_bias, num_heads);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  // ATen's own device-generic kernels.
  m.impl("abs", at::native::NestedTensor_abs);
  m.impl("abs_", at::native::NestedTensor_abs_);
  m.impl("sgn", at::native::NestedTensor_sgn);
  m.impl("sgn_", at::native::NestedTensor_sgn_);
  m.impl("add.Tensor", at::native::NestedTensor_add_Tensor);
  m.impl("add_.Tensor", at::native::NestedTensor_add__Tensor);
  m.impl("sub.Tensor", at::native::NestedTensor_sub_Tensor);
  m.impl("mul.Tensor", at::native::NestedTensor_mul_Tensor);
  m.impl("mul_.Tensor", at::native::NestedTensor_mul__Tensor);
  m.impl("mul.Scalar", at::native::NestedTensor_mul_Scalar);
  m.impl("mul_.Scalar", at::native::NestedTensor_mul__Scalar);
  m.impl("div.Tensor", at::native::NestedTensor_div_Tensor);
  m.impl("div.Scalar", at::native::NestedTensor_div_Scalar);
  m.impl("all.dim", at::native::NestedTensor_all);
  m.impl("logical_not", at::native::NestedTensor_logical_not);
  m.impl("logical_not_", at::native::NestedTensor_logical_not_);
  m.impl("neg", at::native::NestedTensor_neg);
  m.impl("neg_", at::native::NestedTensor_neg_);
  m.impl("relu", at::native::NestedTensor_relu);
  m.impl("relu_", at::native::NestedTensor_relu_);
  m.impl("gelu", at::native::NestedTensor_gelu);
  m.impl("gelu_", at::native::NestedTensor_gelu_);
  m.impl("silu", at::native::NestedTensor_silu);
  m.impl("silu_", at::native::NestedTensor_silu_);
  m.impl("sin", at::native::NestedTensor_sin);
  m.impl("cos", at::native::NestedTensor_cos);
  m.impl("sqrt", at::native::NestedTensor_sqrt);
  m.impl("tanh", at::native::NestedTensor_tanh);
  m.impl("tanh_", at::native::NestedTensor_tanh_);
  m.impl("isnan", at::native::NestedTensor_isnan);
  m.impl("isinf", at::native::NestedTensor_isinf);
  m.impl("isposinf", at::native::NestedTensor_isposinf);
  m.impl("isneginf", at::native::NestedTensor_isneginf);
  m.impl("eq.Scalar", at::native::eq_scalar_nested);
  m.impl("eq.Tensor", at::native::eq_tensor_nested);
  m.impl("ge.Scalar", at::native::ge_scalar_nested);
  m.impl("gt.Scalar", at::native::gt_scalar_nested);
  m.impl("where.self", at::native::NestedTensor_where);
  m.impl("where.self_out", at::native::NestedTensor_where_out);
  m.impl("masked_fill.Scalar", at::native::NestedTensor_masked_fill);
  m.impl("zero_", at::native::zero_nested_);
  m.impl("ones_like", at::native::ones_like);
  m.impl("normal_", at::native::normal_nested_);
  m.impl("native_dropout", at::native::native_dropout_nested);
  m.impl("native_dropout_backward", at::native::native_dropout_backward);
  m.impl("threshold_backward", at::native::threshold_backwards_nested);
  m.impl("gelu_backward", at::native::gelu_backwards_nested);
  m.impl("silu_backward", at::native::silu_backward_nested);
  m.impl("_to_copy", at::native::_to_copy_nested);
  m.impl("copy_", at::native::copy_nested_);
  m.impl("clone", at::native::clone_nested);
  m.impl("empty_like", at::native::empty_like_nested);
  m.impl("detach", at::native::detach);
  m.impl("alias", at::native::alias_nested);
  m.impl("values", at::native::values_nested);
  m.impl("unbind.int", at::native::NestedTensor_unbind);
  m.impl("view", at::native::view_nested);
  m.impl("transpose.int", at::native::transpose_nested);
  m.impl("unsqueeze", at::native::unsqueeze_nested);
  m.impl("squeeze", at::native::squeeze_nested);
  m.impl("select.int", at::native::select_nested);
  m.impl("narrow", at::native::narrow_nested_symint);
  m.impl("chunk", at::native::chunk_nested_tensor);
  m.impl("split_with_sizes", at::native::split_with_sizes_nested);
  m.impl("cat", at::native::cat_nested);
  m.impl("_nested_tensor_size", at::native::_nested_tensor_size);
  m.impl("_nested_tensor_strides", at::native::_nested_tensor_strides);
  m.impl("_nested_tensor_storage_offsets", at::native::_nested_tensor_storage_offsets);
  m.impl("is_same_size", at::native::nested_is_same_size);
  m.impl("_nested_select_backward", at::native::_nested_select_backward_symint);
  m.impl("linear", at::native::nested_linear);
  m.impl("linear_backward", at::native::nested_linear_backward);
  m.impl("matmul", at::native::matmul_nested);
  m.impl("matmul_backward", at::native::matmul_backward_nested);
  m.impl("matmul.out", at::native::matmul_out_nested);
  m.impl("bmm", at::native::bmm_nested);
  m.impl("_softmax", at::native::softmax_nested);
  m.impl("_softmax_backward_data", at::native::nested_softmax_backward);
  m.impl("_safe_softmax", at::native::_safe_softmax);
  m.impl("embedding", at::native::NestedTensor_embedding);
  m.impl("_nested_from_padded_and_nested_example",
         at::native::NestedTensor_from_padded_and_nested_example);
  m.impl("_nested_tensor_softmax_with_shape", at::native::NestedTensor_softmax_dropout);
  m.impl("fill_.Scalar",
         static_cast<at::Tensor& (*)(at::Tensor&, const at::Scalar&)>(at::native::fill_nested_));
  m.impl("fill_.Tensor",
         static_cast<at::Tensor& (*)(at::Tensor&, const at::Tensor&)>(at::native::fill_nested_));
  m.impl("squeeze.dim",
         static_cast<at::Tensor (*)(const at::Tensor&, int64_t)>(at::native::squeeze_dim_nested));
  m.impl("squeeze.dims", static_cast<at::Tensor (*)(const at::Tensor&, at::IntArrayRef)>(
                             at::native::squeeze_dim_nested));
  // Written here.
  m.impl("native_layer_norm", nested_layer_norm);
  m.impl("native_layer_norm_backward", nested_layer_norm_backward);
  m.impl("sum.dim_IntList", nested_sum_dim);
  m.impl("_transform_bias_rescale_qkv", nested_transform_bias_rescale_qkv);
}

}  // namespace torch_ocl
