// The index-driven element kernel (index_elements, kernels/index.cl), shared by the index family
// (Index.cpp: x[idx], index_put_, take, put_) and the scatter family (Scatter.cpp: gather,
// scatter*, index_add, index_copy, index_fill). One launch moves or combines the elements of an
// iteration space: per element, A is addressed through the indices, B (or a scalar) is the
// other side; see kernels/index.cl.
#pragma once

#include <ATen/TensorIterator.h>
#include <c10/core/Scalar.h>

#include <optional>
#include <vector>

namespace torch_ocl {

enum class IndexReduce { kNone, kAdd, kMul, kMax, kMin };

// The build option of kernels/index.cl that selects the reduction (empty for kNone).
inline const char* reduce_option(IndexReduce r) {
  switch (r) {
    case IndexReduce::kAdd:
      return " -DREDUCE_ADD";
    case IndexReduce::kMul:
      return " -DREDUCE_MUL";
    case IndexReduce::kMax:
      return " -DREDUCE_MAX";
    case IndexReduce::kMin:
      return " -DREDUCE_MIN";
    case IndexReduce::kNone:
      break;
  }
  return "";
}

// One operand of an iteration space: the tensor (for its buffer) and its strides in elements, one
// per dimension of the space (innermost first). `ptr` is where its element 0 lies (a device
// address inside `tensor`'s storage), or null for tensor's own first element.
struct IndexOperand {
  at::TensorBase tensor;
  const void* ptr = nullptr;
  std::vector<int64_t> strides;
};

// An iteration space: sizes innermost first, A, B (undefined tensor when a scalar is the source)
// and the index operands.
struct IndexSpace {
  std::vector<int64_t> sizes;
  IndexOperand a, b;
  std::vector<IndexOperand> indices;
};

// The space of a TensorIterator's shape: operands a and b (-1: none) and the `nindex` index
// operands from `first_index` on.
IndexSpace space_of(const at::TensorIteratorBase& iter, int a, int b, int first_index, int nindex);
// The operand strides of tensor t for a space of `rank` dimensions in logical order (outermost
// first, as t's own), returned innermost first: t's strides when t has that rank, zeros when
// either is 0-dim and the other has at most one dimension, with `zero_dim` (if >= 0) zeroed.
std::vector<int64_t> operand_strides(const at::Tensor& t, int64_t rank, int64_t zero_dim = -1);

struct IndexedOp {
  bool gather = false;  // B = A[...]; otherwise A[...] = B (or value, or combined by `reduce`)
  // Per index: the size and stride (in elements of A) of the dimension it indexes.
  std::vector<int64_t> indexed_sizes, indexed_strides;
  bool wrap = false;  // indices in [-size, 0) count from the end
  IndexReduce reduce = IndexReduce::kNone;
  std::optional<c10::Scalar> value;  // the source is this scalar (checked like the CPU's .to<T>)
  std::optional<c10::Scalar> alpha;  // kAdd: B times alpha
  const char* error = nullptr;       // an index out of range: this message (a string literal)
  // The ordered form (launch_indexed_ordered) of a floating sum or product keeps the running
  // value in the compute type (float for half and bfloat16) and rounds once at the end, as the
  // CPU's scatter_add and scatter_reduce do; otherwise it rounds after every step, as the CPU's
  // index_put_ and index_add_ do.
  bool wide_accumulation = false;
  // A[...] = B where no two sources name one element of A (indices made from boolean masks).
  // Otherwise a repeated index makes the copy order-dependent (see launch_indexed).
  bool unique_targets = false;
};

// Runs `op` over `space` (nothing when it is empty). A and B have the same dtype.
// Where the result would depend on the order of the updates (floating-point sums and products
// at repeated indices, plain copies to indices that may repeat) and deterministic algorithms are
// on, it runs launch_indexed_ordered instead.
void launch_indexed(IndexSpace space, const IndexedOp& op);

// True when `op` over repeated indices gives a result that depends on the order of the updates
// in launch_indexed's atomic kernel.
bool order_dependent(const IndexedOp& op, at::ScalarType dtype);

// The ordered form (ops/IndexOrdered.cpp): every contribution to one element of A combined in
// the order of the positions (the CPU's serial order), so the same bits on every run; a plain
// copy keeps the last position's value. `space` is launch_indexed's, already coalesced and not
// empty; `op` has a B tensor (no value) and does not gather.
void launch_indexed_ordered(const IndexSpace& space, const IndexedOp& op);

// The offsets pass of the ordered form: index_elements with -DTARGETS writes, for position p of
// the (coalesced, non-empty) space, keys[p] = the offset of A's element (-1 where an index is out
// of range, recorded as launch_indexed records it) and srcs[p] = the offset of B's element, both
// relative to the operands' first elements. keys and srcs: contiguous int64, one per position.
void launch_index_targets(const IndexSpace& space, const IndexedOp& op, const at::Tensor& keys,
                          const at::Tensor& srcs);

}  // namespace torch_ocl
