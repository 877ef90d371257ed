// Pooling on the device with kernels/pool.cl: max_pool2d/3d_with_indices, avg_pool2d/3d,
// adaptive average and max pooling 2-d and 3-d, and their backwards (as gathers: no atomics).
//
// Shapes, checks and result layouts come from ATen: the structured ops' meta kernels (run on
// meta tensors of the arguments) give the CPU's error messages and the result's sizes and
// strides; the unstructured ones (max_pool3d_with_indices, _adaptive_avg_pool2d) use ATen's
// helpers from ATen/native/Pool.h with the CPU's checks. Kernels take every tensor with its own
// strides, so channels_last and non-contiguous operands need no copies.
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_adaptive_avg_pool2d.h>
#include <ATen/ops/adaptive_max_pool2d.h>
#include <ATen/ops/adaptive_max_pool2d_backward.h>
#include <ATen/ops/adaptive_max_pool3d.h>
#include <ATen/ops/adaptive_max_pool3d_backward.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/avg_pool2d_backward.h>
#include <ATen/ops/avg_pool3d.h>
#include <ATen/ops/avg_pool3d_backward.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
#include <torch/library.h>

#include <array>
#include <string>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

// The pooling geometry of kernels/pool.cl (POOL_GEOM), 2-d pooling as T = OT = 1.
struct Geo {
  int64_t C = 1, T = 1, H = 1, W = 1, OT = 1, OH = 1, OW = 1;
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  int adaptive = 0;
};

// A device tensor with the sizes and strides of a meta result.
at::Tensor like_meta(const at::Tensor& meta, const at::Tensor& ref) {
  return at::empty_strided(meta.sizes(), meta.strides(), ref.options().dtype(meta.dtype()));
}

// The tensor to compute an out= result into, through the one out= path (Structured.h): out
// checked (dtype, device) and resized like the structured op's meta result `meta`, and a
// temporary instead when out is strided differently or overlaps an input (finish_out copies it
// back).
at::Tensor working_out(const at::Tensor& out, const at::Tensor& meta,
                       const std::vector<const at::Tensor*>& inputs) {
  resize_out(out, meta.sizes(), meta.is_contiguous() ? at::IntArrayRef() : meta.strides(),
             out.options().dtype(meta.dtype()));
  return working_output(out, inputs);
}

// Extents of a [N, C, (T), H, W] tensor (batch optional) with `spatial` pooled dims.
void extents(const at::Tensor& t, int spatial, int64_t* C, int64_t* T, int64_t* H, int64_t* W) {
  const int64_t d = t.dim();
  *C = t.size(d - spatial - 1);
  *T = spatial == 3 ? t.size(d - 3) : 1;
  *H = t.size(d - 2);
  *W = t.size(d - 1);
}

// The grid of kernels/pool.cl over a result [N, C, T', H', W'] of `total` elements.
void enqueue_result(KernelLaunch& l, int device, int64_t total, int64_t H, int64_t W) {
  l.enqueue_grid(device, static_cast<size_t>(W), static_cast<size_t>(H),
                 static_cast<size_t>(total / (W * H)), kLws);
}

KernelLaunch& push_geo(KernelLaunch& l, uint64_t total, const Geo& g) {
  l.arg(static_cast<cl_ulong>(total));
  for (int64_t v : {g.C, g.T, g.H, g.W, g.OT, g.OH, g.OW}) l.arg(static_cast<cl_long>(v));
  for (const int64_t* a : {g.k, g.s, g.p, g.d})
    for (int i = 0; i < 3; ++i) l.arg(static_cast<cl_long>(a[i]));
  l.arg(static_cast<cl_int>(g.adaptive));
  return l;
}

