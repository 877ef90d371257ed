// softmax / log_softmax forward and backward over any dim (kernels/softmax.cl works on rows of
// contiguous elements; another dim is moved last first). Registered through Structured.h (ATen's
// meta functions, out= checks, outputs overlapping an input). Also _safe_softmax (softmax with 0
// for rows that are all -inf: scaled_dot_product_attention's math path), which has no meta
// function; its autograd formula is _softmax_backward_data.
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/_log_softmax_backward_data_meta.h>
#include <ATen/ops/_log_softmax_meta.h>
#include <ATen/ops/_softmax_backward_data_meta.h>
#include <ATen/ops/_softmax_meta.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

// One work-group per row, 128 work-items or the device's limit.
size_t row_lws(int device) { return device_profile(device).fit_lws(128); }

// Moves `dim` last and makes the result contiguous.
at::Tensor rows(const at::Tensor& t, int64_t dim) {
  if (t.dim() == 0) return t.reshape({1});
  return (dim == t.dim() - 1 ? t : t.movedim(dim, -1)).contiguous();
}

// Inverse of rows() for a result computed in the moved layout.
at::Tensor unrows(const at::Tensor& r, const at::Tensor& like, int64_t dim) {
  if (like.dim() == 0) return r.reshape({});
  return dim == like.dim() - 1 ? r : r.movedim(-1, dim);
}

at::ScalarType acc_of(at::ScalarType t) { return t == at::kDouble ? at::kDouble : at::kFloat; }

void forward(const at::Tensor& x, int64_t dim, bool log, const at::Tensor& out, bool safe = false) {
  if (x.numel() == 0) return;
  const int device = x.device().index();
  const size_t kLws = row_lws(device);
  const at::Tensor in = rows(x, dim);
  const bool direct = out.is_contiguous() && (x.dim() == 0 || dim == x.dim() - 1);
  at::Tensor dst = direct ? out : at::empty(in.sizes(), out.options());
  const uint64_t K = in.dim() == 0 ? 1 : in.size(-1), M = in.numel() / K;
  std::string opts = std::string("-DIN_T=") + type_tag(in.scalar_type(), device) +
                     " -DOUT_T=" + type_tag(out.scalar_type(), device) +
                     " -DACC_T=" + type_tag(acc_of(in.scalar_type()), device) +
                     " -DLWS=" + std::to_string(kLws) + (log ? " -DLOG" : "") +
                     (safe ? " -DSAFE" : "");
  KernelLaunch launch(get_kernel(device, "softmax.cl", "softmax_forward", opts));
  launch.arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(K));
  launch.buffer(buffer_of(in), in.itemsize()).buffer(buffer_of(dst), dst.itemsize());
  launch.enqueue1d(device, M * kLws, kLws);
  if (!direct) out.copy_(unrows(dst.view(in.sizes()), x, dim));
}

void backward(const at::Tensor& grad, const at::Tensor& y, int64_t dim, bool log,
              const at::Tensor& gin) {
  if (grad.numel() == 0) return;
  const int device = grad.device().index();
  const size_t kLws = row_lws(device);
  const at::Tensor g = rows(grad, dim), yr = rows(y.to(grad.scalar_type()), dim);
  const bool direct = gin.is_contiguous() && (grad.dim() == 0 || dim == grad.dim() - 1);
  at::Tensor dst = direct ? gin : at::empty(g.sizes(), gin.options());
  const uint64_t K = g.dim() == 0 ? 1 : g.size(-1), M = g.numel() / K;
  std::string opts = std::string("-DIN_T=") + type_tag(g.scalar_type(), device) +
                     " -DOUT_T=" + type_tag(gin.scalar_type(), device) +
                     " -DACC_T=" + type_tag(acc_of(g.scalar_type()), device) +
                     " -DLWS=" + std::to_string(kLws) + (log ? " -DLOG" : "");
  KernelLaunch launch(get_kernel(device, "softmax.cl", "softmax_backward", opts));
  launch.arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(K));
  launch.buffer(buffer_of(g), g.itemsize()).buffer(buffer_of(yr), yr.itemsize());
  launch.buffer(buffer_of(dst), dst.itemsize());
  launch.enqueue1d(device, M * kLws, kLws);
  if (!direct) gin.copy_(unrows(dst.view(g.sizes()), grad, dim));
}

void check_input(const at::Tensor& x, bool half_to_float) {
  if (half_to_float) {
    TORCH_CHECK(x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16,
                "conversion is supported for Half and BFloat16 types only");
  }
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(x.scalar_type()),
                              "softmax is implemented for floating types only, got ",
                              x.scalar_type());
}

// The output was declared by ATen's meta function (dtype, shape) and is contiguous (Structured.h).
template <bool kLog>
void softmax_kernel(const Outputs<1>& out, const at::Tensor& x, int64_t dim, bool half_to_float) {
  check_input(x, half_to_float);
  forward(x, at::maybe_wrap_dim(dim, x.dim()), kLog, out[0]);
}
template <bool kLog>
void softmax_backward_kernel(const Outputs<1>& gin, const at::Tensor& grad, const at::Tensor& y,
                             int64_t dim, at::ScalarType input_dtype) {
  backward(grad, y, at::maybe_wrap_dim(dim, grad.dim()), kLog, gin[0]);
}

// _safe_softmax(self, dim, dtype): like at::softmax (self converted to dtype first), with rows
// whose elements are all -inf giving 0 instead of NaN. The result is contiguous, as the CPU's.
at::Tensor safe_softmax(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  const at::Tensor x = dtype ? self.to(*dtype) : self;
  check_input(x, false);
  at::Tensor out = at::empty(x.sizes(), x.options());
  forward(x, at::maybe_wrap_dim(dim, x.dim()), /*log=*/false, out, /*safe=*/true);
  return out;
}

using Softmax = Structured<at::meta::structured__softmax, softmax_kernel<false>>;
using LogSoftmax = Structured<at::meta::structured__log_softmax, softmax_kernel<true>>;
using SoftmaxBackward =
    Structured<at::meta::structured__softmax_backward_data, softmax_backward_kernel<false>>;
using LogSoftmaxBackward =
    Structured<at::meta::structured__log_softmax_backward_data, softmax_backward_kernel<true>>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_softmax", Softmax::functional);
  m.impl("_softmax.out", Softmax::out);
  m.impl("_log_softmax", LogSoftmax::functional);
  m.impl("_log_softmax.out", LogSoftmax::out);
  m.impl("_softmax_backward_data", SoftmaxBackward::functional);
  m.impl("_softmax_backward_data.out", SoftmaxBackward::out);
  m.impl("_log_softmax_backward_data", LogSoftmaxBackward::functional);
  m.impl("_log_softmax_backward_data.out", LogSoftmaxBackward::out);
  m.impl("_safe_softmax", safe_softmax);
}

}  // namespace torch_ocl
