// mm and addmm (and so nn.Linear) with the register-blocked kernel of kernels/mm.cl. Transposed
// operands are read in place (A_TRANS / B_TRANS); other layouts are made contiguous first.
// float16/bfloat16 compute in float32.
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "ops/Elementwise.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

struct Operand {
  at::Tensor t;
  bool trans = false;
  int64_t ld = 0;
};

// Row-major (ld = row stride, unit column stride) or transposed (unit row stride).
Operand layout(const at::Tensor& x) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const int64_t s0 = x.stride(0), s1 = x.stride(1);
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(cols, 1)))
    return {x, false, rows == 1 ? std::max<int64_t>(cols, 1) : s0};
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(rows, 1)))
    return {x, true, cols == 1 ? std::max<int64_t>(rows, 1) : s1};
  at::Tensor c = x.contiguous();
  return {c, false, std::max<int64_t>(cols, 1)};
}

void check_mm(const at::Tensor& a, const at::Tensor& b, const char* name) {
  TORCH_CHECK(a.dim() == 2, name, ": self must be a matrix");
  TORCH_CHECK(b.dim() == 2, name, ": mat2 must be a matrix");
  TORCH_CHECK(a.size(1) == b.size(0), name, ": mat1 and mat2 shapes cannot be multiplied (",
              a.size(0), "x", a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", a.scalar_type(),
              " != ", b.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(a.scalar_type()), "torch-ocl: ", name,
                              " is implemented for floating dtypes only, got ", a.scalar_type());
}

// out (M x N, contiguous, compute dtype) = alpha * a @ b + beta * bias (bias may be undefined).
void launch_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias,
               const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (M == 0 || N == 0) return;
  const int device = out.device().index();
  const at::ScalarType t = out.scalar_type();
  const Operand A = layout(a), B = layout(b);
  const bool has_bias = bias.defined() && beta.toDouble() != 0.0;
  std::string opts = std::string("-DT=") + type_tag(t, device);
  if (A.trans) opts += " -DA_TRANS";
  if (B.trans) opts += " -DB_TRANS";
  if (has_bias) opts += " -DHAS_BIAS";
  cl_kernel k = get_kernel(device, "mm.cl", "mm", opts);
  const size_t item = out.itemsize();
  KernelLaunch launch(k);
  launch.arg(static_cast<cl_int>(M)).arg(static_cast<cl_int>(N)).arg(static_cast<cl_int>(K));
  launch.buffer(buffer_of(A.t), item).arg(static_cast<cl_long>(A.ld));
  launch.buffer(buffer_of(B.t), item).arg(static_cast<cl_long>(B.ld));
  launch.buffer(buffer_of(out), item).arg(static_cast<cl_long>(N));
  push_compute_scalar(launch, alpha, t);
  push_compute_scalar(launch, has_bias ? beta : c10::Scalar(0), t);
  if (has_bias) {
    launch.buffer(buffer_of(bias), item)
        .arg(static_cast<cl_long>(bias.stride(0)))
        .arg(static_cast<cl_long>(bias.stride(1)));
  } else {
    launch.buffer(buffer_of(out), item).arg(static_cast<cl_long>(0)).arg(static_cast<cl_long>(0));
  }
  const size_t TM = 6, TN = t == at::kDouble ? 8 : 16, LX = 2, LY = 4;
  auto roundup = [](size_t x, size_t l) { return (x + l - 1) / l * l; };
  const size_t global[2] = {roundup((N + TN - 1) / TN, LX), roundup((M + TM - 1) / TM, LY)};
  const size_t local[2] = {LX, LY};
  launch.enqueue(device, 2, global, local);
}

at::Tensor& addmm_impl(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b,
                       const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out,
                       const char* name) {
  check_mm(a, b, name);
  const int64_t M = a.size(0), N = b.size(1);
  if (out.sizes() != at::IntArrayRef({M, N})) out.resize_({M, N});
  at::Tensor bias_mn;
  if (bias.defined()) {
    bias_mn = bias.expand({M, N});
  }
  const at::ScalarType t = a.scalar_type();
  const bool reduced = t == at::kHalf || t == at::kBFloat16;
  if (!reduced && out.is_contiguous()) {
    launch_mm(a, b, bias_mn, beta, alpha, out);
    return out;
  }
  const at::ScalarType ct = reduced ? at::kFloat : t;
  at::Tensor tmp = at::empty({M, N}, out.options().dtype(ct));
  launch_mm(a.to(ct), b.to(ct), bias_mn.defined() ? bias_mn.to(ct) : bias_mn, beta, alpha, tmp);
  out.copy_(tmp);
  return out;
}

at::Tensor mm(const at::Tensor& a, const at::Tensor& b) {
  check_mm(a, b, "mm");
  at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
  return addmm_impl({}, a, b, 0, 1, out, "mm");
}
at::Tensor& mm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return addmm_impl({}, a, b, 0, 1, out, "mm");
}
at::Tensor addmm(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(a, b, "addmm");
  at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
  return addmm_impl(self, a, b, beta, alpha, out, "addmm");
}
at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  // Reading the bias while writing out is safe even when they alias: each element is read and
  // then written by the same work-item.
  return addmm_impl(self, a, b, beta, alpha, out, "addmm");
}
at::Tensor& addmm_(at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  return addmm_impl(self, a, b, beta, alpha, self, "addmm_");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", mm);
  m.impl("mm.out", mm_out);
  m.impl("addmm", addmm);
  m.impl("addmm.out", addmm_out);
  m.impl("addmm_", addmm_);
}

}  // namespace torch_ocl
