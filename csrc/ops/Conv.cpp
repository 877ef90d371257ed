// Convolution: aten::convolution_overrideable and aten::convolution_backward_overrideable, where
// at::_convolution / at::convolution_backward send PrivateUse1 tensors (after their own shape
// checks, 'same' padding, unbatched inputs, the 1d -> 2d expansion and empty batches).
//
// Everything is computed in the terms of a normal convolution y = conv(x, w) over 3 spatial dims
// (2d tensors get a size-1 depth) with three primitives:
//   forward(x, w, bias) -> y, input_grad(gy, w, bias) -> gx, weight_grad(gy, x) -> gw.
// A normal convolution uses them as they are; a transposed one is the input gradient of the
// normal convolution whose weight it shares: its forward is input_grad, its input gradient is
// forward and its weight gradient is weight_grad with the roles of input and output swapped.
// Algorithms (kernels/conv.cl):
//   - depthwise (weight.size(1) == 1, so groups == input channels): direct kernels;
//   - 1x1, stride 1, no padding: the GEMM on the input as it lies (no im2col);
//   - otherwise im2col into a [C * kvol, nb * L] buffer (nb images at a time, bounded memory) and
//     one GEMM per group; the input gradient is one GEMM per group and a col2im that gathers;
//   - a channels-last forward without groups uses im2col with one row per output position and
//     writes the GEMM's [N * L, CO] result straight into the output.
// GEMMs are at::mm / at::addmm on ocl tensors (csrc/ops/Matmul.cpp). float16/bfloat16 compute
// in float32. Results have CPU torch's memory format: channels-last when the input or the weight
// is (all three gradients included).
#include <ATen/ops/addmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/sum.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>

#include "ops/GemmTiles.h"
#include "ops/KernelTypes.h"
#include "ops/Matmul.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"
#include "runtime/Stream.h"
#include "runtime/Tuning.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;
constexpr size_t kDwLws = 64;  // DW_LWS in kernels/conv.cl

using Arr3 = std::array<int64_t, 3>;

// A normal convolution: x [N, C, isz] -> y [N, CO, osz], weight [CO, C / G, ks].
struct Geom {
  int64_t N = 0, C = 0, CO = 0, G = 1;
  Arr3 isz{1, 1, 1}, osz{1, 1, 1}, ks{1, 1, 1}, st{1, 1, 1}, pd{0, 0, 0}, dl{1, 1, 1};
  int64_t kvol() const { return ks[0] * ks[1] * ks[2]; }
  int64_t L() const { return osz[0] * osz[1] * osz[2]; }
  int64_t Cg() const { return C / G; }
  int64_t COg() const { return CO / G; }
};

// The last n entries of a 3-vector from `v` (1d/2d parameters), the rest `fill`.
Arr3 pad3(c10::IntArrayRef v, int64_t fill) {
  Arr3 a{fill, fill, fill};
  const size_t n = std::min<size_t>(v.size(), 3);
  for (size_t i = 0; i < n; ++i) a[3 - n + i] = v[v.size() - n + i];
  return a;
}

Arr3 spatial(const at::Tensor& t) {
  Arr3 a{1, 1, 1};
  const int64_t nd = t.dim() - 2;
  for (int64_t i = 0; i < nd; ++i) a[3 - nd + i] = t.size(2 + i);
  return a;
}

// [N, C, spatial...] -> [N, C, D, H, W] (a view).
at::Tensor to5d(at::Tensor t) {
  while (t.dim() < 5) t = t.unsqueeze(2);
  return t;
}

cl_int4 i4(const Arr3& a) {
  cl_int4 v;
  for (int i = 0; i < 3; ++i) v.s[i] = static_cast<cl_int>(a[i]);
  v.s[3] = 0;
  return v;
}

cl_long4 spatial_strides(const at::Tensor& t5) {
  cl_long4 v;
  for (int i = 0; i < 3; ++i) v.s[i] = t5.stride(2 + i);
  v.s[3] = 0;
  return v;
}

// The geometry arguments every conv kernel takes: input and output sizes, kernel, stride,
// padding and dilation (3 spatial dims each).
void push_geometry(KernelLaunch& l, const Geom& g) {
  l.arg(i4(g.isz)).arg(i4(g.osz)).arg(i4(g.ks)).arg(i4(g.st)).arg(i4(g.pd)).arg(i4(g.dl));
}

// A [N, C, D, H, W] operand: its buffer, then its N and C strides and its spatial strides.
void push_tensor5(KernelLaunch& l, const at::Tensor& t5, size_t item) {
  l.buffer(buffer_of(t5), item);
  l.arg(static_cast<cl_long>(t5.stride(0))).arg(static_cast<cl_long>(t5.stride(1)));
  l.arg(spatial_strides(t5));
}

void check_count(int64_t count, const char* what) {
  TORCH_CHECK(count < INT_MAX, "torch-ocl: convolution ", what,
              " is too large for the kernels' 32-bit indexing (", count, " work-items)");
}

at::MemoryFormat conv_format(const at::Tensor& x, const at::Tensor& w) {
  if (x.dim() == 4) {
    const auto cl = at::MemoryFormat::ChannelsLast;
    if (x.suggest_memory_format() == cl || w.suggest_memory_format() == cl) return cl;
  } else if (x.dim() == 5) {
    const auto cl = at::MemoryFormat::ChannelsLast3d;
    if (x.suggest_memory_format() == cl || w.suggest_memory_format() == cl) return cl;
  }
  return at::MemoryFormat::Contiguous;
}

at::ScalarType compute_type(at::ScalarType t) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t),
                              "torch-ocl: convolution is implemented for floating dtypes only, "
                              "got ",
                              t);
  return (t == at::kHalf || t == at::kBFloat16) ? at::kFloat : t;
}

int64_t dw_chunk(int device) { return static_cast<int64_t>(device_profile(device).stream_chunk); }

// Work-items of a depthwise kernel: rows of `width` positions, DW_CHUNK of them per work-item.
int64_t dw_items(int64_t rows, int64_t width, int device) {
  const int64_t c = dw_chunk(device);
  return rows * ((width + c - 1) / c);
}

// One build of conv.cl per device and dtype: DW_CHUNK (the depthwise kernels' positions per
// work-item) is the device's stream_chunk.
std::string opts_for(at::ScalarType ct, int device) {
  return std::string("-DT=") + type_tag(ct, device) +
         " -DDW_CHUNK=" + std::to_string(dw_chunk(device));
}

// Images per chunk: as many as keep `per_image` bytes of scratch (im2col columns, partial weight
// gradients) for each image within the device profile's conv_cols_bytes (cache-sized on CPU
// devices, so the columns a GEMM reads are still in the cache that im2col wrote them to; 256 MiB
// on GPUs); larger batches are processed a few images at a time.
int64_t chunk_images(int64_t per_image, int64_t N, int device) {
  const int64_t budget = device_profile(device).conv_cols_bytes;
  return std::clamp<int64_t>(budget / std::max<int64_t>(per_image, 1), 1, std::max<int64_t>(N, 1));
}

