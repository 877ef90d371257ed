// multi_margin_loss, multilabel_margin_loss and their backwards on the device with
// kernels/loss_multi.cl. ATen's CPU
// implementations (LossMultiMargin.cpp, LossMultiLabelMargin.cpp) have no DispatchStub: its checks
// (LossMulti.h's shape checks, p in {1, 2}), result shapes and dtypes are repeated here. A
// reduction sums the per-row losses with a device sum (deterministic). An out-of-range target is
// raised at the next wait (runtime/DeviceError.h).
#include <ATen/core/Reduction.h>
#include <ATen/native/LossMulti.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/sum.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "ops/KernelTypes.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;
constexpr const char* kBadTarget = "multi_margin_loss: target out of range";
constexpr const char* kBadLabel = "multilabel_margin_loss: target is out of range";

struct Rows {
  int64_t nframe, dim;
};

Rows check(const at::Tensor& input, const at::Tensor& target, const at::Scalar& p,
           const std::optional<at::Tensor>& weight, const char* op) {
  TORCH_CHECK(p.toInt() == 1 || p.toInt() == 2, "only p == 1 and p == 2 supported");
  int64_t nframe = 0, dim = 0;
  at::native::multi_margin_loss_shape_check(nframe, dim, input.dim(), input, target, weight);
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble, "\"", op,
                              "\" not implemented for '", t, "'");
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ",
              target.scalar_type());
  if (weight && weight->defined()) {
    TORCH_CHECK(weight->scalar_type() == t, "expected scalar type ", t, " but found ",
                weight->scalar_type());
  }
  return {nframe, dim};
}

// Sets the common arguments: sizes, p, margin, weight flag (then the caller's), and returns the
// launch.
KernelLaunch start(const char* kernel, const at::Tensor& input, const Rows& r, const at::Scalar& p,
                   const at::Scalar& margin, bool has_weight) {
  const int device = input.device().index();
  const bool dbl = input.scalar_type() == at::kDouble;
  KernelLaunch l(get_kernel(device, "loss_multi.cl", kernel,
                            std::string("-DT_=") + (dbl ? "double" : "float")));
  l.arg(static_cast<cl_long>(r.nframe)).arg(static_cast<cl_long>(r.dim));
  l.arg(static_cast<cl_int>(p.toInt()));
  if (dbl) {
    l.arg(static_cast<cl_double>(margin.toDouble()));
  } else {
    l.arg(static_cast<cl_float>(margin.toFloat()));
  }
  l.arg(static_cast<cl_int>(has_weight));
  return l;
}

// input as [nframe, dim] strides, target's stride, weight (or input as a placeholder).
void add_operands(KernelLaunch& l, const at::Tensor& input, const at::Tensor& target,
                  const std::optional<at::Tensor>& weight, const Rows& r) {
  const int64_t s1 = input.dim() == 2 ? input.stride(1) : (input.dim() == 1 ? input.stride(0) : 1);
  const int64_t s0 = input.dim() == 2 ? input.stride(0) : r.dim * s1;
  l.buffer(buffer_of(input), input.itemsize());
  l.arg(static_cast<cl_long>(s0)).arg(static_cast<cl_long>(s1));
  l.buffer(buffer_of(target), target.itemsize());
  l.arg(static_cast<cl_long>(target.dim() == 1 ? target.stride(0) : 0));
  const bool has_weight = weight && weight->defined();
  const at::Tensor& w = has_weight ? *weight : input;
  l.buffer(buffer_of(w), w.itemsize());
  l.arg(static_cast<cl_long>(has_weight && w.dim() == 1 ? w.stride(0) : 0));
}

