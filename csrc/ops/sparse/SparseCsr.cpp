// Compressed sparse (CSR) tensors on ocl (SparseCsrPrivateUse1): crow_indices, col_indices and
// values on the device. ATen's SparseCsrCPU/SparseCsrCUDA functions that only rearrange those
// tensors with other ops (accessors, clone, copy, resize, to_dense, conversions to COO and
// between compressed layouts) are registered as they are; the index conversions they call
// (_convert_indices_from_*) are in SparseCoo.cpp, the products in SparseMatmul.cpp.
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_to_dense_native.h>
#include <ATen/ops/_to_sparse_csr_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/ccol_indices_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/col_indices_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/crow_indices_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/row_indices_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>
#include <torch/library.h>

namespace torch_ocl {

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  m.impl("empty.memory_format", at::native::empty_sparse_compressed);
  m.impl("empty_like", at::native::empty_like_sparse_csr);
  m.impl("resize_", at::native::resize_sparse_csr_);
  m.impl("resize_as_sparse_", at::native::resize_as_sparse_compressed_);
  m.impl("sparse_dim", at::native::sparse_dim_sparse_csr);
  m.impl("dense_dim", at::native::dense_dim_sparse_csr);
  m.impl("_nnz", at::native::_nnz_sparse_csr);
  m.impl("values", at::native::values_sparse_csr);
  m.impl("crow_indices", at::native::crow_indices_sparse_csr);
  m.impl("col_indices", at::native::col_indices_sparse_csr);
  m.impl("ccol_indices", at::native::ccol_indices_sparse_csr);
  m.impl("row_indices", at::native::row_indices_sparse_csr);
  m.impl("clone", at::native::clone_sparse_compressed);
  m.impl("copy_", at::native::copy_sparse_compressed_);
  m.impl("zero_", at::native::zero_sparse_csr_);
  m.impl("_to_dense", at::native::sparse_compressed_to_dense);
  m.impl("_to_sparse.sparse_dim", static_cast<at::Tensor (*)(const at::Tensor&, int64_t)>(
                                      at::native::sparse_compressed_to_sparse));
  m.impl("_to_sparse", static_cast<at::Tensor (*)(const at::Tensor&, std::optional<at::Layout>,
                                                  at::OptionalIntArrayRef, std::optional<int64_t>)>(
                           at::native::sparse_compressed_to_sparse));
  m.impl("_to_sparse_csr", at::native::sparse_compressed_to_sparse_csr);
}

}  // namespace torch_ocl
