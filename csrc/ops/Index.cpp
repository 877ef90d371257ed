// The index family on kernels/index.cl: index_select (so nn.Embedding's forward), advanced
// indexing x[idx] (index.Tensor) and index_put_ (accumulate too), take, put_ (accumulate too),
// masked_scatter_; and launch_indexed (ops/Index.h), the one kernel behind these and the scatter
// family (Scatter.cpp).
//
// x[idx], index_put_, take and put_ run ATen's own implementations (argument checks, boolean
// masks turned into indices, broadcasting, the CPU's errors), which reach our kernels through
// ATen's DispatchStubs (index_stub, index_put_stub, take_stub, put_stub). An out-of-range index
// is found by the kernel and raised at the next host wait (runtime/DeviceError.h).
#include "ops/Index.h"

#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/IndexKernel.h>
#include <ATen/native/TensorAdvancedIndexing.h>
#include <ATen/native/TensorAdvancedIndexingUtils.h>
#include <ATen/ops/_index_put_impl_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_native.h>
#include <ATen/ops/put_native.h>
#include <ATen/ops/take_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {

namespace {

constexpr size_t kLws = 256;
constexpr size_t kMaxDims = 8;  // dimensions of an iteration space (long8 arguments)
constexpr size_t kMaxIndices = 8;

cl_long8 long8_of(const std::vector<int64_t>& v) {
  cl_long8 r{};
  TORCH_INTERNAL_ASSERT(v.size() <= 8);
  for (size_t d = 0; d < v.size(); ++d) r.s[d] = v[d];
  return r;
}

BufferRef buffer_of_operand(const IndexOperand& o) {
  return o.ptr ? buffer_in(o.tensor, o.ptr) : buffer_of(o.tensor);
}

// Drops dimensions of size 1 and merges neighbours that every operand steps through as one.
void coalesce(IndexSpace& s) {
  std::vector<std::vector<int64_t>*> ops{&s.a.strides};
  if (s.b.tensor.defined()) ops.push_back(&s.b.strides);
  for (auto& i : s.indices) ops.push_back(&i.strides);
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides(ops.size());
  for (size_t d = 0; d < s.sizes.size(); ++d) {
    if (s.sizes[d] == 1) continue;
    bool merge = !sizes.empty();
    for (size_t k = 0; merge && k < ops.size(); ++k)
      merge = (*ops[k])[d] == strides[k].back() * sizes.back();
    if (merge) {
      sizes.back() *= s.sizes[d];
    } else {
      sizes.push_back(s.sizes[d]);
      for (size_t k = 0; k < ops.size(); ++k) strides[k].push_back((*ops[k])[d]);
    }
  }
  s.sizes = std::move(sizes);
  for (size_t k = 0; k < ops.size(); ++k) *ops[k] = std::move(strides[k]);
}

bool has_int64_atomics(int device) {
  return device_info(device).extensions.find("cl_khr_int64_base_atomics") != std::string::npos;
}

// Enqueues index_elements (built with `options`) over the coalesced space s: A and B are the
// operands' buffers, or a_buf / b_buf where given (the offsets pass writes keys and srcs there,
// with A's and B's strides).
void enqueue_elements(const IndexSpace& s, const IndexedOp& op, const std::string& options,
                      const BufferRef* a_buf, const BufferRef* b_buf) {
  const at::TensorBase& a = s.a.tensor;
  const at::ScalarType dtype = a.scalar_type();
  const int device = a.device().index();
  int64_t n = 1;
  for (int64_t v : s.sizes) n *= v;
  // Positions per work-item (the device profile's index_chunk): CPU devices (PoCL) save the
  // divisions of the positions' coordinates (consecutive positions step along the innermost
  // dimension); GPUs want one per work-item.
  const int64_t chunk = device_profile(device).index_chunk;
  KernelLaunch launch(get_kernel(device, "index.cl", "index_elements", options));
  launch.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_ulong>(chunk));
  launch.arg(static_cast<cl_int>(s.sizes.size()));
  launch.arg(long8_of(s.sizes));
  if (a_buf) {
    launch.buffer(*a_buf, 8);
  } else {
    launch.buffer(buffer_of_operand(s.a), a.itemsize());
  }
  launch.arg(long8_of(s.a.strides));
  if (op.value && !b_buf) {
    push_compute_scalar(launch, *op.value, dtype);
  } else {
    if (b_buf) {
      launch.buffer(*b_buf, 8);
    } else {
      launch.buffer(buffer_of_operand(s.b), a.itemsize());
    }
    launch.arg(long8_of(s.b.strides));
  }
  for (const IndexOperand& i : s.indices)
    launch.buffer(buffer_of_operand(i), i.tensor.itemsize()).arg(long8_of(i.strides));
  launch.arg(long8_of(op.indexed_sizes)).arg(long8_of(op.indexed_strides));
  if (op.alpha && !a_buf) push_compute_scalar(launch, *op.alpha, dtype);
  launch.arg(device_error_word(device)).arg(device_error_code(op.error));
  launch.enqueue1d(device, static_cast<size_t>((n + chunk - 1) / chunk), kLws);
}

}  // namespace