at::Tensor multi_margin_loss(const at::Tensor& input, const at::Tensor& target, const at::Scalar& p,
                             const at::Scalar& margin, const std::optional<at::Tensor>& weight,
                             int64_t reduction) {
  const Rows r = check(input, target, p, weight, "multi_margin_loss_cpu_kernel");
  const bool per_row = reduction == at::Reduction::None && target.dim() > 0;
  at::Tensor rows = at::empty({r.nframe}, input.options());
  if (input.numel() > 0) {
    c10::DeviceGuard guard(input.device());
    const int device = input.device().index();
    KernelLaunch l =
        start("multi_margin_forward", input, r, p, margin, weight && weight->defined());
    add_operands(l, input, target, weight, r);
    l.buffer(buffer_of(rows), rows.itemsize());
    l.arg(device_error_word(device)).arg(device_error_code(kBadTarget));
    l.enqueue1d(device, static_cast<size_t>(r.nframe), kLws);
  }
  if (per_row) return rows;
  // (No rows: 0, or NaN for the mean; the CPU leaves the result uninitialised there.)
  at::Tensor total = at::sum(rows);
  if (reduction == at::Reduction::Mean) total = total / static_cast<double>(r.nframe);
  return total;
}

at::Tensor multi_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                      const at::Tensor& target, const at::Scalar& p,
                                      const at::Scalar& margin,
                                      const std::optional<at::Tensor>& weight, int64_t reduction) {
  const Rows r = check(input, target, p, weight, "multi_margin_loss_backward_cpu_kernel");
  at::Tensor grad_input = at::empty(input.sizes(), input.options());
  if (input.numel() == 0) return grad_input;
  const bool per_row =
      reduction != at::Reduction::Mean && reduction != at::Reduction::Sum && grad_output.dim() > 0;
  TORCH_CHECK(grad_output.numel() == (per_row ? r.nframe : 1),
              "multi_margin_loss_backward: grad_output of ", grad_output.numel(), " elements for ",
              r.nframe, " rows");
  c10::DeviceGuard guard(input.device());
  const int device = input.device().index();
  const double g = reduction == at::Reduction::Mean ? 1. / static_cast<double>(r.nframe * r.dim)
                                                    : 1. / static_cast<double>(r.dim);
  KernelLaunch l = start("multi_margin_backward", input, r, p, margin, weight && weight->defined());
  if (input.scalar_type() == at::kDouble) {
    l.arg(static_cast<cl_double>(g));
  } else {
    l.arg(static_cast<cl_float>(g));
  }
  l.buffer(buffer_of(grad_output), grad_output.itemsize());
  l.arg(static_cast<cl_long>(per_row ? grad_output.stride(0) : 0));
  add_operands(l, input, target, weight, r);
  l.buffer(buffer_of(grad_input), grad_input.itemsize());
  l.arg(device_error_word(device)).arg(device_error_code(kBadTarget));
  l.enqueue1d(device, static_cast<size_t>(r.nframe), kLws);
  return grad_input;
}

// [nframe, dim] strides of a 0-d, 1-d or 2-d tensor of dim columns.
std::pair<int64_t, int64_t> row_strides(const at::Tensor& t, int64_t dim) {
  if (t.dim() == 2) return {t.stride(0), t.stride(1)};
  const int64_t s1 = t.dim() == 1 ? t.stride(0) : 1;
  return {dim * s1, s1};
}

Rows check_multilabel(const at::Tensor& input, const at::Tensor& target, const char* op) {
  int64_t nframe = 0, dim = 0;
  at::native::multilabel_margin_loss_shape_check(nframe, dim, input.dim(), input, target);
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble, "\"", op,
                              "\" not implemented for '", t, "'");
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ",
              target.scalar_type());
  return {nframe, dim};
}

KernelLaunch start_multilabel(const char* kernel, const at::Tensor& input, const Rows& r) {
  const int device = input.device().index();
  const bool dbl = input.scalar_type() == at::kDouble;
  KernelLaunch l(get_kernel(device, "loss_multi.cl", kernel,
                            std::string("-DT_=") + (dbl ? "double" : "float")));
  l.arg(static_cast<cl_long>(r.nframe)).arg(static_cast<cl_long>(r.dim));
  return l;
}

