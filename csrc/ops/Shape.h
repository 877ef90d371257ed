// The remap kernel of kernels/shape.cl, shared by the shape ops (flip, roll, tril/triu: Shape.cpp)
// and the padding ops (Pad.cpp): out[o] = in[j(o)], one coordinate map per dim, in one launch.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace torch_ocl {

// How a dim's output coordinate o becomes the input coordinate j (I: the input's extent).
enum class RemapMode : uint32_t {
  kShift = 0,      // j = o - offset; outside [0, I): the fill value
  kReflect = 1,    // j = o - offset reflected at the edges (needs offset < I and the far pad < I)
  kReplicate = 2,  // j = clamp(o - offset, 0, I - 1)
  kWrap = 3,       // j = (o - offset) mod I
  kFlip = 4,       // j = I - 1 - o
};

struct RemapDim {
  RemapMode mode = RemapMode::kShift;
  int64_t offset = 0;
};

// Keeps the lower (col - row <= k) or upper (col - row >= k) triangle of the last two dims; the
// other elements take the fill value.
enum class Triangle { kNone = 0, kLower = 1, kUpper = 2 };

// out[o] = in[j(o)] with `dims[d]` mapping dim d (out and in: same dtype, same rank as `dims`,
// any strides; out must not overlap in unless every dim is the identity). `fill` points to one
// element of out's dtype (nullptr: zero bits). Enqueues one kernel; nothing for an empty out.
void launch_remap(const at::Tensor& out, const at::Tensor& in, const std::vector<RemapDim>& dims,
                  const void* fill = nullptr, Triangle tri = Triangle::kNone, int64_t k = 0);

// The bits of `value` converted to `dtype` as fill_ converts it (the CPU's overflow check
// included), for launch_remap's fill.
struct FillBits {
  alignas(8) unsigned char bytes[8] = {};
};
FillBits fill_bits(const c10::Scalar& value, at::ScalarType dtype);

}  // namespace torch_ocl
