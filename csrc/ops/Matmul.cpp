// mm, addmm (and so nn.Linear), bmm and baddbmm (batches in one launch) with the register-blocked
// kernel of kernels/mm.cl. Transposed
// operands are read in place (A_TRANS / B_TRANS); other layouts are made contiguous first.
// float16/bfloat16 compute in float32; integers wrap around like CPU torch's. Registered through
// Structured.h: ATen's meta functions check shapes and dtypes, out= and in-place are checked and
// resized there, and an output that overlaps an operand is computed into a temporary.
#include <ATen/ops/_addmm_activation_meta.h>
#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/baddbmm_meta.h>
#include <ATen/ops/bmm_meta.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/mm_meta.h>
#include <ATen/ops/relu.h>
#include <torch/library.h>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

struct Operand {
  at::Tensor t;
  bool trans = false;
  int64_t ld = 0;
  int64_t sb = 0;  // batch stride (0: one matrix, or the same matrix for every batch)
};

// A batch of matrices (B x rows x cols): each row-major (ld = row stride, unit column stride) or
// transposed (unit row stride), at a fixed batch stride. Other layouts are made contiguous.
Operand layout(const at::Tensor& x) {
  const int64_t rows = x.size(1), cols = x.size(2);
  const int64_t s0 = x.stride(1), s1 = x.stride(2);
  const int64_t sb = x.size(0) == 1 ? 0 : x.stride(0);
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(cols, 1)))
    return {x, false, rows == 1 ? std::max<int64_t>(cols, 1) : s0, sb};
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(rows, 1)))
    return {x, true, cols == 1 ? std::max<int64_t>(rows, 1) : s1, sb};
  at::Tensor c = x.contiguous();
  return {c, false, std::max<int64_t>(cols, 1), x.size(0) == 1 ? 0 : rows * cols};
}

// The kernel's element type: integers compute as the unsigned type of their size, whose
// wrap-around arithmetic gives the same bits as CPU torch's two's-complement wrap-around.
const char* mm_tag(at::ScalarType t, int device) {
  switch (t) {
    case at::kLong:
      return "ulong";
    case at::kInt:
      return "uint";
    case at::kShort:
      return "ushort";
    case at::kChar:
    case at::kByte:
      return "uchar";
    default:
      return type_tag(t, device);
  }
}

// alpha / beta as a kernel argument of the kernel's element type.
void push_mm_scalar(KernelLaunch& launch, const at::Scalar& v, at::ScalarType t) {
  if (is_floating_tag(t)) {
    push_compute_scalar(launch, v, t);
    return;
  }
  const uint64_t bits = static_cast<uint64_t>(v.to<int64_t>());
  switch (c10::elementSize(t)) {
    case 1:
      launch.arg(static_cast<cl_uchar>(bits));
      break;
    case 2:
      launch.arg(static_cast<cl_ushort>(bits));
      break;
    case 4:
      launch.arg(static_cast<cl_uint>(bits));
      break;
    default:
      launch.arg(static_cast<cl_ulong>(bits));
      break;
  }
}

// out (B x M x N, contiguous, compute dtype) = alpha * a @ b + beta * bias, batch by batch (bias
// B x M x N, possibly expanded, or undefined).
void launch_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias,
               const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  const int64_t nb = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  if (nb == 0 || M == 0 || N == 0) return;
  const int device = out.device().index();
  const at::ScalarType t = out.scalar_type();
  const Operand A = layout(a), B = layout(b);
  const bool has_bias = bias.defined() && beta.toDouble() != 0.0;
  std::string opts = std::string("-DT=") + mm_tag(t, device);
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
  push_mm_scalar(launch, alpha, t);
  push_mm_scalar(launch, has_bias ? beta : c10::Scalar(0), t);
  int64_t bias_sb = 0;
  if (has_bias) {
    bias_sb = nb == 1 ? 0 : bias.stride(0);
    launch.buffer(buffer_of(bias), item)
        .arg(static_cast<cl_long>(bias.stride(1)))
        .arg(static_cast<cl_long>(bias.stride(2)));
  } else {
    launch.buffer(buffer_of(out), item).arg(static_cast<cl_long>(0)).arg(static_cast<cl_long>(0));
  }
  launch.arg(static_cast<cl_long>(A.sb)).arg(static_cast<cl_long>(B.sb));
  launch.arg(static_cast<cl_long>(nb == 1 ? 0 : M * N)).arg(static_cast<cl_long>(bias_sb));
  const size_t TM = 6, TN = item == 8 ? 8 : 16, LX = 2, LY = 4;
  auto roundup = [](size_t x, size_t l) { return (x + l - 1) / l * l; };
  const size_t global[3] = {roundup((N + TN - 1) / TN, LX), roundup((M + TM - 1) / TM, LY),
                            static_cast<size_t>(nb)};
  const size_t local[3] = {LX, LY, 1};
  launch.enqueue(device, 3, global, local);
}

