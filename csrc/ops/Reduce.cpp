// Reductions: sum, mean, prod, amax/amin and full max/min, over all or given dims, keepdim,
// dtype= and out=, with kernels/reduce.cl. Every reduction becomes a 2-D problem
// out[m] = R_k in[m*sm + k*sk] after permuting the reduced dims last.
#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ne.h>
#include <torch/library.h>

#include <algorithm>
#include <bitset>

#include "ops/Elementwise.h"
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

// Reduces `self` over `reduced` dims into `out` (contiguous, in kept-dim order).
void run_reduce(const at::Tensor& self, std::bitset<64> reduced, const at::Tensor& out, Op op,
                bool mean) {
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
      cl_kernel k = get_kernel(device, "reduce.cl", "reduce_partial", options(in_t, 256));
      KernelLaunch launch(k);
      launch.arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(K));
      launch.buffer(in, in_item).arg(static_cast<cl_long>(p.sm)).arg(static_cast<cl_long>(p.sk));
      launch.buffer(pb, part.itemsize())
          .arg(static_cast<cl_ulong>(G))
          .arg(static_cast<cl_ulong>(chunk));
      launch.enqueue1d(device, M * G * 256, 256);
    }
    launch_reduce("reduce_rows", device, options(acc, 64), M * 64, 64, M, G, pb, part.itemsize(),
                  static_cast<int64_t>(G), 1, dst, out_item, 1, scale, acc);
  } else if (p.sk == 1 || M < 256 || K > 4096) {
    const size_t lws = K >= 1024 ? 256 : 64;
    launch_reduce("reduce_rows", device, options(in_t, lws), M * lws, lws, M, K, in, in_item, p.sm,
                  p.sk, dst, out_item, 1, scale, acc);
  } else {
    launch_reduce("reduce_cols", device, options(in_t, 64), M, 64, M, K, in, in_item, p.sm, p.sk,
                  dst, out_item, 1, scale, acc);
  }
}

std::vector<int64_t> out_shape(const at::Tensor& self, std::bitset<64> reduced, bool keepdim) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!reduced[d])
      shape.push_back(self.size(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

std::bitset<64> dims_mask(const at::Tensor& self, at::OptionalIntArrayRef dims) {
  if (!dims || dims->empty()) {
    std::bitset<64> all;
    for (int64_t d = 0; d < self.dim(); ++d) all.set(d);
    return all;
  }
  return at::dim_list_to_bitset(*dims, self.dim());
}

at::Tensor& reduce_out(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                       at::Tensor& out, Op op, bool mean) {
  const std::bitset<64> mask = dims_mask(self, dims);
  const std::vector<int64_t> shape = out_shape(self, mask, keepdim);
  if (out.sizes() != at::IntArrayRef(shape)) out.resize_(shape);
  if (out.is_contiguous()) {
    run_reduce(self, mask, out, op, mean);
  } else {
    at::Tensor tmp = at::empty(shape, out.options());
    run_reduce(self, mask, tmp, op, mean);
    out.copy_(tmp);
  }
  return out;
}

at::ScalarType sum_dtype(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  if (dtype) return *dtype;
  return at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong
                                                                      : self.scalar_type();
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  at::Tensor out = at::empty({0}, self.options().dtype(sum_dtype(self, dtype)));
  return reduce_out(self, dims, keepdim, out, Op::kSum, false);
}
at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return reduce_out(self, dims, keepdim, out, Op::kSum, false);
}
at::Tensor sum_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return sum_dim(self, {}, false, dtype);
}

at::ScalarType mean_dtype(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  const at::ScalarType t = dtype ? *dtype : self.scalar_type();
  TORCH_CHECK(at::isFloatingType(t), "mean(): could not infer output dtype. ",
              dtype ? "Optional dtype" : "Input dtype",
              " must be either a floating point or complex dtype. Got: ", t);
  return t;
}
at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  at::Tensor out = at::empty({0}, self.options().dtype(mean_dtype(self, dtype)));
  return reduce_out(self, dims, keepdim, out, Op::kSum, true);
}
at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  mean_dtype(self, dtype);
  return reduce_out(self, dims, keepdim, out, Op::kSum, true);
}

at::Tensor prod_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  at::Tensor out = at::empty({0}, self.options().dtype(sum_dtype(self, dtype)));
  return reduce_out(self, {}, false, out, Op::kProd, false);
}

at::Tensor extreme_all(const at::Tensor& self, Op op) {
  TORCH_CHECK(self.numel() > 0, op == Op::kMax ? "max" : "min",
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  at::Tensor out = at::empty({0}, self.options());
  return reduce_out(self, {}, false, out, op, false);
}
at::Tensor max_all(const at::Tensor& self) { return extreme_all(self, Op::kMax); }
at::Tensor min_all(const at::Tensor& self) { return extreme_all(self, Op::kMin); }

at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dims, bool keepdim, at::Tensor& out) {
  return reduce_out(self, dims, keepdim, out, Op::kMax, false);
}
at::Tensor amax(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  at::Tensor out = at::empty({0}, self.options());
  return amax_out(self, dims, keepdim, out);
}
at::Tensor& amin_out(const at::Tensor& self, at::IntArrayRef dims, bool keepdim, at::Tensor& out) {
  return reduce_out(self, dims, keepdim, out, Op::kMin, false);
}
at::Tensor amin(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  at::Tensor out = at::empty({0}, self.options());
  return amin_out(self, dims, keepdim, out);
}

