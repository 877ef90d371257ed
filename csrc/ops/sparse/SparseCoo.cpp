// Sparse COO tensors on ocl (SparsePrivateUse1), and the dense <-> sparse conversions.
//
// A COO tensor is an indices tensor ([sparse_dim, nnz], int64) and a values tensor ([nnz,
// dense dims...]) on the device, plus sizes. ATen's SparseCPU/SparseCUDA functions that only
// rearrange those two tensors with other ops (construction, accessors, clone, copy, resize,
// unary ops on the values, to_dense through add_, sum, conversions to CSR, the sparse x dense
// products through addmm, ...) are registered for ocl as they are. Written here:
//   _coalesce   sort by linear index (the device's stable sort), count the runs (the one host
//               wait: the result's nnz, as on CUDA), sum each run with kernels/sparse.cl's
//               segment_sum in a fixed order;
//   add.out     dense + sparse: index_put_ with accumulate on the device; sparse + sparse: the
//               entries of both, uncoalesced (as CUDA does);
//   the index conversions COO <-> CSR (searchsorted on the device);
//   dense -> hybrid COO (ATen's goes through unique_dim), sparse_mask and mul by a scalar or a
//   dense tensor (gathers with index).
#include <ATen/SparseTensorImpl.h>
#include <ATen/native/SparseTensorUtils.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_dimI_native.h>
#include <ATen/ops/_dimV_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_sparse_mask_projection_native.h>
#include <ATen/ops/_to_dense_native.h>
#include <ATen/ops/_to_sparse_csr_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/abs_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/permute_native.h>
#include <ATen/ops/pow_native.h>
#include <ATen/ops/relu_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_mask_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sum_native.h>
#include <ATen/ops/unique_consecutive.h>
#include <ATen/ops/unsqueeze_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/accumulate.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 256;

// The row-major position of each entry of `flat` (int64 over the product of `sizes`) as a
// [len(sizes), n] indices tensor.
at::Tensor unravel(const at::Tensor& flat, at::IntArrayRef sizes) {
  std::vector<at::Tensor> rows;
  int64_t stride = 1;
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  for (size_t d = 0; d < sizes.size(); ++d)
    rows.push_back(flat.div(strides[d], "floor").remainder(sizes[d]));
  return at::stack(rows);
}

// dense -> COO with `sparse_dim` sparse dims. All dims sparse: ATen's own (nonzero on the
// device). Hybrid (trailing dense dims): a position is kept when any element of its dense block
// is non-zero, as on the CPU (which gets there through unique_dim).
at::Tensor dense_to_sparse_impl(const at::Tensor& self, int64_t sparse_dim) {
  const int64_t dims = self.dim();
  TORCH_CHECK(sparse_dim > 0 || dims == 0, "sparse_dim must be >0 if dimensionality > 0");
  TORCH_CHECK(sparse_dim <= dims, "sparse_dim must be less than or equal to self.dim()");
  if (sparse_dim == dims) return at::native::dense_to_sparse(self, sparse_dim);
  const at::IntArrayRef sparse_sizes = self.sizes().slice(0, sparse_dim);
  const at::IntArrayRef dense_sizes = self.sizes().slice(sparse_dim);
  at::Tensor blocks = self.reshape({-1, c10::multiply_integers(dense_sizes)});
  at::Tensor keep = blocks.ne(0).any(1);
  const at::Tensor flat = keep.nonzero().select(1, 0);
  const at::Tensor indices = unravel(flat, sparse_sizes);
  std::vector<int64_t> value_shape{flat.size(0)};
  value_shape.insert(value_shape.end(), dense_sizes.begin(), dense_sizes.end());
  const at::Tensor values = blocks.index_select(0, flat).view(value_shape);
  return at::_sparse_coo_tensor_with_dims_and_tensors(
      sparse_dim, dims - sparse_dim, self.sizes(), indices, values,
      self.options().layout(at::kSparse), /*is_coalesced=*/true);
}

// self's values at mask's positions, with mask's indices (self dense, or sparse: through
// to_dense).
at::Tensor sparse_mask_impl(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.sizes().equals(self.sizes()),
              "sparse_mask(): operands have incompatible "
              "sizes; self has size ",
              self.sizes(), " but mask has size ", mask.sizes());
  TORCH_CHECK(mask.is_sparse(), "sparse_mask(): expected a sparse COO mask, got ", mask.layout());
  const at::Tensor dense = self.is_sparse() ? self.to_dense() : self;
  const at::Tensor idx = mask._indices();
  c10::List<std::optional<at::Tensor>> index;
  for (int64_t d = 0; d < mask.sparse_dim(); ++d) index.push_back(idx.select(0, d));
  const at::Tensor values =
      mask._nnz() == 0 ? at::empty(mask._values().sizes(), dense.options()) : dense.index(index);
  return at::_sparse_coo_tensor_with_dims_and_tensors(
      mask.sparse_dim(), mask.dense_dim(), mask.sizes(), idx.clone(), values,
      mask.options().dtype(self.scalar_type()), mask.is_coalesced());
}

