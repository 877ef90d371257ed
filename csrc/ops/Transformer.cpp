// The inference fast path of nn.TransformerEncoderLayer and nn.MultiheadAttention on ocl.
//
// In eval mode (no autograd) these modules call fused ATen ops whose CPU and CUDA kernels are
// registered per backend: _transformer_encoder_layer_fwd, _native_multi_head_attention and, inside
// them, _transform_bias_rescale_qkv and _masked_softmax. The first two are ATen functions built
// from other ops (linear, layer_norm, bmm, softmax, ...), only registered for CPU and CUDA; they
// are registered here for PrivateUse1 as they are, so every op inside runs on ocl. The other two
// are written here from native ops (no kernel of their own): a masked softmax is a masked_fill
// with -inf and a softmax (a row masked everywhere is NaN, as on the CPU), and the bias-and-rescale
// of q, k, v is an add, a permuted copy and a scale.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/_native_multi_head_attention_native.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/_softmax_backward_data.h>
#include <ATen/ops/_transformer_encoder_layer_fwd_native.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

namespace torch_ocl {
namespace {

// The mask as a tensor of the input's shape. mask_type (ATen's convention): 0 = an (L, L)
// attention mask, 1 = a (B, L) key padding mask, both for a (B, heads, L, L) input; 2 (and any
// other shape) = a mask of the input's shape. True means masked out.
at::Tensor full_mask(const at::Tensor& input, const at::Tensor& mask,
                     std::optional<int64_t> mask_type) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be a boolean tensor");
  int64_t type = mask_type.value_or(2);
  if (mask.dim() != 2 || input.dim() != 4) type = 2;
  if (type == 1) {
    TORCH_CHECK(input.size(0) == mask.size(0) && input.size(2) == mask.size(1),
                "For mask_type == 1 mask shape should be (B, L)");
    return mask.view({input.size(0), 1, 1, input.size(2)}).expand(input.sizes());
  }
  if (type == 0) {
    TORCH_CHECK(input.size(2) == mask.size(0) && input.size(2) == mask.size(1),
                "For mask_type == 0 mask shape should be (L, L)");
    return mask.view({1, 1, input.size(2), input.size(2)}).expand(input.sizes());
  }
  TORCH_CHECK(input.sizes() == mask.sizes(),
              "For mask_type == 2 mask shape should match input shape");
  return mask;
}

at::Tensor masked_softmax(const at::Tensor& input, const at::Tensor& mask,
                          std::optional<int64_t> dim, std::optional<int64_t> mask_type) {
  const at::Tensor m = full_mask(input, mask, mask_type);
  const int64_t d = at::maybe_wrap_dim(dim.value_or(input.dim() - 1), input.dim());
  const at::Tensor filled = input.masked_fill(m, -std::numeric_limits<double>::infinity());
  return at::_softmax(filled, d, false);
}

at::Tensor masked_softmax_backward(const at::Tensor& grad, const at::Tensor& output,
                                   const at::Tensor& mask, std::optional<int64_t> dim) {
  TORCH_CHECK(grad.sizes() == mask.sizes(), "Mask shape should match grad shape");
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be a boolean tensor");
  const int64_t d = at::maybe_wrap_dim(dim.value_or(output.dim() - 1), grad.dim());
  return at::_softmax_backward_data(grad, output, d, grad.scalar_type()).masked_fill(mask, 0);
}

// q = (q + q_bias) / sqrt(head_dim), k = k + k_bias, v = v + v_bias, each as (B, heads, T,
// head_dim) views of one (3, B, heads, T, head_dim) buffer, as ATen's kernels return them.
std::tuple<at::Tensor, at::Tensor, at::Tensor> transform_bias_rescale_qkv(
    const at::Tensor& qkv, const at::Tensor& qkv_bias, int64_t num_heads) {
  TORCH_CHECK(!qkv.is_nested(),
              "_transform_bias_rescale_qkv: nested tensors are not supported on ocl");
  const int64_t B = qkv.size(0), T = qkv.size(1), D3 = qkv.size(2);
  const int64_t D = D3 / 3;
  TORCH_CHECK(D % num_heads == 0);
  TORCH_CHECK(D3 % 3 == 0);
  const int64_t head_dim = D / num_heads;
  at::Tensor q_k_v =
      (qkv.view({B, T, 3, num_heads, head_dim}) + qkv_bias.view({3, num_heads, head_dim}))
          .permute({2, 0, 3, 1, 4})
          .contiguous();
  // The scale as the CPU rounds it: 1 / sqrt(head_dim) computed in the data's type.
  double scale = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, qkv.scalar_type(), "transform_bias_rescale_qkv", [&] {
        scale = static_cast<double>(
            static_cast<scalar_t>(1.0 / std::sqrt(static_cast<scalar_t>(head_dim))));
      });
  q_k_v.select(0, 0).mul_(scale);
  return {q_k_v.select(0, 0), q_k_v.select(0, 1), q_k_v.select(0, 2)};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_masked_softmax", masked_softmax);
  m.impl("_masked_softmax_backward", masked_softmax_backward);
  m.impl("_transform_bias_rescale_qkv", transform_bias_rescale_qkv);
  m.impl("_native_multi_head_attention", at::native::native_multi_head_attention_cpu);
  m.impl("_transformer_encoder_layer_fwd", at::native::transformer_encoder_layer_forward);
}

}  // namespace torch_ocl
