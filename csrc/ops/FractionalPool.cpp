// fractional_max_pool2d / fractional_max_pool3d forward and backward on the device with
// kernels/fractional_pool.cl. fractional_max_pool2d, its backward and fractional_max_pool3d are
// structured in ATen: registered through Structured.h with ATen's meta classes (shape and
// sample checks, results, out=). fractional_max_pool3d_backward is not: the CPU's checks here.
// The backward adds gradients plane by plane in output order (deterministic, no atomics).
#include <ATen/native/FractionalMaxPooling.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/fractional_max_pool2d_backward_meta.h>
#include <ATen/ops/fractional_max_pool2d_meta.h>
#include <ATen/ops/fractional_max_pool3d_meta.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// [N, C, T, H, W] strides of a tensor with `dims` pooled dims, batched or not.
std::array<int64_t, 5> strides5(const at::Tensor& t, int dims) {
  const bool batched = t.dim() == dims + 2;
  std::array<int64_t, 5> s{0, 0, 0, 0, 0};
  s[0] = batched ? t.stride(0) : 0;
  s[1] = t.stride(batched ? 1 : 0);
  for (int i = 0; i < dims; ++i) s[4 - i] = t.stride(t.dim() - 1 - i);
  return s;
}

std::string options_for(at::ScalarType t, int device) {
  return std::string("-DT_=") + type_tag(t, device) +
         " -DACC_T=" + (t == at::kDouble ? "double" : "float");
}

void check_dtype(at::ScalarType t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"", op, "\" not implemented for '", t, "'");
}

