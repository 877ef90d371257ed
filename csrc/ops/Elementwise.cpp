// The elementwise engine (ops/Elementwise.h): picks the kernel variant of an op for an iterator,
// batches tiny calls, and launches kernels/elementwise.cl.
#include "ops/Elementwise.h"

#include <ATen/OpMathType.h>
#include <c10/util/Exception.h>

#include <string>
#include <unordered_map>

#include "ops/ElementwiseBatch.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr int kMaxDims = 8;
constexpr int kMaxInputs = 3;
constexpr size_t kLocalSize = 256;
constexpr size_t kChunkLocalSize = 64;
constexpr const char* kZeroDivisorMessage =
    "ZeroDivisionError (integer division by zero in div, floor_divide, fmod or remainder)";

// The rank a kernel variant is built for: strided iterators of rank 3-4 share the rank-4 build
// and 5-8 the rank-8 build (the extra dimensions have size 1), so that the ranks of real
// tensors do not each cost a compile.
int rank_bucket(int ndim) {
  if (ndim <= 2) return ndim;
  return ndim <= 4 ? 4 : 8;
}

// A kernel variant, compared exactly (the hash only picks the bucket).
struct VariantKey {
  uint16_t op;
  int8_t device;
  int8_t types[2 + kMaxInputs];  // output, compute, inputs
  uint8_t shape;                 // nin | ndim << 2 (ndim <= 8) | idx64 << 6 | nonzero_b << 7
  uint8_t scalars;               // bit k: input k is a CPU scalar
  bool operator==(const VariantKey& o) const {
    return op == o.op && device == o.device && shape == o.shape && scalars == o.scalars &&
           std::equal(std::begin(types), std::end(types), std::begin(o.types));
  }
};
struct VariantKeyHash {
  size_t operator()(const VariantKey& k) const {
    size_t h = k.op;
    for (int8_t t : k.types) h = h * 131 + static_cast<uint8_t>(t);
    return h * 131 + (k.shape | (k.scalars << 8) | (static_cast<uint8_t>(k.device) << 16));
  }
};

// Elements per work-item in the contiguous case: CPU devices (PoCL) vectorise a work-item's loop
// and reach about twice the bandwidth with 64; GPUs want one element per work-item.
size_t contiguous_chunk(int device) { return device_profile(device).stream_chunk; }

// What one launch needs, gathered before the launch starts.
struct Plan {
  const EwOp* op = nullptr;
  int device = 0;
  at::ScalarType out_type{}, comp{}, param_type{};
  int nin = 0, ndim = 0, built_ndim = 0;
  bool idx64 = false, nonzero_b = false;
  bool scalar[kMaxInputs] = {};
  at::ScalarType in_types[kMaxInputs] = {};
  c10::Scalar scalar_value[kMaxInputs];
};

// Whether a contiguous call runs 8 lanes at a time (EW_VEC in kernels/elementwise.cl): ops flagged
// kVec with float32 operands and result, where work-items take chunks (CPU devices). Follows from
// the variant key's fields (op, dtypes, rank, device).
bool vectorised(const Plan& p) {
  if (!(p.op->flags & kVec) || p.built_ndim != 0 || p.nin > 2 || contiguous_chunk(p.device) % 8)
    return false;
  if (p.out_type != at::kFloat || p.comp != at::kFloat) return false;
  for (int k = 0; k < p.nin; ++k)
    if (p.in_types[k] != at::kFloat) return false;
  return true;
}

std::string variant_options(const Plan& p) {
  std::string opts;
  opts.reserve(192);
  opts += "-DEW_OP=EWOP_";
  opts += p.op->name;
  if (p.op->id == EwId::where) opts += " -DLOAD_COND";
  opts += " -DOUT_T=";
  opts += type_tag(p.out_type, p.device);
  opts += " -DCOMP_T=";
  opts += type_tag(p.comp, p.device);
  if (is_floating_tag(p.comp)) opts += " -DCOMP_FLOAT";
  // Complex numbers: complex compute (-DCOMP_COMPLEX, the ops' complex forms), and the result's
  // tag where it is not the compute type's: real for complex comparisons, complex for polar and
  // complex() over real operands.
  if (at::isComplexType(p.comp)) {
    opts += " -DCOMP_COMPLEX";
    if (p.op->flags & kCplxReal) {
      opts += " -DRES_T=";
      opts += type_tag(c10::toRealValueType(p.comp), p.device);
    }
  } else if (p.op->flags & kToCplx) {
    opts += " -DRES_T=";
    opts += type_tag(c10::toComplexType(p.comp), p.device);
  }
  opts += " -DNIN=";
  opts += static_cast<char>('0' + p.nin);
  for (int k = 0; k < p.nin; ++k) {
    const char digit = static_cast<char>('0' + k);
    opts += " -DIN";
    opts += digit;
    opts += "_T=";
    opts += type_tag(p.in_types[k], p.device);
    if (p.scalar[k]) {
      opts += " -DIN";
      opts += digit;
      opts += "_SCALAR";
    }
  }
  opts += " -DNDIM=";
  opts += static_cast<char>('0' + p.built_ndim);
  if (p.idx64) opts += " -DIDX64";
  if (p.nonzero_b) opts += " -DEW_NONZERO_B";
  opts += " -DCHUNK=" + std::to_string(contiguous_chunk(p.device));
  if (vectorised(p)) opts += " -DEW_VEC";
  return opts;
}

