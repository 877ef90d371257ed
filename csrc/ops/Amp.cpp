// Mixed precision on the device: torch.autocast("ocl") and torch.amp.GradScaler("ocl").
//
// Autocast: ATen registers its per-op casting wrappers for the CUDA, CPU, XPU, MPS, MTIA and MAIA
// autocast keys only; for AutocastPrivateUse1 it offers the same lists (AT_FORALL_* in
// ATen/autocast_mode.h) and the KERNEL_PRIVATEUSEONE registration macro, and a backend registers
// them. We register the lists CUDA uses: GEMMs and convolutions in the autocast dtype (float16 or
// bfloat16, which the GEMM and convolution kernels accumulate in float), the precision-sensitive
// ops (pow, exp/log, norms, losses, softmax, sums) in float32, and the multi-input ops that
// promote to the widest input dtype. Every other op falls through. The Python side
// (torch.ocl.get_amp_supported_dtype) is in python/torch_ocl/amp.py.
//
// GradScaler: _amp_foreach_non_finite_check_and_unscale_ (a multi-tensor launch: the
// foreach "unscale" op, which also records a non-finite element in found_inf) and
// _amp_update_scale_ (kernels/amp.cl), both without host waits; the checks follow the CPU's.
#include <ATen/autocast_mode.h>
#include <ATen/native/ForeachUtils.h>
#include <torch/headeronly/version.h>
#include <torch/library.h>

#include <map>
#include <string>
#include <vector>

#include "ops/Foreach.h"
#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

at::Tensor binary_cross_entropy_banned(const at::Tensor&, const at::Tensor&,
                                       const std::optional<at::Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
              "autocast (a sigmoid followed by binary_cross_entropy loses precision in float16). "
              "Use torch.nn.functional.binary_cross_entropy_with_logits or "
              "torch.nn.BCEWithLogitsLoss, which are safe to autocast.");
}

bool is_ocl(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// One float32 element on the grads' device (the CPU's checks, worded for the device).
void check_scalar_tensor(const at::Tensor& t, const char* name, const at::Device& device) {
  TORCH_CHECK(is_ocl(t) && t.device() == device, name, " must be an ocl tensor on ", device,
              ", got one on ", t.device(), ".");
  TORCH_CHECK(t.numel() == 1, name, " must be a 1-element tensor.");
  TORCH_CHECK(t.scalar_type() == at::kFloat, name, " must be a float tensor.");
}

constexpr char kUnscale[] = "unscale";

// grads[i] *= inv_scale (unless it is 1); found_inf = 1 if any element is not finite.
void non_finite_check_and_unscale_(at::TensorList grads, at::Tensor& found_inf,
                                   const at::Tensor& inv_scale) {
  if (grads.empty()) return;
  const at::Device device = found_inf.device();
  check_scalar_tensor(inv_scale, "inv_scale", inv_scale.device());
  check_scalar_tensor(found_inf, "found_inf", found_inf.device());
  TORCH_CHECK(inv_scale.device() == found_inf.device(),
              "inv_scale and found_inf must be on the same device.");
  at::native::check_foreach_api_restrictions(grads);
  for (const at::Tensor& t : grads) {
    TORCH_CHECK(t.device() == device, "one of scaled_grads was not an ocl tensor on ", device, ".");
    TORCH_CHECK(t.layout() == at::kStrided, "one of scaled_grads was not a strided tensor.");
    TORCH_CHECK(at::isFloatingType(t.scalar_type()),
                "_amp_foreach_non_finite_check_and_unscale_ expects floating point gradients, got ",
                t.scalar_type());
  }
  const ForeachScalar s = ForeachScalar::of_tensor(inv_scale);
  if (foreach_fast_route({grads}) && !foreach_has_hazard(grads, {})) {
    foreach_apply(kUnscale, {grads}, {}, s, 1, false, &found_inf);
    return;
  }
  // Mixed dtypes or layouts: one launch per dtype for the dense tensors, a dense copy for others.
  std::map<at::ScalarType, std::vector<at::Tensor>> dense;
  for (const at::Tensor& t : grads) {
    if (t.numel() == 0) continue;
    if (t.is_non_overlapping_and_dense()) {
      dense[t.scalar_type()].push_back(t);
    } else {
      at::Tensor c = t.contiguous();
      foreach_apply(kUnscale, {at::TensorList(c)}, {}, s, 1, false, &found_inf);
      t.copy_(c);
    }
  }
  for (auto& [dtype, list] : dense) {
    for (const at::Tensor& t : list)
      TORCH_CHECK(foreach_fast_route({at::TensorList(t)}), "torch-ocl: cannot unscale a ",
                  t.scalar_type(), " gradient of ", t.numel(), " elements on the device");
    foreach_apply(kUnscale, {at::TensorList(list)}, {}, s, 1, false, &found_inf);
  }
}

at::Tensor& update_scale_(at::Tensor& scale, at::Tensor& growth_tracker,
                          const at::Tensor& found_inf, double growth_factor, double backoff_factor,
                          int64_t growth_interval) {
  const at::Device device = scale.device();
  TORCH_CHECK(is_ocl(growth_tracker) && growth_tracker.device() == device,
              "growth_tracker must be an ocl tensor on ", device, ".");
  TORCH_CHECK(found_inf.device() == device, "found_inf must be an ocl tensor on ", device, ".");
  TORCH_CHECK(scale.numel() == 1, "current_scale must be a 1-element tensor.");
  TORCH_CHECK(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.");
  TORCH_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  TORCH_CHECK(scale.scalar_type() == at::kFloat, "current_scale must be a float tensor.");
  TORCH_CHECK(growth_tracker.scalar_type() == at::kInt, "growth_tracker must be an int tensor.");
  TORCH_CHECK(found_inf.scalar_type() == at::kFloat, "found_inf must be a float tensor.");
  const int dev = device.index();
  const bool fp64 = device_info(dev).fp64;
  KernelLaunch l(
      get_kernel(dev, "amp.cl", "amp_update_scale", fp64 ? "-DAMP_T=double" : "-DAMP_T=float"));
  l.buffer(buffer_of(scale), 4)
      .buffer(buffer_of(growth_tracker), 4)
      .buffer(buffer_of(found_inf), 4);
  if (fp64) {
    l.arg(static_cast<cl_double>(growth_factor)).arg(static_cast<cl_double>(backoff_factor));
  } else {
    l.arg(static_cast<cl_float>(growth_factor)).arg(static_cast<cl_float>(backoff_factor));
  }
  l.arg(static_cast<cl_int>(growth_interval));
  l.enqueue1d(dev, 1, 1);
  return scale;
}

}  // namespace

// ATen's lists name types without a namespace (they expand inside at::autocast for CUDA).
namespace autocast_lists {
#if TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 13
using at::DimnameList;  // named by torch 2.11's lists (see TORCH_OCL_OUTPUT_NAMES_PARAM)
#endif
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define OCL_AUTOCAST_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
  AT_FORALL_LOWER_PRECISION_FP(OCL_AUTOCAST_LOWER)
#define OCL_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
  AT_FORALL_FP32(OCL_AUTOCAST_FP32)
#define OCL_AUTOCAST_FP32_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
  AT_FORALL_FP32_SET_OPT_DTYPE(OCL_AUTOCAST_FP32_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
#define OCL_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_PROMOTE(OCL_AUTOCAST_PROMOTE)
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"),
         TORCH_FN((&binary_cross_entropy_banned)));
}

}  // namespace autocast_lists

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", non_finite_check_and_unscale_);
  m.impl("_amp_update_scale_", update_scale_);
}

}  // namespace torch_ocl
