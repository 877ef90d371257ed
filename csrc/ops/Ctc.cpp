// The CTC loss (nn.CTCLoss, F.ctc_loss) with kernels/ctc.cl: _ctc_loss and _ctc_loss_backward
// with lengths as lists and as tensors, padded ([N, S]) and concatenated (1-d) targets, int64 or
// int32, float32/float64 log_probs (as on the CPU). ATen's composite ctc_loss adds the reductions,
// zero_infinity's masking of the loss and the unbatched form around these.
//
// The lengths are host values (IntArrayRef), so the CPU's argument checks run here exactly, and
// they travel to the device with the data's ordinary asynchronous copy. The tensor-length
// overloads read lengths that live on the device back to the host (a wait the user chose by
// putting them there, as on CUDA); CPU lengths cost nothing.
#include <ATen/TensorUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/tensor.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr const char* kFrom = "ctc_loss_allocate_outputs";

// The checked geometry of one call, and its per-item lengths and target offsets on the device.
struct CtcGeometry {
  int64_t batch = 0, t_max = 0, labels = 0, s_max = 0, tg_stride = 0;
  at::Tensor meta;  // int64 [3, N]: input length, target length, target offset
};

CtcGeometry ctc_geometry(const at::Tensor& log_probs, const at::Tensor& targets,
                         at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                         int64_t blank) {
  const at::TensorArg lp_arg(log_probs, "log_probs", 1), tg_arg(targets, "targets", 2);
  at::checkScalarTypes(kFrom, tg_arg, {at::kLong, at::kInt});
  at::checkScalarTypes(kFrom, lp_arg, {at::kFloat, at::kDouble});
  at::checkDim(kFrom, lp_arg, 3);
  at::checkDimRange(kFrom, tg_arg, 1, 3);
  TORCH_CHECK(log_probs.device() == targets.device(), "ctc_loss: expected log_probs and targets ",
              "on the same device, got ", log_probs.device(), " and ", targets.device());
  CtcGeometry g;
  g.batch = log_probs.size(1);
  g.t_max = log_probs.size(0);
  g.labels = log_probs.size(2);
  TORCH_CHECK(blank < g.labels && blank >= 0, "blank must be in label range");
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == g.batch,
              "input_lengths must be of size batch_size");
  TORCH_CHECK(static_cast<int64_t>(target_lengths.size()) == g.batch,
              "target_lengths must be of size batch_size");
  std::vector<int64_t> meta(static_cast<size_t>(3 * g.batch));
  if (targets.dim() == 1) {  // concatenated
    int64_t pos = 0;
    for (int64_t b = 0; b < g.batch; ++b) {
      TORCH_CHECK(target_lengths[b] >= 0, "Expected target_lengths to have value at least 0, ",
                  "but got value ", target_lengths[b], " (while checking arguments for ", kFrom,
                  ")");
      meta[2 * g.batch + b] = pos * targets.stride(0);
      pos += target_lengths[b];
      g.s_max = std::max(g.s_max, target_lengths[b]);
    }
    at::checkSize(kFrom, tg_arg, 0, pos);
    g.tg_stride = targets.stride(0);
  } else {  // padded [N, S]
    at::checkSize(kFrom, tg_arg, 0, g.batch);
    g.s_max = targets.size(1);
    for (int64_t b = 0; b < g.batch; ++b) {
      TORCH_CHECK(target_lengths[b] >= 0, "Expected target_lengths to have value at least 0, ",
                  "but got value ", target_lengths[b], " (while checking arguments for ", kFrom,
                  ")");
      TORCH_CHECK(target_lengths[b] <= g.s_max, "Expected tensor to have size at least ",
                  target_lengths[b], " at dimension 1, but got size ", g.s_max,
                  " for argument #2 'targets' (while checking arguments for ", kFrom, ")");
      meta[2 * g.batch + b] = b * targets.stride(0);
    }
    g.tg_stride = targets.stride(1);
  }
  for (int64_t b = 0; b < g.batch; ++b) {
    TORCH_CHECK(input_lengths[b] >= 0, "Expected input_lengths to have value at least 0, but got ",
                "value ", input_lengths[b], " (while checking arguments for ", kFrom, ")");
    TORCH_CHECK(input_lengths[b] <= g.t_max, "Expected input_lengths to have value at most ",
                g.t_max, ", but got value ", input_lengths[b], " (while checking arguments for ",
                kFrom, ")");
    meta[b] = input_lengths[b];
    meta[g.batch + b] = target_lengths[b];
  }
  g.meta = at::tensor(meta, at::TensorOptions().dtype(at::kLong))
               .to(log_probs.device(), /*non_blocking=*/true);
  return g;
}

