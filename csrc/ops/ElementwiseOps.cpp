// The elementwise ops' registration: the table's entries (ops/ElementwiseOps.h), the
// DispatchStubs ATen's implementations call, and those implementations registered for our key.
//
// An op reaches its kernel through ATen's own structured implementation: its meta function
// builds the TensorIterator (shapes, broadcasting, type promotion, out= and in-place checks, the
// CPU's error messages), its impl calls a DispatchStub, and the stub runs our kernel. So every
// variant (functional, in-place, out=) of every overload comes from one table line and one stub
// line here; ops without a structured implementation register ATen's native function instead.
#include "ops/ElementwiseOps.h"

#include <ATen/Dispatch.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Activation.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Gelu.h>
#include <ATen/native/Lerp.h>
#include <ATen/native/PointwiseOps.h>
#include <ATen/native/Pow.h>
#include <ATen/native/TensorCompare.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/ops/_prelu_kernel_backward_native.h>
#include <ATen/ops/_prelu_kernel_native.h>
#include <ATen/ops/abs_native.h>
#include <ATen/ops/acos_native.h>
#include <ATen/ops/acosh_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/addcdiv_native.h>
#include <ATen/ops/addcmul_native.h>
#include <ATen/ops/angle_native.h>
#include <ATen/ops/asin_native.h>
#include <ATen/ops/asinh_native.h>
#include <ATen/ops/atan2_native.h>
#include <ATen/ops/atan_native.h>
#include <ATen/ops/atanh_native.h>
#include <ATen/ops/bitwise_and_native.h>
#include <ATen/ops/bitwise_left_shift_native.h>
#include <ATen/ops/bitwise_not_native.h>
#include <ATen/ops/bitwise_or_native.h>
#include <ATen/ops/bitwise_right_shift_native.h>
#include <ATen/ops/bitwise_xor_native.h>
#include <ATen/ops/ceil_native.h>
#include <ATen/ops/clamp_max_native.h>
#include <ATen/ops/clamp_min_native.h>
#include <ATen/ops/clamp_native.h>
#include <ATen/ops/complex_native.h>
#include <ATen/ops/conj_physical_native.h>
#include <ATen/ops/copysign_native.h>
#include <ATen/ops/cos_native.h>
#include <ATen/ops/cosh_native.h>
#include <ATen/ops/digamma_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/elu_backward_native.h>
#include <ATen/ops/elu_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/eq_native.h>
#include <ATen/ops/erf_native.h>
#include <ATen/ops/erfc_native.h>
#include <ATen/ops/erfinv_native.h>
#include <ATen/ops/exp2_native.h>
#include <ATen/ops/exp_native.h>
#include <ATen/ops/expm1_native.h>
#include <ATen/ops/floor_divide_native.h>
#include <ATen/ops/floor_native.h>
#include <ATen/ops/fmax_native.h>
#include <ATen/ops/fmin_native.h>
#include <ATen/ops/fmod_native.h>
#include <ATen/ops/frac_native.h>
#include <ATen/ops/frexp_native.h>
#include <ATen/ops/gcd_native.h>
#include <ATen/ops/ge_native.h>
#include <ATen/ops/gelu_backward_native.h>
#include <ATen/ops/gelu_native.h>
#include <ATen/ops/glu_backward_native.h>
#include <ATen/ops/glu_native.h>
#include <ATen/ops/gt_native.h>
#include <ATen/ops/hardshrink_backward_native.h>
#include <ATen/ops/hardshrink_native.h>
#include <ATen/ops/hardsigmoid_backward_native.h>
#include <ATen/ops/hardsigmoid_native.h>
#include <ATen/ops/hardswish_backward_native.h>
#include <ATen/ops/hardswish_native.h>
#include <ATen/ops/hardtanh_backward_native.h>
#include <ATen/ops/hardtanh_native.h>
#include <ATen/ops/heaviside_native.h>
#include <ATen/ops/huber_loss_backward_native.h>
#include <ATen/ops/huber_loss_native.h>
#include <ATen/ops/hypot_native.h>
#include <ATen/ops/i0_native.h>
#include <ATen/ops/igamma_native.h>
#include <ATen/ops/igammac_native.h>
#include <ATen/ops/isnan_native.h>
#include <ATen/ops/isneginf_native.h>
#include <ATen/ops/isposinf_native.h>
#include <ATen/ops/lcm_native.h>
#include <ATen/ops/le_native.h>
#include <ATen/ops/leaky_relu_backward_native.h>
#include <ATen/ops/leaky_relu_native.h>
#include <ATen/ops/lerp_native.h>
#include <ATen/ops/lgamma_native.h>
#include <ATen/ops/log10_native.h>
#include <ATen/ops/log1p_native.h>
#include <ATen/ops/log2_native.h>
#include <ATen/ops/log_native.h>
#include <ATen/ops/log_sigmoid_backward_native.h>
#include <ATen/ops/log_sigmoid_forward_native.h>
#include <ATen/ops/logaddexp2_native.h>
#include <ATen/ops/logaddexp_native.h>
#include <ATen/ops/logical_and_native.h>
#include <ATen/ops/logical_not_native.h>
#include <ATen/ops/logical_or_native.h>
#include <ATen/ops/logical_xor_native.h>
#include <ATen/ops/logit_backward_native.h>
#include <ATen/ops/logit_native.h>
#include <ATen/ops/lshift_native.h>
#include <ATen/ops/lt_native.h>
#include <ATen/ops/maximum_native.h>
#include <ATen/ops/minimum_native.h>
#include <ATen/ops/mish_backward_native.h>
#include <ATen/ops/mish_native.h>
#include <ATen/ops/mse_loss_backward_native.h>
#include <ATen/ops/mse_loss_native.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/nan_to_num_native.h>
#include <ATen/ops/ne_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/nextafter_native.h>
#include <ATen/ops/polar_native.h>
#include <ATen/ops/polygamma_native.h>
#include <ATen/ops/pow_native.h>
#include <ATen/ops/reciprocal_native.h>
#include <ATen/ops/relu_native.h>
#include <ATen/ops/remainder_native.h>
#include <ATen/ops/round_native.h>
#include <ATen/ops/rshift_native.h>
#include <ATen/ops/rsqrt_native.h>
#include <ATen/ops/rsub_native.h>
#include <ATen/ops/sgn_native.h>
#include <ATen/ops/sigmoid_backward_native.h>
#include <ATen/ops/sigmoid_native.h>
#include <ATen/ops/sign_native.h>
#include <ATen/ops/signbit_native.h>
#include <ATen/ops/silu_backward_native.h>
#include <ATen/ops/silu_native.h>
#include <ATen/ops/sin_native.h>
#include <ATen/ops/sinc_native.h>
#include <ATen/ops/sinh_native.h>
#include <ATen/ops/smooth_l1_loss_backward_native.h>
#include <ATen/ops/smooth_l1_loss_native.h>
#include <ATen/ops/softplus_backward_native.h>
#include <ATen/ops/softplus_native.h>
#include <ATen/ops/softshrink_backward_native.h>
#include <ATen/ops/softshrink_native.h>
#include <ATen/ops/special_airy_ai_native.h>
#include <ATen/ops/special_bessel_j0_native.h>
#include <ATen/ops/special_bessel_j1_native.h>
#include <ATen/ops/special_bessel_y0_native.h>
#include <ATen/ops/special_bessel_y1_native.h>
#include <ATen/ops/special_chebyshev_polynomial_t_native.h>
#include <ATen/ops/special_chebyshev_polynomial_u_native.h>
#include <ATen/ops/special_chebyshev_polynomial_v_native.h>
#include <ATen/ops/special_chebyshev_polynomial_w_native.h>
#include <ATen/ops/special_entr_native.h>
#include <ATen/ops/special_erfcx_native.h>
#include <ATen/ops/special_hermite_polynomial_h_native.h>
#include <ATen/ops/special_hermite_polynomial_he_native.h>
#include <ATen/ops/special_i0e_native.h>
#include <ATen/ops/special_i1_native.h>
#include <ATen/ops/special_i1e_native.h>
#include <ATen/ops/special_laguerre_polynomial_l_native.h>
#include <ATen/ops/special_legendre_polynomial_p_native.h>
#include <ATen/ops/special_log_ndtr_native.h>
#include <ATen/ops/special_modified_bessel_i0_native.h>
#include <ATen/ops/special_modified_bessel_i1_native.h>
#include <ATen/ops/special_modified_bessel_k0_native.h>
#include <ATen/ops/special_modified_bessel_k1_native.h>
#include <ATen/ops/special_ndtri_native.h>
#include <ATen/ops/special_scaled_modified_bessel_k0_native.h>
#include <ATen/ops/special_scaled_modified_bessel_k1_native.h>
#include <ATen/ops/special_shifted_chebyshev_polynomial_t_native.h>
#include <ATen/ops/special_shifted_chebyshev_polynomial_u_native.h>
#include <ATen/ops/special_shifted_chebyshev_polynomial_v_native.h>
#include <ATen/ops/special_shifted_chebyshev_polynomial_w_native.h>
#include <ATen/ops/special_spherical_bessel_j0_native.h>
#include <ATen/ops/special_xlog1py_native.h>
#include <ATen/ops/special_zeta_native.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/sub_native.h>
#include <ATen/ops/tan_native.h>
#include <ATen/ops/tanh_backward_native.h>
#include <ATen/ops/tanh_native.h>
#include <ATen/ops/threshold_backward_native.h>
#include <ATen/ops/threshold_native.h>
#include <ATen/ops/trunc_native.h>
#include <ATen/ops/xlogy_native.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "ops/Elementwise.h"
#include "ops/ElementwiseTiny.h"
#include "ops/Structured.h"