// How the im2col columns of a chunk of nb images are laid out, as a [B, rows, NL] tensor that
// the GEMMs take as a batch: one [rows, L] matrix per image (B = nb, NL = L: the GEMMs read and
// write each image's maps in place), or, for small maps, one matrix shared by the images
// (B = 1, NL = nb * L: one GEMM with nb times the columns; the maps are copied between
// [N, C, L] and [C, nb * L]).
constexpr int64_t kPerImageMinL = 128;
struct Layout {
  bool shared = false;
  int64_t nb = 0, L = 0;
  int64_t B() const { return shared ? 1 : nb; }
  int64_t NL() const { return shared ? nb * L : L; }
  // Element offset between the images' columns in a [B, rows, NL] tensor.
  int64_t image_offset(const at::Tensor& cols) const { return shared ? L : cols.stride(0); }
};

Layout layout_for(int64_t nb, int64_t L) { return {L < kPerImageMinL && nb > 1, nb, L}; }

// The maps of images n0 .. n0 + nb of t5 as the GEMMs take them: [nb, C, L] (a view) or
// [1, C, nb * L] (a copy, shared layout).
at::Tensor maps_for(const at::Tensor& t5, int64_t n0, const Layout& lay) {
  const at::Tensor m = t5.narrow(0, n0, lay.nb).flatten(2);
  if (!lay.shared) return m;
  return m.transpose(0, 1).reshape({1, t5.size(1), lay.NL()});
}

// out5 images n0 .. n0 + nb <- y [B, C, NL] in the layout `lay`.
void store_maps(const at::Tensor& out5, int64_t n0, const Layout& lay, const at::Tensor& y) {
  const at::Tensor o = out5.narrow(0, n0, lay.nb);
  const int64_t C = out5.size(1);
  if (lay.shared) {
    o.copy_(y.view({C, lay.nb, out5.size(2), out5.size(3), out5.size(4)}).transpose(0, 1));
  } else {
    o.copy_(y.view(o.sizes()));
  }
}

// cols [B, C * kvol, NL] (unit column stride, `lay`) <- im2col of images n0 .. n0 + nb of x5.
void launch_im2col(const at::Tensor& x5, int64_t n0, const Layout& lay, const Geom& g,
                   const at::Tensor& cols) {
  const int64_t nb = lay.nb;
  const int device = cols.device().index();
  const at::Tensor xs = x5.narrow(0, n0, nb);
  const int64_t count = g.C * g.ks[0] * g.ks[1] * nb * g.osz[0] * g.osz[1];
  check_count(count, "im2col");
  check_count(cols.numel(), "im2col buffer");
  const size_t item = cols.itemsize();
  KernelLaunch l(get_kernel(device, "conv.cl", "im2col", opts_for(cols.scalar_type(), device)));
  l.arg(static_cast<cl_int>(count)).arg(static_cast<cl_int>(nb));
  push_geometry(l, g);
  push_tensor5(l, xs, item);
  l.buffer(buffer_of(cols), item);
  l.arg(static_cast<cl_long>(cols.stride(1))).arg(static_cast<cl_long>(lay.image_offset(cols)));
  l.enqueue1d(device, static_cast<size_t>(count), kLws);
}

// cols [nb * L, G * kvol * Cg] (contiguous rows, row per output position, columns ordered
// (group, kernel position, channel)) <- im2col_rows of images n0 .. n0 + nb of x5.
void launch_im2col_rows(const at::Tensor& x5, int64_t n0, int64_t nb, const Geom& g,
                        const at::Tensor& cols) {
  const int device = cols.device().index();
  const at::Tensor xs = x5.narrow(0, n0, nb);
  const int64_t count = nb * g.L() * g.G * g.kvol();
  check_count(count, "im2col");
  check_count(cols.numel(), "im2col buffer");
  const size_t item = cols.itemsize();
  KernelLaunch l(
      get_kernel(device, "conv.cl", "im2col_rows", opts_for(cols.scalar_type(), device)));
  l.arg(static_cast<cl_int>(count)).arg(static_cast<cl_int>(g.G)).arg(static_cast<cl_int>(g.Cg()));
  push_geometry(l, g);
  push_tensor5(l, xs, item);
  l.buffer(buffer_of(cols), item).arg(static_cast<cl_long>(cols.stride(0)));
  l.enqueue1d(device, static_cast<size_t>(count), kLws);
}

// out5 images n0 .. n0 + nb (any strides) <- col2im of cols [B, C * kvol, NL] (`lay`)
// (+ bias[c]).
void launch_col2im(const at::Tensor& cols, int64_t n0, const Layout& lay, const Geom& g,
                   const at::Tensor& bias, const at::Tensor& out5) {
  const int64_t nb = lay.nb;
  const int device = cols.device().index();
  const at::Tensor os = out5.narrow(0, n0, nb);
  const int64_t count = nb * g.C * g.isz[0] * g.isz[1];
  check_count(count, "col2im");
  check_count(cols.numel(), "im2col buffer");
  const size_t item = cols.itemsize();
  const at::Tensor b = bias.defined() ? bias.contiguous() : cols;
  KernelLaunch l(get_kernel(device, "conv.cl", "col2im", opts_for(cols.scalar_type(), device)));
  l.arg(static_cast<cl_int>(count)).arg(static_cast<cl_int>(nb)).arg(static_cast<cl_int>(g.C));
  push_geometry(l, g);
  l.buffer(buffer_of(cols), item);
  l.arg(static_cast<cl_long>(cols.stride(1))).arg(static_cast<cl_long>(lay.image_offset(cols)));
  push_tensor5(l, os, item);
  l.arg(static_cast<cl_int>(bias.defined() ? 1 : 0)).buffer(buffer_of(b), item);
  l.enqueue1d(device, static_cast<size_t>(count), kLws);
}

bool is_depthwise(const at::Tensor& w5, const Geom& g) { return w5.size(1) == 1 && g.G == g.C; }

bool pointwise(const Geom& g) {
  return g.kvol() == 1 && g.st == Arr3{1, 1, 1} && g.pd == Arr3{0, 0, 0};
}

// The [rows, C] view of a 5d tensor whose channels are its innermost dense dim (channels-last),
// or an undefined tensor.
at::Tensor rows_view(const at::Tensor& t5) {
  at::Tensor p = t5.permute({0, 2, 3, 4, 1});
  if (!p.is_contiguous()) return {};
  return p.view({-1, t5.size(1)});
}

// [N, C, L]: the spatial dims of a 5d tensor flattened (a view where its layout allows: NCHW
// and channels-last both do, as a row-major or a transposed matrix per image).
at::Tensor maps(const at::Tensor& t5) { return t5.flatten(2); }

