// The _foreach_* ops (what torch.optim's foreach implementations, clip_grad_norm_ and GradScaler
// call) with multi-tensor kernels (kernels/foreach.cl, ops/MultiTensor.h): one launch covers many
// tensors. Each op takes the multi-tensor route where ATen's own fast-route conditions hold
// (at::native::can_use_fast_route: one device and dtype, dense, equal sizes and strides, scalars
// that do not change the result dtype) and the tensors are floating and on one ocl device;
// otherwise it runs ATen's own slow implementation (one op per tensor, native where those ops
// are), which also gives the CPU's errors. In-place ops whose tensors share memory in a way that
// running them together could change the result run the slow way too.
#include "ops/Foreach.h"

#include <ATen/native/ForeachUtils.h>
#include <ATen/ops/_foreach_abs_native.h>
#include <ATen/ops/_foreach_acos_native.h>
#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/_foreach_addcdiv_native.h>
#include <ATen/ops/_foreach_addcmul_native.h>
#include <ATen/ops/_foreach_asin_native.h>
#include <ATen/ops/_foreach_atan_native.h>
#include <ATen/ops/_foreach_ceil_native.h>
#include <ATen/ops/_foreach_clamp_max_native.h>
#include <ATen/ops/_foreach_clamp_min_native.h>
#include <ATen/ops/_foreach_copy_native.h>
#include <ATen/ops/_foreach_cos_native.h>
#include <ATen/ops/_foreach_cosh_native.h>
#include <ATen/ops/_foreach_div_native.h>
#include <ATen/ops/_foreach_erf_native.h>
#include <ATen/ops/_foreach_erfc_native.h>
#include <ATen/ops/_foreach_exp_native.h>
#include <ATen/ops/_foreach_expm1_native.h>
#include <ATen/ops/_foreach_floor_native.h>
#include <ATen/ops/_foreach_frac_native.h>
#include <ATen/ops/_foreach_lerp_native.h>
#include <ATen/ops/_foreach_lgamma_native.h>
#include <ATen/ops/_foreach_log10_native.h>
#include <ATen/ops/_foreach_log1p_native.h>
#include <ATen/ops/_foreach_log2_native.h>
#include <ATen/ops/_foreach_log_native.h>
#include <ATen/ops/_foreach_maximum_native.h>
#include <ATen/ops/_foreach_minimum_native.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/_foreach_norm_native.h>
#include <ATen/ops/_foreach_pow_native.h>
#include <ATen/ops/_foreach_reciprocal_native.h>
#include <ATen/ops/_foreach_round_native.h>
#include <ATen/ops/_foreach_rsqrt_native.h>
#include <ATen/ops/_foreach_sigmoid_native.h>
#include <ATen/ops/_foreach_sign_native.h>
#include <ATen/ops/_foreach_sin_native.h>
#include <ATen/ops/_foreach_sinh_native.h>
#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/_foreach_sub_native.h>
#include <ATen/ops/_foreach_tan_native.h>
#include <ATen/ops/_foreach_tanh_native.h>
#include <ATen/ops/_foreach_trunc_native.h>
#include <ATen/ops/_foreach_zero_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "ops/KernelTypes.h"
#include "ops/MultiTensor.h"
#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

using TL = at::TensorList;
using ScalarList = at::ArrayRef<c10::Scalar>;
using Tensors = std::vector<at::Tensor>;

bool is_ocl(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

bool floating_ok(at::ScalarType t, int device) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16 ||
         (t == at::kDouble && device_info(device).fp64);
}

// The dtypes an op's kernel takes: floating only, also integers (not bool), or any (bits).
enum class Types { kFloating, kNumeric, kAny };

bool dtype_ok(at::ScalarType t, int device, Types types) {
  if (types == Types::kAny) return true;
  if (types == Types::kNumeric && at::isIntegralType(t, /*includeBool=*/false)) return true;
  return floating_ok(t, device);
}

// ATen's fast-route conditions plus ours.
bool fast_route(const std::vector<TL>& lists, ScalarList scalars, Types types) {
  if (!at::native::can_use_fast_route(lists, scalars, /*promote_integer_inputs_to_float=*/false))
    return false;
  const at::Tensor& t0 = lists[0][0];
  if (!is_ocl(t0)) return false;
  if (!dtype_ok(t0.scalar_type(), t0.device().index(), types)) return false;
  for (const TL& l : lists)
    for (const at::Tensor& t : l)
      if (!mt_fits(t)) return false;
  return true;
}

bool same_view(const at::Tensor& a, const at::Tensor& b) {
  return a.data_ptr() == b.data_ptr() && a.strides() == b.strides() && a.sizes() == b.sizes();
}

