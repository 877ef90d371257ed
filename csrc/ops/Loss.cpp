// Losses with their own glue: nll_loss and nll_loss2d forward and backward (so cross_entropy =
// log_softmax + nll_loss runs on the device, also over images) with kernels/loss.cl, and
// binary_cross_entropy, whose CPU implementation is not a DispatchStub, with the elementwise
// table's ops. No host waits: total weight, reduced losses and the input checks stay on the
// device (a bad target or a BCE input outside [0, 1] is raised at the next wait).
// nll_loss is registered through Structured.h (ATen's meta functions, out= checks,
// overlapping outputs); nll_loss2d and binary_cross_entropy have no meta function and check
// their arguments as the CPU does.
#include <ATen/TensorIterator.h>
#include <ATen/core/Reduction.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <ATen/ops/squeeze.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include "ops/Elementwise.h"
#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;
constexpr const char* kBadTarget =
    "nll_loss / cross_entropy: a target class is out of bounds (not in [0, C) and not "
    "ignore_index)";
enum Reduction { kNone = 0, kMean = 1, kSum = 2 };

struct Shape {
  int64_t N, C, sn, sc;
};

Shape shape_of(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "nll_loss: input must be 1-D or 2-D, got ",
              self.dim(), "-D");
  if (self.dim() == 1) return {1, self.size(0), 0, self.stride(0)};
  return {self.size(0), self.size(1), self.stride(0), self.stride(1)};
}

std::string options(const at::Tensor& self, bool has_weight, bool mean) {
  const int device = self.device().index();
  const at::ScalarType t = self.scalar_type();
  return std::string("-DT=") + type_tag(t, device) +
         " -DACC_T=" + (t == at::kDouble ? "double" : "float") +
         (has_weight ? " -DHAS_WEIGHT" : "") + (mean ? " -DMEAN" : "");
}

// Per row i of a [N, C] input (element strides sn, sc): loss[i] = -w[t_i] * in[i, t_i] and
// wsum[i] = w[t_i] (0 for ignored targets).
void nll_rows_forward(const at::Tensor& self, const Shape& s, const at::Tensor& target,
                      const at::Tensor& weight, int64_t ignore_index, const at::Tensor& loss,
                      const at::Tensor& wsum) {
  if (s.N == 0) return;
  const int device = self.device().index();
  KernelLaunch launch(
      get_kernel(device, "loss.cl", "nll_loss_forward", options(self, weight.defined(), false)));
  launch.arg(static_cast<cl_ulong>(s.N)).arg(static_cast<cl_ulong>(s.C));
  launch.buffer(buffer_of(self), self.itemsize()).arg(static_cast<cl_long>(s.sn));
  launch.arg(static_cast<cl_long>(s.sc));
  launch.buffer(buffer_of(target), 8)
      .arg(static_cast<cl_long>(target.dim() ? target.stride(0) : 0));
  launch.buffer(buffer_of(weight.defined() ? weight : self), self.itemsize());
  launch.arg(static_cast<cl_long>(ignore_index));
  launch.buffer(buffer_of(loss), loss.itemsize()).buffer(buffer_of(wsum), wsum.itemsize());
  launch.arg(device_error_word(device)).arg(device_error_code(kBadTarget));
  launch.enqueue1d(device, s.N, kLws);
}

// The reduced loss (sum, or mean over the total weight) and the total weight from the rows'.
void nll_reduce(const at::Tensor& loss, const at::Tensor& wsum, int64_t reduction,
                const at::Tensor& output, const at::Tensor& total_weight) {
  at::Tensor tw = wsum.sum();
  total_weight.copy_(tw);
  at::Tensor total = loss.sum();
  if (reduction == kMean) {
    output.copy_(total / tw);
  } else {
    output.copy_(total);
  }
}

