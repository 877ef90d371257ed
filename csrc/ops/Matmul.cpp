// mm, addmm (and so nn.Linear), bmm and baddbmm (batches in one launch): on devices whose profile
// says so (CPU devices) with the register-blocked kernel of kernels/mm.cl, elsewhere with the
// local-memory tiled kernel of kernels/mm_tiled.cl, its tile from ops/GemmTiles.h; addmv (and so
// mv, matmul of a matrix and a vector), dot and vdot with its gemv kernel; addbmm as ATen's own
// function (one addmm_ per batch); trace as the sum of the diagonal. Transposed operands are read
// in place (A_TRANS / B_TRANS); other layouts are made contiguous first. float16/bfloat16
// accumulate in float32; they are read and stored as they are (gemv everywhere, the tiled mm; the
// register-blocked mm widens its operands once, see baddbmm_impl); integers wrap around like CPU
// torch's. Registered through Structured.h: ATen's meta functions check shapes and dtypes, out= and
// in-place are checked and resized there, and an output that overlaps an operand is computed into a
// temporary.
#include "ops/Matmul.h"

#include <ATen/ops/_addmm_activation_meta.h>
#include <ATen/ops/addbmm_native.h>
#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/addmv_meta.h>
#include <ATen/ops/baddbmm_meta.h>
#include <ATen/ops/bmm_meta.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/mm_meta.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <torch/library.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "ops/GemmTiles.h"
#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

struct Operand {
  at::Tensor t;
  bool trans = false;
  int64_t ld = 0;
  int64_t sb = 0;  // batch stride (0: one matrix, or the same matrix for every batch)
};

// A batch of matrices (B x rows x cols): each row-major (ld = row stride, unit column stride) or
// transposed (unit row stride), at a fixed batch stride. Other layouts are made contiguous.
bool is_row_major(const at::Tensor& x) {
  const int64_t rows = x.size(1), cols = x.size(2);
  return (x.stride(2) == 1 || cols == 1) &&
         (rows == 1 || x.stride(1) >= std::max<int64_t>(cols, 1));
}

// Read as transposed (A_TRANS / B_TRANS) by the kernel: not row-major, unit row stride.
bool is_read_transposed(const at::Tensor& x) {
  const int64_t rows = x.size(1), cols = x.size(2);
  return !is_row_major(x) && (x.stride(1) == 1 || rows == 1) &&
         (cols == 1 || x.stride(2) >= std::max<int64_t>(rows, 1));
}

Operand layout(const at::Tensor& x) {
  const int64_t rows = x.size(1), cols = x.size(2);
  const int64_t s0 = x.stride(1), s1 = x.stride(2);
  const int64_t sb = x.size(0) == 1 ? 0 : x.stride(0);
  if (is_row_major(x)) return {x, false, rows == 1 ? std::max<int64_t>(cols, 1) : s0, sb};
  if (is_read_transposed(x)) return {x, true, cols == 1 ? std::max<int64_t>(rows, 1) : s1, sb};
  at::Tensor c = x.contiguous();
  return {c, false, std::max<int64_t>(cols, 1), x.size(0) == 1 ? 0 : rows * cols};
}

// The kernel's element type options: integers compute as the unsigned type of their size, whose
// wrap-around arithmetic gives the same bits as CPU torch's two's-complement wrap-around;
// float16/bfloat16 are stored as they are and computed in float (-DMM_S, kernels/mm.cl).
std::string mm_type_options(at::ScalarType t, int device) {
  switch (t) {
    case at::kLong:
      return "-DT=ulong";
    case at::kInt:
      return "-DT=uint";
    case at::kShort:
      return "-DT=ushort";
    case at::kChar:
    case at::kByte:
      return "-DT=uchar";
    case at::kHalf:
    case at::kBFloat16:
      return std::string("-DT=float -DMM_S=") + type_tag(t, device);
    default:
      return std::string("-DT=") + type_tag(t, device);
  }
}

