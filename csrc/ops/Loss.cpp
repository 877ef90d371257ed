// nll_loss forward and backward (so cross_entropy = log_softmax + nll_loss runs on the device)
// with kernels/loss.cl. No host waits: total weight and reduced losses stay on the device.
// Registered through Structured.h (ATen's meta functions, out= checks, overlapping outputs).
#include <ATen/ops/empty.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <torch/library.h>

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
              self.dim(), "-D (use a reshape, or nll_loss2d inputs are not supported yet)");
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
  const at::Tensor weight =
      weight_opt && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
  TORCH_CHECK(!weight.defined() || weight.numel() == s.C,
              "nll_loss: weight tensor should be "
              "defined either for all ",
              s.C,
              " classes or no classes but got weight tensor of "
              "shape: ",
              weight.sizes());
  const int device = self.device().index();
  at::Tensor loss = at::empty({s.N}, self.options());
  at::Tensor wsum = at::empty({s.N}, self.options());
  if (s.N > 0) {
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
  if (reduction == kNone && self.dim() == 2) {
    output.copy_(loss);
    total_weight.zero_();
  } else {
    at::Tensor tw = wsum.sum();
    total_weight.copy_(tw);
    at::Tensor total = loss.sum();
    if (reduction == kMean) {
      output.copy_(total / tw);
    } else {
      output.copy_(total);
    }
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
  const at::Tensor weight =
      weight_opt && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
  const bool per_row = reduction == kNone && self.dim() == 2;
  const at::Tensor go = grad_output.to(self.scalar_type());
  const at::Tensor tw = total_weight.to(self.device(), self.scalar_type());
  const at::Tensor& gin = grad_input;
  const Shape g = shape_of(gin);
  const int device = self.device().index();
  KernelLaunch launch(get_kernel(device, "loss.cl", "nll_loss_backward",
                                 options(self, weight.defined(), reduction == kMean)));
  launch.arg(static_cast<cl_ulong>(s.N)).arg(static_cast<cl_ulong>(s.C));
  launch.buffer(buffer_of(gin), gin.itemsize()).arg(static_cast<cl_long>(g.sn));
  launch.arg(static_cast<cl_long>(g.sc));
  launch.buffer(buffer_of(target), 8)
      .arg(static_cast<cl_long>(target.dim() ? target.stride(0) : 0));
  launch.buffer(buffer_of(weight.defined() ? weight : self), self.itemsize());
  launch.arg(static_cast<cl_long>(ignore_index));
  launch.buffer(buffer_of(go), go.itemsize()).arg(static_cast<cl_long>(per_row ? go.stride(0) : 0));
  launch.buffer(buffer_of(tw), tw.itemsize());
  launch.arg(device_error_word(device)).arg(device_error_code(kBadTarget));
  launch.enqueue1d(device, s.N, kLws);
}

using NllForward = Structured<at::meta::structured_nll_loss_forward, nll_forward_kernel>;
using NllBackward = Structured<at::meta::structured_nll_loss_backward, nll_backward_kernel>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nll_loss_forward", NllForward::functional);
  m.impl("nll_loss_forward.output", NllForward::out2);
  m.impl("nll_loss_backward", NllBackward::functional);
  m.impl("nll_loss_backward.grad_input", NllBackward::out);
}

}  // namespace torch_ocl
