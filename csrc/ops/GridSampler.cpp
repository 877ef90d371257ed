// grid_sampler_2d / grid_sampler_3d and their backwards (F.grid_sample; F.affine_grid is a
// composite of matmuls) on the device with kernels/grid_sampler.cl.
//
// ATen's CPU entry points (grid_sampler_2d_cpu, ...) are not usable for a device: the 2-d one
// switches to a scalar CPU loop over raw pointers for inputs with large strides, and the 3-d ones
// have no DispatchStub. So these are registered here, with ATen's own argument checks
// (GridSamplerUtils.h), the CPU's result layouts (contiguous output, grad_input and grad_grid) and
// dtype errors. The grid_sampler composite (mode choice, cudnn) and the out= wrappers stay ATen's.
// The backward is deterministic: the grid gradient is a gather per output point, grad_input is
// summed by one work-item per (n, c) plane in output order (no atomics).
#include <ATen/native/GridSamplerUtils.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <tuple>

#include "ops/KernelTypes.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// [N, C, D, H, W] (or grid [N, OD, OH, OW, k]) strides of a 4-d or 5-d tensor: a 4-d tensor gets
// a unit dim at position 2 (input, output) or 1 (grid).
std::array<int64_t, 5> strides5(const at::Tensor& t, bool grid) {
  if (t.dim() == 5) return {t.stride(0), t.stride(1), t.stride(2), t.stride(3), t.stride(4)};
  if (grid) return {t.stride(0), 0, t.stride(1), t.stride(2), t.stride(3)};
  return {t.stride(0), t.stride(1), 0, t.stride(2), t.stride(3)};
}

void add_tensor(KernelLaunch& l, const at::Tensor& t, bool grid) {
  l.buffer(buffer_of(t), t.itemsize());
  for (int64_t s : strides5(t, grid)) l.arg(static_cast<cl_long>(s));
}

void check_modes(int64_t interpolation_mode, int64_t padding_mode) {
  TORCH_CHECK(interpolation_mode >= 0 && interpolation_mode <= 2,
              "grid_sampler(): unknown interpolation mode ", interpolation_mode);
  TORCH_CHECK(padding_mode >= 0 && padding_mode <= 2, "grid_sampler(): unknown padding mode ",
              padding_mode);
}

// The CPU's dtype checks: floating types only (its dispatch's error), one dtype for all tensors.
void check_dtypes(const at::Tensor& input, const at::Tensor& grid, const at::Tensor* grad_output,
                  int dims) {
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"",
                              dims == 2 ? "grid_sampler_2d_cpu_kernel_impl" : "grid_sampler3d_cpu",
                              "\" not implemented for '", t, "'");
  TORCH_CHECK(grid.scalar_type() == t, "expected scalar type ", t, " but found ",
              grid.scalar_type());
  if (grad_output != nullptr) {
    TORCH_CHECK(grad_output->scalar_type() == t, "expected scalar type ", t, " but found ",
                grad_output->scalar_type());
  }
}

// Checks of ATen's grid_sampler_*_cpu.
void check_args(const at::Tensor& input, const at::Tensor& grid, int64_t interpolation_mode,
                int64_t padding_mode, int dims, const at::Tensor* grad_output) {
  at::native::check_grid_sampler_common(input, grid);
  if (dims == 2) {
    at::native::check_grid_sampler_2d(input, grid);
  } else {
    at::native::check_grid_sampler_3d(input, grid, interpolation_mode);
  }
  check_modes(interpolation_mode, padding_mode);
  check_dtypes(input, grid, grad_output, dims);
  if (grad_output != nullptr) {
    std::vector<int64_t> expected{input.size(0), input.size(1)};
    for (int i = 1; i <= dims; ++i) expected.push_back(grid.size(i));
    TORCH_CHECK(grad_output->sizes() == at::IntArrayRef(expected),
                "grid_sampler backward: expected grad_output of sizes ", at::IntArrayRef(expected),
                ", but got ", grad_output->sizes());
    TORCH_CHECK(grad_output->device() == input.device(),
                "grid_sampler backward: expected grad_output on ", input.device(), ", but got ",
                grad_output->device());
  }
}

