// The strided elementwise engine: runs an op of the table (ops/ElementwiseOps.h) with
// kernels/elementwise.cl over a built TensorIterator (any rank, broadcasting, type promotion, CPU
// scalar operands, non-contiguous outputs). Tiny contiguous calls go into the stream's batch
// (ops/ElementwiseBatch.h) when the table allows it, whichever variant (functional, in-place,
// out=) the call came from.
#pragma once

#include <ATen/TensorIterator.h>
#include <c10/core/Scalar.h>

#include "ops/ElementwiseOps.h"
#include "ops/KernelTypes.h"

namespace torch_ocl {

// How scalars reach a kernel. CPU torch converts them in two ways, and so do we:
// - The op's parameters p0..p2 (alpha, clamp bounds, a fill value, a threshold) with an overflow
//   check, like the CPU's `scalar.to<scalar_t>()`: "value cannot be converted to type float
//   without overflow" for fill_(1e300). The check is against the compute dtype, or the opmath
//   type for ops flagged kOpmathParams, or `param_dtype` where the glue says so.
// - CPU scalar operands (Python numbers, 0-dim CPU tensors: x + 1000, x < 1000) without a check,
//   like the CPU's TensorIterator: integers wrap, floats beyond range become +-inf. Ops whose
//   CPU kernel checks its scalar operand (where, masked_fill) set `checked_operands`.
struct EwParams {
  c10::Scalar p0 = 0, p1 = 0, p2 = 0;
  at::ScalarType compute = at::ScalarType::Undefined;      // default: the iterator's common dtype
  at::ScalarType param_dtype = at::ScalarType::Undefined;  // default: see above
  bool checked_operands = false;
};

// Runs op over `iter` (one output, up to three inputs).
void launch_elementwise(at::TensorIteratorBase& iter, EwId op, const EwParams& params = {});

}  // namespace torch_ocl
