// Tensor creation and storage-swapping ops: empty, empty_strided, set_ (views: View.cpp), and
// the factories that compute their values on the device with kernels/shape.cl: arange and
// linspace (ATen's own arange_out / linspace_out with our kernels for their DispatchStubs),
// logspace, eye, tril_indices and triu_indices (the CPU's checks, our kernels). full, zeros,
// ones and the *_like factories are ATen's composites over empty and fill_. Under
// deterministic algorithms empty and empty_strided fill their memory as the CPU's do.
// _efficientzerotensor (the zero gradients of some backward formulas, sgn's for one) is a plain
// zero tensor here: the ZeroTensor dispatch key of the CPU's version is an optimisation only.
#include <ATen/Context.h>
#include <ATen/Dispatch.h>
#include <ATen/EmptyTensor.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/RangeFactories.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/arange_native.h>
#include <ATen/ops/complex.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/linspace_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "ops/DeterministicFill.h"
#include "ops/KernelTypes.h"
#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

c10::DeviceIndex device_or_current(std::optional<at::Device> device) {
  if (device && device->has_index()) return device->index();
  return static_cast<c10::DeviceIndex>(current_device());
}

// With deterministic algorithms and torch.utils.deterministic.fill_uninitialized_memory (as
// the CPU's and CUDA's empty*): new memory is filled, NaN for floating dtypes and the largest
// value for integers (ATen's fill_empty_deterministic_). One flag test otherwise. empty_like,
// new_empty and the rest of ATen's factories are composites over these two.
// The dtypes whose values the device does not compute (unsigned 16- to 64-bit integers, complex,
// float8) can still be stored: their fill value's bits go through an integer view of the same
// width. False for the other dtypes (and a complex128 view the integer view cannot take).
bool fill_bits(const at::Tensor& t) {
  at::ScalarType as = at::kLong;
  int64_t bits = 0;
  switch (t.scalar_type()) {
    case at::kUInt16:
      as = at::kShort, bits = -1;  // the largest value: every bit set
      break;
    case at::kUInt32:
      as = at::kInt, bits = -1;
      break;
    case at::kUInt64:
      as = at::kLong, bits = -1;
      break;
    // Complex: the CPU's fill, a NaN real part and a zero imaginary part (the real part in the
    // low half of the word: little-endian).
    case at::kComplexHalf:
      as = at::kInt, bits = 0x7e00;
      break;
    case at::kComplexFloat:
      as = at::kLong, bits = 0x7fc00000;
      break;
    case at::kComplexDouble:  // two int64 per element: the real parts are the even ones
      as = at::kLong, bits = 0x7ff8000000000000;
      break;
    case at::kFloat8_e4m3fn:
      as = at::kChar, bits = std::numeric_limits<c10::Float8_e4m3fn>::quiet_NaN().x;
      break;
    case at::kFloat8_e5m2:
      as = at::kChar, bits = std::numeric_limits<c10::Float8_e5m2>::quiet_NaN().x;
      break;
    case at::kFloat8_e4m3fnuz:
      as = at::kChar, bits = std::numeric_limits<c10::Float8_e4m3fnuz>::quiet_NaN().x;
      break;
    case at::kFloat8_e5m2fnuz:
      as = at::kChar, bits = std::numeric_limits<c10::Float8_e5m2fnuz>::quiet_NaN().x;
      break;
    default:
      return false;
  }
  at::Tensor v = t.dim() == 0 ? t.unsqueeze(0) : t;
  if (c10::elementSize(as) != t.itemsize() && v.stride(-1) != 1) return false;
  if (as == at::kChar) bits = static_cast<int8_t>(static_cast<uint8_t>(bits));  // 0x80 -> -128
  if (t.scalar_type() == at::kComplexDouble) {
    at::Tensor words = v.view(as);
    words.fill_(0);
    words.slice(-1, 0, std::nullopt, 2).fill_(bits);
    return true;
  }
  v.view(as).fill_(bits);
  return true;
}

}  // namespace