// ---- the shared kernel ----

std::vector<int64_t> operand_strides(const at::Tensor& t, int64_t rank, int64_t zero_dim) {
  std::vector<int64_t> st(static_cast<size_t>(rank), 0);
  if (t.dim() == rank) {
    for (int64_t d = 0; d < rank; ++d) st[rank - 1 - d] = d == zero_dim ? 0 : t.stride(d);
  } else {
    TORCH_INTERNAL_ASSERT(t.dim() <= 1 && rank <= 1);
  }
  return st;
}

IndexSpace space_of(const at::TensorIteratorBase& iter, int a, int b, int first_index, int nindex) {
  IndexSpace s;
  s.sizes.assign(iter.shape().begin(), iter.shape().end());
  auto operand = [&](int arg) {
    IndexOperand o;
    o.tensor = iter.tensor_base(arg);
    o.ptr = iter.data_ptr(arg);
    const int64_t size = iter.element_size(arg);
    for (int64_t st : iter.strides(arg)) o.strides.push_back(st / size);
    return o;
  };
  if (a >= 0) s.a = operand(a);
  if (b >= 0) s.b = operand(b);
  for (int k = 0; k < nindex; ++k) s.indices.push_back(operand(first_index + k));
  return s;
}

// Complex A, where the kernel would compute on elements (a scalar source, or a sum): the same
// work on the real view, whose elements are the parts. A sum of B adds part to part over one more
// (innermost) dimension of the two parts; a scalar source is written in two launches, one per
// part. Plain copies move complex64 elements by their bits and need none of this.
static bool launch_complex_as_real(const IndexSpace& s, const IndexedOp& op) {
  if (!s.a.tensor.is_complex()) return false;
  // (16-byte elements have no kernel type: complex128 copies go through the parts too. Copies
  // to repeated indices may then take the parts of one element from different sources, as the
  // order of such copies is undefined; deterministic algorithms order them.)
  if (!op.value && op.reduce == IndexReduce::kNone && s.a.tensor.itemsize() <= 8) return false;
  TORCH_CHECK_NOT_IMPLEMENTED(op.reduce == IndexReduce::kNone || op.reduce == IndexReduce::kAdd,
                              "torch-ocl: this indexed reduction (", reduce_option(op.reduce),
                              ") of complex elements is not implemented on the ocl device; "
                              "compute it on the CPU (.cpu())");
  TORCH_CHECK_NOT_IMPLEMENTED(!op.alpha || op.alpha->toComplexDouble().imag() == 0,
                              "torch-ocl: an indexed sum with a complex alpha is not implemented "
                              "on the ocl device; multiply the source by alpha first");
  auto real_operand = [](const IndexOperand& o) {
    IndexOperand r;
    r.tensor = at::view_as_real(at::Tensor(o.tensor));
    r.ptr = o.ptr;
    for (int64_t st : o.strides) r.strides.push_back(st * 2);
    return r;
  };
  IndexedOp rop = op;
  for (int64_t& st : rop.indexed_strides) st *= 2;
  if (op.alpha) rop.alpha = c10::Scalar(op.alpha->toComplexDouble().real());
  if (op.value) {
    const c10::complex<double> v = op.value->toComplexDouble();
    for (int part = 0; part < 2; ++part) {
      IndexSpace r = s;
      r.a = real_operand(s.a);
      if (part == 1) {
        const auto* first = static_cast<const char*>(s.a.ptr ? s.a.ptr : s.a.tensor.data_ptr());
        r.a.ptr = first + r.a.tensor.itemsize();
      }
      rop.value = c10::Scalar(part == 0 ? v.real() : v.imag());
      launch_indexed(std::move(r), rop);
    }
    return true;
  }
  IndexSpace r;
  r.sizes = {2};
  r.sizes.insert(r.sizes.end(), s.sizes.begin(), s.sizes.end());
  r.a = real_operand(s.a);
  r.a.strides.insert(r.a.strides.begin(), 1);
  r.b = real_operand(s.b);
  r.b.strides.insert(r.b.strides.begin(), 1);
  for (const IndexOperand& i : s.indices) {
    IndexOperand ri = i;
    ri.strides.insert(ri.strides.begin(), 0);
    r.indices.push_back(std::move(ri));
  }
  launch_indexed(std::move(r), rop);
  return true;
}

