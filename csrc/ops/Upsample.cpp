// Upsampling on the device with kernels/upsample.cl: upsample_nearest1d/2d/3d,
// _upsample_nearest_exact1d/2d/3d, upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d,
// upsample_trilinear3d and their backwards. All are structured in ATen: registered through
// Structured.h with ATen's meta classes (shape checks, result layouts, out= handling; the .vec
// overloads and F.interpolate's scale_factor handling are ATen's composites above these).
// Scales are computed as ATen's UpSample.h computes them, in the CPU's precision; the backwards
// are gathers (deterministic sums, no atomics). Inputs of any layout are read in place.
#include <ATen/ops/_upsample_nearest_exact1d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact1d_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_meta.h>
#include <ATen/ops/upsample_bicubic2d_backward_meta.h>
#include <ATen/ops/upsample_bicubic2d_meta.h>
#include <ATen/ops/upsample_bilinear2d_backward_meta.h>
#include <ATen/ops/upsample_bilinear2d_meta.h>
#include <ATen/ops/upsample_linear1d_backward_meta.h>
#include <ATen/ops/upsample_linear1d_meta.h>
#include <ATen/ops/upsample_nearest1d_backward_meta.h>
#include <ATen/ops/upsample_nearest1d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
#include <ATen/ops/upsample_nearest3d_backward_meta.h>
#include <ATen/ops/upsample_nearest3d_meta.h>
#include <ATen/ops/upsample_trilinear3d_backward_meta.h>
#include <ATen/ops/upsample_trilinear3d_meta.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <string>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

enum class Interp { kNearest, kNearestExact, kLinear, kCubic };

using Scales = std::array<std::optional<double>, 3>;  // per interpolated dim, outermost first

// UpSample.h's compute_scales_value and area_pixel_compute_scale (that header pulls in ATen's CPU
// vector code, which this file does not need): the input/output ratio of a dim, or the caller's
// 1 / scale where one was given.
// `given` is the caller's scale, <= 0 where none was given (ATen treats non-positive values as
// unset too).
template <typename T>
T scales_value(double given, int64_t in, int64_t out) {
  return given > 0. ? static_cast<T>(1.0 / given) : static_cast<T>(in) / out;
}

template <typename T>
T area_pixel_scale(int64_t in, int64_t out, bool align_corners, double given) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / (out - 1) : static_cast<T>(0);
  return scales_value<T>(given, in, out);
}

const char* mode_option(Interp mode) {
  switch (mode) {
    case Interp::kNearest:
      return " -DMODE_NEAREST";
    case Interp::kNearestExact:
      return " -DMODE_NEAREST_EXACT";
    case Interp::kLinear:
      return " -DMODE_LINEAR";
    case Interp::kCubic:
      return " -DMODE_CUBIC";
  }
  return "";
}

// The CPU's dtype support (its error names the kernel it dispatches to).
void check_dtype(at::ScalarType t, Interp mode, int spatial, bool backward, const char* op) {
  const bool floating = at::isFloatingType(t);
  if (backward) {
    TORCH_CHECK_NOT_IMPLEMENTED(floating, "\"", op, "_backward\" not implemented for '", t, "'");
    return;
  }
  const bool nearest = mode == Interp::kNearest || mode == Interp::kNearestExact;
  const bool byte_ok = nearest || spatial == 2;  // the CPU's uint8 bilinear/bicubic too
  const char* kernel = mode == Interp::kLinear  ? "compute_indices_weights_linear"
                       : mode == Interp::kCubic ? "compute_indices_weights_cubic"
                                                : "compute_indices_weights_nearest";
  TORCH_CHECK_NOT_IMPLEMENTED(floating || (byte_ok && t == at::kByte), "\"", kernel,
                              "\" not implemented for '", t, "'");
  // The CPU interpolates uint8 images with Pillow's separable integer kernels (normalised
  // weights over the taps inside the image, fixed-point passes): not this kernel's arithmetic.
  TORCH_CHECK_NOT_IMPLEMENTED(floating || nearest, "torch-ocl: ", op,
                              " on uint8 (the CPU's Pillow-style integer interpolation) is not "
                              "supported on the ocl device yet");
}

// [N, C, D, H, W] extents and strides of a tensor with `spatial` interpolated dims.
std::array<int64_t, 5> sizes5(const at::Tensor& t, int spatial) {
  std::array<int64_t, 5> s{1, 1, 1, 1, 1};
  s[0] = t.size(0);
  s[1] = t.size(1);
  for (int i = 0; i < spatial; ++i) s[4 - i] = t.size(t.dim() - 1 - i);
  return s;
}

std::array<int64_t, 5> strides5(const at::Tensor& t, int spatial) {
  std::array<int64_t, 5> s{0, 0, 0, 0, 0};
  s[0] = t.stride(0);
  s[1] = t.stride(1);
  for (int i = 0; i < spatial; ++i) s[4 - i] = t.stride(t.dim() - 1 - i);
  return s;
}