bool fill_uninitialized_memory() {
  const at::Context& ctx = at::globalContext();
  return ctx.deterministicAlgorithms() && ctx.deterministicFillUninitializedMemory();
}

void fill_uninitialized(const at::Tensor& t) {
  if (fill_bits(t)) return;
  at::Tensor work = t;
  at::native::fill_empty_deterministic_(work);
}

namespace {

at::Tensor& fill_if_deterministic(at::Tensor& t) {
  if (C10_UNLIKELY(fill_uninitialized_memory()) && t.numel() > 0) fill_uninitialized(t);
  return t;
}

at::Tensor empty_memory_format(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format) {
  const c10::DeviceIndex index = device_or_current(device);
  require_devices();
  device_info(index);
  c10::DeviceGuard guard(at::Device(c10::DeviceType::PrivateUse1, index));
  const c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
  at::Tensor t = at::detail::empty_generic(size, device_allocator(), keys,
                                           c10::dtype_or_default(dtype), memory_format);
  return fill_if_deterministic(t);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<at::Device> device, std::optional<bool> pin_memory) {
  const c10::DeviceIndex index = device_or_current(device);
  require_devices();
  device_info(index);
  c10::DeviceGuard guard(at::Device(c10::DeviceType::PrivateUse1, index));
  const c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
  at::Tensor t = at::detail::empty_strided_generic(size, stride, device_allocator(), keys,
                                                   c10::dtype_or_default(dtype));
  return fill_if_deterministic(t);
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, device_allocator(), true);
  return self.set_(storage, 0, {0}, {});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Sequences (kernels/shape.cl range_fill): computed in the CPU's types, double where the device
// has fp64 (float otherwise).

namespace {

constexpr size_t kLws = 256;
enum class Sequence { kArange = 0, kLinspace = 1, kLogspace = 2 };

// out (contiguous) = the sequence; start/end/step/base already in the CPU's compute values.
void launch_sequence(const at::Tensor& out, Sequence kind, double start, double end, double step,
                     double base, bool acc_double) {
  if (out.numel() == 0) return;
  c10::DeviceGuard guard(out.device());
  const int device = out.device().index();
  const bool dbl = acc_double && device_info(device).fp64;
  const std::string options = std::string("-DOUT_T=") + type_tag(out.scalar_type(), device) +
                              " -DACC_T=" + (dbl ? "double" : "float") +
                              " -DRANGE_MODE=" + std::to_string(static_cast<int>(kind));
  KernelLaunch l(get_kernel(device, "shape.cl", "range_fill", options));
  l.arg(static_cast<cl_ulong>(out.numel())).buffer(buffer_of(out), out.itemsize());
  for (double v : {start, end, step, base}) {
    if (dbl) {
      l.arg(static_cast<cl_double>(v));
    } else {
      l.arg(static_cast<cl_float>(v));
    }
  }
  l.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
}

// Integer arange: exact in int64, wrapping to the dtype like the CPU's accumulate type.
void launch_int_arange(const at::Tensor& out, int64_t start, int64_t step) {
  if (out.numel() == 0) return;
  c10::DeviceGuard guard(out.device());
  const int device = out.device().index();
  const std::string options = std::string("-DOUT_T=") + type_tag(out.scalar_type(), device) +
                              " -DACC_T=long -DRANGE_MODE=0 -DINT_ARANGE";
  KernelLaunch l(get_kernel(device, "shape.cl", "range_fill", options));
  l.arg(static_cast<cl_ulong>(out.numel())).buffer(buffer_of(out), out.itemsize());
  l.arg(static_cast<cl_long>(start)).arg(static_cast<cl_long>(step));
  l.enqueue1d(device, static_cast<size_t>(out.numel()), kLws);
}

// arange_stub: iter's output is contiguous and holds `steps` elements (at::native::arange_out).
// The CPU computes start + step * i in at::acc_type<T, false> (double for float, float for half
// and bfloat16, int64 for integers).
void arange_kernel(at::TensorIterator& iter, const c10::Scalar& start, const c10::Scalar& steps,
                   const c10::Scalar& step) {
  const at::Tensor& out = iter.tensor(0);
  const at::ScalarType t = out.scalar_type();
  if (at::isIntegralType(t, /*includeBool=*/false)) {
    launch_int_arange(out, start.to<int64_t>(), step.to<int64_t>());
  } else {
    const bool acc_double = t == at::kFloat || t == at::kDouble;
    launch_sequence(out, Sequence::kArange, start.to<double>(), 0, step.to<double>(), 0,
                    acc_double);
  }
}

// linspace_stub (steps > 1; at::native::linspace_out handles the rest). The CPU's step type is
// the dtype itself for floating types (half and bfloat16 round every operation, which the kernel
// repeats) and double for integers, whose start and end are first converted to the dtype.
// Complex: the real and imaginary parts are two real sequences (the CPU's complex step divided
// by the real steps - 1 is the parts' steps).
at::Tensor complex_linspace(const at::Tensor& like, const c10::Scalar& start,
                            const c10::Scalar& end, int64_t steps) {
  const c10::complex<double> s = start.toComplexDouble(), e = end.toComplexDouble();
  const at::ScalarType real = c10::toRealValueType(like.scalar_type());
  at::Tensor re = at::empty({steps}, like.options().dtype(real));
  at::Tensor im = at::empty({steps}, like.options().dtype(real));
  const bool wide = real == at::kDouble;
  launch_sequence(re, Sequence::kLinspace, s.real(), e.real(), (e.real() - s.real()) / (steps - 1),
                  0, wide);
  launch_sequence(im, Sequence::kLinspace, s.imag(), e.imag(), (e.imag() - s.imag()) / (steps - 1),
                  0, wide);
  return at::complex(re, im);
}

void linspace_kernel(at::TensorIterator& iter, const c10::Scalar& start, const c10::Scalar& end,
                     int64_t steps) {
  const at::Tensor& out = iter.tensor(0);
  if (out.is_complex()) {
    out.copy_(complex_linspace(out, start, end, steps));
    return;
  }
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "linspace_ocl", [&] {
    const scalar_t s = start.to<scalar_t>(), e = end.to<scalar_t>();
    if constexpr (std::is_integral_v<scalar_t>) {
      const double step = (static_cast<double>(e) - static_cast<double>(s)) / (steps - 1);
      launch_sequence(out, Sequence::kLinspace, static_cast<double>(s), static_cast<double>(e),
                      step, 0, true);
    } else {
      const scalar_t step = (e - s) / static_cast<scalar_t>(steps - 1);
      launch_sequence(out, Sequence::kLinspace, static_cast<double>(s), static_cast<double>(e),
                      static_cast<double>(step), 0, std::is_same_v<scalar_t, double>);
    }
  });
}

// logspace has no DispatchStub: the CPU's logspace_out (RangeFactories.cpp) with our kernel.
// The CPU converts start and end to the dtype, then computes in double.
at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, double base,
                         at::Tensor& result) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (result.numel() != steps) result.resize_({steps});
  at::Tensor r = result.is_contiguous() ? result : result.contiguous();
  if (steps == 1) {
    r.fill_(std::pow(base, start.to<double>()));
  } else if (steps > 1 && r.is_complex()) {
    // base^z = exp(z log(base)) over the complex exponents, as c10::complex's pow
    r.copy_(at::exp(complex_linspace(r, start, end, steps) * std::log(base)));
  } else if (steps > 1) {
    AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, r.scalar_type(), "logspace_ocl", [&] {
      const scalar_t s = start.to<scalar_t>(), e = end.to<scalar_t>();
      const double step = static_cast<double>(e - s) / (steps - 1);
      launch_sequence(r, Sequence::kLogspace, static_cast<double>(s), static_cast<double>(e), step,
                      base, true);
    });
  }
  if (!result.is_contiguous()) result.copy_(r);
  return result;
}

