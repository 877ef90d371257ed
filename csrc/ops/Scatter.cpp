// The scatter family: gather, scatter (src, value, reduce), scatter_add, scatter_reduce,
// index_add, index_reduce, index_copy, index_fill, all on launch_indexed (ops/Index.h,
// kernels/index.cl).
//
// gather, scatter*, scatter_reduce and index_copy are structured in ATen and their generic
// implementations (at::native::structured_<op>) call DispatchStubs: they are registered here as
// ATen's meta function + ATen's impl (Structured.h), with our kernels behind the stubs, so the
// argument checks, the include_self / mean handling of scatter_reduce and the CPU's errors are
// ATen's. index_add's and index_reduce's implementations in ATen are CPU-only (they read the
// indices on the host), so theirs are ours behind ATen's meta functions. index_fill_ is ATen's
// native function on our stub. Duplicate indices with a reduction combine every contribution
// (atomic updates; in the CPU's order under deterministic algorithms, ops/IndexOrdered.cpp); an
// index out of range is raised at the next host wait (runtime/DeviceError.h).
#include <ATen/Dispatch.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/op_registration/adaption.h>
#include <ATen/native/IndexKernel.h>
#include <ATen/native/ReductionType.h>
#include <ATen/native/TensorAdvancedIndexing.h>
#include <ATen/ops/gather_native.h>
#include <ATen/ops/index_add_meta.h>
#include <ATen/ops/index_copy_native.h>
#include <ATen/ops/index_fill_native.h>
#include <ATen/ops/index_reduce_meta.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/scatter_add_native.h>
#include <ATen/ops/scatter_native.h>
#include <ATen/ops/scatter_reduce_native.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <limits>
#include <utility>

#include "ops/Index.h"
#include "ops/Structured.h"

