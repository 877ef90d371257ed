// im2col / col2im (F.unfold / F.fold; each is the other's backward in ATen's derivatives) on the
// device with kernels/fold.cl. ATen's CPU implementations (Im2Col.cpp, Col2Im.cpp) call CPU
// loops directly, without a DispatchStub: registered here with ATen's own shape checks
// (im2col_shape_check.h), the CPU's dtype support and its contiguous results. col2im is a
// gather (deterministic sums). The .out overloads stay with the CPU fallback.
#include <ATen/native/im2col_shape_check.h>
#include <ATen/ops/complex.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/imag.h>
#include <ATen/ops/real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

void check_pairs(at::IntArrayRef kernel_size, at::IntArrayRef dilation, at::IntArrayRef padding,
                 at::IntArrayRef stride) {
  TORCH_CHECK(kernel_size.size() == 2, "It is expected kernel_size equals to 2, but got size ",
              kernel_size.size());
  TORCH_CHECK(dilation.size() == 2, "It is expected dilation equals to 2, but got size ",
              dilation.size());
  TORCH_CHECK(padding.size() == 2, "It is expected padding equals to 2, but got size ",
              padding.size());
  TORCH_CHECK(stride.size() == 2, "It is expected stride equals to 2, but got size ",
              stride.size());
}

// The CPU's dtypes: floating, bool (complex goes through the parts, above).
void check_dtype(at::ScalarType t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t) || t == at::kBool, "\"", op,
                              "\" not implemented for '", t, "'");
}

KernelLaunch start(const char* kernel, at::ScalarType t, int device, int64_t total, int64_t C,
                   int64_t H, int64_t W, at::IntArrayRef k, at::IntArrayRef d, at::IntArrayRef p,
                   at::IntArrayRef s, int64_t OH, int64_t OW) {
  const std::string options = std::string("-DT_=") + type_tag(t, device) +
                              " -DACC_T=" + (t == at::kDouble ? "double" : "float");
  KernelLaunch l(get_kernel(device, "fold.cl", kernel, options));
  l.arg(static_cast<cl_ulong>(total));
  for (int64_t v : {C, H, W, k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], OH, OW}) {
    l.arg(static_cast<cl_long>(v));
  }
  return l;
}

at::Tensor im2col(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                  at::IntArrayRef padding, at::IntArrayRef stride) {
  check_pairs(kernel_size, dilation, padding, stride);
  at::native::im2col_shape_check(self, at::Tensor(), kernel_size[0], kernel_size[1], dilation[0],
                                 dilation[1], padding[0], padding[1], stride[0], stride[1]);
  if (self.is_complex()) {  // data movement: the parts separately
    const at::Tensor x = self.resolve_conj();
    return at::complex(torch_ocl::im2col(at::real(x), kernel_size, dilation, padding, stride),
                       torch_ocl::im2col(at::imag(x), kernel_size, dilation, padding, stride));
  }
  check_dtype(self.scalar_type(), "im2col_out_cpu");
  const bool batched = self.dim() == 4;
  const at::Tensor input = batched ? self : self.unsqueeze(0);
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t OH =
      (H + 2 * padding[0] - (dilation[0] * (kernel_size[0] - 1) + 1)) / stride[0] + 1;
  const int64_t OW =
      (W + 2 * padding[1] - (dilation[1] * (kernel_size[1] - 1) + 1)) / stride[1] + 1;
  const int64_t rows = C * kernel_size[0] * kernel_size[1];
  at::Tensor out = at::empty({N, rows, OH * OW}, self.options());
  if (out.numel() > 0) {
    c10::DeviceGuard guard(self.device());
    const int device = self.device().index();
    KernelLaunch l = start("im2col", self.scalar_type(), device, out.numel(), C, H, W, kernel_size,
                           dilation, padding, stride, OH, OW);
    l.buffer(buffer_of(input), input.itemsize());
    for (int i = 0; i < 4; ++i) l.arg(static_cast<cl_long>(input.stride(i)));
    l.buffer(buffer_of(out), out.itemsize());
    l.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
  }
  return batched ? out : out.squeeze(0);
}

at::Tensor col2im(const at::Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel_size,
                  at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  TORCH_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size ",
              output_size.size());
  check_pairs(kernel_size, dilation, padding, stride);
  at::native::col2im_shape_check(self, at::Tensor(), output_size[0], output_size[1], kernel_size[0],
                                 kernel_size[1], dilation[0], dilation[1], padding[0], padding[1],
                                 stride[0], stride[1]);
  if (self.is_complex()) {  // a sum of placed elements: the parts separately
    const at::Tensor x = self.resolve_conj();
    return at::complex(
        torch_ocl::col2im(at::real(x), output_size, kernel_size, dilation, padding, stride),
        torch_ocl::col2im(at::imag(x), output_size, kernel_size, dilation, padding, stride));
  }
  check_dtype(self.scalar_type(), "col2im_out_cpu");
  const bool batched = self.dim() == 3;
  const at::Tensor cols = batched ? self : self.unsqueeze(0);
  const int64_t N = cols.size(0), C = cols.size(1) / (kernel_size[0] * kernel_size[1]);
  const int64_t H = output_size[0], W = output_size[1];
  const int64_t OH =
      (H + 2 * padding[0] - (dilation[0] * (kernel_size[0] - 1) + 1)) / stride[0] + 1;
  const int64_t OW =
      (W + 2 * padding[1] - (dilation[1] * (kernel_size[1] - 1) + 1)) / stride[1] + 1;
  at::Tensor out = at::empty({N, C, H, W}, self.options());
  if (out.numel() > 0) {
    c10::DeviceGuard guard(self.device());
    const int device = self.device().index();
    KernelLaunch l = start("col2im", self.scalar_type(), device, out.numel(), C, H, W, kernel_size,
                           dilation, padding, stride, OH, OW);
    l.buffer(buffer_of(cols), cols.itemsize());
    for (int i = 0; i < 3; ++i) l.arg(static_cast<cl_long>(cols.stride(i)));
    l.buffer(buffer_of(out), out.itemsize());
    l.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
  }
  return batched ? out : out.squeeze(0);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("im2col", im2col);
  m.impl("col2im", col2im);
}

}  // namespace torch_ocl