void launch_indexed(IndexSpace s, const IndexedOp& op) {
  for (int64_t v : s.sizes)
    if (v == 0) return;
  if (launch_complex_as_real(s, op)) return;
  coalesce(s);
  const at::TensorBase& a = s.a.tensor;
  const at::ScalarType dtype = a.scalar_type();
  const int device = a.device().index();
  c10::DeviceGuard guard(a.device());
  TORCH_CHECK_NOT_IMPLEMENTED(s.sizes.size() <= kMaxDims, "torch-ocl: indexing over more than ",
                              kMaxDims, " non-collapsible dimensions is not supported yet");
  const size_t nidx = s.indices.size();
  TORCH_CHECK_NOT_IMPLEMENTED(nidx >= 1 && nidx <= kMaxIndices,
                              "torch-ocl: indexing with more than ", kMaxIndices,
                              " index tensors is not supported yet");
  TORCH_INTERNAL_ASSERT(op.indexed_sizes.size() == nidx && op.indexed_strides.size() == nidx);
  TORCH_INTERNAL_ASSERT(op.error != nullptr);
  const at::ScalarType idx_dtype = s.indices[0].tensor.scalar_type();
  for (const IndexOperand& i : s.indices)
    TORCH_INTERNAL_ASSERT(i.tensor.scalar_type() == idx_dtype);
  TORCH_INTERNAL_ASSERT(idx_dtype == at::kLong || idx_dtype == at::kInt);
  const bool has_b = !op.value.has_value();
  if (has_b) TORCH_INTERNAL_ASSERT(s.b.tensor.defined() && s.b.tensor.scalar_type() == dtype);

  // Where the atomic kernel's result depends on the order of the updates, deterministic
  // algorithms take the ordered form; so do 8-byte reductions on a device without 64-bit atomics
  // (the ordered form needs none).
  const bool ordered = order_dependent(op, dtype) && at::globalContext().deterministicAlgorithms();
  const bool lacks_atomics = op.reduce != IndexReduce::kNone && !op.value && !op.gather &&
                             a.itemsize() == 8 && !has_int64_atomics(device);
  if (ordered || lacks_atomics) {
    launch_indexed_ordered(s, op);
    return;
  }
  const bool typed = op.value.has_value() || op.reduce != IndexReduce::kNone;
  std::string options = "-DNIDX=" + std::to_string(nidx);
  options += idx_dtype == at::kLong ? " -DIDX_T=long" : " -DIDX_T=int";
  options += " -DT=";
  if (typed) {
    options += type_tag(dtype, device);
    if (is_floating_tag(dtype)) options += " -DT_FLOAT";
  } else {
    options += bits_tag(a.itemsize());
  }
  if (op.gather) options += " -DGATHER";
  if (op.value) options += " -DVALUE";
  options += reduce_option(op.reduce);
  if (op.alpha) options += " -DALPHA";
  if (op.wrap) options += " -DWRAP";
  // Plain copies store through atomic exchanges (repeated indices must not race), 64-bit ones
  // where the device has 64-bit atomics.
  if (!typed && !op.gather && a.itemsize() == 8 && has_int64_atomics(device))
    options += " -DINT64_ATOMICS";
  if (op.reduce != IndexReduce::kNone && a.itemsize() == 8) {
    TORCH_CHECK_NOT_IMPLEMENTED(has_int64_atomics(device), "torch-ocl: accumulating ", dtype,
                                " elements needs 64-bit atomics (cl_khr_int64_base_atomics), "
                                "which ",
                                device_info(device).name, " lacks");
  }

  enqueue_elements(s, op, options, nullptr, nullptr);
}

