// isin (all three forms) through ATen's structured implementation: its meta function checks the
// dtypes and declares the bool output; its impl either compares every element with every test
// element (isin_default_stub: our kernel, kernels/isin.cl) or, for larger test sets, sorts
// (ATen's isin_sorting, on native sort/cat/index ops).
#include <ATen/native/TensorCompare.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/isin_native.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

// out (bool, elements' shape) = elements in test_elements, != invert. As on the CPU, both are
// compared in their promoted dtype.
void isin_default_kernel(const at::Tensor& elements, const at::Tensor& test_elements, bool invert,
                         const at::Tensor& out) {
  const int64_t n = elements.numel();
  if (n == 0) return;
  const int device = out.device().index();
  const at::ScalarType t = at::result_type(elements, test_elements);
  const at::Tensor e = elements.to(t).contiguous();
  const at::Tensor te = test_elements.to(t).contiguous();
  at::Tensor work = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  constexpr size_t kLws = 64;
  const std::string opts = std::string("-DT=") + type_tag(t, device);
  KernelLaunch launch(get_kernel(device, "isin.cl", "isin", opts));
  launch.buffer(buffer_of(e), e.itemsize()).arg(static_cast<cl_ulong>(n));
  launch.buffer(buffer_of(te), te.itemsize()).arg(static_cast<cl_ulong>(te.numel()));
  launch.buffer(buffer_of(work), 1).arg(static_cast<cl_int>(invert ? 1 : 0));
  launch.enqueue1d(device, static_cast<size_t>(n), kLws);
  if (!work.is_same(out)) out.copy_(work);
}

using Isin = AtenStructured<at::native::structured_isin_Tensor_Tensor_out>;
// A scalar operand: ATen's impls redispatch to eq / ne or to the Tensor, Tensor form.
using IsinTensorScalar = AtenStructured<at::native::structured_isin_Tensor_Scalar_out>;
using IsinScalarTensor = AtenStructured<at::native::structured_isin_Scalar_Tensor_out>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("isin.Tensor_Tensor", Isin::functional);
  m.impl("isin.Tensor_Tensor_out", Isin::out);
  m.impl("isin.Tensor_Scalar", IsinTensorScalar::functional);
  m.impl("isin.Tensor_Scalar_out", IsinTensorScalar::out);
  m.impl("isin.Scalar_Tensor", IsinScalarTensor::functional);
  m.impl("isin.Scalar_Tensor_out", IsinScalarTensor::out);
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(isin_default_stub, &torch_ocl::isin_default_kernel);
}  // namespace at::native