// Buffer, offset and the [N, C, T, H, W] strides of t (0 for absent dims).
KernelLaunch& push_tensor(KernelLaunch& l, const at::Tensor& t, int spatial) {
  const int64_t d = t.dim();
  std::array<int64_t, 5> st{0, 0, 0, 0, 0};
  if (d == spatial + 2) st[0] = t.stride(0);
  st[1] = t.stride(d - spatial - 1);
  if (spatial == 3) st[2] = t.stride(d - 3);
  st[3] = t.stride(d - 2);
  st[4] = t.stride(d - 1);
  l.buffer(buffer_of(t), t.itemsize());
  for (int64_t v : st) l.arg(static_cast<cl_long>(v));
  return l;
}

std::string options(at::ScalarType t, int device) {
  TORCH_CHECK(at::isFloatingType(t), "pooling on ocl: expected a floating point input, got ", t);
  return std::string("-DT_=") + type_tag(t, device) +
         " -DACC_T=" + (t == at::kDouble ? "double" : "float");
}

// Geometry from the op's arguments as ATen reads them (a single value for all dims, stride
// defaulting to the kernel size).
Geo geo_of(at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
           at::IntArrayRef dilation, int spatial, const at::Tensor& in, const at::Tensor& out) {
  Geo g;
  const int first = 3 - spatial;
  for (int i = 0; i < spatial; ++i) {
    auto pick = [&](at::IntArrayRef a, int64_t def) {
      return a.empty() ? def : (a.size() == 1 ? a[0] : a[i]);
    };
    g.k[first + i] = pick(kernel, 1);
    g.s[first + i] = stride.empty() ? g.k[first + i] : pick(stride, 1);
    g.p[first + i] = pick(padding, 0);
    g.d[first + i] = pick(dilation, 1);
  }
  extents(in, spatial, &g.C, &g.T, &g.H, &g.W);
  int64_t c;
  extents(out, spatial, &c, &g.OT, &g.OH, &g.OW);
  return g;
}

void launch_max_forward(const at::Tensor& in, const at::Tensor& out, const at::Tensor& idx,
                        const Geo& g, int spatial) {
  if (out.numel() == 0) return;
  const int device = in.device().index();
  KernelLaunch l(
      get_kernel(device, "pool.cl", "pool_max_forward", options(in.scalar_type(), device)));
  push_geo(l, out.numel(), g);
  push_tensor(l, in, spatial);
  push_tensor(l, out, spatial);
  push_tensor(l, idx, spatial);
  enqueue_result(l, device, out.numel(), g.OH, g.OW);
}

void launch_max_backward(const at::Tensor& go, const at::Tensor& idx, const at::Tensor& gi,
                         const Geo& g, int spatial) {
  if (gi.numel() == 0) return;
  const int device = gi.device().index();
  TORCH_CHECK(idx.scalar_type() == at::kLong && idx.device() == gi.device(),
              "max pooling backward: expected int64 indices on ", gi.device());
  const at::Tensor gr = go.scalar_type() == gi.scalar_type() ? go : go.to(gi.scalar_type());
  // Windows that do not overlap (the usual 2x2 stride 2): zero, then a scatter from the outputs.
  bool disjoint = !g.adaptive;
  for (int i = 0; i < 3; ++i) disjoint = disjoint && g.d[i] == 1 && g.k[i] <= g.s[i];
  if (disjoint) {
    gi.zero_();
    if (go.numel() == 0) return;
    KernelLaunch l(get_kernel(device, "pool.cl", "pool_max_backward_scatter",
                              options(gi.scalar_type(), device)));
    push_geo(l, go.numel(), g);
    push_tensor(l, gr, spatial);
    push_tensor(l, idx, spatial);
    push_tensor(l, gi, spatial);
    enqueue_result(l, device, go.numel(), g.OH, g.OW);
    return;
  }
  KernelLaunch l(
      get_kernel(device, "pool.cl", "pool_max_backward", options(gi.scalar_type(), device)));
  push_geo(l, gi.numel(), g);
  push_tensor(l, gr, spatial);
  push_tensor(l, idx, spatial);
  push_tensor(l, gi, spatial);
  enqueue_result(l, device, gi.numel(), g.H, g.W);
}

