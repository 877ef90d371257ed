// The strided elementwise engine: launches kernels/elementwise.cl over a built TensorIterator
// (any rank, broadcasting, type promotion, CPU scalar operands, non-contiguous outputs).
#pragma once

#include <ATen/TensorIterator.h>
#include <c10/core/Scalar.h>

#include <initializer_list>
#include <string>

namespace torch_ocl {

struct EwParams {
  c10::Scalar p0 = 0, p1 = 0;
  at::ScalarType compute = at::ScalarType::Undefined;  // default: the iterator's common dtype
  const char* extra = nullptr;                         // extra build options (e.g. -DHAS_LO)
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

// The kernels' type tag of a dtype ("float", "half", ...); raises for unsupported dtypes or
// float64 on a device without fp64.
const char* type_tag(at::ScalarType t, int device);
bool is_floating_tag(at::ScalarType t);
// The integer tag of an element's size (uchar, short, int, long): ops that only move elements
// (masked_select, index_select) copy them as bits, NaN payloads and -0.0 included.
const char* bits_tag(size_t itemsize);

// A scalar as a float compute value; beyond float's range it becomes +-inf, as on the CPU.
float scalar_as_float(const c10::Scalar& v);

// Appends a value of dtype `t`'s compute type (float for half/bfloat16) as a kernel argument.
class KernelLaunch;
void push_compute_scalar(KernelLaunch& launch, const c10::Scalar& v, at::ScalarType t);

}  // namespace torch_ocl
