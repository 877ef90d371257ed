// torch.optim's fused=True steps on the device: _fused_adam_, _fused_adamw_, _fused_sgd_ and
// _fused_adagrad_ (each with lr as a float or as a tensor), one multi-tensor launch
// (kernels/foreach.cl, ops/MultiTensor.h) per batch of parameters. torch allows fused for
// PrivateUse1 (torch.optim.optimizer._get_fused_kernels_supported_devices). As on CUDA, the lists
// must share dtype, device and layout; the step counts are float32 tensors on the device, and
// grad_scale / found_inf / an lr tensor are read by the kernels, so a step never waits for the
// device (GradScaler hands an optimizer with fused=True its scale and found_inf instead of
// checking for infs on the host).
#include <ATen/native/ForeachUtils.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "ops/MultiTensor.h"
#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

using TL = at::TensorList;

// The optional tensors of a step: each a float32 element on the params' device, or absent.
struct Extras {
  at::Tensor grad_scale, found_inf, lr;
};

at::Tensor check_extra(const std::optional<at::Tensor>& t, const at::Tensor& p, const char* what) {
  if (!t || !t->defined()) return {};
  TORCH_CHECK(t->device() == p.device(), what, " must be on the same device as the params (",
              p.device(), "), got ", t->device());
  TORCH_CHECK(t->scalar_type() == at::kFloat && t->numel() == 1, what,
              " must be a float32 tensor with one element, got ", t->scalar_type(), " with ",
              t->numel(), " elements");
  return *t;
}

// The lr tensor: a CPU one is a number (reading it does not wait for the device); one on the
// device is read by the kernel.
std::optional<double> lr_value(const at::Tensor& lr, const at::Tensor& p, at::Tensor& device_lr) {
  if (lr.device().is_cpu()) return lr.item<double>();
  TORCH_CHECK(lr.device() == p.device(), "lr must be on the same device as the params (",
              p.device(), "), got ", lr.device());
  TORCH_CHECK(lr.numel() == 1, "lr must be a tensor with one element, got ", lr.numel());
  device_lr = lr.scalar_type() == at::kFloat ? lr : lr.to(at::kFloat);
  return std::nullopt;
}

void check_steps(TL steps, const at::Tensor& p) {
  for (const at::Tensor& s : steps) {
    TORCH_CHECK(s.device() == p.device() && s.scalar_type() == at::kFloat && s.numel() == 1,
                "state_steps must be float32 tensors with one element on the params' device (",
                p.device(), "), got ", s.scalar_type(), " with ", s.numel(), " elements on ",
                s.device());
  }
}

void check_lists(const std::vector<TL>& lists, const char* message) {
  TORCH_CHECK(at::native::check_fast_path_restrictions(lists), message);
  const at::Tensor& p = lists[0][0];
  const at::ScalarType t = p.scalar_type();
  TORCH_CHECK(t == at::kFloat || t == at::kHalf || t == at::kBFloat16 || t == at::kDouble,
              "fused optimizer steps need floating point params, got ", t);
  for (const TL& l : lists)
    for (const at::Tensor& x : l)
      TORCH_CHECK(mt_fits(x), "torch-ocl: a tensor of ", x.numel(),
                  " elements is too large for the fused optimizer kernels");
}

// Launches `kernel` over the lists; `push_hyper` pushes the kernel's hyper-parameters (in the
// params' compute type) after the table and chunk.
template <class F>
void launch(const char* kernel, const std::vector<TL>& lists, std::string opts, const Extras& x,
            F&& push_hyper) {
  const at::Tensor& p = lists[0][0];
  const int device = p.device().index();
  const MtGeometry& geo = mt_geometry(device);
  opts += std::string(" -DFUSED_KERNELS -DT=") + type_tag(p.scalar_type(), device) +
          " -DNLIST=" + std::to_string(lists.size()) + geo.options;
  if (p.scalar_type() == at::kDouble) opts += " -DCOMP_IS_DOUBLE";
  if (x.grad_scale.defined()) opts += " -DGRAD_SCALE";
  if (x.found_inf.defined()) opts += " -DFOUND_INF";
  if (x.lr.defined()) opts += " -DLR_TENSOR";
  const std::vector<MtBatch> batches = mt_plan(device, lists);
  if (batches.empty()) return;
  cl_kernel k = get_kernel(device, "foreach.cl", kernel, opts);
  for (const MtBatch& b : batches) {
    KernelLaunch l(k);
    mt_push(l, b);
    l.arg(static_cast<cl_uint>(geo.chunk()));
    push_hyper(l);
    for (const at::Tensor* t : {&x.grad_scale, &x.found_inf, &x.lr})
      if (t->defined()) l.buffer(buffer_of(*t), t->itemsize());
    l.enqueue1d(device, static_cast<size_t>(b.chunks) * geo.lws, geo.lws);
  }
}