// alpha / beta as a kernel argument of the kernel's element type.
void push_mm_scalar(KernelLaunch& launch, const at::Scalar& v, at::ScalarType t) {
  if (is_floating_tag(t)) {
    push_compute_scalar(launch, v, t);
    return;
  }
  const uint64_t bits = static_cast<uint64_t>(v.to<int64_t>());
  switch (c10::elementSize(t)) {
    case 1:
      launch.arg(static_cast<cl_uchar>(bits));
      break;
    case 2:
      launch.arg(static_cast<cl_ushort>(bits));
      break;
    case 4:
      launch.arg(static_cast<cl_uint>(bits));
      break;
    default:
      launch.arg(static_cast<cl_ulong>(bits));
      break;
  }
}

bool is_half_storage(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }

// Whether every `vec` consecutive elements along the operand's contiguous dimension that the
// tiled kernel reads start at a multiple of `vec` elements from the buffer's start (the buffer
// itself is aligned far more): its offset, leading dimension and batch stride are multiples.
bool vector_aligned(const Operand& x, int vec) {
  const int64_t item = static_cast<int64_t>(x.t.itemsize());
  const int64_t offset = static_cast<int64_t>(buffer_of(x.t).offset) / item;
  return offset % vec == 0 && x.ld % vec == 0 && x.sb % vec == 0;
}

// out (B x M x N, compute dtype, unit column stride, any row and batch strides) = alpha * a @ b +
// beta * bias, batch by batch (bias B x M x N, possibly expanded, or undefined). The kernel: the
// tiled one with `forced` (the tuner's candidate) or the tile ops/GemmTiles.h chooses, else the
// register-blocked one. `event` (optional) receives the launch's event, for timing.
void launch_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias,
               const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out,
               const GemmTile* forced = nullptr, cl_event* event = nullptr) {
  const int64_t nb = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  if (nb == 0 || M == 0 || N == 0) return;
  const int device = out.device().index();
  const at::ScalarType t = out.scalar_type();
  const Operand A = layout(a), B = layout(b);
  const bool has_bias = bias.defined() && beta.toDouble() != 0.0;
  std::optional<GemmTile> tile;
  if (forced) {
    tile = *forced;
  } else if (!device_profile(device).gemm_register_blocked) {
    tile = gemm_tile_for(device, GemmProblem{t, A.trans, B.trans, M, N, K, nb});
  }
  std::string opts = mm_type_options(t, device);
  if (A.trans) opts += " -DA_TRANS";
  if (B.trans) opts += " -DB_TRANS";
  if (has_bias) opts += " -DHAS_BIAS";
  if (tile) {
    opts += " " + tile->options();
    // Vector tile loads where the operand's vectors are aligned (mm_tiled.cl's VEC_A/VEC_B).
    if (tile->vec > 1 && !is_half_storage(t)) {
      if (vector_aligned(A, tile->vec)) opts += " -DVEC_A=" + std::to_string(tile->vec);
      if (vector_aligned(B, tile->vec)) opts += " -DVEC_B=" + std::to_string(tile->vec);
    }
  }
  cl_kernel k = tile ? get_kernel(device, "mm_tiled.cl", "mm_tiled", opts)
                     : get_kernel(device, "mm.cl", "mm", opts);
  if (tile && !forced) {
    // The compiled kernel may allow fewer work-items per group than the tile has (registers or
    // private memory: Intel's CPU runtime allows 160 for 128x128 tiles): then a smaller tile.
    const size_t allowed = kernel_work_group_limit(k, device);
    if (allowed < static_cast<size_t>(tile->work_group())) {
      const GemmTile fallbacks[2] = {device_profile(device).gemm_small,
                                     GemmTile{16, 16, 8, 4, 4, 0, 1}};
      for (const GemmTile& f : fallbacks) {
        if (static_cast<size_t>(f.work_group()) <= allowed && !(f == *tile)) {
          launch_mm(a, b, bias, beta, alpha, out, &f, event);
          return;
        }
      }
      TORCH_CHECK(false, "torch-ocl: the tiled GEMM kernel allows only ", allowed,
                  " work-items per group on ", device_info(device).name,
                  "; no tile fits (TORCH_OCL_DEVICE_PROFILE=cpu uses the register-blocked GEMM)");
    }
  }
  const size_t item = out.itemsize();
  KernelLaunch launch(k);
  launch.arg(static_cast<cl_int>(M)).arg(static_cast<cl_int>(N)).arg(static_cast<cl_int>(K));
  launch.buffer(buffer_of(A.t), item).arg(static_cast<cl_long>(A.ld));
  launch.buffer(buffer_of(B.t), item).arg(static_cast<cl_long>(B.ld));
  TORCH_INTERNAL_ASSERT(out.stride(2) == 1 || N == 1, "mm: the output needs unit column stride");
  launch.buffer(buffer_of(out), item).arg(static_cast<cl_long>(M == 1 ? N : out.stride(1)));
  push_mm_scalar(launch, alpha, t);
  push_mm_scalar(launch, has_bias ? beta : c10::Scalar(0), t);
  int64_t bias_sb = 0;
  if (has_bias) {
    bias_sb = nb == 1 ? 0 : bias.stride(0);
    launch.buffer(buffer_of(bias), item)
        .arg(static_cast<cl_long>(bias.stride(1)))
        .arg(static_cast<cl_long>(bias.stride(2)));
  } else {
    launch.buffer(buffer_of(out), item).arg(static_cast<cl_long>(0)).arg(static_cast<cl_long>(0));
  }
  launch.arg(static_cast<cl_long>(A.sb)).arg(static_cast<cl_long>(B.sb));
  launch.arg(static_cast<cl_long>(nb == 1 ? 0 : out.stride(0))).arg(static_cast<cl_long>(bias_sb));
  if (tile) {
    // kernels/mm_tiled.cl's geometry: a work-group of WG_N x WG_M per TILE_M x TILE_N block.
    const size_t tm = tile->tile_m, tn = tile->tile_n;
    const size_t global[3] = {(N + tn - 1) / tn * tile->wg_n, (M + tm - 1) / tm * tile->wg_m,
                              static_cast<size_t>(nb)};
    const size_t local[3] = {static_cast<size_t>(tile->wg_n), static_cast<size_t>(tile->wg_m), 1};
    launch.enqueue(device, 3, global, local, event);
    return;
  }
  const size_t TM = 6, TN = item == 8 ? 8 : 16, LX = 2, LY = 4;
  auto roundup = [](size_t x, size_t l) { return (x + l - 1) / l * l; };
  const size_t global[3] = {roundup((N + TN - 1) / TN, LX), roundup((M + TM - 1) / TM, LY),
                            static_cast<size_t>(nb)};
  const size_t local[3] = {LX, LY, 1};
  launch.enqueue(device, 3, global, local, event);
}