void launch_avg_forward(const at::Tensor& in, const at::Tensor& out, const Geo& g, int spatial,
                        bool count_include_pad, std::optional<int64_t> divisor) {
  if (out.numel() == 0) return;
  const int device = in.device().index();
  KernelLaunch l(
      get_kernel(device, "pool.cl", "pool_avg_forward", options(in.scalar_type(), device)));
  push_geo(l, out.numel(), g);
  l.arg(static_cast<cl_int>(count_include_pad)).arg(static_cast<cl_long>(divisor.value_or(0)));
  push_tensor(l, in, spatial);
  push_tensor(l, out, spatial);
  enqueue_result(l, device, out.numel(), g.OH, g.OW);
}

void launch_avg_backward(const at::Tensor& go, const at::Tensor& gi, const Geo& g, int spatial,
                         bool count_include_pad, std::optional<int64_t> divisor) {
  if (gi.numel() == 0) return;
  const int device = gi.device().index();
  const at::Tensor gr = go.scalar_type() == gi.scalar_type() ? go : go.to(gi.scalar_type());
  KernelLaunch l(
      get_kernel(device, "pool.cl", "pool_avg_backward", options(gi.scalar_type(), device)));
  push_geo(l, gi.numel(), g);
  l.arg(static_cast<cl_int>(count_include_pad)).arg(static_cast<cl_long>(divisor.value_or(0)));
  push_tensor(l, gr, spatial);
  push_tensor(l, gi, spatial);
  enqueue_result(l, device, gi.numel(), g.H, g.W);
}

// ---------------------------------------------------------------------------------------------
// max_pool2d_with_indices

std::tuple<at::Tensor&, at::Tensor&> max_pool2d_out(const at::Tensor& self, at::IntArrayRef k,
                                                    at::IntArrayRef s, at::IntArrayRef p,
                                                    at::IntArrayRef d, bool ceil_mode,
                                                    at::Tensor& out, at::Tensor& idx) {
  auto [mo, mi] = at::max_pool2d_with_indices(meta_like(self), k, s, p, d, ceil_mode);
  const at::Tensor w = working_out(out, mo, {&self}), wi = working_out(idx, mi, {&self});
  launch_max_forward(self, w, wi, geo_of(k, s, p, d, 2, self, w), 2);
  finish_out(out, w);
  finish_out(idx, wi);
  return {out, idx};
}

std::tuple<at::Tensor, at::Tensor> max_pool2d(const at::Tensor& self, at::IntArrayRef k,
                                              at::IntArrayRef s, at::IntArrayRef p,
                                              at::IntArrayRef d, bool ceil_mode) {
  auto [mo, mi] = at::max_pool2d_with_indices(meta_like(self), k, s, p, d, ceil_mode);
  at::Tensor out = like_meta(mo, self), idx = like_meta(mi, self);
  launch_max_forward(self, out, idx, geo_of(k, s, p, d, 2, self, out), 2);
  return {out, idx};
}

at::Tensor& max_pool2d_backward_out(const at::Tensor& go, const at::Tensor& self, at::IntArrayRef k,
                                    at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                                    bool ceil_mode, const at::Tensor& idx, at::Tensor& gi) {
  const at::Tensor m = at::max_pool2d_with_indices_backward(meta_like(go), meta_like(self), k, s, p,
                                                            d, ceil_mode, meta_like(idx));
  const at::Tensor w = working_out(gi, m, {&go, &self, &idx});
  launch_max_backward(go, idx, w, geo_of(k, s, p, d, 2, self, go), 2);
  finish_out(gi, w);
  return gi;
}

