// Reductions: sum, mean, prod, amax/amin, aminmax and full max/min, over all or given dims,
// keepdim, dtype= and out=, with kernels/reduce.cl; argmax/argmin and max/min along a dim with
// kernels/argreduce.cl; var/std (and with the mean), p-norms, renorm, nansum and count_nonzero with
// reduce.cl's element maps and finishes. Ops that ATen declares structured are registered through
// Structured.h (meta checks, out= checks and resizing, outputs overlapping an input); where
// ATen's implementation reaches a DispatchStub with a reduction TensorIterator (std_var_stub,
// nansum_stub, norm_stub, renorm_scale_factor_stub), ATen's own implementation is registered
// and only the stub is ours.
// Every reduction becomes a 2-D problem out[m] = R_k in[m*sm + k*sk] after permuting the reduced
// dims last.
#include <ATen/TensorIterator.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/Normalization.h>
#include <ATen/native/ReduceOps.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/aminmax_meta.h>
#include <ATen/ops/angle.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/linalg_vector_norm_native.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/nansum_native.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/norm_meta.h>
#include <ATen/ops/norm_native.h>
#include <ATen/ops/polar.h>
#include <ATen/ops/prod_meta.h>
#include <ATen/ops/renorm_meta.h>
#include <ATen/ops/renorm_native.h>
#include <ATen/ops/std_mean_native.h>
#include <ATen/ops/std_native.h>
#include <ATen/ops/sum_meta.h>
#include <ATen/ops/var_mean_native.h>
#include <ATen/ops/var_native.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <algorithm>
#include <bitset>
#include <cmath>

#include "ops/ColumnSplit.h"
#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

enum class Op { kSum, kProd, kMax, kMin };
// reduce.cl's element maps and finishes (MAP_*, FIN_*).
enum class Map { kNone, kAbs, kSquare, kPow, kNonzero, kNanZero, kSqDev };
enum class Finish { kNone, kSqrt, kPow };

// What one reduction computes: FINISH(scale * OP_k MAP(x[m, k])), scale = 1, or for a sum with
// `divide` 1 / max(0, K - correction) (a mean, a variance).
struct Reduction {
  Op op;
  Map map = Map::kNone;
  Finish finish = Finish::kNone;
  bool divide = false;
  double correction = 0;
  double map_p = 0;  // MAP_POW's exponent
  double fin_p = 0;  // FIN_POW's exponent
  at::Tensor row;    // MAP_SQDEV: each row's mean, accumulation dtype, contiguous
};