// The kernel build for a dtype, dims and interpolation mode; geometry arguments set on `l`.
KernelLaunch start(const char* kernel, const at::Tensor& input, const at::Tensor& grid,
                   int64_t interpolation_mode, int64_t padding_mode, bool align, int dims) {
  const int device = input.device().index();
  const at::ScalarType t = input.scalar_type();
  static const char* const kModes[] = {" -DMODE_BILINEAR", " -DMODE_NEAREST", " -DMODE_BICUBIC"};
  const std::string options = std::string("-DT_=") + type_tag(t, device) +
                              " -DACC_T=" + (t == at::kDouble ? "double" : "float") +
                              " -DDIMS=" + std::to_string(dims) + kModes[interpolation_mode];
  KernelLaunch l(get_kernel(device, "grid_sampler.cl", kernel, options));
  const int64_t D = dims == 3 ? input.size(2) : 1;
  const int64_t OD = dims == 3 ? grid.size(1) : 1;
  for (int64_t v : {input.size(0), input.size(1), D, input.size(-2), input.size(-1), OD,
                    grid.size(-3), grid.size(-2)}) {
    l.arg(static_cast<cl_long>(v));
  }
  l.arg(static_cast<cl_int>(padding_mode)).arg(static_cast<cl_int>(align));
  return l;
}

at::Tensor forward(const at::Tensor& input, const at::Tensor& grid, int64_t interpolation_mode,
                   int64_t padding_mode, bool align_corners, int dims) {
  check_args(input, grid, interpolation_mode, padding_mode, dims, nullptr);
  std::vector<int64_t> sizes{input.size(0), input.size(1)};
  for (int i = 1; i <= dims; ++i) sizes.push_back(grid.size(i));
  at::Tensor output = at::empty(sizes, input.options());
  if (output.numel() == 0) return output;
  c10::DeviceGuard guard(input.device());
  KernelLaunch l = start("grid_sampler_forward", input, grid, interpolation_mode, padding_mode,
                         align_corners, dims);
  add_tensor(l, input, false);
  add_tensor(l, grid, true);
  add_tensor(l, output, false);
  const int64_t points = grid.numel() / dims;
  l.enqueue1d(input.device().index(), static_cast<size_t>(points), kLws);
  return output;
}

std::tuple<at::Tensor, at::Tensor> backward(const at::Tensor& grad_output, const at::Tensor& input,
                                            const at::Tensor& grid, int64_t interpolation_mode,
                                            int64_t padding_mode, bool align_corners,
                                            std::array<bool, 2> output_mask, int dims) {
  check_args(input, grid, interpolation_mode, padding_mode, dims, &grad_output);
  c10::DeviceGuard guard(input.device());
  const int device = input.device().index();
  // The CPU's results: grad_input only where asked for, grad_grid always (contiguous both).
  at::Tensor grad_input;
  if (output_mask[0]) grad_input = at::empty(input.sizes(), input.options());
  at::Tensor grad_grid = at::empty(grid.sizes(), grid.options());
  const int64_t points = grid.numel() / dims;
  if (points > 0) {
    KernelLaunch l = start("grid_sampler_backward_grid", input, grid, interpolation_mode,
                           padding_mode, align_corners, dims);
    add_tensor(l, grad_output, false);
    add_tensor(l, input, false);
    add_tensor(l, grid, true);
    add_tensor(l, grad_grid, true);
    l.enqueue1d(device, static_cast<size_t>(points), kLws);
  }
  if (grad_input.defined() && grad_input.numel() > 0) {
    KernelLaunch l = start("grid_sampler_backward_input", input, grid, interpolation_mode,
                           padding_mode, align_corners, dims);
    add_tensor(l, grad_output, false);
    add_tensor(l, grid, true);
    add_tensor(l, grad_input, false);
    l.enqueue1d(device, static_cast<size_t>(input.size(0) * input.size(1)), kLws);
  }
  return {grad_input, grad_grid};
}

at::Tensor grid_sampler_2d(const at::Tensor& input, const at::Tensor& grid,
                           int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  return forward(input, grid, interpolation_mode, padding_mode, align_corners, 2);
}

at::Tensor grid_sampler_3d(const at::Tensor& input, const at::Tensor& grid,
                           int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  return forward(input, grid, interpolation_mode, padding_mode, align_corners, 3);
}

std::tuple<at::Tensor, at::Tensor> grid_sampler_2d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& grid,
    int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
    std::array<bool, 2> output_mask) {
  return backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                  output_mask, 2);
}

std::tuple<at::Tensor, at::Tensor> grid_sampler_3d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& grid,
    int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
    std::array<bool, 2> output_mask) {
  return backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                  output_mask, 3);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("grid_sampler_2d", grid_sampler_2d);
  m.impl("grid_sampler_3d", grid_sampler_3d);
  m.impl("grid_sampler_2d_backward", grid_sampler_2d_backward);
  m.impl("grid_sampler_3d_backward", grid_sampler_3d_backward);
}

}  // namespace torch_ocl