at::Tensor max_pool2d_backward(const at::Tensor& go, const at::Tensor& self, at::IntArrayRef k,
                               at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                               bool ceil_mode, const at::Tensor& idx) {
  const at::Tensor m = at::max_pool2d_with_indices_backward(meta_like(go), meta_like(self), k, s, p,
                                                            d, ceil_mode, meta_like(idx));
  at::Tensor gi = like_meta(m, self);
  launch_max_backward(go, idx, gi, geo_of(k, s, p, d, 2, self, go), 2);
  return gi;
}

// ---------------------------------------------------------------------------------------------
// max_pool3d_with_indices (not structured in ATen: the CPU's checks with Pool.h's helpers)

struct Pool3dArgs {
  int kT, kH, kW, dT, dH, dW, pT, pH, pW, dilT, dilH, dilW;
};

Pool3dArgs pool3d_args(at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d) {
  TORCH_CHECK(k.size() == 1 || k.size() == 3,
              "max_pool3d: kernel_size must either be a single int, or a tuple of three ints")
  TORCH_CHECK(s.empty() || s.size() == 1 || s.size() == 3,
              "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints")
  TORCH_CHECK(p.size() == 1 || p.size() == 3,
              "max_pool3d: padding must either be a single int, or a tuple of three ints");
  TORCH_CHECK(d.size() == 1 || d.size() == 3,
              "max_pool3d: dilation must be either a single int, or a tuple of three ints");
  using at::native::safe_downcast;
  Pool3dArgs a;
  a.kT = safe_downcast<int, int64_t>(k[0]);
  a.kH = k.size() == 1 ? a.kT : safe_downcast<int, int64_t>(k[1]);
  a.kW = k.size() == 1 ? a.kT : safe_downcast<int, int64_t>(k[2]);
  a.dT = s.empty() ? a.kT : safe_downcast<int, int64_t>(s[0]);
  a.dH = s.empty() ? a.kH : s.size() == 1 ? a.dT : safe_downcast<int, int64_t>(s[1]);
  a.dW = s.empty() ? a.kW : s.size() == 1 ? a.dT : safe_downcast<int, int64_t>(s[2]);
  a.pT = safe_downcast<int, int64_t>(p[0]);
  a.pH = p.size() == 1 ? a.pT : safe_downcast<int, int64_t>(p[1]);
  a.pW = p.size() == 1 ? a.pT : safe_downcast<int, int64_t>(p[2]);
  a.dilT = safe_downcast<int, int64_t>(d[0]);
  a.dilH = d.size() == 1 ? a.dilT : safe_downcast<int, int64_t>(d[1]);
  a.dilW = d.size() == 1 ? a.dilT : safe_downcast<int, int64_t>(d[2]);
  return a;
}

std::vector<int64_t> max_pool3d_out_sizes(const at::Tensor& self, const Pool3dArgs& a,
                                          bool ceil_mode, const char* fn) {
  TORCH_CHECK(self.ndimension() == 4 || self.ndimension() == 5,
              "non-empty 4D or 5D (batch mode) tensor expected for input");
  const int64_t nslices = self.size(-4), it = self.size(-3), ih = self.size(-2), iw = self.size(-1);
  using at::native::pooling_output_shape;
  const int64_t ot = pooling_output_shape<int64_t>(it, a.kT, a.pT, a.dT, a.dilT, ceil_mode);
  const int64_t oh = pooling_output_shape<int64_t>(ih, a.kH, a.pH, a.dH, a.dilH, ceil_mode);
  const int64_t ow = pooling_output_shape<int64_t>(iw, a.kW, a.pW, a.dW, a.dilW, ceil_mode);
  at::native::pool3d_shape_check(self, nslices, a.kT, a.kH, a.kW, a.dT, a.dH, a.dW, a.pT, a.pH,
                                 a.pW, a.dilT, a.dilH, a.dilW, it, ih, iw, ot, oh, ow, fn);
  if (self.ndimension() == 4) return {nslices, ot, oh, ow};
  return {self.size(0), nslices, ot, oh, ow};
}

