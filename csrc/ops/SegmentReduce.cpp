// torch.segment_reduce (sum, mean, max, min, prod; lengths or offsets; any axis; initial) and
// _segment_reduce_backward with kernels/segment_reduce.cl; floating dtypes as on the CPU.
//
// The CPU validates lengths (no negative one, rows adding up to the axis) on the host when
// unsafe=False; here the reduction kernel checks them and a violation is raised at the next host
// wait (runtime/DeviceError.h), so the op never waits. Offsets are not validated (as on the CPU);
// segments outside the data are clamped to it.
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/string_view.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

int reduction_code(c10::string_view reduce) {
  if (reduce == "sum") return 0;
  if (reduce == "mean") return 1;
  if (reduce == "max") return 2;
  if (reduce == "min") return 3;
  if (reduce == "prod") return 4;
  TORCH_CHECK(false, "reduce argument must be either sum, prod, max, min or mean, got ", reduce);
  return 0;
}

// The data as [outer, len, inner] and the offsets as [outer, S + 1] (int64/int32, contiguous).
struct SegmentGeometry {
  int64_t axis = 0, outer = 1, len = 0, inner = 1, segs = 0;
  at::Tensor off;
};

SegmentGeometry geometry(const at::Tensor& data, const std::optional<at::Tensor>& lengths,
                         const std::optional<at::Tensor>& offsets, int64_t axis_) {
  SegmentGeometry g;
  g.axis = at::maybe_wrap_dim(axis_, data.dim());
  const bool has_off = offsets.has_value() && offsets->defined();
  const bool has_len = lengths.has_value() && lengths->defined();
  TORCH_CHECK(has_len || has_off, "segment_reduce(): Either lengths or offsets must be defined.");
  const at::Tensor& idx = has_off ? *offsets : *lengths;
  const char* what = has_off ? "offsets" : "lengths";
  TORCH_CHECK(idx.scalar_type() == at::kLong || idx.scalar_type() == at::kInt,
              "segment_reduce(): expected ", what, " of dtype int64 or int32, got ",
              idx.scalar_type());
  TORCH_CHECK(idx.device() == data.device(), "segment_reduce(): ", what, " is on ", idx.device(),
              ", the data on ", data.device());
  TORCH_CHECK(data.dim() >= idx.dim(), "segment_reduce(): ", what, " has more dimensions than ",
              "the data");
  TORCH_CHECK(g.axis == idx.dim() - 1, "segment_reduce(): Expected axis to be the last dimension ",
              "of ", what, " but got ", g.axis, ".");
  for (int64_t d = 0; d < g.axis; ++d) {
    TORCH_CHECK(idx.size(d) == data.size(d), "segment_reduce(): ", what, " has size ", idx.size(d),
                " at dimension ", d, ", the data ", data.size(d));
    g.outer *= data.size(d);
  }
  g.len = data.size(g.axis);
  for (int64_t d = g.axis + 1; d < data.dim(); ++d) g.inner *= data.size(d);
  if (has_off) {
    g.segs = std::max<int64_t>(idx.size(-1) - 1, 0);
    g.off = idx.reshape({g.outer, idx.size(-1)}).contiguous();
  } else {
    g.segs = idx.size(-1);
    const at::Tensor rows = idx.reshape({g.outer, g.segs});
    g.off =
        at::cat({at::zeros({g.outer, 1}, rows.options()), at::cumsum(rows, 1, rows.scalar_type())},
                1)
            .contiguous();
  }
  return g;
}

std::vector<int64_t> output_shape(const at::Tensor& data, const SegmentGeometry& g) {
  std::vector<int64_t> shape(data.sizes().begin(), data.sizes().end());
  shape[g.axis] = g.segs;
  return shape;
}

std::string seg_options(const at::Tensor& data, const at::Tensor& off, int device) {
  return std::string("-DT=") + type_tag(data.scalar_type(), device) +
         " -DOFF_T=" + (off.scalar_type() == at::kLong ? "long" : "int");
}

void check_dtype(const at::Tensor& data) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(data.scalar_type()),
                              "\"_segment_reduce_lengths_cpu\" not implemented for '",
                              data.scalar_type(), "'");
}