namespace torch_ocl {

namespace {

constexpr EwOp kOps[] = {
#define TORCH_OCL_EW_ENTRY(name, dtypes, cpu_kernel, flags) \
  {EwId::name, #name, EwDtypes::dtypes, cpu_kernel, flags},
    TORCH_OCL_ELEMENTWISE_OPS(TORCH_OCL_EW_ENTRY)
#undef TORCH_OCL_EW_ENTRY
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == static_cast<size_t>(EwId::kCount));

bool takes_dtype(EwDtypes dtypes, at::ScalarType t) {
  switch (dtypes) {
    case EwDtypes::kAll:
      return true;
    case EwDtypes::kNoBool:
      return t != at::kBool;
    case EwDtypes::kIntegral:
      return at::isIntegralType(t, /*includeBool=*/true);
    case EwDtypes::kFloating:
      return at::isFloatingType(t);
    case EwDtypes::kInteger:
      return at::isIntegralType(t, /*includeBool=*/false);
    case EwDtypes::kFloatDouble:
      return t == at::kFloat || t == at::kDouble;
  }
  return false;
}

}  // namespace

const EwOp& ew_op(EwId id) { return kOps[static_cast<size_t>(id)]; }

void check_ew_dtype(const EwOp& op, at::ScalarType t) {
  if (at::isComplexType(t)) {
    TORCH_CHECK_NOT_IMPLEMENTED((op.flags & (kCplx | kCplxReal)) && t != at::kComplexHalf,
                                "torch-ocl: '", op.name, "' is not implemented for complex dtype ",
                                c10::toString(t),
                                " on the ocl device yet (docs/complex.md lists the complex ops); "
                                "compute it on the CPU (.cpu()) or on real and imaginary parts "
                                "(torch.view_as_real)");
    return;
  }
  TORCH_CHECK_NOT_IMPLEMENTED(takes_dtype(op.dtypes, t), "\"", op.cpu_kernel,
                              "\" not implemented for '", c10::toString(t), "'");
}

namespace {

// ---- the stubs: every stub argument after the iterator is a scalar parameter p0, p1, p2 ----

void set_param(EwParams& params, int i, const c10::Scalar& v) {
  (i == 0 ? params.p0 : i == 1 ? params.p1 : params.p2) = v;
}

template <EwId kOp, class Iter, class... P>
void stub_kernel(Iter& iter, P... p) {
  static_assert(sizeof...(P) <= 3, "elementwise ops take at most three scalar parameters");
  EwParams params;
  int i = 0;
  (set_param(params, i++, c10::Scalar(p)), ...);
  launch_elementwise(iter, kOp, params);
}

// a - alpha * b is add with -alpha.
void sub_kernel(at::TensorIteratorBase& iter, const c10::Scalar& alpha) {
  EwParams params;
  params.p0 = -alpha;
  launch_elementwise(iter, EwId::add, params);
}

// ---- stubs whose arguments are not all scalar parameters ----

// x ** exponent: the CPU's float, double and bfloat16 kernels take 0.5, -0.5 and -1 as sqrt,
// rsqrt and reciprocal; half and bfloat16 compute with the exponent converted to the dtype
// (checked), float and double with it as a double (unchecked), integers with it converted
// (checked).
void pow_tensor_scalar_kernel(at::TensorIteratorBase& iter, const c10::Scalar& exponent) {
  const at::ScalarType t = iter.common_dtype();
  if (at::isComplexType(t)) {  // the CPU's complex kernel: x ** 0.5 is sqrt, x ** -1 reciprocal
    if (exponent.equal(0.5)) return launch_elementwise(iter, EwId::sqrt);
    if (exponent.equal(-1.0)) return launch_elementwise(iter, EwId::reciprocal);
    EwParams params;
    params.p0 = exponent;
    return launch_elementwise(iter, EwId::pow_scalar, params);
  }
  if (t == at::kFloat || t == at::kDouble || t == at::kBFloat16) {
    if (exponent.equal(0.5)) return launch_elementwise(iter, EwId::sqrt);
    if (exponent.equal(-0.5)) return launch_elementwise(iter, EwId::rsqrt);
    if (exponent.equal(-1.0)) return launch_elementwise(iter, EwId::reciprocal);
  }
  EwParams params;
  params.p0 = exponent;
  if (t == at::kHalf) {
    params.p0 = static_cast<float>(exponent.to<at::Half>());
  } else if (t == at::kBFloat16) {
    params.p0 = static_cast<float>(exponent.to<at::BFloat16>());
  } else if (at::isFloatingType(t)) {
    params.param_dtype = at::kDouble;
  }
  launch_elementwise(iter, EwId::pow_scalar, params);
}

// polar(abs, angle) and complex(real, imag): real operands (computed in their dtype), a complex
// result.
template <EwId kOp>
void to_complex_kernel(at::TensorIterator& iter) {
  EwParams params;
  params.compute = iter.input_dtype(0);
  launch_elementwise(iter, kOp, params);
}

// nan_to_num: the replacements default to 0 and the dtype's largest and lowest values; given
// ones are converted without a check, as on the CPU (1e300 becomes inf in float32).
void nan_to_num_kernel(at::TensorIteratorBase& iter, std::optional<double> nan,
                       std::optional<double> posinf, std::optional<double> neginf) {
  EwParams params;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, iter.common_dtype(), "nan_to_num", [&] {
    using limits = std::numeric_limits<scalar_t>;
    params.p1 = static_cast<double>(limits::max());
    params.p2 = static_cast<double>(limits::lowest());
  });
  params.p0 = nan.value_or(0.0);
  if (posinf) params.p1 = *posinf;
  if (neginf) params.p2 = *neginf;
  params.param_dtype = at::kDouble;
  launch_elementwise(iter, EwId::nan_to_num, params);
}

// round(x, decimals): scaled by 10^|decimals| (a double, as the CPU computes it).
void round_decimals_kernel(at::TensorIteratorBase& iter, int64_t decimals) {
  EwParams params;
  params.p0 = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  params.p1 = decimals < 0 ? 1 : 0;
  params.param_dtype = at::kDouble;
  launch_elementwise(iter, EwId::round_decimals, params);
}

// elu's gradient from the input or, after an in-place forward, from its result.
void elu_backward_kernel(at::TensorIteratorBase& iter, const c10::Scalar& alpha,
                         const c10::Scalar& scale, const c10::Scalar& input_scale, bool is_result) {
  EwParams params;
  params.p0 = alpha;
  params.p1 = scale;
  params.p2 = input_scale;
  launch_elementwise(iter, is_result ? EwId::elu_backward_result : EwId::elu_backward, params);
}

// prelu's gradients: one iterator with two outputs (input's and weight's gradient), run as two
// launches over the same inputs (self, weight, grad_output).
void prelu_backward_kernel(at::TensorIterator& iter) {
  const EwId ops[2] = {EwId::prelu_backward_input, EwId::prelu_backward_weight};
  for (int k = 0; k < 2; ++k) {
    auto one = at::TensorIteratorConfig()
                   .add_output(iter.output(k))
                   .add_const_input(iter.input(0))
                   .add_const_input(iter.input(1))
                   .add_const_input(iter.input(2))
                   .build();
    launch_elementwise(one, ops[k]);
  }
}

// frexp: one iterator with two outputs (mantissa in the input's dtype, int32 exponent), run as
// two launches over the input, computed in the input's dtype.
void frexp_kernel(at::TensorIteratorBase& iter) {
  const EwId ops[2] = {EwId::frexp_mantissa, EwId::frexp_exponent};
  for (int k = 0; k < 2; ++k) {
    auto one = at::TensorIteratorConfig()
                   .add_output(iter.output(k))
                   .add_const_input(iter.input(0))
                   .check_all_same_dtype(false)
                   .build();
    EwParams params;
    params.compute = iter.input_dtype(0);
    launch_elementwise(one, ops[k], params);
  }
}

}  // namespace

// ---- glue for ops whose ATen implementation is CPU-only ----

// gelu and its gradient: ATen's structured classes call the CPU's kernel directly; ours take
// ATen's meta functions and run the table's ops.
struct GeluImpl : at::meta::structured_gelu {
  void impl(const at::Tensor&, c10::string_view approximate, const at::Tensor&) {
    const bool tanh = at::native::get_gelutype_enum(approximate) == at::native::GeluType::Tanh;
    launch_elementwise(*this, tanh ? EwId::gelu_tanh : EwId::gelu);
  }
};
struct GeluBackwardImpl : at::meta::structured_gelu_backward {
  void impl(const at::Tensor&, const at::Tensor&, c10::string_view approximate, const at::Tensor&) {
    const bool tanh = at::native::get_gelutype_enum(approximate) == at::native::GeluType::Tanh;
    launch_elementwise(*this, tanh ? EwId::gelu_tanh_backward : EwId::gelu_backward);
  }
};

// glu: ATen's meta function builds its iterator over the input's two halves, temporaries that
// are gone when the impl runs (the CPU's kernel only reads their data pointers; ours needs the
// tensors to find their buffers), so the impl builds it again over halves that stay alive.
struct GluImpl : at::meta::structured_glu {
  void impl(const at::Tensor& self, int64_t dim, const at::Tensor& out) {
    const int64_t d = at::maybe_wrap_dim(dim, self.dim());
    const int64_t half = self.size(d) / 2;
    const at::Tensor first = self.narrow(d, 0, half);
    const at::Tensor second = self.narrow(d, half, half);
    auto iter = at::TensorIterator::borrowing_binary_op(out, first, second);
    launch_elementwise(iter, EwId::glu);
  }
};

namespace {

// log_sigmoid as CUDA computes it: no buffer (an empty one is returned; the gradient is
// computed from the input).
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self) {
  at::Tensor out;
  auto iter = at::TensorIterator::unary_op(out, self);
  launch_elementwise(iter, EwId::log_sigmoid);
  return {iter.output(), at::empty({0}, self.options())};
}
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(const at::Tensor& self,
                                                             at::Tensor& out, at::Tensor& buffer) {
  auto iter = at::TensorIterator::unary_op(out, self);
  launch_elementwise(iter, EwId::log_sigmoid);
  return {out, buffer};
}
at::Tensor& log_sigmoid_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                     const at::Tensor&, at::Tensor& grad_input) {
  auto iter = at::TensorIteratorConfig()
                  .add_output(grad_input)
                  .add_const_input(self)
                  .add_const_input(grad_output)
                  .build();
  launch_elementwise(iter, EwId::log_sigmoid_backward);
  return grad_input;
}
at::Tensor log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                const at::Tensor& buffer) {
  at::Tensor grad_input = at::empty_like(grad_output);
  return log_sigmoid_backward_out(grad_output, self, buffer, grad_input);
}

}  // namespace

}  // namespace torch_ocl

