// Nested tensors <-> padded dense tensors on ocl, with kernels/nested.cl:
//   strided layout: to_padded_tensor (NestedTensorPrivateUse1), _nested_from_padded,
//     _nested_tensor_from_mask and _nested_tensor_from_mask_left_aligned (dense PrivateUse1),
//     _nested_view_from_buffer (ATen's own, it only builds the view);
//   jagged layout (torch.nested's Python NJT): _jagged_to_padded_dense_forward and
//     _padded_dense_to_jagged_forward.
// The strided layout keeps its component sizes, strides and offsets on the host, so its
// kernels take them as a small metadata tensor copied to the device without a wait. A padded
// -> nested conversion from a mask has to learn the lengths (the output's size), so it reads
// them back: one host wait, as on the CPU and CUDA. The jagged layout keeps its offsets on the
// device and converts without a wait (unless total_L must be read, as on the CPU).
#include <ATen/NestedTensorImpl.h>
#include <ATen/ops/_nested_view_from_buffer_native.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/HostRead.h"
#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 256;
constexpr int64_t kMaxDims = 8;

// The bits of `value` converted to `dtype` (as the CPU converts it), as a kernel argument.
int64_t value_bits(double value, at::ScalarType dtype) {
  const at::Tensor v = at::scalar_tensor(value, at::TensorOptions().dtype(dtype));
  int64_t bits = 0;
  std::memcpy(&bits, v.const_data_ptr(), v.element_size());
  return bits;
}

std::string bits_options(size_t itemsize) { return std::string("-DE=") + bits_tag(itemsize); }

// The strided kernels' position arithmetic: 32-bit when the output is small enough.
std::string index_options(int64_t total) {
  return total < (int64_t(1) << 32) ? " -DIDX=uint" : " -DIDX=ulong";
}

at::Tensor to_device(const std::vector<int64_t>& host, const at::Device& device) {
  at::Tensor t =
      at::empty({static_cast<int64_t>(host.size())}, at::TensorOptions().dtype(at::kLong));
  std::copy(host.begin(), host.end(), t.mutable_data_ptr<int64_t>());
  return t.to(device);
}

// ---- strided layout ------------------------------------------------------------------------

at::Tensor to_padded_tensor_impl(const at::Tensor& self, double padding,
                                 at::OptionalIntArrayRef output_size) {
  const auto* nt = at::native::get_nested_tensor_impl(self);
  const at::Tensor& sizes = nt->get_nested_sizes();
  const at::Tensor& strides = nt->get_nested_strides();
  const at::Tensor buffer = nt->get_unsafe_storage_as_tensor();
  const int64_t n = sizes.dim() == 2 ? sizes.size(0) : 0;
  const int64_t k = sizes.dim() == 2 ? sizes.size(1) : 0;
  // Components of no dimension (or none at all): the buffer as it is, as on the CPU.
  if (n == 0 || k == 0) return nt->get_buffer().clone();
  TORCH_CHECK_NOT_IMPLEMENTED(k <= kMaxDims,
                              "torch-ocl: to_padded_tensor supports components of up to ", kMaxDims,
                              " dimensions, got ", k);
  std::vector<int64_t> padded(static_cast<size_t>(k + 1), 0);
  padded[0] = n;
  const int64_t* sz = sizes.const_data_ptr<int64_t>();
  const int64_t* st = strides.const_data_ptr<int64_t>();
  const int64_t* off = nt->get_storage_offsets().const_data_ptr<int64_t>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t d = 0; d < k; ++d) padded[d + 1] = std::max(padded[d + 1], sz[b * k + d]);
  if (output_size.has_value()) {
    const auto out = *output_size;
    TORCH_CHECK(static_cast<int64_t>(out.size()) == k + 1,
                "Length of output_size does not match NestedTensor dims. Broadcasting is not "
                "supported.");
    for (int64_t d = 0; d <= k; ++d) {
      TORCH_CHECK(out[d] >= padded[d],
                  "Value in output_size is less than NestedTensor padded size. Truncation is not "
                  "supported.");
      padded[d] = out[d];
    }
  }
  at::Tensor result = at::empty(padded, buffer.options());
  if (result.numel() == 0) return result;
  // meta: padded extents (less the batch), then per output batch row: offset, sizes, strides
  // (rows past the nested tensor's components, from output_size, are all padding).
  const int64_t words = 1 + 2 * k;
  std::vector<int64_t> meta(static_cast<size_t>(k + padded[0] * words), 0);
  for (int64_t d = 0; d < k; ++d) meta[d] = padded[d + 1];
  for (int64_t b = 0; b < n; ++b) {
    int64_t* c = meta.data() + k + b * words;
    c[0] = off[b];
    for (int64_t d = 0; d < k; ++d) {
      c[1 + d] = sz[b * k + d];
      c[1 + k + d] = st[b * k + d];
    }
  }
  c10::DeviceGuard guard(self.device());
  const int device = self.device().index();
  const at::Tensor m = to_device(meta, self.device());
  const std::string options = bits_options(buffer.itemsize()) + " -DNDIM=" + std::to_string(k) +
                              index_options(result.numel());
  KernelLaunch launch(get_kernel(device, "nested.cl", "nested_to_padded", options));
  const int64_t rows = result.numel() / padded[k];  // one work-item per row of the output
  launch.arg(static_cast<cl_ulong>(rows)).buffer(buffer_of(m), 8);
  launch.buffer(buffer_of(buffer), buffer.itemsize()).buffer(buffer_of(result), result.itemsize());
  launch.arg(static_cast<cl_long>(value_bits(padding, buffer.scalar_type())));
  launch.enqueue1d(device, static_cast<size_t>(rows), kLws);
  return result;
}

