// What the kernels call a dtype, and how host values reach them: the type tags of
// kernels/common.clh (float, half, uchar, ...) and scalar arguments converted like the CPU.
#pragma once

#include <ATen/core/ScalarType.h>
#include <c10/core/Scalar.h>

#include <cstddef>

namespace torch_ocl {

class KernelLaunch;

// The kernels' type tag of a dtype ("float", "half", ...); raises for unsupported dtypes or
// float64 on a device without fp64.
const char* type_tag(at::ScalarType t, int device);
bool is_floating_tag(at::ScalarType t);
// The integer tag of an element's size (uchar, short, int, long): ops that only move elements
// (masked_select, index_select) copy them as bits, NaN payloads and -0.0 included.
const char* bits_tag(size_t itemsize);
// The integer dtype of an element's size (kByte, kShort, kInt, kLong), for moving bits.
at::ScalarType bits_dtype(size_t itemsize);

// A scalar operand as a float compute value; beyond float's range it becomes +-inf, as on the
// CPU.
float scalar_as_float(const c10::Scalar& v);
// Raises the CPU's "value cannot be converted to type T without overflow" if v does not fit t.
void check_scalar_fits(const c10::Scalar& v, at::ScalarType t);

// Appends a value of dtype `t`'s compute type (float for half/bfloat16) as a kernel argument:
// push_compute_scalar checks the value fits t (a parameter), push_operand_scalar converts it
// without a check (an operand: integers wrap, floats become +-inf), see EwParams.
void push_compute_scalar(KernelLaunch& launch, const c10::Scalar& v, at::ScalarType t);
void push_operand_scalar(KernelLaunch& launch, const c10::Scalar& v, at::ScalarType t);

}  // namespace torch_ocl
