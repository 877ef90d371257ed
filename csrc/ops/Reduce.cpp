// Reductions: sum, mean, prod, amax/amin, full max/min and linalg_vector_norm, over all or given
// dims, keepdim, dtype= and out=, with kernels/reduce.cl; argmax/argmin and max/min along a dim
// with kernels/argreduce.cl. Ops that ATen declares structured are registered through Structured.h
// (meta checks, out= checks and resizing, outputs overlapping an input). Every reduction becomes a
// 2-D problem out[m] = R_k in[m*sm + k*sk] after permuting the reduced dims last.
#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/sum_meta.h>
#include <torch/library.h>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <sstream>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

enum class Op { kSum, kProd, kMax, kMin };

const char* op_option(Op op) {
  switch (op) {
    case Op::kSum:
      return "-DOP_SUM";
    case Op::kProd:
      return "-DOP_PROD";
    case Op::kMax:
      return "-DOP_MAX";
    case Op::kMin:
      return "-DOP_MIN";
  }
  return "";
}

at::ScalarType acc_type(at::ScalarType t) {
  if (t == at::kDouble) return at::kDouble;
  if (is_floating_tag(t)) return at::kFloat;
  return at::kLong;
}

// Collapses dims [begin, end) of (sizes, strides) into one (size, stride) if they describe a
// single arithmetic progression; returns false otherwise.
bool collapse(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, size_t begin,
              size_t end, int64_t* size, int64_t* stride) {
  int64_t n = 1, st = 1;
  bool have = false;
  for (size_t i = end; i-- > begin;) {  // innermost first
    if (sizes[i] == 1) continue;
    if (!have) {
      st = strides[i];
      have = true;
    } else if (strides[i] != st * n) {
      return false;
    }
    n *= sizes[i];
  }
  *size = n;
  *stride = have ? st : 1;
  return true;
}

struct Problem {
  at::Tensor input;  // possibly a contiguous permuted copy
  int64_t M, K, sm, sk;
};

Problem make_problem(const at::Tensor& self, std::bitset<64> reduced) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!reduced[d]) perm.push_back(d);
  const size_t nkept = perm.size();
  for (int64_t d = 0; d < self.dim(); ++d)
    if (reduced[d]) perm.push_back(d);
  at::Tensor x = self.dim() == 0 ? self : self.permute(perm);
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  std::vector<int64_t> strides(x.strides().begin(), x.strides().end());
  Problem p;
  p.input = x;
  if (!collapse(sizes, strides, 0, nkept, &p.M, &p.sm) ||
      !collapse(sizes, strides, nkept, sizes.size(), &p.K, &p.sk)) {
    p.input = x.contiguous();
    p.M = 1;
    for (size_t i = 0; i < nkept; ++i) p.M *= sizes[i];
    p.K = x.numel() / std::max<int64_t>(p.M, 1);
    p.sm = p.K;
    p.sk = 1;
  }
  if (x.numel() == 0) {
    p.M = 1;
    for (size_t i = 0; i < nkept; ++i) p.M *= sizes[i];
    p.K = 0;
    p.sm = p.sk = 1;
  }
  return p;
}

void launch_reduce(const char* kernel, int device, const std::string& opts, size_t global,
                   size_t lws, uint64_t M, uint64_t K, const BufferRef& in, size_t in_item,
                   int64_t sm, int64_t sk, const BufferRef& out, size_t out_item,
                   int64_t out_stride, const c10::Scalar& scale, at::ScalarType acc) {
  cl_kernel k = get_kernel(device, "reduce.cl", kernel, opts);
  KernelLaunch launch(k);
  launch.arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(K));
  launch.buffer(in, in_item).arg(static_cast<cl_long>(sm)).arg(static_cast<cl_long>(sk));
  launch.buffer(out, out_item).arg(static_cast<cl_long>(out_stride));
  push_compute_scalar(launch, scale, acc);
  launch.enqueue1d(device, global, lws);
}

// Build options of a vector norm's passes: `map` for the pass that reads the input, `finish`
// for the pass that writes the result (kernels/reduce.cl).
struct NormOptions {
  std::string map, finish;
};