// The nested tensor of the components `sizes` (host, [n, k]) read from the front of each batch
// row of `source` ([n, ...], any strides). `source_sizes`, when not empty, are the component
// sizes as `source` spells them (more dims than `sizes`, same elements: the fused 0213 case).
at::Tensor from_padded(const at::Tensor& source, const at::Tensor& sizes,
                       const std::vector<int64_t>& source_sizes) {
  const int64_t n = sizes.size(0), k = sizes.size(1);
  const int64_t sk = source.dim() - 1;
  const int64_t* sz = sizes.const_data_ptr<int64_t>();
  std::vector<int64_t> starts(static_cast<size_t>(n + 1), 0);
  std::vector<int64_t> row_starts(static_cast<size_t>(n + 1), 0);
  std::vector<int64_t> comp(static_cast<size_t>(n * sk), 0);
  for (int64_t b = 0; b < n; ++b) {
    int64_t numel = 1;
    for (int64_t d = 0; d < k; ++d) numel *= sz[b * k + d];
    starts[b + 1] = starts[b] + numel;
    for (int64_t d = 0; d < sk; ++d) {
      const int64_t s = source_sizes.empty() ? sz[b * k + d] : source_sizes[b * sk + d];
      TORCH_CHECK(s <= source.size(d + 1), "_nested_from_padded: component ", b, " has size ", s,
                  " in dimension ", d + 1, " but the padded tensor only ", source.size(d + 1),
                  ": pass the sizes of the nested tensor the padded one was made from");
      comp[b * sk + d] = s;
    }
    const int64_t last = comp[b * sk + sk - 1];
    row_starts[b + 1] = row_starts[b] + (numel == 0 ? 0 : numel / last);
  }
  at::Tensor buffer = at::empty({starts[n]}, source.options());
  at::Tensor result = at::detail::make_tensor<at::native::NestedTensorImpl>(buffer, sizes.clone());
  if (starts[n] == 0) return result;
  c10::DeviceGuard guard(source.device());
  const int device = source.device().index();
  std::vector<int64_t> meta = row_starts;
  meta.insert(meta.end(), starts.begin(), starts.end());
  meta.insert(meta.end(), comp.begin(), comp.end());
  const at::Tensor m = to_device(meta, source.device());
  std::vector<int64_t> sstrides(source.strides().begin(), source.strides().end());
  const at::Tensor s = to_device(sstrides, source.device());
  const std::string options =
      bits_options(source.itemsize()) + " -DNDIM=" + std::to_string(sk) + index_options(starts[n]);
  KernelLaunch launch(get_kernel(device, "nested.cl", "padded_to_nested", options));
  // one work-item per row of a component
  launch.arg(static_cast<cl_ulong>(row_starts[n])).buffer(buffer_of(m), 8);
  launch.arg(static_cast<cl_ulong>(n)).buffer(buffer_of(s), 8);
  launch.buffer(buffer_of(source), source.itemsize()).buffer(buffer_of(buffer), buffer.itemsize());
  launch.enqueue1d(device, static_cast<size_t>(row_starts[n]), kLws);
  return result;
}