// gin[i, t_i] = -w[t_i] * g_i (/ total_weight for a mean) into a zero-filled [N, C] gin; g_i
// is element i of a per-row grad_output (gout_stride 1) or its single element (stride 0).
void nll_rows_backward(const at::Tensor& gin, const Shape& g, const Shape& s,
                       const at::Tensor& target, const at::Tensor& weight, int64_t ignore_index,
                       const at::Tensor& go, int64_t gout_stride, const at::Tensor& tw, bool mean) {
  if (s.N == 0) return;
  const int device = gin.device().index();
  KernelLaunch launch(
      get_kernel(device, "loss.cl", "nll_loss_backward", options(gin, weight.defined(), mean)));
  launch.arg(static_cast<cl_ulong>(s.N)).arg(static_cast<cl_ulong>(s.C));
  launch.buffer(buffer_of(gin), gin.itemsize()).arg(static_cast<cl_long>(g.sn));
  launch.arg(static_cast<cl_long>(g.sc));
  launch.buffer(buffer_of(target), 8)
      .arg(static_cast<cl_long>(target.dim() ? target.stride(0) : 0));
  launch.buffer(buffer_of(weight.defined() ? weight : gin), gin.itemsize());
  launch.arg(static_cast<cl_long>(ignore_index));
  launch.buffer(buffer_of(go), go.itemsize()).arg(static_cast<cl_long>(gout_stride));
  launch.buffer(buffer_of(tw), tw.itemsize());
  launch.arg(device_error_word(device)).arg(device_error_code(kBadTarget));
  launch.enqueue1d(device, s.N, kLws);
}

at::Tensor contiguous_weight(const std::optional<at::Tensor>& weight_opt) {
  return weight_opt && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
}

// The outputs (output, total_weight) were declared by ATen's meta function (Structured.h).
void nll_forward_kernel(const Outputs<2>& outs, const at::Tensor& self, const at::Tensor& target,
                        const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                        int64_t ignore_index) {
  const at::Tensor& output = outs[0];
  const at::Tensor& total_weight = outs[1];
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "nll_loss: expected a floating input");
  TORCH_CHECK(target.scalar_type() == at::kLong, "nll_loss: expected target of dtype int64, got ",
              target.scalar_type());
  const Shape s = shape_of(self);
  TORCH_CHECK(target.numel() == s.N, "nll_loss: expected input batch_size (", s.N,
              ") to match target batch_size (", target.numel(), ").");
  const at::Tensor weight = contiguous_weight(weight_opt);
  TORCH_CHECK(!weight.defined() || weight.numel() == s.C,
              "nll_loss: weight tensor should be "
              "defined either for all ",
              s.C,
              " classes or no classes but got weight tensor of "
              "shape: ",
              weight.sizes());
  at::Tensor loss = at::empty({s.N}, self.options());
  at::Tensor wsum = at::empty({s.N}, self.options());
  nll_rows_forward(self, s, target, weight, ignore_index, loss, wsum);
  if (reduction == kNone && self.dim() == 2) {
    output.copy_(loss);
    total_weight.zero_();
  } else {
    nll_reduce(loss, wsum, reduction, output, total_weight);
  }
}

// grad_input (contiguous, self's shape) was declared by ATen's meta function.
void nll_backward_kernel(const Outputs<1>& outs, const at::Tensor& grad_output,
                         const at::Tensor& self, const at::Tensor& target,
                         const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                         int64_t ignore_index, const at::Tensor& total_weight) {
  const at::Tensor& grad_input = outs[0];
  const Shape s = shape_of(self);
  grad_input.zero_();
  if (s.N == 0) return;
  const bool per_row = reduction == kNone && self.dim() == 2;
  const at::Tensor go = grad_output.to(self.scalar_type());
  const at::Tensor tw = total_weight.to(self.device(), self.scalar_type());
  nll_rows_backward(grad_input, shape_of(grad_input), s, target, contiguous_weight(weight_opt),
                    ignore_index, go, per_row ? go.stride(0) : 0, tw, reduction == kMean);
}

// ---- nll_loss2d: input [N, C, H, W], target [N, H, W], as rows [N*H*W, C] ----

void check_nll2d(const at::Tensor& input, const at::Tensor& target, const at::Tensor& weight,
                 const char* cpu_kernel) {
  TORCH_CHECK(target.dim() == 3,
              "only batches of spatial targets supported (3D tensors)"
              " but got targets of dimension: ",
              target.dim());
  TORCH_CHECK(input.dim() == 4,
              "only batches of spatial inputs supported (4D tensors), "
              "but got input of dimension: ",
              input.dim());
  TORCH_CHECK(!weight.defined() || weight.numel() == input.size(1),
              "weight tensor should be defined either for all or no classes");
  TORCH_CHECK(input.size(0) == target.size(0) && input.size(2) == target.size(1) &&
                  input.size(3) == target.size(2),
              "size mismatch (got input: ", input.sizes(), " , target: ", target.sizes());
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(input.scalar_type()), "\"", cpu_kernel,
                              "\" not implemented for '", c10::toString(input.scalar_type()), "'");
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ",
              target.scalar_type());
}