// Runs FE_<op> in the lists' dtype; `bits`: the op moves elements as integers of their size
// (copy, zero).
void launch_apply(const char* op, const std::vector<TL>& ins, TL outs, const ForeachScalar& s,
                  const c10::Scalar& alpha, bool second_scalar, const at::Tensor* found_inf,
                  bool bits) {
  const at::Tensor& t0 = ins[0][0];
  const int device = t0.device().index();
  const MtGeometry& geo = mt_geometry(device);
  const at::ScalarType dt = bits ? bits_dtype(t0.itemsize()) : t0.scalar_type();
  const bool floating = at::isFloatingType(dt);
  std::vector<TL> lists = ins;
  if (!outs.empty()) lists.push_back(outs);

  std::string opts = std::string("-DFE_OP=FE_") + op + " -DT=" + type_tag(dt, device) +
                     " -DNIN=" + std::to_string(ins.size()) +
                     " -DNLIST=" + std::to_string(lists.size()) + geo.options;
  if (outs.empty()) opts += " -DINPLACE";
  if (floating) opts += " -DFE_FLOAT";
  if (dt == at::kDouble) opts += " -DCOMP_IS_DOUBLE";
  if (second_scalar) opts += " -DSECOND_SCALAR";
  if (found_inf) opts += " -DCHECK_FINITE";
  std::vector<std::array<uint32_t, 2>> words;
  switch (s.mode) {
    case ForeachScalar::Mode::kList:
      opts += " -DSCALARLIST";
      words.reserve(s.list.size());
      for (const c10::Scalar& v : s.list) words.push_back(mt_scalar_words(v, dt));
      break;
    case ForeachScalar::Mode::kTensor:
      opts += std::string(" -DS_TENSOR -DS_T=") + type_tag(s.tensor->scalar_type(), device);
      break;
    default:
      break;
  }
  const std::vector<MtBatch> batches =
      mt_plan(device, lists, s.mode == ForeachScalar::Mode::kList ? &words : nullptr);
  if (batches.empty()) return;
  cl_kernel k = get_kernel(device, "foreach.cl", "foreach_apply", opts);
  const c10::Scalar s_arg = s.mode == ForeachScalar::Mode::kValue ? s.value : c10::Scalar(0);
  for (const MtBatch& b : batches) {
    KernelLaunch launch(k);
    mt_push(launch, b);
    launch.arg(static_cast<cl_uint>(geo.chunk()));
    push_operand_scalar(launch, s_arg, dt);
    push_operand_scalar(launch, alpha, dt);
    if (s.mode == ForeachScalar::Mode::kTensor)
      launch.buffer(buffer_of(*s.tensor), s.tensor->itemsize());
    if (found_inf) launch.buffer(buffer_of(*found_inf), found_inf->itemsize());
    launch.enqueue1d(device, static_cast<size_t>(b.chunks) * geo.lws, geo.lws);
  }
}

Tensors empty_like_all(TL self) {
  Tensors out;
  out.reserve(self.size());
  for (const at::Tensor& t : self) out.push_back(at::empty_like(t));
  return out;
}

// Op names (FE_<name> in kernels/foreach.cl): sub here, since Binary checks for it; the rest below.
constexpr char kSub[] = "sub";

// ---------------------------------------------------------------------------------------------
// Op families. Each function checks the arguments as ATen does, then takes the multi-tensor route
// or calls ATen's slow implementation (Slow / Slow_ below: at::native::foreach_tensor_*_slow).

template <const char* Op, Types kTypes = Types::kFloating>
struct Binary {
  // Whether the multi-tensor route may run: otherwise ATen's slow route runs, which also raises
  // the CPU's errors (subtraction with a bool operand).
  static bool fast(const std::vector<TL>& lists, ScalarList s = {}) {
    if constexpr (Op == kSub) {
      for (const c10::Scalar& v : s)
        if (v.isBoolean()) return false;
      for (const TL& l : lists)
        for (const at::Tensor& t : l)
          if (t.scalar_type() == at::kBool) return false;
    }
    return fast_route(lists, s, kTypes);
  }

