// linalg.matrix_exp (torch.matrix_exp) on the device, composed of native ops (bmm, norms,
// where): scaling and squaring with a Taylor polynomial. Each matrix A of the batch is scaled
// by 2^-s with s = max(0, ceil(log2 ||A||_1)), so ||A / 2^s||_1 <= 1, where the degree-18 Taylor
// polynomial's truncation error is below 1 / 19! (1e-17, under float64's rounding); the
// polynomial is evaluated by Paterson-Stockmeyer in powers of A^4 (7 matrix products), then each
// matrix is squared s times (a batched product per squaring, matrices that need fewer keep their
// value through `where`). ATen's CPU algorithm (Bader-Blanes-Casas) picks a lower degree for small
// norms; both agree to rounding. A matrix whose norm is not finite gives NaN everywhere, as on
// the CPU; float16 and bfloat16 go through float32. The number of squarings is the batch's largest
// s, read back to the host once per call (the one host wait: the work depends on the data, as
// CUDA's ATen path also reads the norms). matrix_exp_backward is ATen's composite on top (a
// matrix_exp of a 2n x 2n block matrix).
#include <ATen/ops/abs.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/ceil.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/log2.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <limits>

#include "ops/HostRead.h"

namespace torch_ocl {
namespace {

constexpr int kDegree = 18;

at::Tensor matrix_exp_impl(const at::Tensor& self) {
  TORCH_CHECK(self.dim() >= 2, "linalg.matrix_exp: The input tensor A must have at least 2 ",
              "dimensions.");
  TORCH_CHECK(self.size(-1) == self.size(-2), "linalg.matrix_exp: A must be batches of square ",
              "matrices, but they are ", self.size(-2), " by ", self.size(-1), " matrices");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()),
              "linalg.matrix_exp: Expected a floating point or complex tensor, got ",
              self.scalar_type());
  c10::DeviceGuard guard(self.device());
  // float16 and bfloat16 are computed in float32 and rounded once at the end
  if (self.scalar_type() == at::kHalf || self.scalar_type() == at::kBFloat16)
    return matrix_exp_impl(self.to(at::kFloat)).to(self.scalar_type());
  const int64_t n = self.size(-1);
  if (self.numel() == 0) return self.clone(at::MemoryFormat::Contiguous);
  if (n == 1) return self.exp();
  const at::Tensor a = self.reshape({-1, n, n});
  // 1-norm (largest column sum) of each matrix; s = max(0, ceil(log2(norm)))
  const at::Tensor norm = at::amax(at::sum(at::abs(a), {-2}), {-1});
  const at::Tensor finite = at::isfinite(norm);
  const at::Tensor safe = at::where(finite, norm, at::zeros_like(norm));
  const at::Tensor s = at::clamp(at::ceil(at::log2(safe)), 0.0, 2000.0);
  const at::Tensor scaled = a / at::pow(2.0, s).view({-1, 1, 1});
  // Paterson-Stockmeyer: p(X) = B0 + X4 (B1 + X4 (B2 + X4 (B3 + X4 B4))), Bj = sum_i c[4j+i] X^i
  std::array<double, kDegree + 1> c{};
  c[0] = 1.0;
  for (int k = 1; k <= kDegree; ++k) c[k] = c[k - 1] / k;
  const at::Tensor eye = at::eye(n, a.options()).expand_as(a);
  const at::Tensor x2 = at::bmm(scaled, scaled);
  const at::Tensor x3 = at::bmm(x2, scaled);
  const at::Tensor x4 = at::bmm(x2, x2);
  const std::array<at::Tensor, 4> pw{eye, scaled, x2, x3};
  auto block = [&](int j) {
    at::Tensor b = pw[0] * c[4 * j];
    for (int i = 1; i < 4 && 4 * j + i <= kDegree; ++i) b = b + pw[i] * c[4 * j + i];
    return b;
  };
  at::Tensor r = block(4);
  for (int j = 3; j >= 0; --j) r = block(j) + at::bmm(x4, r);
  // squarings: the batch's largest s, read once
  const int64_t smax = read_longs(at::amax(s).to(at::kLong).reshape({1}),
                                  "linalg.matrix_exp: the number of squarings")[0];
  const at::Tensor sv = s.view({-1, 1, 1});
  for (int64_t k = 0; k < smax; ++k) r = at::where(at::gt(sv, k), at::bmm(r, r), r);
  r = at::where(finite.view({-1, 1, 1}), r,
                at::full_like(r, std::numeric_limits<double>::quiet_NaN()));
  return r.view(self.sizes());
}

at::Tensor& matrix_exp_out(const at::Tensor& self, at::Tensor& out) {
  const at::Tensor r = matrix_exp_impl(self);
  TORCH_CHECK(out.scalar_type() == r.scalar_type(), "linalg.matrix_exp: expected out of dtype ",
              r.scalar_type(), ", got ", out.scalar_type());
  out.resize_(r.sizes()).copy_(r);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_matrix_exp", matrix_exp_impl);
  m.impl("linalg_matrix_exp.out", matrix_exp_out);
}

}  // namespace torch_ocl