// The register-blocked kernel (CPU devices) is fastest with A row-major and B stored N x K
// (B_TRANS: both read along k). Reading B row by row (a new row, 4 KB apart at N = 1024, for every
// k) or A transposed is much slower once the operands outgrow the caches (PoCL, 2 cores, GFLOP/s of
// A @ B, B row-major / B stored N x K / A transposed: 512^3 94 / 96 / 75, 1024^3 72 / 111 / 20,
// 2048^3 29 / 86 / 15). So large operands are copied into that layout first (the packing step of a
// CPU GEMM; a copy streams at memory speed, the product reads each element N or M times). GPUs read
// the operands where they are.
void cpu_pack_operands(at::Tensor& a, at::Tensor& b) {
  const int64_t M = a.size(1), K = a.size(2), N = b.size(2);
  constexpr int64_t kMinElements = 1 << 18;  // 1 MB of float32: more than a core's L2 holds
  constexpr int64_t kMinReuse = 64;          // rows (columns) that read each packed element
  if (!is_read_transposed(b) && K * N >= kMinElements && M >= kMinReuse)
    b = b.transpose(1, 2).contiguous().transpose(1, 2);
  if (is_read_transposed(a) && M * K >= kMinElements && N >= kMinReuse) a = a.contiguous();
}

void baddbmm_impl(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b,
                  const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out,
                  const char* name);