  template <auto Slow>
  static Tensors scalar(TL self, const c10::Scalar& s) {
    at::native::check_foreach_api_restrictions(self);
    if (!fast({self}, {s})) return Slow(self, s);
    Tensors out = empty_like_all(self);
    foreach_apply(Op, {self}, out, ForeachScalar::of(s), 1, true);
    return out;
  }
  template <auto Slow>
  static void scalar_(TL self, const c10::Scalar& s) {
    at::native::check_foreach_api_restrictions(self);
    if (!fast({self}, {s}) || foreach_has_hazard(self, {})) return Slow(self, s);
    foreach_apply(Op, {self}, {}, ForeachScalar::of(s), 1, true);
  }
  template <auto Slow>
  static Tensors scalar_list(TL self, ScalarList s) {
    at::native::check_foreach_api_restrictions(self, s);
    if (!fast({self}, s)) return Slow(self, s);
    Tensors out = empty_like_all(self);
    foreach_apply(Op, {self}, out, ForeachScalar::of_list(s), 1, true);
    return out;
  }
  template <auto Slow>
  static void scalar_list_(TL self, ScalarList s) {
    at::native::check_foreach_api_restrictions(self, s);
    if (!fast({self}, s) || foreach_has_hazard(self, {})) return Slow(self, s);
    foreach_apply(Op, {self}, {}, ForeachScalar::of_list(s), 1, true);
  }
  template <auto Slow>
  static Tensors list_alpha(TL self, TL other, const c10::Scalar& alpha) {
    at::native::check_foreach_api_restrictions(self, other);
    if (!fast({self, other}, {alpha})) return Slow(self, other, alpha);
    Tensors out = empty_like_all(self);
    foreach_apply(Op, {self, other}, out, {}, alpha);
    return out;
  }
  template <auto Slow>
  static void list_alpha_(TL self, TL other, const c10::Scalar& alpha) {
    at::native::check_foreach_api_restrictions(self, other);
    if (!fast({self, other}, {alpha}) || foreach_has_hazard(self, {other}))
      return Slow(self, other, alpha);
    foreach_apply(Op, {self, other}, {}, {}, alpha);
  }
  template <auto Slow>
  static Tensors list(TL self, TL other) {
    at::native::check_foreach_api_restrictions(self, other);
    if (!fast({self, other})) return Slow(self, other);
    Tensors out = empty_like_all(self);
    foreach_apply(Op, {self, other}, out, {});
    return out;
  }
  template <auto Slow>
  static void list_(TL self, TL other) {
    at::native::check_foreach_api_restrictions(self, other);
    if (!fast({self, other}) || foreach_has_hazard(self, {other})) return Slow(self, other);
    foreach_apply(Op, {self, other}, {}, {});
  }

  // The Tensor overloads: `other` is a 0-dim tensor; on the CPU it is a plain scalar (reading it
  // does not wait for the device), on the lists' device the kernel reads it.
  static bool tensor_ok(TL self, const at::Tensor& other) {
    if (other.dim() != 0 || !fast({self}) || (Op == kSub && other.scalar_type() == at::kBool))
      return false;
    // A 0-dim tensor in the list promotes with a 0-dim `other` (half * float32 is float32).
    for (const at::Tensor& t : self)
      if (at::result_type(t, other) != t.scalar_type()) return false;
    if (other.device().is_cpu()) return true;
    return other.device() == self[0].device() && mt_fits(other);
  }
  static ForeachScalar tensor_scalar(const at::Tensor& other, c10::Scalar& holder) {
    if (other.device().is_cpu()) {
      holder = other.item();
      return ForeachScalar::of(holder);
    }
    return ForeachScalar::of_tensor(other);
  }
  template <auto Slow>
  static Tensors tensor_alpha(TL self, const at::Tensor& other, const c10::Scalar& alpha) {
    at::native::check_foreach_api_restrictions(self);
    if (!tensor_ok(self, other)) return Slow(self, other, alpha);
    Tensors out = empty_like_all(self);
    c10::Scalar holder;
    foreach_apply(Op, {self}, out, tensor_scalar(other, holder), alpha, true);
    return out;
  }
  template <auto Slow>
  static void tensor_alpha_(TL self, const at::Tensor& other, const c10::Scalar& alpha) {
    at::native::check_foreach_api_restrictions(self);
    if (!tensor_ok(self, other) || foreach_has_hazard(self, {})) return Slow(self, other, alpha);
    c10::Scalar holder;
    foreach_apply(Op, {self}, {}, tensor_scalar(other, holder), alpha, true);
  }
  template <auto Slow>
  static Tensors tensor(TL self, const at::Tensor& other) {
    at::native::check_foreach_api_restrictions(self);
    if (!tensor_ok(self, other)) return Slow(self, other);
    Tensors out = empty_like_all(self);
    c10::Scalar holder;
    foreach_apply(Op, {self}, out, tensor_scalar(other, holder), 1, true);
    return out;
  }
  template <auto Slow>
  static void tensor_(TL self, const at::Tensor& other) {
    at::native::check_foreach_api_restrictions(self);
    if (!tensor_ok(self, other) || foreach_has_hazard(self, {})) return Slow(self, other);
    c10::Scalar holder;
    foreach_apply(Op, {self}, {}, tensor_scalar(other, holder), 1, true);
  }
};

// kPromote: floating ops that take integer (and bool) lists too, computing in the default float
// dtype as the CPU does (acos of int64 is float32): the lists are converted, then the op runs in
// place on the copies.
enum class UnaryKind { kFloating, kNumeric, kPromote };

