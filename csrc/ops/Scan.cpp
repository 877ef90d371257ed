// Scans along a dimension with kernels/scan.cl: cumsum, cumprod (ATen's structured impl runs,
// through cumsum_stub / cumprod_stub), logcumsumexp (ATen's _logcumsumexp, through
// logcumsumexp_stub), cummax/cummin (ATen's composite calls _cummax_helper/_cummin_helper, which
// are per-backend).
#include <ATen/WrapDimUtils.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/ReduceOps.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_logcumsumexp_native.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/angle.h>
#include <ATen/ops/cumprod_native.h>
#include <ATen/ops/cumsum_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/polar.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <string>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr int kPerItem = 4;  // -DE: elements per work-item of a tile

enum class ScanOp { kSum, kProd, kLogAddExp, kMax, kMin };

const char* op_option(ScanOp op) {
  switch (op) {
    case ScanOp::kSum:
      return " -DOP_SUM";
    case ScanOp::kProd:
      return " -DOP_PROD";
    case ScanOp::kLogAddExp:
      return " -DOP_LOGADDEXP";
    case ScanOp::kMax:
      return " -DOP_MAX";
    case ScanOp::kMin:
      return " -DOP_MIN";
  }
  return "";
}

bool with_index(ScanOp op) { return op == ScanOp::kMax || op == ScanOp::kMin; }