// Reduces `self` over `reduced` dims into `out` (contiguous, in kept-dim order).
void run_reduce(const at::Tensor& self, std::bitset<64> reduced, const at::Tensor& out, Op op,
                bool mean, const NormOptions& norm = {}) {
  Problem p = make_problem(self, reduced);
  if (p.M == 0) return;
  TORCH_CHECK(p.K > 0 || op == Op::kSum || op == Op::kProd,
              "torch-ocl: max()/min() of an empty reduction is undefined: reduce over a non-empty "
              "dimension");
  const int device = self.device().index();
  const at::ScalarType in_t = p.input.scalar_type(), out_t = out.scalar_type();
  const at::ScalarType acc = acc_type(op == Op::kSum || op == Op::kProd ? out_t : in_t);
  const c10::Scalar scale = mean ? c10::Scalar(1.0 / static_cast<double>(p.K)) : c10::Scalar(1);
  const BufferRef in = buffer_of(p.input), dst = buffer_of(out);
  const size_t in_item = p.input.itemsize(), out_item = out.itemsize();
  auto options = [&](at::ScalarType in_type, size_t lws) {
    std::string o = std::string(op_option(op)) + " -DIN_T=" + type_tag(in_type, device) +
                    " -DOUT_T=" + type_tag(out_t, device) + " -DACC_T=" + type_tag(acc, device) +
                    " -DLWS=" + std::to_string(lws);
    return o;
  };
  const uint64_t M = p.M, K = p.K;
  if (M < 64 && K >= 16384) {
    // Few long rows: split each row into G chunks, then reduce the partials.
    const uint64_t G = std::min<uint64_t>((K + 8191) / 8192, std::max<uint64_t>(1, 256 / M));
    const uint64_t chunk = (K + G - 1) / G;
    at::Tensor part = at::empty({static_cast<int64_t>(M * G)}, self.options().dtype(acc));
    const BufferRef pb = buffer_of(part);
    {
      cl_kernel k =
          get_kernel(device, "reduce.cl", "reduce_partial", options(in_t, 256) + norm.map);
      KernelLaunch launch(k);
      launch.arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(K));
      launch.buffer(in, in_item).arg(static_cast<cl_long>(p.sm)).arg(static_cast<cl_long>(p.sk));
      launch.buffer(pb, part.itemsize())
          .arg(static_cast<cl_ulong>(G))
          .arg(static_cast<cl_ulong>(chunk));
      launch.enqueue1d(device, M * G * 256, 256);
    }
    launch_reduce("reduce_rows", device, options(acc, 64) + norm.finish, M * 64, 64, M, G, pb,
                  part.itemsize(), static_cast<int64_t>(G), 1, dst, out_item, 1, scale, acc);
  } else if (p.sk == 1 || M < 256 || K > 4096) {
    const size_t lws = K >= 1024 ? 256 : 64;
    launch_reduce("reduce_rows", device, options(in_t, lws) + norm.map + norm.finish, M * lws, lws,
                  M, K, in, in_item, p.sm, p.sk, dst, out_item, 1, scale, acc);
  } else {
    launch_reduce("reduce_cols", device, options(in_t, 64) + norm.map + norm.finish, M, 64, M, K,
                  in, in_item, p.sm, p.sk, dst, out_item, 1, scale, acc);
  }
}

std::bitset<64> dims_mask(const at::Tensor& self, at::OptionalIntArrayRef dims) {
  if (!dims || dims->empty()) {
    std::bitset<64> all;
    for (int64_t d = 0; d < self.dim(); ++d) all.set(d);
    return all;
  }
  return at::dim_list_to_bitset(*dims, self.dim());
}

// ---- structured reductions (Structured.h): ATen's meta functions check the arguments and
// declare the output (shape, and dtype from dtype= or out=); the kernels below get a contiguous
// output in kept-dim order that overlaps no input. ----

void sum_kernel(const Outputs<1>& out, const at::Tensor& self, at::OptionalIntArrayRef dims,
                bool keepdim, std::optional<at::ScalarType> dtype) {
  // The CPU converts the elements to the result dtype first: into a bool result every non-zero
  // element counts (0.5 too), which converting to the integer accumulator would truncate away.
  const bool to_bool = out[0].scalar_type() == at::kBool && self.scalar_type() != at::kBool;
  run_reduce(to_bool ? self.ne(0) : self, dims_mask(self, dims), out[0], Op::kSum, false);
}
using SumDim = Structured<at::meta::structured_sum_dim_IntList, sum_kernel>;

void mean_kernel(const Outputs<1>& out, const at::Tensor& self, at::OptionalIntArrayRef dims,
                 bool keepdim, std::optional<at::ScalarType> dtype) {
  // The meta function lets an integer out= through; the CPU then fails dividing the sum in it.
  const at::ScalarType t = out[0].scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t),
              "result type Float can't be cast to the desired output type ", t);
  run_reduce(self, dims_mask(self, dims), out[0], Op::kSum, true);
}
using MeanDim = Structured<at::meta::structured_mean_dim, mean_kernel>;

template <Op kOp>
void extreme_kernel(const Outputs<1>& out, const at::Tensor& self, at::IntArrayRef dims,
                    bool keepdim) {
  run_reduce(self, dims_mask(self, dims), out[0], kOp, false);
}
using Amax = Structured<at::meta::structured_amax, extreme_kernel<Op::kMax>>;
using Amin = Structured<at::meta::structured_amin, extreme_kernel<Op::kMin>>;

