// The transformer inference fast path on nested tensors (ocl): what nn.TransformerEncoder runs
// when given a src_key_padding_mask in eval mode (it packs the batch into a nested tensor with
// _nested_tensor_from_mask, runs _transformer_encoder_layer_fwd per layer, and pads the result
// with to_padded_tensor), and nn.MultiheadAttention's fast path on a nested query.
//
// Everything but attention works on the packed buffer of valid tokens ([tokens, features]:
// projections, residual adds, layer norms, the feed-forward block), so padding costs nothing
// there. Attention pads q, k and v once (to_padded_tensor, kernels/nested.cl), runs the device's
// scaled_dot_product_attention with a key padding mask made from the lengths, and packs the
// result back with the head transpose fused (_nested_from_padded(..., fuse_transform_0213)).
// ATen's own CPU functions for these ops are not used: their nested path calls a CPU layer-norm
// kernel on the buffer directly.
#include <ATen/NestedTensorImpl.h>
#include <ATen/ops/_nested_from_padded.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

namespace torch_ocl {
namespace {

using at::native::get_nested_tensor_impl;

at::Tensor wrap(const at::Tensor& buffer, const at::Tensor& sizes) {
  return at::detail::make_tensor<at::native::NestedTensorImpl>(buffer.reshape({-1}), sizes);
}

// The packed tokens of a nested [B, T_b, features] tensor as [tokens, features].
at::Tensor tokens(const at::Tensor& nt_tensor, int64_t features, const char* op) {
  const auto* nt = get_nested_tensor_impl(nt_tensor);
  TORCH_CHECK(nt_tensor.dim() == 3, op, ": expected a 3-d nested tensor [batch, *, ", features,
              "], got ", nt_tensor.dim(), " dimensions");
  const at::Tensor& sizes = nt->get_nested_sizes();
  const int64_t* s = sizes.const_data_ptr<int64_t>();
  for (int64_t b = 0; b < sizes.size(0); ++b)
    TORCH_CHECK(s[b * 2 + 1] == features, op, ": component ", b, " has ", s[b * 2 + 1],
                " features, expected ", features);
  const at::Tensor values = at::native::nested_tensor_impl_is_contiguous(nt)
                                ? nt->get_buffer()
                                : get_nested_tensor_impl(nt_tensor.contiguous())->get_buffer();
  return values.view({-1, features});
}

// Self-attention of the packed tokens `x` ([tokens, D]) of the sequences `sizes` ([B, 2]):
// the output projection's input ([tokens, D]) and, when asked, the attention weights
// ([B, heads, T, T], zero at padded positions; averaged over heads on request).
std::tuple<at::Tensor, at::Tensor> packed_attention(const at::Tensor& x, const at::Tensor& sizes,
                                                    int64_t embed_dim, int64_t num_heads,
                                                    const at::Tensor& qkv_weight,
                                                    const at::Tensor& qkv_bias, bool need_weights,
                                                    bool average_weights) {
  const int64_t B = sizes.size(0), D = embed_dim, H = num_heads;
  TORCH_CHECK(D % H == 0, "embed_dim ", D, " must be divisible by num_heads ", H);
  const int64_t dh = D / H;
  at::Tensor qkv_sizes = sizes.clone();
  qkv_sizes.select(1, 1).fill_(3 * D);
  const at::Tensor qkv = at::addmm(qkv_bias, x, qkv_weight.t());
  const at::Tensor padded = wrap(qkv, qkv_sizes).to_padded_tensor(0);  // [B, T, 3D]
  const int64_t T = padded.size(1);
  const at::Tensor qkv5 = padded.view({B, T, 3, H, dh}).permute({2, 0, 3, 1, 4});
  const at::Tensor q = qkv5.select(0, 0), k = qkv5.select(0, 1), v = qkv5.select(0, 2);
  const at::Tensor lengths = sizes.select(1, 0).contiguous().to(x.device());
  const at::Tensor pos = at::arange(T, x.options().dtype(at::kLong));
  const at::Tensor key_pad = pos.view({1, T}).ge(lengths.view({B, 1}));  // true: padding
  at::Tensor out, weights;
  if (!need_weights) {
    out = at::scaled_dot_product_attention(q, k, v, key_pad.logical_not().view({B, 1, 1, T}));
  } else {
    const at::Tensor row_pad = pos.view({1, T, 1}).ge(lengths.view({B, 1, 1}));
    const at::Tensor pad = row_pad.logical_or(key_pad.view({B, 1, T})).unsqueeze(1);
    const at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).mul(1.0 / std::sqrt(double(dh)));
    weights =
        at::_softmax(scores.masked_fill(pad, -std::numeric_limits<double>::infinity()), -1, false)
            .masked_fill(pad, 0);
    out = at::matmul(weights, v);
    if (average_weights) weights = weights.mean(1);
  }
  // [B, H, T, dh] -> the packed [tokens, D] (components [T_b, H * dh]).
  const at::Tensor packed = at::_nested_from_padded(out, sizes, true);
  return {get_nested_tensor_impl(packed)->get_buffer().view({-1, D}), weights};
}

std::tuple<at::Tensor, at::Tensor> nested_multi_head_attention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim,
    int64_t num_head, const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
    const at::Tensor& proj_weight, const at::Tensor& proj_bias,
    const std::optional<at::Tensor>& mask, bool need_weights, bool average_attn_weights,
    std::optional<int64_t> mask_type) {
  const char* op = "_native_multi_head_attention";
  TORCH_CHECK_NOT_IMPLEMENTED(
      query.is_same(key) && key.is_same(value),
      "torch-ocl: multi-head attention on nested tensors is implemented for self-attention "
      "(query is key is value); pad the inputs (to_padded_tensor) for cross-attention");
  TORCH_CHECK_NOT_IMPLEMENTED(!mask.has_value(),
                              "torch-ocl: a mask with a nested query is not implemented (the "
                              "nested tensor already leaves out the padding)");
  const at::Tensor x = tokens(query, embed_dim, op);
  const at::Tensor sizes = get_nested_tensor_impl(query)->get_nested_sizes();
  if (x.numel() == 0) {
    return {wrap(at::empty({0}, x.options()), sizes.clone()), at::empty({0}, x.options())};
  }
  auto [attn, weights] = packed_attention(x, sizes, embed_dim, num_head, qkv_weight, qkv_bias,
                                          need_weights, average_attn_weights);
  const at::Tensor out = at::addmm(proj_bias, attn, proj_weight.t());
  return {wrap(out, sizes.clone()), weights};
}

