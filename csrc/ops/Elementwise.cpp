#include "ops/Elementwise.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/native/TensorIterator.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <string_view>
#include <unordered_map>

#include "runtime/Batch.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {

namespace {

// The device's error word and the code of params.zero_divisor_error (EW_NONZERO_B kernels).
void push_error_word(KernelLaunch& launch, int device, const EwParams& params,
                     at::ScalarType comp) {
  if (!params.zero_divisor_error || is_floating_tag(comp)) return;
  launch.arg(device_error_word(device)).arg(device_error_code(params.zero_divisor_error));
}

// The op's parameters p0 and p1, checked like the CPU's `scalar.to<T>()`.
void push_params(KernelLaunch& launch, const EwParams& params, at::ScalarType comp) {
  for (const c10::Scalar* p : {&params.p0, &params.p1}) {
    check_scalar_fits(*p, params.param_dtype_or(comp));
    push_operand_scalar(launch, *p, comp);
  }
}

}  // namespace

namespace {

struct VariantKey {
  const char* op;     // a string literal naming the op
  const char* extra;  // extra build options (compared as text), or null
  int8_t device;
  int8_t types[5];  // output, compute, inputs
  uint8_t shape;    // nin | ndim << 2 | idx64 << 6 | nonzero_b << 7
  uint8_t scalars;  // bit k: input k is a CPU scalar
  bool operator==(const VariantKey& o) const {
    const bool same_extra =
        extra == o.extra || (extra && o.extra && std::strcmp(extra, o.extra) == 0);
    return op == o.op && same_extra && device == o.device && shape == o.shape &&
           scalars == o.scalars && std::memcmp(types, o.types, sizeof(types)) == 0;
  }
};

struct VariantKeyHash {
  size_t operator()(const VariantKey& k) const {
    const size_t extra = k.extra ? std::hash<std::string_view>()(k.extra) : 0;
    size_t h = std::hash<const void*>()(k.op) ^ (extra * 0x9e3779b97f4a7c15ull);
    for (int8_t t : k.types) h = h * 131 + static_cast<uint8_t>(t);
    return h * 131 + (k.shape | (k.scalars << 8) | (static_cast<uint8_t>(k.device) << 16));
  }
};

constexpr int kMaxDims = 8;
constexpr size_t kLocalSize = 256;
constexpr size_t kChunkLocalSize = 64;
// Above this the batch never takes an op (Batch.cpp has the per-device limit); skips its lock.
constexpr int64_t kBatchNumelLimit = 8192;

// Elements per work-item in the contiguous case: CPU devices (PoCL) vectorise a work-item's loop
// and reach about twice the bandwidth with 64; GPUs want one element per work-item.
size_t contiguous_chunk(int device) {
  return (device_info(device).type & CL_DEVICE_TYPE_CPU) ? 64 : 1;
}

void push_strides(KernelLaunch& launch, at::TensorIteratorBase& iter, int arg) {
  cl_long8 v{};
  const auto strides = iter.strides(arg);
  const int64_t size = iter.element_size(arg);
  for (int d = 0; d < iter.ndim(); ++d) v.s[d] = strides[d] / size;
  launch.arg(v);
}

// The kernel for a variant. Kernel variants are looked up by a compact key; the options string
// is built only the first time a variant is seen on this thread.
cl_kernel variant_kernel(const char* op, int device, at::ScalarType out_type, at::ScalarType comp,
                         int nin, const at::ScalarType* in_types, const bool* scalar, int ndim,
                         bool idx64, const EwParams& params) {
  VariantKey key{};
  key.op = op;
  key.extra = params.extra;
  key.device = static_cast<int8_t>(device);
  key.types[0] = static_cast<int8_t>(out_type);
  key.types[1] = static_cast<int8_t>(comp);
  for (int k = 0; k < nin; ++k) key.types[2 + k] = static_cast<int8_t>(in_types[k]);
  const bool nonzero_b = params.zero_divisor_error && !is_floating_tag(comp);
  key.shape = static_cast<uint8_t>(nin | (ndim << 2) | (idx64 << 6) | (nonzero_b << 7));
  key.scalars = static_cast<uint8_t>(scalar[0] | (scalar[1] << 1) | (scalar[2] << 2));
  thread_local std::unordered_map<VariantKey, cl_kernel, VariantKeyHash> variants;
  cl_kernel kernel;
  auto found = variants.find(key);
  if (found != variants.end()) {
    kernel = found->second;
  } else {
    std::string opts;
    opts.reserve(160);
    opts += "-DEW_OP=EWOP_";
    opts += op;
    opts += " -DOP_";
    opts += op;
    opts += " -DOUT_T=";
    opts += type_tag(out_type, device);
    opts += " -DCOMP_T=";
    opts += type_tag(comp, device);
    if (is_floating_tag(comp)) opts += " -DCOMP_FLOAT";
    opts += " -DNIN=";
    opts += static_cast<char>('0' + nin);
    for (int k = 0; k < nin; ++k) {
      opts += " -DIN";
      opts += static_cast<char>('0' + k);
      opts += "_T=";
      opts += type_tag(in_types[k], device);
      if (scalar[k]) {
        opts += " -DIN";
        opts += static_cast<char>('0' + k);
        opts += "_SCALAR";
      }
    }
    opts += " -DNDIM=";
    opts += static_cast<char>('0' + ndim);
    if (idx64) opts += " -DIDX64";
    if (nonzero_b) opts += " -DEW_NONZERO_B";
    if (ndim == 0) {
      opts += " -DCHUNK=";
      opts += std::to_string(contiguous_chunk(device));
    }
    if (params.extra) {
      opts += ' ';
      opts += params.extra;
    }
    kernel = get_kernel(device, "elementwise.cl", "elementwise", opts);
    variants.emplace(key, kernel);
  }

  return kernel;
}

// Global and local size: CHUNK elements per work-item when contiguous (see kernels/).
void enqueue_elementwise(KernelLaunch& launch, int device, size_t numel, int ndim) {
  if (ndim == 0) {
    const size_t chunk = contiguous_chunk(device);
    launch.enqueue1d(device, (numel + chunk - 1) / chunk, chunk > 1 ? kChunkLocalSize : kLocalSize);
  } else {
    launch.enqueue1d(device, numel, kLocalSize);
  }
}

}  // namespace