at::Tensor coalesce_impl(const at::Tensor& self) {
  const int64_t nnz = self._nnz();
  const int64_t sparse_dim = self.sparse_dim(), dense_dim = self.dense_dim();
  const at::Tensor indices = self._indices(), values = self._values();
  if (self.is_coalesced()) return self;
  if (nnz < 2) {
    return at::_sparse_coo_tensor_with_dims_and_tensors(
        sparse_dim, dense_dim, self.sizes(), indices.clone(), values.clone(), self.options(),
        /*is_coalesced=*/true);
  }
  c10::DeviceGuard guard(self.device());
  // Linear index of every entry (row-major over the sparse dims), sorted stably.
  std::vector<int64_t> strides(static_cast<size_t>(sparse_dim), 1);
  for (int64_t d = sparse_dim - 2; d >= 0; --d) strides[d] = strides[d + 1] * self.size(d + 1);
  const at::Tensor strides_dev =
      at::tensor(strides, at::TensorOptions().dtype(at::kLong)).to(self.device());
  const at::Tensor linear = indices.mul(strides_dev.view({sparse_dim, 1})).sum(0);
  auto [sorted, perm] = linear.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false);
  auto [unique, inverse, counts] =
      at::unique_consecutive(sorted, /*return_inverse=*/false, /*return_counts=*/true);
  const int64_t runs = unique.size(0);
  const at::Tensor starts =
      at::cat({at::zeros({1}, counts.options()), counts.cumsum(0)}).contiguous();
  std::vector<at::Tensor> rows;
  rows.reserve(static_cast<size_t>(sparse_dim));
  for (int64_t d = 0; d < sparse_dim; ++d)
    rows.push_back(unique.div(strides[d], "floor").remainder(self.size(d)));
  const at::Tensor new_indices = at::stack(rows);
  std::vector<int64_t> value_shape(values.sizes().begin(), values.sizes().end());
  value_shape[0] = runs;
  at::Tensor new_values = at::empty(value_shape, values.options());
  const at::Tensor v = values.contiguous();
  const int64_t inner = runs == 0 ? 0 : new_values.numel() / runs;
  if (new_values.numel() > 0) {
    const int device = self.device().index();
    const std::string options =
        std::string("-DT=") + type_tag(v.scalar_type(), device) + " -DIDX_T=long";
    const at::Tensor p = perm.contiguous();
    KernelLaunch launch(get_kernel(device, "sparse.cl", "segment_sum", options));
    launch.arg(static_cast<cl_ulong>(new_values.numel())).arg(static_cast<cl_ulong>(inner));
    launch.buffer(buffer_of(starts), 8).buffer(buffer_of(p), 8);
    launch.buffer(buffer_of(v), v.itemsize()).buffer(buffer_of(new_values), v.itemsize());
    launch.enqueue1d(device, static_cast<size_t>(new_values.numel()), kLws);
  }
  return at::_sparse_coo_tensor_with_dims_and_tensors(sparse_dim, dense_dim, self.sizes(),
                                                      new_indices, new_values, self.options(),
                                                      /*is_coalesced=*/true);
}

// out = self + alpha * other for the layouts ATen's sparse add takes.
at::Tensor& add_out_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha,
                         at::Tensor& out) {
  TORCH_CHECK(self.sizes() == other.sizes(),
              "add: expected 'self' and 'other' to have same size, "
              "but self has size ",
              self.sizes(), " while other has size ", other.sizes(),
              " (FYI: op2-sparse addition does not currently support broadcasting)");
  if (!self.is_sparse() && other.is_sparse()) {
    TORCH_CHECK(!out.is_sparse(), "add: expected a dense result for dense + sparse");
    if (!out.is_same(self)) {
      out.resize_(self.sizes());
      out.copy_(self);
    }
    const int64_t sparse_dim = other.sparse_dim();
    if (other._nnz() == 0) return out;
    const at::Tensor idx = other._indices();
    c10::List<std::optional<at::Tensor>> index;
    for (int64_t d = 0; d < sparse_dim; ++d) index.push_back(idx.select(0, d));
    at::Tensor vals = other._values().to(out.scalar_type());
    if (!(alpha.isIntegral(true) && alpha.toLong() == 1)) vals = vals.mul(alpha);
    out.index_put_(index, vals, /*accumulate=*/true);
    return out;
  }
  TORCH_CHECK(self.is_sparse() && other.is_sparse(),
              "add(sparse, dense) is not supported. Use add(dense, sparse) instead.");
  TORCH_CHECK(out.is_sparse(), "add: expected a sparse result for sparse + sparse");
  TORCH_CHECK(self.sparse_dim() == other.sparse_dim() && self.dense_dim() == other.dense_dim(),
              "add: expected both sparse tensors to have the same sparse and dense dims, got ",
              self.sparse_dim(), "/", self.dense_dim(), " and ", other.sparse_dim(), "/",
              other.dense_dim());
  at::Tensor other_values = other._values().to(out.scalar_type());
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1)) other_values = other_values.mul(alpha);
  const at::Tensor indices = at::cat({self._indices(), other._indices()}, 1);
  const at::Tensor values = at::cat({self._values().to(out.scalar_type()), other_values}, 0);
  out.sparse_resize_(self.sizes(), self.sparse_dim(), self.dense_dim());
  at::sparse::alias_into_sparse(out, indices, values);
  out._coalesced_(self._nnz() == 0 ? other.is_coalesced()
                                   : (other._nnz() == 0 && self.is_coalesced()));
  return out;
}

