// index_select (and so nn.Embedding's forward, which ATen builds on it) with kernels/index.cl.
// An out-of-range index is found by the kernel and raised at the next host wait.
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 256;
constexpr const char* kBadIndex = "index_select / embedding: an index is out of range in self";

// Checks the arguments and returns the result's sizes.
std::vector<int64_t> index_select_sizes(const at::Tensor& self, int64_t dim,
                                        const at::Tensor& index) {
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  TORCH_CHECK(index.device() == self.device(), "index_select(): expected index on ", self.device(),
              " like self, but it is on ", index.device());
  TORCH_CHECK(self.itemsize() <= 8, "index_select(): dtype ", self.scalar_type(),
              " is not supported on the ocl device yet");
  dim = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) sizes[dim] = index.numel();
  return sizes;
}

// out: contiguous, of index_select_sizes, sharing no memory with self or index.
void index_select_into(const at::Tensor& out, const at::Tensor& self, int64_t dim,
                       const at::Tensor& index) {
  if (out.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  dim = at::maybe_wrap_dim(dim, self.dim());
  const int64_t n_idx = index.numel();
  const at::Tensor src = self.contiguous();
  const int64_t src_dim = self.dim() > 0 ? self.size(dim) : 1;
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  const int device = self.device().index();
  const std::string options = std::string("-DT=") + bits_tag(self.itemsize()) +
                              " -DIDX_T=" + (index.scalar_type() == at::kLong ? "long" : "int");
  KernelLaunch launch(get_kernel(device, "index.cl", "index_select", options));
  launch.arg(static_cast<cl_ulong>(out.numel())).arg(static_cast<cl_ulong>(inner));
  launch.arg(static_cast<cl_ulong>(n_idx)).arg(static_cast<cl_long>(src_dim));
  launch.buffer(buffer_of(out), out.itemsize()).buffer(buffer_of(src), src.itemsize());
  launch.buffer(buffer_of(index), index.itemsize());
  launch.arg(static_cast<cl_long>(index.dim() ? index.stride(0) : 0));
  launch.arg(device_error_word(device)).arg(device_error_code(kBadIndex));
  launch.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
}

at::Tensor index_select_impl(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = at::empty(index_select_sizes(self, dim, index), self.options());
  index_select_into(out, self, dim, index);
  return out;
}

// Not structured in ATen: the shared out= path of Structured.h, with the CPU's wording, and an
// out that overlaps self or index raises as on the CPU.
at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             at::Tensor& out) {
  const std::vector<int64_t> sizes = index_select_sizes(self, dim, index);
  const at::Tensor work =
      prepare_out(out, sizes, self.options(), {&self, &index}, OnOverlap::kRaise,
                  "index_select(): self and result must have the same scalar type");
  index_select_into(work, self, dim, index);
  finish_out(out, work);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", index_select_impl);
  m.impl("index_select.out", index_select_out);
}

}  // namespace torch_ocl