std::string op_options(Op op) {
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

std::string map_options(Map map) {
  switch (map) {
    case Map::kNone:
      return "";
    case Map::kAbs:
      return " -DMAP_ABS";
    case Map::kSquare:
      return " -DMAP_SQUARE";
    case Map::kPow:
      return " -DMAP_POW";
    case Map::kNonzero:
      return " -DMAP_NONZERO";
    case Map::kNanZero:
      return " -DMAP_NANZERO";
    case Map::kSqDev:
      return " -DMAP_SQDEV";
  }
  return "";
}

std::string finish_options(Finish finish) {
  switch (finish) {
    case Finish::kNone:
      return "";
    case Finish::kSqrt:
      return " -DFIN_SQRT";
    case Finish::kPow:
      return " -DFIN_POW";
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

// out[m] = R_k in[m*sm + t*sk + s*sk2] for k = t*K2 + s (see kernels/reduce.cl); K2 = 1 when the
// reduced dims collapse to one strided run.
struct Problem {
  at::Tensor input;  // possibly a contiguous permuted copy
  int64_t M, K, sm, sk, K2 = 1, sk2 = 0;
};

// two_runs: the reduction kernels of reduce.cl take two runs of reduced dims; argreduce.cl one.
Problem make_problem(const at::Tensor& self, std::bitset<64> reduced, bool two_runs = true) {
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
  // The reduced dims as one strided run, or else as two (the outer runs' product K/K2 at stride
  // sk, the inner one's K2 at stride sk2).
  auto reduced_runs = [&]() {
    if (collapse(sizes, strides, nkept, sizes.size(), &p.K, &p.sk)) return true;
    if (!two_runs) return false;
    for (size_t j = nkept + 1; j < sizes.size(); ++j) {
      int64_t k1 = 0, k2 = 0;
      if (collapse(sizes, strides, nkept, j, &k1, &p.sk) &&
          collapse(sizes, strides, j, sizes.size(), &k2, &p.sk2)) {
        p.K = k1 * k2;
        p.K2 = k2;
        return true;
      }
    }
    return false;
  };
  if (!collapse(sizes, strides, 0, nkept, &p.M, &p.sm) || !reduced_runs()) {
    p.input = x.contiguous();
    p.M = 1;
    for (size_t i = 0; i < nkept; ++i) p.M *= sizes[i];
    p.K = x.numel() / std::max<int64_t>(p.M, 1);
    p.sm = p.K;
    p.sk = 1;
    p.K2 = 1;
    p.sk2 = 0;
  }
  if (x.numel() == 0) {
    p.M = 1;
    for (size_t i = 0; i < nkept; ++i) p.M *= sizes[i];
    p.K = 0;
    p.sm = p.sk = 1;
    p.K2 = 1;
    p.sk2 = 0;
  }
  return p;
}

// The arguments after the problem (see reduce.cl): [scale,] map_p, fin_p, aux.
void push_reduction_args(KernelLaunch& launch, const Reduction& r, double scale, bool partial,
                         at::ScalarType acc, const BufferRef& fallback_aux, size_t fallback_item) {
  if (!partial) push_compute_scalar(launch, c10::Scalar(scale), acc);
  push_operand_scalar(launch, c10::Scalar(r.map_p), acc);
  if (!partial) push_operand_scalar(launch, c10::Scalar(r.fin_p), acc);
  if (r.row.defined())
    launch.buffer(buffer_of(r.row), r.row.itemsize());
  else
    launch.buffer(fallback_aux, fallback_item);  // unused by the kernel
}

// The problem's arguments of every reduce.cl kernel: M, K, the input and its walk, the output.
void push_problem(KernelLaunch& launch, uint64_t M, uint64_t K, const BufferRef& in, size_t in_item,
                  int64_t sm, int64_t sk, int64_t K2, int64_t sk2, const BufferRef& out,
                  size_t out_item, int64_t out_stride) {
  launch.arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(K));
  launch.buffer(in, in_item).arg(static_cast<cl_long>(sm)).arg(static_cast<cl_long>(sk));
  launch.arg(static_cast<cl_ulong>(K2)).arg(static_cast<cl_long>(sk2));
  launch.buffer(out, out_item).arg(static_cast<cl_long>(out_stride));
}

void launch_reduce(const char* kernel, int device, const std::string& opts, size_t global,
                   size_t lws, uint64_t M, uint64_t K, const BufferRef& in, size_t in_item,
                   int64_t sm, int64_t sk, int64_t K2, int64_t sk2, const BufferRef& out,
                   size_t out_item, int64_t out_stride, const Reduction& r, double scale,
                   at::ScalarType acc) {
  KernelLaunch launch(get_kernel(device, "reduce.cl", kernel, opts));
  push_problem(launch, M, K, in, in_item, sm, sk, K2, sk2, out, out_item, out_stride);
  push_reduction_args(launch, r, scale, false, acc, in, in_item);
  launch.enqueue1d(device, global, lws);
}

// reduce_tiles (kernels/reduce.cl): work-groups of tx outputs by lws / tx rows of work-items,
// the column split among G work-groups of `chunk` elements each; G > 1 leaves partials in `part`.
void launch_tiles(int device, const std::string& opts, size_t lws, size_t tx, uint64_t M,
                  uint64_t K, const BufferRef& in, size_t in_item, int64_t sm, int64_t sk,
                  int64_t K2, int64_t sk2, const BufferRef& out, size_t out_item,
                  const Reduction& r, double scale, at::ScalarType acc, uint64_t G, uint64_t chunk,
                  const BufferRef& part, size_t part_item) {
  KernelLaunch launch(
      get_kernel(device, "reduce.cl", "reduce_tiles", opts + " -DTX=" + std::to_string(tx)));
  push_problem(launch, M, K, in, in_item, sm, sk, K2, sk2, out, out_item, 1);
  push_reduction_args(launch, r, scale, false, acc, in, in_item);
  launch.arg(static_cast<cl_ulong>(G)).arg(static_cast<cl_ulong>(chunk)).buffer(part, part_item);
  const size_t global[2] = {(M + tx - 1) / tx * tx, G * (lws / tx)};
  const size_t local[2] = {tx, lws / tx};
  launch.enqueue(device, 2, global, local);
}

// Reduces problem `p` into `out` (contiguous, M elements in kept-dim order). The route comes
// from the device profile (runtime/DeviceProfile.h):
//   - column reductions on GPUs (reduce_col_tile > 0; the reduced elements strided): reduce_tiles,
//     neighbouring work-items on neighbouring outputs, each column split among work-groups until
//     reduce_fill_groups of them fill the device;
//   - few long rows (fewer than reduce_fill_groups / 4): each row split into chunks of at least
//     reduce_split_chunk elements (reduce_partial), then the partials reduced;
//   - else one work-group per row (reduce_rows), or on CPU devices one work-item per column
//     (reduce_cols) for many short strided rows.
void run_problem(const Problem& p, const at::Tensor& out, const Reduction& r) {
  if (p.M == 0) return;
  const Op op = r.op;
  TORCH_CHECK(p.K > 0 || op == Op::kSum || op == Op::kProd,
              "torch-ocl: max()/min() of an empty reduction is undefined: reduce over a non-empty "
              "dimension");
  const int device = p.input.device().index();
  const DeviceProfile& prof = device_profile(device);
  const at::ScalarType in_t = p.input.scalar_type(), out_t = out.scalar_type();
  const at::ScalarType acc = acc_type(op == Op::kSum || op == Op::kProd ? out_t : in_t);
  TORCH_INTERNAL_ASSERT(!r.row.defined() || (r.row.scalar_type() == acc && r.row.is_contiguous()));
  const double scale =
      r.divide ? 1.0 / std::max(0.0, static_cast<double>(p.K) - r.correction) : 1.0;
  const BufferRef in = buffer_of(p.input), dst = buffer_of(out);
  const size_t in_item = p.input.itemsize(), out_item = out.itemsize();
  // `first`: the pass that reads the input (with the element map); the pass over partials reads
  // accumulator values and maps nothing.
  auto options = [&](at::ScalarType in_type, size_t lws, bool first) {
    return op_options(op) + (first ? map_options(r.map) : std::string()) +
           finish_options(r.finish) + " -DIN_T=" + type_tag(in_type, device) +
           " -DOUT_T=" + type_tag(out_t, device) + " -DACC_T=" + type_tag(acc, device) +
           " -DLWS=" + std::to_string(lws);
  };
  const uint64_t M = p.M, K = p.K;
  const size_t lws256 = prof.fit_lws(256), lws64 = prof.fit_lws(64);
  const uint64_t fill = static_cast<uint64_t>(prof.reduce_fill_groups);
  const uint64_t min_chunk = static_cast<uint64_t>(prof.reduce_split_chunk);
  const bool strided = p.K2 == 1 ? p.sk != 1 : p.sk2 != 1;
  if (prof.reduce_col_tile > 0 && strided) {
    const size_t tx = std::min<size_t>(static_cast<size_t>(prof.reduce_col_tile), lws256);
    const uint64_t ty = lws256 / tx, groups_x = (M + tx - 1) / tx;
    const ColumnSplit split = column_split(prof, groups_x, K, ty);
    const uint64_t G = split.groups, chunk = split.chunk;
    if (G <= 1) {
      launch_tiles(device, options(in_t, lws256, true), lws256, tx, M, K, in, in_item, p.sm, p.sk,
                   p.K2, p.sk2, dst, out_item, r, scale, acc, 1, std::max<uint64_t>(K, 1), dst,
                   out_item);
      return;
    }
    at::Tensor part = at::empty({static_cast<int64_t>(G * M)}, p.input.options().dtype(acc));
    const BufferRef pb = buffer_of(part);
    launch_tiles(device, options(in_t, lws256, true), lws256, tx, M, K, in, in_item, p.sm, p.sk,
                 p.K2, p.sk2, dst, out_item, r, scale, acc, G, chunk, pb, part.itemsize());
    launch_tiles(device, options(acc, lws256, false), lws256, tx, M, G, pb, part.itemsize(), 1,
                 static_cast<int64_t>(M), 1, 0, dst, out_item, r, scale, acc, 1, G, dst, out_item);
  } else if (M < fill / 4 && K >= 2 * min_chunk) {
    // Few long rows: split each row into G chunks, then reduce the partials.
    const uint64_t G =
        std::min<uint64_t>((K + min_chunk - 1) / min_chunk, std::max<uint64_t>(1, fill / M));
    const uint64_t chunk = (K + G - 1) / G;
    at::Tensor part = at::empty({static_cast<int64_t>(M * G)}, p.input.options().dtype(acc));
    const BufferRef pb = buffer_of(part);
    {
      KernelLaunch launch(
          get_kernel(device, "reduce.cl", "reduce_partial", options(in_t, lws256, true)));
      launch.arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(K));
      launch.buffer(in, in_item).arg(static_cast<cl_long>(p.sm)).arg(static_cast<cl_long>(p.sk));
      launch.arg(static_cast<cl_ulong>(p.K2)).arg(static_cast<cl_long>(p.sk2));
      launch.buffer(pb, part.itemsize())
          .arg(static_cast<cl_ulong>(G))
          .arg(static_cast<cl_ulong>(chunk));
      push_reduction_args(launch, r, scale, true, acc, in, in_item);
      launch.enqueue1d(device, M * G * lws256, lws256);
    }
    launch_reduce("reduce_rows", device, options(acc, lws64, false), M * lws64, lws64, M, G, pb,
                  part.itemsize(), static_cast<int64_t>(G), 1, 1, 0, dst, out_item, 1, r, scale,
                  acc);
  } else if ((p.sk == 1 && p.K2 == 1) || M < 256 || K > 4096 || prof.reduce_col_tile > 0) {
    const size_t lws = K >= 1024 ? lws256 : lws64;
    launch_reduce("reduce_rows", device, options(in_t, lws, true), M * lws, lws, M, K, in, in_item,
                  p.sm, p.sk, p.K2, p.sk2, dst, out_item, 1, r, scale, acc);
  } else {
    launch_reduce("reduce_cols", device, options(in_t, lws64, true), M, lws64, M, K, in, in_item,
                  p.sm, p.sk, p.K2, p.sk2, dst, out_item, 1, r, scale, acc);
  }
}

// Reduces `self` over `reduced` dims into `out` (contiguous, in kept-dim order).
void run_reduce(const at::Tensor& self, std::bitset<64> reduced, const at::Tensor& out,
                const Reduction& r) {
  if (self.is_complex()) {
    // Complex elements reach a real reduction through their magnitude (the p-norms) or through
    // being nonzero (count_nonzero, the 0-norm); sums and means of complex tensors reduce their
    // real view (complex_reduce).
    if (r.map == Map::kAbs || r.map == Map::kSquare || r.map == Map::kPow) {
      run_problem(make_problem(at::abs(self), reduced), out, r);
      return;
    }
    if (r.op == Op::kProd && r.map == Map::kNone && out.is_complex() && !r.divide) {
      // A complex product in polar form: its magnitude is the product of the magnitudes, its
      // angle the sum of the angles (zero factors give 0).
      const at::Tensor x = self.resolve_conj().resolve_neg();
      at::Tensor mag =
          at::empty(out.sizes(), out.options().dtype(c10::toRealValueType(out.scalar_type())));
      at::Tensor ang = at::empty_like(mag);
      run_problem(make_problem(at::abs(x), reduced), mag, Reduction{Op::kProd});
      run_problem(make_problem(at::angle(x), reduced), ang, Reduction{Op::kSum});
      out.copy_(at::polar(mag, ang));
      return;
    }
    TORCH_CHECK_NOT_IMPLEMENTED(r.map == Map::kNonzero,
                                "torch-ocl: this reduction of a complex tensor is not implemented "
                                "on the ocl device yet (docs/complex.md lists the complex ops); "
                                "compute it on the CPU (.cpu())");
    run_problem(make_problem(self.ne(0), reduced), out, r);
    return;
  }
  run_problem(make_problem(self, reduced), out, r);
}
void run_reduce(const at::Tensor& self, std::bitset<64> reduced, const at::Tensor& out, Op op,
                bool mean) {
  Reduction r{op};
  r.divide = mean;
  run_reduce(self, reduced, out, r);
}

// Variance (or standard deviation with take_sqrt) of `self` over `reduced` into `var`, and the
// mean into `mean` if defined (both contiguous, in kept-dim order), in two passes: the mean of
// each row in the accumulation dtype, then the mean squared deviation from it, divided by
// max(0, K - correction).
void run_var(const at::Tensor& self, std::bitset<64> reduced, const at::Tensor& var,
             const at::Tensor& mean, double correction, bool take_sqrt) {
  const Problem p = make_problem(self, reduced);
  if (p.M == 0) return;
  const at::ScalarType acc = acc_type(var.scalar_type());
  at::Tensor row = mean.defined() && mean.scalar_type() == acc
                       ? mean
                       : at::empty({p.M}, self.options().dtype(acc));
  Reduction r1{Op::kSum};
  r1.divide = true;
  run_problem(p, row, r1);
  Reduction r2{Op::kSum, Map::kSqDev, take_sqrt ? Finish::kSqrt : Finish::kNone};
  r2.divide = true;
  r2.correction = correction;
  r2.row = row;
  run_problem(p, var, r2);
  if (mean.defined() && !row.is_same(mean)) mean.copy_(row.view(mean.sizes()));
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

// The elements a sum or product into `out` reduces. The CPU converts them to the result dtype
// first: into a bool result every non-zero element counts (0.5 too), which converting to the
// integer accumulator would truncate away.
at::Tensor as_result_elements(const at::Tensor& self, const at::Tensor& out) {
  const bool to_bool = out.scalar_type() == at::kBool && self.scalar_type() != at::kBool;
  return to_bool ? self.ne(0) : self;
}

// A complex sum or mean: the real and imaginary parts are reduced as a real tensor with one more
// (kept) dimension of 2, view_as_real of both (a conjugate view resolved first).
bool complex_reduce(const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef dims,
                    bool mean) {
  if (!out.is_complex() && !self.is_complex()) return false;
  TORCH_CHECK(out.is_complex(), "sum/mean of a complex tensor into a real dtype ",
              out.scalar_type(), " is not supported; take torch.real first");
  at::Tensor x = self.is_complex() ? self.resolve_conj().resolve_neg() : self.to(out.scalar_type());
  // A 0-d tensor's dim 0 (or -1) names no dimension of its own; in the real view it would name
  // the (real, imaginary) pair.
  std::bitset<64> mask = dims_mask(self, dims);
  if (self.dim() == 0) mask.reset();
  run_reduce(at::view_as_real(x), mask, at::view_as_real(out), Op::kSum, mean);
  return true;
}

void sum_kernel(const Outputs<1>& out, const at::Tensor& self, at::OptionalIntArrayRef dims,
                bool keepdim, std::optional<at::ScalarType> dtype) {
  if (complex_reduce(out[0], self, dims, false)) return;
  run_reduce(as_result_elements(self, out[0]), dims_mask(self, dims), out[0], Op::kSum, false);
}
using SumDim = Structured<at::meta::structured_sum_dim_IntList, sum_kernel>;

void prod_kernel(const Outputs<1>& out, const at::Tensor& self, int64_t dim, bool keepdim,
                 std::optional<at::ScalarType> dtype) {
  run_reduce(as_result_elements(self, out[0]), dims_mask(self, at::IntArrayRef(dim)), out[0],
             Op::kProd, false);
}
using ProdDim = Structured<at::meta::structured_prod_dim_int, prod_kernel>;

void mean_kernel(const Outputs<1>& out, const at::Tensor& self, at::OptionalIntArrayRef dims,
                 bool keepdim, std::optional<at::ScalarType> dtype) {
  // The meta function lets an integer out= through; the CPU then fails dividing the sum in it.
  const at::ScalarType t = out[0].scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t),
              "result type Float can't be cast to the desired output type ", t);
  if (complex_reduce(out[0], self, dims, true)) return;
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
  run_reduce(as_result_elements(self, out), dims_mask(self, {}), out, Op::kProd, false);
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
  Problem p = make_problem(self, mask, /*two_runs=*/false);
  if (p.M == 0) return;
  TORCH_CHECK(p.K > 0, is_max ? "argmax" : "argmin",
              "(): Expected reduction dim to be specified for input.numel() == 0.");
  const int device = self.device().index();
  const DeviceProfile& prof = device_profile(device);
  const size_t lws = prof.fit_lws(64);
  auto options = [&](bool with_values, bool parts) {
    return std::string("-DIN_T=") + type_tag(p.input.scalar_type(), device) +
           (is_max ? " -DOP_ARGMAX" : " -DOP_ARGMIN") + " -DLWS=" + std::to_string(lws) +
           (with_values ? " -DWITH_VALUES" : "") + (parts ? " -DPARTS" : "");
  };
  // M, K, the input, the outputs, then G, chunk and the partial indices (any buffer unless PARTS).
  auto launch = [&](const std::string& opts, uint64_t M, uint64_t K, const at::Tensor& in,
                    int64_t sm, int64_t sk, const at::Tensor& idx, const at::Tensor& val,
                    uint64_t G, uint64_t chunk, const at::Tensor& pidx) {
    KernelLaunch l(get_kernel(device, "argreduce.cl", "arg_reduce", opts));
    l.arg(static_cast<cl_ulong>(M)).arg(static_cast<cl_ulong>(K));
    l.buffer(buffer_of(in), in.itemsize());
    l.arg(static_cast<cl_long>(sm)).arg(static_cast<cl_long>(sk));
    l.buffer(buffer_of(idx), 8);
    l.buffer(buffer_of(val.defined() ? val : idx), val.defined() ? val.itemsize() : 8);
    l.arg(static_cast<cl_ulong>(G)).arg(static_cast<cl_ulong>(chunk));
    l.buffer(buffer_of(pidx), 8);
    l.enqueue1d(device, M * G * lws, lws);
  };
  const uint64_t M = p.M, K = p.K;
  const uint64_t fill = static_cast<uint64_t>(prof.reduce_fill_groups);
  const uint64_t min_chunk = static_cast<uint64_t>(prof.reduce_split_chunk);
  if (M < fill / 4 && K >= 2 * min_chunk) {
    // Few long rows: G work-groups per row leave (value, index) partials, a second pass picks.
    uint64_t G =
        std::min<uint64_t>((K + min_chunk - 1) / min_chunk, std::max<uint64_t>(1, fill / M));
    const uint64_t chunk = (K + G - 1) / G;
    G = (K + chunk - 1) / chunk;
    at::Tensor pidx = at::empty({static_cast<int64_t>(M * G)}, indices.options());
    at::Tensor pval = at::empty({static_cast<int64_t>(M * G)}, p.input.options());
    launch(options(true, false), M, K, p.input, p.sm, p.sk, pidx, pval, G, chunk, pidx);
    launch(options(values.defined(), true), M, G, pval, static_cast<int64_t>(G), 1, indices, values,
           1, G, pidx);
    return;
  }
  launch(options(values.defined(), false), M, K, p.input, p.sm, p.sk, indices, values, 1, K,
         indices);
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

// aminmax: min and max in two passes (outputs shaped by the meta function).
void aminmax_kernel(const Outputs<2>& out, const at::Tensor& self, std::optional<int64_t> dim,
                    bool keepdim) {
  std::bitset<64> mask;
  if (dim && self.dim() > 0)
    mask.set(at::maybe_wrap_dim(*dim, self.dim()));
  else
    mask = dims_mask(self, {});
  run_reduce(self, mask, out[0], Op::kMin, false);
  run_reduce(self, mask, out[1], Op::kMax, false);
}
using Aminmax = Structured<at::meta::structured_aminmax, aminmax_kernel>;

// count_nonzero over dims (none: all), int64, as the CPU's count_nonzero: the sum of x != 0.
at::Tensor count_nonzero_dims(const at::Tensor& self, at::IntArrayRef dims) {
  const std::bitset<64> mask = dims_mask(self, dims);
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!mask[d]) shape.push_back(self.size(d));
  at::Tensor out = at::empty(shape, self.options().dtype(at::kLong));
  run_reduce(self, mask, out, Reduction{Op::kSum, Map::kNonzero});
  return out;
}

