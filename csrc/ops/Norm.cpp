// Batch, layer and group normalisation on the device with kernels/norm.cl: native_batch_norm
// (+ the _native_batch_norm_legit / _batch_norm_with_update forms), native_layer_norm,
// native_group_norm and their backwards.
//
// Statistics are computed in float (double for double data) by a two-pass reduction per row
// and kept in that precision for the normalisation itself; the mean/rstd results are converted
// to the dtypes the CPU returns (the parameters' float for half/bfloat16 inputs with float
// parameters, ATen's mixed-type rule, else the input's dtype). Checks use ATen's helpers
// (layer_norm.h's _check_layer_norm_inputs, mixed_data_type.h). No host waits.
#include <ATen/native/cpu/mixed_data_type.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <string>

#include "ops/ColumnSplit.h"
#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

// Work-group size of the row kernels (norm_stats, norm_sums; norm_apply and norm_dx's bound)
// and of the channel-tile sums, within the device's limit.
size_t row_lws(int device) { return device_profile(device).fit_lws(128); }
size_t tile_lws(int device) { return device_profile(device).fit_lws(256); }

// How a row of `cnt` elements in Q chunks (norm.cl's CHUNK_RANGE_BEGIN) is shared: among
// `groups` work-groups of `qchunk` chunks each when the rows are too few to fill the device
// (the profile's reduce_fill_groups and reduce_split_chunk, as the reductions of Reduce.cpp).
struct Split {
  uint64_t groups, qchunk;
};
Split split_rows(int device, int64_t rows, uint64_t cnt, uint64_t Q) {
  const DeviceProfile& prof = device_profile(device);
  const uint64_t fill = static_cast<uint64_t>(prof.reduce_fill_groups);
  const uint64_t chunk = static_cast<uint64_t>(prof.reduce_split_chunk);
  Split sp{1, std::max<uint64_t>(Q, 1)};
  if (static_cast<uint64_t>(rows) < fill / 4 && cnt >= 2 * chunk && Q > 1) {
    const uint64_t g = std::min<uint64_t>(
        (cnt + chunk - 1) / chunk, std::max<uint64_t>(1, fill / static_cast<uint64_t>(rows)));
    sp.qchunk = (Q + g - 1) / g;
    sp.groups = (Q + sp.qchunk - 1) / sp.qchunk;
  }
  return sp;
}

// The [N, C, S] view of kernels/norm.cl and its statistics rows.
struct Shape {
  int64_t N, C, S, G;
  bool per_channel;
  int64_t stat_rows() const { return per_channel ? C : N * G; }
  int64_t numel() const { return N * C * S; }
};

// A tensor with its [N, C, S] element strides.
struct View {
  at::Tensor t;
  int64_t sN, sC, sS;
};

// x as [N, C, S] with S flattening dims 2.. (contiguous or channels_last inputs). S's stride is
// that of the innermost spatial dim with more than one element: a size-1 dim's stride is
// arbitrary (x.contiguous() keeps a [.., 4, 1] tensor with strides [.., 1, 2] as it is), so it
// must not be the step between elements. Spatial dims that do not form one run (no layout the
// callers pass) are made contiguous first.
View ncs(const at::Tensor& t) {
  int64_t sS = 1, next = -1;
  bool one_run = true;
  for (int64_t d = t.dim() - 1; d >= 2; --d) {
    if (t.size(d) == 1) continue;
    if (next < 0) {
      sS = t.stride(d);
    } else if (t.stride(d) != next) {
      one_run = false;
    }
    next = (next < 0 ? sS : next) * t.size(d);
  }
  if (!one_run) return ncs(t.contiguous());
  return {t, t.stride(0), t.dim() > 1 ? t.stride(1) : 0, sS};
}

at::ScalarType acc_of(at::ScalarType t) { return t == at::kDouble ? at::kDouble : at::kFloat; }