// A [COg, K] block of a weight matrix, the same for each of nb images (batch stride 0).
at::Tensor per_image(const at::Tensor& m, int64_t nb) {
  return m.unsqueeze(0).expand({nb, m.size(0), m.size(1)});
}

// ------------------------------------------------------------------------------------------
// Winograd F(2x2, 3x3) (kernels/conv.cl): 2d, 3x3, stride 1, dilation 1 - or dilation -1, the
// spatially flipped kernel that the input gradient reads (input_grad_into).

bool winograd_applies(const Geom& g) {
  const bool flat_depth = g.isz[0] == 1 && g.osz[0] == 1 && g.ks[0] == 1 && g.pd[0] == 0;
  const bool unit_dl = (g.dl[1] == 1 && g.dl[2] == 1) || (g.dl[1] == -1 && g.dl[2] == -1);
  return flat_depth && g.ks[1] == 3 && g.ks[2] == 3 && g.st == Arr3{1, 1, 1} && unit_dl &&
         g.osz[1] > 0 && g.osz[2] > 0;
}

void winograd_into(const at::Tensor& x5, const at::Tensor& w5, const at::Tensor& b, const Geom& g,
                   const at::Tensor& out5) {
  const int device = out5.device().index();
  const size_t item = out5.itemsize();
  const std::string opts = opts_for(out5.scalar_type(), device);
  const bool flip = g.dl[1] == -1;
  // A flipped kernel read at i - P + k (dilation -1, padding P) is the rotated kernel read at
  // i - (2 + P) + k.
  const cl_int4 pd = i4(flip ? Arr3{0, 2 + g.pd[1], 2 + g.pd[2]} : g.pd);
  const int64_t TH = (g.osz[1] + 1) / 2, TW = (g.osz[2] + 1) / 2, tiles = TH * TW;
  const int64_t Cg = g.Cg(), COg = g.COg();
  const at::Tensor wc = w5.contiguous();
  at::Tensor U = at::empty({16, g.CO, Cg}, out5.options());
  {
    const int64_t count = g.CO * Cg;
    check_count(count, "Winograd weight transform");
    KernelLaunch l(get_kernel(device, "conv.cl", "wino_weight", opts));
    l.arg(static_cast<cl_int>(count)).arg(static_cast<cl_int>(Cg)).arg(static_cast<cl_int>(flip));
    l.buffer(buffer_of(wc), item).buffer(buffer_of(U), item);
    l.enqueue1d(device, static_cast<size_t>(count), kLws);
  }
  const at::Tensor bb = b.defined() ? b.contiguous() : U;
  const int64_t chunk =
      chunk_images(16 * (g.C + g.CO) * tiles * static_cast<int64_t>(item), g.N, device);
  at::Tensor V, M;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.N - n0);
    const int64_t T = nb * tiles;
    if (!V.defined() || V.size(2) != T) {
      V = at::empty({16, g.C, T}, out5.options());
      M = at::empty({16, g.CO, T}, out5.options());
    }
    {
      const int64_t count = nb * g.C * tiles;
      check_count(count, "Winograd input transform");
      KernelLaunch l(get_kernel(device, "conv.cl", "wino_input", opts));
      l.arg(static_cast<cl_int>(count)).arg(static_cast<cl_int>(g.C));
      l.arg(static_cast<cl_int>(TH)).arg(static_cast<cl_int>(TW));
      l.arg(i4(g.isz)).arg(pd);
      push_tensor5(l, x5.narrow(0, n0, nb), item);
      l.buffer(buffer_of(V), item);
      l.enqueue1d(device, static_cast<size_t>(count), kLws);
    }
    for (int64_t gi = 0; gi < g.G; ++gi) {
      gemm_into(M.narrow(1, gi * COg, COg), U.narrow(1, gi * COg, COg), V.narrow(1, gi * Cg, Cg),
                at::Tensor());
    }
    {
      const int64_t count = nb * g.CO * tiles;
      check_count(count, "Winograd output transform");
      KernelLaunch l(get_kernel(device, "conv.cl", "wino_output", opts));
      l.arg(static_cast<cl_int>(count)).arg(static_cast<cl_int>(g.CO));
      l.arg(static_cast<cl_int>(TH)).arg(static_cast<cl_int>(TW)).arg(i4(g.osz));
      l.buffer(buffer_of(M), item);
      l.arg(static_cast<cl_int>(b.defined() ? 1 : 0)).buffer(buffer_of(bb), item);
      push_tensor5(l, out5.narrow(0, n0, nb), item);
      l.enqueue1d(device, static_cast<size_t>(count), kLws);
    }
  }
}

// ------------------------------------------------------------------------------------------
// Choosing between GEMM and Winograd where both apply. Default: GEMM (on PoCL, Winograd's 16
// small-K GEMMs were not faster: 0.6-1.4x im2col + GEMM's time over resnet18 and small-CNN
// shapes). With torch.ocl.conv_benchmark = True a shape without a recorded choice is timed both
// ways once (host waits, as cuDNN's benchmark mode) and the faster is recorded per device on
// disk (runtime/Tuning.h). torch.ops.ocl.set_conv_algorithm forces one (tests, debugging).

enum class Algo : int { kGemm = 0, kWinograd = 1 };
std::atomic<int> g_forced_algo{-1};

void forward_gemm_into(const at::Tensor& x5, const at::Tensor& w5, const at::Tensor& b,
                       const Geom& g, const at::Tensor& out5);

std::string tuning_key(const at::Tensor& x5, const Geom& g, const at::Tensor& out5) {
  std::string k = "conv3x3s1";
  for (const int64_t v :
       {g.N, g.C, g.CO, g.G, g.isz[1], g.isz[2], g.osz[1], g.osz[2], g.pd[1], g.pd[2], g.dl[1]}) {
    k += ' ';
    k += std::to_string(v);
  }
  k += ' ';
  k += c10::toString(out5.scalar_type());
  k += x5.is_contiguous() ? " xc" : " xs";
  k += out5.is_contiguous() ? " yc" : " ys";
  return k;
}

