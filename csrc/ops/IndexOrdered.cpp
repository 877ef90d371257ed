// The ordered (deterministic) form of launch_indexed (ops/Index.h), taken under
// torch.use_deterministic_algorithms(True) by every op on the index kernel whose atomic result
// depends on the order of the updates: floating-point sums and products at repeated indices
// (index_put_ and put_ with accumulate, x[idx]'s backward, index_add_, index_reduce_ prod/mean,
// scatter_add_, scatter_reduce_ sum/prod/mean) and plain copies to indices that may repeat
// (index_put_, index_copy_, scatter_, put_). Also 8-byte reductions on a device without 64-bit
// atomics, which this form does not need.
//
// Sort-based, as CUDA's deterministic index_put_: an offsets pass (index_elements -DTARGETS)
// gives each position of the space the offset of its element of A (the key) and of B; a stable
// sort of the keys (ops/Sort.h) puts the positions of one element together, in position order;
// then index_segments (kernels/index.cl) has the work-item at the start of each run combine the
// run into its element, in that order, as the CPU's serial loop does: rounding to the dtype after
// each step (index_put_, index_add_) or once at the end (scatter_add, scatter_reduce: the CPU
// sums half and bfloat16 in float there); a copy keeps the last position's value, as the CPU's.
// The dimensions along which no index moves (the rows of index_add_ and index_put_) stay out of
// the offsets pass and the sort: one key per index position, its row's elements combined side
// by side. Costs: two int64 arrays and a sort of that many keys, and one work-item per distinct
// element (a run of many repeats is summed serially, as on the CPU).
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>

#include <string>
#include <vector>

#include "ops/Index.h"
#include "ops/KernelTypes.h"
#include "ops/Sort.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {

namespace {

constexpr size_t kLws = 256;

cl_long8 long8(const std::vector<int64_t>& v) {
  cl_long8 r{};
  TORCH_INTERNAL_ASSERT(v.size() <= 8);
  for (size_t d = 0; d < v.size(); ++d) r.s[d] = v[d];
  return r;
}

}  // namespace

void launch_indexed_ordered(const IndexSpace& s, const IndexedOp& op) {
  TORCH_INTERNAL_ASSERT(!op.gather && !op.value.has_value() && s.b.tensor.defined());
  const at::TensorBase& a = s.a.tensor;
  const at::ScalarType dtype = a.scalar_type();
  const int device = a.device().index();
  c10::DeviceGuard guard(a.device());
  // Slice dimensions: no index moves along them and A does, so the positions along them update
  // distinct elements (A has no internal overlap) in the same order as their neighbours. They
  // are left out of the offsets pass and the sort (index_add_'s and index_put_'s rows: one key
  // per index, not per element).
  IndexSpace rows;
  rows.a = {s.a.tensor, s.a.ptr, {}};
  rows.b = {s.b.tensor, s.b.ptr, {}};
  for (const IndexOperand& i : s.indices) rows.indices.push_back({i.tensor, i.ptr, {}});
  std::vector<int64_t> slice_sizes, slice_a, slice_b;
  for (size_t d = 0; d < s.sizes.size(); ++d) {
    bool slice = s.a.strides[d] != 0;
    for (const IndexOperand& i : s.indices) slice = slice && i.strides[d] == 0;
    if (slice) {
      slice_sizes.push_back(s.sizes[d]);
      slice_a.push_back(s.a.strides[d]);
      slice_b.push_back(s.b.strides[d]);
    } else {
      rows.sizes.push_back(s.sizes[d]);
      rows.a.strides.push_back(s.a.strides[d]);
      rows.b.strides.push_back(s.b.strides[d]);
      for (size_t k = 0; k < s.indices.size(); ++k)
        rows.indices[k].strides.push_back(s.indices[k].strides[d]);
    }
  }
  int64_t n = 1, m = 1;
  for (int64_t v : rows.sizes) n *= v;
  for (int64_t v : slice_sizes) m *= v;
  const at::TensorOptions longs = at::TensorOptions().dtype(at::kLong).device(a.device());
  const at::Tensor keys = at::empty({n}, longs), srcs = at::empty({n}, longs);
  launch_index_targets(rows, op, keys, srcs);
  const at::Tensor sorted = at::empty({n}, longs), perm = at::empty({n}, longs);
  sort_along(keys, 0, /*descending=*/false, sorted, perm);

  std::string options = "-DSEGMENTS -DT=";
  if (op.reduce == IndexReduce::kNone) {
    options += bits_tag(a.itemsize());
  } else {
    options += type_tag(dtype, device);
    if (is_floating_tag(dtype)) options += " -DT_FLOAT";
    options += reduce_option(op.reduce);
    if (op.alpha) options += " -DALPHA";
    if (op.wide_accumulation) options += " -DWIDE";
  }
  const BufferRef a_buf = s.a.ptr ? buffer_in(a, s.a.ptr) : buffer_of(a);
  const BufferRef b_buf = s.b.ptr ? buffer_in(s.b.tensor, s.b.ptr) : buffer_of(s.b.tensor);
  KernelLaunch launch(get_kernel(device, "index.cl", "index_segments", options));
  launch.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_ulong>(m));
  launch.arg(static_cast<cl_int>(slice_sizes.size()));
  launch.arg(long8(slice_sizes)).arg(long8(slice_a)).arg(long8(slice_b));
  launch.buffer(buffer_of(sorted), 8).buffer(buffer_of(perm), 8).buffer(buffer_of(srcs), 8);
  launch.buffer(a_buf, a.itemsize()).buffer(b_buf, a.itemsize());
  if (op.reduce != IndexReduce::kNone && op.alpha) push_compute_scalar(launch, *op.alpha, dtype);
  launch.enqueue1d(device, static_cast<size_t>(n * m), kLws);
}

}  // namespace torch_ocl