void push(KernelLaunch& l, double v, at::ScalarType t) { push_operand_scalar(l, v, t); }

void adam_impl(bool adamw, TL params, TL grads, TL exp_avgs, TL exp_avg_sqs, TL max_exp_avg_sqs,
               TL steps, std::optional<double> lr, const at::Tensor& lr_tensor, double beta1,
               double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
               const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  std::vector<TL> lists = {params, grads, exp_avgs, exp_avg_sqs};
  if (amsgrad) {
    lists.push_back(max_exp_avg_sqs);
    check_lists(lists,
                "params, grads, exp_avgs, exp_avg_sqs, and max_exp_avg_sqs must have same dtype, "
                "device, and layout");
  } else {
    TORCH_CHECK(max_exp_avg_sqs.empty(), "max_exp_avg_sqs must be empty without amsgrad");
    check_lists(lists,
                "params, grads, exp_avgs, and exp_avg_sqs must have same dtype, device, "
                "and layout");
  }
  TORCH_CHECK(steps.size() == params.size(), "state_steps must have one tensor per param");
  const at::Tensor& p = params[0];
  check_steps(steps, p);
  lists.push_back(steps);
  Extras x{check_extra(grad_scale, p, "grad_scale"), check_extra(found_inf, p, "found_inf"),
           lr_tensor};
  std::string opts;
  if (adamw) opts += " -DADAMW";
  if (amsgrad) opts += " -DAMSGRAD";
  if (maximize) opts += " -DMAXIMIZE";
  const at::ScalarType t = p.scalar_type();
  launch("fused_adam", lists, opts, x, [&](KernelLaunch& l) {
    push(l, lr.value_or(0), t);
    push(l, beta1, t);
    push(l, beta2, t);
    push(l, weight_decay, t);
    push(l, eps, t);
  });
}

