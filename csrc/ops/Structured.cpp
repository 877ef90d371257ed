// The shared out= checks of ops/Structured.h.
#include "ops/Structured.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>

namespace torch_ocl {

void check_out_dtype_device(const at::Tensor& out, const at::TensorOptions& options,
                            const char* dtype_message) {
  if (dtype_message) {
    TORCH_CHECK(options.dtype() == out.dtype(), dtype_message);
  } else {
    TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ",
                options.dtype(), ", but got ", out.dtype(), " instead");
  }
  TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ",
              options.device(), ", but got ", out.device(), " instead");
}

void resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::IntArrayRef strides,
                const at::TensorOptions& options) {
  check_out_dtype_device(out, options);
  if (at::native::resize_output(out, sizes)) {
    // Only a tensor that was resized takes the requested layout; otherwise its own strides stay.
    if (!strides.empty()) {
      out.as_strided_(sizes, strides);
    } else if (const auto format = options.memory_format_opt()) {
      out.unsafeGetTensorImpl()->empty_tensor_restride(*format);
    }
  }
  at::assert_no_internal_overlap(out);
}

void check_inplace(const at::Tensor& self, at::IntArrayRef sizes,
                   const at::TensorOptions& options) {
  TORCH_CHECK(options.dtype() == self.dtype(), "Bad in-place call: input tensor dtype ",
              self.dtype(), " and output tensor dtype ", options.dtype(), " should match");
  TORCH_CHECK(options.device() == self.device(), "Bad in-place call: input tensor device ",
              self.device(), " and output tensor device ", options.device(), " should match");
  TORCH_CHECK(sizes == self.sizes(), "Bad in-place call: input tensor size ", self.sizes(),
              " and output tensor size ", sizes, " should match");
  at::assert_no_internal_overlap(self);
}

namespace {
// No, Full, Partial, or TooHard (strided tensors of one storage).
at::MemOverlapStatus overlap_status(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0)
    return at::MemOverlapStatus::No;
  if (a.is_same(b)) return at::MemOverlapStatus::Full;
  if (a.device() != b.device() || !a.has_storage() || !b.has_storage() ||
      !a.storage().is_alias_of(b.storage()))
    return at::MemOverlapStatus::No;
  return at::get_overlap_status(a, b);
}
}  // namespace

at::Tensor meta_like(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
}

bool shares_memory(const at::Tensor& a, const at::Tensor& b) {
  return overlap_status(a, b) != at::MemOverlapStatus::No;
}

namespace {
bool same_layout(const at::Tensor& a, const at::Tensor& b) {
  return a.is_same(b) ||
         (a.storage().is_alias_of(b.storage()) && a.storage_offset() == b.storage_offset() &&
          a.sizes() == b.sizes() && a.strides() == b.strides() && a.dtype() == b.dtype());
}
}  // namespace

at::Tensor working_output(const at::Tensor& out, const std::vector<const at::Tensor*>& inputs,
                          const at::Tensor* same_position, OnOverlap on_overlap) {
  bool direct = out.is_contiguous();
  for (const at::Tensor* in : inputs) {
    if (same_position == in && same_layout(out, *in)) continue;
    const at::MemOverlapStatus status = overlap_status(out, *in);
    if (status == at::MemOverlapStatus::No) continue;
    // As at::assert_no_overlap: raise when the overlap is certain, compute safely when unsure.
    TORCH_CHECK(on_overlap == OnOverlap::kTemporary || status == at::MemOverlapStatus::TooHard,
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.");
    direct = false;
  }
  if (direct) return out;
  return at::empty(out.sizes(), out.options().memory_format(at::MemoryFormat::Contiguous));
}

void finish_out(const at::Tensor& out, const at::Tensor& work) {
  if (!work.is_same(out)) out.copy_(work);
}

void check_out(const at::Tensor& out, at::IntArrayRef sizes, const at::TensorOptions& options,
               std::initializer_list<const at::Tensor*> inputs, OnOverlap on_overlap,
               const char* dtype_message) {
  check_out_dtype_device(out, options, dtype_message);
  at::native::resize_output(out, sizes);
  at::assert_no_internal_overlap(out);
  if (on_overlap == OnOverlap::kRaise) {
    for (const at::Tensor* in : inputs) {
      if (in && in->defined()) at::assert_no_overlap(out, *in);
    }
  }
}

at::Tensor prepare_out(const at::Tensor& out, at::IntArrayRef sizes,
                       const at::TensorOptions& options,
                       std::initializer_list<const at::Tensor*> inputs, OnOverlap on_overlap,
                       const char* dtype_message) {
  check_out(out, sizes, options, inputs, on_overlap, dtype_message);
  return working_output(out, std::vector<const at::Tensor*>(inputs));
}

namespace structured_detail {

void check_input_devices(const std::vector<const at::Tensor*>& inputs) {
  const at::Tensor* first = nullptr;
  for (const at::Tensor* t : inputs) {
    if (t->dim() == 0 && t->device().is_cpu()) continue;
    if (first == nullptr) {
      first = t;
      continue;
    }
    TORCH_CHECK(t->device() == first->device(),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                first->device(), " and ", t->device(),
                "! (torch-ocl: move them to one device, "
                "e.g. with .to(\"ocl\"))");
  }
}

at::Tensor allocate_output(at::IntArrayRef sizes, at::IntArrayRef strides,
                           const at::TensorOptions& options) {
  if (strides.empty()) return at::empty(sizes, options);
  return at::empty_strided(sizes, strides, options.memory_format(std::nullopt));
}

}  // namespace structured_detail

}  // namespace torch_ocl