// all/any: min/max of the elements as bool (non-zero); the output is bool, or uint8 for uint8
// input (the meta function's choice, as on the CPU).
void logical_reduce(const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef dims,
                    Op op) {
  if (self.numel() == 0) {
    out.fill_(op == Op::kMin);  // all() of nothing is true, any() of nothing is false
    return;
  }
  const at::Tensor b = self.scalar_type() == at::kBool ? self : self.ne(0);
  run_reduce(b, dims_mask(self, dims), out, op, false);
}
template <Op kOp>
void logical_all_kernel(const Outputs<1>& out, const at::Tensor& self) {
  logical_reduce(out[0], self, {}, kOp);
}
template <Op kOp>
void logical_dim_kernel(const Outputs<1>& out, const at::Tensor& self, int64_t dim, bool keepdim) {
  logical_reduce(out[0], self, at::IntArrayRef(dim), kOp);
}
template <Op kOp>
void logical_dims_kernel(const Outputs<1>& out, const at::Tensor& self,
                         at::OptionalIntArrayRef dims, bool keepdim) {
  logical_reduce(out[0], self, dims, kOp);
}
using AllAll = Structured<at::meta::structured_all, logical_all_kernel<Op::kMin>>;
using AnyAll = Structured<at::meta::structured_any, logical_all_kernel<Op::kMax>>;
using AllDim = Structured<at::meta::structured_all_dim, logical_dim_kernel<Op::kMin>>;
using AnyDim = Structured<at::meta::structured_any_dim, logical_dim_kernel<Op::kMax>>;
using AllDims = Structured<at::meta::structured_all_dims, logical_dims_kernel<Op::kMin>>;
using AnyDims = Structured<at::meta::structured_any_dims, logical_dims_kernel<Op::kMax>>;

// linalg_vector_norm: the sum of |x|^p (x*x for 2, |x| for 1, x != 0 for 0) or the max/min of
// |x| (+-inf), accumulated in float (double for double) and rooted in the last pass; dtype= casts
// the input first, as the CPU does. A reduction over size-1 dims only is |x| (x != 0 for ord 0),
// the CPU's shortcut (so x*x cannot overflow there).
std::string p_literal(double p) {
  std::ostringstream o;
  o.precision(17);
  o << p;
  return o.str();
}

void vector_norm_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Scalar& ord,
                        at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  const double p = ord.toDouble();
  const at::Tensor x = dtype && *dtype != self.scalar_type() ? self.to(*dtype) : self;
  const std::bitset<64> reduced = dims_mask(self, dim);
  bool unit = true;
  for (int64_t d = 0; d < self.dim(); ++d) unit = unit && (!reduced[d] || self.size(d) == 1);
  if (unit) {
    const at::Tensor v = x.reshape(out[0].sizes());
    if (p == 0) {
      out[0].copy_(v.ne(0));
    } else {
      at::abs_out(const_cast<at::Tensor&>(out[0]), v);
    }
    return;
  }
  NormOptions o;
  Op op = Op::kSum;
  if (std::isinf(p)) {
    op = p > 0 ? Op::kMax : Op::kMin;
    o.map = " -DMAP_ABS";
  } else if (p == 0) {
    o.map = " -DMAP_NONZERO";
  } else if (p == 1) {
    o.map = " -DMAP_ABS";
  } else if (p == 2) {
    o.map = " -DMAP_SQUARE";
    o.finish = " -DFINISH_SQRT";
  } else {
    o.map = " -DMAP_POW -DRED_P=" + p_literal(p);
    o.finish = " -DFINISH_ROOT -DRED_P=" + p_literal(p);
  }
  run_reduce(x, reduced, out[0], op, false, o);
}
using VectorNorm = Structured<at::meta::structured_linalg_vector_norm, vector_norm_kernel>;

// ---- functional-only reductions (no out= registered) ----

at::ScalarType sum_dtype(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  if (dtype) return *dtype;
  return at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong
                                                                      : self.scalar_type();
}

at::Tensor sum_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return SumDim::functional(self, std::nullopt, false, dtype);
}

at::Tensor prod_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  at::Tensor out = at::empty({}, self.options().dtype(sum_dtype(self, dtype)));
  run_reduce(self, dims_mask(self, {}), out, Op::kProd, false);
  return out;
}