struct Opts {
  at::ScalarType x, stat = at::ScalarType::Undefined, w = at::ScalarType::Undefined,
                    run = at::ScalarType::Undefined;
  bool has_w = false, has_b = false, var_in = false;
  size_t tx = 0;  // norm_col_sums' channels per work-group (0: not that kernel)
  std::string str(int device) const {
    std::string s =
        std::string("-DX_T=") + type_tag(x, device) + " -DACC_T=" + type_tag(acc_of(x), device);
    if (stat != at::ScalarType::Undefined) s += std::string(" -DSTAT_T=") + type_tag(stat, device);
    if (w != at::ScalarType::Undefined) s += std::string(" -DW_T=") + type_tag(w, device);
    if (run != at::ScalarType::Undefined)
      s += std::string(" -DRUNNING -DRUN_T=") + type_tag(run, device);
    if (has_w) s += " -DHAS_W";
    if (has_b) s += " -DHAS_B";
    if (var_in) s += " -DVAR_IN";
    if (tx) return s + " -DTX=" + std::to_string(tx) + " -DLWS=" + std::to_string(tile_lws(device));
    return s + " -DLWS=" + std::to_string(row_lws(device));
  }
};

void push_shape(KernelLaunch& l, const Shape& s) {
  l.arg(static_cast<cl_long>(s.N)).arg(static_cast<cl_long>(s.C));
  l.arg(static_cast<cl_long>(s.S)).arg(static_cast<cl_long>(s.G));
  l.arg(static_cast<cl_int>(s.per_channel));
}
void push_acc(KernelLaunch& l, double v, at::ScalarType x) {
  if (acc_of(x) == at::kDouble) {
    l.arg(static_cast<cl_double>(v));
  } else {
    l.arg(static_cast<cl_float>(v));
  }
}
void push_view(KernelLaunch& l, const View& v) {
  l.buffer(buffer_of(v.t), v.t.itemsize());
  l.arg(static_cast<cl_long>(v.sN)).arg(static_cast<cl_long>(v.sC)).arg(static_cast<cl_long>(v.sS));
}
// An optional tensor argument (a dummy buffer when absent: the kernel does not read it).
void push_opt(KernelLaunch& l, const at::Tensor& t, const at::Tensor& dummy) {
  const at::Tensor& u = t.defined() ? t : dummy;
  l.buffer(buffer_of(u), u.itemsize());
}

const at::Tensor& value_or_undef(const std::optional<at::Tensor>& t) {
  static const at::Tensor undef;
  return t && t->defined() ? *t : undef;
}

// norm.cl's channel-tile kernels (norm_col_stats, norm_col_sums) for a tensor whose channels are
// the contiguous dim and whose other elements form uniform rows q < nq (q = n*S + s): batch norm
// channels-last or [N, C], layer norm's by-channel sums. tx = 0: not applicable here (CPU
// profile, another layout, or group statistics with spatial positions).
struct ChannelTiles {
  size_t tx = 0, ty = 0;
  uint64_t nq = 0, groups = 1, qchunk = 1;
  int64_t xq = 0, dyq = 0;
  void enqueue(KernelLaunch& l, int device, int64_t C) const {
    const size_t global[2] = {(static_cast<size_t>(C) + tx - 1) / tx * tx, groups * ty};
    const size_t local[2] = {tx, ty};
    l.enqueue(device, 2, global, local);
  }
};
ChannelTiles channel_tiles(int device, const Shape& s, const View& x, const View& dy) {
  const DeviceProfile& prof = device_profile(device);
  ChannelTiles ct;
  const bool uniform = s.S == 1 || (x.sN == s.S * x.sS && dy.sN == s.S * dy.sS);
  if (prof.reduce_col_tile <= 0 || x.sC != 1 || dy.sC != 1 || !(s.per_channel || s.S == 1) ||
      !uniform)
    return ct;
  const size_t lws = tile_lws(device);
  ct.tx = std::min<size_t>(static_cast<size_t>(prof.reduce_col_tile), lws);
  ct.ty = lws / ct.tx;
  ct.nq = static_cast<uint64_t>(s.N * s.S);
  ct.xq = s.S == 1 ? x.sN : x.sS;
  ct.dyq = s.S == 1 ? dy.sN : dy.sS;
  const ColumnSplit split =
      column_split(prof, (static_cast<uint64_t>(s.C) + ct.tx - 1) / ct.tx, ct.nq, ct.ty);
  ct.groups = split.groups;
  ct.qchunk = split.chunk;
  return ct;
}