at::Tensor nested_encoder_layer(const at::Tensor& src, int64_t embed_dim, int64_t num_heads,
                                const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
                                const at::Tensor& proj_weight, const at::Tensor& proj_bias,
                                bool use_gelu, bool norm_first, double eps,
                                const at::Tensor& norm_weight_1, const at::Tensor& norm_bias_1,
                                const at::Tensor& norm_weight_2, const at::Tensor& norm_bias_2,
                                const at::Tensor& ffn_weight_1, const at::Tensor& ffn_bias_1,
                                const at::Tensor& ffn_weight_2, const at::Tensor& ffn_bias_2,
                                const std::optional<at::Tensor>& mask,
                                std::optional<int64_t> mask_type) {
  const char* op = "_transformer_encoder_layer_fwd";
  TORCH_CHECK_NOT_IMPLEMENTED(!mask.has_value(),
                              "torch-ocl: a mask with a nested src is not implemented (the "
                              "nested tensor already leaves out the padding)");
  const at::Tensor x0 = tokens(src, embed_dim, op);
  const at::Tensor sizes = get_nested_tensor_impl(src)->get_nested_sizes();
  if (x0.numel() == 0) return wrap(x0.clone(), sizes.clone());
  const auto norm = [&](const at::Tensor& t, const at::Tensor& w, const at::Tensor& b) {
    return at::layer_norm(t, {embed_dim}, w, b, eps);
  };
  at::Tensor x = norm_first ? norm(x0, norm_weight_1, norm_bias_1) : x0;
  at::Tensor attn = std::get<0>(
      packed_attention(x, sizes, embed_dim, num_heads, qkv_weight, qkv_bias, false, false));
  x = at::addmm(proj_bias, attn, proj_weight.t()).add_(x0);
  if (!norm_first) x = norm(x, norm_weight_1, norm_bias_1);
  const at::Tensor residual = x;
  at::Tensor h = norm_first ? norm(x, norm_weight_2, norm_bias_2) : x;
  h = at::addmm(ffn_bias_1, h, ffn_weight_1.t());
  h = use_gelu ? at::gelu(h) : at::relu(h);
  x = at::addmm(ffn_bias_2, h, ffn_weight_2.t()).add_(residual);
  if (!norm_first) x = norm(x, norm_weight_2, norm_bias_2);
  return wrap(x, sizes.clone());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("_native_multi_head_attention", nested_multi_head_attention);
  m.impl("_transformer_encoder_layer_fwd", nested_encoder_layer);
}

}  // namespace torch_ocl
