// Sparse x dense products on ocl with kernels/sparse.cl:
//   addmm / addmm.out / mm with a COO (SparsePrivateUse1) or CSR (SparseCsrPrivateUse1) first
//     factor: out = beta * self + alpha * (sparse @ dense), one work-item per output element
//     running over its row's entries (csr_spmm; a COO factor's entries are sorted by row on the
//     device first, no host wait);
//   sparse_sampled_addmm (CSR): the product evaluated at self's entries only (sampled_dot).
// Sums run in the entries' order, so results are the same every run. torch.sparse.mm and
// torch.mm reach addmm through ATen's own _sparse_mm / _sparse_csr_mm.
#include <ATen/SparseCsrTensorUtils.h>
#include <ATen/ops/_convert_indices_from_csr_to_coo.h>
#include <ATen/ops/_sparse_csr_tensor_unsafe.h>
#include <ATen/ops/addmm_native.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/searchsorted.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <functional>
#include <string>

#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 256;

bool is_zero(const at::Scalar& s) {
  return s.isComplex() ? s.toComplexDouble() == 0.0 : s.toDouble() == 0.0;
}

void check_operands(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                    const char* op) {
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, op, ": expected 2-D matrices, got ", mat1.dim(),
              "-D and ", mat2.dim(), "-D (batched sparse products are not supported on ocl yet)");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), op, ": mat1 and mat2 shapes cannot be multiplied (",
              mat1.size(0), "x", mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type() && mat1.scalar_type() == self.scalar_type(),
              op, ": expected self, mat1 and mat2 of one dtype, got ", self.scalar_type(), ", ",
              mat1.scalar_type(), " and ", mat2.scalar_type());
  TORCH_CHECK(at::isFloatingType(mat1.scalar_type()), op,
              ": sparse products on ocl support floating dtypes, got ", mat1.scalar_type());
  TORCH_CHECK(mat2.layout() == at::kStrided, op, ": expected a dense (strided) mat2 on ocl, got ",
              mat2.layout());
  TORCH_CHECK(self.device() == mat1.device() && mat2.device() == mat1.device(), op,
              ": expected all operands on ", mat1.device());
}

// out (M x N, contiguous, fresh) = beta * self + alpha * (csr @ dense).
void spmm(at::Tensor& out, const at::Tensor& self, const at::Scalar& beta, const at::Tensor& crow,
          const at::Tensor& col, const at::Tensor& values, const at::Tensor& dense,
          const at::Scalar& alpha) {
  if (out.numel() == 0) return;
  const int device = out.device().index();
  c10::DeviceGuard guard(out.device());
  const bool use_self = !is_zero(beta);
  const at::Tensor s = use_self ? self.expand(out.sizes()) : out;
  const at::Tensor c = crow.contiguous(), k = col.to(crow.scalar_type()).contiguous();
  const at::Tensor v = values.contiguous();
  const std::string options = std::string("-DT=") + type_tag(out.scalar_type(), device) +
                              " -DIDX_T=" + (c.scalar_type() == at::kInt ? "int" : "long");
  KernelLaunch launch(get_kernel(device, "sparse.cl", "csr_spmm", options));
  launch.arg(static_cast<cl_ulong>(out.size(0))).arg(static_cast<cl_ulong>(out.size(1)));
  launch.buffer(buffer_of(c), c.itemsize()).buffer(buffer_of(k), k.itemsize());
  launch.buffer(buffer_of(v), v.itemsize());
  launch.buffer(buffer_of(dense), dense.itemsize());
  launch.arg(static_cast<cl_long>(dense.stride(0))).arg(static_cast<cl_long>(dense.stride(1)));
  launch.buffer(buffer_of(s), s.itemsize());
  launch.arg(static_cast<cl_long>(s.stride(0))).arg(static_cast<cl_long>(s.stride(1)));
  launch.buffer(buffer_of(out), out.itemsize());
  push_compute_scalar(launch, beta, out.scalar_type());
  push_compute_scalar(launch, alpha, out.scalar_type());
  launch.arg(static_cast<cl_int>(use_self ? 1 : 0));
  // (columns, rows) with one row per work-group (see the kernel).
  const size_t cap = std::min<size_t>(kLws, device_info(device).max_work_group);
  size_t l0 = 1;
  while (l0 * 2 <= cap && l0 < static_cast<size_t>(out.size(1))) l0 *= 2;
  const size_t global[2] = {(static_cast<size_t>(out.size(1)) + l0 - 1) / l0 * l0,
                            static_cast<size_t>(out.size(0))};
  const size_t local[2] = {l0, 1};
  launch.enqueue(device, 2, global, local);
}