bool order_dependent(const IndexedOp& op, at::ScalarType dtype) {
  if (op.gather || op.value.has_value()) return false;  // a scalar source: every update alike
  if (op.reduce == IndexReduce::kNone) return !op.unique_targets;
  return (op.reduce == IndexReduce::kAdd || op.reduce == IndexReduce::kMul) &&
         is_floating_tag(dtype);
}

void launch_index_targets(const IndexSpace& s, const IndexedOp& op, const at::Tensor& keys,
                          const at::Tensor& srcs) {
  TORCH_INTERNAL_ASSERT(!op.gather && !op.value && s.b.tensor.defined());
  std::string options = "-DTARGETS -DNIDX=" + std::to_string(s.indices.size());
  options += s.indices[0].tensor.scalar_type() == at::kLong ? " -DIDX_T=long" : " -DIDX_T=int";
  options += " -DT=long";  // unused by the pass: one program for every dtype
  if (op.wrap) options += " -DWRAP";
  const BufferRef k = buffer_of(keys), r = buffer_of(srcs);
  enqueue_elements(s, op, options, &k, &r);
}

namespace {

// ---- index_select ----

constexpr const char* kBadSelect = "index_select / embedding: an index is out of range in self";

// Checks the arguments and returns the result's sizes.
std::vector<int64_t> index_select_sizes(const at::Tensor& self, int64_t dim,
                                        const at::Tensor& index) {
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  TORCH_CHECK(index.device() == self.device(), "index_select(): expected index on ", self.device(),
              " like self, but it is on ", index.device());
  TORCH_CHECK(self.itemsize() <= 8, "index_select(): dtype ", self.scalar_type(),
              " is not supported on the ocl device yet");
  dim = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) sizes[dim] = index.numel();
  return sizes;
}

// out: contiguous, of index_select_sizes, sharing no memory with self or index.
void index_select_into(const at::Tensor& out, const at::Tensor& self, int64_t dim,
                       const at::Tensor& index) {
  if (out.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  dim = at::maybe_wrap_dim(dim, self.dim());
  const int64_t n_idx = index.numel();
  const at::Tensor src = self.contiguous();
  const int64_t src_dim = self.dim() > 0 ? self.size(dim) : 1;
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  const int device = self.device().index();
  const std::string options = std::string("-DINDEX_SELECT -DT=") + bits_tag(self.itemsize()) +
                              " -DIDX_T=" + (index.scalar_type() == at::kLong ? "long" : "int");
  KernelLaunch launch(get_kernel(device, "index.cl", "index_select", options));
  launch.arg(static_cast<cl_ulong>(out.numel())).arg(static_cast<cl_ulong>(inner));
  launch.arg(static_cast<cl_ulong>(n_idx)).arg(static_cast<cl_long>(src_dim));
  launch.buffer(buffer_of(out), out.itemsize()).buffer(buffer_of(src), src.itemsize());
  launch.buffer(buffer_of(index), index.itemsize());
  launch.arg(static_cast<cl_long>(index.dim() ? index.stride(0) : 0));
  launch.arg(device_error_word(device)).arg(device_error_code(kBadSelect));
  launch.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
}

at::Tensor index_select_impl(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = at::empty(index_select_sizes(self, dim, index), self.options());
  index_select_into(out, self, dim, index);
  return out;
}

// Not structured in ATen: the shared out= path of Structured.h, with the CPU's wording, and an
// out that overlaps self or index raises as on the CPU.
at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             at::Tensor& out) {
  const std::vector<int64_t> sizes = index_select_sizes(self, dim, index);
  const at::Tensor work =
      prepare_out(out, sizes, self.options(), {&self, &index}, OnOverlap::kRaise,
                  "index_select(): self and result must have the same scalar type");
  index_select_into(work, self, dim, index);
  finish_out(out, work);
  return out;
}

// ---- x[idx] and index_put_ (ATen's iterators: out or self restrided, src or value, indices) ----

constexpr const char* kBadIndex =
    "index / index_put_: an index is out of bounds for the dimension it indexes";