size_t ctc_lws(int device) { return device_profile(device).fit_lws(128); }

std::string ctc_options(const at::Tensor& log_probs, const at::Tensor& targets, int device) {
  return std::string("-DT=") + type_tag(log_probs.scalar_type(), device) +
         " -DTG_T=" + (targets.scalar_type() == at::kLong ? "long" : "int") +
         " -DLWS=" + std::to_string(ctc_lws(device));
}

// The arguments ctc_alpha, ctc_beta and ctc_grad share, up to `blank`.
void push_common(KernelLaunch& l, const CtcGeometry& g, const at::Tensor& lp, const at::Tensor& tg,
                 int64_t blank) {
  l.buffer(buffer_of(lp), lp.itemsize());
  l.arg(static_cast<cl_long>(lp.stride(0))).arg(static_cast<cl_long>(lp.stride(1)));
  l.arg(static_cast<cl_long>(lp.stride(2)));
  l.buffer(buffer_of(tg), tg.itemsize()).arg(static_cast<cl_long>(g.tg_stride));
  l.buffer(buffer_of(g.meta), 8).arg(static_cast<cl_long>(blank));
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_impl(const at::Tensor& log_probs,
                                                 const at::Tensor& targets,
                                                 at::IntArrayRef input_lengths,
                                                 at::IntArrayRef target_lengths, int64_t blank,
                                                 bool /*zero_infinity*/) {
  c10::DeviceGuard guard(log_probs.device());
  const CtcGeometry g = ctc_geometry(log_probs, targets, input_lengths, target_lengths, blank);
  const int device = log_probs.device().index();
  const int64_t width = 2 * g.s_max + 1;
  at::Tensor log_alpha = at::empty({g.batch, g.t_max, width}, log_probs.options());
  at::Tensor nll = at::empty({g.batch}, log_probs.options());
  if (g.batch == 0) return {nll, log_alpha};
  const size_t lws = ctc_lws(device);
  KernelLaunch l(
      get_kernel(device, "ctc.cl", "ctc_alpha", ctc_options(log_probs, targets, device)));
  l.arg(static_cast<cl_ulong>(g.batch)).arg(static_cast<cl_ulong>(g.t_max));
  l.arg(static_cast<cl_ulong>(width));
  push_common(l, g, log_probs, targets, blank);
  l.buffer(buffer_of(log_alpha), log_alpha.itemsize()).buffer(buffer_of(nll), nll.itemsize());
  l.enqueue1d(device, static_cast<size_t>(g.batch) * lws, lws);
  return {nll, log_alpha};
}

at::Tensor ctc_loss_backward_impl(const at::Tensor& grad_out, const at::Tensor& log_probs,
                                  const at::Tensor& targets, at::IntArrayRef input_lengths,
                                  at::IntArrayRef target_lengths, const at::Tensor& nll,
                                  const at::Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  c10::DeviceGuard guard(log_probs.device());
  const CtcGeometry g = ctc_geometry(log_probs, targets, input_lengths, target_lengths, blank);
  const int device = log_probs.device().index();
  const int64_t width = 2 * g.s_max + 1;
  TORCH_CHECK(log_alpha.dim() == 3 && log_alpha.size(0) == g.batch &&
                  log_alpha.size(1) == g.t_max && log_alpha.size(2) == width,
              "ctc_loss_backward: log_alpha has shape ", log_alpha.sizes(), ", expected [", g.batch,
              ", ", g.t_max, ", ", width, "] (the forward's second result)");
  at::Tensor grad = at::empty({g.t_max, g.batch, g.labels}, log_probs.options());
  if (grad.numel() == 0) return grad;
  const at::Tensor la = log_alpha.contiguous();
  const at::Tensor nl = nll.contiguous();
  at::Tensor log_beta = at::empty_like(la);
  const size_t lws = ctc_lws(device);
  const std::string options = ctc_options(log_probs, targets, device);
  {
    KernelLaunch l(get_kernel(device, "ctc.cl", "ctc_beta", options));
    l.arg(static_cast<cl_ulong>(g.batch)).arg(static_cast<cl_ulong>(g.t_max));
    l.arg(static_cast<cl_ulong>(width));
    push_common(l, g, log_probs, targets, blank);
    l.buffer(buffer_of(log_beta), log_beta.itemsize());
    l.enqueue1d(device, static_cast<size_t>(g.batch) * lws, lws);
  }
  const at::Tensor go = grad_out.dim() == 0 ? grad_out.expand({g.batch}) : grad_out;
  KernelLaunch l(get_kernel(device, "ctc.cl", "ctc_grad", options));
  l.arg(static_cast<cl_ulong>(g.batch)).arg(static_cast<cl_ulong>(g.t_max));
  l.arg(static_cast<cl_ulong>(width)).arg(static_cast<cl_ulong>(g.labels));
  push_common(l, g, log_probs, targets, blank);
  l.buffer(buffer_of(la), la.itemsize()).buffer(buffer_of(log_beta), log_beta.itemsize());
  l.buffer(buffer_of(nl), nl.itemsize());
  l.buffer(buffer_of(go), go.itemsize()).arg(static_cast<cl_long>(go.stride(0)));
  l.arg(static_cast<cl_int>(zero_infinity ? 1 : 0));
  l.buffer(buffer_of(grad), grad.itemsize());
  const size_t global[3] = {lws, static_cast<size_t>(g.t_max), static_cast<size_t>(g.batch)};
  const size_t local[3] = {lws, 1, 1};
  l.enqueue(device, 3, global, local);
  return grad;
}

// Lengths given as tensors: read to the host (no wait for CPU tensors).
std::vector<int64_t> host_lengths(const at::Tensor& t, const char* name) {
  TORCH_CHECK(at::isIntegralType(t.scalar_type(), /*includeBool=*/false), "ctc_loss: ", name,
              " must be integral");
  const at::Tensor c = t.to(at::kCPU, at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_tensor(const at::Tensor& log_probs,
                                                   const at::Tensor& targets,
                                                   const at::Tensor& input_lengths,
                                                   const at::Tensor& target_lengths, int64_t blank,
                                                   bool zero_infinity) {
  return ctc_loss_impl(log_probs, targets, host_lengths(input_lengths, "input_lengths"),
                       host_lengths(target_lengths, "target_lengths"), blank, zero_infinity);
}

at::Tensor ctc_loss_backward_tensor(const at::Tensor& grad_out, const at::Tensor& log_probs,
                                    const at::Tensor& targets, const at::Tensor& input_lengths,
                                    const at::Tensor& target_lengths, const at::Tensor& nll,
                                    const at::Tensor& log_alpha, int64_t blank,
                                    bool zero_infinity) {
  return ctc_loss_backward_impl(
      grad_out, log_probs, targets, host_lengths(input_lengths, "input_lengths"),
      host_lengths(target_lengths, "target_lengths"), nll, log_alpha, blank, zero_infinity);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_ctc_loss", ctc_loss_impl);
  m.impl("_ctc_loss.Tensor", ctc_loss_tensor);
  m.impl("_ctc_loss_backward", ctc_loss_backward_impl);
  m.impl("_ctc_loss_backward.Tensor", ctc_loss_backward_tensor);
}

}  // namespace torch_ocl
