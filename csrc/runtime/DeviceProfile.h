// Device profiles: the one place that decides which variant of a kernel family a device runs and
// with which launch parameters. Built once per device from its DeviceInfo (type, vendor, compute
// units, work-group and local-memory limits, extensions); ops read the profile and never test the
// device type themselves.
//
// Two classes of profile:
//   cpu - work-items run one after another on a few cores (PoCL, Intel's CPU runtime): streaming
//         kernels take a run of consecutive elements per work-item, the GEMM is register-blocked
//         with packed operands, no local-memory tiles;
//   gpu - thousands of work-items in wavefronts: one element per work-item (coalesced), large
//         work-groups, local-memory tiles (the tiled GEMM of kernels/mm_tiled.cl), work-group
//         trees.
// TORCH_OCL_DEVICE_PROFILE=gpu gives every device the GPU profile (=cpu the CPU one, =auto or unset
// the device's own), so the GPU variants run, and are tested, on PoCL at PoCL's speed.
// TORCH_OCL_DEVICE_PARAMS="name=value,..." overrides single parameters (names as in params()), for
// experiments and tests; an unknown name or a bad value is an error that lists the names.
//
// runtime/ knows no op names: the fields below are launch-shape questions (how many elements per
// work-item, how large a work-group, which GEMM form) that op families ask.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace torch_ocl {

// The tiled GEMM's shape (kernels/mm_tiled.cl): a work-group of wg_m x wg_n work-items computes a
// tile_m x tile_n block of C, tile_k values of k at a time through local memory (rows padded by
// `pad` elements), each work-item a (tile_m / wg_m) x (tile_n / wg_n) block in registers, the
// tiles loaded `vec` consecutive elements at a time where the operands are aligned for it.
struct GemmTile {
  int tile_m = 64, tile_n = 64, tile_k = 16, wg_m = 16, wg_n = 16, pad = 1, vec = 1;

  // "64x64x16:16x16:1:4" (the last field, vec, may be left out: 1); parse() accepts exactly that
  // form and returns false on anything else.
  std::string str() const;
  static bool parse(const std::string& s, GemmTile* out);
  // The kernel's build options (-DTILE_M=.. ...; the vector widths are the launch's: VEC_A/B).
  std::string options() const;
  int work_group() const { return wg_m * wg_n; }
  // The same tile with the roles of m and n swapped (skinny products with few columns).
  GemmTile transposed() const { return {tile_n, tile_m, tile_k, wg_n, wg_m, pad, vec}; }
  // Whether the kernel accepts this shape on a device with these limits for elements of
  // `elem_bytes` bytes (divisibility, register block size, work-group and local-memory limits).
  bool legal(size_t max_work_group, uint64_t local_mem, size_t elem_bytes) const;
  bool operator==(const GemmTile& o) const {
    return tile_m == o.tile_m && tile_n == o.tile_n && tile_k == o.tile_k && wg_m == o.wg_m &&
           wg_n == o.wg_n && pad == o.pad && vec == o.vec;
  }
};

enum class ProfileClass { kCpu, kGpu };

struct DeviceProfile {
  ProfileClass cls = ProfileClass::kGpu;
  // What chose the class: "device type", or "TORCH_OCL_DEVICE_PROFILE".
  std::string class_source;
  // Normalised names (as CLBlast's device mapping does): vendor "nvidia", "amd", "intel", "arm",
  // "qualcomm", "apple", "pocl" (PoCL's CPU device, whatever CPU it runs on), "oclgrind", or
  // "other"; arch: the device name without PoCL's "pthread-"/"cpu-" prefix.
  std::string vendor, arch;
  // Work-items that run in lock step (a warp / wavefront / SIMD width); 1 on CPU devices.
  int simd_width = 32;
  bool subgroups = false;  // cl_khr_subgroups or cl_intel_subgroups