Algo choose_algo(const at::Tensor& x5, const at::Tensor& w5, const at::Tensor& b, const Geom& g,
                 const at::Tensor& out5) {
  const int forced = g_forced_algo.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<Algo>(forced);
  const int device = out5.device().index();
  const std::string key = tuning_key(x5, g, out5);
  if (const auto c = tuned_choice(device, key)) return static_cast<Algo>(*c);
  if (!tuning_enabled()) return Algo::kGemm;
  // Each candidate once to build its kernels, then the better of two timed runs.
  double best[2];
  for (int a = 0; a < 2; ++a) {
    auto run = [&] {
      if (a == 1) {
        winograd_into(x5, w5, b, g, out5);
      } else {
        forward_gemm_into(x5, w5, b, g, out5);
      }
      synchronize_device(device, "convolution autotuner (torch.ocl.conv_benchmark)");
    };
    run();
    best[a] = 1e30;
    for (int r = 0; r < 2; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      run();
      best[a] = std::min(
          best[a], std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  const Algo pick = best[1] < best[0] ? Algo::kWinograd : Algo::kGemm;
  record_tuned_choice(device, key, static_cast<int>(pick));
  return pick;
}

// ------------------------------------------------------------------------------------------
// The three primitives (compute dtype tensors, 5d views; results written into `out5`).

void forward_into(const at::Tensor& x5, const at::Tensor& w5, const at::Tensor& bias, const Geom& g,
                  const at::Tensor& out5) {
  if (out5.numel() == 0) return;
  const int device = out5.device().index();
  const at::Tensor b = bias.defined() ? bias.contiguous() : bias;
  if (g.C == 0 || g.kvol() == 0) {  // no input channels: the bias alone
    if (b.defined()) {
      out5.copy_(b.view({1, -1, 1, 1, 1}).expand_as(out5));
    } else {
      out5.zero_();
    }
    return;
  }
  if (is_depthwise(w5, g)) {
    const at::Tensor wc = w5.contiguous();
    const at::Tensor bb = b.defined() ? b : wc;
    const int64_t count = dw_items(g.N * g.CO * g.osz[0] * g.osz[1], g.osz[2], device);
    check_count(count, "depthwise forward");
    const size_t item = out5.itemsize();
    KernelLaunch l(
        get_kernel(device, "conv.cl", "dw_forward", opts_for(out5.scalar_type(), device)));
    l.arg(static_cast<cl_int>(count)).arg(static_cast<cl_int>(g.CO));
    l.arg(static_cast<cl_int>(g.CO / g.C));
    push_geometry(l, g);
    push_tensor5(l, x5, item);
    l.buffer(buffer_of(wc), item);
    l.arg(static_cast<cl_int>(b.defined() ? 1 : 0)).buffer(buffer_of(bb), item);
    push_tensor5(l, out5, item);
    l.enqueue1d(device, static_cast<size_t>(count), kLws);
    return;
  }
  if (winograd_applies(g) && choose_algo(x5, w5, b, g, out5) == Algo::kWinograd) {
    winograd_into(x5, w5, b, g, out5);
    return;
  }
  forward_gemm_into(x5, w5, b, g, out5);
}

// The convolution arguments of kernels/mm_tiled.cl's implicit-GEMM forms (-DCONV_B,
// -DCONV_WGRAD): groups, splits of k and k per split, the group strides of B and C, the geometry,
// the input's strides and the output gradient's (undefined: none).
void push_implicit_args(KernelLaunch& l, const Geom& g, int splits, int k_per_split, int64_t b_sg,
                        int64_t c_sg, const at::Tensor& x5, const at::Tensor& gy5) {
  l.arg(static_cast<cl_int>(g.G)).arg(static_cast<cl_int>(splits));
  l.arg(static_cast<cl_int>(k_per_split));
  l.arg(static_cast<cl_long>(b_sg)).arg(static_cast<cl_long>(c_sg));
  push_geometry(l, g);
  l.arg(static_cast<cl_long>(x5.stride(1))).arg(spatial_strides(x5));
  l.arg(static_cast<cl_long>(x5.stride(0)));
  l.arg(static_cast<cl_long>(gy5.defined() ? gy5.stride(0) : 0));
  l.arg(static_cast<cl_long>(gy5.defined() ? gy5.stride(1) : 0));
}

// The kernel's extent as a build option of mm_tiled.cl's implicit-GEMM forms: its index
// arithmetic then divides by constants (a few distinct sizes per network, each one build).
std::string kernel_size_option(const Geom& g) {
  return " -DCONV_KS=" + std::to_string(g.ks[0]) + "," + std::to_string(g.ks[1]) + "," +
         std::to_string(g.ks[2]);
}

// forward_into as one implicit GEMM (kernels/mm_tiled.cl with -DCONV_B): the tiled GEMM reads
// the im2col columns straight from the input, so no column buffer is written or read, for every
// image and group in one launch. Runs where the device profile says so (GPUs) and the tiled GEMM
// has a tile for the dtype; returns false otherwise.
bool forward_implicit_into(const at::Tensor& x5, const at::Tensor& w5, const at::Tensor& b,
                           const Geom& g, const at::Tensor& out5) {
  const int device = out5.device().index();
  if (!device_profile(device).conv_implicit_gemm) return false;
  // A pointwise convolution of maps that lie as [C, positions] per image is a plain batched GEMM
  // on them (forward_gemm_into's direct route): aligned vector loads, no index arithmetic.
  // (Not a phase of a strided input gradient, whose output may reach past the maps it reads.)
  if (pointwise(g) && g.osz == g.isz && maps(x5).stride(2) == 1) return false;
  const int64_t L = g.L(), Kg = g.Cg() * g.kvol(), COg = g.COg();
  // The kernel indexes rows, columns and k with 32-bit ints.
  if (L > INT_MAX || Kg > INT_MAX || COg > INT_MAX) return false;
  const at::ScalarType t = out5.scalar_type();
  std::optional<GemmTile> tile =
      gemm_tile_for(device, GemmProblem{t, false, false, COg, L, Kg, g.N * g.G});
  if (!tile) return false;
  std::string opts =
      std::string("-DT=") + type_tag(t, device) + " -DCONV_B" + kernel_size_option(g);
  if (b.defined()) opts += " -DHAS_BIAS";
  cl_kernel k = fitted_tiled_kernel(device, opts, &*tile);
  if (!k) return false;
  const at::Tensor w2 = w5.contiguous().view({g.CO, Kg});
  const at::Tensor y = out5.is_contiguous() ? out5 : at::empty(out5.sizes(), out5.options());
  const size_t item = y.itemsize();
  KernelLaunch l(k);
  l.arg(static_cast<cl_int>(COg)).arg(static_cast<cl_int>(L)).arg(static_cast<cl_int>(Kg));
  l.buffer(buffer_of(w2), item).arg(static_cast<cl_long>(Kg));
  l.buffer(buffer_of(x5), item).arg(static_cast<cl_long>(0));
  l.buffer(buffer_of(y), item).arg(static_cast<cl_long>(L));
  push_compute_scalar(l, 1, t);
  push_compute_scalar(l, b.defined() ? 1 : 0, t);
  if (b.defined()) {
    l.buffer(buffer_of(b), item).arg(static_cast<cl_long>(1)).arg(static_cast<cl_long>(0));
  } else {
    l.buffer(buffer_of(y), item).arg(static_cast<cl_long>(0)).arg(static_cast<cl_long>(0));
  }
  // Batch strides: the weight per group, the input per image, the output per image, the bias
  // per group; then the conv arguments.
  l.arg(static_cast<cl_long>(COg * Kg)).arg(static_cast<cl_long>(x5.stride(0)));
  l.arg(static_cast<cl_long>(g.CO * L)).arg(static_cast<cl_long>(b.defined() ? COg : 0));
  push_implicit_args(l, g, 1, static_cast<int>(Kg), g.Cg() * x5.stride(1), COg * L, x5, {});
  const size_t tm = tile->tile_m, tn = tile->tile_n;
  const size_t global[3] = {(static_cast<size_t>(L) + tn - 1) / tn * tile->wg_n,
                            (static_cast<size_t>(COg) + tm - 1) / tm * tile->wg_m,
                            static_cast<size_t>(g.N * g.G)};
  const size_t local[3] = {static_cast<size_t>(tile->wg_n), static_cast<size_t>(tile->wg_m), 1};
  l.enqueue(device, 3, global, local);
  if (!y.is_same(out5)) out5.copy_(y);
  return true;
}

// forward_into by im2col (or the input as it lies) and GEMM; on GPUs (device profile) by one
// implicit GEMM instead.
void forward_gemm_into(const at::Tensor& x5, const at::Tensor& w5, const at::Tensor& b,
                       const Geom& g, const at::Tensor& out5) {
  if (forward_implicit_into(x5, w5, b, g, out5)) return;
  const int64_t L = g.L(), rows = g.C * g.kvol(), Kg = g.Cg() * g.kvol();
  const at::Tensor w2 = w5.contiguous().view({g.CO, Kg});
  if (g.G == 1 && (!pointwise(g) || rows_view(x5).defined())) {
    // Channels-last output: one GEMM [N * L, C * kvol] @ [C * kvol, CO] per chunk of images,
    // straight into the output's rows; the input's rows as they lie for a 1x1 convolution, else
    // im2col with a row per output position (weight as [CO, kvol * C]).
    const at::Tensor yr = rows_view(out5);
    if (yr.defined()) {
      if (pointwise(g)) {
        const at::Tensor xr = rows_view(x5);
        if (b.defined()) {
          at::addmm_out(const_cast<at::Tensor&>(yr), b, xr, w2.t());
        } else {
          at::mm_out(const_cast<at::Tensor&>(yr), xr, w2.t());
        }
        return;
      }
      const at::Tensor wr = w5.permute({0, 2, 3, 4, 1}).contiguous().view({g.CO, rows});
      const int64_t chunk = chunk_images(rows * L * out5.itemsize(), g.N, out5.device().index());
      at::Tensor cols;
      for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
        const int64_t nb = std::min(chunk, g.N - n0);
        if (!cols.defined() || cols.size(0) != nb * L) {
          cols = at::empty({nb * L, rows}, x5.options());
        }
        launch_im2col_rows(x5, n0, nb, g, cols);
        at::Tensor out = yr.narrow(0, n0 * L, nb * L);
        if (b.defined()) {
          at::addmm_out(out, b, cols, wr.t());
        } else {
          at::mm_out(out, cols, wr.t());
        }
      }
      return;
    }
  }
  // Per chunk of images and per group: y[group] = W_group @ cols[group], one (batched) GEMM per
  // group, the weight shared by the images; written into the output when it is NCHW-contiguous
  // and the layout is per image, else into a temporary that is copied. A 1x1 convolution reads
  // the input's maps as they lie.
  const bool direct_in = pointwise(g) && maps(x5).stride(2) == 1;
  const at::Tensor y3 = out5.is_contiguous() ? out5.view({g.N, g.CO, L}) : at::Tensor();
  const int64_t chunk =
      direct_in ? g.N : chunk_images(rows * L * out5.itemsize(), g.N, out5.device().index());
  at::Tensor cols;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const Layout lay = layout_for(std::min(chunk, g.N - n0), L);
    if (direct_in) {
      cols = maps_for(x5, n0, lay);
    } else {
      if (!cols.defined() || cols.size(0) != lay.B() || cols.size(2) != lay.NL()) {
        cols = at::empty({lay.B(), rows, lay.NL()}, x5.options());
      }
      launch_im2col(x5, n0, lay, g, cols);
    }
    const bool direct_out = y3.defined() && !lay.shared;
    const at::Tensor y = direct_out ? y3.narrow(0, n0, lay.nb)
                                    : at::empty({lay.B(), g.CO, lay.NL()}, out5.options());
    for (int64_t gi = 0; gi < g.G; ++gi) {
      const at::Tensor bg = b.defined() ? b.narrow(0, gi * g.COg(), g.COg())
                                              .view({1, -1, 1})
                                              .expand({lay.B(), g.COg(), lay.NL()})
                                        : b;
      gemm_into(y.narrow(1, gi * g.COg(), g.COg()),
                per_image(w2.narrow(0, gi * g.COg(), g.COg()), lay.B()),
                cols.narrow(1, gi * Kg, Kg), bg);
    }
    if (!direct_out) store_maps(out5, n0, lay, y);
  }
}

// The input gradient of a strided convolution (dilation 1) as stride-1 convolutions, one per
// phase of the stride: the inputs i = q * s + p of phase p (per spatial dim) receive
//   gx[q * s + p] = sum_j w[k0 + j * s] * gy[q + c0 - j],  k0 = (p + P) mod s, c0 = (p + P - k0) /
//   s
// - a stride-1 convolution of gy with the taps k0, k0 + s, ... of the kernel, read backwards
// (dilation -1, padding -c0) - written into the strided view gx[..., p::s]. Together the
// phases multiply exactly the products the gradient needs: no zeros inserted between gy's
// elements (an implicit GEMM over the transposed convolution would multiply s^2 - 1 zeros for
// every product on a 2-d stride 2), and no column buffer or col2im. A phase that no tap reaches
// (a 1x1 kernel at stride 2) is 0, or the bias.
void strided_input_grad_into(const at::Tensor& gy5, const at::Tensor& w5, const at::Tensor& bias,
                             const Geom& g, const at::Tensor& gx5) {
  // The weight with the channel axes swapped per group: [C, COg, ks].
  const at::Tensor wt = w5.reshape({g.G, g.COg(), g.Cg(), g.ks[0], g.ks[1], g.ks[2]})
                            .transpose(1, 2)
                            .reshape({g.C, g.COg(), g.ks[0], g.ks[1], g.ks[2]});
  Arr3 ph{0, 0, 0};
  for (ph[0] = 0; ph[0] < g.st[0]; ++ph[0]) {
    for (ph[1] = 0; ph[1] < g.st[1]; ++ph[1]) {
      for (ph[2] = 0; ph[2] < g.st[2]; ++ph[2]) {
        Geom f = g;
        std::swap(f.C, f.CO);
        f.isz = g.osz;
        at::Tensor wsub = wt, out = gx5;
        bool empty = false;
        for (int d = 0; d < 3; ++d) {
          const int64_t s = g.st[d], p = ph[d];
          const int64_t k0 = (p + g.pd[d]) % s,
                        taps = k0 < g.ks[d] ? (g.ks[d] - k0 + s - 1) / s : 0;
          const int64_t n = p < g.isz[d] ? (g.isz[d] - p + s - 1) / s : 0;
          if (taps == 0 || n == 0) empty = true;
          f.ks[d] = std::max<int64_t>(taps, 1);
          f.osz[d] = n;
          f.st[d] = 1;
          f.dl[d] = -1;
          f.pd[d] = -((p + g.pd[d] - k0) / s);
          if (s > 1) {
            wsub = wsub.slice(2 + d, k0, g.ks[d], s);
            out = out.slice(2 + d, p, g.isz[d], s);
          }
        }
        if (out.numel() == 0) continue;
        if (empty) {
          if (bias.defined()) {
            out.copy_(bias.view({1, -1, 1, 1, 1}).expand_as(out));
          } else {
            out.zero_();
          }
          continue;
        }
        forward_into(gy5, wsub.contiguous(), bias, f, out);
      }
    }
  }
}

// gx5 <- the gradient of forward(x, w) in x for output gradient gy5 (+ bias[c], for transposed
// convolutions).
void input_grad_into(const at::Tensor& gy5, const at::Tensor& w5, const at::Tensor& bias,
                     const Geom& g, const at::Tensor& gx5) {
  if (gx5.numel() == 0) return;
  const int device = gx5.device().index();
  if (g.CO == 0 || g.kvol() == 0 || g.L() == 0) {
    if (bias.defined()) {
      gx5.copy_(bias.view({1, -1, 1, 1, 1}).expand_as(gx5));
    } else {
      gx5.zero_();
    }
    return;
  }
  if (is_depthwise(w5, g)) {
    const at::Tensor wc = w5.contiguous();
    const int64_t count = dw_items(g.N * g.C * g.isz[0] * g.isz[1], g.isz[2], device);
    check_count(count, "depthwise input gradient");
    const size_t item = gx5.itemsize();
    {
      KernelLaunch l(
          get_kernel(device, "conv.cl", "dw_backward_input", opts_for(gx5.scalar_type(), device)));
      l.arg(static_cast<cl_int>(count)).arg(static_cast<cl_int>(g.C));
      l.arg(static_cast<cl_int>(g.CO / g.C));
      push_geometry(l, g);
      push_tensor5(l, gy5, item);
      l.buffer(buffer_of(wc), item);
      push_tensor5(l, gx5, item);
      l.enqueue1d(device, static_cast<size_t>(count), kLws);
    }
    if (bias.defined()) gx5.add_(bias.view({1, -1, 1, 1, 1}));
    return;
  }
  // Stride 1: the input gradient is a normal convolution of gy with the weight's channel axes
  // swapped per group, read at i + P - k * DIL (padding -P, dilation -DIL: the kernel flipped
  // in space): forward_into's GEMM writes gx directly, no col2im. Taken when the GEMM has
  // enough rows (input channels) and the weight is not large against the maps (its transposed
  // copy would cost more than col2im saves).
  const bool as_forward = g.st == Arr3{1, 1, 1} && g.C >= 16 && g.CO <= g.N * g.L();
  // Strided, on GPUs (implicit GEMM): the same per phase of the stride (below).
  if (!as_forward && g.C >= 16 && g.CO <= g.N * g.L() && g.dl == Arr3{1, 1, 1} &&
      device_profile(device).conv_implicit_gemm) {
    strided_input_grad_into(gy5, w5, bias, g, gx5);
    return;
  }
  if (as_forward) {
    Geom f = g;
    std::swap(f.C, f.CO);
    std::swap(f.isz, f.osz);
    for (int i = 0; i < 3; ++i) {
      f.pd[i] = -g.pd[i];
      f.dl[i] = -g.dl[i];
    }
    const at::Tensor wt = w5.reshape({g.G, g.COg(), g.Cg(), g.ks[0], g.ks[1], g.ks[2]})
                              .transpose(1, 2)
                              .reshape({g.C, g.COg(), g.ks[0], g.ks[1], g.ks[2]});
    forward_into(gy5, wt, bias, f, gx5);
    return;
  }
  // Otherwise per chunk of images: gcols[group] = W_group^T @ gy[group] (one batched GEMM per
  // group), then col2im gathers gx.
  const at::Tensor w2 = w5.contiguous().view({g.CO, g.Cg() * g.kvol()});
  const int64_t L = g.L(), rows = g.C * g.kvol(), Kg = g.Cg() * g.kvol();
  const int64_t chunk = chunk_images(rows * L * gx5.itemsize(), g.N, gx5.device().index());
  at::Tensor gcols;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const Layout lay = layout_for(std::min(chunk, g.N - n0), L);
    const at::Tensor gy3 = maps_for(gy5, n0, lay);
    if (!gcols.defined() || gcols.size(0) != lay.B() || gcols.size(2) != lay.NL()) {
      gcols = at::empty({lay.B(), rows, lay.NL()}, gx5.options());
    }
    for (int64_t gi = 0; gi < g.G; ++gi) {
      gemm_into(gcols.narrow(1, gi * Kg, Kg),
                per_image(w2.narrow(0, gi * g.COg(), g.COg()).t(), lay.B()),
                gy3.narrow(1, gi * g.COg(), g.COg()), at::Tensor());
    }
    launch_col2im(gcols, n0, lay, g, bias, gx5);
  }
}