Geo geo3d(const Pool3dArgs& a, const at::Tensor& in, const at::Tensor& out, bool adaptive) {
  Geo g;
  g.k[0] = a.kT, g.k[1] = a.kH, g.k[2] = a.kW;
  g.s[0] = a.dT, g.s[1] = a.dH, g.s[2] = a.dW;
  g.p[0] = a.pT, g.p[1] = a.pH, g.p[2] = a.pW;
  g.d[0] = a.dilT, g.d[1] = a.dilH, g.d[2] = a.dilW;
  extents(in, 3, &g.C, &g.T, &g.H, &g.W);
  int64_t c;
  extents(out, 3, &c, &g.OT, &g.OH, &g.OW);
  g.adaptive = adaptive;
  return g;
}

// The CPU's layout for 3-d pooling results: channels_last_3d for such 5-d inputs.
at::MemoryFormat format3d(const at::Tensor& self) {
  return self.ndimension() == 5 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous;
}

std::tuple<at::Tensor&, at::Tensor&> max_pool3d_out(const at::Tensor& self, at::IntArrayRef k,
                                                    at::IntArrayRef s, at::IntArrayRef p,
                                                    at::IntArrayRef d, bool ceil_mode,
                                                    at::Tensor& out, at::Tensor& idx) {
  const Pool3dArgs a = pool3d_args(k, s, p, d);
  const auto sizes = max_pool3d_out_sizes(self, a, ceil_mode, "max_pool3d_with_indices()");
  // The CPU's checks and words for the outputs of this unstructured op.
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(),
              " but found ", out.scalar_type());
  TORCH_CHECK(idx.scalar_type() == at::kLong, "expected scalar type Long but found ",
              idx.scalar_type());
  out.resize_(sizes, format3d(self));
  idx.resize_(sizes, format3d(self));
  launch_max_forward(self, out, idx, geo3d(a, self, out, false), 3);
  return {out, idx};
}

std::tuple<at::Tensor, at::Tensor> max_pool3d(const at::Tensor& self, at::IntArrayRef k,
                                              at::IntArrayRef s, at::IntArrayRef p,
                                              at::IntArrayRef d, bool ceil_mode) {
  at::Tensor out = at::empty({0}, self.options());
  at::Tensor idx = at::empty({0}, self.options().dtype(at::kLong));
  max_pool3d_out(self, k, s, p, d, ceil_mode, out, idx);
  return {out, idx};
}

at::Tensor& max_pool3d_backward_out(const at::Tensor& go, const at::Tensor& self, at::IntArrayRef k,
                                    at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                                    bool ceil_mode, const at::Tensor& idx, at::Tensor& gi) {
  const Pool3dArgs a = pool3d_args(k, s, p, d);
  const auto sizes = max_pool3d_out_sizes(self, a, ceil_mode, "max_pool3d_with_indices_backward()");
  TORCH_CHECK(go.sizes() == at::IntArrayRef(sizes), "max_pool3d_with_indices_backward: expected ",
              "grad_output of size ", at::IntArrayRef(sizes), ", got ", go.sizes());
  TORCH_CHECK(idx.sizes() == go.sizes(), "max_pool3d_with_indices_backward: expected indices of ",
              "size ", go.sizes(), ", got ", idx.sizes());
  TORCH_CHECK(gi.scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(),
              " but found ", gi.scalar_type());
  gi.resize_(self.sizes(), format3d(self));
  launch_max_backward(go, idx, gi, geo3d(a, self, go, false), 3);
  return gi;
}

at::Tensor max_pool3d_backward(const at::Tensor& go, const at::Tensor& self, at::IntArrayRef k,
                               at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                               bool ceil_mode, const at::Tensor& idx) {
  at::Tensor gi = at::empty({0}, self.options());
  return max_pool3d_backward_out(go, self, k, s, p, d, ceil_mode, idx, gi);
}

// ---------------------------------------------------------------------------------------------
// avg_pool2d / avg_pool3d