// ---------------------------------------------------------------------------------------------
// eye: as the CPU's eye_out_cpu, zeros with ones on the diagonal (two launches).

at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& result) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  result.resize_({n, m});
  result.zero_();
  const int64_t diag = std::min(n, m);
  if (diag > 0) result.as_strided({diag}, {result.stride(0) + result.stride(1)}).fill_(1);
  return result;
}

at::Tensor& eye_out(int64_t n, at::Tensor& result) { return eye_m_out(n, n, result); }

// ---------------------------------------------------------------------------------------------
// tril_indices / triu_indices: the CPU's checks and sizes (TensorFactories.h), one kernel.

template <bool kUpper>
at::Tensor tri_indices(int64_t row, int64_t col, int64_t offset,
                       std::optional<at::ScalarType> dtype_opt, std::optional<at::Layout> layout,
                       std::optional<at::Device> device_opt, std::optional<bool> pin_memory) {
  const at::ScalarType dtype = dtype_opt.value_or(at::kLong);
  at::native::check_args(row, col, layout);
  const int64_t n = kUpper ? row * col - at::native::get_tril_size(row, col, offset - 1)
                           : at::native::get_tril_size(row, col, offset);
  const c10::DeviceIndex index = device_or_current(device_opt);
  at::Tensor result = at::empty(
      {2, n}, at::TensorOptions().dtype(dtype).device(c10::DeviceType::PrivateUse1, index));
  TORCH_CHECK_NOT_IMPLEMENTED(dtype == at::kLong || dtype == at::kInt, "\"",
                              kUpper ? "triu_indices" : "tril_indices", "\" not implemented for '",
                              dtype, "'");
  if (n == 0) return result;
  c10::DeviceGuard guard(result.device());
  const int device = result.device().index();
  std::string options = std::string("-DIDX_T=") + (dtype == at::kLong ? "long" : "int");
  if (kUpper) options += " -DUPPER";
  KernelLaunch l(get_kernel(device, "shape.cl", "tri_indices", options));
  l.arg(static_cast<cl_ulong>(n)).buffer(buffer_of(result), result.itemsize());
  l.arg(static_cast<cl_long>(row)).arg(static_cast<cl_long>(col)).arg(static_cast<cl_long>(offset));
  l.enqueue1d(device, static_cast<size_t>(n), kLws);
  return result;
}