// gw (contiguous [CO, Cg, ks]) <- the weight gradient as one implicit GEMM (kernels/mm_tiled.cl
// with -DCONV_WGRAD): gy [COg x N*L] @ columns^T [N*L x Cg*kvol] per group, the columns read
// from the input in place. The long k (images x positions) is split so that the grid fills the
// device: each split writes a partial gradient, and the partials are added (their order fixed).
// Runs where the device profile says so (GPUs) and the tiled GEMM has a tile; false otherwise.
bool weight_grad_implicit_into(const at::Tensor& gy5_in, const at::Tensor& x5, const Geom& g,
                               const at::Tensor& gw) {
  const int device = gw.device().index();
  if (!device_profile(device).conv_implicit_gemm) return false;
  const int64_t L = g.L(), Kg = g.Cg() * g.kvol(), COg = g.COg(), K = g.N * L;
  if (K > INT_MAX || Kg > INT_MAX || COg > INT_MAX) return false;
  const at::ScalarType t = gw.scalar_type();
  std::optional<GemmTile> tile =
      gemm_tile_for(device, GemmProblem{t, false, true, COg, Kg, K, g.G});
  if (!tile) return false;
  cl_kernel k = fitted_tiled_kernel(
      device, std::string("-DT=") + type_tag(t, device) + " -DCONV_WGRAD" + kernel_size_option(g),
      &*tile);
  if (!k) return false;
  // gy's positions must be contiguous per (image, channel).
  const at::Tensor gy5 = (gy5_in.stride(4) == 1 || g.osz[2] == 1) &&
                                 (gy5_in.stride(3) == g.osz[2] || g.osz[1] == 1) &&
                                 (gy5_in.stride(2) == g.osz[1] * g.osz[2] || g.osz[0] == 1)
                             ? gy5_in
                             : gy5_in.contiguous();
  // Splits: enough work-groups for two per compute unit, each split at least 8 k tiles long.
  const int64_t tiles =
      ((COg + tile->tile_m - 1) / tile->tile_m) * ((Kg + tile->tile_n - 1) / tile->tile_n) * g.G;
  const int64_t cus = std::max<int64_t>(1, device_info(device).compute_units);
  const int64_t min_len = int64_t{8} * tile->tile_k;
  int64_t splits =
      std::clamp<int64_t>((2 * cus + tiles - 1) / tiles, 1, std::max<int64_t>(1, K / min_len));
  splits = std::min<int64_t>(splits, 64);
  int64_t per = (K + splits - 1) / splits;
  per = (per + tile->tile_k - 1) / tile->tile_k * tile->tile_k;
  splits = (K + per - 1) / per;
  const at::Tensor part = splits == 1 ? gw : at::empty({splits, g.CO, Kg}, gw.options());
  const size_t item = gw.itemsize();
  KernelLaunch l(k);
  l.arg(static_cast<cl_int>(COg)).arg(static_cast<cl_int>(Kg)).arg(static_cast<cl_int>(K));
  l.buffer(buffer_of(gy5), item).arg(static_cast<cl_long>(0));
  l.buffer(buffer_of(x5), item).arg(static_cast<cl_long>(0));
  l.buffer(buffer_of(part), item).arg(static_cast<cl_long>(Kg));
  push_compute_scalar(l, 1, t);
  push_compute_scalar(l, 0, t);
  l.buffer(buffer_of(part), item).arg(static_cast<cl_long>(0)).arg(static_cast<cl_long>(0));
  // Batch strides: gy and x per group, the partials per split; the bias's unused.
  l.arg(static_cast<cl_long>(COg * gy5.stride(1))).arg(static_cast<cl_long>(g.Cg() * x5.stride(1)));
  l.arg(static_cast<cl_long>(g.CO * Kg)).arg(static_cast<cl_long>(0));
  push_implicit_args(l, g, static_cast<int>(splits), static_cast<int>(per), 0, COg * Kg, x5, gy5);
  const size_t tm = tile->tile_m, tn = tile->tile_n;
  const size_t global[3] = {(static_cast<size_t>(Kg) + tn - 1) / tn * tile->wg_n,
                            (static_cast<size_t>(COg) + tm - 1) / tm * tile->wg_m,
                            static_cast<size_t>(g.G * splits)};
  const size_t local[3] = {static_cast<size_t>(tile->wg_n), static_cast<size_t>(tile->wg_m), 1};
  l.enqueue(device, 3, global, local);
  if (splits > 1) {
    at::Tensor gw2 = gw.view({g.CO, Kg});
    at::sum_out(gw2, part, at::IntArrayRef{0});
  }
  return true;
}