// all/any: min/max of the elements as bool (non-zero), output bool.
at::Tensor logical_reduce(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                          Op op) {
  const at::Tensor b = self.scalar_type() == at::kBool ? self : self.ne(0);
  at::Tensor out = at::empty({0}, self.options().dtype(at::kBool));
  if (b.numel() == 0) {
    // all() of nothing is true, any() of nothing is false.
    const std::bitset<64> mask = dims_mask(self, dims);
    out.resize_(out_shape(self, mask, keepdim));
    out.fill_(op == Op::kMin);
    return out;
  }
  return reduce_out(b, dims, keepdim, out, op, false);
}
at::Tensor all_all(const at::Tensor& self) { return logical_reduce(self, {}, false, Op::kMin); }
at::Tensor any_all(const at::Tensor& self) { return logical_reduce(self, {}, false, Op::kMax); }
at::Tensor all_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return logical_reduce(self, at::IntArrayRef(dim), keepdim, Op::kMin);
}
at::Tensor any_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return logical_reduce(self, at::IntArrayRef(dim), keepdim, Op::kMax);
}
at::Tensor all_dims(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim) {
  return logical_reduce(self, dims, keepdim, Op::kMin);
}
at::Tensor any_dims(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim) {
  return logical_reduce(self, dims, keepdim, Op::kMax);
}

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

// Outputs are computed contiguous in kept-dim order, then copied into the caller's tensors.
void arg_reduce_into(const at::Tensor& self, std::optional<int64_t> dim_opt, bool keepdim,
                     bool is_max, const at::Tensor& indices, const at::Tensor& values) {
  at::Tensor x = dim_opt ? self : self.reshape({-1});
  const int64_t dim = dim_opt ? at::maybe_wrap_dim(*dim_opt, x.dim()) : 0;
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d != dim)
      shape.push_back(x.size(d));
    else if (keepdim && dim_opt)
      shape.push_back(1);
  }
  if (!dim_opt && keepdim) shape.assign(self.dim(), 1);
  indices.resize_(shape);
  if (values.defined()) values.resize_(shape);
  at::Tensor idx = indices.is_contiguous() ? indices : at::empty(shape, indices.options());
  at::Tensor val;
  if (values.defined()) val = values.is_contiguous() ? values : at::empty(shape, values.options());
  run_arg_reduce(x, dim, is_max, idx, val);
  if (!idx.is_same(indices)) indices.copy_(idx);
  if (values.defined() && !val.is_same(values)) values.copy_(val);
}

at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                       at::Tensor& out) {
  arg_reduce_into(self, dim, keepdim, true, out, {});
  return out;
}
at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return argmax_out(self, dim, keepdim, out);
}
at::Tensor& argmin_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                       at::Tensor& out) {
  arg_reduce_into(self, dim, keepdim, false, out, {});
  return out;
}
at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return argmin_out(self, dim, keepdim, out);
}

template <bool kMax>
std::tuple<at::Tensor&, at::Tensor&> extreme_dim_out(const at::Tensor& self, int64_t dim,
                                                     bool keepdim, at::Tensor& values,
                                                     at::Tensor& indices) {
  arg_reduce_into(self, dim, keepdim, kMax, indices, values);
  return {values, indices};
}
template <bool kMax>
std::tuple<at::Tensor, at::Tensor> extreme_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  extreme_dim_out<kMax>(self, dim, keepdim, values, indices);
  return {values, indices};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("argmax", argmax);
  m.impl("argmax.out", argmax_out);
  m.impl("argmin", argmin);
  m.impl("argmin.out", argmin_out);
  m.impl("max.dim", extreme_dim<true>);
  m.impl("max.dim_max", extreme_dim_out<true>);
  m.impl("min.dim", extreme_dim<false>);
  m.impl("min.dim_min", extreme_dim_out<false>);
  m.impl("all", all_all);
  m.impl("any", any_all);
  m.impl("all.dim", all_dim);
  m.impl("any.dim", any_dim);
  m.impl("all.dims", all_dims);
  m.impl("any.dims", any_dims);
  m.impl("sum", sum_all);
  m.impl("sum.dim_IntList", sum_dim);
  m.impl("sum.IntList_out", sum_out);
  m.impl("mean.dim", mean_dim);
  m.impl("mean.out", mean_out);
  m.impl("prod", prod_all);
  m.impl("max", max_all);
  m.impl("min", min_all);
  m.impl("amax", amax);
  m.impl("amax.out", amax_out);
  m.impl("amin", amin);
  m.impl("amin.out", amin_out);
}

}  // namespace torch_ocl