// out = self * other with one sparse operand and the other a 0-dim tensor (a scalar) or a dense
// tensor of the same shape: the sparse operand's entries times the other's value there.
at::Tensor& mul_out_impl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      !(self.is_sparse() && other.is_sparse()),
      "torch-ocl: the product of two sparse COO tensors is not implemented; multiply by "
      "other.to_dense() (the result keeps self's sparsity)");
  const at::Tensor& sparse = self.is_sparse() ? self : other;
  const at::Tensor& factor = self.is_sparse() ? other : self;
  TORCH_CHECK(out.is_sparse(), "mul: expected a sparse result, got ", out.layout());
  at::Tensor values;
  if (factor.dim() == 0) {
    values = sparse._values().mul(factor.to(sparse.device()));
  } else {
    TORCH_CHECK(factor.sizes().equals(sparse.sizes()),
                "mul: a sparse and a dense operand must "
                "have the same size (broadcasting is not supported), got ",
                sparse.sizes(), " and ", factor.sizes());
    const at::Tensor idx = sparse._indices();
    c10::List<std::optional<at::Tensor>> index;
    for (int64_t d = 0; d < sparse.sparse_dim(); ++d) index.push_back(idx.select(0, d));
    values = sparse._nnz() == 0 ? sparse._values().mul(factor.sum())
                                : sparse._values().mul(factor.index(index));
  }
  values = values.to(out.scalar_type());
  const at::Tensor indices = out.is_same(sparse) ? sparse._indices() : sparse._indices().clone();
  const bool coalesced = sparse.is_coalesced();
  out.sparse_resize_(sparse.sizes(), sparse.sparse_dim(), sparse.dense_dim());
  at::sparse::alias_into_sparse(out, indices, values);
  out._coalesced_(coalesced);
  return out;
}

// crow_indices of sorted COO rows: crow[i] = the number of entries in rows before i.
at::Tensor coo_to_csr(const at::Tensor& rows, int64_t size, bool out_int32) {
  const at::Tensor bounds = at::arange(size + 1, rows.options().dtype(rows.scalar_type()));
  return at::searchsorted(rows.contiguous(), bounds, out_int32, /*right=*/false);
}

at::Tensor& coo_to_csr_out(const at::Tensor& rows, int64_t size, bool out_int32, at::Tensor& out) {
  const at::Tensor r = coo_to_csr(rows, size, out_int32);
  out.resize_(r.sizes());
  out.copy_(r);
  return out;
}

// COO rows (and the columns beside them) of a CSR tensor: the row of entry p is the number of
// crow entries <= p, less one.
at::Tensor csr_to_coo(const at::Tensor& crow, const at::Tensor& col, bool out_int32,
                      bool transpose) {
  TORCH_CHECK(crow.dim() == 1, "_convert_indices_from_csr_to_coo: batched CSR indices (",
              crow.dim(), "-d crow_indices) are not supported on ocl yet");
  const int64_t nnz = col.numel();
  const at::ScalarType t = out_int32 ? at::kInt : at::kLong;
  const at::Tensor positions = at::arange(nnz, crow.options());
  at::Tensor rows =
      at::searchsorted(crow.contiguous(), positions, out_int32, /*right=*/true).sub_(1);
  const at::Tensor cols = col.to(t);
  return transpose ? at::stack({cols, rows}) : at::stack({rows, cols});
}

