// The GEMM of csrc/ops/Matmul.cpp for other op families (convolution): batched, operands in any
// layout the kernel reads in place, written into an output view.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_ocl {

// out [B, M, N] = a [B, M, K] @ b [B, K, N] (+ bias [B, M, N], usually expanded; undefined for
// none), in one launch. `out` has unit column stride and any row and batch strides (a view into a
// larger tensor); a and b may be transposed, sliced or expanded along the batch (stride 0). All
// are ocl tensors of one dtype that the kernel computes in (float or double: callers widen half
// types first).
void gemm_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
               const at::Tensor& bias);

}  // namespace torch_ocl