namespace torch_ocl {
namespace {

// ATen's structured impl class, run as the kernel of a Structured<Meta, ...> registration: the
// meta part already ran there; the impl computes into the working output and reaches our
// kernels through a DispatchStub.
template <class Impl>
struct AtenImpl final : Impl {
  const at::Tensor& maybe_get_output(int64_t) override {
    TORCH_INTERNAL_ASSERT(false, "torch-ocl: an ATen impl asked for its meta outputs");
  }
};

constexpr const char* kBadScatter =
    "gather / scatter: an index is out of bounds for the dimension it indexes";

// ---- the stubs of gather and scatter: one element per element of index ----

// The check (and message) of the CPU's generated wrappers, which the dispatcher does not run
// for kernels registered like ours.
void check_same_device(const char* op, const at::Tensor& a, const at::Tensor& index,
                       const at::Tensor* b) {
  std::optional<at::Device> common;
  c10::impl::check_and_update_common_device(common, a, op, "self");
  c10::impl::check_and_update_common_device(common, index, op, "index");
  if (b) c10::impl::check_and_update_common_device(common, *b, op, "src");
}

// A[..., index[i], ...] and B[i] for every position i of index, A indexed along `dim`.
void dim_indexed(const at::Tensor& a, int64_t dim, const at::Tensor& index, const at::Tensor* b,
                 IndexedOp op) {
  check_same_device("scatter_gather", a, index, b);
  if (index.numel() == 0) return;
  const int64_t rank = index.dim();
  dim = at::maybe_wrap_dim(dim, a.dim());
  IndexSpace s;
  for (int64_t d = rank - 1; d >= 0; --d) s.sizes.push_back(index.size(d));
  s.a = {a, nullptr, operand_strides(a, rank, dim)};
  if (b) s.b = {*b, nullptr, operand_strides(*b, rank)};
  s.indices.push_back({index, nullptr, operand_strides(index, rank)});
  op.indexed_sizes = {a.dim() ? a.size(dim) : 1};
  op.indexed_strides = {a.dim() ? a.stride(dim) : 1};
  op.error = kBadScatter;
  launch_indexed(std::move(s), op);
}

IndexReduce reduce_of(at::native::ReductionType r) {
  switch (r) {
    case at::native::ReductionType::SUM:
    case at::native::ReductionType::MEAN:  // ATen divides by the counts afterwards
      return IndexReduce::kAdd;
    case at::native::ReductionType::PROD:
      return IndexReduce::kMul;
    case at::native::ReductionType::MAX:
      return IndexReduce::kMax;
    case at::native::ReductionType::MIN:
      return IndexReduce::kMin;
  }
  TORCH_INTERNAL_ASSERT(false, "unknown reduction");
}

void gather_kernel(const at::Tensor& result, const at::Tensor& self, int64_t dim,
                   const at::Tensor& index) {
  IndexedOp op;
  op.gather = true;
  dim_indexed(self, dim, index, &result, op);
}

void scatter_kernel(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                    const at::Tensor& src) {
  dim_indexed(self, dim, index, &src, IndexedOp{});
}

void scatter_fill_kernel(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Scalar& value) {
  IndexedOp op;
  op.value = value;
  dim_indexed(self, dim, index, nullptr, op);
}

void scatter_add_kernel(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& src) {
  IndexedOp op;
  op.reduce = IndexReduce::kAdd;
  op.wide_accumulation = true;
  dim_indexed(self, dim, index, &src, op);
}

void scatter_reduce_kernel(const at::Tensor& self, const int64_t dim, const at::Tensor& index,
                           const at::Tensor& src, const at::native::ReductionType& reduce) {
  IndexedOp op;
  op.reduce = reduce_of(reduce);
  op.wide_accumulation = true;
  dim_indexed(self, dim, index, &src, op);
}

void scatter_scalar_reduce_kernel(const at::Tensor& self, const int64_t dim,
                                  const at::Tensor& index, const at::Scalar& value,
                                  const at::native::ReductionType& reduce) {
  IndexedOp op;
  op.reduce = reduce_of(reduce);
  op.value = value;
  dim_indexed(self, dim, index, nullptr, op);
}

// ---- the stubs of index_copy_ and index_fill_ (ATen's iterators: self restrided with stride
// 0 along dim, the index restrided along dim, and for index_copy_ the source) ----

void index_copy_kernel(at::TensorIterator& iter, int64_t, int64_t dim_size, int64_t dim_stride) {
  IndexedOp op;
  op.indexed_sizes = {dim_size};
  op.indexed_strides = {dim_stride};
  op.error = "index_copy_(): an index is out of bounds for the dimension it indexes";
  launch_indexed(space_of(iter, 0, 2, 1, 1), op);
}

constexpr const char* kBadFill =
    "index_fill_(): an index is out of bounds for the dimension it indexes";

void index_fill_kernel(at::TensorIterator& iter, int64_t, int64_t dim_size, int64_t dim_stride,
                       const at::Scalar& value) {
  IndexedOp op;
  op.value = value;
  op.wrap = true;
  op.indexed_sizes = {dim_size};
  op.indexed_strides = {dim_stride};
  op.error = kBadFill;
  launch_indexed(space_of(iter, 0, -1, 1, 1), op);
}

// index_fill_ with a tensor value: ATen reads the value on the host (.item()); a device value
// is instead read by the kernel (as a source with no strides), so that nothing waits. The
// checks are those of ATen's index_fill_.
at::Tensor& index_fill_tensor(at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (value.device().is_cpu()) return at::native::index_fill_(self, dim, index, value);
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong,
                    "index_fill_(): Expected dtype int64 for index.");
  at::assert_no_overlap(self, index);
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes) {
    TORCH_WARN(
        "Use of index_fill_ on expanded tensors is deprecated. "
        "Please clone() the tensor before performing this operation. "
        "This also applies to advanced indexing e.g. tensor[mask] = scalar");
  }
  check_same_device("index_fill_", self, index, &value);
  const at::Tensor target = self.dim() == 0 ? self.unsqueeze(-1) : self;
  dim = at::maybe_wrap_dim(dim, target.dim());
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  const at::Tensor v = value.to(self.scalar_type());
  const int64_t rank = target.dim();
  IndexSpace s;
  for (int64_t d = rank - 1; d >= 0; --d)
    s.sizes.push_back(d == dim ? index.numel() : target.size(d));
  s.a = {target, nullptr, operand_strides(target, rank, dim)};
  s.b = {v, nullptr, std::vector<int64_t>(static_cast<size_t>(rank), 0)};
  std::vector<int64_t> idx_strides(static_cast<size_t>(rank), 0);
  idx_strides[rank - 1 - dim] = index.dim() ? index.stride(0) : 1;
  s.indices.push_back({index, nullptr, std::move(idx_strides)});
  IndexedOp op;
  op.wrap = true;
  op.indexed_sizes = {target.size(dim)};
  op.indexed_strides = {target.stride(dim)};
  op.error = kBadFill;
  launch_indexed(std::move(s), op);
  return self;
}

// ---- structured ops ----