// mean and rstd (ACC dtype, one per statistics row); updates running stats when given.
std::pair<at::Tensor, at::Tensor> stats(const View& x, const Shape& s, double eps,
                                        const at::Tensor& rm = {}, const at::Tensor& rv = {},
                                        double momentum = 0) {
  const int device = x.t.device().index();
  const at::ScalarType acc = acc_of(x.t.scalar_type());
  at::Tensor mean = at::empty({s.stat_rows()}, x.t.options().dtype(acc));
  at::Tensor rstd = at::empty({s.stat_rows()}, x.t.options().dtype(acc));
  if (s.stat_rows() == 0) return {mean, rstd};
  Opts o{x.t.scalar_type()};
  const bool running = rm.defined() && rv.defined();
  at::Tensor rmc, rvc;
  if (running) {
    TORCH_CHECK(rm.scalar_type() == rv.scalar_type(),
                "batch_norm: running_mean and running_var must have the same dtype");
    o.run = rm.scalar_type();
    rmc = rm.contiguous();
    rvc = rv.contiguous();
  }
  const int64_t spt = device_profile(device).stream_chunk;
  const int64_t rows_t = s.per_channel ? s.N : s.C / s.G;
  const uint64_t Q = static_cast<uint64_t>(rows_t) * std::max<int64_t>((s.S + spt - 1) / spt, 1);
  // Batch norm with the channels contiguous (channels-last, or [N, C]) on GPUs: channel tiles.
  const ChannelTiles ct = s.per_channel ? channel_tiles(device, s, x, x) : ChannelTiles{};
  const Split sp = ct.tx
                       ? Split{ct.groups, ct.qchunk}
                       : split_rows(device, s.stat_rows(), static_cast<uint64_t>(rows_t * s.S), Q);
  // A split row leaves (mean, sum of squared deviations, count) per part for norm_stats_merge.
  at::Tensor part;
  if (sp.groups > 1)
    part = at::empty({3, s.stat_rows() * static_cast<int64_t>(sp.groups)}, mean.options());
  auto push_running = [&](KernelLaunch& l) {
    if (!running) return;
    push_acc(l, momentum, x.t.scalar_type());
    l.buffer(buffer_of(rmc), rmc.itemsize()).buffer(buffer_of(rvc), rvc.itemsize());
  };
  const size_t lws = row_lws(device);
  Opts col = o;
  col.tx = ct.tx;
  KernelLaunch l(get_kernel(device, "norm.cl", ct.tx ? "norm_col_stats" : "norm_stats",
                            (ct.tx ? col : o).str(device)));
  push_shape(l, s);
  if (ct.tx) {
    l.arg(static_cast<cl_ulong>(ct.nq)).arg(static_cast<cl_long>(ct.xq));
  } else {
    l.arg(static_cast<cl_int>(spt));
  }
  push_acc(l, eps, x.t.scalar_type());
  push_view(l, x);
  const at::Tensor& m_out = sp.groups > 1 ? part[0] : mean;
  const at::Tensor& r_out = sp.groups > 1 ? part[1] : rstd;
  const at::Tensor& n_out = sp.groups > 1 ? part[2] : mean;
  l.buffer(buffer_of(m_out), m_out.itemsize()).buffer(buffer_of(r_out), r_out.itemsize());
  l.arg(static_cast<cl_ulong>(sp.groups)).arg(static_cast<cl_ulong>(sp.qchunk));
  l.buffer(buffer_of(n_out), n_out.itemsize());
  push_running(l);
  if (ct.tx) {
    ct.enqueue(l, device, s.C);
  } else {
    l.enqueue1d(device, s.stat_rows() * sp.groups * lws, lws);
  }
  if (sp.groups > 1) {
    KernelLaunch merge(get_kernel(device, "norm.cl", "norm_stats_merge", o.str(device)));
    merge.arg(static_cast<cl_ulong>(sp.groups));
    push_acc(merge, eps, x.t.scalar_type());
    for (int i = 0; i < 3; ++i) merge.buffer(buffer_of(part[i]), part.itemsize());
    merge.buffer(buffer_of(mean), mean.itemsize()).buffer(buffer_of(rstd), rstd.itemsize());
    push_running(merge);
    merge.enqueue1d(device, s.stat_rows() * lws, lws);
  }
  if (running && !rmc.is_same(rm)) rm.copy_(rmc);
  if (running && !rvc.is_same(rv)) rv.copy_(rvc);
  return {mean, rstd};
}