IndexedOp advanced_op(const at::TensorIteratorBase& iter, int indexed, at::IntArrayRef sizes,
                      at::IntArrayRef byte_strides) {
  IndexedOp op;
  op.wrap = true;
  op.error = kBadIndex;
  op.indexed_sizes = sizes.vec();
  const int64_t size = iter.element_size(indexed);
  for (int64_t st : byte_strides) op.indexed_strides.push_back(st / size);
  return op;
}

// index_stub: operands out, src (restrided), indices.
void index_kernel(at::TensorIteratorBase& iter, at::IntArrayRef sizes, at::IntArrayRef strides) {
  IndexedOp op = advanced_op(iter, 1, sizes, strides);
  op.gather = true;
  launch_indexed(space_of(iter, 1, 0, 2, iter.ntensors() - 2), op);
}

// index_put_stub: operands self (restrided), value, indices.
void index_put_kernel(at::TensorIterator& iter, at::IntArrayRef sizes, at::IntArrayRef strides,
                      bool accumulate) {
  IndexedOp op = advanced_op(iter, 0, sizes, strides);
  if (accumulate) op.reduce = IndexReduce::kAdd;
  launch_indexed(space_of(iter, 0, 1, 2, iter.ntensors() - 2), op);
}

// index_put_with_sort_stub: where ATen's _index_put_impl_ sends accumulating index_put_ calls
// (and, with deterministic algorithms, all of them) of this device. It gets the raw indices, so
// the advanced-indexing plan that ATen's make_info computes for index_put_stub is made here:
// ATen's own steps (masks to indices, broadcasting, non-adjacent indices moved to the front),
// then the restrided self and the reshaped indices of ATen's AdvancedIndex, whose constructor
// libtorch does not export. Then the same iterator and kernel as index_put_stub.
void index_put_with_sort_kernel(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& orig,
                                const at::Tensor& value, bool accumulate, bool /*unsafe*/) {
  at::native::checkIndexTensorTypes(orig, /*allow_int=*/true);
  std::vector<at::Tensor> indices =
      at::native::expandTensors(self, orig, /*ensure_same_device=*/true);
  try {
    indices = at::expand_outplace(indices);
  } catch (std::exception&) {
    TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together",
                      " with shapes ", at::native::shapes_as_str(indices));
  }
  while (indices.size() < static_cast<size_t>(self.dim())) indices.emplace_back();
  at::Tensor src = self;
  if (!at::native::hasContiguousSubspace(indices))
    std::tie(src, indices) = at::native::transposeToFront(self, indices);
  // The indexed dims (adjacent now) are replaced by the indices' shape, with stride 0 in src.
  std::vector<int64_t> sizes, strides;  // of the indexed dims (strides in elements)
  int64_t before = 0, after = 0;
  at::IntArrayRef shape;
  std::vector<at::Tensor> kept;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d].defined()) {
      (sizes.empty() ? before : after) += 1;
    } else {
      shape = indices[d].sizes();
      sizes.push_back(src.size(static_cast<int64_t>(d)));
      strides.push_back(src.stride(static_cast<int64_t>(d)));
      kept.push_back(indices[d].scalar_type() == at::kInt ? indices[d].to(at::kLong) : indices[d]);
    }
  }
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end() &&
      std::find(shape.begin(), shape.end(), 0) == shape.end()) {
    TORCH_CHECK_INDEX(false, "index is out of bounds for dimension with size 0");
  }
  std::vector<int64_t> src_sizes = src.sizes().vec(), src_strides = src.strides().vec();
  const auto first = static_cast<std::ptrdiff_t>(before);
  const auto last = first + static_cast<std::ptrdiff_t>(sizes.size());
  src_sizes.erase(src_sizes.begin() + first, src_sizes.begin() + last);
  src_strides.erase(src_strides.begin() + first, src_strides.begin() + last);
  src_sizes.insert(src_sizes.begin() + first, shape.begin(), shape.end());
  src_strides.insert(src_strides.begin() + first, shape.size(), 0);
  const at::Tensor restrided = src.as_strided(src_sizes, src_strides);
  for (at::Tensor& index : kept) {
    std::vector<int64_t> s(static_cast<size_t>(before), 1);
    s.insert(s.end(), index.sizes().begin(), index.sizes().end());
    s.insert(s.end(), static_cast<size_t>(after), 1);
    index = index.reshape(s);
  }
  TORCH_CHECK(at::is_expandable_to(value.sizes(), restrided.sizes()), "shape mismatch: value ",
              "tensor of shape ", value.sizes(), " cannot be broadcast to indexing result of ",
              "shape ", restrided.sizes());
  TORCH_CHECK(value.scalar_type() == restrided.scalar_type(),
              "Index put requires the source and destination dtypes match, got ",
              restrided.scalar_type(), " for the destination and ", value.scalar_type(),
              " for the source.");
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(false).resize_outputs(false).check_all_same_dtype(false);
  config.add_output(restrided).add_const_input(value);
  for (const at::Tensor& index : kept) config.add_const_input(index);
  at::TensorIterator iter = config.build();
  IndexedOp op;
  op.wrap = true;
  op.error = kBadIndex;
  op.indexed_sizes = sizes;
  op.indexed_strides = strides;
  if (accumulate) op.reduce = IndexReduce::kAdd;
  op.unique_targets = std::all_of(orig.begin(), orig.end(), [](const std::optional<at::Tensor>& i) {
    return !i.has_value() || !i->defined() || i->scalar_type() == at::kBool ||
           i->scalar_type() == at::kByte;
  });
  launch_indexed(space_of(iter, 0, 1, 2, iter.ntensors() - 2), op);
}

