// max_unpool2d / max_unpool3d forward on the device with kernels/unpool.cl (the backwards are
// ATen composites). ATen's CPU implementations call their DispatchStubs for kCPU explicitly, so
// they cannot serve the device: these are the CPU's checks, result layouts (max_unpool2d keeps
// the input's memory format, max_unpool3d is contiguous) and dtypes, with our kernel. Out-of-range
// indices are raised at the next wait (runtime/DeviceError.h), not where the op returns. A
// duplicate index keeps the last value in input order, as on the CPU (deterministic).
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/irange.h>
#include <torch/library.h>

#include <array>
#include <string>

#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// [N, C, D, H, W] strides of a batched 4-d or 5-d tensor (D of a 4-d tensor: stride 0).
std::array<int64_t, 5> strides5(const at::Tensor& t) {
  if (t.dim() == 5) return {t.stride(0), t.stride(1), t.stride(2), t.stride(3), t.stride(4)};
  return {t.stride(0), t.stride(1), 0, t.stride(2), t.stride(3)};
}

void common_checks(const at::Tensor& self, const at::Tensor& indices, int dims,
                   at::IntArrayRef output_size, const char* op) {
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(static_cast<int>(output_size.size()) == dims, "There should be exactly ", dims,
              " elements in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == dims + 1 || self.dim() == dims + 2, "Input to ", op, " should be a ",
              dims + 1, "d or ", dims + 2, "d Tensor, but got a tensor with ", self.dim(),
              " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (const auto i : c10::irange(1, self.dim())) {
    TORCH_CHECK(self.size(i) > 0, op, "_forward_out_cpu(): ",
                "Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  }
  TORCH_CHECK(indices.device() == self.device(), op, ": expected indices on ", self.device(),
              ", but got ", indices.device());
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"", op, "\" not implemented for '", t, "'");
}

at::Tensor unpool(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                  int dims, at::MemoryFormat format, const char* op, const char* error) {
  const bool batched = self.dim() == dims + 2;
  const at::Tensor in = batched ? self : self.unsqueeze(0);
  const at::Tensor idx = batched ? indices : indices.unsqueeze(0);
  std::vector<int64_t> sizes{in.size(0), in.size(1)};
  sizes.insert(sizes.end(), output_size.begin(), output_size.end());
  at::Tensor out = at::empty(sizes, self.options().memory_format(format));
  const int64_t planes = in.size(0) * in.size(1);
  if (planes > 0) {
    c10::DeviceGuard guard(self.device());
    const int device = self.device().index();
    // Values are only moved: one build per element size.
    const size_t bytes = self.itemsize();
    const std::string options = std::string("-DDATA=") + (bytes == 2   ? "ushort"
                                                          : bytes == 4 ? "uint"
                                                                       : "ulong");
    KernelLaunch l(get_kernel(device, "unpool.cl", "max_unpool_forward", options));
    l.arg(static_cast<cl_ulong>(planes)).arg(static_cast<cl_long>(in.size(1)));
    const int64_t ID = dims == 3 ? in.size(2) : 1, OD = dims == 3 ? output_size[0] : 1;
    for (int64_t v :
         {ID, in.size(-2), in.size(-1), OD, output_size[dims - 2], output_size[dims - 1]}) {
      l.arg(static_cast<cl_long>(v));
    }
    for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&in, &idx, &out}) {
      l.buffer(buffer_of(*t), t->itemsize());
      for (int64_t s : strides5(*t)) l.arg(static_cast<cl_long>(s));
    }
    l.arg(device_error_word(device)).arg(device_error_code(error));
    l.enqueue1d(device, static_cast<size_t>(planes), kLws);
  }
  return batched ? out : out.squeeze(0);
}

at::Tensor max_unpool2d(const at::Tensor& self, const at::Tensor& indices,
                        at::IntArrayRef output_size) {
  common_checks(self, indices, 2, output_size, "max_unpool2d");
  const at::MemoryFormat format =
      self.dim() == 4 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous;
  return unpool(self, indices, output_size, 2, format, "max_unpool2d",
                "max_unpool2d: Found an invalid max index (outside the output plane)");
}

at::Tensor max_unpool3d(const at::Tensor& self, const at::Tensor& indices,
                        at::IntArrayRef output_size, at::IntArrayRef stride,
                        at::IntArrayRef padding) {
  common_checks(self, indices, 3, output_size, "max_unpool3d");
  TORCH_CHECK(stride.size() == 3,
              "There should be exactly three elements (depth, height, width) in stride, but got: ",
              stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3,
              "There should be exactly three elements (depth, height, width) in padding, but got: ",
              padding.size(), " elements.");
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
              "strides should be greater than zero, but got stride: ", stride);
  return unpool(self, indices, output_size, 3, at::MemoryFormat::Contiguous, "max_unpool3d",
                "max_unpool3d: Found an invalid max index (outside the output volume)");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_unpool2d", max_unpool2d);
  m.impl("max_unpool3d", max_unpool3d);
}

}  // namespace torch_ocl