void launch_elementwise(at::TensorIteratorBase& iter, const char* op, const EwParams& params) {
  TORCH_INTERNAL_ASSERT(iter.noutputs() == 1 && iter.ninputs() <= 3);
  if (iter.numel() == 0) return;
  const int device = iter.device(0).index();
  TORCH_CHECK_NOT_IMPLEMENTED(iter.ndim() <= kMaxDims, "torch-ocl: elementwise '", op,
                              "' over more than ", kMaxDims,
                              " non-collapsible dimensions is not supported yet; call "
                              ".contiguous() first");
  const at::ScalarType comp =
      params.compute != at::ScalarType::Undefined ? params.compute : iter.common_dtype();
  const int nin = iter.ninputs();
  const int ndim = iter.is_contiguous() ? 0 : iter.ndim();
  const bool idx64 = !iter.can_use_32bit_indexing();
  bool scalar[3] = {false, false, false};
  at::ScalarType in_types[3] = {};
  for (int k = 0; k < nin; ++k) {
    scalar[k] = iter.is_cpu_scalar(1 + k);
    // A CPU scalar is passed in the compute type: its own dtype (a Python float is double) must
    // not ask for fp64 on a device without it.
    in_types[k] = scalar[k] ? comp : iter.dtype(1 + k);
  }
  cl_kernel kernel =
      variant_kernel(op, device, iter.dtype(0), comp, nin, in_types, scalar, ndim, idx64, params);
  KernelLaunch launch(kernel);
  launch.arg(static_cast<cl_ulong>(iter.numel()));
  launch.buffer(buffer_in(iter.tensor_base(0), iter.data_ptr(0)), iter.element_size(0));
  for (int k = 0; k < nin; ++k) {
    const int arg = 1 + k;
    if (scalar[k]) {
      // A 0-dim CPU tensor: its value in the compute type.
      const c10::Scalar value = iter.tensor(arg).item();
      if (params.checked_operands) check_scalar_fits(value, params.param_dtype_or(comp));
      push_operand_scalar(launch, value, comp);
    } else {
      launch.buffer(buffer_in(iter.tensor_base(arg), iter.data_ptr(arg)), iter.element_size(arg));
    }
  }
  push_params(launch, params, comp);
  if (ndim > 0) {
    cl_long8 sizes{};
    for (int d = 0; d < ndim; ++d) sizes.s[d] = iter.shape()[d];
    launch.arg(sizes);
    push_strides(launch, iter, 0);
    for (int k = 0; k < nin; ++k)
      if (!scalar[k]) push_strides(launch, iter, 1 + k);
  }
  push_error_word(launch, device, params, comp);
  enqueue_elementwise(launch, device, static_cast<size_t>(iter.numel()), ndim);
}

