// Multi-tensor launches of kernels/foreach.cl (like CUDA's multi_tensor_apply): one kernel launch
// covers many tensors. The tensors' buffers are kernel arguments (each distinct buffer once, up to
// kMtBuffers per launch) and a table passed by value says where each tensor of each list is
// (buffer slot, element offset, numel); every work-group processes one chunk of one tensor.
// Lists that need more buffers or rows than one launch takes are split into several launches.
// The table layout is documented in kernels/foreach.cl.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/OpenCL.h"

namespace torch_ocl {

class KernelLaunch;

constexpr int kMtBuffers = 32;  // MT_NB in kernels/foreach.cl

// Per-device launch geometry and table size.
struct MtGeometry {
  size_t lws = 0;       // work-group size
  uint32_t per = 0;     // elements per work-item in a chunk
  uint32_t words = 0;   // table words (MT_WORDS)
  std::string options;  // "-DMT_WORDS=... -DLWS=... -DMT_PER=... [-DMT_CONSEC]"
  uint32_t chunk() const { return static_cast<uint32_t>(lws) * per; }
};
const MtGeometry& mt_geometry(int device);

// Whether t can be a row of a table: element offsets and sizes fit the kernels' 32-bit indices.
bool mt_fits(const at::Tensor& t);

// One launch: the tensors [first, first + count) of the lists (rows skip empty tensors unless
// the plan keeps them), their buffers and table.
struct MtBatch {
  std::vector<uint32_t> table;
  std::array<cl_mem, kMtBuffers> slots{};
  int nslots = 0;
  size_t first = 0, count = 0;
  uint32_t rows = 0, chunks = 0;  // table rows; work-groups to launch
};

// Splits the tensors into launches. lists[l][i] is operand l of tensor i, every one a dense
// tensor on `device` that mt_fits; a row has list 0's numel. `scalars` (if given) holds each
// tensor's scalar as two table words (SCALARLIST). Empty tensors get rows (with no chunks) only
// with keep_empty.
std::vector<MtBatch> mt_plan(int device, const std::vector<at::TensorList>& lists,
                             const std::vector<std::array<uint32_t, 2>>* scalars = nullptr,
                             bool keep_empty = false);

// Pushes the batch's buffers and table: the first arguments of every kernel in foreach.cl.
// Unused buffer slots repeat `fallback` (any valid buffer; the first slot's when null).
void mt_push(KernelLaunch& launch, const MtBatch& batch, cl_mem fallback = nullptr);

// The table words of a scalar in the kernel's compute type: float bits, double bits (low, high)
// when `compute` is float64, int64 bits for integer dtypes.
std::array<uint32_t, 2> mt_scalar_words(const c10::Scalar& v, at::ScalarType compute);

}  // namespace torch_ocl
