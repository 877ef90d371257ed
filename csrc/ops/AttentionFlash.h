// The GPU variant of fused attention: kernels/attention_flash.cl, the flash-attention-2 layout
// (a work-group per block of rows, register-blocked score tiles through local memory). The
// device profile chooses it (DeviceProfile::attention_flash); ops/Attention.cpp asks these
// functions first and runs kernels/attention.cl where they return false (the profile says no,
// or no block fits the device's local memory or the compiled kernel's work-group limit).
// Nothing here waits for the device.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "ops/AttentionArgs.h"

namespace torch_ocl::attention {

// Operands as ops/Attention.cpp prepares them: 4-D [B, H, L, E] views with contiguous rows.
struct FlashOperands {
  at::Tensor q, k, v;
  Mask mask;
  bool causal;
  Geometry g;
  float scale;
  Dropout drop;
};

// O (into `o`, rows contiguous) and lse (float [B, H, L]); false where the variant does not run.
bool flash_forward(int device, const FlashOperands& a, const at::Tensor& o, const at::Tensor& lse);

// Gradients from grad_out `gr` and the forward's out `o` and lse; dq, dk, dv, ds: targets with
// contiguous rows, undefined where not wanted (ds: float [B, H, L, S], the mask's gradient
// before its reduction). false (nothing enqueued) where the variant does not run.
bool flash_backward(int device, const FlashOperands& a, const at::Tensor& gr, const at::Tensor& o,
                    const at::Tensor& lse, const at::Tensor& dq, const at::Tensor& ds,
                    const at::Tensor& dk, const at::Tensor& dv);

}  // namespace torch_ocl::attention