bool fast_path_ok(std::initializer_list<const at::Tensor*> inputs) {
  const at::Tensor& first = **inputs.begin();
  if (first.device().type() != c10::DeviceType::PrivateUse1) return false;
  for (const at::Tensor* t : inputs) {
    if (t->device() != first.device() || t->scalar_type() != first.scalar_type() ||
        t->sizes() != first.sizes() || !t->is_contiguous() || t->is_neg() || t->is_conj())
      return false;
  }
  return first.numel() < (int64_t(1) << 31);
}

bool try_batch(const char* op, const at::Tensor& out, const at::Tensor& a, const at::Tensor* b,
               const c10::Scalar* scalar, const EwParams& params) {
  const at::ScalarType t = a.scalar_type();
  const int64_t n = a.numel();
  if (n == 0 || n > kBatchNumelLimit || params.extra ||
      (params.compute != at::ScalarType::Undefined && params.compute != t) ||
      (t != at::kFloat && t != at::kHalf && t != at::kBFloat16))
    return false;
  const auto same = [&](const at::Tensor& x) {
    return x.device() == a.device() && x.scalar_type() == t && x.sizes() == a.sizes() &&
           x.is_contiguous() && !x.is_neg() && !x.is_conj();
  };
  if (!same(a) || !same(out) || (b && !same(*b))) return false;
  if (a.device().type() != c10::DeviceType::PrivateUse1) return false;
  // An output that overlaps an input only partly is the iterator's to reject.
  if (!out.is_same(a) && at::get_overlap_status(out, a) != at::MemOverlapStatus::No) return false;
  if (b && !out.is_same(*b) && at::get_overlap_status(out, *b) != at::MemOverlapStatus::No)
    return false;
  if (scalar && scalar->isComplex()) return false;
  // Without a buffer for b, the batch kernel takes b's value from p1.
  check_scalar_fits(params.p0, params.param_dtype_or(t));
  if (!scalar) check_scalar_fits(params.p1, params.param_dtype_or(t));
  const float p1 = scalar_as_float(scalar ? *scalar : params.p1);
  const BufferRef bb = b ? buffer_of(*b) : BufferRef{};
  return batch_record(a.device().index(), op, t, n, buffer_of(out), buffer_of(a), b ? &bb : nullptr,
                      scalar_as_float(params.p0), p1);
}

bool batch_size_ok(const at::Tensor& a) { return a.numel() <= kBatchNumelLimit; }

at::Tensor launch_same_shape(const char* op, std::initializer_list<const at::Tensor*> inputs,
                             const EwParams& params) {
  const at::Tensor& first = **inputs.begin();
  at::Tensor out = at::empty(first.sizes(), first.options());
  if (out.numel() == 0) return out;
  const int nin = static_cast<int>(inputs.size());
  // Tiny ops go into the stream's pending batch (runtime/Batch.h) when the batch kernel takes
  // them.
  if (nin <= 2 &&
      try_batch(op, out, first, nin == 2 ? *(inputs.begin() + 1) : nullptr, nullptr, params))
    return out;
  const int device = first.device().index();
  const at::ScalarType t = first.scalar_type();
  const at::ScalarType comp = params.compute != at::ScalarType::Undefined ? params.compute : t;
  const bool scalar[3] = {false, false, false};
  const at::ScalarType in_types[3] = {t, t, t};
  cl_kernel kernel =
      variant_kernel(op, device, t, comp, nin, in_types, scalar, /*ndim=*/0, false, params);
  KernelLaunch launch(kernel);
  launch.arg(static_cast<cl_ulong>(out.numel()));
  launch.buffer(buffer_of(out), out.itemsize());
  for (const at::Tensor* in : inputs) launch.buffer(buffer_of(*in), in->itemsize());
  push_params(launch, params, comp);
  push_error_word(launch, device, params, comp);
  enqueue_elementwise(launch, device, static_cast<size_t>(out.numel()), 0);
  return out;
}

}  // namespace torch_ocl