// The starting value of a reduction: the caller's initial, or the reduction's identity.
c10::Scalar start_value(int reduce, const std::optional<c10::Scalar>& initial) {
  if (initial.has_value()) return *initial;
  switch (reduce) {
    case 2:
      return -std::numeric_limits<double>::infinity();
    case 3:
      return std::numeric_limits<double>::infinity();
    case 4:
      return 1.0;
    default:
      return 0.0;
  }
}

at::Tensor segment_reduce_impl(const at::Tensor& data, c10::string_view reduce,
                               const std::optional<at::Tensor>& lengths,
                               const std::optional<at::Tensor>& indices,
                               const std::optional<at::Tensor>& offsets, int64_t axis, bool unsafe,
                               const std::optional<c10::Scalar>& initial) {
  TORCH_CHECK(!(indices.has_value() && indices->defined()),
              "segment_reduce(): indices based reduction is not supported yet.");
  const int code = reduction_code(reduce);
  check_dtype(data);
  c10::DeviceGuard guard(data.device());
  const int device = data.device().index();
  const SegmentGeometry g = geometry(data, lengths, offsets, axis);
  at::Tensor out = at::empty(output_shape(data, g), data.options());
  const bool check = !unsafe && !(offsets.has_value() && offsets->defined());
  if (g.segs == 0 || g.outer == 0 || g.inner == 0) return out;
  const at::Tensor x = data.contiguous();
  KernelLaunch l(
      get_kernel(device, "segment_reduce.cl", "seg_forward", seg_options(x, g.off, device)));
  l.arg(static_cast<cl_long>(g.outer)).arg(static_cast<cl_long>(g.len));
  l.arg(static_cast<cl_long>(g.inner)).arg(static_cast<cl_long>(g.segs));
  l.buffer(buffer_of(x), x.itemsize()).buffer(buffer_of(g.off), g.off.itemsize());
  l.arg(static_cast<cl_int>(code));
  push_compute_scalar(l, start_value(code, initial), x.scalar_type());
  l.arg(static_cast<cl_int>(initial.has_value() ? 1 : 0)).arg(static_cast<cl_int>(check ? 1 : 0));
  l.buffer(buffer_of(out), out.itemsize());
  l.arg(device_error_word(device))
      .arg(device_error_code("segment_reduce(): lengths contains a negative value, or a row of "
                             "lengths does not add up to data.size(axis) (checked on the device "
                             "because unsafe=False)"));
  l.enqueue_grid(device, static_cast<size_t>(g.inner), static_cast<size_t>(g.segs),
                 static_cast<size_t>(g.outer), kLws);
  return out;
}

at::Tensor segment_reduce_backward_impl(const at::Tensor& grad, const at::Tensor& output,
                                        const at::Tensor& data, c10::string_view reduce,
                                        const std::optional<at::Tensor>& lengths,
                                        const std::optional<at::Tensor>& offsets, int64_t axis,
                                        const std::optional<c10::Scalar>& initial) {
  const int code = reduction_code(reduce);
  check_dtype(data);
  c10::DeviceGuard guard(data.device());
  const int device = data.device().index();
  const SegmentGeometry g = geometry(data, lengths, offsets, axis);
  at::Tensor gi = at::zeros_like(data, at::MemoryFormat::Contiguous);
  if (gi.numel() == 0 || g.segs == 0) return gi;
  const at::Tensor x = data.contiguous(), go = grad.contiguous(), res = output.contiguous();
  KernelLaunch l(
      get_kernel(device, "segment_reduce.cl", "seg_backward", seg_options(x, g.off, device)));
  l.arg(static_cast<cl_long>(g.outer)).arg(static_cast<cl_long>(g.len));
  l.arg(static_cast<cl_long>(g.inner)).arg(static_cast<cl_long>(g.segs));
  l.buffer(buffer_of(x), x.itemsize()).buffer(buffer_of(g.off), g.off.itemsize());
  l.arg(static_cast<cl_int>(code));
  push_compute_scalar(l, initial.has_value() ? *initial : c10::Scalar(1.0), x.scalar_type());
  l.buffer(buffer_of(go), go.itemsize()).buffer(buffer_of(res), res.itemsize());
  l.buffer(buffer_of(gi), gi.itemsize());
  l.enqueue_grid(device, static_cast<size_t>(g.inner), static_cast<size_t>(g.segs),
                 static_cast<size_t>(g.outer), kLws);
  return gi;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("segment_reduce", segment_reduce_impl);
  m.impl("_segment_reduce_backward", segment_reduce_backward_impl);
}

}  // namespace torch_ocl