// Complex products as one real GEMM (the 4M form, one launch): A's interleaved (re, im) columns
// [B, M, 2K] (view_as_real of A, no copy when A is contiguous) times the real [B, 2K, 2N] matrix
// whose row pair (2p, 2p+1) is (br, bi interleaved) and (-bi, br interleaved) for row p of B;
// the product's interleaved columns are view_as_real of C itself. The real GEMM keeps its tuned
// kernels and its rounding (no 3M cancellation); B' costs 4x B's memory, built by stack.
void complex_baddbmm(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b,
                     const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out,
                     const char* name) {
  const int64_t nb = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  const at::Tensor ar =
      at::view_as_real(a.resolve_conj().resolve_neg().contiguous()).reshape({nb, M, 2 * K});
  const at::Tensor bv = at::view_as_real(b.resolve_conj().resolve_neg());
  const at::Tensor br = bv.select(-1, 0), bi = bv.select(-1, 1);
  const at::Tensor b2 = at::stack({at::stack({br, bi}, -1), at::stack({bi.neg(), br}, -1)}, 2)
                            .reshape({nb, 2 * K, 2 * N});
  at::Tensor prod = at::empty({nb, M, 2 * N}, ar.options());
  baddbmm_impl({}, ar, b2, 0, 1, prod, name);
  at::Tensor c = at::view_as_complex(prod.view({nb, M, N, 2}));
  if (!alpha.equal(1)) c = c.mul(alpha);
  if (bias.defined() && !beta.equal(0)) c = c.add(bias, beta);
  out.copy_(c);
}

// out (B x M x N, contiguous) = beta * bias + alpha * a @ b for batches of matrices: bias is
// undefined (bmm) or broadcastable to B x M x N.
void baddbmm_impl(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b,
                  const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out,
                  const char* name) {
  const at::ScalarType t = a.scalar_type();
  TORCH_CHECK(t != at::kBool && t != at::kComplexHalf, "\"", name, "\" not implemented for '", t,
              "'");
  if (at::isComplexType(t)) return complex_baddbmm(bias, a, b, beta, alpha, out, name);
  const int64_t nb = a.size(0), M = a.size(1), N = b.size(2);
  at::Tensor bias_bmn;
  if (bias.defined()) bias_bmn = bias.expand({nb, M, N});
  const int device = out.device().index();
  // The register-blocked kernel (the CPU profile's) gets packed operands, and half types widened.
  const bool cpu_device = device_profile(device).gemm_register_blocked;
  if ((t == at::kHalf || t == at::kBFloat16) && cpu_device) {
    // The register-blocked kernel's operands are widened to float32 once (the packing step of a
    // CPU GEMM): it reads every element of A and B many times, and widening a half on each read
    // costs more than the multiply-adds (PoCL, 512^3: 10-12 GFLOP/s reading float16 in the
    // kernel, 80 with float32 copies; bfloat16 78 and 140). The tiled kernel widens each element
    // once, into local memory.
    at::Tensor tmp = at::empty({nb, M, N}, out.options().dtype(at::kFloat));
    at::Tensor a32 = a.to(at::kFloat), b32 = b.to(at::kFloat);
    cpu_pack_operands(a32, b32);
    launch_mm(a32, b32, bias_bmn.defined() ? bias_bmn.to(at::kFloat) : bias_bmn, beta, alpha, tmp);
    out.copy_(tmp);
    return;
  }
  at::Tensor pa = a, pb = b;
  if (cpu_device) cpu_pack_operands(pa, pb);
  launch_mm(pa, pb, bias_bmn, beta, alpha, out);
}

}  // namespace

void gemm_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
               const at::Tensor& bias) {
  launch_mm(a, b, bias, 1, 1, out);
}

void gemm_with_tile(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                    const GemmTile& tile, cl_event* event) {
  launch_mm(a, b, {}, 0, 1, out, &tile, event);
}

namespace {

// out = beta * bias + alpha * a @ b (bias undefined for mm). The shapes and dtypes were checked
// by ATen's meta functions; out is contiguous and shares memory with a and b at most through
// the bias (Structured.h).
void addmm_kernel_impl(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b,
                       const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  baddbmm_impl(bias.defined() ? bias.expand({a.size(0), b.size(1)}).unsqueeze(0) : bias,
               a.unsqueeze(0), b.unsqueeze(0), beta, alpha, out.unsqueeze(0), "addmm");
}

void mm_kernel(const Outputs<1>& out, const at::Tensor& a, const at::Tensor& b) {
  addmm_kernel_impl({}, a, b, 0, 1, out[0]);
}
void addmm_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Tensor& a,
                  const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha) {
  addmm_kernel_impl(self, a, b, beta, alpha, out[0]);
}

