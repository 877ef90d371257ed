// unique (_unique2, _unique; dim=None) and unique_consecutive (dim=None) with kernels/unique.cl:
// sort (ops/Sort.h; unique always returns sorted values, as on CUDA), flag where runs of equal
// values start, scan the flags (cumsum, native), then scatter values, inverse and counts. The
// number of unique values is read back once: the result's size depends on the data.
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/unique_dim_consecutive.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <tuple>

#include "ops/HostRead.h"
#include "ops/KernelTypes.h"
#include "ops/Sort.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

std::string unique_options(at::ScalarType t, int device) {
  static const char* const kBits[] = {nullptr, "uchar", "ushort", nullptr, "uint",
                                      nullptr, nullptr, nullptr,  "ulong"};
  return std::string("-DT=") + type_tag(t, device) + " -DBITS_T=" + kBits[c10::elementSize(t)];
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_impl(const at::Tensor& self, bool sort,
                                                           bool return_inverse,
                                                           bool return_counts) {
  c10::DeviceGuard guard(self.device());
  const at::TensorOptions long_opts = self.options().dtype(at::kLong);
  at::Tensor inverse = at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0}, long_opts);
  const int64_t n = self.numel();
  if (n == 0) {
    return {at::empty({0}, self.options()), inverse, at::empty({0}, long_opts)};
  }
  const int device = self.device().index();
  const std::string options = unique_options(self.scalar_type(), device);
  at::Tensor values = self.reshape({-1}).contiguous();
  at::Tensor perm;
  if (sort) {
    at::Tensor v = at::empty({n}, self.options());
    perm = at::empty({n}, long_opts);
    sort_along(values, 0, false, v, perm);
    values = v;
  }
  const size_t item = values.itemsize();
  at::Tensor flags = at::empty({n}, long_opts);
  {
    KernelLaunch l(get_kernel(device, "unique.cl", "unique_flags", options));
    l.arg(static_cast<cl_ulong>(n)).buffer(buffer_of(values), item).buffer(buffer_of(flags), 8);
    l.enqueue1d(device, static_cast<size_t>(n), 64);
  }
  const at::Tensor pos = at::cumsum(flags, 0);
  // The one host wait: the number of unique values is the output's size.
  const int64_t runs =
      read_longs(pos.narrow(0, n - 1, 1), "unique (the result's size depends on the data)")[0];
  at::Tensor out = at::empty({runs}, self.options());
  at::Tensor counts = at::empty({return_counts ? runs : 0}, long_opts);
  at::Tensor starts = return_counts ? at::empty({runs}, long_opts) : flags;  // flags: unused
  {
    KernelLaunch l(get_kernel(device, "unique.cl", "unique_scatter", options));
    l.arg(static_cast<cl_ulong>(n)).buffer(buffer_of(values), item).buffer(buffer_of(pos), 8);
    l.buffer(buffer_of(sort ? perm : pos), 8).buffer(buffer_of(out), item);
    l.buffer(buffer_of(starts), 8).buffer(buffer_of(return_inverse ? inverse : pos), 8);
    l.arg(static_cast<cl_int>(sort)).arg(static_cast<cl_int>(return_inverse));
    l.arg(static_cast<cl_int>(return_counts));
    l.enqueue1d(device, static_cast<size_t>(n), 64);
  }
  if (return_counts) {
    KernelLaunch l(get_kernel(device, "unique.cl", "unique_counts", options));
    l.arg(static_cast<cl_ulong>(runs)).arg(static_cast<cl_ulong>(n));
    l.buffer(buffer_of(starts), 8).buffer(buffer_of(counts), 8);
    l.enqueue1d(device, static_cast<size_t>(runs), 64);
  }
  return {out, inverse, counts};
}

// torch.unique(dim=None): values always sorted (as on CUDA; the CPU's sorted=False order is
// unspecified).
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool /*sorted*/,
                                                       bool return_inverse, bool return_counts) {
  return unique_impl(self, true, return_inverse, return_counts);
}

std::tuple<at::Tensor, at::Tensor> unique(const at::Tensor& self, bool /*sorted*/,
                                          bool return_inverse) {
  auto [out, inverse, counts] = unique_impl(self, true, return_inverse, false);
  return {out, inverse};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(const at::Tensor& self,
                                                                  bool return_inverse,
                                                                  bool return_counts,
                                                                  std::optional<int64_t> dim) {
  // Along a dimension (slices compared whole) it is unique_dim_consecutive, as on the CPU; that
  // one is not native, so it takes the CPU fallback (TORCH_OCL_FALLBACK).
  if (dim && !(*dim == 0 && self.dim() == 1))
    return at::unique_dim_consecutive(self, *dim, return_inverse, return_counts);
  return unique_impl(self, false, return_inverse, return_counts);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_unique2", unique2);
  m.impl("_unique", unique);
  m.impl("unique_consecutive", unique_consecutive);
}

}  // namespace torch_ocl