// ---- ATen's implementations, our stubs ----

// ATen's structured impl class (at::native::structured_<op>_out), run as the kernel of a
// Structured<Meta, ...> registration: the meta part already ran there; the impl computes into the
// working output and reaches our kernels through the dispatcher or a DispatchStub.
template <class Impl>
struct AtenImpl final : Impl {
  const at::Tensor& maybe_get_output(int64_t) override {
    TORCH_INTERNAL_ASSERT(false, "torch-ocl: an ATen impl asked for its meta outputs");
  }
};

void vector_norm_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Scalar& ord,
                        at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  AtenImpl<at::native::structured_linalg_vector_norm_out>().impl(self, ord, dim, keepdim, dtype,
                                                                 out[0]);
}
using VectorNorm = Structured<at::meta::structured_linalg_vector_norm, vector_norm_kernel>;

void norm_kernel(const Outputs<1>& out, const at::Tensor& self, const std::optional<at::Scalar>& p,
                 at::IntArrayRef dim, bool keepdim) {
  AtenImpl<at::native::structured_norm_out>().impl(self, scalar_ref(p), dim, keepdim, out[0]);
}
void norm_dtype_kernel(const Outputs<1>& out, const at::Tensor& self,
                       const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                       at::ScalarType dtype) {
  AtenImpl<at::native::structured_norm_dtype_out>().impl(self, scalar_ref(p), dim, keepdim, dtype,
                                                         out[0]);
}
using NormDim = Structured<at::meta::structured_norm_ScalarOpt_dim, norm_kernel>;
using NormDimDtype = Structured<at::meta::structured_norm_ScalarOpt_dim_dtype, norm_dtype_kernel>;