template <int kSpatial>
at::Tensor avg_meta(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                    bool ceil_mode, bool cip, std::optional<int64_t> div) {
  if constexpr (kSpatial == 2) {
    return at::avg_pool2d(meta_like(self), k, s, p, ceil_mode, cip, div);
  } else {
    return at::avg_pool3d(meta_like(self), k, s, p, ceil_mode, cip, div);
  }
}

template <int kSpatial>
at::Tensor avg_backward_meta(const at::Tensor& go, const at::Tensor& self, at::IntArrayRef k,
                             at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode, bool cip,
                             std::optional<int64_t> div) {
  if constexpr (kSpatial == 2) {
    return at::avg_pool2d_backward(meta_like(go), meta_like(self), k, s, p, ceil_mode, cip, div);
  } else {
    return at::avg_pool3d_backward(meta_like(go), meta_like(self), k, s, p, ceil_mode, cip, div);
  }
}

template <int kSpatial>
at::Tensor& avg_pool_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                         at::IntArrayRef p, bool ceil_mode, bool cip, std::optional<int64_t> div,
                         at::Tensor& out) {
  const at::Tensor m = avg_meta<kSpatial>(self, k, s, p, ceil_mode, cip, div);
  const at::Tensor w = working_out(out, m, {&self});
  launch_avg_forward(self, w, geo_of(k, s, p, {}, kSpatial, self, w), kSpatial, cip, div);
  finish_out(out, w);
  return out;
}

template <int kSpatial>
at::Tensor avg_pool(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                    bool ceil_mode, bool cip, std::optional<int64_t> div) {
  at::Tensor out = like_meta(avg_meta<kSpatial>(self, k, s, p, ceil_mode, cip, div), self);
  launch_avg_forward(self, out, geo_of(k, s, p, {}, kSpatial, self, out), kSpatial, cip, div);
  return out;
}

template <int kSpatial>
at::Tensor& avg_pool_backward_out(const at::Tensor& go, const at::Tensor& self, at::IntArrayRef k,
                                  at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode, bool cip,
                                  std::optional<int64_t> div, at::Tensor& gi) {
  const at::Tensor m = avg_backward_meta<kSpatial>(go, self, k, s, p, ceil_mode, cip, div);
  const at::Tensor w = working_out(gi, m, {&go, &self});
  launch_avg_backward(go, w, geo_of(k, s, p, {}, kSpatial, self, go), kSpatial, cip, div);
  finish_out(gi, w);
  return gi;
}

template <int kSpatial>
at::Tensor avg_pool_backward(const at::Tensor& go, const at::Tensor& self, at::IntArrayRef k,
                             at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode, bool cip,
                             std::optional<int64_t> div) {
  at::Tensor gi =
      like_meta(avg_backward_meta<kSpatial>(go, self, k, s, p, ceil_mode, cip, div), self);
  launch_avg_backward(go, gi, geo_of(k, s, p, {}, kSpatial, self, go), kSpatial, cip, div);
  return gi;
}

// ---------------------------------------------------------------------------------------------
// Adaptive pooling 2-d and 3-d

Geo adaptive_geo(const at::Tensor& in, const at::Tensor& out, int spatial) {
  Geo g = geo_of({1}, {1}, {0}, {1}, spatial, in, out);
  g.adaptive = 1;
  return g;
}

// The CPU's checks of _adaptive_avg_pool2d/3d (adaptive_avg_pool{2,3}d_out_cpu_template).
template <int kSpatial>
void adaptive_avg_check(const at::Tensor& input, c10::SymIntArrayRef output_size) {
  const char* name = kSpatial == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  TORCH_CHECK(output_size.size() == kSpatial, name, ": output_size must be ", kSpatial);
  const int64_t ndim = input.dim();
  TORCH_CHECK((ndim == kSpatial + 1 || ndim == kSpatial + 2), name, "(): Expected ", kSpatial + 1,
              "D or ", kSpatial + 2, "D tensor, but got ", input.sizes());
  for (int64_t i = ndim - kSpatial; i < ndim; ++i) {
    TORCH_CHECK(input.size(i) > 0, name,
                "(): Expected input to have non-zero size for non-batch "
                "dimensions, but input has sizes ",
                input.sizes(), " with dimension ", i, " being empty");
  }
}