void add_rows(KernelLaunch& l, const at::Tensor& t, int64_t dim) {
  const auto [s0, s1] = row_strides(t, dim);
  l.buffer(buffer_of(t), t.itemsize());
  l.arg(static_cast<cl_long>(s0)).arg(static_cast<cl_long>(s1));
}

std::tuple<at::Tensor, at::Tensor> multilabel_margin_loss_forward(const at::Tensor& input,
                                                                  const at::Tensor& target,
                                                                  int64_t reduction) {
  const Rows r = check_multilabel(input, target, "multilabel_margin_loss_forward_out_frame");
  const bool per_row = reduction == at::Reduction::None && target.dim() > 1;
  at::Tensor is_target = at::empty(target.sizes(), input.options());
  at::Tensor rows = at::empty({r.nframe}, input.options());
  if (input.numel() == 0) {
    is_target.zero_();
    rows.zero_();
  } else {
    c10::DeviceGuard guard(input.device());
    const int device = input.device().index();
    KernelLaunch l = start_multilabel("multilabel_margin_forward", input, r);
    add_rows(l, input, r.dim);
    add_rows(l, target, r.dim);
    l.buffer(buffer_of(is_target), is_target.itemsize());
    l.buffer(buffer_of(rows), rows.itemsize());
    l.arg(device_error_word(device)).arg(device_error_code(kBadLabel));
    l.enqueue1d(device, static_cast<size_t>(r.nframe), kLws);
  }
  if (per_row) return {rows, is_target};
  at::Tensor total = at::sum(rows);
  if (reduction == at::Reduction::Mean) total = total / static_cast<double>(r.nframe);
  return {total, is_target};
}

at::Tensor multilabel_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                           const at::Tensor& target, int64_t reduction,
                                           const at::Tensor& is_target) {
  const Rows r = check_multilabel(input, target, "multilabel_margin_loss_backward_out_frame");
  TORCH_CHECK(is_target.sizes() == target.sizes(), "Expected tensor for argument #5 'is_target'",
              " to have the same size as tensor for argument #3 'target'; but ", is_target.sizes(),
              " does not equal ", target.sizes());
  TORCH_CHECK(is_target.scalar_type() == input.scalar_type(), "expected scalar type ",
              input.scalar_type(), " but found ", is_target.scalar_type());
  at::Tensor grad_input = at::empty(input.sizes(), input.options());
  if (input.numel() == 0) return grad_input;
  const bool per_row = reduction == at::Reduction::None && grad_output.dim() > 0;
  TORCH_CHECK(grad_output.numel() == (per_row ? r.nframe : 1),
              "multilabel_margin_loss_backward: grad_output of ", grad_output.numel(),
              " elements for ", r.nframe, " rows");
  c10::DeviceGuard guard(input.device());
  const int device = input.device().index();
  const double g = reduction == at::Reduction::Mean ? 1. / static_cast<double>(r.nframe * r.dim)
                                                    : 1. / static_cast<double>(r.dim);
  KernelLaunch l = start_multilabel("multilabel_margin_backward", input, r);
  if (input.scalar_type() == at::kDouble) {
    l.arg(static_cast<cl_double>(g));
  } else {
    l.arg(static_cast<cl_float>(g));
  }
  l.buffer(buffer_of(grad_output), grad_output.itemsize());
  l.arg(static_cast<cl_long>(per_row ? grad_output.stride(0) : 0));
  add_rows(l, input, r.dim);
  add_rows(l, target, r.dim);
  add_rows(l, is_target, r.dim);
  l.buffer(buffer_of(grad_input), grad_input.itemsize());
  l.arg(device_error_word(device)).arg(device_error_code(kBadLabel));
  l.enqueue1d(device, static_cast<size_t>(r.nframe), kLws);
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("multi_margin_loss", multi_margin_loss);
  m.impl("multi_margin_loss_backward", multi_margin_loss_backward);
  m.impl("multilabel_margin_loss_forward", multilabel_margin_loss_forward);
  m.impl("multilabel_margin_loss_backward", multilabel_margin_loss_backward);
}

}  // namespace torch_ocl