// renorm: ATen's impl takes the norm over every dim but `dim` (our norm) and multiplies self by
// the factor of renorm_scale_factor_stub (below).
void renorm_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Scalar& p, int64_t dim,
                   const at::Scalar& maxnorm) {
  AtenImpl<at::native::structured_renorm_out>().impl(self, p, dim, maxnorm, out[0]);
}
using Renorm = Structured<at::meta::structured_renorm, renorm_kernel>;

// The factor as the CPU computes it: maxnorm / (norm + 1e-7) where norm > maxnorm, else 1, in
// the norm's dtype (float for half/bfloat16), then converted to the output's (native ops).
void renorm_factor_iter(at::TensorIteratorBase& iter, double maxnorm) {
  const at::Tensor& norm = iter.input(0);
  const at::Tensor scaled = at::div(at::full_like(norm, maxnorm), at::add(norm, 1e-7));
  iter.output(0).copy_(at::where(at::gt(norm, maxnorm), scaled, 1.0));
}

// A reduction TensorIterator from ATen's make_reduction: its outputs are the results viewed at
// the input's rank with every reduced dim as size 1, input(0) the input (already converted to
// the dtype the reduction computes in). The reduced dims are those the outputs have as 1.
std::bitset<64> iter_reduced_dims(const at::TensorIteratorBase& iter) {
  const at::Tensor& in = iter.input(0);
  const at::Tensor& out = iter.output(0);
  TORCH_INTERNAL_ASSERT(in.dim() == out.dim() && in.dim() <= 64);
  std::bitset<64> mask;
  for (int64_t d = 0; d < in.dim(); ++d)
    if (out.size(d) == 1 && in.size(d) != 1) mask.set(d);
  return mask;
}

