// Sorting and selection with kernels/sort.cl: sort (ATen's structured sort.stable impl runs,
// through sort_stub; argsort and msort are composites of it), topk (structured meta + our
// kernel: ATen's impl calls topk_stub for the CPU only), kthvalue, median and nanmedian (with
// and without dim), mode. Every sort is stable with NaN largest, as the CPU's stable sort;
// where the CPU's choice among equal values is unspecified (unstable sort, quickselect in
// topk/kthvalue, nth_element among all-NaN rows in nanmedian, mode's std::sort) ours is the
// stable order.
#include "ops/Sort.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/TensorUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/Sorting.h>
#include <ATen/native/SortingUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/sort_native.h>
#include <ATen/ops/topk_meta.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

// The sort's element key options (see kernels/sort.cl) for a dtype.
std::string key_options(at::ScalarType t, int device) {
  std::string o = std::string("-DT=") + type_tag(t, device) +
                  " -DKEY_BITS=" + std::to_string(8 * c10::elementSize(t));
  switch (t) {
    case at::kFloat:
      return o + " -DKEY_FLOAT -DKEY_INF=0x7f800000u";
    case at::kDouble:
      return o + " -DKEY_FLOAT -DKEY_INF=0x7ff0000000000000UL";
    case at::kHalf:
      return o + " -DKEY_FLOAT -DKEY_INF=0x7c00u";
    case at::kBFloat16:
      return o + " -DKEY_FLOAT -DKEY_INF=0x7f80u";
    case at::kLong:
    case at::kInt:
    case at::kShort:
    case at::kChar:
      return o + " -DKEY_SIGNED";
    default:  // uint8, bool
      return o;
  }
}

// A row-sorting problem: self viewed as (outer, n, inner) around dim.
struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
  Rows(const at::Tensor& t, int64_t dim) {
    if (t.dim() == 0) return;
    n = t.size(dim);
    for (int64_t i = 0; i < dim; ++i) outer *= t.size(i);
    for (int64_t i = dim + 1; i < t.dim(); ++i) inner *= t.size(i);
  }
  int64_t rows() const { return outer * inner; }
};

// Work-group size and tile of sort_local on `device` for elements of `itemsize` bytes: a tile's
// bits and positions take at most half the local memory.
struct SortGeometry {
  size_t lws = 1, tile = 2;
};

SortGeometry geometry(int device, size_t itemsize) {
  const DeviceInfo& info = device_info(device);
  const size_t slot = (itemsize > 4 ? 8 : 4) + 4;
  SortGeometry g;
  g.tile = 2;
  while (g.tile * 2 <= 2048 && g.tile * 2 * slot <= info.local_mem / 2) g.tile *= 2;
  g.lws = 1;
  while (g.lws * 2 <= std::min<size_t>({256, info.max_work_group, g.tile / 2})) g.lws *= 2;
  return g;
}

// The build options of sort.cl for a dtype (one program serves sorting and picking).
std::string sort_options(at::ScalarType t, int device) {
  const SortGeometry geo = geometry(device, c10::elementSize(t));
  return key_options(t, device) + " -DLWS=" + std::to_string(geo.lws) +
         " -DTILE=" + std::to_string(geo.tile);
}

KernelLaunch sort_kernel(int device, const char* name, const std::string& options) {
  return KernelLaunch(get_kernel(device, "sort.cl", name, options));
}

}  // namespace