void forward(const at::Tensor& out, const at::Tensor& indices, const at::Tensor& self,
             at::IntArrayRef kernel_size, at::IntArrayRef output_size, const at::Tensor& samples,
             int dims) {
  // The checks of the samples that the CPU's impl makes (the meta makes the others).
  if (dims == 2) {
    at::native::fractional_max_pool_check_shape<2>(self, samples);
  } else {
    at::native::fractional_max_pool_check_shape<3>(self, samples);
  }
  check_dtype(self.scalar_type(),
              dims == 2 ? "fractional_max_pool2d_out_frame" : "fractional_max_pool3d_out_frame");
  if (out.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  const int device = self.device().index();
  const bool batched = self.dim() == dims + 2;
  const int64_t C = self.size(batched ? 1 : 0);
  const int64_t T = dims == 3 ? self.size(-3) : 1;
  const int64_t OT = dims == 3 ? output_size[0] : 1, PT = dims == 3 ? kernel_size[0] : 1;
  KernelLaunch l(get_kernel(device, "fractional_pool.cl", "fractional_max_forward",
                            options_for(self.scalar_type(), device)));
  l.arg(static_cast<cl_ulong>(out.numel()));
  for (int64_t v : {C, T, self.size(-2), self.size(-1), OT, output_size[dims - 2],
                    output_size[dims - 1], PT, kernel_size[dims - 2], kernel_size[dims - 1]}) {
    l.arg(static_cast<cl_long>(v));
  }
  l.arg(static_cast<cl_int>(dims));
  l.buffer(buffer_of(self), self.itemsize());
  for (int64_t s : strides5(self, dims)) l.arg(static_cast<cl_long>(s));
  l.buffer(buffer_of(samples), samples.itemsize());
  for (int i = 0; i < 3; ++i) l.arg(static_cast<cl_long>(samples.stride(i)));
  l.buffer(buffer_of(out), out.itemsize());
  l.buffer(buffer_of(indices), indices.itemsize());
  l.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
}

// grad_input (contiguous, input's shape) from grad_output and indices.
void backward(const at::Tensor& grad_input, const at::Tensor& grad_output,
              const at::Tensor& indices, int dims) {
  check_dtype(grad_output.scalar_type(), dims == 2 ? "fractional_max_pool2d_backward_out_frame"
                                                   : "fractional_max_pool3d_backward_out_frame");
  if (grad_input.numel() == 0) return;
  c10::DeviceGuard guard(grad_input.device());
  const int device = grad_input.device().index();
  const bool batched = grad_input.dim() == dims + 2;
  const int64_t N = batched ? grad_input.size(0) : 1, C = grad_input.size(batched ? 1 : 0);
  const int64_t plane = grad_input.numel() / (N * C);
  const int64_t OT = dims == 3 ? grad_output.size(-3) : 1;
  KernelLaunch l(get_kernel(device, "fractional_pool.cl", "fractional_max_backward",
                            options_for(grad_input.scalar_type(), device)));
  l.arg(static_cast<cl_ulong>(N * C));
  for (int64_t v : {C, plane, OT, grad_output.size(-2), grad_output.size(-1)}) {
    l.arg(static_cast<cl_long>(v));
  }
  for (const at::Tensor* t : {&grad_output, &indices}) {
    l.buffer(buffer_of(*t), t->itemsize());
    for (int64_t s : strides5(*t, dims)) l.arg(static_cast<cl_long>(s));
  }
  l.buffer(buffer_of(grad_input), grad_input.itemsize());
  l.enqueue1d(device, static_cast<size_t>(N * C), kLws);
}

void fmp2d(const Outputs<2>& out, const at::Tensor& self, at::IntArrayRef kernel_size,
           at::IntArrayRef output_size, const at::Tensor& samples) {
  forward(out[0], out[1], self, kernel_size, output_size, samples, 2);
}

void fmp3d(const Outputs<2>& out, const at::Tensor& self, at::IntArrayRef kernel_size,
           at::IntArrayRef output_size, const at::Tensor& samples) {
  forward(out[0], out[1], self, kernel_size, output_size, samples, 3);
}

void fmp2d_backward(const Outputs<1>& gi, const at::Tensor& grad_output, const at::Tensor& self,
                    at::IntArrayRef kernel_size, at::IntArrayRef output_size,
                    const at::Tensor& indices) {
  backward(gi[0], grad_output, indices, 2);
}

// fractional_max_pool3d_backward: the CPU's checks
// (fractional_max_pool3d_backward_out_cpu_template).
at::Tensor fmp3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                          at::IntArrayRef pool_size, at::IntArrayRef output_size,
                          const at::Tensor& indices) {
  TORCH_CHECK(pool_size.size() == 3 && output_size.size() == 3,
              "fractional_max_pool3d_backward: expected 3 pool and output sizes");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5,
              "fractional_max_pool3d_backward(): expected a 4d or 5d input");
  std::vector<int64_t> expected = self.sizes().vec();
  for (int i = 0; i < 3; ++i) expected[expected.size() - 3 + i] = output_size[i];
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(expected),
              "fractional_max_pool3d_backward_out(): gradOutput sizes unexpected: expected ",
              at::IntArrayRef(expected), ", got ", grad_output.sizes());
  TORCH_CHECK(indices.sizes() == grad_output.sizes() && indices.scalar_type() == at::kLong,
              "fractional_max_pool3d_backward_out(): expected int64 indices of sizes ",
              grad_output.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), "expected scalar type ",
              self.scalar_type(), " but found ", grad_output.scalar_type());
  at::Tensor grad_input = at::empty(self.sizes(), self.options());
  backward(grad_input, grad_output, indices, 3);
  return grad_input;
}

using Fmp2d = Structured<at::meta::structured_fractional_max_pool2d, fmp2d>;
using Fmp3d = Structured<at::meta::structured_fractional_max_pool3d, fmp3d>;
using Fmp2dBackward =
    Structured<at::meta::structured_fractional_max_pool2d_backward, fmp2d_backward>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fractional_max_pool2d", Fmp2d::functional);
  m.impl("fractional_max_pool2d.output", Fmp2d::out2);
  m.impl("fractional_max_pool3d", Fmp3d::functional);
  m.impl("fractional_max_pool3d.output", Fmp3d::out2);
  m.impl("fractional_max_pool2d_backward", Fmp2dBackward::functional);
  m.impl("fractional_max_pool2d_backward.grad_input", Fmp2dBackward::out);
  m.impl("fractional_max_pool3d_backward", fmp3d_backward);
}

}  // namespace torch_ocl
