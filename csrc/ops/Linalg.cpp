// The linear-algebra ops on the device, through ATen's own implementations: ATen's structured
// linalg ops (lu_factor_ex, lu_solve, lu_unpack, lu, solve_ex, inv_ex, det, slogdet,
// cholesky_ex, triangular_solve, qr) and native functions (cholesky, cholesky_inverse,
// solve_triangular, geqrf, householder_product, ormqr) are registered for our key, and their
// LAPACK-style DispatchStubs (ATen/native/BatchLinearAlgebra.h) run kernels/linalg.cl. So the
// shape checks, batching, out= handling, the singular-matrix errors (from the `info` outputs,
// read on the host by ATen's checks of the non-_ex variants, as on CUDA) and every composite op
// on top (solve, inv, det, matrix_power, pinv, ...) come from ATen; only the kernels are ours.
//
// Kernels take any strides within a matrix; batch dimensions must flatten to one stride (true
// of what ATen passes: batched column-major buffers), otherwise the stub works on a copy.
// float32 and float64 only (float64 where the device has it), as the CPU supports no lower
// precision here; no complex.
#include <ATen/TensorIterator.h>
#include <ATen/native/BatchLinearAlgebra.h>
#include <ATen/native/TransposeType.h>
#include <ATen/ops/_linalg_det_meta.h>
#include <ATen/ops/_linalg_det_native.h>
#include <ATen/ops/_linalg_eigh_meta.h>
#include <ATen/ops/_linalg_eigh_native.h>
#include <ATen/ops/_linalg_slogdet_meta.h>
#include <ATen/ops/_linalg_slogdet_native.h>
#include <ATen/ops/_linalg_solve_ex_meta.h>
#include <ATen/ops/_linalg_solve_ex_native.h>
#include <ATen/ops/_linalg_svd_meta.h>
#include <ATen/ops/_linalg_svd_native.h>
#include <ATen/ops/cholesky_inverse_native.h>
#if __has_include(<ATen/ops/cholesky_native.h>)  // torch.cholesky: removed in torch 2.15
#include <ATen/ops/cholesky_native.h>
#define TORCH_OCL_HAS_CHOLESKY 1
#endif
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/geqrf_native.h>
#include <ATen/ops/linalg_cholesky_ex_meta.h>
#include <ATen/ops/linalg_cholesky_ex_native.h>
#include <ATen/ops/linalg_householder_product_native.h>
#include <ATen/ops/linalg_inv_ex_meta.h>
#include <ATen/ops/linalg_inv_ex_native.h>
#include <ATen/ops/linalg_lu_factor_ex_meta.h>
#include <ATen/ops/linalg_lu_factor_ex_native.h>
#include <ATen/ops/linalg_lu_meta.h>
#include <ATen/ops/linalg_lu_native.h>
#include <ATen/ops/linalg_lu_solve_meta.h>
#include <ATen/ops/linalg_lu_solve_native.h>
#include <ATen/ops/linalg_qr_meta.h>
#include <ATen/ops/linalg_qr_native.h>
#include <ATen/ops/linalg_solve_triangular_native.h>
#include <ATen/ops/lu_unpack_meta.h>
#include <ATen/ops/lu_unpack_native.h>
#include <ATen/ops/ormqr_native.h>
#include <ATen/ops/triangular_solve_meta.h>
#include <ATen/ops/triangular_solve_native.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "ops/StubOnCpu.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// kernels/linalg.cl's kernel `name` for dtype t (float or double; raises like the CPU's dispatch
// for other dtypes).
// Complex matrices: the CPU's LAPACK kernels run them (StubOnCpu.h), counted as a fallback under
// this name; the kernels of kernels/linalg.cl are real.
std::string complex_name(const char* routine, const at::Tensor& t) {
  return std::string("aten::") + routine + " (" + c10::toString(t.scalar_type()) + ")";
}

