// cat: ATen's meta kernel (run on meta tensors of the inputs) does what ATen does - the shape
// and dtype checks with the CPU's messages, type promotion, the out= dtype rules and the
// result's layout - and each input is then copied into its slice of the result on the device
// (one strided copy per non-empty input; the copies convert dtypes as needed).
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty_strided.h>
#include <torch/library.h>

#include <vector>

#include "ops/Structured.h"

namespace torch_ocl {
namespace {

// Copies every input into its slice of `out` (already of the result's shape and dtype).
void copy_slices(const std::vector<at::Tensor>& inputs, int64_t dim, at::Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t d = at::maybe_wrap_dim(dim, out.dim());
  int64_t offset = 0;
  for (const at::Tensor& t : inputs) {
    // A 1-d empty tensor is skipped by cat whatever the other inputs' rank (legacy rule).
    if (t.dim() == 1 && t.numel() == 0 && out.dim() != 1) continue;
    const int64_t n = t.size(d);
    if (n > 0) out.narrow(d, offset, n).copy_(t);
    offset += n;
  }
}

std::vector<at::Tensor> materialize(const at::ITensorListRef& tensors) {
  std::vector<at::Tensor> v;
  for (const at::Tensor& t : tensors) v.push_back(t);
  return v;
}

std::vector<at::Tensor> metas_of(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> metas;
  metas.reserve(inputs.size());
  for (const at::Tensor& t : inputs) metas.push_back(meta_like(t));
  return metas;
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  const std::vector<at::Tensor> inputs = materialize(tensors);
  // The CPU's checks for the output: no overlap within it or with an input.
  at::assert_no_internal_overlap(out);
  for (const at::Tensor& t : inputs) at::assert_no_overlap(out, t);
  // The CPU's own wording and exception type (TypeError) for an out= it cannot cast into.
  if (!inputs.empty()) {
    TORCH_CHECK_TYPE(at::canCast(at::native::result_type(tensors), out.scalar_type()),
                     "torch.cat(): input types can't be cast to the desired output type ",
                     out.scalar_type());
  }
  at::Tensor meta_out = meta_like(out);
  at::cat_out(meta_out, metas_of(inputs), dim);
  at::native::resize_output(out, meta_out.sizes());
  copy_slices(inputs, dim, out);
  return out;
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  const std::vector<at::Tensor> inputs = materialize(tensors);
  const at::Tensor meta = at::cat(metas_of(inputs), dim);
  at::Tensor out = at::empty_strided(meta.sizes(), meta.strides(),
                                     inputs.front().options().dtype(meta.scalar_type()));
  copy_slices(inputs, dim, out);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", cat);
  m.impl("cat.out", cat_out);
}

}  // namespace torch_ocl