// The weight gradient [CO, C / G, ks] (contiguous) of forward(x, w) for output gradient gy5:
// per chunk of nb images and per group, one batched GEMM gy[n, group] @ cols[n, group]^T into
// [nb, COg, Kg] partial gradients, summed over the images.
at::Tensor weight_grad(const at::Tensor& gy5, const at::Tensor& x5, const at::Tensor& w5,
                       const Geom& g) {
  const int device = x5.device().index();
  at::Tensor gw = at::empty(w5.sizes(), x5.options());
  if (gw.numel() == 0) return gw;
  if (g.N == 0 || g.L() == 0) return gw.zero_();
  if (is_depthwise(w5, g)) {
    const size_t item = gw.itemsize();
    const int64_t groups = g.CO * g.kvol();
    // kDwLws work-items per group, or the device's limit (then a build of its own).
    const size_t lws = device_profile(device).fit_lws(kDwLws);
    check_count(groups * static_cast<int64_t>(lws), "depthwise weight gradient");
    check_count(g.N * g.osz[0] * g.osz[1], "depthwise weight gradient");
    const std::string dw_opts = opts_for(gw.scalar_type(), device) +
                                (lws < kDwLws ? " -DDW_LWS=" + std::to_string(lws) : std::string());
    KernelLaunch l(get_kernel(device, "conv.cl", "dw_backward_weight", dw_opts));
    l.arg(static_cast<cl_int>(g.N)).arg(static_cast<cl_int>(g.CO / g.C));
    push_geometry(l, g);
    push_tensor5(l, x5, item);
    push_tensor5(l, gy5, item);
    l.buffer(buffer_of(gw), item);
    l.enqueue1d(device, static_cast<size_t>(groups) * lws, lws);
    return gw;
  }
  if (weight_grad_implicit_into(gy5, x5, g, gw)) return gw;
  const int64_t L = g.L(), rows = g.C * g.kvol(), Kg = g.Cg() * g.kvol();
  const at::Tensor gw2 = gw.view({g.CO, Kg});
  const bool direct_in = pointwise(g);
  const int64_t item = static_cast<int64_t>(gw.itemsize());
  // Scratch per image: its columns, and its partial gradient where the layout is per image (the
  // shared layout of small maps sums over the images inside its one GEMM).
  const bool per_image_partials = L >= kPerImageMinL;
  const int64_t chunk = chunk_images(
      (direct_in ? 0 : rows * L * item) + (per_image_partials ? g.CO * Kg * item : 0), g.N, device);
  at::Tensor cols, part;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const Layout lay = layout_for(std::min(chunk, g.N - n0), L);
    if (direct_in) {
      cols = maps_for(x5, n0, lay);
    } else {
      if (!cols.defined() || cols.size(0) != lay.B() || cols.size(2) != lay.NL()) {
        cols = at::empty({lay.B(), rows, lay.NL()}, x5.options());
      }
      launch_im2col(x5, n0, lay, g, cols);
    }
    const at::Tensor gy3 = maps_for(gy5, n0, lay);
    // One image's (or the shared layout's) gradient goes straight into gw (the first chunk) or
    // is added to it; per-image partial gradients are summed over the images.
    const bool single = lay.B() == 1;
    if (!single && (!part.defined() || part.size(0) != lay.B())) {
      part = at::empty({lay.B(), g.CO, Kg}, x5.options());
    }
    const at::Tensor dst =
        single ? (n0 == 0 ? gw2.unsqueeze(0) : at::empty({1, g.CO, Kg}, x5.options())) : part;
    for (int64_t gi = 0; gi < g.G; ++gi) {
      gemm_into(dst.narrow(1, gi * g.COg(), g.COg()), gy3.narrow(1, gi * g.COg(), g.COg()),
                cols.narrow(1, gi * Kg, Kg).transpose(1, 2), at::Tensor());
    }
    if (single) {
      if (n0 != 0) gw2.add_(dst[0]);
    } else if (n0 == 0) {
      at::Tensor out = gw2;
      at::sum_out(out, part, at::IntArrayRef{0});
    } else {
      gw2.add_(part.sum(0));
    }
  }
  return gw;
}

