// The fused LSTM and GRU cells that ATen's lstm_cell / gru_cell (and so nn.LSTM, nn.GRU and
// their Cell modules) call for device tensors, as on CUDA: aten::_thnn_fused_lstm_cell,
// _thnn_fused_lstm_cell_backward_impl, _thnn_fused_gru_cell and _thnn_fused_gru_cell_backward,
// written with the device's elementwise ops (a few launches per step, no kernel of their own).
// The workspace passed from forward to backward is ours to define (only these kernels read it):
//   LSTM: [B, 4H] the activated gates (i, f, g, o);
//   GRU:  [B, 5H] r, z, n, hx and the hidden gates' n part (with its bias).
// Gate order and formulas are CUDA's (aten/src/ATen/native/cuda/RNN.cu): for the LSTM
// cy = f * cx + i * g, hy = o * tanh(cy); for the GRU n = tanh(n_i + r * n_h),
// hy = n + z * (hx - n).
#include <ATen/ops/cat.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

namespace torch_ocl {
namespace {

at::Tensor add_bias(at::Tensor gates, const std::optional<at::Tensor>& bias) {
  if (bias.has_value() && bias->defined()) gates = gates + *bias;
  return gates;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  c10::DeviceGuard guard(input_gates.device());
  TORCH_CHECK(input_gates.sizes() == hidden_gates.sizes() && input_gates.dim() == 2 &&
                  input_gates.size(1) == 4 * cx.size(-1),
              "_thnn_fused_lstm_cell: expected gates of shape [B, 4 * H] for cx ", cx.sizes(),
              ", got ", input_gates.sizes(), " and ", hidden_gates.sizes());
  const at::Tensor gates = add_bias(add_bias(input_gates + hidden_gates, input_bias), hidden_bias);
  auto chunks = gates.chunk(4, 1);
  const at::Tensor i = at::sigmoid(chunks[0]), f = at::sigmoid(chunks[1]);
  const at::Tensor g = at::tanh(chunks[2]), o = at::sigmoid(chunks[3]);
  const at::Tensor cy = f * cx + i * g;
  const at::Tensor hy = o * at::tanh(cy);
  return {hy, cy, at::cat({i, f, g, o}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(
    const std::optional<at::Tensor>& grad_hy_opt, const std::optional<at::Tensor>& grad_cy_opt,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  const bool has_hy = grad_hy_opt.has_value() && grad_hy_opt->defined();
  const bool has_cy = grad_cy_opt.has_value() && grad_cy_opt->defined();
  if (!has_hy && !has_cy) return {at::Tensor(), at::Tensor(), at::Tensor()};
  c10::DeviceGuard guard(workspace.device());
  auto w = workspace.chunk(4, 1);
  const at::Tensor &i = w[0], &f = w[1], &g = w[2], &o = w[3];
  const at::Tensor tanh_cy = at::tanh(cy);
  const at::Tensor grad_hy = has_hy ? *grad_hy_opt : at::zeros_like(cy);
  at::Tensor gc = grad_hy * o * (1 - tanh_cy * tanh_cy);
  if (has_cy) gc = gc + *grad_cy_opt;
  const at::Tensor gi = gc * g * i * (1 - i);
  const at::Tensor gf = gc * cx * f * (1 - f);
  const at::Tensor gg = gc * i * (1 - g * g);
  const at::Tensor go = grad_hy * tanh_cy * o * (1 - o);
  const at::Tensor grad_gates = at::cat({gi, gf, gg, go}, 1);
  const at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, gc * f, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates,
                                            const at::Tensor& hidden_gates, const at::Tensor& hx,
                                            const std::optional<at::Tensor>& input_bias,
                                            const std::optional<at::Tensor>& hidden_bias) {
  c10::DeviceGuard guard(input_gates.device());
  TORCH_CHECK(input_gates.sizes() == hidden_gates.sizes() && input_gates.dim() == 2 &&
                  input_gates.size(1) == 3 * hx.size(-1),
              "_thnn_fused_gru_cell: expected gates of shape [B, 3 * H] for hx ", hx.sizes(),
              ", got ", input_gates.sizes(), " and ", hidden_gates.sizes());
  auto ig = add_bias(input_gates, input_bias).chunk(3, 1);
  auto hg = add_bias(hidden_gates, hidden_bias).chunk(3, 1);
  const at::Tensor r = at::sigmoid(ig[0] + hg[0]);
  const at::Tensor z = at::sigmoid(ig[1] + hg[1]);
  const at::Tensor n = at::tanh(ig[2] + r * hg[2]);
  const at::Tensor hy = n + z * (hx - n);
  return {hy, at::cat({r, z, n, hx, hg[2]}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  c10::DeviceGuard guard(workspace.device());
  auto w = workspace.chunk(5, 1);
  const at::Tensor &r = w[0], &z = w[1], &n = w[2], &hx = w[3], &nh = w[4];
  const at::Tensor gz = grad_hy * (hx - n) * z * (1 - z);
  const at::Tensor gn = grad_hy * (1 - z) * (1 - n * n);
  const at::Tensor gr = gn * nh * r * (1 - r);
  const at::Tensor grad_input_gates = at::cat({gr, gz, gn}, 1);
  const at::Tensor grad_hidden_gates = at::cat({gr, gz, gn * r}, 1);
  at::Tensor grad_input_bias, grad_hidden_bias;
  if (has_bias) {
    grad_input_bias = grad_input_gates.sum(0);
    grad_hidden_bias = grad_hidden_gates.sum(0);
  }
  return {grad_input_gates, grad_hidden_gates, grad_hy * z, grad_input_bias, grad_hidden_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", lstm_cell_backward);
  m.impl("_thnn_fused_gru_cell", gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", gru_cell_backward);
}

}  // namespace torch_ocl
