// torch.hash_tensor (mode 0, the XOR of the elements' 64-bit patterns) with
// kernels/hash_tensor.cl. Structured in ATen: ATen's meta class checks the dims and declares the
// uint64 result (Structured.h); the kernel reduces the input with the reduced dimensions moved
// last. Every dtype the CPU hashes except complex.
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/ops/hash_tensor_meta.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

void hash_kernel(const Outputs<1>& out, const at::Tensor& self, at::IntArrayRef dim,
                 bool /*keepdim*/, int64_t mode) {
  TORCH_CHECK(mode == 0, "Unknown hash_tensor mode: ", mode);
  const at::Tensor& result = out[0];
  if (result.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  const int device = self.device().index();
  const int64_t nd = self.dim();
  std::vector<int64_t> kept, reduced;
  if (dim.empty()) {
    for (int64_t d = 0; d < nd; ++d) reduced.push_back(d);
  } else {
    const auto mask = at::dim_list_to_bitset(dim, nd);
    for (int64_t d = 0; d < nd; ++d) (mask[d] ? reduced : kept).push_back(d);
  }
  std::vector<int64_t> order(kept);
  order.insert(order.end(), reduced.begin(), reduced.end());
  int64_t inner = 1;
  for (int64_t d : reduced) inner *= self.size(d);
  const at::Tensor x = (nd == 0 ? self : self.permute(order)).contiguous();
  const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
  const at::ScalarType t = x.scalar_type();
  std::string options = std::string("-DT=") + type_tag(t, device);
  if (t == at::kDouble)
    options += " -DHT_DOUBLE";
  else if (at::isFloatingType(t))
    options += " -DHT_FLOATING";
  KernelLaunch l(get_kernel(device, "hash_tensor.cl", "hash_xor", options));
  l.arg(static_cast<cl_ulong>(outer)).arg(static_cast<cl_ulong>(inner));
  l.buffer(buffer_of(x), x.itemsize()).buffer(buffer_of(result), 8);
  l.enqueue1d(device, static_cast<size_t>(outer), 64);
}

using HashTensor = Structured<at::meta::structured_hash_tensor, hash_kernel>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("hash_tensor", HashTensor::functional);
  m.impl("hash_tensor.out", HashTensor::out);
}

}  // namespace torch_ocl
