// masked_select and nonzero with kernels/compact.cl: count the selected items per work-group,
// read the counts back (the one host wait: the result's size depends on the data, as on CUDA),
// turn them into offsets on the host, then write the items in order. nonzero_static (a result of
// fixed size) needs no host wait: it is composed of native ops (a running count of the nonzero
// elements gives each one its row, index_put_ writes the coordinates).
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index_put.h>
#include <ATen/ops/where.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <utility>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "profiler/Record.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/OclApi.h"
#include "runtime/Program.h"
#include "runtime/Stream.h"
#include "runtime/Sync.h"

namespace torch_ocl {
namespace {

// How the flags are split among work-groups (see kernels/compact.cl).
struct Plan {
  int device = 0;
  size_t lws = 1;
  int64_t n = 0, groups = 1, chunk = 0;
  std::string options;  // -DFLAG_T=... -DLWS=...
};

Plan plan_for(const at::Tensor& flags) {
  Plan p;
  p.device = flags.device().index();
  const DeviceInfo& info = device_info(p.device);
  while (p.lws * 2 <= std::min<size_t>(256, info.max_work_group)) p.lws *= 2;
  p.n = flags.numel();
  // Enough groups to fill the device, each scanning a few tiles of lws flags.
  const int64_t lws = static_cast<int64_t>(p.lws);
  const int64_t max_groups = std::max<int64_t>(64, 8 * static_cast<int64_t>(info.compute_units));
  p.groups = std::clamp<int64_t>((p.n + lws * 4 - 1) / (lws * 4), 1, max_groups);
  p.chunk = (p.n + p.groups - 1) / p.groups;
  p.options = std::string("-DFLAG_T=") + type_tag(flags.scalar_type(), p.device) +
              " -DLWS=" + std::to_string(p.lws);
  return p;
}

KernelLaunch start(const Plan& p, const char* kernel, const std::string& options,
                   const at::Tensor& flags) {
  KernelLaunch launch(get_kernel(p.device, "compact.cl", kernel, options));
  launch.arg(static_cast<cl_ulong>(p.n)).arg(static_cast<cl_ulong>(p.chunk));
  launch.buffer(buffer_of(flags), flags.itemsize());
  return launch;
}

void finish(KernelLaunch& launch, const Plan& p) {
  launch.enqueue1d(p.device, static_cast<size_t>(p.groups) * p.lws, p.lws);
}

// Counts the non-zero flags of every group and returns the groups' exclusive prefix sums (on
// the device) and the total (on the host). `flags` is contiguous.
std::pair<at::Tensor, int64_t> offsets_of(const at::Tensor& flags, const Plan& p, const char* op) {
  at::Tensor counts = at::empty({p.groups}, flags.options().dtype(at::kLong));
  {
    KernelLaunch launch = start(p, "count_blocks", p.options, flags);
    launch.buffer(buffer_of(counts), counts.itemsize());
    finish(launch, p);
  }
  at::Tensor host = at::empty({p.groups}, counts.options().device(at::kCPU));
  const BufferRef b = buffer_of(counts);
  cl_command_queue q = current_queue(p.device);
  HostWait wait(op);
  profiler::Recorder rec;
  OCL_CHECK(cl().clEnqueueReadBuffer(q, b.mem, CL_TRUE, b.offset, counts.nbytes(), host.data_ptr(),
                                     0, nullptr, rec.event()));
  rec.copy(profiler::CommandKind::kCopyD2H, p.device, current_stream(p.device).id(),
           counts.nbytes());
  check_device_errors(current_stream(p.device));
  int64_t* v = host.data_ptr<int64_t>();
  int64_t total = 0;
  for (int64_t g = 0; g < p.groups; ++g) {
    const int64_t c = v[g];
    v[g] = total;
    total += c;
  }
  return {host.to(flags.device()), total};
}

at::Tensor masked_select_impl(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  TORCH_CHECK(self.device() == mask.device(),
              "masked_select: expected self and mask to be on the same device, but got mask on ",
              mask.device(), " and self on ", self.device());
  c10::DeviceGuard guard(self.device());
  auto [s_exp, m_exp] = at::expand_outplace(self, mask);
  const at::Tensor src = s_exp->contiguous();
  const at::Tensor flags = m_exp->contiguous();
  if (flags.numel() == 0) return at::empty({0}, self.options());
  const Plan p = plan_for(flags);
  const char* why = "masked_select (the result's size depends on the mask)";
  auto [offsets, total] = offsets_of(flags, p, why);
  at::Tensor out = at::empty({total}, self.options());
  if (total == 0) return out;
  KernelLaunch launch =
      start(p, "compact", p.options + " -DSELECT_T=" + bits_tag(src.itemsize()), flags);
  launch.buffer(buffer_of(offsets), offsets.itemsize());
  launch.buffer(buffer_of(out), out.itemsize());
  launch.buffer(buffer_of(src), src.itemsize());
  finish(launch, p);
  return out;
}

// Not structured in ATen; the result's size depends on the data, so the shared out= checks of
// Structured.h run once it is known (CPU wording; an out overlapping an input raises as there).
at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  check_out_dtype_device(out, self.options(),
                         "masked_select(): self and result must have the same scalar type");
  at::Tensor r = masked_select_impl(self, mask);
  check_out(out, r.sizes(), self.options(), {&self, &mask}, OnOverlap::kRaise);
  out.copy_(r);
  return out;
}

at::Tensor nonzero_impl(const at::Tensor& self) {
  TORCH_CHECK(self.dim() <= 8, "nonzero: tensors of more than 8 dimensions are not supported on ",
              "the ocl device yet (got ", self.dim(), ")");
  c10::DeviceGuard guard(self.device());
  const int64_t ndim = self.dim();
  // (a complex element is nonzero when either part is: its flag is computed first)
  const at::Tensor flags = (self.is_complex() ? self.ne(0) : self).contiguous();
  if (flags.numel() == 0) return at::empty({0, ndim}, self.options().dtype(at::kLong));
  const Plan p = plan_for(flags);
  const char* why = "nonzero (the result's size depends on the data)";
  auto [offsets, total] = offsets_of(flags, p, why);
  at::Tensor out = at::empty({total, ndim}, self.options().dtype(at::kLong));
  if (total == 0 || ndim == 0) return out;
  cl_long8 sizes{};
  for (int64_t d = 0; d < ndim; ++d) sizes.s[d] = self.size(ndim - 1 - d);  // innermost first
  KernelLaunch launch =
      start(p, "compact", p.options + " -DINDEX_NDIM=" + std::to_string(ndim), flags);
  launch.buffer(buffer_of(offsets), offsets.itemsize());
  launch.buffer(buffer_of(out), out.itemsize());
  launch.arg(sizes);
  finish(launch, p);
  return out;
}

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  const at::TensorOptions options = self.options().dtype(at::kLong);
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero: Expected out tensor to have scalar type Long but got scalar type",
              out.scalar_type());
  at::Tensor r = nonzero_impl(self);
  check_out(out, r.sizes(), options, {&self}, OnOverlap::kRaise);
  out.copy_(r);
  return out;
}