// Runs `compute(input, mask, outputs)` on outputs the kernels can write (contiguous, apart from
// the input), copying temporaries back into the iterator's outputs.
template <class F>
void with_iter_outputs(const at::TensorIteratorBase& iter, F compute) {
  const at::Tensor& in = iter.input(0);
  std::vector<at::Tensor> work;
  for (int i = 0; i < iter.noutputs(); ++i) work.push_back(working_output(iter.output(i), {&in}));
  compute(in, iter_reduced_dims(iter), work);
  for (int i = 0; i < iter.noutputs(); ++i) finish_out(iter.output(i), work[i]);
}

void std_var_iter(at::TensorIterator& iter, double correction, bool take_sqrt) {
  with_iter_outputs(
      iter, [&](const at::Tensor& in, std::bitset<64> mask, const std::vector<at::Tensor>& out) {
        run_var(in, mask, out[0], out.size() > 1 ? out[1] : at::Tensor(), correction, take_sqrt);
      });
}

void nansum_iter(at::TensorIterator& iter) {
  // An integer result (out= of an integer dtype: ATen converts the input to it) has no NaN
  // kernel on the CPU either.
  const at::ScalarType t = iter.input(0).scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"nansum_cpu\" not implemented for '", t,
                              "'");
  with_iter_outputs(
      iter, [&](const at::Tensor& in, std::bitset<64> mask, const std::vector<at::Tensor>& out) {
        run_reduce(in, mask, out[0], Reduction{Op::kSum, Map::kNanZero});
      });
}