at::Tensor extreme_all(const at::Tensor& self, Op op) {
  TORCH_CHECK(self.numel() > 0, op == Op::kMax ? "max" : "min",
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  at::Tensor out = at::empty({}, self.options());
  run_reduce(self, dims_mask(self, {}), out, op, false);
  return out;
}
at::Tensor max_all(const at::Tensor& self) { return extreme_all(self, Op::kMax); }
at::Tensor min_all(const at::Tensor& self) { return extreme_all(self, Op::kMin); }

// argmax/argmin and max/min along a dim: kernels/argreduce.cl over the same 2-D problem.
void run_arg_reduce(const at::Tensor& self, int64_t dim, bool is_max, const at::Tensor& indices,
                    const at::Tensor& values) {
  std::bitset<64> mask;
  if (self.dim() > 0) mask.set(dim);
  Problem p = make_problem(self, mask);
  if (p.M == 0) return;
  TORCH_CHECK(p.K > 0, is_max ? "argmax" : "argmin",
              "(): Expected reduction dim to be specified for input.numel() == 0.");
  const int device = self.device().index();
  constexpr size_t kLws = 64;
  std::string opts = std::string("-DIN_T=") + type_tag(p.input.scalar_type(), device) +
                     (is_max ? " -DOP_ARGMAX" : " -DOP_ARGMIN") + " -DLWS=" + std::to_string(kLws) +
                     (values.defined() ? " -DWITH_VALUES" : "");
  KernelLaunch launch(get_kernel(device, "argreduce.cl", "arg_reduce", opts));
  launch.arg(static_cast<cl_ulong>(p.M)).arg(static_cast<cl_ulong>(p.K));
  launch.buffer(buffer_of(p.input), p.input.itemsize());
  launch.arg(static_cast<cl_long>(p.sm)).arg(static_cast<cl_long>(p.sk));
  launch.buffer(buffer_of(indices), 8);
  launch.buffer(buffer_of(values.defined() ? values : indices),
                values.defined() ? values.itemsize() : 8);
  launch.enqueue1d(device, p.M * kLws, kLws);
}

// The outputs (contiguous, in kept-dim order) were shaped by the meta function.
template <bool kMax>
void arg_kernel(const Outputs<1>& out, const at::Tensor& self, std::optional<int64_t> dim,
                bool keepdim) {
  TORCH_CHECK(self.scalar_type() != at::kBool, kMax ? "argmax" : "argmin",
              "(): does not support bool input");
  const at::Tensor x = dim ? self : self.reshape({-1});
  run_arg_reduce(x, dim ? at::maybe_wrap_dim(*dim, x.dim()) : 0, kMax, out[0], {});
}
using Argmax = Structured<at::meta::structured_argmax, arg_kernel<true>>;
using Argmin = Structured<at::meta::structured_argmin, arg_kernel<false>>;

template <bool kMax>
void extreme_dim_kernel(const Outputs<2>& out, const at::Tensor& self, int64_t dim, bool keepdim) {
  run_arg_reduce(self, at::maybe_wrap_dim(dim, self.dim()), kMax, out[1], out[0]);
}
using MaxDim = Structured<at::meta::structured_max_dim, extreme_dim_kernel<true>>;
using MinDim = Structured<at::meta::structured_min_dim, extreme_dim_kernel<false>>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("argmax", Argmax::functional);
  m.impl("argmax.out", Argmax::out);
  m.impl("argmin", Argmin::functional);
  m.impl("argmin.out", Argmin::out);
  m.impl("max.dim", MaxDim::functional);
  m.impl("max.dim_max", MaxDim::out2);
  m.impl("min.dim", MinDim::functional);
  m.impl("min.dim_min", MinDim::out2);
  m.impl("all", AllAll::functional);
  m.impl("all.all_out", AllAll::out);
  m.impl("any", AnyAll::functional);
  m.impl("any.all_out", AnyAll::out);
  m.impl("all.dim", AllDim::functional);
  m.impl("all.out", AllDim::out);
  m.impl("any.dim", AnyDim::functional);
  m.impl("any.out", AnyDim::out);
  m.impl("all.dims", AllDims::functional);
  m.impl("all.dims_out", AllDims::out);
  m.impl("any.dims", AnyDims::functional);
  m.impl("any.dims_out", AnyDims::out);
  m.impl("sum", sum_all);
  m.impl("sum.dim_IntList", SumDim::functional);
  m.impl("sum.IntList_out", SumDim::out);
  m.impl("mean.dim", MeanDim::functional);
  m.impl("mean.out", MeanDim::out);
  m.impl("prod", prod_all);
  m.impl("max", max_all);
  m.impl("min", min_all);
  m.impl("amax", Amax::functional);
  m.impl("amax.out", Amax::out);
  m.impl("amin", Amin::functional);
  m.impl("amin.out", Amin::out);
  m.impl("linalg_vector_norm", VectorNorm::functional);
  m.impl("linalg_vector_norm.out", VectorNorm::out);
}

}  // namespace torch_ocl