// The running value's dtype: cummax/cummin keep the element type; sums and products accumulate
// in float for half/bfloat16 and in int64 for integers (whose results then wrap like the CPU's).
at::ScalarType acc_dtype(ScanOp op, at::ScalarType t) {
  if (with_index(op)) return t;
  if (t == at::kDouble) return at::kDouble;
  if (at::isFloatingType(t)) return at::kFloat;
  return at::kLong;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A scan's launches: the buffers in the order of the kernels' signatures.
struct ScanLaunch {
  int device;
  std::string options;
  size_t lws;
  at::Tensor in, out, out_idx, tot, tot_idx;

  void push_in(KernelLaunch& l) const { l.buffer(buffer_of(in), in.itemsize()); }
  void push_out(KernelLaunch& l) const {
    l.buffer(buffer_of(out), out.itemsize());
    if (out_idx.defined()) l.buffer(buffer_of(out_idx), 8);
  }
  void push_tot(KernelLaunch& l) const {
    // Without chunks the totals are never read: the output stands in for them.
    const at::Tensor& t = tot.defined() ? tot : out;
    l.buffer(buffer_of(t), t.itemsize());
    if (out_idx.defined()) l.buffer(buffer_of(tot_idx.defined() ? tot_idx : out_idx), 8);
  }
  KernelLaunch start(const char* kernel) const {
    return KernelLaunch(get_kernel(device, "scan.cl", kernel, options));
  }
};

// Scans self (any layout) along dim into out (contiguous, self's shape and dtype) and, for
// cummax/cummin, out_idx (contiguous int64).
void scan_along(const at::Tensor& self, int64_t dim, ScanOp op, const at::Tensor& out,
                const at::Tensor& out_idx) {
  TORCH_INTERNAL_ASSERT(out.is_contiguous() && out.sizes() == self.sizes());
  TORCH_INTERNAL_ASSERT(out.scalar_type() == self.scalar_type());
  if (self.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  ScanLaunch s;
  s.device = self.device().index();
  s.in = self.contiguous();
  s.out = out;
  if (with_index(op)) s.out_idx = out_idx;
  const at::ScalarType t = self.scalar_type();
  const at::ScalarType acc = acc_dtype(op, t);
  const DeviceInfo& info = device_info(s.device);
  // The work-group size: a power of two up to 256 whose tile fits in local memory.
  const size_t item_bytes = 2 * 8 + 8;  // an Item (value, index) with padding, generously
  s.lws = 1;
  while (s.lws * 2 <= std::min<size_t>(256, info.max_work_group) &&
         s.lws * 2 * (kPerItem + 1) * item_bytes <= info.local_mem / 2)
    s.lws *= 2;
  s.options = std::string("-DT=") + type_tag(t, s.device) + " -DACC_T=" + type_tag(acc, s.device) +
              op_option(op) + " -DLWS=" + std::to_string(s.lws) +
              " -DE=" + std::to_string(kPerItem);

  const int64_t d = self.dim() == 0 ? 0 : at::maybe_wrap_dim(dim, self.dim());
  int64_t outer = 1, inner = 1;
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  for (int64_t i = 0; i < d; ++i) outer *= self.size(i);
  for (int64_t i = d + 1; i < self.dim(); ++i) inner *= self.size(i);
  const int64_t tile = static_cast<int64_t>(s.lws) * kPerItem;
  const int64_t cus = std::max<int64_t>(1, info.compute_units);
  // Rows of contiguous elements go to work-groups that load them coalesced (tile route), on
  // GPUs; a CPU device (PoCL) runs the per-column route faster for them too: each work-item
  // streams its own chunk, with no barriers (measured 1e6-element cumsum: 26 ms tiled, ~2 ms
  // per column on PoCL, 2 cores).
  const bool use_tile = inner == 1 && n >= tile / 2 && device_profile(s.device).scan_tiles;

  // How many chunks the scanned dimension is cut into: enough work for the device when there
  // are few rows (or columns), each chunk still long enough to be worth its extra pass.
  int64_t chunk = n;
  if (use_tile) {
    const int64_t want_groups = 4 * cus;
    if (outer < want_groups && n > 4 * tile) {
      const int64_t C = std::min(ceil_div(want_groups, outer), ceil_div(n, 4 * tile));
      chunk = ceil_div(ceil_div(n, C), tile) * tile;
    }
  } else {
    const int64_t want_items = 4 * cus * static_cast<int64_t>(s.lws);
    const int64_t columns = outer * inner;
    if (columns < want_items && n > 256) {
      const int64_t C = std::min(ceil_div(want_items, columns), ceil_div(n, 64));
      chunk = ceil_div(n, C);
    }
  }
  const int64_t C = ceil_div(n, chunk);
  if (C > 1) {
    s.tot = at::empty({outer * C * inner}, self.options().dtype(acc));
    if (with_index(op)) s.tot_idx = at::empty({outer * C * inner}, self.options().dtype(at::kLong));
  }

  const size_t lws = s.lws;
  if (use_tile) {
    const size_t groups = static_cast<size_t>(outer * C);
    if (C > 1) {
      KernelLaunch r = s.start("reduce_tile");
      r.arg(static_cast<cl_ulong>(outer)).arg(static_cast<cl_ulong>(n));
      r.arg(static_cast<cl_ulong>(chunk));
      s.push_in(r);
      s.push_tot(r);
      r.enqueue1d(s.device, groups * lws, lws);
    }
  } else if (C > 1) {
    KernelLaunch r = s.start("reduce_seq");
    r.arg(static_cast<cl_ulong>(outer)).arg(static_cast<cl_ulong>(n));
    r.arg(static_cast<cl_ulong>(inner)).arg(static_cast<cl_ulong>(chunk));
    s.push_in(r);
    s.push_tot(r);
    r.enqueue1d(s.device, static_cast<size_t>(outer * C * inner), 64);
  }
  if (C > 1) {
    KernelLaunch t2 = s.start("scan_totals");
    t2.arg(static_cast<cl_ulong>(outer)).arg(static_cast<cl_ulong>(C));
    t2.arg(static_cast<cl_ulong>(inner));
    s.push_tot(t2);
    t2.enqueue1d(s.device, static_cast<size_t>(outer * inner), 64);
  }
  if (use_tile) {
    KernelLaunch l = s.start("scan_tile");
    l.arg(static_cast<cl_ulong>(outer)).arg(static_cast<cl_ulong>(n));
    l.arg(static_cast<cl_ulong>(chunk));
    s.push_in(l);
    s.push_out(l);
    s.push_tot(l);
    l.arg(static_cast<cl_int>(C > 1));
    l.enqueue1d(s.device, static_cast<size_t>(outer * C) * lws, lws);
  } else {
    KernelLaunch l = s.start("scan_seq");
    l.arg(static_cast<cl_ulong>(outer)).arg(static_cast<cl_ulong>(n));
    l.arg(static_cast<cl_ulong>(inner)).arg(static_cast<cl_ulong>(chunk));
    s.push_in(l);
    s.push_out(l);
    s.push_tot(l);
    l.arg(static_cast<cl_int>(C > 1));
    l.enqueue1d(s.device, static_cast<size_t>(outer * C * inner), 64);
  }
}

// Scans into `result` (any layout; a contiguous temporary is used when it is not contiguous or
// shares memory with self).
void scan_into(const at::Tensor& result, const at::Tensor& self, int64_t dim, ScanOp op,
               const at::Tensor& indices = {}) {
  const bool direct_values = result.is_contiguous() && !shares_memory(result, self);
  const bool direct_indices =
      !indices.defined() || (indices.is_contiguous() && !shares_memory(indices, self));
  const at::Tensor v = direct_values ? result : at::empty(self.sizes(), result.options());
  const at::Tensor i =
      !indices.defined() || direct_indices ? indices : at::empty(self.sizes(), indices.options());
  scan_along(self, dim, op, v, i);
  if (!direct_values) result.copy_(v);
  if (!direct_indices) indices.copy_(i);
}

// cumsum_stub / cumprod_stub: ATen's impl (impl_func_cum_ops) has handled 0-dim and empty
// tensors, wrapped dim and converted self to the result's dtype.
// The CPU's kernels take every dtype but bool (cumsum(dtype=torch.bool)).
void cumsum_kernel(const at::Tensor& result, const at::Tensor& self, int64_t dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(result.scalar_type() != at::kBool,
                              "\"cumsum_out_cpu\" not implemented for 'Bool'");
  if (result.is_complex()) {
    // The real and imaginary parts are summed independently: a real scan of the (..., 2) view,
    // along the same dim.
    const at::Tensor x = self.resolve_conj().resolve_neg();
    scan_into(at::view_as_real(result), at::view_as_real(x), dim, ScanOp::kSum);
    return;
  }
  scan_into(result, self, dim, ScanOp::kSum);
}
void cumprod_kernel(const at::Tensor& result, const at::Tensor& self, int64_t dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(result.scalar_type() != at::kBool,
                              "\"cumprod_out_cpu\" not implemented for 'Bool'");
  if (result.is_complex()) {
    // In polar form: the running products of the magnitudes and running sums of the angles.
    const at::Tensor x = self.resolve_conj().resolve_neg();
    at::Tensor mag =
        at::empty(self.sizes(), result.options().dtype(c10::toRealValueType(result.scalar_type())));
    at::Tensor ang = at::empty_like(mag);
    scan_into(mag, at::abs(x), dim, ScanOp::kProd);
    scan_into(ang, at::angle(x), dim, ScanOp::kSum);
    result.copy_(at::polar(mag, ang));
    return;
  }
  scan_into(result, self, dim, ScanOp::kProd);
}

// logcumsumexp_stub: like the CPU's kernel, it resizes result and handles 0-dim and empty
// tensors itself (ATen's _logcumsumexp_out_cpu calls it directly). logcumsumexp(out=) converts
// self to the out's dtype first; an internal _logcumsumexp.out call that does not is computed in
// the out's dtype (the CPU's kernel would write self's dtype into it).
void logcumsumexp_kernel(at::Tensor& result, const at::Tensor& self_in, int64_t dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      !self_in.is_complex() && !result.is_complex(),
      "torch-ocl: logcumsumexp of a complex tensor is not implemented on ",
      "the ocl device yet (docs/complex.md); compute it on the CPU (.cpu())");
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self_in.scalar_type()),
                              "\"logcumsumexp_out_cpu\" not implemented for '",
                              c10::toString(self_in.scalar_type()), "'");
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(result.scalar_type()),
                              "\"logcumsumexp_out_cpu\" not implemented for '",
                              c10::toString(result.scalar_type()), "'");
  const at::Tensor self = self_in.to(result.scalar_type());
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  if (result.sizes() != self.sizes()) at::native::resize_output(result, self.sizes());
  if (self.numel() == 0) return;
  if (self.dim() == 0) {
    result.fill_(self);
    return;
  }
  scan_into(result, self, d, ScanOp::kLogAddExp);
}

