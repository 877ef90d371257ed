// Which tile the tiled GEMM (kernels/mm_tiled.cl) uses for a product, and its on-device tuner.
// The tile comes from, in order: the tuning store (runtime/Tuning.h) for the product's
// (dtype, layout, size class) on this device and driver; a tuning run, when tuning is on
// (torch.ocl.tuning_enabled) and the store has no entry; the device profile's default for the
// size class (runtime/DeviceProfile.h). A stored tile that does not parse or is not legal on the
// device counts as no entry.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "runtime/DeviceProfile.h"
#include "runtime/OpenCL.h"

namespace torch_ocl {

enum class GemmSize { kSmall, kMedium, kLarge, kSkinnyM, kSkinnyN };

struct GemmProblem {
  at::ScalarType dtype;
  bool a_trans = false, b_trans = false;
  int64_t M = 0, N = 0, K = 0, batches = 1;
};

// The tile for this product, or nullopt when the device runs the register-blocked kernel (CPU
// profile, or no tile fits the device for this element size).
std::optional<GemmTile> gemm_tile_for(int device, const GemmProblem& p);

// The legal candidates of the tuner for a size class and elements of `elem_bytes` on `device`, in
// a fixed order.
std::vector<GemmTile> gemm_candidates(int device, GemmSize cls, size_t elem_bytes);

struct GemmTuneResult {
  std::optional<GemmTile> best;
  std::vector<GemmTile> tried;
  std::vector<double> seconds;  // per tried tile; negative: failed to build/launch or wrong
  std::string key;              // the tuning store's key the result was recorded under
};
// Times up to `max_candidates` tiles (all legal ones if <= 0; a bounded, evenly spread subset
// always containing the profile's tiles otherwise) on random operands of the problem's shape,
// checks each against the profile default's result, records the fastest in the tuning store.
GemmTuneResult tune_gemm(int device, const GemmProblem& p, int max_candidates);

// CL_KERNEL_WORK_GROUP_SIZE of a shared kernel from get_kernel, asked once per kernel (SIZE_MAX
// where the driver does not say).
size_t kernel_work_group_limit(cl_kernel k, int device);

// The tiled GEMM kernel (kernels/mm_tiled.cl) built with `options` and *tile's, or - where the
// compiled kernel allows fewer work-items per group than the tile has (registers or private
// memory: Intel's CPU runtime allows 160 for the 128x128 tile) - with the profile's small tile or
// 16x16 with 16 work-items, which then replaces *tile. nullptr when none fits.
cl_kernel fitted_tiled_kernel(int device, const std::string& options, GemmTile* tile);

}  // namespace torch_ocl