void gather_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
              bool sparse_grad) {
  AtenImpl<at::native::structured_gather_out>().impl(self, dim, index, sparse_grad, out[0]);
}
void scatter_src_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                   const at::Tensor& index, const at::Tensor& src) {
  AtenImpl<at::native::structured_scatter_src_out>().impl(self, dim, index, src, out[0]);
}
void scatter_value_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                     const at::Tensor& index, const at::Scalar& value) {
  AtenImpl<at::native::structured_scatter_value_out>().impl(self, dim, index, value, out[0]);
}
void scatter_reduce_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                      const at::Tensor& index, const at::Tensor& src, std::string_view reduce) {
  AtenImpl<at::native::structured_scatter_reduce_out>().impl(self, dim, index, src, reduce, out[0]);
}
void scatter_value_reduce_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                            const at::Tensor& index, const at::Scalar& value,
                            std::string_view reduce) {
  AtenImpl<at::native::structured_scatter_value_reduce_out>().impl(self, dim, index, value, reduce,
                                                                   out[0]);
}
void scatter_add_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                   const at::Tensor& index, const at::Tensor& src) {
  AtenImpl<at::native::structured_scatter_add>().impl(self, dim, index, src, out[0]);
}
void scatter_reduce_two_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                          const at::Tensor& index, const at::Tensor& src, std::string_view reduce,
                          bool include_self) {
  AtenImpl<at::native::structured_scatter_reduce_two>().impl(self, dim, index, src, reduce,
                                                             include_self, out[0]);
}
void index_copy_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                  const at::Tensor& index, const at::Tensor& source) {
  // The impl takes the dim as ATen's precomputed meta returns it: wrapped.
  AtenImpl<at::native::structured_index_copy_out>().impl(self, at::maybe_wrap_dim(dim, self.dim()),
                                                         index, source, out[0]);
}

bool is_one(const at::Scalar& s) {
  if (s.isBoolean()) return s.toBool();
  if (s.isIntegral(false)) return s.toLong() == 1;
  if (s.isFloatingPoint()) return s.toDouble() == 1.0;
  return false;
}

// out[..., index[j], ...] = out[..., index[j], ...] op source[..., j, ...] for index_add and
// index_reduce (their meta functions have checked the shapes: source is self's shape with
// index.numel() along dim).
void index_along(const at::Tensor& result, int64_t dim, const at::Tensor& index,
                 const at::Tensor& source, IndexedOp op) {
  if (index.numel() == 0) return;
  const at::Tensor res = result.dim() == 0 ? result.view({1}) : result;
  const at::Tensor src = source.dim() == 0 ? source.view({1}) : source;
  const int64_t rank = res.dim();
  IndexSpace s;
  for (int64_t d = rank - 1; d >= 0; --d) s.sizes.push_back(src.size(d));
  s.a = {res, nullptr, operand_strides(res, rank, dim)};
  s.b = {src, nullptr, operand_strides(src, rank)};
  std::vector<int64_t> idx_strides(static_cast<size_t>(rank), 0);
  idx_strides[rank - 1 - dim] = index.dim() ? index.stride(0) : 1;
  s.indices.push_back({index, nullptr, std::move(idx_strides)});
  op.indexed_sizes = {res.size(dim)};
  op.indexed_strides = {res.stride(dim)};
  launch_indexed(std::move(s), op);
}

void index_add_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                 const at::Tensor& index, const at::Tensor& source, const at::Scalar& alpha) {
  const at::Tensor& result = out[0];
  if (!result.is_same(self)) result.copy_(self);
  IndexedOp op;
  op.reduce = IndexReduce::kAdd;
  if (!is_one(alpha)) op.alpha = alpha;
  op.error = "index_add_(): index out of range in self";
  index_along(result, at::maybe_wrap_dim(dim, self.dim()), index, source, op);
}

// The identity that index_reduce's include_self=False writes first, as ATen's CPU kernel does.
at::Scalar reduce_identity(at::native::ReductionType r, at::ScalarType t) {
  at::Scalar value = 0;
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, t, "index_reduce", [&] {
    using limits = std::numeric_limits<scalar_t>;
    if (r == at::native::ReductionType::PROD) {
      value = scalar_t(1);
    } else if (r == at::native::ReductionType::MAX) {
      value = limits::has_infinity ? -limits::infinity() : limits::lowest();
    } else if (r == at::native::ReductionType::MIN) {
      value = limits::has_infinity ? limits::infinity() : limits::max();
    }
  });
  return value;
}