void check_sizes_tensor(const at::Tensor& sizes, const char* op) {
  TORCH_CHECK(sizes.device().is_cpu() && sizes.scalar_type() == at::kLong && sizes.dim() == 2, op,
              ": expected the nested sizes as a 2-d int64 CPU tensor (one row per component), "
              "got ",
              sizes.dim(), "-d ", sizes.scalar_type(), " on ", sizes.device());
}

at::Tensor nested_from_padded_impl(const at::Tensor& padded, const at::Tensor& sizes_,
                                   bool fuse_transform_0213) {
  check_sizes_tensor(sizes_, "_nested_from_padded");
  const at::Tensor sizes = sizes_.contiguous();
  const int64_t n = sizes.size(0), k = sizes.size(1);
  TORCH_CHECK(padded.size(0) == n || (padded.dim() >= 1 && n == 0),
              "_nested_from_padded: the padded tensor has ", padded.size(0),
              " batch rows but the sizes describe ", n, " components");
  TORCH_CHECK_NOT_IMPLEMENTED(padded.dim() <= kMaxDims + 1,
                              "torch-ocl: _nested_from_padded supports up to ", kMaxDims,
                              " dimensions per component");
  if (!fuse_transform_0213) {
    TORCH_CHECK(padded.dim() == k + 1, "_nested_from_padded: the padded tensor has ", padded.dim(),
                " dimensions, the components ", k, " (expected one more)");
    return from_padded(padded, sizes, {});
  }
  // [n, heads, T, head_dim] read as components [T_b, heads * head_dim].
  TORCH_CHECK(padded.dim() == 4 && k == 2,
              "_nested_from_padded with fuse_transform_0213 expects a 4-d padded tensor and 2-d "
              "components, got ",
              padded.dim(), "-d and ", k, "-d");
  const int64_t heads = padded.size(1), head_dim = padded.size(3);
  const int64_t* sz = sizes.const_data_ptr<int64_t>();
  std::vector<int64_t> source_sizes(static_cast<size_t>(n * 3));
  for (int64_t b = 0; b < n; ++b) {
    TORCH_CHECK(sz[b * 2 + 1] == heads * head_dim, "_nested_from_padded: component ", b, " has ",
                sz[b * 2 + 1], " columns, expected heads * head_dim = ", heads * head_dim);
    source_sizes[b * 3] = sz[b * 2];
    source_sizes[b * 3 + 1] = heads;
    source_sizes[b * 3 + 2] = head_dim;
  }
  return from_padded(padded.permute({0, 2, 1, 3}), sizes, source_sizes);
}

// Whether every row of `mask` ([n, T], true = keep) is a run of trues followed by falses.
at::Tensor gaps_in(const at::Tensor& mask) {
  if (mask.size(1) < 2) return at::zeros({}, mask.options().dtype(at::kLong));
  const at::Tensor m = mask.to(at::kBool);
  return m.narrow(1, 1, mask.size(1) - 1)
      .logical_and(m.narrow(1, 0, mask.size(1) - 1).logical_not())
      .any()
      .to(at::kLong);
}

