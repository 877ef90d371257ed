// The sorted runs of an index tensor, shared by nn.Embedding's and nn.EmbeddingBag's weight
// gradients (csrc/ops/Embedding.cpp, EmbeddingBag.cpp): deterministic accumulation without
// atomics, each weight row adding its own positions in ascending order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace torch_ocl {

struct IndexRuns {
  at::Tensor runs;  // int32 [2, num_weights]: row v's run [runs[0][v], runs[1][v]) in `vals`
  at::Tensor vals;  // int32 [n]: the positions j, stably sorted by indices[j]
};

// Sorts the positions of `idx` (contiguous int64/int32 on an ocl device, current device set) by
// their index. Positions whose index is padding_idx or outside [0, num_weights) belong to no
// run. Enqueues only; no host wait.
IndexRuns sorted_index_runs(const at::Tensor& idx, int64_t num_weights, int64_t padding_idx);

}  // namespace torch_ocl