// The result written into `out` (resized to M x N); a fresh contiguous tensor is computed first
// when `out` is not contiguous or aliases an operand.
at::Tensor& into(at::Tensor& out, const at::Tensor& self, const at::Tensor& mat2, int64_t m,
                 int64_t n, const std::function<void(at::Tensor&)>& compute) {
  TORCH_CHECK(out.layout() == at::kStrided, "addmm: expected a dense result on ocl, got ",
              out.layout());
  if (out.sizes() != at::IntArrayRef{m, n}) out.resize_({m, n});
  if (out.is_contiguous() && !out.is_same(self) && !out.is_same(mat2)) {
    compute(out);
  } else {
    at::Tensor tmp = at::empty({m, n}, out.options());
    compute(tmp);
    out.copy_(tmp);
  }
  return out;
}

at::Tensor& coo_addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_operands(self, mat1, mat2, "addmm");
  TORCH_CHECK(mat1.sparse_dim() == 2 && mat1.dense_dim() == 0,
              "addmm: expected a COO mat1 with 2 sparse dims and no dense dims, got ",
              mat1.sparse_dim(), " and ", mat1.dense_dim());
  const int64_t m = mat1.size(0), n = mat2.size(1);
  at::Tensor rows = mat1._indices().select(0, 0), cols = mat1._indices().select(0, 1);
  at::Tensor values = mat1._values();
  if (!mat1.is_coalesced() && mat1._nnz() > 1) {  // entries grouped by row; duplicates just add
    auto [sorted, perm] = rows.sort(/*stable=*/true, 0, false);
    rows = sorted;
    cols = cols.index_select(0, perm);
    values = values.index_select(0, perm);
  }
  const at::Tensor crow =
      at::searchsorted(rows.contiguous(), at::arange(m + 1, rows.options()), false, false);
  return into(out, self, mat2, m, n,
              [&](at::Tensor& o) { spmm(o, self, beta, crow, cols, values, mat2, alpha); });
}

at::Tensor coo_addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor out = at::empty({0}, mat2.options());
  return coo_addmm_out(self, mat1, mat2, beta, alpha, out);
}

at::Tensor& coo_addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                       const at::Scalar& beta, const at::Scalar& alpha) {
  return coo_addmm_out(self, mat1, mat2, beta, alpha, self);
}

at::Tensor& csr_addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      mat1.layout() == at::kSparseCsr && mat2.layout() == at::kStrided &&
          self.layout() == at::kStrided,
      "torch-ocl: addmm with compressed sparse operands supports a CSR mat1 with dense self "
      "and mat2 only, got self ",
      self.layout(), ", mat1 ", mat1.layout(), ", mat2 ", mat2.layout(),
      " (convert with to_sparse_csr() / to_dense())");
  check_operands(self, mat1, mat2, "addmm");
  TORCH_CHECK_NOT_IMPLEMENTED(mat1.values().dim() == 1,
                              "torch-ocl: addmm with a hybrid CSR mat1 (dense dims) is not "
                              "implemented");
  const int64_t m = mat1.size(0), n = mat2.size(1);
  return into(out, self, mat2, m, n, [&](at::Tensor& o) {
    spmm(o, self, beta, mat1.crow_indices(), mat1.col_indices(), mat1.values(), mat2, alpha);
  });
}

