// cdist / pdist on the device: ATen's own _cdist_forward, _cdist_backward, _pdist_forward and
// _pdist_backward (Distance.cpp: argument checks, batch broadcasting, the matmul route for p = 2,
// empty inputs, allocation) registered for the device, with our kernels (kernels/distance.cl) for
// the DispatchStubs they call. The backwards are gathers (deterministic, no atomics).
#include <ATen/native/Distance.h>
#include <ATen/ops/_cdist_backward_native.h>
#include <ATen/ops/_cdist_forward_native.h>
#include <ATen/ops/_pdist_backward_native.h>
#include <ATen/ops/_pdist_forward_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <string>

#include "ops/KernelTypes.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// The CPU's dtype support (its kernels dispatch on float and double).
void check_dtype(const at::Tensor& t, const char* op) {
  const at::ScalarType s = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(s == at::kFloat || s == at::kDouble, "\"", op,
                              "\" not implemented for '", s, "'");
}

const char* p_mode(double p) {
  if (p == 0) return " -DMODE_P0";
  if (p == 1) return " -DMODE_P1";
  if (p == 2) return " -DMODE_P2";
  if (std::isinf(p)) return " -DMODE_PINF";
  return p < 2 ? " -DMODE_PLT2" : " -DMODE_PGEN";
}

// The kernel for `t`'s dtype and p; its leading arguments (total, sizes, p) set.
KernelLaunch start(const char* kernel, const at::Tensor& t, double p, int64_t total,
                   std::initializer_list<int64_t> sizes) {
  const int device = t.device().index();
  const std::string options = std::string("-DT_=") + type_tag(t.scalar_type(), device) + p_mode(p);
  KernelLaunch l(get_kernel(device, "distance.cl", kernel, options));
  l.arg(static_cast<cl_ulong>(total));
  for (int64_t v : sizes) l.arg(static_cast<cl_long>(v));
  if (t.scalar_type() == at::kDouble) {
    l.arg(static_cast<cl_double>(p));
  } else {
    l.arg(static_cast<cl_float>(p));
  }
  return l;
}

void add(KernelLaunch& l, const at::Tensor& t) { l.buffer(buffer_of(t), t.itemsize()); }

// result [*batch, R1, R2] from x1 [B, R1, M], x2 [B, R2, M] (contiguous).
void cdist_kernel(at::Tensor& result, const at::Tensor& x1, const at::Tensor& x2, double p) {
  check_dtype(x1, "cdist");
  if (result.numel() == 0) return;
  c10::DeviceGuard guard(result.device());
  KernelLaunch l =
      start("cdist_forward", x1, p, result.numel(), {x1.size(-2), x2.size(-2), x1.size(-1)});
  add(l, x1);
  add(l, x2);
  add(l, result);
  l.enqueue1d(result.device().index(), static_cast<size_t>(result.numel()), kLws);
}

void cdist_backward_kernel(at::Tensor& grad_x1, const at::Tensor& grad, const at::Tensor& x1,
                           const at::Tensor& x2, double p, const at::Tensor& dist) {
  check_dtype(x1, "cdist_backward");
  if (grad_x1.numel() == 0) return;
  c10::DeviceGuard guard(grad_x1.device());
  const int64_t R1 = x1.size(-2), R2 = x2.size(-2), M = x1.size(-1);
  KernelLaunch l = start("cdist_backward", x1, p, grad_x1.numel(), {R1, R2, M});
  add(l, grad);
  add(l, x1);
  add(l, x2);
  add(l, dist);
  add(l, grad_x1);
  l.enqueue1d(grad_x1.device().index(), static_cast<size_t>(grad_x1.numel()), kLws);
}

void pdist_kernel(at::Tensor& result, const at::Tensor& self, double p) {
  check_dtype(self, "pdist");
  if (result.numel() == 0) return;
  c10::DeviceGuard guard(result.device());
  KernelLaunch l = start("pdist_forward", self, p, result.numel(), {self.size(0), self.size(1)});
  add(l, self);
  add(l, result);
  l.enqueue1d(result.device().index(), static_cast<size_t>(result.numel()), kLws);
}

void pdist_backward_kernel(at::Tensor& result, const at::Tensor& grad, const at::Tensor& self,
                           double p, const at::Tensor& dist) {
  check_dtype(self, "pdist_backward");
  if (result.numel() == 0) return;
  TORCH_CHECK(grad.dim() == 1 && grad.numel() == dist.numel(), "_pdist_backward: expected grad of ",
              dist.numel(), " elements, but got ", grad.sizes());
  TORCH_CHECK(grad.scalar_type() == self.scalar_type() && dist.scalar_type() == self.scalar_type(),
              "_pdist_backward: expected grad and pdist of dtype ", self.scalar_type());
  c10::DeviceGuard guard(result.device());
  KernelLaunch l = start("pdist_backward", self, p, result.numel(), {self.size(0), self.size(1)});
  add(l, grad);
  l.arg(static_cast<cl_long>(grad.numel() > 0 ? grad.stride(0) : 1));
  add(l, self);
  add(l, dist);
  add(l, result);
  l.enqueue1d(result.device().index(), static_cast<size_t>(result.numel()), kLws);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_cdist_forward", TORCH_FN(at::native::_cdist_forward));
  m.impl("_cdist_backward", TORCH_FN(at::native::_cdist_backward));
  m.impl("_pdist_forward", TORCH_FN(at::native::_pdist_forward));
  m.impl("_pdist_backward", TORCH_FN(at::native::_pdist_backward));
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(cdist_stub, &torch_ocl::cdist_kernel);
REGISTER_PRIVATEUSE1_DISPATCH(cdist_backward_stub, &torch_ocl::cdist_backward_kernel);
REGISTER_PRIVATEUSE1_DISPATCH(pdist_forward_stub, &torch_ocl::pdist_kernel);
REGISTER_PRIVATEUSE1_DISPATCH(pdist_backward_stub, &torch_ocl::pdist_backward_kernel);
}  // namespace at::native