  // --- streaming kernels (elementwise, normalisation, copies, depthwise convolution) ---
  // Consecutive elements a work-item takes in a row: 64 on PoCL, where a work-item's own loop is
  // vectorised and runs far faster than one work-item per element (about 2 ns per work-item); 1
  // on GPUs and on CPU runtimes that vectorise across work-items (Intel's).
  int stream_chunk = 1;
  // Work-group size of the one-work-group batch of tiny ops and of the multi-tensor kernels.
  int batch_lws = 256;
  // The batch of tiny ops takes ops up to kBatchNumelLimit / batch_numel_divisor elements.
  int batch_numel_divisor = 1;
  int multi_tensor_lws = 256;
  int multi_tensor_per_item = 8;  // elements per work-item of the multi-tensor kernels
  // Positions an index/scatter work-item takes (CPU: saves the index arithmetic per position).
  int index_chunk = 1;
  // Scans along contiguous rows in work-group tiles (coalesced) rather than one column per
  // work-item.
  bool scan_tiles = true;
  // Fused attention (kernels/attention.cl): query rows per work-item and work-group size.
  int attention_rows = 1, attention_lws = 64;
  // Attention in the flash-attention-2 layout (kernels/attention_flash.cl) instead: a work-group
  // keeps a block of attention_flash_rows rows (query rows; key rows for dK/dV) and streams the
  // other side attention_flash_cols rows at a time; its work-items, attention_flash_wg_rows x
  // attention_flash_wg_cols, share the block (each a (rows / wg_rows) x (cols / wg_cols) block
  // of scores in registers, and the head dim of its rows' accumulators split wg_cols ways);
  // scores and products go through local tiles of attention_flash_tile_d head-dim values (or
  // rows). The op shrinks the block where the device's local memory or the compiled kernel's
  // work-group limit allows less, and falls back to kernels/attention.cl where nothing fits.
  bool attention_flash = true;
  int attention_flash_rows = 64, attention_flash_cols = 64;
  int attention_flash_wg_rows = 16, attention_flash_wg_cols = 16;
  int attention_flash_tile_d = 16;
  // FFT passes (kernels/fft.cl): work-group size, and butterflies a work-item computes in a row
  // (CPU devices: a work-item's loop runs as one vectorised loop; GPUs: one each).
  int fft_lws = 64, fft_per_item = 1;
  // Bytes of im2col columns a convolution materialises at once: cache-sized on CPU devices.
  int64_t conv_cols_bytes = int64_t{256} << 20;
  // Convolutions (forward, and the input gradient at stride 1) as one implicit GEMM on the tiled
  // kernel, reading the input in place (no im2col buffer); else im2col + GEMM.
  bool conv_implicit_gemm = true;

  // --- reductions ---
  // Work-groups that fill the device: a reduction with fewer output rows than a quarter of this
  // splits each long row among several work-groups and reduces their partials in a second pass.
  int reduce_fill_groups = 256;
  // Fewest elements a work-group of a split row takes.
  int reduce_split_chunk = 4096;
  // Column reductions (kept dims contiguous, reduced dims strided: a sum over the batch, a bias
  // gradient): 0 = one work-item per output walking its column (CPU devices); n > 0 = work-groups
  // of n neighbouring outputs (coalesced loads) by rows of work-items sharing the column, the
  // column split among work-groups until the device is full.
  int reduce_col_tile = 32;

  // --- GEMM ---
  // true: the register-blocked kernel (kernels/mm.cl), large operands packed into its fastest
  // layout and half types widened to float32 first; false: the tiled kernel (mm_tiled.cl).
  bool gemm_register_blocked = false;
  // Tiles of the tiled GEMM by problem size: the first whose grid of work-groups fills the device
  // (large, then medium), else small; gemm_skinny for products with at most 16 rows (few rows of
  // A: a Linear layer on a small batch), transposed for at most 16 columns. Tuning
  // (runtime/Tuning) may replace them per size class.
  GemmTile gemm_large, gemm_medium, gemm_small, gemm_skinny;

  // The device's work-group limit (CL_DEVICE_MAX_WORK_GROUP_SIZE).
  size_t max_work_group = 256;
  // `want` (a power of two) or the largest power of two the device allows in a work-group, if
  // that is smaller: fixed work-group sizes pass through here.
  size_t fit_lws(size_t want) const {
    size_t p = 1;
    while (p * 2 <= want && p * 2 <= max_work_group) p *= 2;
    return p;
  }

  const char* class_name() const { return cls == ProfileClass::kCpu ? "cpu" : "gpu"; }
  // Every parameter as (name, value) strings, in a fixed order (torch.ocl.device_profile).
  std::vector<std::pair<std::string, std::string>> params() const;
};

// The profile of device `index` (built on first use; throws like device_info for a bad index, and
// for a bad TORCH_OCL_DEVICE_PROFILE / TORCH_OCL_DEVICE_PARAMS).
const DeviceProfile& device_profile(int index);

}  // namespace torch_ocl