// _cummax_helper / _cummin_helper: ATen's composite cummax has checked and resized values and
// indices, handled 0-dim and empty tensors and wrapped dim.
void cummax_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  scan_into(values, self, dim, ScanOp::kMax, indices);
}
void cummin_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  scan_into(values, self, dim, ScanOp::kMin, indices);
}

using Cumsum = AtenStructured<at::native::structured_cumsum_out>;
using Cumprod = AtenStructured<at::native::structured_cumprod_out>;

}  // namespace

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(cumsum_stub, &torch_ocl::cumsum_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(cumprod_stub, &torch_ocl::cumprod_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(logcumsumexp_stub, &torch_ocl::logcumsumexp_kernel)
}  // namespace at::native

namespace torch_ocl {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cumsum", Cumsum::functional);
  m.impl("cumsum.out", Cumsum::out);
  m.impl("cumsum_", Cumsum::inplace);
  m.impl("cumprod", Cumprod::functional);
  m.impl("cumprod.out", Cumprod::out);
  m.impl("cumprod_", Cumprod::inplace);
  m.impl("_logcumsumexp", at::native::_logcumsumexp_cpu);
  m.impl("_logcumsumexp.out", at::native::_logcumsumexp_out_cpu);
  m.impl("_cummax_helper", cummax_helper);
  m.impl("_cummin_helper", cummin_helper);
}

}  // namespace torch_ocl
