// Type tags and scalar arguments of the kernels (ops/KernelTypes.h).
#include "ops/KernelTypes.h"

#include <c10/util/Exception.h>
#include <c10/util/complex.h>

#include <type_traits>

#include "runtime/Device.h"
#include "runtime/Launch.h"

namespace torch_ocl {

const char* type_tag(at::ScalarType t, int device) {
  switch (t) {
    case at::kFloat:
      return "float";
    case at::kDouble:
      TORCH_CHECK(device_info(device).fp64, "torch-ocl: ocl:", device, " (",
                  device_info(device).name,
                  ") does not support float64 (no cl_khr_fp64); use float32.");
      return "double";
    case at::kHalf:
      return "half";
    case at::kBFloat16:
      return "bfloat16";
    case at::kLong:
      return "long";
    case at::kInt:
      return "int";
    case at::kShort:
      return "short";
    case at::kChar:
      return "char";
    case at::kByte:
      return "uchar";
    case at::kBool:
      return "bool";
    case at::kComplexFloat:
      return "cfloat";
    case at::kComplexDouble:
      TORCH_CHECK(device_info(device).fp64, "torch-ocl: ocl:", device, " (",
                  device_info(device).name,
                  ") does not support complex128 (no cl_khr_fp64); use complex64.");
      return "cdouble";
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "torch-ocl: dtype ", t,
                                  " is not supported on the ocl device yet");
  }
}

const char* bits_tag(size_t itemsize) {
  switch (itemsize) {
    case 1:
      return "uchar";
    case 2:
      return "short";
    case 4:
      return "int";
    default:
      TORCH_CHECK(itemsize == 8, "torch-ocl: no kernel type for elements of ", itemsize, " bytes");
      return "long";
  }
}

at::ScalarType bits_dtype(size_t itemsize) {
  switch (itemsize) {
    case 1:
      return at::kByte;
    case 2:
      return at::kShort;
    case 4:
      return at::kInt;
    default:
      return at::kLong;
  }
}

bool is_floating_tag(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

namespace {

// v converted to T without a range check, as CPU torch's TensorIterator converts a CPU scalar
// operand: integers wrap (int8 + 255 adds -1), floats beyond the range become +-inf.
template <typename T>
T convert_operand(const c10::Scalar& v) {
  if constexpr (c10::is_complex<T>::value) {
    using R = typename T::value_type;
    if (v.isComplex()) return T(v.toComplexDouble());
    return T(convert_operand<R>(v), R(0));
  }
  if (v.isComplex()) return convert_operand<T>(v.toComplexDouble().real());  // the real part
  if (v.isBoolean()) return c10::convert<T>(v.toBool());
  if (v.isIntegral(false)) return c10::convert<T>(v.toLong());
  return c10::convert<T>(v.toDouble());
}

// Calls f(T{}) with the C++ type of dtype t.
template <typename F>
void with_scalar_type(at::ScalarType t, F&& f) {
  switch (t) {
    case at::kFloat:
      return f(float{});
    case at::kDouble:
      return f(double{});
    case at::kHalf:
      return f(at::Half{});
    case at::kBFloat16:
      return f(at::BFloat16{});
    case at::kLong:
      return f(int64_t{});
    case at::kInt:
      return f(int32_t{});
    case at::kShort:
      return f(int16_t{});
    case at::kChar:
      return f(int8_t{});
    case at::kByte:
      return f(uint8_t{});
    case at::kBool:
      return f(bool{});
    case at::kComplexFloat:
      return f(c10::complex<float>{});
    case at::kComplexDouble:
      return f(c10::complex<double>{});
    default:
      TORCH_CHECK(false, "torch-ocl: unsupported compute dtype ", t);
  }
}

}  // namespace

float scalar_as_float(const c10::Scalar& v) { return convert_operand<float>(v); }

void check_scalar_fits(const c10::Scalar& v, at::ScalarType t) {
  with_scalar_type(t, [&](auto zero) { (void)v.to<decltype(zero)>(); });
}

void push_operand_scalar(KernelLaunch& launch, const c10::Scalar& v, at::ScalarType t) {
  with_scalar_type(t, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, at::Half> || std::is_same_v<T, at::BFloat16>) {
      launch.arg(convert_operand<float>(v));  // the kernels compute half/bfloat16 in float
    } else if constexpr (std::is_same_v<T, bool>) {
      launch.arg(static_cast<uint8_t>(convert_operand<bool>(v)));
    } else if constexpr (c10::is_complex<T>::value) {  // float2 / double2 in the kernels
      const T z = convert_operand<T>(v);
      const typename T::value_type parts[2] = {z.real(), z.imag()};
      launch.raw(sizeof(parts), parts);
    } else {
      launch.arg(convert_operand<T>(v));
    }
  });
}

void push_compute_scalar(KernelLaunch& launch, const c10::Scalar& v, at::ScalarType t) {
  check_scalar_fits(v, t);
  push_operand_scalar(launch, v, t);
}

}  // namespace torch_ocl