template <const char* Op, UnaryKind kKind = UnaryKind::kPromote>
struct Unary {
  static bool fast(TL self) {
    return fast_route({self}, {},
                      kKind == UnaryKind::kNumeric ? Types::kNumeric : Types::kFloating);
  }
  static bool promotes(TL self) {
    return kKind == UnaryKind::kPromote && fast_route({self}, {}, Types::kAny) &&
           at::isIntegralType(self[0].scalar_type(), /*includeBool=*/true);
  }
  template <auto Slow>
  static Tensors fn(TL self) {
    at::native::check_foreach_api_restrictions(self);
    if (promotes(self)) {
      const at::ScalarType f = c10::typeMetaToScalarType(c10::get_default_dtype());
      if (floating_ok(f, self[0].device().index())) {
        Tensors out;
        out.reserve(self.size());
        for (const at::Tensor& t : self) out.push_back(t.to(f));
        foreach_apply(Op, {out}, {}, {});
        return out;
      }
    }
    if (!fast({self})) return Slow(self);
    Tensors out = empty_like_all(self);
    foreach_apply(Op, {self}, out, {});
    return out;
  }
  template <auto Slow>
  static void fn_(TL self) {
    at::native::check_foreach_api_restrictions(self);
    if (!fast({self}) || foreach_has_hazard(self, {})) return Slow(self);
    foreach_apply(Op, {self}, {}, {});
  }
};

// addcmul, addcdiv: self + value * f(tensor1, tensor2).
template <const char* Op>
struct Pointwise {
  template <auto Slow>
  static Tensors scalar(TL self, TL t1, TL t2, const c10::Scalar& v) {
    at::native::check_foreach_api_restrictions(self, t1, t2);
    if (!foreach_fast_route({self, t1, t2}, {v})) return Slow(self, t1, t2, v);
    Tensors out = empty_like_all(self);
    foreach_apply(Op, {self, t1, t2}, out, ForeachScalar::of(v));
    return out;
  }
  template <auto Slow>
  static void scalar_(TL self, TL t1, TL t2, const c10::Scalar& v) {
    at::native::check_foreach_api_restrictions(self, t1, t2);
    if (!foreach_fast_route({self, t1, t2}, {v}) || foreach_has_hazard(self, {t1, t2}))
      return Slow(self, t1, t2, v);
    foreach_apply(Op, {self, t1, t2}, {}, ForeachScalar::of(v));
  }
  template <auto Slow>
  static Tensors scalar_list(TL self, TL t1, TL t2, ScalarList v) {
    at::native::check_foreach_api_restrictions(self, t1, t2, v);
    if (!foreach_fast_route({self, t1, t2}, v)) return Slow(self, t1, t2, v);
    Tensors out = empty_like_all(self);
    foreach_apply(Op, {self, t1, t2}, out, ForeachScalar::of_list(v));
    return out;
  }
  template <auto Slow>
  static void scalar_list_(TL self, TL t1, TL t2, ScalarList v) {
    at::native::check_foreach_api_restrictions(self, t1, t2, v);
    if (!foreach_fast_route({self, t1, t2}, v) || foreach_has_hazard(self, {t1, t2}))
      return Slow(self, t1, t2, v);
    foreach_apply(Op, {self, t1, t2}, {}, ForeachScalar::of_list(v));
  }
  // The Tensor overloads: a 1-D CPU tensor of one value per tensor (read on the host).
  template <auto Slow>
  static Tensors tensor(TL self, TL t1, TL t2, const at::Tensor& scalars) {
    at::native::check_foreach_api_restrictions(self, t1, t2);
    const std::vector<c10::Scalar> v =
        at::native::convert_tensor_to_scalar_list(scalars, static_cast<int64_t>(self.size()));
    if (!foreach_fast_route({self, t1, t2}, v)) return Slow(self, t1, t2, scalars);
    Tensors out = empty_like_all(self);
    foreach_apply(Op, {self, t1, t2}, out, ForeachScalar::of_list(v));
    return out;
  }
  template <auto Slow>
  static void tensor_(TL self, TL t1, TL t2, const at::Tensor& scalars) {
    at::native::check_foreach_api_restrictions(self, t1, t2);
    const std::vector<c10::Scalar> v =
        at::native::convert_tensor_to_scalar_list(scalars, static_cast<int64_t>(self.size()));
    if (!foreach_fast_route({self, t1, t2}, v) || foreach_has_hazard(self, {t1, t2}))
      return Slow(self, t1, t2, scalars);
    foreach_apply(Op, {self, t1, t2}, {}, ForeachScalar::of_list(v));
  }
};

constexpr char kLerp[] = "lerp";