// addmm with ReLU or GELU applied to the result (nn.Linear + activation in the transformer
// fast path); GELU exact, as the CPU's.
void addmm_activation_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Tensor& a,
                             const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha,
                             bool use_gelu) {
  addmm_kernel_impl(self, a, b, beta, alpha, out[0]);
  at::Tensor result = out[0];
  if (use_gelu) {
    at::gelu_(result);
  } else {
    at::relu_(result);
  }
}

void bmm_kernel(const Outputs<1>& out, const at::Tensor& a, const at::Tensor& b) {
  baddbmm_impl({}, a, b, 0, 1, out[0], "bmm");
}
void baddbmm_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Tensor& a,
                    const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha) {
  baddbmm_impl(self, a, b, beta, alpha, out[0], "baddbmm");
}

using Mm = Structured<at::meta::structured_mm, mm_kernel>;
using Bmm = Structured<at::meta::structured_bmm, bmm_kernel>;
// As addmm's bias, baddbmm's self may be the output itself.
using Baddbmm = Structured<at::meta::structured_baddbmm, baddbmm_kernel, 0>;
// The bias (argument 0) may be the output itself: the kernel reads each bias element only in the
// work-item that then writes that element (x.addmm_(a, b) needs no temporary).
using Addmm = Structured<at::meta::structured_addmm, addmm_kernel, 0>;
using AddmmActivation =
    Structured<at::meta::structured__addmm_activation, addmm_activation_kernel, 0>;

// ATen's baddbmm meta function copies self into the output before any kernel runs, so an output
// that shares memory with batch1 or batch2 would lose them first: those are read from copies.
at::Tensor unaliased(const at::Tensor& t, const at::Tensor& out) {
  return shares_memory(out, t) ? t.clone() : t;
}
at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                        const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  return Baddbmm::out(self, unaliased(a, out), unaliased(b, out), beta, alpha, out);
}
at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  return Baddbmm::inplace(self, unaliased(a, self), unaliased(b, self), beta, alpha);
}

// y (M elements at stride y.stride(0)) = alpha * a (M x K, any strides) @ x (K) + beta * bias
// (broadcast to M, or undefined) with the gemv kernel. a, x and bias have y's dtype.
void launch_gemv(const at::Tensor& a, const at::Tensor& x, const at::Tensor& bias,
                 const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& y) {
  const int64_t M = a.size(0), K = a.size(1);
  if (M == 0) return;
  const int device = y.device().index();
  const at::ScalarType t = y.scalar_type();
  const bool has_bias = bias.defined() && beta.toDouble() != 0.0;
  std::string opts = mm_type_options(t, device);
  if (has_bias) opts += " -DHAS_BIAS";
  if ((a.stride(1) == 1 || K <= 1) && (x.stride(0) == 1 || K <= 1)) opts += " -DUNIT_K";
  constexpr size_t kGemvLws = 16;  // the kernel's default GLWS
  KernelLaunch launch(get_kernel(device, "mm.cl", "gemv", opts));
  const size_t item = y.itemsize();
  launch.arg(static_cast<cl_ulong>(K));
  launch.buffer(buffer_of(a), item)
      .arg(static_cast<cl_long>(a.stride(0)))
      .arg(static_cast<cl_long>(a.stride(1)));
  launch.buffer(buffer_of(x), item).arg(static_cast<cl_long>(x.stride(0)));
  launch.buffer(buffer_of(y), item).arg(static_cast<cl_long>(y.dim() ? y.stride(0) : 0));
  push_mm_scalar(launch, alpha, t);
  push_mm_scalar(launch, has_bias ? beta : c10::Scalar(0), t);
  if (has_bias) {
    launch.buffer(buffer_of(bias), item).arg(static_cast<cl_long>(bias.stride(0)));
  } else {
    launch.buffer(buffer_of(y), item).arg(static_cast<cl_long>(0));
  }
  launch.enqueue1d(device, static_cast<size_t>(M) * kGemvLws, kGemvLws);
}