void sort_along(const at::Tensor& self, int64_t dim, bool descending, const at::Tensor& values,
                const at::Tensor& indices) {
  TORCH_INTERNAL_ASSERT(values.is_contiguous() && indices.is_contiguous());
  TORCH_INTERNAL_ASSERT(values.sizes() == self.sizes() && indices.sizes() == self.sizes());
  TORCH_INTERNAL_ASSERT(values.scalar_type() == self.scalar_type());
  if (self.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  const int64_t d = self.dim() == 0 ? 0 : at::maybe_wrap_dim(dim, self.dim());
  const Rows r(self, d);
  TORCH_CHECK(r.n < static_cast<int64_t>(std::numeric_limits<uint32_t>::max()),
              "torch-ocl: sorting more than 2^32 - 2 elements along one dimension is not "
              "supported (got ",
              r.n, ")");
  const int device = self.device().index();
  const at::Tensor src = self.contiguous();
  const size_t itemsize = src.itemsize();
  const SortGeometry geo = geometry(device, itemsize);
  const std::string options = sort_options(self.scalar_type(), device);
  const int64_t tile = static_cast<int64_t>(geo.tile);
  const cl_int desc = descending ? 1 : 0;
  const size_t key_size = itemsize > 4 ? 8 : 4;
  const at::ScalarType key_dtype = key_size == 8 ? at::kLong : at::kInt;
  const BufferRef vals = buffer_of(values), idx = buffer_of(indices);

  // Run buffers (row-major rows x n): two pairs for the merge passes, when n > tile.
  at::Tensor keys[2], pos[2];
  const bool merge = r.n > tile;
  if (merge) {
    for (int i = 0; i < 2; ++i) {
      keys[i] = at::empty({r.rows() * r.n}, self.options().dtype(key_dtype));
      pos[i] = at::empty({r.rows() * r.n}, self.options().dtype(at::kInt));
    }
  }
  // Unused run buffers are stood in for by the outputs (never touched).
  const BufferRef k0 = merge ? buffer_of(keys[0]) : idx, p0 = merge ? buffer_of(pos[0]) : idx;
  {
    int64_t P = 1;
    while (P < std::min(r.n, tile)) P *= 2;
    const int64_t tiles_per_row = merge ? (r.n + tile - 1) / tile : 1;
    const int64_t groups =
        merge ? r.rows() * tiles_per_row : (r.rows() + tile / P - 1) / (tile / P);
    KernelLaunch l = sort_kernel(device, "sort_local", options);
    l.arg(static_cast<cl_ulong>(r.rows())).arg(static_cast<cl_ulong>(r.n));
    l.arg(static_cast<cl_ulong>(r.inner)).arg(static_cast<cl_ulong>(P));
    l.arg(static_cast<cl_ulong>(tiles_per_row)).arg(desc);
    l.buffer(buffer_of(src), itemsize).buffer(vals, itemsize).buffer(idx, 8);
    l.buffer(k0, key_size).buffer(p0, 4).arg(static_cast<cl_int>(!merge));
    l.enqueue1d(device, static_cast<size_t>(groups) * geo.lws, geo.lws);
  }
  if (!merge) return;
  constexpr int64_t kPerItem = 8;  // EPT in sort.cl
  const size_t items = static_cast<size_t>(r.rows() * ((r.n + kPerItem - 1) / kPerItem));
  int cur = 0;
  for (int64_t run = tile; run < r.n; run *= 2) {
    const bool last = 2 * run >= r.n;
    KernelLaunch l = sort_kernel(device, "merge_runs", options);
    l.arg(static_cast<cl_ulong>(r.rows())).arg(static_cast<cl_ulong>(r.n));
    l.arg(static_cast<cl_ulong>(r.inner)).arg(static_cast<cl_ulong>(run)).arg(desc);
    l.buffer(buffer_of(keys[cur]), key_size).buffer(buffer_of(pos[cur]), 4);
    l.buffer(buffer_of(keys[1 - cur]), key_size).buffer(buffer_of(pos[1 - cur]), 4);
    l.buffer(vals, itemsize).buffer(idx, 8).arg(static_cast<cl_int>(last));
    l.enqueue1d(device, items, 64);
    cur = 1 - cur;
  }
}

namespace {

// The sorted `self` along dim (contiguous values and int64 indices of self's shape).
std::pair<at::Tensor, at::Tensor> sorted(const at::Tensor& self, int64_t dim, bool descending) {
  at::Tensor v = at::empty(self.sizes(), self.options());
  at::Tensor i = at::empty(self.sizes(), self.options().dtype(at::kLong));
  sort_along(self, dim, descending, v, i);
  return {v, i};
}

// sort_stub: ATen's sort.stable impl has copied self into values and handled 0-dim tensors.
void sort_kernel_stub(const at::TensorBase& self, const at::TensorBase& values_base,
                      const at::TensorBase& indices_base, int64_t dim, bool descending,
                      bool /*stable: always*/) {
  const at::Tensor values(values_base), indices(indices_base);
  if (values.numel() == 0) return;
  const bool direct = values.is_contiguous() && indices.is_contiguous();
  if (direct) {
    sort_along(values, dim, descending, values, indices);
    return;
  }
  auto [v, i] = sorted(values, dim, descending);
  values.copy_(v);
  indices.copy_(i);
}

using SortStable = AtenStructured<at::native::structured_sort_stable_out>;

// topk: the first k of the sort along dim (largest: descending); for a small k of long rows,
// topk_select finds them without sorting the rows.
void topk_kernel(const Outputs<2>& out, const at::Tensor& self, int64_t k, int64_t dim,
                 bool largest, bool /*sorted: always*/) {
  const int64_t d = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  if (self.dim() == 0 && self.numel() == 1) {
    out[0].copy_(self);
    out[1].zero_();
    return;
  }
  if (out[0].numel() == 0) return;
  const Rows r(self, d);
  const int device = self.device().index();
  const SortGeometry geo = geometry(device, self.itemsize());
  constexpr int64_t kSelectMax = 16;  // KMAX in sort.cl
  const int64_t items = static_cast<int64_t>(geo.tile) / kSelectMax;
  if (k <= kSelectMax && items > 0 && r.n > static_cast<int64_t>(geo.tile) / 2 &&
      r.n < static_cast<int64_t>(std::numeric_limits<uint32_t>::max())) {
    // A few of many: each row's candidates, without sorting the row (topk_select).
    c10::DeviceGuard guard(self.device());
    const at::Tensor src = self.contiguous();
    KernelLaunch l = sort_kernel(device, "topk_select", sort_options(self.scalar_type(), device));
    l.arg(static_cast<cl_ulong>(r.rows())).arg(static_cast<cl_ulong>(r.n));
    l.arg(static_cast<cl_ulong>(r.inner)).arg(static_cast<cl_uint>(k));
    l.arg(static_cast<cl_int>(largest));
    l.buffer(buffer_of(src), src.itemsize()).buffer(buffer_of(out[0]), out[0].itemsize());
    l.buffer(buffer_of(out[1]), 8);
    l.enqueue1d(device, static_cast<size_t>(r.rows() * items), static_cast<size_t>(items));
    return;
  }
  auto [v, i] = sorted(self, d, largest);
  out[0].copy_(v.narrow(d, 0, k));
  out[1].copy_(i.narrow(d, 0, k));
}
using Topk = Structured<at::meta::structured_topk, topk_kernel>;

// kthvalue.values: the CPU's checks and output handling (ATen's helpers), the k-th of the sort.
std::tuple<at::Tensor&, at::Tensor&> kthvalue_out(const at::Tensor& self, int64_t k, int64_t dim_,
                                                  bool keepdim, at::Tensor& values,
                                                  at::Tensor& indices) {
  const int64_t dim = at::maybe_wrap_dim(dim_, self.dim(), /*wrap_scalar=*/true);
  const int64_t slice = self.dim() == 0 ? 1 : self.size(dim);
  at::native::zero_numel_check_dims(self, dim, "kthvalue()");
  TORCH_CHECK(k >= 1 && k <= slice, "kthvalue(): selected number k out of range for dimension ",
              dim);
  at::assert_no_overlap(self, values);
  at::native::_reduction_with_indices_allocate_or_resize_output(values, indices, self, dim,
                                                                keepdim);
  if (self.dim() == 0 && self.numel() == 1) {
    values.copy_(self);
    indices.zero_();
    return {values, indices};
  }
  if (self.numel() > 0) {
    auto [v, i] = sorted(self, dim, false);
    values.copy_(v.narrow(dim, k - 1, 1));
    indices.copy_(i.narrow(dim, k - 1, 1));
  }
  if (!keepdim) {
    values.squeeze_(dim);
    indices.squeeze_(dim);
  }
  return {values, indices};
}

// Runs median_pick or mode_pick over the rows of the sorted (v, i) along dim into values and
// indices (any layout, the reduced shape's number of elements).
void pick(const char* kernel, const at::Tensor& v, const at::Tensor& i, int64_t dim,
          const at::Tensor& values, const at::Tensor& indices, int ignore_nan = -1) {
  const Rows r(v, dim);
  const int device = v.device().index();
  const bool direct = values.is_contiguous() && indices.is_contiguous();
  const at::Tensor ov = direct ? values : at::empty(values.sizes(), values.options());
  const at::Tensor oi = direct ? indices : at::empty(indices.sizes(), indices.options());
  KernelLaunch l = sort_kernel(device, kernel, sort_options(v.scalar_type(), device));
  l.arg(static_cast<cl_ulong>(r.rows())).arg(static_cast<cl_ulong>(r.n));
  l.arg(static_cast<cl_ulong>(r.inner));
  l.buffer(buffer_of(v), v.itemsize()).buffer(buffer_of(i), 8);
  l.buffer(buffer_of(ov), ov.itemsize()).buffer(buffer_of(oi), 8);
  if (ignore_nan >= 0) l.arg(static_cast<cl_int>(ignore_nan));
  l.enqueue1d(device, static_cast<size_t>(r.rows()), 64);
  if (!direct) {
    values.copy_(ov);
    indices.copy_(oi);
  }
}

// median.dim_values / nanmedian.dim_values: the CPU's checks (median_with_indices_impl).
std::tuple<at::Tensor&, at::Tensor&> median_with_indices(const at::Tensor& self, int64_t dim_,
                                                         bool keepdim, at::Tensor& values,
                                                         at::Tensor& indices, bool ignore_nan) {
  const int64_t dim = at::maybe_wrap_dim(dim_, self.dim());
  at::native::zero_numel_check_dims(self, dim, "median()");
  at::checkDeviceType("median", {values, indices}, self.device().type());
  at::checkScalarType("median", {indices, "indices", 1}, at::kLong);
  at::checkSameType("median", {values, "values", 0}, {self, "self", 2});
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() > 0) {
    if (keepdim)
      shape[dim] = 1;
    else
      shape.erase(shape.begin() + dim);
  }
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  if (self.numel() == 0) return {values, indices};
  c10::DeviceGuard guard(self.device());
  auto [v, i] = sorted(self, dim, false);
  pick("median_pick", v, i, dim, values, indices, ignore_nan ? 1 : 0);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> median_dim_out(const at::Tensor& self, int64_t dim,
                                                    bool keepdim, at::Tensor& values,
                                                    at::Tensor& indices) {
  return median_with_indices(self, dim, keepdim, values, indices, false);
}
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_out(const at::Tensor& self, int64_t dim,
                                                       bool keepdim, at::Tensor& values,
                                                       at::Tensor& indices) {
  return median_with_indices(self, dim, keepdim, values, indices, true);
}

// median() / nanmedian() of all elements (a 0-dim result; NaN for an empty input, as the CPU).
at::Tensor median_all(const at::Tensor& self, bool ignore_nan) {
  c10::DeviceGuard guard(self.device());
  if (self.numel() == 0)
    return at::full({}, std::numeric_limits<double>::quiet_NaN(), self.options().dtype(at::kFloat))
        .to(self.scalar_type());
  const at::Tensor flat = self.reshape({-1});
  auto [v, i] = sorted(flat, 0, false);
  at::Tensor out = at::empty({}, self.options());
  at::Tensor index = at::empty({}, self.options().dtype(at::kLong));
  pick("median_pick", v, i, 0, out, index, ignore_nan ? 1 : 0);
  return out;
}
at::Tensor median(const at::Tensor& self) { return median_all(self, false); }
at::Tensor nanmedian(const at::Tensor& self) { return median_all(self, true); }

// mode / mode.values: ATen's mode_out (through mode_stub) admits only CPU, CUDA and XPU
// tensors, so this is its argument handling (same checks and messages, ATen's helpers) around
// our kernel.
std::tuple<at::Tensor&, at::Tensor&> mode_out(const at::Tensor& self, int64_t dim_, bool keepdim,
                                              at::Tensor& values, at::Tensor& indices) {
  TORCH_CHECK(self.layout() == at::Layout::Strided,
              "mode only supports strided layout, got: ", self.layout());
  TORCH_CHECK(self.device() == values.device(), "expected device '", self.device(), "' but got '",
              values.device(), "' for values output");
  TORCH_CHECK(self.device() == indices.device(), "expected device '", self.device(), "' but got '",
              indices.device(), "' for indices output");
  TORCH_CHECK(self.scalar_type() == values.scalar_type(), "expected scalar type '",
              self.scalar_type(), "' but got '", values.scalar_type(), "' for values output");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "expected scalar type '", at::kLong,
              "' but got '", indices.scalar_type(), "' for indices output");
  const int64_t dim = at::maybe_wrap_dim(dim_, self.dim());
  if (at::native::_dimreduce_return_trivial_no_ident(values, self, dim, keepdim, "mode")) {
    indices.resize_({}).fill_(0);
    return {values, indices};
  }
  at::native::zero_numel_check_dims(self, dim, "mode()");
  // The outputs take the reduced shape with dim kept, and lose dim again at the end.
  std::vector<int64_t> shape = self.sizes().vec();
  shape[dim] = 1;
  if (!keepdim) {
    if (values.dim() >= dim) values.unsqueeze_(dim);
    if (indices.dim() >= dim) indices.unsqueeze_(dim);
  }
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  if (self.numel() > 0) {
    c10::DeviceGuard guard(self.device());
    auto [v, i] = sorted(self, dim, false);
    pick("mode_pick", v, i, dim, values, indices);
  }
  if (!keepdim) {
    values.squeeze_(dim);
    indices.squeeze_(dim);
  }
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> mode(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  mode_out(self, dim, keepdim, values, indices);
  return {values, indices};
}

}  // namespace

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(sort_stub, &torch_ocl::sort_kernel_stub)
}  // namespace at::native

namespace torch_ocl {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sort.stable", SortStable::functional);
  m.impl("sort.values_stable", SortStable::out2);
  m.impl("topk", Topk::functional);
  m.impl("topk.values", Topk::out2);
  m.impl("kthvalue.values", kthvalue_out);
  m.impl("median", median);
  m.impl("median.dim_values", median_dim_out);
  m.impl("nanmedian", nanmedian);
  m.impl("nanmedian.dim_values", nanmedian_dim_out);
  m.impl("mode", mode);
  m.impl("mode.values", mode_out);
}

}  // namespace torch_ocl