void check_mask_shapes(const at::Tensor& t, const at::Tensor& mask, const char* op) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, op, ": expected a boolean mask, got ",
              mask.scalar_type());
  TORCH_CHECK(
      mask.dim() == 2 && t.dim() == 3 && t.size(0) == mask.size(0) && t.size(1) == mask.size(1), op,
      ": expected a [N, T, E] tensor and an [N, T] mask, got ", t.sizes(), " and ", mask.sizes());
  TORCH_CHECK(mask.device() == t.device(), op, ": expected the mask on ", t.device(), ", it is on ",
              mask.device());
}

bool nested_tensor_from_mask_left_aligned_impl(const at::Tensor& t, const at::Tensor& mask) {
  check_mask_shapes(t, mask, "_nested_tensor_from_mask_left_aligned");
  if (mask.numel() == 0) return true;
  const at::Tensor gaps = gaps_in(mask).reshape({1});
  return read_longs(gaps, "_nested_tensor_from_mask_left_aligned: the answer is a host bool")[0] ==
         0;
}

at::Tensor nested_tensor_from_mask_impl(const at::Tensor& t, const at::Tensor& mask,
                                        bool mask_check) {
  check_mask_shapes(t, mask, "_nested_tensor_from_mask");
  const int64_t n = t.size(0), e = t.size(2);
  std::vector<int64_t> lengths(static_cast<size_t>(n), 0);
  bool gaps = false;
  if (mask.numel() > 0) {
    at::Tensor counts = mask.sum(at::IntArrayRef{1}, false, at::kLong);
    if (mask_check) counts = at::cat({counts, gaps_in(mask).reshape({1})});
    const std::vector<int64_t> host =
        read_longs(counts.contiguous(), "_nested_tensor_from_mask: the lengths size the output");
    std::copy(host.begin(), host.begin() + n, lengths.begin());
    gaps = mask_check && host[n] != 0;
  }
  TORCH_CHECK(!gaps, "Mask must be left-aligned without gaps");
  at::Tensor sizes = at::empty({n, 2}, at::TensorOptions().dtype(at::kLong));
  int64_t* s = sizes.mutable_data_ptr<int64_t>();
  for (int64_t b = 0; b < n; ++b) {
    s[b * 2] = lengths[b];
    s[b * 2 + 1] = e;
  }
  return from_padded(t, sizes, {});
}

// ---- jagged layout ---------------------------------------------------------------------------

void check_offsets(const at::Tensor& values, at::TensorList offsets_list, const char* op) {
  TORCH_CHECK(offsets_list.size() == 1, op, ": only a single jagged dim is supported for now");
  const at::Tensor& offsets = offsets_list[0];
  TORCH_CHECK(offsets.dim() == 1, op,
              ": expected 1D offsets, but got offsets.dim() == ", offsets.dim());
  TORCH_CHECK(offsets.scalar_type() == at::kLong || offsets.scalar_type() == at::kInt, op,
              ": expected int64 or int32 offsets, got ", offsets.scalar_type());
  TORCH_CHECK(offsets.device() == values.device(), op, ": expected the offsets on ",
              values.device(), ", they are on ", offsets.device());
}

std::string jagged_options(const at::Tensor& data, const at::Tensor& offsets) {
  return bits_options(data.itemsize()) +
         " -DOFF_T=" + (offsets.scalar_type() == at::kLong ? "long" : "int");
}