// out (M) = beta * self + alpha * mat @ vec: ATen's meta function checked the shapes; the dtypes
// are checked here, as the CPU's kernel does.
void addmv_kernel(const Outputs<1>& out, const at::Tensor& self, const at::Tensor& mat,
                  const at::Tensor& vec, const at::Scalar& beta, const at::Scalar& alpha) {
  const at::ScalarType t = mat.scalar_type();
  TORCH_CHECK(t == vec.scalar_type() && t == self.scalar_type(),
              "addmv input tensors must have the same dtype, but got ", self.scalar_type(), ", ", t,
              ", and ", vec.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool && t != at::kComplexHalf,
                              "\"addmv\" not implemented for '", c10::toString(t), "'");
  if (at::isComplexType(t)) {  // as a one-column product (complex_baddbmm)
    const int64_t M = mat.size(0), K = mat.size(1);
    at::Tensor col = at::empty({1, M, 1}, out[0].options());
    baddbmm_impl(self.expand({M}).view({1, M, 1}), mat.unsqueeze(0), vec.reshape({1, K, 1}), beta,
                 alpha, col, "addmv");
    out[0].copy_(col.view({M}));
    return;
  }
  launch_gemv(mat, vec, self.expand({mat.size(0)}), beta, alpha, out[0]);
}
// The bias (argument 0) may be the output itself: each element is read by the work-group that
// then writes it.
using Addmv = Structured<at::meta::structured_addmv, addmv_kernel, 0>;

// dot of two 1-D tensors of one dtype (the CPU's checks and messages), a 0-dim result.
at::Tensor dot_impl(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(),
              "dot : expected both vectors to have same dtype, but found ", self.scalar_type(),
              " and ", other.scalar_type());
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
              "D and ", other.dim(), "D tensors");
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [",
              self.numel(), "] and src [", other.numel(),
              "] to have the same number of elements, but got ", self.numel(), " and ",
              other.numel(), " elements respectively");
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool && t != at::kComplexHalf,
                              "\"dot\" not implemented for '", c10::toString(t), "'");
  if (at::isComplexType(t)) return at::sum(at::mul(self, other));
  at::Tensor out = at::empty({}, self.options());
  launch_gemv(self.unsqueeze(0), other, {}, 0, 1, out);
  return out;
}

// vdot conjugates self: the same as dot for the real dtypes.
at::Tensor vdot_impl(const at::Tensor& self, const at::Tensor& other) {
  return dot_impl(self.is_complex() ? self.conj_physical() : self, other);
}

// trace: the sum of the diagonal; integers (and bool, which the CPU rejects) as int64.
at::Tensor trace_impl(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool && t != at::kComplexHalf,
                              "\"trace\" not implemented for '", c10::toString(t), "'");
  return at::sum(self.diagonal(), at::isIntegralType(t, false) ? at::kLong : t);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("addmv", Addmv::functional);
  m.impl("addmv.out", Addmv::out);
  m.impl("addmv_", Addmv::inplace);
  m.impl("dot", dot_impl);
  m.impl("vdot", vdot_impl);
  m.impl("trace", trace_impl);
  m.impl("addbmm", at::native::addbmm);
  m.impl("addbmm.out", at::native::addbmm_out);
  m.impl("addbmm_", at::native::addbmm_);
  m.impl("mm", Mm::functional);
  m.impl("mm.out", Mm::out);
  m.impl("addmm", Addmm::functional);
  m.impl("addmm.out", Addmm::out);
  m.impl("addmm_", Addmm::inplace);
  m.impl("_addmm_activation", AddmmActivation::functional);
  m.impl("_addmm_activation.out", AddmmActivation::out);
  m.impl("bmm", Bmm::functional);
  m.impl("bmm.out", Bmm::out);
  m.impl("baddbmm", Baddbmm::functional);
  m.impl("baddbmm.out", baddbmm_out);
  m.impl("baddbmm_", baddbmm_);
}

}  // namespace torch_ocl
