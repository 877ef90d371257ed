// The strided elementwise engine: launches kernels/elementwise.cl over a built TensorIterator
// (any rank, broadcasting, type promotion, CPU scalar operands, non-contiguous outputs).
#pragma once

#include <ATen/TensorIterator.h>
#include <c10/core/Scalar.h>

#include <initializer_list>
#include <string>

#include "ops/KernelTypes.h"

namespace torch_ocl {

// How scalars reach a kernel. CPU torch converts them in two ways, and so do we:
// - The op's parameters p0/p1 (alpha, clamp bounds, a fill value, a threshold) with an overflow
//   check, like the CPU's `scalar.to<scalar_t>()`: "value cannot be converted to type float
//   without overflow" for fill_(1e300). The check is against the compute dtype, or against
//   `param_dtype` where the CPU checks another one (its opmath type, say).
// - CPU scalar operands (Python numbers, 0-dim CPU tensors: x + 1000, x < 1000) without a check,
//   like the CPU's TensorIterator: integers wrap, floats beyond range become +-inf. Ops whose
//   CPU kernel checks its scalar operand (where, masked_fill) set `checked_operands`.
struct EwParams {
  c10::Scalar p0 = 0, p1 = 0;
  at::ScalarType compute = at::ScalarType::Undefined;      // default: the iterator's common dtype
  const char* extra = nullptr;                             // extra build options: a string literal
  at::ScalarType param_dtype = at::ScalarType::Undefined;  // default: the compute dtype
  bool checked_operands = false;
  // Integer compute only: the kernel checks its second operand is nonzero and records this
  // message (a string literal) for the host to raise at its next wait (runtime/DeviceError.h),
  // as the CPU raises ZeroDivisionError for integer division by zero.
  const char* zero_divisor_error = nullptr;

  at::ScalarType param_dtype_or(at::ScalarType t) const {
    return param_dtype != at::ScalarType::Undefined ? param_dtype : t;
  }
};

// Runs OP_<op> of kernels/elementwise.cl over `iter` (one output, up to three inputs).
void launch_elementwise(at::TensorIteratorBase& iter, const char* op, const EwParams& params = {});

// Fast path without a TensorIterator for the commonest case: inputs on one ocl device with the
// same dtype and shape, all contiguous; the result is a new contiguous tensor of that dtype.
// fast_path_ok says whether it applies; launch_same_shape runs OP_<op> (up to three inputs).
bool fast_path_ok(std::initializer_list<const at::Tensor*> inputs);
at::Tensor launch_same_shape(const char* op, std::initializer_list<const at::Tensor*> inputs,
                             const EwParams& params = {});

// Tiny-op batching (runtime/Batch.h) for out = OP_<op>(a, b) with no iterator: out, a and b
// (when given) on one ocl device, same shape and dtype (float, half or bfloat16), contiguous;
// out a new tensor or a itself (in place); with b null, `scalar` (if given) is the second
// operand. True if the op was recorded; false leaves everything untouched (launch it normally).
bool try_batch(const char* op, const at::Tensor& out, const at::Tensor& a, const at::Tensor* b,
               const c10::Scalar* scalar, const EwParams& params = {});
// Whether a tensor of a's size could be batched at all (cheap; checked before allocating).
bool batch_size_ok(const at::Tensor& a);

}  // namespace torch_ocl
