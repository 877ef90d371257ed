// The GEMM of csrc/ops/Matmul.cpp for other op families (convolution): batched, operands in any
// layout the kernel reads in place, written into an output view.
#pragma once

#include <ATen/core/Tensor.h>

#include "runtime/DeviceProfile.h"
#include "runtime/OpenCL.h"

namespace torch_ocl {

// out [B, M, N] = a [B, M, K] @ b [B, K, N] (+ bias [B, M, N], usually expanded; undefined for
// none), in one launch. `out` has unit column stride and any row and batch strides (a view into a
// larger tensor); a and b may be transposed, sliced or expanded along the batch (stride 0). All
// are ocl tensors of one dtype that the kernel computes in (float or double: callers widen half
// types first).
void gemm_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
               const at::Tensor& bias);

// out = a @ b as gemm_into, through the tiled kernel with this tile whatever the device profile
// says (the GEMM tuner's candidates); `event` (optional) receives the launch's event.
void gemm_with_tile(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                    const GemmTile& tile, cl_event* event);

}  // namespace torch_ocl
