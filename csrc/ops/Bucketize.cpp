// searchsorted and bucketize with kernels/bucketize.cl. The CPU's argument handling is ATen's
// (BucketizationUtils.h: searchsorted_pre_check, the common dtype of values and boundaries),
// except the check that sorter's entries are in range: ATen does it with a host wait
// (aminmax().item()); here the kernel finds a bad entry and raises the CPU's error at the next
// wait (runtime/DeviceError.h).
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <string>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr const char* kBadSorter = "torch.searchsorted(): sorter index out of range";

at::Tensor& searchsorted_out_ocl(const at::Tensor& boundaries, const at::Tensor& self,
                                 bool out_int32, bool right, std::optional<c10::string_view> side,
                                 const std::optional<at::Tensor>& sorter_opt, at::Tensor& result) {
  const at::Tensor sorter = sorter_opt.value_or(at::Tensor());
  at::native::searchsorted_pre_check(boundaries, self, result, out_int32, right, side,
                                     at::Tensor());
  if (sorter.defined()) {
    TORCH_CHECK(sorter.device() == boundaries.device(),
                "torch.searchsorted(): sorter and boundary tensors should have same device type, "
                "but got sorter tensor device type ",
                sorter.device(), " and input value tensor device type ", boundaries.device());
    TORCH_CHECK(sorter.sizes() == boundaries.sizes(),
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                "boundary tensor ",
                boundaries.sizes(), "and got sorter tensor ", sorter.sizes());
    TORCH_CHECK(sorter.scalar_type() == at::kLong,
                "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype ",
                sorter.scalar_type());
  }
  at::native::resize_output(result, self.sizes());
  const bool is_right = side ? *side == "right" : right;
  if (self.numel() == 0) return result;
  c10::DeviceGuard guard(self.device());

  at::Tensor in, bd, st;
  at::native::searchsorted_maybe_trim_input_tensors(in, bd, st, self, boundaries, sorter);
  const at::Tensor& values = in.defined() ? in : self;
  const at::Tensor& bounds = bd.defined() ? bd : boundaries;
  const at::Tensor& order = st.defined() ? st : sorter;
  const at::Tensor out = working_output(result, {&self, &boundaries});

  const int device = self.device().index();
  const int64_t m = bounds.size(-1);
  const int64_t inner = values.dim() == 0 ? 1 : values.size(-1);
  const std::string options = std::string("-DT=") + type_tag(values.scalar_type(), device) +
                              " -DOUT_T=" + (out_int32 ? "int" : "long");
  KernelLaunch l(get_kernel(device, "bucketize.cl", "search", options));
  l.arg(static_cast<cl_ulong>(values.numel())).arg(static_cast<cl_ulong>(inner));
  l.arg(static_cast<cl_ulong>(m)).arg(static_cast<cl_int>(bounds.dim() == 1));
  l.arg(static_cast<cl_int>(is_right));
  l.buffer(buffer_of(values), values.itemsize()).buffer(buffer_of(bounds), bounds.itemsize());
  l.buffer(buffer_of(order.defined() ? order : out), order.defined() ? 8 : out.itemsize());
  l.arg(static_cast<cl_ulong>(order.defined() ? order.numel() : 0));
  l.buffer(buffer_of(out), out.itemsize());
  l.arg(device_error_word(device)).arg(device_error_code(kBadSorter));
  l.enqueue1d(device, static_cast<size_t>(values.numel()), 64);
  finish_out(result, out);
  return result;
}

at::Tensor searchsorted_ocl(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32,
                            bool right, std::optional<c10::string_view> side,
                            const std::optional<at::Tensor>& sorter) {
  at::Tensor result = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong),
                                at::MemoryFormat::Contiguous);
  return searchsorted_out_ocl(boundaries, self, out_int32, right, side, sorter, result);
}

// A Python number as a wrapped-number tensor on the boundaries' device (ATen's helper), so that
// it promotes like a scalar operand.
at::Tensor& searchsorted_scalar_out_ocl(const at::Tensor& boundaries, const at::Scalar& self,
                                        bool out_int32, bool right,
                                        std::optional<c10::string_view> side,
                                        const std::optional<at::Tensor>& sorter,
                                        at::Tensor& result) {
  const at::Tensor value = at::native::searchsorted_scalar_tensor(self, boundaries.device());
  return searchsorted_out_ocl(boundaries, value, out_int32, right, side, sorter, result);
}

at::Tensor searchsorted_scalar_ocl(const at::Tensor& boundaries, const at::Scalar& self,
                                   bool out_int32, bool right, std::optional<c10::string_view> side,
                                   const std::optional<at::Tensor>& sorter) {
  const at::Tensor value = at::native::searchsorted_scalar_tensor(self, boundaries.device());
  return searchsorted_ocl(boundaries, value, out_int32, right, side, sorter);
}

at::Tensor& bucketize_out_ocl(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                              bool right, at::Tensor& result) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return searchsorted_out_ocl(boundaries, self, out_int32, right, std::nullopt, std::nullopt,
                              result);
}

at::Tensor bucketize_ocl(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                         bool right) {
  at::Tensor result = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong),
                                at::MemoryFormat::Contiguous);
  return bucketize_out_ocl(self, boundaries, out_int32, right, result);
}

at::Tensor bucketize_scalar_ocl(const at::Scalar& self, const at::Tensor& boundaries,
                                bool out_int32, bool right) {
  return bucketize_ocl(at::native::searchsorted_scalar_tensor(self, boundaries.device()),
                       boundaries, out_int32, right);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("searchsorted.Tensor", searchsorted_ocl);
  m.impl("searchsorted.Tensor_out", searchsorted_out_ocl);
  m.impl("searchsorted.Scalar", searchsorted_scalar_ocl);
  m.impl("searchsorted.Scalar_out", searchsorted_scalar_out_ocl);
  m.impl("bucketize.Tensor", bucketize_ocl);
  m.impl("bucketize.Tensor_out", bucketize_out_ocl);
  m.impl("bucketize.Scalar", bucketize_scalar_ocl);
}

}  // namespace torch_ocl