// values of beta * self + alpha * (mat1 @ mat2) at self's entries.
at::Tensor sampled_values(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(self.layout() == at::kSparseCsr,
              "sampled_addmm: expected self to be a CSR tensor, got ", self.layout());
  TORCH_CHECK(mat1.layout() == at::kStrided && mat2.layout() == at::kStrided,
              "sampled_addmm: expected mat1 and mat2 to be dense (strided) tensors");
  TORCH_CHECK(self.dim() == 2 && mat1.dim() == 2 && mat2.dim() == 2,
              "sampled_addmm: batched operands are not supported on ocl yet (got ", self.dim(),
              "-D self)");
  TORCH_CHECK(mat1.size(1) == mat2.size(0),
              "sampled_addmm: mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
              mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.size(0) == mat1.size(0) && self.size(1) == mat2.size(1),
              "sampled_addmm: self.shape ", self.sizes(), " does not match mat1 @ mat2 (",
              mat1.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.scalar_type() == mat1.scalar_type() && mat1.scalar_type() == mat2.scalar_type(),
              "sampled_addmm: expected self, mat1 and mat2 of one dtype");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "sampled_addmm: floating dtypes only on ocl, got ", self.scalar_type());
  const at::Tensor vals = self.values().contiguous();
  at::Tensor out = at::empty_like(vals);
  const int64_t nnz = vals.numel();
  if (nnz == 0) return out;
  const int device = self.device().index();
  c10::DeviceGuard guard(self.device());
  const at::Tensor col = self.col_indices().contiguous();
  const at::Tensor rows =
      at::_convert_indices_from_csr_to_coo(self.crow_indices(), col, false, false)
          .select(0, 0)
          .contiguous();
  const bool use_self = !is_zero(beta);
  const std::string options = std::string("-DT=") + type_tag(out.scalar_type(), device) +
                              " -DIDX_T=" + (col.scalar_type() == at::kInt ? "int" : "long");
  KernelLaunch launch(get_kernel(device, "sparse.cl", "sampled_dot", options));
  launch.arg(static_cast<cl_ulong>(nnz)).arg(static_cast<cl_ulong>(mat1.size(1)));
  launch.buffer(buffer_of(rows), 8).buffer(buffer_of(col), col.itemsize());
  launch.buffer(buffer_of(mat1), mat1.itemsize());
  launch.arg(static_cast<cl_long>(mat1.stride(0))).arg(static_cast<cl_long>(mat1.stride(1)));
  launch.buffer(buffer_of(mat2), mat2.itemsize());
  launch.arg(static_cast<cl_long>(mat2.stride(0))).arg(static_cast<cl_long>(mat2.stride(1)));
  launch.buffer(buffer_of(vals), vals.itemsize()).buffer(buffer_of(out), out.itemsize());
  push_compute_scalar(launch, beta, out.scalar_type());
  push_compute_scalar(launch, alpha, out.scalar_type());
  launch.arg(static_cast<cl_int>(use_self ? 1 : 0));
  launch.enqueue1d(device, static_cast<size_t>(nnz), kLws);
  return out;
}

at::Tensor sampled_addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                         const at::Scalar& beta, const at::Scalar& alpha) {
  const at::Tensor values = sampled_values(self, mat1, mat2, beta, alpha);
  return at::_sparse_csr_tensor_unsafe(self.crow_indices().clone(), self.col_indices().clone(),
                                       values, self.sizes(),
                                       values.options().layout(at::kSparseCsr));
}

at::Tensor& sampled_addmm_out(const at::Tensor& self, const at::Tensor& mat1,
                              const at::Tensor& mat2, const at::Scalar& beta,
                              const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(out.layout() == at::kSparseCsr,
              "sampled_addmm: expected out to be a CSR tensor, got ", out.layout());
  const at::Tensor values = sampled_values(self, mat1, mat2, beta, alpha);
  at::sparse_csr::get_sparse_csr_impl(out)->set_member_tensors(
      self.crow_indices().clone(), self.col_indices().clone(), values, self.sizes());
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("addmm", coo_addmm);
  m.impl("addmm.out", coo_addmm_out);
  m.impl("addmm_", coo_addmm_);
}

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  m.impl("addmm", at::native::addmm_sparse_compressed_dense);
  m.impl("addmm.out", csr_addmm_out);
  m.impl("mm", at::native::_sparse_csr_mm);
  m.impl("sparse_sampled_addmm", sampled_addmm);
  m.impl("sparse_sampled_addmm.out", sampled_addmm_out);
}

}  // namespace torch_ocl