// The p-norm as the CPU computes it: p = 0 counts the non-zeros, +-inf take the max/min of |x|,
// 1 and 2 sum |x| and x*x (then sqrt), any other p sums |x|^p and takes the 1/p-th power.
void norm_iter(at::TensorIterator& iter, const c10::Scalar& ord) {
  const double p = ord.toDouble();
  Reduction r{Op::kSum};
  if (p == 0) {
    r.map = Map::kNonzero;
  } else if (p == 1) {
    r.map = Map::kAbs;
  } else if (p == 2) {
    r.map = Map::kSquare;
    r.finish = Finish::kSqrt;
  } else if (std::isinf(p)) {
    r.op = p > 0 ? Op::kMax : Op::kMin;
    r.map = Map::kAbs;
  } else {
    r.map = Map::kPow;
    r.map_p = p;
    r.finish = Finish::kPow;
    r.fin_p = 1.0 / p;
  }
  with_iter_outputs(
      iter, [&](const at::Tensor& in, std::bitset<64> mask, const std::vector<at::Tensor>& out) {
        run_reduce(in, mask, out[0], r);
      });
}

using VarFn = at::Tensor (*)(const at::Tensor&, at::OptionalIntArrayRef,
                             const std::optional<at::Scalar>&, bool);
using VarOutFn = at::Tensor& (*)(const at::Tensor&, at::OptionalIntArrayRef,
                                 const std::optional<at::Scalar>&, bool, at::Tensor&);