// The kernel of a variant: looked up by its compact key; the options string is built only the
// first time a variant is seen on this thread.
cl_kernel variant_kernel(const Plan& p) {
  VariantKey key{};
  key.op = static_cast<uint16_t>(p.op->id);
  key.device = static_cast<int8_t>(p.device);
  key.types[0] = static_cast<int8_t>(p.out_type);
  key.types[1] = static_cast<int8_t>(p.comp);
  for (int k = 0; k < p.nin; ++k) key.types[2 + k] = static_cast<int8_t>(p.in_types[k]);
  key.shape =
      static_cast<uint8_t>(p.nin | (p.built_ndim << 2) | (p.idx64 << 6) | (p.nonzero_b << 7));
  key.scalars = static_cast<uint8_t>(p.scalar[0] | (p.scalar[1] << 1) | (p.scalar[2] << 2));
  thread_local std::unordered_map<VariantKey, cl_kernel, VariantKeyHash> variants;
  auto found = variants.find(key);
  if (found != variants.end()) return found->second;
  cl_kernel kernel = get_kernel(p.device, "elementwise.cl", "elementwise", variant_options(p));
  variants.emplace(key, kernel);
  return kernel;
}

cl_long8 strides_of(const at::TensorIteratorBase& iter, int arg) {
  cl_long8 v{};
  const auto strides = iter.strides(arg);
  const int64_t size = iter.element_size(arg);
  for (int d = 0; d < iter.ndim(); ++d) v.s[d] = strides[d] / size;
  return v;
}

// Whether every operand that is not a CPU scalar is contiguous (the contiguous kernel then serves,
// the scalars being kernel arguments): x * 2 as well as x * y. (is_contiguous() counts a CPU
// scalar's zero stride against it; the iterator has collapsed such a call to one dimension.)
bool dense_but_scalars(const at::TensorIteratorBase& iter, const Plan& p) {
  if (iter.is_contiguous()) return true;
  if (iter.ndim() != 1) return false;
  for (int arg = 0; arg <= p.nin; ++arg) {
    if (arg > 0 && p.scalar[arg - 1]) continue;
    if (iter.strides(arg)[0] != iter.element_size(arg)) return false;
  }
  return true;
}

// Records a tiny contiguous call in the stream's batch; false if the batch cannot take it.
bool try_batch(at::TensorIteratorBase& iter, const Plan& p, const EwParams& params) {
  if (!(p.op->flags & kBatch) || p.nin < 1 || p.nin > 2) return false;
  const int64_t n = iter.numel();
  if (n > kBatchNumelLimit || !is_batch_dtype(p.comp) || p.out_type != p.comp || p.scalar[0] ||
      params.p2.toDouble() != 0)
    return false;
  if (p.ndim != 0) return false;  // contiguous but for CPU scalars (dense_but_scalars)
  for (int arg = 0; arg <= p.nin; ++arg) {
    if (arg > 0 && p.scalar[arg - 1]) continue;
    if (iter.dtype(arg) != p.comp) return false;
  }
  if (p.nin == 2 && p.scalar[1] && p.scalar_value[1].isComplex()) return false;
  const BufferRef out = buffer_in(iter.tensor_base(0), iter.data_ptr(0));
  const BufferRef a = buffer_in(iter.tensor_base(1), iter.data_ptr(1));
  BufferRef b;
  const bool b_buffer = p.nin == 2 && !p.scalar[1];
  if (b_buffer) b = buffer_in(iter.tensor_base(2), iter.data_ptr(2));
  const float bv = p.nin == 2 && p.scalar[1] ? scalar_as_float(p.scalar_value[1]) : 0.f;
  return batch_record(p.device, p.op->id, p.comp, n, out, a, b_buffer ? &b : nullptr,
                      scalar_as_float(params.p0), scalar_as_float(params.p1), bv);
}

}  // namespace

