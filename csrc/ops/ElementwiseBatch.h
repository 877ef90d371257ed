// Batching of tiny elementwise ops: instead of one kernel launch each, small contiguous ops on a
// stream are recorded into that stream's pending batch and run by one launch of
// kernels/elementwise.cl's `elementwise_batch` (one work-group, the ops in order with a barrier
// between them). An OpenCL driver's per-launch cost (several microseconds on PoCL and on GPUs)
// is then paid once per batch instead of once per op.
//
// A pending batch is pending work of its stream (runtime/Batch.h): it is enqueued before anything
// else is enqueued on that stream, when it is full, and before device memory is released; so
// stream order, events, queries and host reads see the ops exactly as if they had been launched
// one by one. Recording never waits. TORCH_OCL_BATCH=0 turns batching off.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>

#include "ops/ElementwiseOps.h"
#include "runtime/Allocator.h"

namespace torch_ocl {

// Calls of more elements never go into a batch (the per-device limit is at most this).
constexpr int64_t kBatchNumelLimit = 8192;
// The dtypes the batch kernel takes (computed in float).
inline bool is_batch_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

// Records out = EWOP_<op>(a[, b]) over n contiguous elements of dtype t on the current stream of
// `device`; without b, the second operand is the value bv. Returns false (nothing recorded) when
// the op cannot be batched: an op not flagged kBatch, a dtype or size the batch kernel does not
// take, batching disabled, or the batch kernel unavailable; the caller then launches the op's
// own kernel.
bool batch_record(int device, EwId op, at::ScalarType t, int64_t n, const BufferRef& out,
                  const BufferRef& a, const BufferRef* b, float p0, float p1, float bv);

struct BatchCounts {
  int64_t ops = 0, launches = 0;  // ops recorded into batches; batch kernels enqueued
};
BatchCounts batch_counts();

}  // namespace torch_ocl