// index_reduce: ATen's implementation is CPU-only (it reads the indices on the host); this is
// its algorithm on our kernel: the indexed slices start from the identity unless include_self,
// are combined atomically, and the mean divides by the counts (floor division for integers).
void index_reduce_k(const Outputs<1>& out, const at::Tensor& self, int64_t dim,
                    const at::Tensor& index, const at::Tensor& source, std::string_view reduce,
                    bool include_self) {
  const at::Tensor& result = out[0];
  if (!result.is_same(self)) result.copy_(self);
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::native::ReductionType r = at::native::get_reduction_enum(reduce);
  if (!include_self)
    result.index_fill_(dim, index.to(at::kLong), reduce_identity(r, result.scalar_type()));
  IndexedOp op;
  op.reduce = reduce_of(r);
  op.error = "index_reduce_(): index out of range in self";
  index_along(result, dim, index, source, op);
  if (r == at::native::ReductionType::MEAN) {
    at::Tensor counts = include_self ? at::ones_like(result) : at::zeros_like(result);
    counts.index_add_(dim, index, at::ones_like(source));
    counts.masked_fill_(counts == 0, 1);
    if (result.is_floating_point()) {
      result.div_(counts);
    } else {
      result.div_(counts, "floor");
    }
  }
}

// kSamePosition 0: self may be the output itself (in-place), as the impls copy self into a
// different output before they scatter.
using Gather = Structured<at::meta::structured_gather, gather_k>;
using ScatterSrc = Structured<at::meta::structured_scatter_src, scatter_src_k, 0>;
using ScatterValue = Structured<at::meta::structured_scatter_value, scatter_value_k, 0>;
using ScatterReduce = Structured<at::meta::structured_scatter_reduce, scatter_reduce_k, 0>;
using ScatterValueReduce =
    Structured<at::meta::structured_scatter_value_reduce, scatter_value_reduce_k, 0>;
using ScatterAdd = Structured<at::meta::structured_scatter_add, scatter_add_k, 0>;
using ScatterReduceTwo =
    Structured<at::meta::structured_scatter_reduce_two, scatter_reduce_two_k, 0>;
using IndexAdd = Structured<at::meta::structured_index_add, index_add_k, 0>;
using IndexReduceOp = Structured<at::meta::structured_index_reduce, index_reduce_k, 0>;
using IndexCopy = Structured<at::meta::structured_index_copy, index_copy_k, 0>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("gather", Gather::functional);
  m.impl("gather.out", Gather::out);
  m.impl("scatter.src", ScatterSrc::functional);
  m.impl("scatter.src_out", ScatterSrc::out);
  m.impl("scatter_.src", ScatterSrc::inplace);
  m.impl("scatter.value", ScatterValue::functional);
  m.impl("scatter.value_out", ScatterValue::out);
  m.impl("scatter_.value", ScatterValue::inplace);
  m.impl("scatter.reduce", ScatterReduce::functional);
  m.impl("scatter.reduce_out", ScatterReduce::out);
  m.impl("scatter_.reduce", ScatterReduce::inplace);
  m.impl("scatter.value_reduce", ScatterValueReduce::functional);
  m.impl("scatter.value_reduce_out", ScatterValueReduce::out);
  m.impl("scatter_.value_reduce", ScatterValueReduce::inplace);
  m.impl("scatter_add", ScatterAdd::functional);
  m.impl("scatter_add.out", ScatterAdd::out);
  m.impl("scatter_add_", ScatterAdd::inplace);
  m.impl("scatter_reduce.two", ScatterReduceTwo::functional);
  m.impl("scatter_reduce.two_out", ScatterReduceTwo::out);
  m.impl("scatter_reduce_.two", ScatterReduceTwo::inplace);
  m.impl("index_add", IndexAdd::functional);
  m.impl("index_add.out", IndexAdd::out);
  m.impl("index_add_", IndexAdd::inplace);
  m.impl("index_reduce", IndexReduceOp::functional);
  m.impl("index_reduce.out", IndexReduceOp::out);
  m.impl("index_reduce_", IndexReduceOp::inplace);
  m.impl("index_copy", IndexCopy::functional);
  m.impl("index_copy.out", IndexCopy::out);
  m.impl("index_copy_", IndexCopy::inplace);
  m.impl("index_fill_.int_Scalar",
         static_cast<at::Tensor& (*)(at::Tensor&, int64_t, const at::Tensor&, const at::Scalar&)>(
             at::native::index_fill_));
  m.impl("index_fill_.int_Tensor", index_fill_tensor);
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(gather_stub, &torch_ocl::gather_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(scatter_stub, &torch_ocl::scatter_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(scatter_fill_stub, &torch_ocl::scatter_fill_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(scatter_add_stub, &torch_ocl::scatter_add_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(scatter_reduce_stub, &torch_ocl::scatter_reduce_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(scatter_scalar_reduce_stub, &torch_ocl::scatter_scalar_reduce_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(scatter_reduce_two_stub, &torch_ocl::scatter_reduce_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(index_copy_stub, &torch_ocl::index_copy_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(index_fill_stub, &torch_ocl::index_fill_kernel)
}  // namespace at::native