void launch_elementwise(at::TensorIteratorBase& iter, EwId id, const EwParams& params) {
  TORCH_INTERNAL_ASSERT(iter.noutputs() == 1 && iter.ninputs() <= kMaxInputs);
  Plan p;
  p.op = &ew_op(id);
  p.comp = params.compute != at::ScalarType::Undefined ? params.compute : iter.common_dtype();
  check_ew_dtype(*p.op, p.comp);
  if (iter.numel() == 0) return;
  p.device = iter.device(0).index();
  TORCH_CHECK_NOT_IMPLEMENTED(iter.ndim() <= kMaxDims, "torch-ocl: elementwise '", p.op->name,
                              "' over more than ", kMaxDims,
                              " non-collapsible dimensions is not supported yet; call "
                              ".contiguous() first");
  p.out_type = iter.dtype(0);
  p.param_type = params.param_dtype != at::ScalarType::Undefined ? params.param_dtype
                 : (p.op->flags & kOpmathParams)                 ? at::toOpMathType(p.comp)
                                                                 : p.comp;
  p.nin = iter.ninputs();
  p.idx64 = !iter.can_use_32bit_indexing();
  p.nonzero_b = (p.op->flags & kZeroDivisor) && !is_floating_tag(p.comp);
  for (int k = 0; k < p.nin; ++k) {
    p.scalar[k] = iter.is_cpu_scalar(1 + k);
    // A CPU scalar is passed in the compute type: its own dtype (a Python float is double) must
    // not ask for fp64 on a device without it.
    p.in_types[k] = p.scalar[k] ? p.comp : iter.dtype(1 + k);
    if (p.scalar[k]) {
      p.scalar_value[k] = iter.tensor(1 + k).item();  // a CPU tensor: no device wait
      if (params.checked_operands) check_scalar_fits(p.scalar_value[k], p.param_type);
    }
  }
  for (const c10::Scalar* v : {&params.p0, &params.p1, &params.p2})
    check_scalar_fits(*v, p.param_type);
  p.ndim = dense_but_scalars(iter, p) ? 0 : iter.ndim();
  p.built_ndim = rank_bucket(p.ndim);

  if (try_batch(iter, p, params)) return;

  cl_kernel kernel = variant_kernel(p);
  const cl_mem error_word = p.nonzero_b ? device_error_word(p.device) : nullptr;
  const cl_int error_code = p.nonzero_b ? device_error_code(kZeroDivisorMessage) : 0;
  cl_long8 sizes{};
  for (int d = 0; d < p.ndim; ++d) sizes.s[d] = iter.shape()[d];
  for (int d = p.ndim; d < p.built_ndim; ++d) sizes.s[d] = 1;

  KernelLaunch launch(kernel);
  launch.arg(static_cast<cl_ulong>(iter.numel()));
  launch.buffer(buffer_in(iter.tensor_base(0), iter.data_ptr(0)), iter.element_size(0));
  for (int k = 0; k < p.nin; ++k) {
    if (p.scalar[k]) {
      push_operand_scalar(launch, p.scalar_value[k], p.comp);
    } else {
      launch.buffer(buffer_in(iter.tensor_base(1 + k), iter.data_ptr(1 + k)),
                    iter.element_size(1 + k));
    }
  }
  push_operand_scalar(launch, params.p0, p.comp);
  push_operand_scalar(launch, params.p1, p.comp);
  push_operand_scalar(launch, params.p2, p.comp);
  if (p.built_ndim > 0) {
    launch.arg(sizes);
    launch.arg(strides_of(iter, 0));
    for (int k = 0; k < p.nin; ++k)
      if (!p.scalar[k]) launch.arg(strides_of(iter, 1 + k));
  }
  if (p.nonzero_b) launch.arg(error_word).arg(error_code);
  const size_t numel = static_cast<size_t>(iter.numel());
  const size_t chunk = contiguous_chunk(p.device);
  launch.enqueue1d(p.device, (numel + chunk - 1) / chunk, chunk > 1 ? kChunkLocalSize : kLocalSize);
}

}  // namespace torch_ocl