template <int kSpatial>
at::Tensor& adaptive_avg_pool_out(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                  at::Tensor& out) {
  adaptive_avg_check<kSpatial>(self, output_size);
  TORCH_CHECK(self.dtype() == out.dtype(), "expected dtype ", self.dtype(),
              " for `output` but got dtype ", out.dtype());
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  for (int i = 0; i < kSpatial; ++i) {
    sizes[sizes.size() - kSpatial + i] = output_size[i].expect_int();
  }
  // The CPU's layouts: 2-d keeps the input's memory format, 3-d is contiguous.
  out.resize_(sizes, kSpatial == 2 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous);
  if (out.numel() == 0) return out;
  launch_avg_forward(self, out, adaptive_geo(self, out, kSpatial), kSpatial, true, std::nullopt);
  return out;
}

template <int kSpatial>
at::Tensor adaptive_avg_pool(const at::Tensor& self, c10::SymIntArrayRef output_size) {
  at::Tensor out = at::empty({0}, self.options());
  return adaptive_avg_pool_out<kSpatial>(self, output_size, out);
}

template <int kSpatial>
at::Tensor adaptive_avg_pool_backward(const at::Tensor& go, const at::Tensor& self) {
  const char* name =
      kSpatial == 2 ? "adaptive_avg_pool2d_backward" : "adaptive_avg_pool3d_backward";
  at::native::adaptive_pool_empty_output_check(go, name);
  const int64_t ndim = go.ndimension();
  TORCH_CHECK((ndim == kSpatial + 1 || ndim == kSpatial + 2), name, "(): Expected ", kSpatial + 1,
              "D or ", kSpatial + 2, "D tensor, but got ", self.sizes());
  TORCH_CHECK(self.dtype() == go.dtype(), "expected dtype ", self.dtype(),
              " for `grad_output` but got dtype ", go.dtype());
  at::Tensor gi = at::empty(
      self.sizes(), self.options().memory_format(kSpatial == 2 ? self.suggest_memory_format()
                                                               : at::MemoryFormat::Contiguous));
  launch_avg_backward(go, gi, adaptive_geo(self, go, kSpatial), kSpatial, true, std::nullopt);
  return gi;
}

// ATen's meta functions of the structured adaptive max pools.
template <int kSpatial>
std::tuple<at::Tensor, at::Tensor> adaptive_max_meta(const at::Tensor& self,
                                                     at::IntArrayRef output_size) {
  if constexpr (kSpatial == 2) return at::adaptive_max_pool2d(meta_like(self), output_size);
  return at::adaptive_max_pool3d(meta_like(self), output_size);
}

template <int kSpatial>
at::Tensor adaptive_max_backward_meta(const at::Tensor& go, const at::Tensor& self,
                                      const at::Tensor& idx) {
  if constexpr (kSpatial == 2) {
    return at::adaptive_max_pool2d_backward(meta_like(go), meta_like(self), meta_like(idx));
  }
  return at::adaptive_max_pool3d_backward(meta_like(go), meta_like(self), meta_like(idx));
}

template <int kSpatial>
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool_out(const at::Tensor& self,
                                                           at::IntArrayRef output_size,
                                                           at::Tensor& out, at::Tensor& idx) {
  auto [mo, mi] = adaptive_max_meta<kSpatial>(self, output_size);
  const at::Tensor w = working_out(out, mo, {&self}), wi = working_out(idx, mi, {&self});
  launch_max_forward(self, w, wi, adaptive_geo(self, w, kSpatial), kSpatial);
  finish_out(out, w);
  finish_out(idx, wi);
  return {out, idx};
}