struct Lerp {
  static Tensors list(TL self, TL end, TL weights) {
    at::native::check_foreach_api_restrictions(self, end, weights);
    if (!foreach_fast_route({self, end, weights}))
      return at::native::foreach_tensor_ternary_lerp_slow(self, end, weights);
    Tensors out = empty_like_all(self);
    foreach_apply(kLerp, {self, end, weights}, out, {});
    return out;
  }
  static void list_(TL self, TL end, TL weights) {
    at::native::check_foreach_api_restrictions(self, end, weights);
    if (!foreach_fast_route({self, end, weights}) || foreach_has_hazard(self, {end, weights}))
      return at::native::foreach_tensor_ternary_lerp_slow_(self, end, weights);
    foreach_apply(kLerp, {self, end, weights}, {}, {});
  }
  static Tensors scalar(TL self, TL end, const c10::Scalar& w) {
    at::native::check_foreach_api_restrictions(self, end);
    if (!foreach_fast_route({self, end}, {w}))
      return at::native::foreach_tensor_lerp_list_kernel_slow(self, end, w);
    Tensors out = empty_like_all(self);
    foreach_apply(kLerp, {self, end}, out, ForeachScalar::of(w), 1, true);
    return out;
  }
  static void scalar_(TL self, TL end, const c10::Scalar& w) {
    at::native::check_foreach_api_restrictions(self, end);
    if (!foreach_fast_route({self, end}, {w}) || foreach_has_hazard(self, {end}))
      return at::native::foreach_tensor_lerp_list_kernel_slow_(self, end, w);
    foreach_apply(kLerp, {self, end}, {}, ForeachScalar::of(w), 1, true);
  }
  static Tensors scalar_list(TL self, TL end, ScalarList w) {
    at::native::check_foreach_api_restrictions(self, end, w);
    if (!foreach_fast_route({self, end}, w))
      return at::native::foreach_tensor_lerp_scalarlist_kernel_slow(self, end, w);
    Tensors out = empty_like_all(self);
    foreach_apply(kLerp, {self, end}, out, ForeachScalar::of_list(w), 1, true);
    return out;
  }
  static void scalar_list_(TL self, TL end, ScalarList w) {
    at::native::check_foreach_api_restrictions(self, end, w);
    if (!foreach_fast_route({self, end}, w) || foreach_has_hazard(self, {end}))
      return at::native::foreach_tensor_lerp_scalarlist_kernel_slow_(self, end, w);
    foreach_apply(kLerp, {self, end}, {}, ForeachScalar::of_list(w), 1, true);
  }
};

constexpr char kRpow[] = "rpow";

// pow(Scalar self, Tensor[] exponent): self ** exponent[i].
Tensors scalar_pow(const c10::Scalar& self, TL exponent) {
  at::native::check_foreach_api_restrictions(exponent);
  if (!foreach_fast_route({exponent}, {self}))
    return at::native::foreach_scalar_pow_list_kernel_slow(self, exponent);
  Tensors out = empty_like_all(exponent);
  foreach_apply(kRpow, {exponent}, out, ForeachScalar::of(self));
  return out;
}

void copy_(TL self, TL src, bool non_blocking) {
  at::native::check_foreach_api_restrictions(self, src);
  if (!fast_route({self, src}, {}, Types::kAny) || foreach_has_hazard(self, {src}))
    return at::native::foreach_tensor_copy_list_kernel_slow_(self, src, non_blocking);
  launch_apply("copy", {self, src}, {}, {}, 1, false, nullptr, true);
}

void zero_(TL self) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast_route({self}, {}, Types::kAny) || foreach_has_hazard(self, {}))
    return at::native::foreach_tensor_zero_slow_(self);
  launch_apply("zero", {self}, {}, {}, 1, false, nullptr, true);
}

// ---------------------------------------------------------------------------------------------
// _foreach_norm: every tensor's vector norm, as linalg_vector_norm computes it (accumulated in
// float, double for double), in two launches per batch: chunk partials, then one group per tensor.