// The stubs and their registration live in at::native.
namespace at::native {

#define TORCH_OCL_EW_STUB(stub, op) \
  REGISTER_PRIVATEUSE1_DISPATCH(stub, &torch_ocl::stub_kernel<torch_ocl::EwId::op>)

// clang-format off
TORCH_OCL_EW_STUB(add_stub, add);
REGISTER_PRIVATEUSE1_DISPATCH(sub_stub, &torch_ocl::sub_kernel);
TORCH_OCL_EW_STUB(mul_stub, mul);
TORCH_OCL_EW_STUB(div_true_stub, div_true);
TORCH_OCL_EW_STUB(div_trunc_stub, div_trunc);
TORCH_OCL_EW_STUB(div_floor_stub, div_floor);
TORCH_OCL_EW_STUB(maximum_stub, maximum);
TORCH_OCL_EW_STUB(minimum_stub, minimum);
TORCH_OCL_EW_STUB(bitwise_and_stub, bitwise_and);
TORCH_OCL_EW_STUB(bitwise_or_stub, bitwise_or);
TORCH_OCL_EW_STUB(bitwise_xor_stub, bitwise_xor);
TORCH_OCL_EW_STUB(eq_stub, eq);
TORCH_OCL_EW_STUB(ne_stub, ne);
TORCH_OCL_EW_STUB(lt_stub, lt);
TORCH_OCL_EW_STUB(le_stub, le);
TORCH_OCL_EW_STUB(gt_stub, gt);
TORCH_OCL_EW_STUB(ge_stub, ge);
TORCH_OCL_EW_STUB(logical_not_stub, logical_not);
TORCH_OCL_EW_STUB(logical_and_stub, logical_and);
TORCH_OCL_EW_STUB(logical_or_stub, logical_or);
TORCH_OCL_EW_STUB(logical_xor_stub, logical_xor);
TORCH_OCL_EW_STUB(neg_stub, neg);
TORCH_OCL_EW_STUB(abs_stub, abs);
TORCH_OCL_EW_STUB(sign_stub, sign);
TORCH_OCL_EW_STUB(ceil_stub, ceil);
TORCH_OCL_EW_STUB(floor_stub, floor);
TORCH_OCL_EW_STUB(round_stub, round);
TORCH_OCL_EW_STUB(trunc_stub, trunc);
TORCH_OCL_EW_STUB(exp_stub, exp);
TORCH_OCL_EW_STUB(log_stub, log);
TORCH_OCL_EW_STUB(sqrt_stub, sqrt);
TORCH_OCL_EW_STUB(rsqrt_stub, rsqrt);
TORCH_OCL_EW_STUB(sigmoid_stub, sigmoid);
TORCH_OCL_EW_STUB(tanh_stub, tanh);
TORCH_OCL_EW_STUB(sin_stub, sin);
TORCH_OCL_EW_STUB(cos_stub, cos);
TORCH_OCL_EW_STUB(reciprocal_stub, reciprocal);
TORCH_OCL_EW_STUB(clamp_scalar_stub, clamp);
TORCH_OCL_EW_STUB(clamp_min_scalar_stub, clamp_min);
TORCH_OCL_EW_STUB(clamp_max_scalar_stub, clamp_max);
TORCH_OCL_EW_STUB(addcmul_stub, addcmul);
TORCH_OCL_EW_STUB(addcdiv_stub, addcdiv);
TORCH_OCL_EW_STUB(lerp_kernel_scalar_weight, lerp);
TORCH_OCL_EW_STUB(threshold_stub, threshold);
TORCH_OCL_EW_STUB(sigmoid_backward_stub, sigmoid_backward);
TORCH_OCL_EW_STUB(tanh_backward_stub, tanh_backward);
TORCH_OCL_EW_STUB(pow_tensor_tensor_stub, pow);
REGISTER_PRIVATEUSE1_DISPATCH(pow_tensor_scalar_stub, &torch_ocl::pow_tensor_scalar_kernel);
TORCH_OCL_EW_STUB(fmod_stub, fmod);
TORCH_OCL_EW_STUB(remainder_stub, remainder);
TORCH_OCL_EW_STUB(fmax_stub, fmax);
TORCH_OCL_EW_STUB(fmin_stub, fmin);
TORCH_OCL_EW_STUB(heaviside_stub, heaviside);
TORCH_OCL_EW_STUB(gcd_stub, gcd);
TORCH_OCL_EW_STUB(lcm_stub, lcm);
TORCH_OCL_EW_STUB(bitwise_not_stub, bitwise_not);
TORCH_OCL_EW_STUB(lshift_stub, lshift);
TORCH_OCL_EW_STUB(rshift_stub, rshift);
TORCH_OCL_EW_STUB(clamp_stub, clamp_tensor);
TORCH_OCL_EW_STUB(lerp_kernel_tensor_weight, lerp_tensor);
TORCH_OCL_EW_STUB(signbit_stub, signbit);
TORCH_OCL_EW_STUB(isposinf_stub, isposinf);
TORCH_OCL_EW_STUB(isneginf_stub, isneginf);
REGISTER_PRIVATEUSE1_DISPATCH(nan_to_num_stub, &torch_ocl::nan_to_num_kernel);
REGISTER_PRIVATEUSE1_DISPATCH(round_decimals_stub, &torch_ocl::round_decimals_kernel);
TORCH_OCL_EW_STUB(frac_stub, frac);
TORCH_OCL_EW_STUB(atan2_stub, atan2);
TORCH_OCL_EW_STUB(hypot_stub, hypot);
TORCH_OCL_EW_STUB(copysign_stub, copysign);
TORCH_OCL_EW_STUB(nextafter_stub, nextafter);
TORCH_OCL_EW_STUB(xlogy_stub, xlogy);
TORCH_OCL_EW_STUB(xlog1py_stub, xlog1py);
TORCH_OCL_EW_STUB(logaddexp_stub, logaddexp);
TORCH_OCL_EW_STUB(logaddexp2_stub, logaddexp2);
TORCH_OCL_EW_STUB(zeta_stub, zeta);
TORCH_OCL_EW_STUB(chebyshev_polynomial_t_stub, chebyshev_t);
TORCH_OCL_EW_STUB(chebyshev_polynomial_u_stub, chebyshev_u);
TORCH_OCL_EW_STUB(chebyshev_polynomial_v_stub, chebyshev_v);
TORCH_OCL_EW_STUB(chebyshev_polynomial_w_stub, chebyshev_w);
TORCH_OCL_EW_STUB(shifted_chebyshev_polynomial_t_stub, shifted_chebyshev_t);
TORCH_OCL_EW_STUB(shifted_chebyshev_polynomial_u_stub, shifted_chebyshev_u);
TORCH_OCL_EW_STUB(shifted_chebyshev_polynomial_v_stub, shifted_chebyshev_v);
TORCH_OCL_EW_STUB(shifted_chebyshev_polynomial_w_stub, shifted_chebyshev_w);
TORCH_OCL_EW_STUB(hermite_polynomial_h_stub, hermite_h);
TORCH_OCL_EW_STUB(hermite_polynomial_he_stub, hermite_he);
TORCH_OCL_EW_STUB(laguerre_polynomial_l_stub, laguerre_l);
TORCH_OCL_EW_STUB(legendre_polynomial_p_stub, legendre_p);
TORCH_OCL_EW_STUB(erf_stub, erf);
TORCH_OCL_EW_STUB(erfc_stub, erfc);
TORCH_OCL_EW_STUB(erfinv_stub, erfinv);
TORCH_OCL_EW_STUB(expm1_stub, expm1);
TORCH_OCL_EW_STUB(log1p_stub, log1p);
TORCH_OCL_EW_STUB(log2_stub, log2);
TORCH_OCL_EW_STUB(log10_stub, log10);
TORCH_OCL_EW_STUB(exp2_stub, exp2);
TORCH_OCL_EW_STUB(lgamma_stub, lgamma);
TORCH_OCL_EW_STUB(digamma_stub, digamma);
TORCH_OCL_EW_STUB(polygamma_stub, polygamma);
TORCH_OCL_EW_STUB(tan_stub, tan);
TORCH_OCL_EW_STUB(asin_stub, asin);
TORCH_OCL_EW_STUB(acos_stub, acos);
TORCH_OCL_EW_STUB(atan_stub, atan);
TORCH_OCL_EW_STUB(sinh_stub, sinh);
TORCH_OCL_EW_STUB(cosh_stub, cosh);
TORCH_OCL_EW_STUB(asinh_stub, asinh);
TORCH_OCL_EW_STUB(acosh_stub, acosh);
TORCH_OCL_EW_STUB(atanh_stub, atanh);
TORCH_OCL_EW_STUB(sinc_stub, sinc);
TORCH_OCL_EW_STUB(i0_stub, i0);
TORCH_OCL_EW_STUB(special_i0e_stub, i0e);
TORCH_OCL_EW_STUB(special_i1_stub, i1);
TORCH_OCL_EW_STUB(special_i1e_stub, i1e);
TORCH_OCL_EW_STUB(special_entr_stub, entr);
TORCH_OCL_EW_STUB(special_modified_bessel_i0_stub, modified_bessel_i0);
TORCH_OCL_EW_STUB(special_modified_bessel_i1_stub, modified_bessel_i1);
TORCH_OCL_EW_STUB(special_spherical_bessel_j0_stub, spherical_bessel_j0);
TORCH_OCL_EW_STUB(igamma_stub, igamma);
TORCH_OCL_EW_STUB(igammac_stub, igammac);
TORCH_OCL_EW_STUB(special_airy_ai_stub, airy_ai);
TORCH_OCL_EW_STUB(special_bessel_j0_stub, bessel_j0);
TORCH_OCL_EW_STUB(special_bessel_j1_stub, bessel_j1);
TORCH_OCL_EW_STUB(special_bessel_y0_stub, bessel_y0);
TORCH_OCL_EW_STUB(special_bessel_y1_stub, bessel_y1);
TORCH_OCL_EW_STUB(special_modified_bessel_k0_stub, modified_bessel_k0);
TORCH_OCL_EW_STUB(special_modified_bessel_k1_stub, modified_bessel_k1);
TORCH_OCL_EW_STUB(special_scaled_modified_bessel_k0_stub, scaled_modified_bessel_k0);
TORCH_OCL_EW_STUB(special_scaled_modified_bessel_k1_stub, scaled_modified_bessel_k1);
TORCH_OCL_EW_STUB(special_erfcx_stub, erfcx);
TORCH_OCL_EW_STUB(special_log_ndtr_stub, log_ndtr);
TORCH_OCL_EW_STUB(special_ndtri_stub, ndtri);
TORCH_OCL_EW_STUB(angle_stub, angle);
TORCH_OCL_EW_STUB(sgn_stub, sgn);
TORCH_OCL_EW_STUB(conj_physical_stub, conj);
REGISTER_PRIVATEUSE1_DISPATCH(polar_stub, &torch_ocl::to_complex_kernel<torch_ocl::EwId::polar>);
REGISTER_PRIVATEUSE1_DISPATCH(complex_stub, &torch_ocl::to_complex_kernel<torch_ocl::EwId::complex>);
REGISTER_PRIVATEUSE1_DISPATCH(frexp_stub, &torch_ocl::frexp_kernel);
TORCH_OCL_EW_STUB(logit_stub, logit);
TORCH_OCL_EW_STUB(logit_backward_stub, logit_backward);
TORCH_OCL_EW_STUB(silu_stub, silu);
TORCH_OCL_EW_STUB(silu_backward_stub, silu_backward);
TORCH_OCL_EW_STUB(mish_stub, mish);
TORCH_OCL_EW_STUB(mish_backward_stub, mish_backward);
TORCH_OCL_EW_STUB(hardswish_stub, hardswish);
TORCH_OCL_EW_STUB(hardswish_backward_stub, hardswish_backward);
TORCH_OCL_EW_STUB(hardsigmoid_stub, hardsigmoid);
TORCH_OCL_EW_STUB(hardsigmoid_backward_stub, hardsigmoid_backward);
TORCH_OCL_EW_STUB(leaky_relu_stub, leaky_relu);
TORCH_OCL_EW_STUB(leaky_relu_backward_stub, leaky_relu_backward);
TORCH_OCL_EW_STUB(elu_stub, elu);
REGISTER_PRIVATEUSE1_DISPATCH(elu_backward_stub, &torch_ocl::elu_backward_kernel);
TORCH_OCL_EW_STUB(softplus_stub, softplus);
TORCH_OCL_EW_STUB(softplus_backward_stub, softplus_backward);
TORCH_OCL_EW_STUB(hardtanh_backward_stub, hardtanh_backward);
TORCH_OCL_EW_STUB(hardshrink_stub, hardshrink);
TORCH_OCL_EW_STUB(softshrink_stub, softshrink);
TORCH_OCL_EW_STUB(shrink_backward_stub, shrink_backward);
TORCH_OCL_EW_STUB(glu_stub, glu);
TORCH_OCL_EW_STUB(glu_backward_stub, glu_backward);
TORCH_OCL_EW_STUB(prelu_stub, prelu);
REGISTER_PRIVATEUSE1_DISPATCH(prelu_backward_stub, &torch_ocl::prelu_backward_kernel);
TORCH_OCL_EW_STUB(mse_stub, mse);
TORCH_OCL_EW_STUB(mse_backward_stub, mse_backward);
TORCH_OCL_EW_STUB(smooth_l1_stub, smooth_l1);
TORCH_OCL_EW_STUB(smooth_l1_backward_stub, smooth_l1_backward);
TORCH_OCL_EW_STUB(huber_stub, huber);
TORCH_OCL_EW_STUB(huber_backward_stub, huber_backward);
// clang-format on
#undef TORCH_OCL_EW_STUB

}  // namespace at::native