// y = (x - mean) * rstd * w + b; mean/rstd in their own dtype (var_in: rstd holds a variance).
void apply(const View& x, const Shape& s, double eps, const at::Tensor& mean,
           const at::Tensor& rstd, bool var_in, const at::Tensor& w, const at::Tensor& b,
           const View& y) {
  if (s.numel() == 0) return;
  const int device = x.t.device().index();
  Opts o{x.t.scalar_type(), mean.scalar_type()};
  o.var_in = var_in;
  o.has_w = w.defined();
  o.has_b = b.defined();
  if (w.defined() || b.defined()) o.w = (w.defined() ? w : b).scalar_type();
  KernelLaunch l(get_kernel(device, "norm.cl", "norm_apply", o.str(device)));
  push_shape(l, s);
  const int64_t spt = static_cast<int64_t>(device_profile(device).stream_chunk);
  l.arg(static_cast<cl_int>(spt));
  push_acc(l, eps, x.t.scalar_type());
  push_view(l, x);
  l.buffer(buffer_of(mean), mean.itemsize()).buffer(buffer_of(rstd), rstd.itemsize());
  push_opt(l, w, mean);
  push_opt(l, b, mean);
  push_view(l, y);
  l.enqueue_grid(device, (s.S + spt - 1) / spt, s.C, s.N, row_lws(device));
}

