// mm and addmm (and so nn.Linear) with the register-blocked kernel of kernels/mm.cl. Transposed
// operands are read in place (A_TRANS / B_TRANS); other layouts are made contiguous first.
// float16/bfloat16 compute in float32; integers wrap around like CPU torch's. Registered through
// Structured.h: ATen's meta functions check shapes and dtypes, out= and in-place are checked and
// resized there, and an output that overlaps an operand is computed into a temporary.
#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm_meta.h>
#include <torch/library.h>

#include "ops/Elementwise.h"
#include "ops/Structured.h"
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

// out (M x N, contiguous, compute dtype) = alpha * a @ b + beta * bias (bias may be undefined).
void launch_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias,
               const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (M == 0 || N == 0) return;
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
  if (has_bias) {
    launch.buffer(buffer_of(bias), item)
        .arg(static_cast<cl_long>(bias.stride(0)))
        .arg(static_cast<cl_long>(bias.stride(1)));
  } else {
    launch.buffer(buffer_of(out), item).arg(static_cast<cl_long>(0)).arg(static_cast<cl_long>(0));
  }
  const size_t TM = 6, TN = item == 8 ? 8 : 16, LX = 2, LY = 4;
  auto roundup = [](size_t x, size_t l) { return (x + l - 1) / l * l; };
  const size_t global[2] = {roundup((N + TN - 1) / TN, LX), roundup((M + TM - 1) / TM, LY)};
  const size_t local[2] = {LX, LY};
  launch.enqueue(device, 2, global, local);
}

// out = beta * bias + alpha * a @ b (bias undefined for mm). The shapes and dtypes were checked
// by ATen's meta functions; out is contiguous and shares memory with a and b at most through
// the bias (Structured.h).
void addmm_kernel_impl(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b,
                       const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  const at::ScalarType t = a.scalar_type();
  TORCH_CHECK(t != at::kBool && !at::isComplexType(t), "\"addmm\" not implemented for '", t, "'");
  const int64_t M = a.size(0), N = b.size(1);
  at::Tensor bias_mn;
  if (bias.defined()) bias_mn = bias.expand({M, N});
  const bool reduced = t == at::kHalf || t == at::kBFloat16;
  if (!reduced) {
    launch_mm(a, b, bias_mn, beta, alpha, out);
    return;
  }
  at::Tensor tmp = at::empty({M, N}, out.options().dtype(at::kFloat));
  launch_mm(a.to(at::kFloat), b.to(at::kFloat),
            bias_mn.defined() ? bias_mn.to(at::kFloat) : bias_mn, beta, alpha, tmp);
  out.copy_(tmp);
}

void mm_kernel(const Outputs<1>& out, const at::Tensor& a, const at::Tensor& b) {
  addmm_kernel_impl({}, a, b, 0, 1, out[0]);
}
void addmm_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Tensor& a,
                  const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha) {
  addmm_kernel_impl(self, a, b, beta, alpha, out[0]);
}

using Mm = Structured<at::meta::structured_mm, mm_kernel>;
// The bias (argument 0) may be the output itself: the kernel reads each bias element only in the
// work-item that then writes that element (x.addmm_(a, b) needs no temporary).
using Addmm = Structured<at::meta::structured_addmm, addmm_kernel, 0>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", Mm::functional);
  m.impl("mm.out", Mm::out);
  m.impl("addmm", Addmm::functional);
  m.impl("addmm.out", Addmm::out);
  m.impl("addmm_", Addmm::inplace);
}

}  // namespace torch_ocl