// The input as rows: classes innermost (a view for channels-last inputs, else a copy).
at::Tensor nll2d_rows(const at::Tensor& input) {
  return input.movedim(1, -1).reshape({-1, input.size(1)});
}

std::tuple<at::Tensor&, at::Tensor&> nll2d_forward_out(
    const at::Tensor& self, const at::Tensor& target, const std::optional<at::Tensor>& weight_opt,
    int64_t reduction, int64_t ignore_index, at::Tensor& output, at::Tensor& total_weight) {
  const at::Tensor weight = contiguous_weight(weight_opt);
  check_nll2d(self, target, weight, "nll_loss2d_forward_out_frame");
  const int64_t N = self.size(0), H = self.size(2), W = self.size(3);
  if (reduction == kNone) {
    check_out(output, {N, H, W}, self.options(), {&self});
  } else {
    check_out(output, {}, self.options(), {&self});
  }
  check_out(total_weight, {}, self.options(), {&self});
  const at::Tensor rows = nll2d_rows(self);
  const at::Tensor t = target.reshape({-1});
  const Shape s{rows.size(0), rows.size(1), rows.stride(0), rows.stride(1)};
  at::Tensor loss = at::empty({s.N}, self.options());
  at::Tensor wsum = at::empty({s.N}, self.options());
  nll_rows_forward(rows, s, t, weight, ignore_index, loss, wsum);
  if (reduction == kNone) {
    output.copy_(loss.view({N, H, W}));
    total_weight.zero_();
  } else {
    nll_reduce(loss, wsum, reduction, output, total_weight);
  }
  return {output, total_weight};
}

std::tuple<at::Tensor, at::Tensor> nll2d_forward(const at::Tensor& self, const at::Tensor& target,
                                                 const std::optional<at::Tensor>& weight_opt,
                                                 int64_t reduction, int64_t ignore_index) {
  at::Tensor output = at::empty({0}, self.options());
  at::Tensor total_weight = at::empty({0}, self.options());
  nll2d_forward_out(self, target, weight_opt, reduction, ignore_index, output, total_weight);
  return {output, total_weight};
}

at::Tensor& nll2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target,
                               const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                               int64_t ignore_index, const at::Tensor& total_weight,
                               at::Tensor& grad_input) {
  const at::Tensor weight = contiguous_weight(weight_opt);
  check_nll2d(self, target, weight, "nll_loss2d_backward_out_frame");
  TORCH_CHECK(total_weight.numel() == 1,
              "expected total_weight to be a single element tensor, got: ", total_weight.sizes(),
              " (", total_weight.numel(), " elements)");
  if (reduction == kNone) {
    TORCH_CHECK(grad_output.dim() == 3,
                "grad_output must have same dimension as target (3) but got dimension: ",
                grad_output.sizes());
    TORCH_CHECK(grad_output.sizes() == target.sizes(),
                "size mismatch (got grad_output: ", grad_output.sizes(),
                " target: ", target.sizes());
  } else {
    TORCH_CHECK(grad_output.dim() <= 1 && grad_output.numel() == 1,
                "Expected a single element grad_output tensor, but got: ", grad_output.sizes());
  }
  check_out(grad_input, self.sizes(), self.options(), {&self, &grad_output});
  const at::Tensor rows =
      at::zeros({self.size(0), self.size(2), self.size(3), self.size(1)}, self.options());
  const at::Tensor rows2d = rows.view({-1, self.size(1)});
  const Shape s{rows2d.size(0), rows2d.size(1), rows2d.stride(0), rows2d.stride(1)};
  const at::Tensor go = grad_output.to(self.scalar_type()).reshape({-1});
  const at::Tensor tw = total_weight.to(self.device(), self.scalar_type());
  nll_rows_backward(rows2d, s, s, target.reshape({-1}), weight, ignore_index, go,
                    reduction == kNone ? go.stride(0) : 0, tw, reduction == kMean);
  grad_input.copy_(rows.movedim(-1, 1));
  return grad_input;
}

at::Tensor nll2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                          const at::Tensor& target, const std::optional<at::Tensor>& weight_opt,
                          int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight) {
  at::Tensor grad_input = at::empty_like(self);
  return nll2d_backward_out(grad_output, self, target, weight_opt, reduction, ignore_index,
                            total_weight, grad_input);
}

// ---- binary_cross_entropy: the CPU's elementwise loss over the squeezed operands ----