// x[idx] is structured in ATen with a TensorIterator as its meta class: the meta function turns
// masks into indices and builds the iterator, the impl calls index_stub. This class supplies
// the output the way the generated CPU wrappers do (allocated, or the caller's out resized).
class IndexCall final : public at::native::structured_index_out {
 public:
  explicit IndexCall(const at::Tensor& out) : out_(out), given_(out.defined()) {}
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options TORCH_OCL_OUTPUT_NAMES_PARAM) override {
    if (given_) {
      resize_out(out_, sizes, strides, options);
    } else {
      out_ = structured_detail::allocate_output(sizes, strides, options);
    }
    at::native::structured_index_out::set_output_raw_strided(i, sizes, strides,
                                                             options TORCH_OCL_OUTPUT_NAMES_ARG);
  }
  const at::Tensor& maybe_get_output(int64_t) override { return out_; }
  const at::Tensor& out() const { return out_; }

 private:
  at::Tensor out_;
  bool given_;
};

at::Tensor index_functional(const at::Tensor& self,
                            const c10::List<std::optional<at::Tensor>>& indices) {
  IndexCall call{at::Tensor()};
  auto pre = call.meta(self, at::IOptTensorListRef(indices));
  call.impl(self, pre.sizes, pre.strides, call.out());
  return call.out();
}

at::Tensor& index_out(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                      at::Tensor& out) {
  IndexCall call(out);
  auto pre = call.meta(self, at::IOptTensorListRef(indices));
  call.impl(self, pre.sizes, pre.strides, call.out());
  return out;
}

// ---- take and put_ (ATen's iterators: out or source, and index; self addressed as flat) ----

constexpr const char* kBadTake =
    "take / put_: out of range: tried to access an index outside the tensor's elements";

IndexedOp flat_op(const at::TensorBase& self) {
  IndexedOp op;
  op.wrap = true;
  op.error = kBadTake;
  op.indexed_sizes = {self.numel()};
  op.indexed_strides = {1};
  return op;
}

// take_stub: operands out, index; input addressed by its elements in logical order.
void take_kernel(at::TensorIterator& iter, const at::TensorBase& input) {
  const at::Tensor src = at::Tensor(input).contiguous();
  IndexSpace s = space_of(iter, -1, 0, 1, 1);
  s.a.tensor = src;
  s.a.strides.assign(s.sizes.size(), 0);
  IndexedOp op = flat_op(src);
  op.gather = true;
  launch_indexed(std::move(s), op);
}

// put_stub: operands source, index.
void put_kernel(at::TensorIterator& iter, const at::TensorBase& self, bool accumulate) {
  const at::Tensor target = at::Tensor(self);
  const at::Tensor work = target.is_contiguous() ? target : target.contiguous();
  IndexSpace s = space_of(iter, -1, 0, 1, 1);
  s.a.tensor = work;
  s.a.strides.assign(s.sizes.size(), 0);
  IndexedOp op = flat_op(work);
  if (accumulate) op.reduce = IndexReduce::kAdd;
  launch_indexed(std::move(s), op);
  if (!work.is_same(target)) target.copy_(work);
}