template <int kSpatial>
std::tuple<at::Tensor, at::Tensor> adaptive_max_pool(const at::Tensor& self,
                                                     at::IntArrayRef output_size) {
  auto [mo, mi] = adaptive_max_meta<kSpatial>(self, output_size);
  at::Tensor out = like_meta(mo, self), idx = like_meta(mi, self);
  launch_max_forward(self, out, idx, adaptive_geo(self, out, kSpatial), kSpatial);
  return {out, idx};
}

template <int kSpatial>
at::Tensor& adaptive_max_pool_backward_out(const at::Tensor& go, const at::Tensor& self,
                                           const at::Tensor& idx, at::Tensor& gi) {
  const at::Tensor m = adaptive_max_backward_meta<kSpatial>(go, self, idx);
  const at::Tensor w = working_out(gi, m, {&go, &self, &idx});
  launch_max_backward(go, idx, w, adaptive_geo(self, go, kSpatial), kSpatial);
  finish_out(gi, w);
  return gi;
}

template <int kSpatial>
at::Tensor adaptive_max_pool_backward(const at::Tensor& go, const at::Tensor& self,
                                      const at::Tensor& idx) {
  const at::Tensor m = adaptive_max_backward_meta<kSpatial>(go, self, idx);
  at::Tensor gi = like_meta(m, self);
  launch_max_backward(go, idx, gi, adaptive_geo(self, go, kSpatial), kSpatial);
  return gi;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool2d_with_indices", max_pool2d);
  m.impl("max_pool2d_with_indices.out", max_pool2d_out);
  m.impl("max_pool2d_with_indices_backward", max_pool2d_backward);
  m.impl("max_pool2d_with_indices_backward.grad_input", max_pool2d_backward_out);
  m.impl("max_pool3d_with_indices", max_pool3d);
  m.impl("max_pool3d_with_indices.out", max_pool3d_out);
  m.impl("max_pool3d_with_indices_backward", max_pool3d_backward);
  m.impl("max_pool3d_with_indices_backward.grad_input", max_pool3d_backward_out);
  m.impl("avg_pool2d", avg_pool<2>);
  m.impl("avg_pool2d.out", avg_pool_out<2>);
  m.impl("avg_pool2d_backward", avg_pool_backward<2>);
  m.impl("avg_pool2d_backward.grad_input", avg_pool_backward_out<2>);
  m.impl("avg_pool3d", avg_pool<3>);
  m.impl("avg_pool3d.out", avg_pool_out<3>);
  m.impl("avg_pool3d_backward", avg_pool_backward<3>);
  m.impl("avg_pool3d_backward.grad_input", avg_pool_backward_out<3>);
  m.impl("_adaptive_avg_pool2d", adaptive_avg_pool<2>);
  m.impl("_adaptive_avg_pool2d_backward", adaptive_avg_pool_backward<2>);
  m.impl("_adaptive_avg_pool3d", adaptive_avg_pool<3>);
  m.impl("_adaptive_avg_pool3d_backward", adaptive_avg_pool_backward<3>);
  m.impl("adaptive_max_pool2d", adaptive_max_pool<2>);
  m.impl("adaptive_max_pool2d.out", adaptive_max_pool_out<2>);
  m.impl("adaptive_max_pool2d_backward", adaptive_max_pool_backward<2>);
  m.impl("adaptive_max_pool2d_backward.grad_input", adaptive_max_pool_backward_out<2>);
  m.impl("adaptive_max_pool3d", adaptive_max_pool<3>);
  m.impl("adaptive_max_pool3d.out", adaptive_max_pool_out<3>);
  m.impl("adaptive_max_pool3d_backward", adaptive_max_pool_backward<3>);
  m.impl("adaptive_max_pool3d_backward.grad_input", adaptive_max_pool_backward_out<3>);
}

}  // namespace torch_ocl