// Computes `result` from `source`: forward (result = output, source = input) or backward (result
// = grad_input, source = grad_output).
void launch(const at::Tensor& result, const at::Tensor& source, Interp mode, int spatial,
            bool align, const Scales& scales, bool backward, const char* op) {
  check_dtype(source.scalar_type(), mode, spatial, backward, op);
  if (result.numel() == 0) return;
  const at::Tensor& in = backward ? result : source;  // the input side of the interpolation
  const at::Tensor& out = backward ? source : result;
  const auto isz = sizes5(in, spatial), osz = sizes5(out, spatial);
  const at::ScalarType t = result.scalar_type();
  const bool dbl = t == at::kDouble;
  c10::DeviceGuard guard(result.device());
  const int device = result.device().index();
  std::string options = std::string("-DT_=") + type_tag(t, device) +
                        " -DACC_T=" + (dbl ? "double" : "float") + mode_option(mode);
  KernelLaunch l(get_kernel(device, "upsample.cl",
                            backward ? "upsample_backward" : "upsample_forward", options));
  l.arg(static_cast<cl_ulong>(result.numel())).arg(static_cast<cl_int>(spatial));
  for (int i = 1; i < 5; ++i) l.arg(static_cast<cl_long>(isz[i]));
  for (int i = 2; i < 5; ++i) l.arg(static_cast<cl_long>(osz[i]));
  for (int i = 0; i < 3; ++i) {
    // Scale of dim D, H, W (i = 0, 1, 2); absent dims get 1.
    const int k = i - (3 - spatial);  // index into the op's scales, outermost first
    const int64_t I = isz[2 + i], O = osz[2 + i];
    const double s = k >= 0 ? scales[k].value_or(0.) : 0.;
    if (mode == Interp::kNearest || mode == Interp::kNearestExact) {
      l.arg(static_cast<cl_float>(scales_value<float>(s, I, O)));
    } else if (dbl) {
      l.arg(static_cast<cl_double>(area_pixel_scale<double>(I, O, align, s)));
    } else {
      l.arg(static_cast<cl_float>(area_pixel_scale<float>(I, O, align, s)));
    }
  }
  l.arg(static_cast<cl_int>(align));
  for (const at::Tensor* x : {&source, &result}) {
    l.buffer(buffer_of(*x), x->itemsize());
    for (int64_t v : strides5(*x, spatial)) l.arg(static_cast<cl_long>(v));
  }
  l.enqueue1d(device, static_cast<size_t>(result.numel()), kLws);
}

// The op names of the CPU's dtype errors.
template <Interp kMode, int kSpatial>
constexpr const char* op_name() {
  if constexpr (kMode == Interp::kNearest) {
    return kSpatial == 1   ? "upsample_nearest1d"
           : kSpatial == 2 ? "upsample_nearest2d"
                           : "upsample_nearest3d";
  } else if constexpr (kMode == Interp::kNearestExact) {
    return kSpatial == 1   ? "_upsample_nearest_exact1d"
           : kSpatial == 2 ? "_upsample_nearest_exact2d"
                           : "_upsample_nearest_exact3d";
  } else if constexpr (kMode == Interp::kLinear) {
    return kSpatial == 1   ? "upsample_linear1d"
           : kSpatial == 2 ? "upsample_bilinear2d"
                           : "upsample_trilinear3d";
  } else {
    return "upsample_bicubic2d";
  }
}

// Kernels in the shapes Structured.h wants (the ops' own argument lists).
template <Interp kMode, int kSpatial, class... S>
void nearest_forward(const Outputs<1>& out, const at::Tensor& self, at::IntArrayRef output_size,
                     S... scales) {
  launch(out[0], self, kMode, kSpatial, false, Scales{scales...}, false,
         op_name<kMode, kSpatial>());
}

template <Interp kMode, int kSpatial, class... S>
void nearest_backward(const Outputs<1>& gi, const at::Tensor& go, at::IntArrayRef output_size,
                      at::IntArrayRef input_size, S... scales) {
  launch(gi[0], go, kMode, kSpatial, false, Scales{scales...}, true, op_name<kMode, kSpatial>());
}

template <Interp kMode, int kSpatial, class... S>
void interp_forward(const Outputs<1>& out, const at::Tensor& self, at::IntArrayRef output_size,
                    bool align_corners, S... scales) {
  launch(out[0], self, kMode, kSpatial, align_corners, Scales{scales...}, false,
         op_name<kMode, kSpatial>());
}

template <Interp kMode, int kSpatial, class... S>
void interp_backward(const Outputs<1>& gi, const at::Tensor& go, at::IntArrayRef output_size,
                     at::IntArrayRef input_size, bool align_corners, S... scales) {
  launch(gi[0], go, kMode, kSpatial, align_corners, Scales{scales...}, true,
         op_name<kMode, kSpatial>());
}

