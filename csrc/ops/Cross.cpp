// linalg_cross (and cross, which ATen sends there): ATen's structured implementation (shape and
// dtype checks, broadcasting, out=) with our kernel for its cross_stub. Each component of the
// result, out_k = a_(k+1) b_(k+2) - a_(k+2) b_(k+1) (indices mod 3 along dim), is three launches
// of the op table's ops over views of the operands: two products (mul), then their difference.
#include <ATen/native/Cross.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/linalg_cross_native.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "ops/Elementwise.h"
#include "ops/Structured.h"

namespace torch_ocl {
namespace {

void cross_kernel(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, int64_t dim) {
  // The CPU's kernel takes every dtype but bool.
  TORCH_CHECK_NOT_IMPLEMENTED(out.scalar_type() != at::kBool,
                              "\"cross\" not implemented for 'Bool'");
  // Operands of another dtype: the CPU kernel's error (its typed data pointers).
  for (const at::Tensor* t : {&a, &b}) {
    TORCH_CHECK(t->scalar_type() == out.scalar_type(), "expected scalar type ", out.scalar_type(),
                " but found ", t->scalar_type());
  }
  if (out.numel() == 0) return;
  for (int64_t k = 0; k < 3; ++k) {
    const int64_t i = (k + 1) % 3, j = (k + 2) % 3;
    const at::Tensor o = out.narrow(dim, k, 1);
    const at::Tensor ai = a.narrow(dim, i, 1), aj = a.narrow(dim, j, 1);
    const at::Tensor bi = b.narrow(dim, i, 1), bj = b.narrow(dim, j, 1);
    // Both products rounded to the dtype before the difference, as the CPU's kernel computes
    // (for half and bfloat16 that differs from one rounding at the end).
    const at::Tensor second = at::empty_like(o, at::MemoryFormat::Contiguous);
    auto first_product =
        at::TensorIteratorConfig().add_output(o).add_const_input(ai).add_const_input(bj).build();
    launch_elementwise(first_product, EwId::mul);
    auto second_product = at::TensorIteratorConfig()
                              .add_output(second)
                              .add_const_input(aj)
                              .add_const_input(bi)
                              .build();
    launch_elementwise(second_product, EwId::mul);
    auto difference =
        at::TensorIteratorConfig().add_output(o).add_const_input(o).add_const_input(second).build();
    EwParams params;
    params.p0 = -1;
    launch_elementwise(difference, EwId::add, params);
  }
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_cross", AtenStructured<at::native::structured_linalg_cross_out>::functional);
  m.impl("linalg_cross.out", AtenStructured<at::native::structured_linalg_cross_out>::out);
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(cross_stub, &torch_ocl::cross_kernel);
}  // namespace at::native