at::Tensor efficientzerotensor(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory) {
  return at::zeros(size, at::TensorOptions().dtype(dtype).layout(layout).device(device));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("_efficientzerotensor", efficientzerotensor);
  m.impl("set_.source_Storage", at::native::set_);
  m.impl("set_.source_Storage_storage_offset", at::native::set_storage_cpu_);
  m.impl("set_.source_Tensor", at::native::set_tensor_);
  m.impl("set_", set_empty);
  m.impl("arange.start_out",
         static_cast<at::Tensor& (*)(const at::Scalar&, const at::Scalar&, const at::Scalar&,
                                     at::Tensor&)>(at::native::arange_out));
  m.impl("linspace.out",
         static_cast<at::Tensor& (*)(const at::Scalar&, const at::Scalar&, int64_t, at::Tensor&)>(
             at::native::linspace_out));
  m.impl("logspace.out", logspace_out);
  m.impl("eye.out", eye_out);
  m.impl("eye.m_out", eye_m_out);
  m.impl("tril_indices", tri_indices<false>);
  m.impl("triu_indices", tri_indices<true>);
}

}  // namespace torch_ocl

// Our kernels for the DispatchStubs that ATen's arange_out and linspace_out call.
namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(arange_stub, &torch_ocl::arange_kernel)
REGISTER_PRIVATEUSE1_DISPATCH(linspace_stub, &torch_ocl::linspace_kernel)
}  // namespace at::native