at::Tensor jagged_to_padded_impl(const at::Tensor& values_, at::TensorList offsets_list,
                                 c10::SymIntArrayRef max_lengths, double padding) {
  const char* op = "_jagged_to_padded_dense_forward()";
  check_offsets(values_, offsets_list, op);
  TORCH_CHECK(max_lengths.size() == 1, op, ": only a single jagged dim is supported for now");
  TORCH_CHECK(values_.dim() >= 1, op, ": expected values of at least one dimension");
  const at::Tensor values = values_.contiguous();
  const at::Tensor offsets = offsets_list[0].contiguous();
  const int64_t batch = std::max<int64_t>(offsets.size(0) - 1, 0);
  const int64_t max_len = max_lengths[0].guard_int(__FILE__, __LINE__);
  std::vector<int64_t> shape{batch, max_len};
  shape.insert(shape.end(), values.sizes().begin() + 1, values.sizes().end());
  at::Tensor out = at::empty(shape, values.options());
  if (out.numel() == 0) return out;
  const int64_t inner = out.numel() / (batch * max_len);
  c10::DeviceGuard guard(values.device());
  const int device = values.device().index();
  KernelLaunch launch(
      get_kernel(device, "nested.cl", "jagged_to_padded", jagged_options(values, offsets)));
  launch.arg(static_cast<cl_ulong>(out.numel())).arg(static_cast<cl_ulong>(inner));
  launch.arg(static_cast<cl_ulong>(max_len)).buffer(buffer_of(offsets), offsets.itemsize());
  launch.buffer(buffer_of(values), values.itemsize()).buffer(buffer_of(out), out.itemsize());
  launch.arg(static_cast<cl_long>(value_bits(padding, values.scalar_type())));
  launch.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
  return out;
}

at::Tensor padded_to_jagged_impl(const at::Tensor& dense_, at::TensorList offsets_list,
                                 std::optional<c10::SymInt> total_L) {
  const char* op = "_padded_dense_to_jagged_forward()";
  check_offsets(dense_, offsets_list, op);
  TORCH_CHECK(dense_.dim() >= 2, op, ": expected a padded tensor of at least two dimensions");
  const at::Tensor dense = dense_.contiguous();
  const at::Tensor offsets = offsets_list[0].contiguous();
  const int64_t batch = std::max<int64_t>(offsets.size(0) - 1, 0);
  TORCH_CHECK(batch <= dense.size(0), op, ": ", batch, " offsets rows for a padded batch of ",
              dense.size(0));
  int64_t rows = 0;
  if (total_L.has_value()) {
    rows = total_L->guard_int(__FILE__, __LINE__);
  } else if (offsets.numel() > 0) {
    rows = read_longs(offsets.narrow(0, offsets.size(0) - 1, 1).to(at::kLong).contiguous(),
                      "_padded_dense_to_jagged_forward: total_L not given, the last offset "
                      "sizes the output")[0];
  }
  std::vector<int64_t> shape{rows};
  shape.insert(shape.end(), dense.sizes().begin() + 2, dense.sizes().end());
  at::Tensor values = at::empty(shape, dense.options());
  if (values.numel() == 0 || batch == 0) return values.zero_();
  const int64_t inner = values.numel() / rows;
  c10::DeviceGuard guard(dense.device());
  const int device = dense.device().index();
  KernelLaunch launch(
      get_kernel(device, "nested.cl", "padded_to_jagged", jagged_options(dense, offsets)));
  launch.arg(static_cast<cl_ulong>(values.numel())).arg(static_cast<cl_ulong>(inner));
  launch.arg(static_cast<cl_ulong>(dense.size(1))).arg(static_cast<cl_ulong>(batch));
  launch.buffer(buffer_of(offsets), offsets.itemsize());
  launch.buffer(buffer_of(dense), dense.itemsize()).buffer(buffer_of(values), values.itemsize());
  launch.enqueue1d(device, static_cast<size_t>(values.numel()), kLws);
  return values;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_nested_from_padded", nested_from_padded_impl);
  m.impl("_nested_tensor_from_mask", nested_tensor_from_mask_impl);
  m.impl("_nested_tensor_from_mask_left_aligned", nested_tensor_from_mask_left_aligned_impl);
  m.impl("_nested_view_from_buffer", at::native::_nested_view_from_buffer);
  m.impl("_jagged_to_padded_dense_forward", jagged_to_padded_impl);
  m.impl("_padded_dense_to_jagged_forward", padded_to_jagged_impl);
}

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("to_padded_tensor", to_padded_tensor_impl);
}

}  // namespace torch_ocl
