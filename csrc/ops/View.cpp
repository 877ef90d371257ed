// View ops: results that alias their input's storage (schema `Tensor(a) self -> Tensor(a)`).
//
// A view must never go through the boxed CPU fallback: it would return a copy on the host, and
// writes through the "view" would not reach the base (Fallback.cpp refuses such ops). Most of
// ATen's view ops are CompositeExplicitAutograd or CompositeImplicitAutograd and reach a
// PrivateUse1 tensor through the views registered here; the ones registered here have only
// backend kernels in ATen (CPU, CUDA, Meta, ...). Their ATen kernels only compute sizes, strides
// and a storage offset over the same storage, so this file registers ATen's own functions.
// tests/ops/test_views.py enumerates every aliasing op and checks that it is native or composite.
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

namespace torch_ocl {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("unfold", at::native::unfold);
  // Complex views (docs/complex.md): metadata only, aliasing the real storage.
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
}

}  // namespace torch_ocl
