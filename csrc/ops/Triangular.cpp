// tril / triu (and their out= and in-place forms) with kernels/triangular.cl, registered
// through Structured.h: ATen's meta functions check the arguments and declare the result; the
// kernel copies the kept elements of the contiguous [batch, M, N] input as bits (every dtype
// the device holds) and zeroes the others. scaled_dot_product_attention's
// math path builds its causal mask with tril.
#include <ATen/ops/tril_meta.h>
#include <ATen/ops/triu_meta.h>
#include <torch/library.h>

#include <string>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 256;

template <bool kUpper>
void tri_kernel(const Outputs<1>& out, const at::Tensor& self, int64_t diagonal) {
  const at::Tensor& o = out[0];
  if (o.numel() == 0) return;
  const int device = o.device().index();
  // out may be self (in-place, contiguous): the kernel reads each element where it writes it.
  const at::Tensor in = self.is_same(o) ? o : self.contiguous();
  const uint64_t M = o.size(-2), N = o.size(-1), total = o.numel();
  std::string opts = std::string("-DT=") + bits_tag(o.itemsize()) + (kUpper ? " -DTRIU" : "");
  KernelLaunch l(get_kernel(device, "triangular.cl", "tri", opts));
  l.buffer(buffer_of(in), in.itemsize()).buffer(buffer_of(o), o.itemsize());
  l.arg(static_cast<cl_ulong>(total)).arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(N));
  l.arg(static_cast<cl_long>(diagonal));
  l.enqueue1d(device, total, kLws);
}

// Argument 0 (self) is read only at the element written: it may be the output (tril_).
using Tril = Structured<at::meta::structured_tril, tri_kernel<false>, 0>;
using Triu = Structured<at::meta::structured_triu, tri_kernel<true>, 0>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("tril", Tril::functional);
  m.impl("tril.out", Tril::out);
  m.impl("tril_", Tril::inplace);
  m.impl("triu", Triu::functional);
  m.impl("triu.out", Triu::out);
  m.impl("triu_", Triu::inplace);
}

}  // namespace torch_ocl
