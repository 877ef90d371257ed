// cat: ATen's meta kernel (run on meta tensors of the inputs) does what ATen does - the shape
// and dtype checks with the CPU's messages, type promotion, the out= dtype rules and the
// result's layout - and the inputs are then copied into their slices of the result on the
// device: all in one launch (kernels/foreach.cl cat_copy, through the multi-tensor tables of
// ops/MultiTensor.h) when the result and every input are dense in the same memory order (the
// default or channels-last) and of the result's dtype; otherwise one strided copy per non-empty
// input (the copies convert dtypes as needed).
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty_strided.h>
#include <torch/library.h>

#include <vector>

#include "ops/KernelTypes.h"
#include "ops/MultiTensor.h"
#include "ops/Structured.h"
#include "runtime/Allocator.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

// The dims of `out` from the outermost in memory to the innermost, if out is dense in the
// default or a channels-last order; empty otherwise.
std::vector<int64_t> memory_order(const at::Tensor& out) {
  std::vector<int64_t> perm(out.dim());
  for (int64_t i = 0; i < out.dim(); ++i) perm[i] = i;
  if (out.is_contiguous()) return perm;
  if (out.dim() == 4 && out.is_contiguous(at::MemoryFormat::ChannelsLast)) return {0, 2, 3, 1};
  if (out.dim() == 5 && out.is_contiguous(at::MemoryFormat::ChannelsLast3d)) return {0, 2, 3, 4, 1};
  return {};
}

// The non-empty inputs with their offsets along d, copied in one launch of cat_copy; false (and
// nothing done) when the layouts or dtypes do not allow it.
bool copy_slices_one_launch(const std::vector<at::Tensor>& parts,
                            const std::vector<int64_t>& offsets, int64_t d, at::Tensor& out) {
  // (16-byte elements have no kernel type: the general path takes them)
  if (parts.size() < 2 || out.itemsize() > 8) return false;
  const std::vector<int64_t> perm = memory_order(out);
  if (perm.empty()) return false;
  const int device = out.device().index();
  for (const at::Tensor& t : parts) {
    if (t.scalar_type() != out.scalar_type() || t.device() != out.device() ||
        !t.permute(perm).is_contiguous() || !mt_fits(t))
      return false;
  }
  // Memory order: `outer` rows of row_stride elements; input r is block_r = n_r * inner
  // elements of each row, from column offset_r * inner.
  const int64_t dp = std::find(perm.begin(), perm.end(), d) - perm.begin();
  int64_t inner = 1;
  for (size_t i = dp + 1; i < perm.size(); ++i) inner *= out.size(perm[i]);
  const int64_t row_stride = out.size(d) * inner;
  if (row_stride >= (int64_t{1} << 32)) return false;
  std::vector<std::array<uint32_t, 2>> words;
  words.reserve(parts.size());
  for (size_t r = 0; r < parts.size(); ++r)
    words.push_back({static_cast<uint32_t>(parts[r].size(d) * inner),
                     static_cast<uint32_t>(offsets[r] * inner)});
  const MtGeometry& geo = mt_geometry(device);
  const at::ScalarType bits = bits_dtype(out.itemsize());
  const std::string opts =
      std::string("-DCAT_COPY -DNLIST=1 -DSCALARLIST -DT=") + type_tag(bits, device) + geo.options;
  cl_kernel k = get_kernel(device, "foreach.cl", "cat_copy", opts);
  for (const MtBatch& b : mt_plan(device, {at::TensorList(parts)}, &words)) {
    KernelLaunch launch(k);
    mt_push(launch, b);
    launch.arg(static_cast<cl_uint>(geo.chunk()));
    launch.buffer(buffer_of(out), out.itemsize()).arg(static_cast<cl_ulong>(row_stride));
    launch.enqueue1d(device, static_cast<size_t>(b.chunks) * geo.lws, geo.lws);
  }
  return true;
}

// Copies every input into its slice of `out` (already of the result's shape and dtype).
void copy_slices(const std::vector<at::Tensor>& inputs, int64_t dim, at::Tensor& out) {
  // The per-slice copies would move an input of another device silently: the CPU's error.
  for (const at::Tensor& t : inputs) {
    TORCH_CHECK(t.device() == out.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                out.device(), " and ", t.device(), "!");
  }
  if (out.numel() == 0) return;
  const int64_t d = at::maybe_wrap_dim(dim, out.dim());
  std::vector<at::Tensor> parts;
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const at::Tensor& t : inputs) {
    // A 1-d empty tensor is skipped by cat whatever the other inputs' rank (legacy rule).
    if (t.dim() == 1 && t.numel() == 0 && out.dim() != 1) continue;
    const int64_t n = t.size(d);
    if (t.numel() > 0) {
      parts.push_back(t);
      offsets.push_back(offset);
    }
    offset += n;
  }
  if (copy_slices_one_launch(parts, offsets, d, out)) return;
  for (size_t r = 0; r < parts.size(); ++r)
    out.narrow(d, offsets[r], parts[r].size(d)).copy_(parts[r]);
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