at::Tensor& csr_to_coo_out(const at::Tensor& crow, const at::Tensor& col, bool out_int32,
                           bool transpose, at::Tensor& out) {
  const at::Tensor r = csr_to_coo(crow, col, out_int32, transpose);
  out.resize_(r.sizes());
  out.copy_(r);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // dense -> sparse (ATen's, through nonzero/index ops on the device)
  m.impl("_to_sparse.sparse_dim", dense_to_sparse_impl);
  m.impl("_to_sparse", static_cast<at::Tensor (*)(const at::Tensor&, std::optional<at::Layout>,
                                                  at::OptionalIntArrayRef, std::optional<int64_t>)>(
                           at::native::dense_to_sparse));
  m.impl("_to_sparse_csr", at::native::dense_to_sparse_csr);
  m.impl("_convert_indices_from_coo_to_csr", coo_to_csr);
  m.impl("_convert_indices_from_coo_to_csr.out", coo_to_csr_out);
  m.impl("_convert_indices_from_csr_to_coo", csr_to_coo);
  m.impl("_convert_indices_from_csr_to_coo.out", csr_to_coo_out);
}

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  // ATen's own device-generic sparse functions.
  m.impl("_sparse_coo_tensor_with_dims", at::native::new_with_dims_sparse);
  m.impl("_sparse_coo_tensor_with_dims_and_tensors",
         at::native::new_with_dims_and_tensor_sparse_symint);
  m.impl("empty.memory_format", at::native::empty_sparse);
  m.impl("empty_like", at::native::empty_like_sparse_coo);
  m.impl("sparse_resize_", at::native::sparse_resize_);
  m.impl("sparse_resize_and_clear_", at::native::sparse_resize_and_clear_);
  m.impl("resize_as_sparse_", at::native::resize_as_sparse_);
  m.impl("sparse_dim", at::native::sparse_dim_sparse);
  m.impl("dense_dim", at::native::dense_dim_sparse);
  m.impl("_dimI", at::native::sparse_dim_sparse);
  m.impl("_dimV", at::native::dense_dim_sparse);
  m.impl("_nnz", at::native::_nnz_sparse);
  m.impl("is_coalesced", at::native::is_coalesced_sparse);
  m.impl("_coalesced_", at::native::_coalesced_sparse_);
  m.impl("_indices", at::native::_indices_sparse);
  m.impl("_values", at::native::_values_sparse);
  m.impl("indices", at::native::indices_sparse);
  m.impl("values", at::native::values_sparse);
  m.impl("clone", at::native::clone_sparse);
  m.impl("zero_", at::native::zero_sparse_);
  m.impl("copy_", at::native::copy_sparse_wrapper_);
  m.impl("copy_sparse_to_sparse_", at::native::copy_sparse_);
  m.impl("_to_dense", at::native::sparse_to_dense);
  m.impl("_to_sparse.sparse_dim",
         static_cast<at::Tensor (*)(const at::Tensor&, int64_t)>(at::native::sparse_coo_to_sparse));
  m.impl("_to_sparse", static_cast<at::Tensor (*)(const at::Tensor&, std::optional<at::Layout>,
                                                  at::OptionalIntArrayRef, std::optional<int64_t>)>(
                           at::native::sparse_coo_to_sparse));
  m.impl("_to_sparse_csr", at::native::coo_to_sparse_csr);
  m.impl("_sparse_mask_projection", at::native::sparse_mask_projection);
  m.impl("sum", at::native::sum_coo);
  m.impl("sum.dim_IntList", at::native::sum_sparse_coo);
  m.impl("mm",
         static_cast<at::Tensor (*)(const at::Tensor&, const at::Tensor&)>(at::native::_sparse_mm));
  m.impl("neg", at::native::neg_sparse);
  m.impl("neg_", at::native::neg_sparse_);
  m.impl("abs", at::native::abs_sparse);
  m.impl("relu", at::native::relu_sparse);
  m.impl("sqrt", at::native::sqrt_sparse);
  m.impl("pow.Tensor_Scalar", at::native::pow_sparse_scalar);
  m.impl("div.Tensor",
         static_cast<at::Tensor (*)(const at::Tensor&, const at::Tensor&)>(at::native::div_sparse));
  m.impl("unsqueeze", at::native::unsqueeze_sparse);
  m.impl("permute", at::native::permute_sparse_coo);
  m.impl("add.Tensor", at::native::add_sparse);
  m.impl("add_.Tensor", at::native::add_sparse_);
  // Written here.
  m.impl("_coalesce", coalesce_impl);
  m.impl("add.out", add_out_impl);
  m.impl("sparse_mask", sparse_mask_impl);
  m.impl("mul.Tensor", at::native::mul_sparse);
  m.impl("mul_.Tensor", at::native::mul_sparse_);
  m.impl("mul.out", mul_out_impl);
}

}  // namespace torch_ocl