// ---- masked_scatter_ ----
// ATen's CPU implementation insists on CPU tensors, so the checks are the CPU's, written here.

constexpr const char* kShortSource =
    "masked_scatter_: Number of elements of source < number of "
    "ones in mask";

at::Tensor& masked_scatter_impl(at::Tensor& self, const at::Tensor& mask,
                                const at::Tensor& source) {
  at::assert_no_internal_overlap(self);
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter: expected self and source to have same dtypes but got",
              self.scalar_type(), " and ", source.scalar_type());
  TORCH_CHECK(self.device() == mask.device() && self.device() == source.device(),
              "masked_scatter_: expected self, mask and source on the same device, but got ",
              self.device(), ", ", mask.device(), " and ", source.device());
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  c10::MaybeOwned<at::Tensor> b_mask = at::expand_inplace(self, mask, "masked_scatter_");
  const int64_t n = self.numel();
  if (n == 0) return self;
  c10::DeviceGuard guard(self.device());
  const int device = self.device().index();
  // The kernel writes self while it reads the source and the mask: an operand that shares
  // memory with self (x.masked_scatter_(m, x)) is read from a copy, as if it were another tensor.
  const auto own_copy = [&](const at::Tensor& t) {
    return at::get_overlap_status(t, self) == at::MemOverlapStatus::No
               ? t.contiguous()
               : t.clone(at::MemoryFormat::Contiguous);
  };
  const at::Tensor flags = own_copy(*b_mask);
  const at::Tensor src = own_copy(source);
  const at::Tensor work = self.is_contiguous() ? self : self.contiguous();

  const DeviceInfo& info = device_info(device);
  size_t lws = 1;
  while (lws * 2 <= std::min<size_t>(256, info.max_work_group)) lws *= 2;
  const int64_t max_groups = std::max<int64_t>(64, 8 * static_cast<int64_t>(info.compute_units));
  const int64_t tile = static_cast<int64_t>(lws);
  const int64_t groups = std::clamp<int64_t>((n + tile * 4 - 1) / (tile * 4), 1, max_groups);
  const int64_t chunk = (n + groups - 1) / groups;
  const std::string options =
      std::string("-DMASKED -DT=") + bits_tag(self.itemsize()) + " -DLWS=" + std::to_string(lws);
  const at::Tensor counts = at::empty({groups}, self.options().dtype(at::kLong));
  {
    KernelLaunch launch(get_kernel(device, "index.cl", "masked_count", options));
    launch.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_ulong>(chunk));
    launch.buffer(buffer_of(flags), 1).buffer(buffer_of(counts), counts.itemsize());
    launch.enqueue1d(device, static_cast<size_t>(groups) * lws, lws);
  }
  {
    KernelLaunch launch(get_kernel(device, "index.cl", "masked_scatter", options));
    launch.arg(static_cast<cl_ulong>(n)).arg(static_cast<cl_ulong>(chunk));
    launch.buffer(buffer_of(flags), 1).buffer(buffer_of(counts), counts.itemsize());
    launch.buffer(buffer_of(work), work.itemsize()).buffer(buffer_of(src), src.itemsize());
    launch.arg(static_cast<cl_ulong>(src.numel()));
    launch.arg(device_error_word(device)).arg(device_error_code(kShortSource));
    launch.enqueue1d(device, static_cast<size_t>(groups) * lws, lws);
  }
  if (!work.is_same(self)) self.copy_(work);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", index_select_impl);
  m.impl("index_select.out", index_select_out);
  m.impl("index.Tensor", index_functional);
  m.impl("index.Tensor_out", index_out);
  m.impl("_index_put_impl_", at::native::_index_put_impl_);
  m.impl("take", at::native::take);
  m.impl("take.out", at::native::take_out);
  m.impl("put_", at::native::put_);
  m.impl("masked_scatter_", masked_scatter_impl);
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(index_stub, &torch_ocl::index_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(index_put_stub, &torch_ocl::index_put_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(index_put_with_sort_stub, &torch_ocl::index_put_with_sort_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(take_stub, &torch_ocl::take_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(put_stub, &torch_ocl::put_kernel)
}  // namespace at::native