// ------------------------------------------------------------------------------------------
// The operators.

// Geometry of the normal convolution whose input is `in` and output `out` (both [N, C, ...]).
Geom make_geom(const at::Tensor& in, const at::Tensor& out_like_sizes_src, c10::IntArrayRef out_sp,
               const at::Tensor& w, bool transposed, c10::IntArrayRef stride,
               c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups) {
  Geom g;
  g.N = in.size(0);
  g.C = in.size(1);
  g.CO = out_like_sizes_src.size(1);
  g.G = groups;
  g.isz = spatial(in);
  g.osz = pad3(out_sp, 1);
  g.ks = spatial(w);
  g.st = pad3(stride, 1);
  g.pd = pad3(padding, 0);
  g.dl = pad3(dilation, 1);
  return g;
}

void check_args(const at::Tensor& input, const at::Tensor& weight, int64_t groups,
                c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
                c10::IntArrayRef output_padding) {
  const int64_t nd = weight.dim() - 2;
  TORCH_CHECK(nd >= 1 && nd <= 3 && input.dim() == weight.dim(),
              "torch-ocl: convolution expects a batched 1d/2d/3d input with a weight of the same "
              "rank, got input ",
              input.sizes(), " and weight ", weight.sizes());
  TORCH_CHECK(groups > 0, "non-positive groups is not supported");
  for (auto* p : {&stride, &padding, &dilation, &output_padding}) {
    TORCH_CHECK(static_cast<int64_t>(p->size()) == nd,
                "torch-ocl: convolution parameters must have one entry per spatial dim");
  }
  TORCH_CHECK(input.device() == weight.device(),
              "convolution: input and weight must be on the "
              "same device");
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(),
              ") and weight type (", weight.scalar_type(), ") should be the same");
}