constexpr const char* kBceRange = "all elements of input should be between 0 and 1";

// Records kBceRange (raised at the next wait) if an element of input is outside [0, 1] or NaN.
void check_unit_interval(const at::Tensor& input) {
  const at::Tensor in = input.contiguous();
  if (in.numel() == 0) return;
  const int device = in.device().index();
  KernelLaunch launch(
      get_kernel(device, "loss.cl", "check_unit_interval", options(in, false, false)));
  launch.arg(static_cast<cl_ulong>(in.numel())).buffer(buffer_of(in), in.itemsize());
  launch.arg(device_error_word(device)).arg(device_error_code(kBceRange));
  launch.enqueue1d(device, in.numel(), kLws);
}

at::Tensor& bce_out(const at::Tensor& input, const at::Tensor& target,
                    const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                    at::Tensor& loss) {
  check_ew_dtype(ew_op(EwId::bce), input.scalar_type());
  check_out(loss, input.sizes(), input.options(), {&input, &target});
  at::Tensor loss_squeezed = at::squeeze(loss);
  auto iter = at::TensorIteratorConfig()
                  .add_output(loss_squeezed)
                  .add_owned_const_input(at::squeeze(input))
                  .add_owned_const_input(at::squeeze(target))
                  .build();
  check_unit_interval(input);
  EwParams params;
  params.compute = input.scalar_type();
  launch_elementwise(iter, EwId::bce, params);
  if (weight_opt && weight_opt->defined()) loss.mul_(*weight_opt);
  if (reduction != at::Reduction::None) {
    const at::Tensor reduced = reduction == at::Reduction::Mean ? loss.mean() : loss.sum();
    loss.resize_({});
    loss.copy_(reduced);
  }
  return loss;
}

at::Tensor bce(const at::Tensor& input, const at::Tensor& target,
               const std::optional<at::Tensor>& weight_opt, int64_t reduction) {
  at::Tensor loss = at::empty_like(input);
  return bce_out(input, target, weight_opt, reduction, loss);
}

at::Tensor& bce_backward_out(const at::Tensor& grad, const at::Tensor& input,
                             const at::Tensor& target, const std::optional<at::Tensor>& weight_opt,
                             int64_t reduction, at::Tensor& grad_input) {
  check_ew_dtype(ew_op(EwId::bce_backward), input.scalar_type());
  check_out(grad_input, input.sizes(), input.options(), {&grad, &input, &target});
  at::Tensor grad_input_squeezed = at::squeeze(grad_input);
  auto iter = at::TensorIteratorConfig()
                  .add_output(grad_input_squeezed)
                  .add_owned_const_input(at::squeeze(grad))
                  .add_owned_const_input(at::squeeze(input))
                  .add_owned_const_input(at::squeeze(target))
                  .build();
  EwParams params;
  params.compute = input.scalar_type();
  launch_elementwise(iter, EwId::bce_backward, params);
  if (weight_opt && weight_opt->defined()) grad_input.mul_(*weight_opt);
  if (reduction == at::Reduction::Mean) grad_input.div_(input.numel());
  return grad_input;
}

at::Tensor bce_backward(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& target,
                        const std::optional<at::Tensor>& weight_opt, int64_t reduction) {
  at::Tensor grad_input = at::empty_like(input);
  return bce_backward_out(grad, input, target, weight_opt, reduction, grad_input);
}

using NllForward = Structured<at::meta::structured_nll_loss_forward, nll_forward_kernel>;
using NllBackward = Structured<at::meta::structured_nll_loss_backward, nll_backward_kernel>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nll_loss_forward", NllForward::functional);
  m.impl("nll_loss_forward.output", NllForward::out2);
  m.impl("nll_loss_backward", NllBackward::functional);
  m.impl("nll_loss_backward.grad_input", NllBackward::out);
  m.impl("nll_loss2d_forward", nll2d_forward);
  m.impl("nll_loss2d_forward.output", nll2d_forward_out);
  m.impl("nll_loss2d_backward", nll2d_backward);
  m.impl("nll_loss2d_backward.grad_input", nll2d_backward_out);
  m.impl("binary_cross_entropy", bce);
  m.impl("binary_cross_entropy.out", bce_out);
  m.impl("binary_cross_entropy_backward", bce_backward);
  m.impl("binary_cross_entropy_backward.grad_input", bce_backward_out);
}

}  // namespace torch_ocl
