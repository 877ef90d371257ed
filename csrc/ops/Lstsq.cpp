// torch.linalg.lstsq on the device: ATen's linalg_lstsq (argument checks, batching, residuals,
// out=) registered for our key, with our kernel for its lstsq DispatchStub. As on CUDA, the
// device runs the 'gels' driver, which ATen picks for any non-CPU device when none is given; an
// explicit CPU driver ('gelsy', 'gelsd', 'gelss': rank-revealing, SVD) goes to the CPU fallback
// as before (Fallback.h: TORCH_OCL_FALLBACK decides), since ATen refuses them off the CPU. gels is
// a QR factorisation of full-rank A, through the native geqrf/ormqr/triangular-solve kernels of
// Linalg.cpp:
//   m >= n: A = QR, X = R^-1 (Q^T B)[:n];  m < n: A^T = QR, X = Q [R^-T B; 0] (minimum norm).
// gels returns no rank and no singular values (empty tensors), as on CUDA. Rank-deficient A gives
// what gels gives: no error, an unreliable solution. ATen reads the factorisation's `info` back
// once per call to check it (one host wait, as on CUDA).
#include <ATen/native/BatchLinearAlgebra.h>
#include <ATen/ops/geqrf.h>
#include <ATen/ops/linalg_lstsq_native.h>
#include <ATen/ops/linalg_solve_triangular.h>
#include <ATen/ops/ormqr.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <optional>
#include <string>

#include "ops/Fallback.h"

namespace torch_ocl {
namespace {

// a: [..., m, n], b: [..., max(m, n), k] (both column-major batches, ATen's copies); the solution
// goes to b[..., :n, :].
void lstsq_kernel(const at::Tensor& a, at::Tensor& b, at::Tensor& /*rank*/,
                  at::Tensor& /*singular_values*/, at::Tensor& infos, double /*rcond*/,
                  std::string driver) {
  TORCH_CHECK(driver == "gels", "torch.linalg.lstsq: only the 'gels' driver is supported on the ",
              "ocl device (as on CUDA); got '", driver, "'");
  const int64_t m = a.size(-2), n = a.size(-1);
  infos.zero_();
  if (m == 0 || n == 0 || b.size(-1) == 0) {
    if (n > 0 && b.size(-1) > 0) b.narrow(-2, 0, n).zero_();
    return;
  }
  if (m >= n) {
    auto [qr, tau] = at::geqrf(a);
    const at::Tensor qtb = at::ormqr(qr, tau, b.narrow(-2, 0, m), /*left=*/true,
                                     /*transpose=*/true);
    const at::Tensor r = qr.narrow(-2, 0, n);
    const at::Tensor x = at::linalg_solve_triangular(r, qtb.narrow(-2, 0, n), /*upper=*/true);
    // as LAPACK's gels: rows n..m keep (Q^T B), whose squares ATen sums into the residuals
    b.copy_(qtb);
    b.narrow(-2, 0, n).copy_(x);
  } else {
    auto [qr, tau] = at::geqrf(a.mT());  // [n, m]: A^T = Q R, R [m, m] upper
    const at::Tensor r = qr.narrow(-2, 0, m);
    const at::Tensor z = at::linalg_solve_triangular(r.mT(), b.narrow(-2, 0, m), /*upper=*/false);
    at::Tensor full = at::zeros(b.sizes(), b.options());
    full.narrow(-2, 0, m).copy_(z);
    b.copy_(at::ormqr(qr, tau, full, /*left=*/true, /*transpose=*/false));
  }
}

// linalg_lstsq.out, boxed: the driver decides between the device and the fallback.
void lstsq_out_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();  // self, b, rcond, driver, 4 outs
  auto args = torch::jit::last(*stack, n);
  const bool gels = args[3].isNone() || args[3].toStringRef() == "gels";
  if (!gels) {
    cpu_fallback(op, stack);
    return;
  }
  at::Tensor solution = args[4].toTensor(), residuals = args[5].toTensor(),
             rank = args[6].toTensor(), singular_values = args[7].toTensor();
  const std::optional<double> rcond =
      args[2].isNone() ? std::nullopt : std::optional<double>(args[2].toDouble());
  const std::string driver = "gels";
  at::native::linalg_lstsq_out(args[0].toTensor(), args[1].toTensor(), rcond,
                               c10::string_view(driver), solution, residuals, rank,
                               singular_values);
  torch::jit::drop(*stack, n);
  torch::jit::push(*stack, solution, residuals, rank, singular_values);
}

}  // namespace
}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(lstsq_stub, &torch_ocl::lstsq_kernel)
}  // namespace at::native

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_lstsq.out",
         torch::CppFunction::makeFromBoxedFunction<&torch_ocl::lstsq_out_boxed>());
}