Tensors norm(TL self, const c10::Scalar& ord, std::optional<at::ScalarType> dtype) {
  at::native::check_foreach_api_restrictions(self);
  const at::ScalarType in = self[0].scalar_type();
  const at::ScalarType od = dtype.value_or(in);
  const double p = ord.toDouble();
  bool fast = foreach_fast_route({self}) && at::isFloatingType(od) &&
              (od == in || c10::promoteTypes(in, od) == od) &&
              floating_ok(od, self[0].device().index());
  if (fast && std::isinf(p)) {
    // ATen raises for the infinity norms of an empty tensor (no identity): let it.
    for (const at::Tensor& t : self) fast = fast && t.numel() > 0;
  }
  if (!fast) return at::native::foreach_tensor_norm_slow(self, ord, dtype);

  const int device = self[0].device().index();
  const MtGeometry& geo = mt_geometry(device);
  const at::ScalarType acc = (in == at::kDouble || od == at::kDouble) ? at::kDouble : at::kFloat;
  const char* kind = p == 2          ? "-DNORM_L2"
                     : p == 1        ? "-DNORM_L1"
                     : p == 0        ? "-DNORM_L0"
                     : std::isinf(p) ? (p > 0 ? "-DNORM_INF" : "-DNORM_NEGINF")
                                     : "-DNORM_P";
  const std::string opts = std::string("-DNORM_KERNELS ") + kind + " -DT=" + type_tag(in, device) +
                           " -DOUT_T=" + type_tag(od, device) +
                           " -DACC_T=" + type_tag(acc, device) + " -DNLIST=1" + geo.options;
  const int64_t n = static_cast<int64_t>(self.size());
  at::Tensor result = at::empty({n}, self[0].options().dtype(od));
  const BufferRef rb = buffer_of(result);
  cl_kernel partial = get_kernel(device, "foreach.cl", "foreach_norm_partial", opts);
  cl_kernel finish = get_kernel(device, "foreach.cl", "foreach_norm_finish", opts);
  const auto push_p = [&](KernelLaunch& l) {
    if (acc == at::kDouble) {
      l.arg(static_cast<cl_double>(p));
    } else {
      l.arg(static_cast<cl_float>(p));
    }
  };
  for (const MtBatch& b : mt_plan(device, {self}, nullptr, /*keep_empty=*/true)) {
    at::Tensor part = at::empty({std::max<int64_t>(b.chunks, 1)}, result.options().dtype(acc));
    const BufferRef pb = buffer_of(part);
    if (b.chunks > 0) {
      KernelLaunch l(partial);
      mt_push(l, b);
      l.arg(static_cast<cl_uint>(geo.chunk()));
      push_p(l);
      l.buffer(pb, part.itemsize());
      l.enqueue1d(device, static_cast<size_t>(b.chunks) * geo.lws, geo.lws);
    }
    KernelLaunch l(finish);
    l.raw(b.table.size() * sizeof(uint32_t), b.table.data());
    push_p(l);
    l.buffer(pb, part.itemsize());
    l.buffer(BufferRef{rb.mem, rb.offset + b.first * result.itemsize(), rb.device},
             result.itemsize());
    l.enqueue1d(device, static_cast<size_t>(b.rows) * geo.lws, geo.lws);
  }
  Tensors out;
  out.reserve(self.size());
  for (int64_t i = 0; i < n; ++i) out.push_back(result.select(0, i));
  return out;
}

// Op names (FE_<name> in kernels/foreach.cl; kSub is above Binary).
constexpr char kAdd[] = "add";
constexpr char kMul[] = "mul";
constexpr char kDiv[] = "div";
constexpr char kMax[] = "max";
constexpr char kMin[] = "min";
constexpr char kPow[] = "pow";
constexpr char kAddcmul[] = "addcmul";
constexpr char kAddcdiv[] = "addcdiv";
#define FE_NAME(op) constexpr char k_##op[] = #op;
FE_NAME(abs)
FE_NAME(acos)
FE_NAME(asin)
FE_NAME(atan)
FE_NAME(ceil)
FE_NAME(cos)
FE_NAME(cosh)
FE_NAME(erf)
FE_NAME(erfc)
FE_NAME(exp)
FE_NAME(expm1)
FE_NAME(floor)
FE_NAME(frac)
FE_NAME(lgamma)
FE_NAME(log)
FE_NAME(log10)
FE_NAME(log1p)
FE_NAME(log2)
FE_NAME(neg)
FE_NAME(reciprocal)
FE_NAME(round)
FE_NAME(rsqrt)
FE_NAME(sigmoid)
FE_NAME(sign)
FE_NAME(sin)
FE_NAME(sinh)
FE_NAME(sqrt)
FE_NAME(tan)
FE_NAME(tanh)
FE_NAME(trunc)
#undef FE_NAME

}  // namespace

bool foreach_fast_route(const std::vector<at::TensorList>& lists,
                        at::ArrayRef<c10::Scalar> scalars) {
  return fast_route(lists, scalars, Types::kFloating);
}

bool foreach_has_hazard(at::TensorList outs, const std::vector<at::TensorList>& ins) {
  // Byte ranges of the (dense) tensors; a written range may overlap nothing but itself read at
  // the same positions.
  struct Range {
    uintptr_t lo, hi;
    bool written;
  };
  std::vector<Range> ranges;
  ranges.reserve(outs.size() * (1 + ins.size()));
  const auto range_of = [](const at::Tensor& t, bool written) {
    const auto lo = reinterpret_cast<uintptr_t>(t.data_ptr());
    return Range{lo, lo + static_cast<uintptr_t>(t.numel()) * t.itemsize(), written};
  };
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].numel() == 0) continue;
    ranges.push_back(range_of(outs[i], true));
    for (const at::TensorList& l : ins)
      if (!same_view(l[i], outs[i]) && l[i].numel() > 0) ranges.push_back(range_of(l[i], false));
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.lo < b.lo; });
  uintptr_t end_any = 0, end_written = 0;
  for (const Range& r : ranges) {
    if (r.lo < end_written || (r.written && r.lo < end_any)) return true;
    end_any = std::max(end_any, r.hi);
    if (r.written) end_written = std::max(end_written, r.hi);
  }
  return false;
}