at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias_opt,
                                    c10::IntArrayRef stride, c10::IntArrayRef padding,
                                    c10::IntArrayRef dilation, bool transposed,
                                    c10::IntArrayRef output_padding, int64_t groups) {
  check_args(input, weight, groups, stride, padding, dilation, output_padding);
  c10::DeviceGuard guard(input.device());
  const at::ScalarType dt = input.scalar_type();
  const at::ScalarType ct = compute_type(dt);
  const at::Tensor bias = bias_opt.has_value() && bias_opt->defined() ? *bias_opt : at::Tensor();
  const int64_t nd = weight.dim() - 2;
  std::vector<int64_t> out_sizes{input.size(0),
                                 transposed ? weight.size(1) * groups : weight.size(0)};
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t in = input.size(2 + i), k = weight.size(2 + i);
    out_sizes.push_back(transposed
                            ? (in - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) +
                                  output_padding[i] + 1
                            : (in + 2 * padding[i] - dilation[i] * (k - 1) - 1) / stride[i] + 1);
    TORCH_CHECK(out_sizes.back() >= 0, "torch-ocl: convolution output size is negative");
  }
  const at::MemoryFormat fmt = conv_format(input, weight);
  at::Tensor out = at::empty(out_sizes, input.options().memory_format(fmt));
  if (out.numel() == 0) return out;
  at::Tensor out_c =
      ct == dt ? out : at::empty(out_sizes, out.options().dtype(ct).memory_format(fmt));
  const at::Tensor x5 = to5d(input.to(ct)), w5 = to5d(weight.to(ct)), o5 = to5d(out_c);
  const at::Tensor b = bias.defined() ? bias.to(ct) : bias;
  if (!transposed) {
    const Geom g = make_geom(input, out, out.sizes().slice(2), weight, false, stride, padding,
                             dilation, groups);
    forward_into(x5, w5, b, g, o5);
  } else {
    // The input gradient of the normal convolution out -> input.
    const Geom g = make_geom(out, input, input.sizes().slice(2), weight, true, stride, padding,
                             dilation, groups);
    input_grad_into(x5, w5, b, g, o5);
  }
  if (!out_c.is_same(out)) out.copy_(out_c);
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
    c10::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  check_args(input, weight, groups, stride, padding, dilation, output_padding);
  c10::DeviceGuard guard(input.device());
  const at::ScalarType dt = input.scalar_type();
  const at::ScalarType ct = compute_type(dt);
  const at::MemoryFormat fmt = conv_format(input, weight);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (!output_mask[0] && !output_mask[1] && !output_mask[2]) return {};
  const at::Tensor gy5 = to5d(grad_output.to(ct)), x5 = to5d(input.to(ct)),
                   w5 = to5d(weight.to(ct));
  // The normal convolution: "input" -> "output".
  const at::Tensor& n_in = transposed ? grad_output : input;
  const at::Tensor& n_out = transposed ? input : grad_output;
  const Geom g = make_geom(n_in, n_out, n_out.sizes().slice(2), weight, transposed, stride, padding,
                           dilation, groups);
  if (output_mask[0]) {
    grad_input = at::empty(input.sizes(), input.options().memory_format(fmt));
    at::Tensor gi_c =
        ct == dt ? grad_input
                 : at::empty(input.sizes(), grad_input.options().dtype(ct).memory_format(fmt));
    if (transposed) {
      forward_into(gy5, w5, at::Tensor(), g, to5d(gi_c));
    } else {
      input_grad_into(gy5, w5, at::Tensor(), g, to5d(gi_c));
    }
    if (!gi_c.is_same(grad_input)) grad_input.copy_(gi_c);
  }
  if (output_mask[1]) {
    const at::Tensor gw = transposed ? weight_grad(x5, gy5, w5, g) : weight_grad(gy5, x5, w5, g);
    grad_weight = at::empty(weight.sizes(), weight.options().memory_format(fmt));
    grad_weight.copy_(gw.view(weight.sizes()));
  }
  if (output_mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < grad_output.dim(); ++d) dims.push_back(d);
    grad_bias = at::sum(grad_output, dims);
  }
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ocl, m) {
  // "gemm" or "winograd" forces that algorithm where it applies; "" lets torch-ocl choose.
  m.def("set_conv_algorithm(str name) -> ()", [](const std::string& name) {
    TORCH_CHECK(name.empty() || name == "gemm" || name == "winograd",
                "set_conv_algorithm: expected \"gemm\", \"winograd\" or \"\", got \"", name, "\"");
    g_forced_algo.store(name.empty() ? -1 : name == "gemm" ? 0 : 1);
  });
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution_overrideable);
  m.impl("convolution_backward_overrideable", convolution_backward_overrideable);
}

}  // namespace torch_ocl