using Opt = std::optional<double>;

// clang-format off
using Nearest1d = Structured<at::meta::structured_upsample_nearest1d, nearest_forward<Interp::kNearest, 1, Opt>>;
using Nearest2d = Structured<at::meta::structured_upsample_nearest2d, nearest_forward<Interp::kNearest, 2, Opt, Opt>>;
using Nearest3d = Structured<at::meta::structured_upsample_nearest3d, nearest_forward<Interp::kNearest, 3, Opt, Opt, Opt>>;
using Exact1d = Structured<at::meta::structured__upsample_nearest_exact1d, nearest_forward<Interp::kNearestExact, 1, Opt>>;
using Exact2d = Structured<at::meta::structured__upsample_nearest_exact2d, nearest_forward<Interp::kNearestExact, 2, Opt, Opt>>;
using Exact3d = Structured<at::meta::structured__upsample_nearest_exact3d, nearest_forward<Interp::kNearestExact, 3, Opt, Opt, Opt>>;
using Nearest1dBackward = Structured<at::meta::structured_upsample_nearest1d_backward, nearest_backward<Interp::kNearest, 1, Opt>>;
using Nearest2dBackward = Structured<at::meta::structured_upsample_nearest2d_backward, nearest_backward<Interp::kNearest, 2, Opt, Opt>>;
using Nearest3dBackward = Structured<at::meta::structured_upsample_nearest3d_backward, nearest_backward<Interp::kNearest, 3, Opt, Opt, Opt>>;
using Exact1dBackward = Structured<at::meta::structured__upsample_nearest_exact1d_backward, nearest_backward<Interp::kNearestExact, 1, Opt>>;
using Exact2dBackward = Structured<at::meta::structured__upsample_nearest_exact2d_backward, nearest_backward<Interp::kNearestExact, 2, Opt, Opt>>;
using Exact3dBackward = Structured<at::meta::structured__upsample_nearest_exact3d_backward, nearest_backward<Interp::kNearestExact, 3, Opt, Opt, Opt>>;
using Linear1d = Structured<at::meta::structured_upsample_linear1d, interp_forward<Interp::kLinear, 1, Opt>>;
using Bilinear2d = Structured<at::meta::structured_upsample_bilinear2d, interp_forward<Interp::kLinear, 2, Opt, Opt>>;
using Trilinear3d = Structured<at::meta::structured_upsample_trilinear3d, interp_forward<Interp::kLinear, 3, Opt, Opt, Opt>>;
using Bicubic2d = Structured<at::meta::structured_upsample_bicubic2d, interp_forward<Interp::kCubic, 2, Opt, Opt>>;
using Linear1dBackward = Structured<at::meta::structured_upsample_linear1d_backward, interp_backward<Interp::kLinear, 1, Opt>>;
using Bilinear2dBackward = Structured<at::meta::structured_upsample_bilinear2d_backward, interp_backward<Interp::kLinear, 2, Opt, Opt>>;
using Trilinear3dBackward = Structured<at::meta::structured_upsample_trilinear3d_backward, interp_backward<Interp::kLinear, 3, Opt, Opt, Opt>>;
using Bicubic2dBackward = Structured<at::meta::structured_upsample_bicubic2d_backward, interp_backward<Interp::kCubic, 2, Opt, Opt>>;
// clang-format on

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define TORCH_OCL_UPSAMPLE(name, Op, Backward)    \
  m.impl(name, Op::functional);                   \
  m.impl(name ".out", Op::out);                   \
  m.impl(name "_backward", Backward::functional); \
  m.impl(name "_backward.grad_input", Backward::out);
  TORCH_OCL_UPSAMPLE("upsample_nearest1d", Nearest1d, Nearest1dBackward)
  TORCH_OCL_UPSAMPLE("upsample_nearest2d", Nearest2d, Nearest2dBackward)
  TORCH_OCL_UPSAMPLE("upsample_nearest3d", Nearest3d, Nearest3dBackward)
  TORCH_OCL_UPSAMPLE("_upsample_nearest_exact1d", Exact1d, Exact1dBackward)
  TORCH_OCL_UPSAMPLE("_upsample_nearest_exact2d", Exact2d, Exact2dBackward)
  TORCH_OCL_UPSAMPLE("_upsample_nearest_exact3d", Exact3d, Exact3dBackward)
  TORCH_OCL_UPSAMPLE("upsample_linear1d", Linear1d, Linear1dBackward)
  TORCH_OCL_UPSAMPLE("upsample_bilinear2d", Bilinear2d, Bilinear2dBackward)
  TORCH_OCL_UPSAMPLE("upsample_trilinear3d", Trilinear3d, Trilinear3dBackward)
  TORCH_OCL_UPSAMPLE("upsample_bicubic2d", Bicubic2d, Bicubic2dBackward)
#undef TORCH_OCL_UPSAMPLE
}

}  // namespace torch_ocl