// Per-row sums A = sum(w*dy), B = sum(w*dy*xhat) (ACC dtype): by_channel rows are channels,
// else the statistics rows.
std::pair<at::Tensor, at::Tensor> sums(const View& x, const View& dy, const Shape& s,
                                       bool by_channel, double eps, const at::Tensor& mean,
                                       const at::Tensor& rstd, bool var_in, const at::Tensor& w) {
  const int device = x.t.device().index();
  const int64_t rows = by_channel ? s.C : s.stat_rows();
  const at::ScalarType acc = acc_of(x.t.scalar_type());
  at::Tensor A = at::empty({rows}, x.t.options().dtype(acc));
  at::Tensor B = at::empty({rows}, x.t.options().dtype(acc));
  if (rows == 0) return {A, B};
  Opts o{x.t.scalar_type(), mean.scalar_type()};
  o.var_in = var_in;
  o.has_w = w.defined();
  if (w.defined()) o.w = w.scalar_type();
  const DeviceProfile& prof = device_profile(device);
  // Channels as the contiguous dim (layer norm's parameter gradients, channels-last batch norm)
  // on GPUs: channel tiles, neighbouring work-items on neighbouring channels.
  const ChannelTiles ct = by_channel ? channel_tiles(device, s, x, dy) : ChannelTiles{};
  if (ct.tx) {
    const uint64_t gs = ct.groups;
    at::Tensor P =
        gs > 1 ? at::empty({2, static_cast<int64_t>(gs), s.C}, A.options()) : at::Tensor();
    o.tx = ct.tx;
    KernelLaunch l(get_kernel(device, "norm.cl", "norm_col_sums", o.str(device)));
    push_shape(l, s);
    l.arg(static_cast<cl_ulong>(ct.nq));
    l.arg(static_cast<cl_long>(ct.xq)).arg(static_cast<cl_long>(ct.dyq));
    push_acc(l, eps, x.t.scalar_type());
    push_view(l, x);
    push_view(l, dy);
    l.buffer(buffer_of(mean), mean.itemsize()).buffer(buffer_of(rstd), rstd.itemsize());
    push_opt(l, w, mean);
    const at::Tensor& a_out = gs > 1 ? P[0] : A;
    const at::Tensor& b_out = gs > 1 ? P[1] : B;
    l.buffer(buffer_of(a_out), a_out.itemsize()).buffer(buffer_of(b_out), b_out.itemsize());
    l.arg(static_cast<cl_ulong>(gs)).arg(static_cast<cl_ulong>(ct.qchunk));
    ct.enqueue(l, device, s.C);
    if (gs == 1) return {A, B};
    const at::Tensor total = P.sum(1);  // [2, C]: a column reduction over the parts
    return {total[0], total[1]};
  }
  const int chan = by_channel || s.per_channel;
  const int64_t rows_t = chan ? s.N : s.C / s.G;
  const int64_t spt = prof.stream_chunk;
  const uint64_t Q = static_cast<uint64_t>(rows_t) * std::max<int64_t>((s.S + spt - 1) / spt, 1);
  const Split sp = split_rows(device, rows, static_cast<uint64_t>(rows_t * s.S), Q);
  at::Tensor P = sp.groups > 1 ? at::empty({2, rows, static_cast<int64_t>(sp.groups)}, A.options())
                               : at::Tensor();
  KernelLaunch l(get_kernel(device, "norm.cl", "norm_sums", o.str(device)));
  push_shape(l, s);
  l.arg(static_cast<cl_int>(spt));
  l.arg(static_cast<cl_int>(by_channel));
  push_acc(l, eps, x.t.scalar_type());
  push_view(l, x);
  push_view(l, dy);
  l.buffer(buffer_of(mean), mean.itemsize()).buffer(buffer_of(rstd), rstd.itemsize());
  push_opt(l, w, mean);
  const at::Tensor& a_out = sp.groups > 1 ? P[0] : A;
  const at::Tensor& b_out = sp.groups > 1 ? P[1] : B;
  l.buffer(buffer_of(a_out), a_out.itemsize()).buffer(buffer_of(b_out), b_out.itemsize());
  l.arg(static_cast<cl_ulong>(sp.groups)).arg(static_cast<cl_ulong>(sp.qchunk));
  const size_t lws = row_lws(device);
  l.enqueue1d(device, rows * sp.groups * lws, lws);
  if (sp.groups == 1) return {A, B};
  const at::Tensor total = P.sum(2);  // [2, rows]: the parts of each row
  return {total[0], total[1]};
}

void dx_kernel(const View& x, const View& dy, const Shape& s, bool use_sums, double eps,
               const at::Tensor& mean, const at::Tensor& rstd, bool var_in, const at::Tensor& w,
               const at::Tensor& A, const at::Tensor& B, const View& dx) {
  if (s.numel() == 0) return;
  const int device = x.t.device().index();
  Opts o{x.t.scalar_type(), mean.scalar_type()};
  o.var_in = var_in;
  o.has_w = w.defined();
  if (w.defined()) o.w = w.scalar_type();
  KernelLaunch l(get_kernel(device, "norm.cl", "norm_dx", o.str(device)));
  push_shape(l, s);
  const int64_t spt = static_cast<int64_t>(device_profile(device).stream_chunk);
  l.arg(static_cast<cl_int>(spt));
  l.arg(static_cast<cl_int>(use_sums));
  push_acc(l, eps, x.t.scalar_type());
  push_view(l, x);
  push_view(l, dy);
  l.buffer(buffer_of(mean), mean.itemsize()).buffer(buffer_of(rstd), rstd.itemsize());
  push_opt(l, w, mean);
  push_opt(l, A, mean);
  push_opt(l, B, mean);
  push_view(l, dx);
  l.enqueue_grid(device, (s.S + spt - 1) / spt, s.C, s.N, row_lws(device));
}

// ---------------------------------------------------------------------------------------------
// Batch norm

at::ScalarType bn_stat_dtype(const at::Tensor& input, const at::Tensor& w, const at::Tensor& b,
                             const at::Tensor& rm, const at::Tensor& rv) {
  const bool mixed = at::native::is_mixed_type(input, w, b, rm, rv);
  if (mixed) at::native::check_mixed_data_type(input, w, b, rm, rv);
  return at::native::param_scalar_type(input, mixed);
}