namespace torch_ocl {

// ---- the ATen ops: structured implementations (functional, in-place, out=) and native ones ----

#define TORCH_OCL_STRUCTURED(cls, fn_name, inplace_name, out_name) \
  m.impl(fn_name, AtenStructured<at::native::cls>::functional);    \
  m.impl(inplace_name, AtenStructured<at::native::cls>::inplace);  \
  m.impl(out_name, AtenStructured<at::native::cls>::out);
#define TORCH_OCL_STRUCTURED_NO_INPLACE(cls, fn_name, out_name) \
  m.impl(fn_name, AtenStructured<at::native::cls>::functional); \
  m.impl(out_name, AtenStructured<at::native::cls>::out);
#define TORCH_OCL_UNARY(name) \
  TORCH_OCL_STRUCTURED(structured_##name##_out, #name, #name "_", #name ".out")
// An op whose tiny calls may take the short route (ops/ElementwiseTiny.h) to kernel `op`.
#define TORCH_OCL_TINY(cls, op, negate, fn_name, inplace_name, out_name)  \
  m.impl(fn_name, Tiny<at::native::cls, EwId::op, negate>::functional);   \
  m.impl(inplace_name, Tiny<at::native::cls, EwId::op, negate>::inplace); \
  m.impl(out_name, Tiny<at::native::cls, EwId::op, negate>::out);
#define TORCH_OCL_TINY_UNARY(name) \
  TORCH_OCL_TINY(structured_##name##_out, name, false, #name, #name "_", #name ".out")
#define TORCH_OCL_COMPARISON(name)                                                        \
  TORCH_OCL_STRUCTURED(structured_##name##_Tensor_out, #name ".Tensor", #name "_.Tensor", \
                       #name ".Tensor_out")                                               \
  TORCH_OCL_STRUCTURED(structured_##name##_Scalar_out, #name ".Scalar", #name "_.Scalar", \
                       #name ".Scalar_out")
// torch.special ops: a functional form and out=.
#define TORCH_OCL_SPECIAL(name)                                                      \
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_special_##name##_out, "special_" #name, \
                                  "special_" #name ".out")
#define TORCH_OCL_BITWISE(name)                                                    \
  TORCH_OCL_STRUCTURED(structured_##name##_out, #name ".Tensor", #name "_.Tensor", \
                       #name ".Tensor_out")

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // clang-format off
  TORCH_OCL_TINY(structured_ufunc_add_CPU, add, false, "add.Tensor", "add_.Tensor", "add.out")
  TORCH_OCL_TINY(structured_sub_out, add, true, "sub.Tensor", "sub_.Tensor", "sub.out")
  TORCH_OCL_TINY(structured_mul_out, mul, false, "mul.Tensor", "mul_.Tensor", "mul.out")
  TORCH_OCL_TINY(structured_div_out, div_true, false, "div.Tensor", "div_.Tensor", "div.out")
  TORCH_OCL_STRUCTURED(structured_div_out_mode, "div.Tensor_mode", "div_.Tensor_mode", "div.out_mode")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_maximum_out, "maximum", "maximum.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_minimum_out, "minimum", "minimum.out")
  TORCH_OCL_BITWISE(bitwise_and)
  TORCH_OCL_BITWISE(bitwise_or)
  TORCH_OCL_BITWISE(bitwise_xor)
  TORCH_OCL_COMPARISON(eq)
  TORCH_OCL_COMPARISON(ne)
  TORCH_OCL_COMPARISON(lt)
  TORCH_OCL_COMPARISON(le)
  TORCH_OCL_COMPARISON(gt)
  TORCH_OCL_COMPARISON(ge)
  TORCH_OCL_TINY_UNARY(neg)
  TORCH_OCL_TINY_UNARY(sign)
  TORCH_OCL_UNARY(sgn)
  TORCH_OCL_TINY_UNARY(ceil)
  TORCH_OCL_TINY_UNARY(floor)
  TORCH_OCL_TINY_UNARY(round)
  TORCH_OCL_TINY_UNARY(trunc)
  TORCH_OCL_TINY_UNARY(exp)
  TORCH_OCL_TINY_UNARY(log)
  TORCH_OCL_TINY_UNARY(sqrt)
  TORCH_OCL_TINY_UNARY(rsqrt)
  TORCH_OCL_TINY_UNARY(sigmoid)
  TORCH_OCL_TINY_UNARY(tanh)
  TORCH_OCL_TINY_UNARY(sin)
  TORCH_OCL_TINY_UNARY(cos)
  TORCH_OCL_TINY_UNARY(reciprocal)
  TORCH_OCL_UNARY(clamp)
  TORCH_OCL_TINY_UNARY(clamp_min)
  TORCH_OCL_TINY_UNARY(clamp_max)
  TORCH_OCL_UNARY(addcmul)
  TORCH_OCL_UNARY(addcdiv)
  TORCH_OCL_UNARY(threshold)
  TORCH_OCL_STRUCTURED(structured_lerp_Scalar, "lerp.Scalar", "lerp_.Scalar", "lerp.Scalar_out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_threshold_backward_out, "threshold_backward", "threshold_backward.grad_input")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_sigmoid_backward_out, "sigmoid_backward", "sigmoid_backward.grad_input")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_tanh_backward_out, "tanh_backward", "tanh_backward.grad_input")
  TORCH_OCL_STRUCTURED(structured_pow_Tensor_Tensor_out, "pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out")
  TORCH_OCL_STRUCTURED(structured_pow_Tensor_Scalar_out, "pow.Tensor_Scalar", "pow_.Scalar", "pow.Tensor_Scalar_out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_pow_Scalar_out, "pow.Scalar", "pow.Scalar_out")
  TORCH_OCL_STRUCTURED(structured_fmod_out, "fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out")
  TORCH_OCL_STRUCTURED(structured_remainder_out, "remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_fmax_out, "fmax", "fmax.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_fmin_out, "fmin", "fmin.out")
  TORCH_OCL_UNARY(heaviside)
  TORCH_OCL_UNARY(gcd)
  TORCH_OCL_UNARY(lcm)
  TORCH_OCL_UNARY(bitwise_not)
  TORCH_OCL_BITWISE(bitwise_left_shift)
  TORCH_OCL_BITWISE(bitwise_right_shift)
  TORCH_OCL_STRUCTURED(structured_clamp_Tensor_out, "clamp.Tensor", "clamp_.Tensor", "clamp.Tensor_out")
  TORCH_OCL_STRUCTURED(structured_clamp_min_Tensor_out, "clamp_min.Tensor", "clamp_min_.Tensor", "clamp_min.Tensor_out")
  TORCH_OCL_STRUCTURED(structured_clamp_max_Tensor_out, "clamp_max.Tensor", "clamp_max_.Tensor", "clamp_max.Tensor_out")
  TORCH_OCL_STRUCTURED(structured_lerp_Tensor, "lerp.Tensor", "lerp_.Tensor", "lerp.Tensor_out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_signbit_out, "signbit", "signbit.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_isposinf_out, "isposinf", "isposinf.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_isneginf_out, "isneginf", "isneginf.out")
  TORCH_OCL_STRUCTURED(structured_round_decimals_out, "round.decimals", "round_.decimals", "round.decimals_out")
  TORCH_OCL_UNARY(frac)
  TORCH_OCL_UNARY(atan2)
  TORCH_OCL_UNARY(hypot)
  TORCH_OCL_STRUCTURED(structured_copysign_out, "copysign.Tensor", "copysign_.Tensor", "copysign.out")
  TORCH_OCL_UNARY(nextafter)
  TORCH_OCL_STRUCTURED(structured_xlogy_out, "xlogy.Tensor", "xlogy_.Tensor", "xlogy.OutTensor")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_special_xlog1py_out, "special_xlog1py", "special_xlog1py.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_logaddexp_out, "logaddexp", "logaddexp.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_logaddexp2_out, "logaddexp2", "logaddexp2.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_special_zeta_out, "special_zeta", "special_zeta.out")
  TORCH_OCL_SPECIAL(chebyshev_polynomial_t)
  TORCH_OCL_SPECIAL(chebyshev_polynomial_u)
  TORCH_OCL_SPECIAL(chebyshev_polynomial_v)
  TORCH_OCL_SPECIAL(chebyshev_polynomial_w)
  TORCH_OCL_SPECIAL(shifted_chebyshev_polynomial_t)
  TORCH_OCL_SPECIAL(shifted_chebyshev_polynomial_u)
  TORCH_OCL_SPECIAL(shifted_chebyshev_polynomial_v)
  TORCH_OCL_SPECIAL(shifted_chebyshev_polynomial_w)
  TORCH_OCL_SPECIAL(hermite_polynomial_h)
  TORCH_OCL_SPECIAL(hermite_polynomial_he)
  TORCH_OCL_SPECIAL(laguerre_polynomial_l)
  TORCH_OCL_SPECIAL(legendre_polynomial_p)
  TORCH_OCL_TINY_UNARY(erf)
  TORCH_OCL_UNARY(erfc)
  TORCH_OCL_UNARY(erfinv)
  TORCH_OCL_UNARY(expm1)
  TORCH_OCL_UNARY(log1p)
  TORCH_OCL_UNARY(log2)
  TORCH_OCL_UNARY(log10)
  TORCH_OCL_UNARY(exp2)
  TORCH_OCL_UNARY(lgamma)
  TORCH_OCL_UNARY(digamma)
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_polygamma_out, "polygamma", "polygamma.out")
  TORCH_OCL_UNARY(tan)
  TORCH_OCL_UNARY(asin)
  TORCH_OCL_UNARY(acos)
  TORCH_OCL_UNARY(atan)
  TORCH_OCL_UNARY(sinh)
  TORCH_OCL_UNARY(cosh)
  TORCH_OCL_UNARY(asinh)
  TORCH_OCL_UNARY(acosh)
  TORCH_OCL_UNARY(atanh)
  TORCH_OCL_UNARY(sinc)
  TORCH_OCL_UNARY(i0)
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_special_i0e_out, "special_i0e", "special_i0e.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_special_i1_out, "special_i1", "special_i1.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_special_i1e_out, "special_i1e", "special_i1e.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_special_entr_out, "special_entr", "special_entr.out")
  TORCH_OCL_SPECIAL(modified_bessel_i0)
  TORCH_OCL_SPECIAL(modified_bessel_i1)
  TORCH_OCL_SPECIAL(spherical_bessel_j0)
  TORCH_OCL_STRUCTURED(structured_igamma_out, "igamma", "igamma_", "igamma.out")
  TORCH_OCL_STRUCTURED(structured_igammac_out, "igammac", "igammac_", "igammac.out")
  TORCH_OCL_SPECIAL(airy_ai)
  TORCH_OCL_SPECIAL(bessel_j0)
  TORCH_OCL_SPECIAL(bessel_j1)
  TORCH_OCL_SPECIAL(bessel_y0)
  TORCH_OCL_SPECIAL(bessel_y1)
  TORCH_OCL_SPECIAL(modified_bessel_k0)
  TORCH_OCL_SPECIAL(modified_bessel_k1)
  TORCH_OCL_SPECIAL(scaled_modified_bessel_k0)
  TORCH_OCL_SPECIAL(scaled_modified_bessel_k1)
  TORCH_OCL_SPECIAL(erfcx)
  TORCH_OCL_SPECIAL(log_ndtr)
  TORCH_OCL_SPECIAL(ndtri)
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_logit_backward_out, "logit_backward", "logit_backward.grad_input")
  // activations
  m.impl("gelu", AtenStructured<GeluImpl>::functional);
  m.impl("gelu_", AtenStructured<GeluImpl>::inplace);
  m.impl("gelu.out", AtenStructured<GeluImpl>::out);
  m.impl("gelu_backward", AtenStructured<GeluBackwardImpl>::functional);
  m.impl("gelu_backward.grad_input", AtenStructured<GeluBackwardImpl>::out);
  TORCH_OCL_UNARY(silu)
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_silu_backward_out, "silu_backward", "silu_backward.grad_input")
  TORCH_OCL_UNARY(mish)
  TORCH_OCL_UNARY(hardsigmoid)
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_hardsigmoid_backward_out, "hardsigmoid_backward", "hardsigmoid_backward.grad_input")
  TORCH_OCL_UNARY(leaky_relu)
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_leaky_relu_backward_out, "leaky_relu_backward", "leaky_relu_backward.grad_input")
  TORCH_OCL_UNARY(elu)
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_elu_backward_out, "elu_backward", "elu_backward.grad_input")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_softplus_out, "softplus", "softplus.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_softplus_backward_out, "softplus_backward", "softplus_backward.grad_input")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_hardshrink_out, "hardshrink", "hardshrink.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_hardshrink_backward_out, "hardshrink_backward", "hardshrink_backward.grad_input")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_softshrink_out, "softshrink", "softshrink.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_softshrink_backward_out, "softshrink_backward", "softshrink_backward.grad_input")
  m.impl("glu", AtenStructured<GluImpl>::functional);
  m.impl("glu.out", AtenStructured<GluImpl>::out);
  // losses (ATen reduces them with our sum and mean)
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_mse_loss_out, "mse_loss", "mse_loss.out")
  TORCH_OCL_STRUCTURED_NO_INPLACE(structured_smooth_l1_loss_out, "smooth_l1_loss", "smooth_l1_loss.out")
  // clang-format on
  // Not structured in ATen: its native functions (the functional variants of abs and the
  // logical ops are composite and call these).
  m.impl("abs.out", at::native::abs_out);
  m.impl("logical_not.out", at::native::logical_not_out);
  m.impl("logical_and.out", at::native::logical_and_out);
  m.impl("logical_or.out", at::native::logical_or_out);
  m.impl("logical_xor.out", at::native::logical_xor_out);
  m.impl("floor_divide", static_cast<at::Tensor (*)(const at::Tensor&, const at::Tensor&)>(
                             at::native::floor_divide));
  m.impl("floor_divide_.Tensor",
         static_cast<at::Tensor& (*)(at::Tensor&, const at::Tensor&)>(at::native::floor_divide_));
  m.impl("floor_divide.out", at::native::floor_divide_out);
  m.impl("relu", at::native::relu);
  m.impl("relu_", at::native::relu_);
  m.impl("isnan", at::native::isnan);
  // Complex numbers (docs/complex.md): conj_physical; polar and complex (real operands, complex
  // result).
  m.impl("conj_physical.out", at::native::conj_physical_out);
  m.impl("conj_physical_", at::native::conj_physical_);
  m.impl("polar.out", at::native::polar_out);
  m.impl("complex.out", at::native::complex_out);
  m.impl("rsub.Tensor",
         static_cast<at::Tensor (*)(const at::Tensor&, const at::Tensor&, const c10::Scalar&)>(
             at::native::rsub));
  m.impl("remainder.Scalar_Tensor",
         static_cast<at::Tensor (*)(const c10::Scalar&, const at::Tensor&)>(at::native::remainder));
  m.impl("__lshift__.Scalar", static_cast<at::Tensor (*)(const at::Tensor&, const c10::Scalar&)>(
                                  at::native::__lshift__));
  m.impl("__lshift__.Tensor",
         static_cast<at::Tensor (*)(const at::Tensor&, const at::Tensor&)>(at::native::__lshift__));
  m.impl("__ilshift__.Scalar",
         static_cast<at::Tensor& (*)(at::Tensor&, const c10::Scalar&)>(at::native::__ilshift__));
  m.impl("__ilshift__.Tensor",
         static_cast<at::Tensor& (*)(at::Tensor&, const at::Tensor&)>(at::native::__ilshift__));
  m.impl("__rshift__.Scalar", static_cast<at::Tensor (*)(const at::Tensor&, const c10::Scalar&)>(
                                  at::native::__rshift__));
  m.impl("__rshift__.Tensor",
         static_cast<at::Tensor (*)(const at::Tensor&, const at::Tensor&)>(at::native::__rshift__));
  m.impl("__irshift__.Scalar",
         static_cast<at::Tensor& (*)(at::Tensor&, const c10::Scalar&)>(at::native::__irshift__));
  m.impl("__irshift__.Tensor",
         static_cast<at::Tensor& (*)(at::Tensor&, const at::Tensor&)>(at::native::__irshift__));
  m.impl("nan_to_num.out", at::native::nan_to_num_out);
  m.impl("angle", at::native::angle);
  m.impl("angle.out", at::native::angle_out);
  m.impl("frexp.Tensor_out", at::native::frexp_out);
  m.impl("logit", at::native::logit);
  m.impl("logit_", at::native::logit_);
  m.impl("logit.out", at::native::logit_out);
  m.impl("mish_backward", at::native::mish_backward);
  m.impl("hardswish", at::native::hardswish);
  m.impl("hardswish_", at::native::hardswish_);
  m.impl("hardswish.out", at::native::hardswish_out);
  m.impl("hardswish_backward", at::native::hardswish_backward);
  m.impl("hardtanh", at::native::hardtanh);
  m.impl("hardtanh_", at::native::hardtanh_);
  m.impl("hardtanh.out", at::native::hardtanh_out);
  m.impl("hardtanh_backward", at::native::hardtanh_backward);
  m.impl("hardtanh_backward.grad_input", at::native::hardtanh_backward_out);
  m.impl("glu_backward", at::native::glu_backward_cpu);
  m.impl("glu_backward.grad_input", at::native::glu_backward_cpu_out);
  m.impl("_prelu_kernel", at::native::_prelu_kernel);
  m.impl("_prelu_kernel_backward", at::native::_prelu_kernel_backward);
  m.impl("log_sigmoid_forward", log_sigmoid_forward);
  m.impl("log_sigmoid_forward.output", log_sigmoid_forward_out);
  m.impl("log_sigmoid_backward", log_sigmoid_backward);
  m.impl("log_sigmoid_backward.grad_input", log_sigmoid_backward_out);
  m.impl("mse_loss_backward", at::native::mse_loss_backward);
  m.impl("mse_loss_backward.grad_input", at::native::mse_loss_backward_out);
  m.impl("smooth_l1_loss_backward.grad_input", at::native::smooth_l1_loss_backward_out);
  m.impl("huber_loss", at::native::huber_loss);
  m.impl("huber_loss.out", at::native::huber_loss_out);
  m.impl("huber_loss_backward.out", at::native::huber_loss_backward_out);
}

#undef TORCH_OCL_STRUCTURED
#undef TORCH_OCL_STRUCTURED_NO_INPLACE
#undef TORCH_OCL_UNARY
#undef TORCH_OCL_COMPARISON
#undef TORCH_OCL_BITWISE
#undef TORCH_OCL_SPECIAL

}  // namespace torch_ocl
