// Antialiased resizing with kernels/upsample_aa.cl: _upsample_bilinear2d_aa and
// _upsample_bicubic2d_aa, forward and backward (F.interpolate(..., antialias=True), torchvision's
// resize on tensors). Structured in ATen: registered through Structured.h with ATen's meta
// classes (shape checks, out=). Each call computes the two axes' filter tables on the device
// (one small kernel per axis), then one kernel resizes (a direct 2-d sum over the separable
// weights) or gathers the gradient (no atomics: deterministic). float32 and float64 as on the
// CPU; its uint8 path (Pillow's fixed-point passes) is not implemented here.
#include <ATen/ops/_upsample_bicubic2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_bicubic2d_aa_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_meta.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <string>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// One axis's filter table on the device.
struct AxisTable {
  at::Tensor xmin, xsize, w;
  int64_t taps = 0;
};

// The scale as ATen's area_pixel_compute_scale computes it, in the weights' precision.
template <typename W>
W aa_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> given) {
  if (align_corners) return out > 1 ? static_cast<W>(in - 1) / (out - 1) : static_cast<W>(0);
  if (given.has_value() && *given > 0.) return static_cast<W>(1.0 / *given);
  return static_cast<W>(in) / out;
}

template <typename W>
AxisTable axis_table(int device, const std::string& options, const at::TensorOptions& wopt,
                     int64_t in, int64_t out, bool align_corners, std::optional<double> given,
                     int filter_taps) {
  const W scale = aa_scale<W>(in, out, align_corners, given);
  const W half = static_cast<W>(filter_taps * 0.5);
  const W support = scale >= 1 ? half * scale : half;
  AxisTable t;
  t.taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.xmin = at::empty({out}, wopt.dtype(at::kInt));
  t.xsize = at::empty({out}, wopt.dtype(at::kInt));
  t.w = at::empty({out, t.taps}, wopt);
  KernelLaunch l(get_kernel(device, "upsample_aa.cl", "aa_weights", options));
  l.arg(static_cast<cl_long>(out)).arg(static_cast<cl_long>(in)).arg(scale).arg(support);
  l.arg(static_cast<cl_long>(t.taps));
  l.buffer(buffer_of(t.xmin), 4).buffer(buffer_of(t.xsize), 4);
  l.buffer(buffer_of(t.w), t.w.itemsize());
  l.enqueue1d(device, static_cast<size_t>(out), kLws);
  return t;
}

// result = output (forward) or grad_input (backward); source = input or grad_output.
void launch(const at::Tensor& result, const at::Tensor& source, bool cubic, bool align,
            std::optional<double> scales_h, std::optional<double> scales_w, bool backward,
            const char* op) {
  const at::ScalarType t = source.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble || backward || t == at::kByte,
                              "\"compute_index_ranges_weights\" not implemented for '", t, "'");
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble, "torch-ocl: ", op, " on ", t,
                              " is not supported on the ocl device yet (float32 and float64 ",
                              "are; the CPU resizes uint8 with Pillow's fixed-point passes)");
  if (result.numel() == 0) return;
  const at::Tensor& in = backward ? result : source;
  const at::Tensor& out = backward ? source : result;
  const int64_t C = in.size(1), IH = in.size(2), IW = in.size(3), OH = out.size(2),
                OW = out.size(3);
  c10::DeviceGuard guard(result.device());
  const int device = result.device().index();
  const bool dbl = t == at::kDouble;
  const std::string options = std::string("-DT_=") + type_tag(t, device) +
                              " -DW=" + (dbl ? "double" : "float") +
                              (cubic ? " -DFILTER_CUBIC" : "");
  const at::TensorOptions wopt = result.options().dtype(dbl ? at::kDouble : at::kFloat);
  const int taps = cubic ? 4 : 2;
  const AxisTable ty =
      dbl ? axis_table<double>(device, options, wopt, IH, OH, align, scales_h, taps)
          : axis_table<float>(device, options, wopt, IH, OH, align, scales_h, taps);
  const AxisTable tx =
      dbl ? axis_table<double>(device, options, wopt, IW, OW, align, scales_w, taps)
          : axis_table<float>(device, options, wopt, IW, OW, align, scales_w, taps);
  KernelLaunch l(
      get_kernel(device, "upsample_aa.cl", backward ? "aa_backward" : "aa_forward", options));
  l.arg(static_cast<cl_long>(C)).arg(static_cast<cl_long>(IH)).arg(static_cast<cl_long>(IW));
  l.arg(static_cast<cl_long>(OH)).arg(static_cast<cl_long>(OW));
  for (const at::Tensor* x : {&source, &result}) {
    l.buffer(buffer_of(*x), x->itemsize());
    for (int d = 0; d < 4; ++d) l.arg(static_cast<cl_long>(x->stride(d)));
  }
  for (const AxisTable* a : {&ty, &tx}) {
    l.buffer(buffer_of(a->xmin), 4).buffer(buffer_of(a->xsize), 4);
    l.buffer(buffer_of(a->w), a->w.itemsize()).arg(static_cast<cl_long>(a->taps));
  }
  const int64_t W = backward ? IW : OW, H = backward ? IH : OH;
  l.enqueue_grid(device, static_cast<size_t>(W), static_cast<size_t>(H),
                 static_cast<size_t>(result.size(0) * C), kLws);
}

template <bool kCubic>
void aa_forward(const Outputs<1>& out, const at::Tensor& self, at::IntArrayRef /*output_size*/,
                bool align_corners, std::optional<double> scales_h,
                std::optional<double> scales_w) {
  launch(out[0], self, kCubic, align_corners, scales_h, scales_w, false,
         kCubic ? "_upsample_bicubic2d_aa" : "_upsample_bilinear2d_aa");
}

template <bool kCubic>
void aa_backward(const Outputs<1>& gi, const at::Tensor& go, at::IntArrayRef /*output_size*/,
                 at::IntArrayRef /*input_size*/, bool align_corners, std::optional<double> scales_h,
                 std::optional<double> scales_w) {
  launch(gi[0], go, kCubic, align_corners, scales_h, scales_w, true,
         kCubic ? "_upsample_bicubic2d_aa_backward" : "_upsample_bilinear2d_aa_backward");
}

// clang-format off
using Bilinear = Structured<at::meta::structured__upsample_bilinear2d_aa, aa_forward<false>>;
using Bicubic = Structured<at::meta::structured__upsample_bicubic2d_aa, aa_forward<true>>;
using BilinearBackward = Structured<at::meta::structured__upsample_bilinear2d_aa_backward, aa_backward<false>>;
using BicubicBackward = Structured<at::meta::structured__upsample_bicubic2d_aa_backward, aa_backward<true>>;
// clang-format on

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_upsample_bilinear2d_aa", Bilinear::functional);
  m.impl("_upsample_bilinear2d_aa.out", Bilinear::out);
  m.impl("_upsample_bicubic2d_aa", Bicubic::functional);
  m.impl("_upsample_bicubic2d_aa.out", Bicubic::out);
  m.impl("_upsample_bilinear2d_aa_backward", BilinearBackward::functional);
  m.impl("_upsample_bilinear2d_aa_backward.grad_input", BilinearBackward::out);
  m.impl("_upsample_bicubic2d_aa_backward", BicubicBackward::functional);
  m.impl("_upsample_bicubic2d_aa_backward.grad_input", BicubicBackward::out);
}

}  // namespace torch_ocl