// out (B x M x N, contiguous) = beta * bias + alpha * a @ b for batches of matrices: bias is
// undefined (bmm) or broadcastable to B x M x N. Half types compute in float32.
void baddbmm_impl(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b,
                  const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out,
                  const char* name) {
  const at::ScalarType t = a.scalar_type();
  TORCH_CHECK(t != at::kBool && !at::isComplexType(t), "\"", name, "\" not implemented for '", t,
              "'");
  const int64_t nb = a.size(0), M = a.size(1), N = b.size(2);
  at::Tensor bias_bmn;
  if (bias.defined()) bias_bmn = bias.expand({nb, M, N});
  const bool reduced = t == at::kHalf || t == at::kBFloat16;
  if (!reduced) {
    launch_mm(a, b, bias_bmn, beta, alpha, out);
    return;
  }
  at::Tensor tmp = at::empty({nb, M, N}, out.options().dtype(at::kFloat));
  launch_mm(a.to(at::kFloat), b.to(at::kFloat),
            bias_bmn.defined() ? bias_bmn.to(at::kFloat) : bias_bmn, beta, alpha, tmp);
  out.copy_(tmp);
}

// out = beta * bias + alpha * a @ b (bias undefined for mm). The shapes and dtypes were checked
// by ATen's meta functions; out is contiguous and shares memory with a and b at most through
// the bias (Structured.h).
void addmm_kernel_impl(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b,
                       const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  baddbmm_impl(bias.defined() ? bias.expand({a.size(0), b.size(1)}).unsqueeze(0) : bias,
               a.unsqueeze(0), b.unsqueeze(0), beta, alpha, out.unsqueeze(0), "addmm");
}

void mm_kernel(const Outputs<1>& out, const at::Tensor& a, const at::Tensor& b) {
  addmm_kernel_impl({}, a, b, 0, 1, out[0]);
}
void addmm_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Tensor& a,
                  const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha) {
  addmm_kernel_impl(self, a, b, beta, alpha, out[0]);
}

// addmm with ReLU or GELU applied to the result (nn.Linear + activation in the transformer
// fast path); GELU exact, as the CPU's.
void addmm_activation_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Tensor& a,
                             const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha,
                             bool use_gelu) {
  addmm_kernel_impl(self, a, b, beta, alpha, out[0]);
  at::Tensor result = out[0];
  if (use_gelu) {
    at::gelu_(result);
  } else {
    at::relu_(result);
  }
}

void bmm_kernel(const Outputs<1>& out, const at::Tensor& a, const at::Tensor& b) {
  baddbmm_impl({}, a, b, 0, 1, out[0], "bmm");
}
void baddbmm_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Tensor& a,
                    const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha) {
  baddbmm_impl(self, a, b, beta, alpha, out[0], "baddbmm");
}

using Mm = Structured<at::meta::structured_mm, mm_kernel>;
using Bmm = Structured<at::meta::structured_bmm, bmm_kernel>;
// As addmm's bias, baddbmm's self may be the output itself.
using Baddbmm = Structured<at::meta::structured_baddbmm, baddbmm_kernel, 0>;
// The bias (argument 0) may be the output itself: the kernel reads each bias element only in the
// work-item that then writes that element (x.addmm_(a, b) needs no temporary).
using Addmm = Structured<at::meta::structured_addmm, addmm_kernel, 0>;
using AddmmActivation =
    Structured<at::meta::structured__addmm_activation, addmm_activation_kernel, 0>;

// ATen's baddbmm meta function copies self into the output before any kernel runs, so an output
// that shares memory with batch1 or batch2 would lose them first: those are read from copies.
at::Tensor unaliased(const at::Tensor& t, const at::Tensor& out) {
  return shares_memory(out, t) ? t.clone() : t;
}
at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                        const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  return Baddbmm::out(self, unaliased(a, out), unaliased(b, out), beta, alpha, out);
}
at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  return Baddbmm::inplace(self, unaliased(a, self), unaliased(b, self), beta, alpha);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", Mm::functional);
  m.impl("mm.out", Mm::out);
  m.impl("addmm", Addmm::functional);
  m.impl("addmm.out", Addmm::out);
  m.impl("addmm_", Addmm::inplace);
  m.impl("_addmm_activation", AddmmActivation::functional);
  m.impl("_addmm_activation.out", AddmmActivation::out);
  m.impl("bmm", Bmm::functional);
  m.impl("bmm.out", Bmm::out);
  m.impl("baddbmm", Baddbmm::functional);
  m.impl("baddbmm.out", baddbmm_out);
  m.impl("baddbmm_", baddbmm_);
}

}  // namespace torch_ocl