void foreach_apply(const char* op, const std::vector<at::TensorList>& ins, at::TensorList outs,
                   const ForeachScalar& s, const c10::Scalar& alpha, bool second_scalar,
                   const at::Tensor* found_inf) {
  launch_apply(op, ins, outs, s, alpha, second_scalar, found_inf, false);
}

namespace {

using namespace at::native;

// Binary ops with Scalar, ScalarList and List overloads (functional and in place), named
// _foreach_<name>; `slow` names ATen's slow kernels (foreach_tensor_<slow>_*_kernel_slow).
#define REGISTER_BINARY_COMMON(name, slow, B)                                                     \
  m.impl("_foreach_" #name ".Scalar", B::scalar<&foreach_tensor_##slow##_scalar_kernel_slow>);    \
  m.impl("_foreach_" #name "_.Scalar", B::scalar_<&foreach_tensor_##slow##_scalar_kernel_slow_>); \
  m.impl("_foreach_" #name ".ScalarList",                                                         \
         B::scalar_list<&foreach_tensor_##slow##_scalarlist_kernel_slow>);                        \
  m.impl("_foreach_" #name "_.ScalarList",                                                        \
         B::scalar_list_<&foreach_tensor_##slow##_scalarlist_kernel_slow_>);
#define REGISTER_BINARY_LIST(name, slow, B)                                              \
  m.impl("_foreach_" #name ".List", B::list<&foreach_tensor_##slow##_list_kernel_slow>); \
  m.impl("_foreach_" #name "_.List", B::list_<&foreach_tensor_##slow##_list_kernel_slow_>);
#define REGISTER_BINARY_LIST_ALPHA(name, B)                                                    \
  m.impl("_foreach_" #name ".List", B::list_alpha<&foreach_tensor_##name##_list_kernel_slow>); \
  m.impl("_foreach_" #name "_.List", B::list_alpha_<&foreach_tensor_##name##_list_kernel_slow_>);
#define REGISTER_BINARY_TENSOR(name, B)                                                        \
  m.impl("_foreach_" #name ".Tensor", B::tensor<&foreach_tensor_##name##_tensor_kernel_slow>); \
  m.impl("_foreach_" #name "_.Tensor", B::tensor_<&foreach_tensor_##name##_tensor_kernel_slow_>);
#define REGISTER_UNARY(name, kind)                                                                \
  m.impl("_foreach_" #name, Unary<k_##name, UnaryKind::kind>::fn<&foreach_tensor_##name##_slow>); \
  m.impl("_foreach_" #name "_",                                                                   \
         Unary<k_##name, UnaryKind::kind>::fn_<&foreach_tensor_##name##_slow_>);
#define REGISTER_POINTWISE(name, op)                                              \
  m.impl("_foreach_" #name ".Scalar",                                             \
         Pointwise<op>::scalar<&foreach_tensor_##name##_scalar_slow>);            \
  m.impl("_foreach_" #name "_.Scalar",                                            \
         Pointwise<op>::scalar_<&foreach_tensor_##name##_scalar_slow_>);          \
  m.impl("_foreach_" #name ".ScalarList",                                         \
         Pointwise<op>::scalar_list<&foreach_tensor_##name##_scalarlist_slow>);   \
  m.impl("_foreach_" #name "_.ScalarList",                                        \
         Pointwise<op>::scalar_list_<&foreach_tensor_##name##_scalarlist_slow_>); \
  m.impl("_foreach_" #name ".Tensor",                                             \
         Pointwise<op>::tensor<&foreach_tensor_##name##_tensor_slow>);            \
  m.impl("_foreach_" #name "_.Tensor",                                            \
         Pointwise<op>::tensor_<&foreach_tensor_##name##_tensor_slow_>);

// The binary ops: integer lists too for add, sub, mul and the max/min family.
using AddOp = Binary<kAdd, Types::kNumeric>;
using SubOp = Binary<kSub, Types::kNumeric>;
using MulOp = Binary<kMul, Types::kNumeric>;
using DivOp = Binary<kDiv>;
using MaxOp = Binary<kMax, Types::kNumeric>;
using MinOp = Binary<kMin, Types::kNumeric>;
using PowOp = Binary<kPow>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  REGISTER_BINARY_COMMON(add, add, AddOp)
  REGISTER_BINARY_LIST_ALPHA(add, AddOp)
  m.impl("_foreach_add.Tensor", AddOp::tensor_alpha<&foreach_tensor_add_tensor_kernel_slow>);
  m.impl("_foreach_add_.Tensor", AddOp::tensor_alpha_<&foreach_tensor_add_tensor_kernel_slow_>);
  REGISTER_BINARY_COMMON(sub, sub, SubOp)
  REGISTER_BINARY_LIST_ALPHA(sub, SubOp)
  REGISTER_BINARY_COMMON(mul, mul, MulOp)
  REGISTER_BINARY_LIST(mul, mul, MulOp)
  REGISTER_BINARY_TENSOR(mul, MulOp)
  REGISTER_BINARY_COMMON(div, div, DivOp)
  REGISTER_BINARY_LIST(div, div, DivOp)
  REGISTER_BINARY_TENSOR(div, DivOp)
  REGISTER_BINARY_COMMON(clamp_min, clamp_min, MaxOp)
  REGISTER_BINARY_LIST(clamp_min, clamp_min, MaxOp)
  REGISTER_BINARY_COMMON(clamp_max, clamp_max, MinOp)
  REGISTER_BINARY_LIST(clamp_max, clamp_max, MinOp)
  // torch implements maximum/minimum with the clamp_min/clamp_max slow kernels
  REGISTER_BINARY_COMMON(maximum, clamp_min, MaxOp)
  REGISTER_BINARY_LIST(maximum, clamp_min, MaxOp)
  REGISTER_BINARY_COMMON(minimum, clamp_max, MinOp)
  REGISTER_BINARY_LIST(minimum, clamp_max, MinOp)
  REGISTER_BINARY_LIST(pow, pow, PowOp)
  m.impl("_foreach_pow.Scalar", PowOp::scalar<&foreach_tensor_pow_scalar_kernel_slow>);
  m.impl("_foreach_pow_.Scalar", PowOp::scalar_<&foreach_tensor_pow_scalar_kernel_slow_>);
  m.impl("_foreach_pow.ScalarList", PowOp::scalar_list<&foreach_tensor_pow_scalarlist_kernel_slow>);
  m.impl("_foreach_pow_.ScalarList",
         PowOp::scalar_list_<&foreach_tensor_pow_scalarlist_kernel_slow_>);
  m.impl("_foreach_pow.ScalarAndTensor", scalar_pow);

  REGISTER_POINTWISE(addcmul, kAddcmul)
  REGISTER_POINTWISE(addcdiv, kAddcdiv)
  m.impl("_foreach_lerp.List", Lerp::list);
  m.impl("_foreach_lerp_.List", Lerp::list_);
  m.impl("_foreach_lerp.Scalar", Lerp::scalar);
  m.impl("_foreach_lerp_.Scalar", Lerp::scalar_);
  m.impl("_foreach_lerp.ScalarList", Lerp::scalar_list);
  m.impl("_foreach_lerp_.ScalarList", Lerp::scalar_list_);

  REGISTER_UNARY(abs, kNumeric)
  REGISTER_UNARY(acos, kPromote)
  REGISTER_UNARY(asin, kPromote)
  REGISTER_UNARY(atan, kPromote)
  REGISTER_UNARY(ceil, kFloating)
  REGISTER_UNARY(cos, kPromote)
  REGISTER_UNARY(cosh, kPromote)
  REGISTER_UNARY(erf, kPromote)
  REGISTER_UNARY(erfc, kPromote)
  REGISTER_UNARY(exp, kPromote)
  REGISTER_UNARY(expm1, kPromote)
  REGISTER_UNARY(floor, kFloating)
  REGISTER_UNARY(frac, kFloating)
  REGISTER_UNARY(lgamma, kPromote)
  REGISTER_UNARY(log, kPromote)
  REGISTER_UNARY(log10, kPromote)
  REGISTER_UNARY(log1p, kPromote)
  REGISTER_UNARY(log2, kPromote)
  REGISTER_UNARY(neg, kNumeric)
  REGISTER_UNARY(reciprocal, kPromote)
  REGISTER_UNARY(round, kFloating)
  REGISTER_UNARY(rsqrt, kPromote)
  REGISTER_UNARY(sigmoid, kPromote)
  REGISTER_UNARY(sign, kNumeric)
  REGISTER_UNARY(sin, kPromote)
  REGISTER_UNARY(sinh, kPromote)
  REGISTER_UNARY(sqrt, kPromote)
  REGISTER_UNARY(tan, kPromote)
  REGISTER_UNARY(tanh, kPromote)
  REGISTER_UNARY(trunc, kFloating)

  m.impl("_foreach_copy_", copy_);
  m.impl("_foreach_zero_", zero_);
  m.impl("_foreach_norm.Scalar", norm);
}

}  // namespace torch_ocl