// The coordinates of the first `size` nonzero elements of self in row-major order (size x
// self.dim(), int64), the rows past the last nonzero element filled with fill_value.
at::Tensor nonzero_static_impl(const at::Tensor& self, int64_t size, int64_t fill_value) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  const int64_t nd = self.dim(), n = self.numel();
  const auto opts = self.options().dtype(at::kLong);
  // One row more than asked: the elements past the first `size` nonzero ones write their
  // coordinates there, and it is dropped.
  at::Tensor out = at::full({size + 1, nd}, fill_value, opts);
  if (n > 0 && size > 0 && nd > 0) {
    const at::Tensor flags = self.ne(0).reshape({n});
    const at::Tensor pos = at::cumsum(flags, 0, at::kLong).sub_(1);
    const at::Tensor rows = at::where(flags.logical_and(pos.lt(size)), pos, size);
    at::Tensor flat = at::arange(n, opts);
    at::Tensor coords = at::empty({n, nd}, opts);
    for (int64_t d = nd - 1; d >= 0; --d) {
      coords.select(1, d).copy_(flat.remainder(self.size(d)));
      if (d > 0) flat = flat.div(self.size(d), "floor");
    }
    out.index_put_({rows}, coords);
  }
  return out.narrow(0, 0, size);
}

at::Tensor& nonzero_static_out(const at::Tensor& self, int64_t size, int64_t fill_value,
                               at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero_static: Expected out tensor to have scalar type Long but got scalar type",
              out.scalar_type());
  const at::Tensor r = nonzero_static_impl(self, size, fill_value);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero_static", nonzero_static_impl);
  m.impl("nonzero_static.out", nonzero_static_out);
  m.impl("masked_select", masked_select_impl);
  m.impl("masked_select.out", masked_select_out);
  m.impl("nonzero", nonzero_impl);
  m.impl("nonzero.out", nonzero_out);
}

}  // namespace torch_ocl