cl_kernel linalg_kernel(const at::Tensor& t, const char* name, const char* op) {
  const at::ScalarType st = t.scalar_type();
  const int device = t.device().index();
  if (at::isComplexType(st)) {  // the LU family has complex forms (-DCPLX)
    TORCH_CHECK_NOT_IMPLEMENTED(st == at::kComplexFloat || st == at::kComplexDouble, "\"", op,
                                "\" not implemented for '", c10::toString(st), "'");
    const char* real = type_tag(c10::toRealValueType(st), device);
    return get_kernel(
        device, "linalg.cl", name,
        std::string("-DCPLX -DT=") + real + "2 -DR=" + real + " -DLWS=" + std::to_string(kLws));
  }
  TORCH_CHECK_NOT_IMPLEMENTED(st == at::kFloat || st == at::kDouble, "\"", op,
                              "\" not implemented for '", c10::toString(st), "'");
  return get_kernel(device, "linalg.cl", name,
                    std::string("-DT=") + type_tag(st, device) + " -DLWS=" + std::to_string(kLws));
}

int64_t batch_count(const at::Tensor& t) {
  int64_t b = 1;
  for (int64_t d = 0; d + 2 < t.dim(); ++d) b *= t.size(d);
  return b;
}

// Batched column-major (Fortran-contiguous) strides for `sizes`.
std::vector<int64_t> fortran_strides(at::IntArrayRef sizes) {
  std::vector<int64_t> st(sizes.size());
  const int64_t n = static_cast<int64_t>(sizes.size());
  int64_t step = 1;
  if (n >= 2) {
    st[n - 2] = 1;
    st[n - 1] = std::max<int64_t>(sizes[n - 2], 1);
    step = st[n - 1] * std::max<int64_t>(sizes[n - 1], 1);
  }
  for (int64_t d = n - 3; d >= 0; --d) {
    st[d] = step;
    step *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

// A batch of matrices as the kernels see it: element (i, j) of matrix b at
// offset + b*bs + i*rs + j*cs of t's buffer. When t's batch dimensions do not flatten to one
// stride, t is a batched column-major copy (and `target` the tensor to copy results back into).
struct Mats {
  at::Tensor t, target;
  int64_t bs = 0, rs = 0, cs = 0, batch = 0, rows = 0, cols = 0;

  // Copies the kernel's results back where they belong (a copy's only).
  void finish() const {
    if (target.defined()) target.copy_(t);
  }
  // The transpose of each matrix (a view: strides swapped).
  Mats mT() const {
    Mats m = *this;
    std::swap(m.rs, m.cs);
    std::swap(m.rows, m.cols);
    return m;
  }
};

bool flat_batch_stride(const at::Tensor& x, int64_t* bs) {
  *bs = 0;
  int64_t expect = -1;
  for (int64_t d = x.dim() - 3; d >= 0; --d) {
    if (x.size(d) == 1) continue;
    if (expect >= 0 && x.stride(d) != expect) return false;
    if (expect < 0) *bs = x.stride(d);
    expect = x.stride(d) * x.size(d);
  }
  return true;
}

Mats mats(const at::Tensor& x, bool written) {
  Mats m;
  m.batch = batch_count(x);
  m.rows = x.size(-2);
  m.cols = x.size(-1);
  int64_t bs = 0;
  const bool overlapping = written && x.numel() > 1 && (x.stride(-1) == 0 || x.stride(-2) == 0);
  if (flat_batch_stride(x, &bs) && !overlapping) {
    m.t = x;
    m.bs = bs;
    m.rs = x.stride(-2);
    m.cs = x.stride(-1);
    return m;
  }
  m.t = at::empty_strided(x.sizes(), fortran_strides(x.sizes()), x.options());
  m.t.copy_(x);
  if (written) m.target = x;
  m.bs = x.size(-2) * x.size(-1);
  m.rs = 1;
  m.cs = x.size(-2);
  return m;
}

// `x` with its batch dimensions expanded to `batch` (the leading dims of a broadcast result).
at::Tensor expand_batch(const at::Tensor& x, at::IntArrayRef batch, int64_t trailing) {
  std::vector<int64_t> sizes(batch.begin(), batch.end());
  for (int64_t d = x.dim() - trailing; d < x.dim(); ++d) sizes.push_back(x.size(d));
  return x.expand(sizes);
}

KernelLaunch& push(KernelLaunch& l, const Mats& m) {
  l.buffer(buffer_of(m.t), m.t.itemsize());
  return l.arg(static_cast<cl_long>(m.bs))
      .arg(static_cast<cl_long>(m.rs))
      .arg(static_cast<cl_long>(m.cs));
}

void launch_groups(KernelLaunch& l, const at::Tensor& t, int64_t groups) {
  l.enqueue1d(t.device().index(), static_cast<size_t>(groups) * kLws, kLws);
}

// x <- T^{-1} x for the lower (or upper) triangle T of `t` (batches already alike; its elements
// conjugated if `conj`).
void trsm(const Mats& t, const Mats& x, bool lower, bool unit, bool conj = false) {
  const int64_t n = x.rows;
  if (x.batch == 0 || n == 0 || x.cols == 0) return;
  KernelLaunch l(linalg_kernel(x.t, "trsm", "triangular_solve_ocl"));
  push(l, t);
  push(l, x);
  l.arg(static_cast<cl_int>(n)).arg(static_cast<cl_int>(x.cols));
  l.arg(static_cast<cl_int>(lower)).arg(static_cast<cl_int>(unit)).arg(static_cast<cl_int>(conj));
  launch_groups(l, x.t, x.batch);
}

// ---- the DispatchStubs ----

// `t` itself when contiguous, else a contiguous tensor for the kernel to write (finish_contig
// copies it back): out= tensors of any layout reach the stubs.
at::Tensor contig_out(const at::Tensor& t) {
  return t.is_contiguous() ? t : at::empty(t.sizes(), t.options());
}
void finish_contig(const at::Tensor& t, const at::Tensor& work) {
  if (!work.is_same(t)) t.copy_(work);
}

void lu_factor_kernel(const at::Tensor& input, const at::Tensor& pivots, const at::Tensor& infos,
                      bool compute_pivots) {
  const int64_t m = input.size(-2), n = input.size(-1);
  const Mats a = mats(input, true);
  if (a.batch == 0) return;
  const at::Tensor piv = contig_out(pivots), inf = contig_out(infos);
  KernelLaunch l(linalg_kernel(input, "lu_factor", "lu_ocl"));
  push(l, a);
  l.buffer(buffer_of(piv), piv.itemsize()).buffer(buffer_of(inf), inf.itemsize());
  l.arg(static_cast<cl_int>(m))
      .arg(static_cast<cl_int>(n))
      .arg(static_cast<cl_int>(compute_pivots));
  launch_groups(l, input, a.batch);
  a.finish();
  finish_contig(pivots, piv);
  finish_contig(infos, inf);
}

void lu_solve_kernel(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                     at::native::TransposeType trans) {
  const int64_t n = LU.size(-1);
  if (B.numel() == 0) return;
  const at::IntArrayRef batch = B.sizes().slice(0, B.dim() - 2);
  const Mats lu = mats(expand_batch(LU, batch, 2), false);
  at::Tensor piv = expand_batch(pivots, batch, 1);
  if (!piv.is_contiguous()) piv = piv.contiguous();
  const Mats x = mats(B, true);
  KernelLaunch l(linalg_kernel(B, "lu_solve", "lu_solve_ocl"));
  push(l, lu);
  l.buffer(buffer_of(piv), piv.itemsize()).arg(static_cast<cl_long>(n));
  push(l, x);
  l.arg(static_cast<cl_int>(n)).arg(static_cast<cl_int>(B.size(-1)));
  l.arg(static_cast<cl_int>(trans == at::native::TransposeType::NoTranspose ? 0
                            : trans == at::native::TransposeType::Transpose ? 1
                                                                            : 2));
  launch_groups(l, B, x.batch);
  x.finish();
}

void triangular_solve_kernel(const at::Tensor& A, const at::Tensor& B, bool left, bool upper,
                             at::native::TransposeType transpose, bool unitriangular) {
  if (B.numel() == 0) return;
  // The CPU's kernel reads B (linalg_solve_triangular's out) as A's type: an out of another
  // dtype raises there (from data_ptr), and so here, with its message.
  TORCH_CHECK(B.scalar_type() == A.scalar_type(), "expected scalar type ", A.scalar_type(),
              " but found ", B.scalar_type());
  const at::IntArrayRef batch = B.sizes().slice(0, B.dim() - 2);
  Mats a = mats(expand_batch(A, batch, 2), false);
  // The stub's contract is BLAS's: A's memory read as column-major matrices (ATen passes a
  // row-major A as its transpose, with `upper` and `transpose` adjusted to match).
  if (A.stride(-1) == 1 && A.stride(-2) != 1) a = a.mT();
  Mats x = mats(B, true);
  bool lower = !upper;
  if (transpose != at::native::TransposeType::NoTranspose) {
    a = a.mT();
    lower = !lower;
  }
  const bool conj = transpose == at::native::TransposeType::ConjTranspose;
  // X op(A) = B  <=>  op(A)^T X^T = B^T
  if (!left) {
    a = a.mT();
    lower = !lower;
    trsm(a, x.mT(), lower, unitriangular, conj);
  } else {
    trsm(a, x, lower, unitriangular, conj);
  }
  x.finish();
}

void cholesky_kernel(const at::Tensor& input, const at::Tensor& info, bool upper) {
  if (input.is_complex()) {
    run_stub_on_cpu(complex_name("cholesky", input), at::native::cholesky_stub, input, info, upper);
    return;
  }
  const int64_t n = input.size(-1);
  Mats a = mats(input, true);
  if (a.batch == 0) return;
  const at::Tensor inf = contig_out(info);
  // U^T U = A: the kernel factors the lower triangle of A^T (a view), which is A's upper one.
  KernelLaunch l(linalg_kernel(input, "cholesky", "cholesky_ocl"));
  push(l, upper ? a.mT() : a);
  l.buffer(buffer_of(inf), inf.itemsize()).arg(static_cast<cl_int>(n));
  launch_groups(l, input, a.batch);
  a.finish();
  finish_contig(info, inf);
}

// (L L^T)^{-1} = L^{-T} L^{-1} (or (U^T U)^{-1} = U^{-1} U^{-T}) by two triangular solves on the
// identity. LAPACK's potri reports a zero diagonal element in `infos` (a CPU tensor here, as
// ATen asks); finding it would need a host wait, so a singular factor gives inf/NaN instead.
at::Tensor& cholesky_inverse_kernel(at::Tensor& result, at::Tensor& /*infos*/, bool upper) {
  if (result.numel() == 0) return result;
  const int64_t n = result.size(-1);
  at::Tensor eye = at::eye(n, result.options()).expand(result.sizes());
  at::Tensor x =
      at::empty_strided(result.sizes(), fortran_strides(result.sizes()), result.options());
  x.copy_(eye);
  const Mats f = mats(result, false);
  const Mats xm = mats(x, true);
  if (upper) {
    trsm(f.mT(), xm, /*lower=*/true, false, /*conj=*/f.t.is_complex());  // U^H
    trsm(f, xm, /*lower=*/false, false);
  } else {
    trsm(f, xm, /*lower=*/true, false);
    trsm(f.mT(), xm, /*lower=*/false, false, /*conj=*/f.t.is_complex());  // L^H
  }
  result.copy_(x);
  return result;
}

// lu_unpack's permutation: perm (batch x m, the identity) <- the row swaps of pivots.
void unpack_pivots_kernel(at::TensorIterator& iter, int64_t dim_size, int64_t max_pivot) {
  const at::Tensor perm = iter.tensor(0);
  const at::Tensor piv = iter.tensor(1);
  TORCH_INTERNAL_ASSERT(perm.is_contiguous() && piv.is_contiguous());
  const int64_t m = perm.size(-1);
  const int64_t batch = m == 0 ? 0 : perm.numel() / m;
  if (batch == 0 || dim_size == 0) return;
  (void)max_pivot;  // == m
  const int device = perm.device().index();
  KernelLaunch l(
      get_kernel(device, "linalg.cl", "unpack_pivots", "-DT=float -DLWS=" + std::to_string(kLws)));
  l.buffer(buffer_of(perm), perm.itemsize()).buffer(buffer_of(piv), piv.itemsize());
  l.arg(static_cast<cl_long>(batch)).arg(static_cast<cl_int>(m)).arg(static_cast<cl_int>(dim_size));
  l.arg(device_error_word(device))
      .arg(device_error_code(
          "lu_unpack: pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive. "
          "Did you properly pass the result of lu_factor?"));
  l.enqueue1d(device, static_cast<size_t>(batch), kLws);
}

void geqrf_kernel(const at::Tensor& input, const at::Tensor& tau) {
  if (input.is_complex()) {
    run_stub_on_cpu(complex_name("geqrf", input), at::native::geqrf_stub, input, tau);
    return;
  }
  const int64_t m = input.size(-2), n = input.size(-1);
  const Mats a = mats(input, true);
  if (a.batch == 0 || m == 0 || n == 0) return;
  TORCH_INTERNAL_ASSERT(tau.is_contiguous());
  KernelLaunch l(linalg_kernel(input, "geqrf", "geqrf_ocl"));
  push(l, a);
  l.buffer(buffer_of(tau), tau.itemsize());
  l.arg(static_cast<cl_int>(m)).arg(static_cast<cl_int>(n));
  launch_groups(l, input, a.batch);
  a.finish();
}

// c <- Q c (or Q^T c) with Q from the first k reflectors of v (batches alike).
void householder_apply(const Mats& v, const at::Tensor& tau, const Mats& c, int64_t k, bool trans) {
  if (c.batch == 0 || k == 0) return;
  KernelLaunch l(linalg_kernel(c.t, "householder_apply", "ormqr_ocl"));
  push(l, v);
  l.buffer(buffer_of(tau), tau.itemsize()).arg(static_cast<cl_long>(tau.size(-1)));
  push(l, c);
  l.arg(static_cast<cl_int>(c.rows)).arg(static_cast<cl_int>(c.cols));
  l.arg(static_cast<cl_int>(k)).arg(static_cast<cl_int>(trans));
  launch_groups(l, c.t, c.batch);
}

// Q's first n columns (orgqr): the reflectors' product applied to the m x n identity.
at::Tensor& orgqr_kernel(at::Tensor& result, const at::Tensor& tau) {
  if (result.is_complex()) {
    run_stub_on_cpu(complex_name("orgqr", result), at::native::orgqr_stub, result, tau);
    return result;
  }
  if (result.numel() == 0) return result;
  const int64_t m = result.size(-2), n = result.size(-1);
  at::Tensor x =
      at::empty_strided(result.sizes(), fortran_strides(result.sizes()), result.options());
  x.copy_(at::eye(m, n, result.options()).expand(result.sizes()));
  const at::IntArrayRef batch = result.sizes().slice(0, result.dim() - 2);
  const at::Tensor t = expand_batch(tau, batch, 1).contiguous();
  const Mats xm = mats(x, true);
  householder_apply(mats(result, false), t, xm, t.size(-1), /*trans=*/false);
  result.copy_(x);
  return result;
}

void ormqr_kernel(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                  bool left, bool transpose) {
  if (input.is_complex()) {
    run_stub_on_cpu(complex_name("ormqr", input), at::native::ormqr_stub, input, tau, other, left,
                    transpose);
    return;
  }
  if (other.numel() == 0) return;
  const at::IntArrayRef batch = other.sizes().slice(0, other.dim() - 2);
  const at::Tensor t = expand_batch(tau, batch, 1).contiguous();
  const Mats v = mats(expand_batch(input, batch, 2), false);
  const Mats c = mats(other, true);
  // C op(Q) = (op(Q)^T C^T)^T
  householder_apply(v, t, left ? c : c.mT(), t.size(-1), left ? transpose : !transpose);
  c.finish();
}

// ormqr.out: ATen's implementation copies `other` into the out first, so an out that shares
// memory with the reflectors or tau would lose them before they are read: those are read
// from copies, as if they were other tensors.
at::Tensor& ormqr_out(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                      bool left, bool transpose, at::Tensor& out) {
  const auto own = [&](const at::Tensor& t) {
    return at::get_overlap_status(t, out) == at::MemOverlapStatus::No ? t : t.clone();
  };
  return at::native::ormqr_out(own(input), own(tau), other, left, transpose, out);
}

// Cyclic Jacobi (kernels/linalg.cl, eigh): eigenvalues ascending, eigenvectors in `vectors`
// (which holds A on entry). Eigenvectors are unique up to sign (and to a basis of a repeated
// eigenvalue's space), as with LAPACK: signs may differ from the CPU's.
void linalg_eigh_kernel(const at::Tensor& values, const at::Tensor& vectors,
                        const at::Tensor& infos, bool upper, bool compute_eigenvectors) {
  if (vectors.is_complex()) {
    run_stub_on_cpu(complex_name("linalg_eigh", vectors), at::native::linalg_eigh_stub, values,
                    vectors, infos, upper, compute_eigenvectors);
    return;
  }
  const int64_t n = vectors.size(-1);
  const Mats x = mats(vectors, true);
  if (x.batch == 0 || n == 0) return;
  TORCH_INTERNAL_ASSERT(values.is_contiguous() && infos.is_contiguous());
  at::Tensor work = at::empty({x.batch, 2 * n * n + n + 1}, vectors.options());
  KernelLaunch l(linalg_kernel(vectors, "eigh", "linalg_eigh_ocl"));
  push(l, x);
  l.buffer(buffer_of(values), values.itemsize()).buffer(buffer_of(work), work.itemsize());
  l.buffer(buffer_of(infos), infos.itemsize());
  l.arg(static_cast<cl_int>(n)).arg(static_cast<cl_int>(upper)).arg(static_cast<cl_int>(100));
  launch_groups(l, vectors, x.batch);
  x.finish();
}

// One-sided Jacobi (kernels/linalg.cl, svd): singular values descending; U and Vh (as ATen's
// meta function lays them out) unique up to the signs of singular-vector pairs (and a basis of a
// repeated singular value's space), as with LAPACK: signs may differ from the CPU's.
void svd_kernel(const at::Tensor& A, const bool full_matrices, const bool compute_uv,
                const std::optional<std::string_view>& driver, const at::Tensor& U,
                const at::Tensor& S, const at::Tensor& Vh, const at::Tensor& info) {
  if (A.is_complex()) {
    run_stub_on_cpu(complex_name("linalg_svd", A), at::native::svd_stub, A, full_matrices,
                    compute_uv, driver, U, S, Vh, info);
    return;
  }
  const int64_t m = A.size(-2), n = A.size(-1);
  const int64_t M = std::max(m, n), N = std::min(m, n);
  const Mats a = mats(A, false);
  if (a.batch == 0 || N == 0) return;
  TORCH_INTERNAL_ASSERT(S.is_contiguous() && info.is_contiguous());
  // Without U and Vh the kernel gets S's buffer in their place and never touches it.
  const Mats um = compute_uv ? mats(U, true) : mats(S.unsqueeze(-1), false);
  const Mats vm = compute_uv ? mats(Vh, true) : mats(S.unsqueeze(-1), false);
  at::Tensor work = at::empty({a.batch, M * N + N * N + N + 1}, A.options());
  KernelLaunch l(linalg_kernel(A, "svd", "linalg_svd_ocl"));
  push(l, a);
  l.buffer(buffer_of(S), S.itemsize());
  push(l, um);
  push(l, vm);
  l.buffer(buffer_of(work), work.itemsize()).buffer(buffer_of(info), info.itemsize());
  l.arg(static_cast<cl_int>(m)).arg(static_cast<cl_int>(n));
  l.arg(static_cast<cl_int>(compute_uv)).arg(static_cast<cl_int>(full_matrices));
  l.arg(static_cast<cl_int>(100));
  launch_groups(l, A, a.batch);
  if (compute_uv) {
    um.finish();
    vm.finish();
  }
}

// ---- ops without a stub of their own ----

// cholesky_solve's batched helper (CPU/CUDA-only in ATen): X = A^{-1} B from A's Cholesky factor.
at::Tensor cholesky_solve_helper(const at::Tensor& self, const at::Tensor& A, bool upper) {
  at::Tensor x = at::empty_strided(self.sizes(), fortran_strides(self.sizes()), self.options());
  x.copy_(self);
  if (x.numel() == 0) return x;
  const at::IntArrayRef batch = self.sizes().slice(0, self.dim() - 2);
  const Mats f = mats(expand_batch(A, batch, 2), false);
  const Mats xm = mats(x, true);
  if (upper) {                                                           // U^H U X = B
    trsm(f.mT(), xm, /*lower=*/true, false, /*conj=*/f.t.is_complex());  // U^H
    trsm(f, xm, /*lower=*/false, false);
  } else {  // L L^H X = B
    trsm(f, xm, /*lower=*/true, false);
    trsm(f.mT(), xm, /*lower=*/false, false, /*conj=*/f.t.is_complex());  // L^H
  }
  return x;
}

using LuFactorEx = AtenStructured<at::native::structured_linalg_lu_factor_ex_out>;
using LuSolve = AtenStructured<at::native::structured_linalg_lu_solve_out>;
using LuUnpack = AtenStructured<at::native::structured_lu_unpack_out>;
using Lu = AtenStructured<at::native::structured_linalg_lu_out>;
using SolveEx = AtenStructured<at::native::structured__linalg_solve_ex_out>;
using InvEx = AtenStructured<at::native::structured_linalg_inv_ex_out>;
using Det = AtenStructured<at::native::structured__linalg_det_out>;
using Slogdet = AtenStructured<at::native::structured__linalg_slogdet_out>;
using CholeskyEx = AtenStructured<at::native::structured_linalg_cholesky_ex_out>;
using TriangularSolve = AtenStructured<at::native::structured_triangular_solve_out>;
using Qr = AtenStructured<at::native::structured_linalg_qr_out>;
using Eigh = AtenStructured<at::native::structured__linalg_eigh_out>;
using Svd = AtenStructured<at::native::structured__linalg_svd_out>;

}  // namespace
}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(lu_factor_stub, &torch_ocl::lu_factor_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(lu_solve_stub, &torch_ocl::lu_solve_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(unpack_pivots_stub, &torch_ocl::unpack_pivots_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(triangular_solve_stub, &torch_ocl::triangular_solve_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(cholesky_stub, &torch_ocl::cholesky_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(cholesky_inverse_stub, &torch_ocl::cholesky_inverse_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(geqrf_stub, &torch_ocl::geqrf_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(orgqr_stub, &torch_ocl::orgqr_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(ormqr_stub, &torch_ocl::ormqr_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(linalg_eigh_stub, &torch_ocl::linalg_eigh_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(svd_stub, &torch_ocl::svd_kernel)
}  // namespace at::native

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using namespace torch_ocl;
  m.impl("linalg_lu_factor_ex", LuFactorEx::functional);
  m.impl("linalg_lu_factor_ex.out", LuFactorEx::out3);
  m.impl("linalg_lu_solve", LuSolve::functional);
  m.impl("linalg_lu_solve.out", LuSolve::out);
  m.impl("lu_unpack", LuUnpack::functional);
  m.impl("lu_unpack.out", LuUnpack::out3);
  m.impl("linalg_lu", Lu::functional);
  m.impl("linalg_lu.out", Lu::out3);
  m.impl("_linalg_solve_ex", SolveEx::functional);
  m.impl("_linalg_solve_ex.result", SolveEx::out4);
  m.impl("linalg_inv_ex", InvEx::functional);
  m.impl("linalg_inv_ex.inverse", InvEx::out2);
  m.impl("_linalg_det", Det::functional);
  m.impl("_linalg_det.result", Det::out3);
  m.impl("_linalg_slogdet", Slogdet::functional);
  m.impl("_linalg_slogdet.sign", Slogdet::out4);
  m.impl("linalg_cholesky_ex", CholeskyEx::functional);
  m.impl("linalg_cholesky_ex.L", CholeskyEx::out2);
  m.impl("triangular_solve", TriangularSolve::functional);
  m.impl("triangular_solve.X", TriangularSolve::out2);
#ifdef TORCH_OCL_HAS_CHOLESKY
  m.impl("cholesky", TORCH_FN(at::native::cholesky));
  m.impl("cholesky.out", TORCH_FN(at::native::cholesky_out));
#endif
  m.impl("cholesky_inverse", TORCH_FN(at::native::cholesky_inverse));
  m.impl("cholesky_inverse.out", TORCH_FN(at::native::cholesky_inverse_out));
  m.impl("_cholesky_solve_helper", TORCH_FN(torch_ocl::cholesky_solve_helper));
  m.impl("linalg_solve_triangular", TORCH_FN(at::native::linalg_solve_triangular));
  m.impl("linalg_solve_triangular.out", TORCH_FN(at::native::linalg_solve_triangular_out));
  m.impl("linalg_qr", Qr::functional);
  m.impl("linalg_qr.out", Qr::out2);
  m.impl("geqrf", TORCH_FN(at::native::geqrf));
  m.impl("geqrf.a", TORCH_FN(at::native::geqrf_out));
  m.impl("linalg_householder_product", TORCH_FN(at::native::linalg_householder_product));
  m.impl("linalg_householder_product.out", TORCH_FN(at::native::linalg_householder_product_out));
  m.impl("ormqr", TORCH_FN(at::native::ormqr));
  m.impl("ormqr.out", TORCH_FN(torch_ocl::ormqr_out));
  m.impl("_linalg_eigh", Eigh::functional);
  m.impl("_linalg_eigh.eigenvalues", Eigh::out2);
  m.impl("_linalg_svd", Svd::functional);
  m.impl("_linalg_svd.U", Svd::out3);
}