Shape bn_shape(const at::Tensor& x) {
  TORCH_CHECK(x.dim() >= 2, "batch_norm: expected an input with at least 2 dims, got ", x.sizes());
  const int64_t N = x.size(0), C = x.size(1);
  int64_t S = 1;
  for (int64_t d = 2; d < x.dim(); ++d) S *= x.size(d);
  return {N, C, S, C, true};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& w_opt,
    const std::optional<at::Tensor>& b_opt, const std::optional<at::Tensor>& rm_opt,
    const std::optional<at::Tensor>& rv_opt, bool training, double momentum, double eps) {
  const at::Tensor &w = value_or_undef(w_opt), &b = value_or_undef(b_opt);
  const at::Tensor &rm = value_or_undef(rm_opt), &rv = value_or_undef(rv_opt);
  const at::ScalarType stat_dt = bn_stat_dtype(input, w, b, rm, rv);
  const Shape s = bn_shape(input);
  const at::Tensor x = input.contiguous(input.suggest_memory_format());
  at::Tensor out = at::empty_like(x);
  const at::Tensor wc = w.defined() ? w.contiguous() : w, bc = b.defined() ? b.contiguous() : b;
  if (training) {
    auto [mean, rstd] = stats(ncs(x), s, eps, rm, rv, momentum);
    apply(ncs(x), s, eps, mean, rstd, false, wc, bc, ncs(out));
    return {out, mean.to(stat_dt), rstd.to(stat_dt)};
  }
  TORCH_CHECK(rm.defined() && rv.defined(),
              "batch_norm: running_mean and running_var must be defined in evaluation mode");
  apply(ncs(x), s, eps, rm.contiguous(), rv.contiguous(), true, wc, bc, ncs(out));
  return {out, at::empty({0}, input.options().dtype(stat_dt)),
          at::empty({0}, input.options().dtype(stat_dt))};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& w_opt,
    const std::optional<at::Tensor>& rm_opt, const std::optional<at::Tensor>& rv_opt,
    const std::optional<at::Tensor>& sm_opt, const std::optional<at::Tensor>& si_opt, bool train,
    double eps, std::array<bool, 3> mask) {
  const at::Tensor& w = value_or_undef(w_opt);
  const at::Tensor &rm = value_or_undef(rm_opt), &rv = value_or_undef(rv_opt);
  const at::Tensor &sm = value_or_undef(sm_opt), &si = value_or_undef(si_opt);
  const Shape s = bn_shape(input);
  const at::MemoryFormat mf = input.suggest_memory_format();
  const at::Tensor x = input.contiguous(mf), dy = grad_out.contiguous(mf);
  const at::Tensor wc = w.defined() ? w.contiguous() : w;
  TORCH_CHECK(train ? (sm.defined() && si.defined()) : (rm.defined() && rv.defined()),
              "batch_norm_backward: expected ",
              train ? "save_mean and save_invstd" : "running_mean and running_var");
  const at::Tensor mean = (train ? sm : rm).contiguous(), rstd = (train ? si : rv).contiguous();
  const bool var_in = !train;
  at::Tensor gi, gw, gb, A, B;
  if ((mask[0] && train) || mask[1] || mask[2]) {
    std::tie(A, B) = sums(ncs(x), ncs(dy), s, true, eps, mean, rstd, var_in, at::Tensor());
  }
  if (mask[0]) {
    gi = at::empty_like(x);
    dx_kernel(ncs(x), ncs(dy), s, train, eps, mean, rstd, var_in, wc, A, B, ncs(gi));
  }
  const at::ScalarType wdt = w.defined() ? w.scalar_type() : input.scalar_type();
  if (mask[1]) gw = B.to(wdt);
  if (mask[2]) gb = A.to(wdt);
  return {gi, gw, gb};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> bn_legit(
    const at::Tensor& input, const std::optional<at::Tensor>& w, const std::optional<at::Tensor>& b,
    at::Tensor& rm, at::Tensor& rv, bool training, double momentum, double eps) {
  return batch_norm(input, w, b, rm, rv, training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> bn_legit_no_stats(const at::Tensor& input,
                                                                 const std::optional<at::Tensor>& w,
                                                                 const std::optional<at::Tensor>& b,
                                                                 bool training, double momentum,
                                                                 double eps) {
  return batch_norm(input, w, b, std::nullopt, std::nullopt, training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> bn_with_update(
    const at::Tensor& input, const std::optional<at::Tensor>& w, const std::optional<at::Tensor>& b,
    at::Tensor& rm, at::Tensor& rv, double momentum, double eps) {
  auto [out, mean, rstd] = batch_norm(input, w, b, rm, rv, true, momentum, eps);
  return {out, mean, rstd, at::empty({0}, input.options().dtype(at::kByte))};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> bn_backward_new(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& w,
    const std::optional<at::Tensor>& rm, const std::optional<at::Tensor>& rv,
    const std::optional<at::Tensor>& sm, const std::optional<at::Tensor>& sv, bool update,
    double eps, std::array<bool, 3> mask, const at::Tensor& reserve) {
  return batch_norm_backward(grad_out, input, w, rm, rv, sm, sv, update, eps, mask);
}

// ---------------------------------------------------------------------------------------------
// Layer norm: the [M, K, 1] view, one statistics row per sample.

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm(const at::Tensor& input,
                                                          c10::SymIntArrayRef normalized_shape,
                                                          const std::optional<at::Tensor>& w_opt,
                                                          const std::optional<at::Tensor>& b_opt,
                                                          double eps) {
  const at::Tensor &w = value_or_undef(w_opt), &b = value_or_undef(b_opt);
  const auto shape = C10_AS_INTARRAYREF_SLOW(normalized_shape);
  const auto [M, K] = at::native::_check_layer_norm_inputs(input, shape, w, b);
  const bool mixed = at::native::is_mixed_type(input, w, b);
  if (mixed) at::native::check_mixed_data_type(input, w, b);
  const at::Tensor x = input.contiguous();
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  const Shape s{M, K, 1, 1, false};
  const View xv{x, K, 1, 0}, ov{out, K, 1, 0};
  auto [mean, rstd] = stats(xv, s, eps);
  apply(xv, s, eps, mean, rstd, false, w.defined() ? w.contiguous() : w,
        b.defined() ? b.contiguous() : b, ov);
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().end() - shape.size());
  stat_shape.resize(input.dim(), 1);
  const at::ScalarType stat_dt = at::native::param_scalar_type(input, mixed);
  return {out, mean.to(stat_dt).view(stat_shape), rstd.to(stat_dt).view(stat_shape)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
    const at::Tensor& mean, const at::Tensor& rstd, const std::optional<at::Tensor>& w_opt,
    const std::optional<at::Tensor>& b_opt, std::array<bool, 3> mask) {
  const at::Tensor &w = value_or_undef(w_opt), &b = value_or_undef(b_opt);
  const auto shape = C10_AS_INTARRAYREF_SLOW(normalized_shape);
  const auto [M, K] = at::native::_check_layer_norm_inputs(input, shape, w, b);
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  const at::Tensor mc = mean.contiguous(), rc = rstd.contiguous();
  const at::Tensor wc = w.defined() ? w.contiguous() : w;
  const Shape s{M, K, 1, 1, false};
  const View xv{x, K, 1, 0}, dv{dy, K, 1, 0};
  at::Tensor gi, gw, gb;
  if (mask[0]) {
    gi = at::empty_like(x, at::MemoryFormat::Contiguous);
    if (M > 0 && K > 0) {
      auto [A, B] = sums(xv, dv, s, false, 0, mc, rc, false, wc);
      dx_kernel(xv, dv, s, true, 0, mc, rc, false, wc, A, B, {gi, K, 1, 0});
    }
  }
  const bool want_w = mask[1] && w.defined(), want_b = mask[2] && b.defined();
  if (want_w || want_b) {
    at::Tensor A, B;
    if (M > 0) {
      std::tie(A, B) = sums(xv, dv, s, true, 0, mc, rc, false, at::Tensor());
    } else {
      A = at::zeros({K}, x.options().dtype(acc_of(x.scalar_type())));
      B = A;
    }
    if (want_w) gw = B.to(w.scalar_type()).view(w.sizes());
    if (want_b) gb = A.to(b.scalar_type()).view(b.sizes());
  }
  return {gi, gw, gb};
}

// ---------------------------------------------------------------------------------------------
// Group norm: [N, C, HxW], G statistics rows per sample.

std::tuple<at::Tensor, at::Tensor, at::Tensor> group_norm(const at::Tensor& X,
                                                          const std::optional<at::Tensor>& w_opt,
                                                          const std::optional<at::Tensor>& b_opt,
                                                          int64_t N, int64_t C, int64_t HxW,
                                                          int64_t group, double eps) {
  const at::Tensor &w = value_or_undef(w_opt), &b = value_or_undef(b_opt);
  const bool mixed = at::native::is_mixed_type(X, w, b);
  if (mixed) at::native::check_mixed_data_type(X, w, b);
  TORCH_CHECK(group > 0 && C % group == 0,
              "Expected number of channels in input to be divisible by num_groups, but got "
              "input of shape ",
              X.sizes(), " and num_groups=", group);
  TORCH_CHECK(X.numel() == N * C * HxW, "group_norm: input of size ", X.sizes(),
              " does not match N=", N, ", C=", C, ", HxW=", HxW);
  const at::Tensor x = X.contiguous(X.suggest_memory_format());
  at::Tensor out = at::empty_like(x);
  const Shape s{N, C, HxW, group, false};
  auto [mean, rstd] = stats(ncs(x), s, eps);
  apply(ncs(x), s, eps, mean, rstd, false, w.defined() ? w.contiguous() : w,
        b.defined() ? b.contiguous() : b, ncs(out));
  const at::ScalarType stat_dt = at::native::param_scalar_type(X, mixed);
  return {out, mean.to(stat_dt).view({N, group}), rstd.to(stat_dt).view({N, group})};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& X, const at::Tensor& mean, const at::Tensor& rstd,
    const std::optional<at::Tensor>& w_opt, int64_t N, int64_t C, int64_t HxW, int64_t group,
    std::array<bool, 3> mask) {
  const at::Tensor& w = value_or_undef(w_opt);
  const at::MemoryFormat mf = X.suggest_memory_format();
  const at::Tensor x = X.contiguous(mf), dy = grad_out.contiguous(mf);
  const at::Tensor mc = mean.contiguous(), rc = rstd.contiguous();
  const at::Tensor wc = w.defined() ? w.contiguous() : w;
  const Shape s{N, C, HxW, group, false};
  at::Tensor gi, gw, gb;
  if (mask[0]) {
    gi = at::empty_like(x);
    if (s.numel() > 0) {
      auto [A, B] = sums(ncs(x), ncs(dy), s, false, 0, mc, rc, false, wc);
      dx_kernel(ncs(x), ncs(dy), s, true, 0, mc, rc, false, wc, A, B, ncs(gi));
    }
  }
  if (mask[1] || mask[2]) {
    auto [A, B] = sums(ncs(x), ncs(dy), s, true, 0, mc, rc, false, at::Tensor());
    const at::ScalarType wdt = w.defined() ? w.scalar_type() : X.scalar_type();
    if (mask[1]) gw = B.to(wdt);
    if (mask[2]) gb = A.to(wdt);
  }
  return {gi, gw, gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_batch_norm", batch_norm);
  m.impl("native_batch_norm_backward", batch_norm_backward);
  m.impl("_native_batch_norm_legit", bn_legit);
  m.impl("_native_batch_norm_legit.no_stats", bn_legit_no_stats);
  m.impl("_batch_norm_with_update", bn_with_update);
  m.impl("batch_norm_backward", bn_backward_new);
  m.impl("native_layer_norm", layer_norm);
  m.impl("native_layer_norm_backward", layer_norm_backward);
  m.impl("native_group_norm", group_norm);
  m.impl("native_group_norm_backward", group_norm_backward);
}

}  // namespace torch_ocl
