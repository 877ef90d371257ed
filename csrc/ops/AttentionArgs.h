// The arguments the attention kernels take (kernels/attention.cl and kernels/attention_flash.cl
// read them alike): operands as (buffer, offset, [B, H, L] strides), the additive mask, the
// shape and scale, and the dropout parameters. Shared by ops/Attention.cpp (the op and the CPU
// variant's launches) and ops/AttentionFlash.cpp (the GPU variant's launches).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/where.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "runtime/Allocator.h"
#include "runtime/Launch.h"

namespace torch_ocl::attention {

// The [B, H, L, E] view of a 3-D [H, L, E] or 4-D operand.
inline at::Tensor as4d(const at::Tensor& t) { return t.dim() == 3 ? t.unsqueeze(0) : t; }

// The size [..., L, S] a mask broadcasts to for these operands.
inline std::vector<int64_t> mask_target(const at::Tensor& q, const at::Tensor& k) {
  std::vector<int64_t> s(q.sizes().begin(), q.sizes().end());
  s.back() = k.size(-2);
  return s;
}

// The sizes: batch, query heads, key/value heads, query rows, key rows, head dims.
struct Geometry {
  int64_t B, H, HK, L, S, DQK, DV;
};

// An operand as the kernels take it: buffer, offset and the [B, H, L] element strides.
inline void push4d(KernelLaunch& l, const at::Tensor& t) {
  l.buffer(buffer_of(t), t.itemsize());
  l.arg(static_cast<cl_long>(t.stride(0))).arg(static_cast<cl_long>(t.stride(1)));
  l.arg(static_cast<cl_long>(t.stride(2)));
}
inline void push_flat(KernelLaunch& l, const at::Tensor& t) {
  l.buffer(buffer_of(t), t.itemsize());
}

// The additive mask: [B, H, L, S] (broadcast dims with stride 0) in its own dtype, or absent.
struct Mask {
  at::Tensor t;  // undefined when absent
  at::ScalarType type;
};

inline Mask make_mask(const std::optional<at::Tensor>& bias, const at::Tensor& query,
                      const at::Tensor& key) {
  if (!bias || !bias->defined()) return {at::Tensor(), query.scalar_type()};
  at::Tensor m = *bias;
  if (m.scalar_type() == at::kBool) {  // True takes part: 0, False: -inf (as ATen converts)
    const auto opts = query.options();
    m = at::where(m, at::scalar_tensor(0.0, opts),
                  at::scalar_tensor(-std::numeric_limits<double>::infinity(), opts));
  }
  return {as4d(m.expand(mask_target(query, key))), m.scalar_type()};
}

inline void push_mask(KernelLaunch& l, const Mask& m, const at::Tensor& dummy) {
  if (m.t.defined()) {
    l.buffer(buffer_of(m.t), m.t.itemsize());
    for (int d = 0; d < 4; ++d) l.arg(static_cast<cl_long>(m.t.stride(d)));
  } else {
    l.buffer(buffer_of(dummy), dummy.itemsize());
    for (int d = 0; d < 4; ++d) l.arg(static_cast<cl_long>(0));
  }
  l.arg(static_cast<cl_int>(m.t.defined()));
}

// Dropout parameters: elements are dropped when a 24-bit Philox number is < thresh.
struct Dropout {
  uint32_t thresh = 0;
  float scale = 1.0f;
  uint32_t key0 = 0, key1 = 0;
  uint64_t base = 0;
};

inline uint64_t dropout_counters(const Geometry& g) { return g.B * g.H * g.L * ((g.S + 3) / 4); }

inline Dropout dropout_params(double p, uint64_t seed, uint64_t base) {
  Dropout d;
  if (p <= 0) return d;
  d.thresh = static_cast<uint32_t>(std::llround(std::ldexp(p, 24)));
  d.scale = static_cast<float>(1.0 / (1.0 - p));
  d.key0 = static_cast<uint32_t>(seed);
  d.key1 = static_cast<uint32_t>(seed >> 32);
  d.base = base;
  return d;
}

inline void push_tail(KernelLaunch& l, bool causal, const Geometry& g, float scale,
                      const Dropout& d) {
  l.arg(static_cast<cl_int>(causal)).arg(static_cast<cl_long>(g.H));
  l.arg(static_cast<cl_long>(g.H / g.HK)).arg(static_cast<cl_long>(g.L));
  l.arg(static_cast<cl_long>(g.S)).arg(scale);
  l.arg(static_cast<cl_uint>(d.thresh)).arg(d.scale);
  l.arg(static_cast<cl_uint>(d.key0)).arg(static_cast<cl_uint>(d.key1));
  l.arg(static_cast<cl_ulong>(d.base));
}

// The tensor a kernel writes for `out`: out itself when its last dim is contiguous.
inline at::Tensor kernel_target(const at::Tensor& out) {
  return out.size(-1) <= 1 || out.stride(-1) == 1 ? out : at::empty(out.sizes(), out.options());
}

}  // namespace torch_ocl::attention