using VarMeanFn = std::tuple<at::Tensor, at::Tensor> (*)(const at::Tensor&, at::OptionalIntArrayRef,
                                                         const std::optional<at::Scalar>&, bool);
using NansumFn = at::Tensor (*)(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                std::optional<at::ScalarType>);

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
  m.impl("prod.dim_int", ProdDim::functional);
  m.impl("prod.int_out", ProdDim::out);
  m.impl("aminmax", Aminmax::functional);
  m.impl("aminmax.out", Aminmax::out2);
  m.impl("count_nonzero.dim_IntList", count_nonzero_dims);
  m.impl("linalg_vector_norm", VectorNorm::functional);
  m.impl("linalg_vector_norm.out", VectorNorm::out);
  m.impl("norm.ScalarOpt_dim", NormDim::functional);
  m.impl("norm.out", NormDim::out);
  m.impl("norm.ScalarOpt_dim_dtype", NormDimDtype::functional);
  m.impl("norm.dtype_out", NormDimDtype::out);
  // ATen's own implementations (argument checks, dtypes, empty inputs, CPU messages); their
  // DispatchStubs are ours (below).
  m.impl("var.correction", static_cast<VarFn>(&at::native::var));
  m.impl("var.correction_out", static_cast<VarOutFn>(&at::native::var_out));
  m.impl("std.correction", static_cast<VarFn>(&at::native::std));
  m.impl("std.correction_out", static_cast<VarOutFn>(&at::native::std_out));
  m.impl("var_mean.correction", static_cast<VarMeanFn>(&at::native::var_mean));
  m.impl("std_mean.correction", static_cast<VarMeanFn>(&at::native::std_mean));
  m.impl("nansum", static_cast<NansumFn>(&at::native::nansum));
  m.impl("nansum.out", &at::native::nansum_out);
  m.impl("renorm", Renorm::functional);
  m.impl("renorm.out", Renorm::out);
  m.impl("renorm_", Renorm::inplace);
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(std_var_stub, &torch_ocl::std_var_iter)
REGISTER_PRIVATEUSE1_DISPATCH(nansum_stub, &torch_ocl::nansum_iter)
REGISTER_PRIVATEUSE1_DISPATCH(norm_stub, &torch_ocl::norm_iter)
REGISTER_PRIVATEUSE1_DISPATCH(renorm_scale_factor_stub, &torch_ocl::renorm_factor_iter)
}  // namespace at::native