template <bool kAdamW>
void adam_(TL params, TL grads, TL exp_avgs, TL exp_avg_sqs, TL max_exp_avg_sqs, TL steps,
           double lr, double beta1, double beta2, double weight_decay, double eps, bool amsgrad,
           bool maximize, const std::optional<at::Tensor>& grad_scale,
           const std::optional<at::Tensor>& found_inf) {
  adam_impl(kAdamW, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, {}, beta1,
            beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

template <bool kAdamW>
void adam_tensor_lr_(TL params, TL grads, TL exp_avgs, TL exp_avg_sqs, TL max_exp_avg_sqs, TL steps,
                     const at::Tensor& lr, double beta1, double beta2, double weight_decay,
                     double eps, bool amsgrad, bool maximize,
                     const std::optional<at::Tensor>& grad_scale,
                     const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  at::Tensor device_lr;
  const std::optional<double> v = lr_value(lr, params[0], device_lr);
  adam_impl(kAdamW, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, v, device_lr,
            beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void sgd_impl(TL params, TL grads, TL momentum_buffers, double weight_decay, double momentum,
              std::optional<double> lr, const at::Tensor& lr_tensor, double dampening,
              bool nesterov, bool maximize, bool is_first_step,
              const std::optional<at::Tensor>& grad_scale,
              const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  std::vector<TL> lists = {params, grads};
  std::string opts;
  if (!momentum_buffers.empty()) {
    TORCH_CHECK(momentum > 0, "momentum must be positive when momentum buffers are given, got ",
                momentum);
    lists.push_back(momentum_buffers);
    check_lists(lists,
                "params, grads, and momentum_buffer_list must have same dtype, device, "
                "and layout");
    opts += " -DMOMENTUM";
    if (nesterov) opts += " -DNESTEROV";
  } else {
    TORCH_CHECK(momentum == 0, "momentum must be 0 without momentum buffers, got ", momentum);
    check_lists(lists, "params and grads must have same dtype, device, and layout");
    if (is_first_step) {
      TORCH_WARN_ONCE(
          "`is_first_step` argument has no effect when `momentum_buffer_list` is empty");
    }
  }
  if (maximize) opts += " -DMAXIMIZE";
  const at::Tensor& p = params[0];
  Extras x{check_extra(grad_scale, p, "grad_scale"), check_extra(found_inf, p, "found_inf"),
           lr_tensor};
  const at::ScalarType t = p.scalar_type();
  launch("fused_sgd", lists, opts, x, [&](KernelLaunch& l) {
    push(l, lr.value_or(0), t);
    push(l, weight_decay, t);
    push(l, momentum, t);
    push(l, dampening, t);
    l.arg(static_cast<cl_int>(is_first_step));
  });
}

void sgd_(TL params, TL grads, TL momentum_buffers, double weight_decay, double momentum, double lr,
          double dampening, bool nesterov, bool maximize, bool is_first_step,
          const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  sgd_impl(params, grads, momentum_buffers, weight_decay, momentum, lr, {}, dampening, nesterov,
           maximize, is_first_step, grad_scale, found_inf);
}

void sgd_tensor_lr_(TL params, TL grads, TL momentum_buffers, double weight_decay, double momentum,
                    const at::Tensor& lr, double dampening, bool nesterov, bool maximize,
                    bool is_first_step, const std::optional<at::Tensor>& grad_scale,
                    const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  at::Tensor device_lr;
  const std::optional<double> v = lr_value(lr, params[0], device_lr);
  sgd_impl(params, grads, momentum_buffers, weight_decay, momentum, v, device_lr, dampening,
           nesterov, maximize, is_first_step, grad_scale, found_inf);
}

void adagrad_impl(TL params, TL grads, TL state_sums, TL steps, std::optional<double> lr,
                  const at::Tensor& lr_tensor, double lr_decay, double weight_decay, double eps,
                  bool maximize, const std::optional<at::Tensor>& grad_scale,
                  const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  std::vector<TL> lists = {params, grads, state_sums};
  check_lists(lists, "params, grads, and state_sums must have same dtype, device, and layout");
  TORCH_CHECK(steps.size() == params.size(), "state_steps must have one tensor per param");
  const at::Tensor& p = params[0];
  check_steps(steps, p);
  lists.push_back(steps);
  Extras x{check_extra(grad_scale, p, "grad_scale"), check_extra(found_inf, p, "found_inf"),
           lr_tensor};
  const at::ScalarType t = p.scalar_type();
  launch("fused_adagrad", lists, maximize ? " -DMAXIMIZE" : "", x, [&](KernelLaunch& l) {
    push(l, lr.value_or(0), t);
    push(l, lr_decay, t);
    push(l, weight_decay, t);
    push(l, eps, t);
  });
}

void adagrad_(TL params, TL grads, TL state_sums, TL steps, double lr, double lr_decay,
              double weight_decay, double eps, bool maximize,
              const std::optional<at::Tensor>& grad_scale,
              const std::optional<at::Tensor>& found_inf) {
  adagrad_impl(params, grads, state_sums, steps, lr, {}, lr_decay, weight_decay, eps, maximize,
               grad_scale, found_inf);
}

void adagrad_tensor_lr_(TL params, TL grads, TL state_sums, TL steps, const at::Tensor& lr,
                        double lr_decay, double weight_decay, double eps, bool maximize,
                        const std::optional<at::Tensor>& grad_scale,
                        const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  at::Tensor device_lr;
  const std::optional<double> v = lr_value(lr, params[0], device_lr);
  adagrad_impl(params, grads, state_sums, steps, v, device_lr, lr_decay, weight_decay, eps,
               maximize, grad_scale, found_inf);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_adam_", adam_<false>);
  m.impl("_fused_adam_.tensor_lr", adam_tensor_lr_<false>);
  m.impl("_fused_adamw_", adam_<true>);
  m.impl("_fused_adamw_.tensor_lr", adam_tensor_lr_<true>);
  m.impl("_fused_sgd_", sgd_);
  m.impl("_fused_sgd_.tensor_lr", sgd_tensor_lr_);
  m.impl("_fused_adagrad_", adagrad_);
  m.impl("_fused_adagrad_.tensor_lr", adagrad_tensor_lr_);
}

}  // namespace torch_ocl
