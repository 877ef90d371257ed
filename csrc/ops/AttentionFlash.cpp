#include "ops/AttentionFlash.h"

#include <ATen/ops/empty.h>

#include <algorithm>
#include <vector>

#include "ops/GemmTiles.h"
#include "ops/KernelTypes.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl::attention {
namespace {

// The block shape of kernels/attention_flash.cl (its header explains the names).
struct Block {
  int rows, cols, wg_rows, wg_cols, tile_d;
  int work_group() const { return wg_rows * wg_cols; }
  bool operator==(const Block& o) const {
    return rows == o.rows && cols == o.cols && wg_rows == o.wg_rows && wg_cols == o.wg_cols &&
           tile_d == o.tile_d;
  }
};

// The kernel's local memory for head dims dqk and dv (its LOCAL_FLOATS), in bytes.
size_t local_bytes(const Block& b, int64_t dqk, int64_t dv) {
  const int64_t nx = (std::max(dqk, dv) + b.wg_cols - 1) / b.wg_cols;
  const int64_t tiles =
      std::max<int64_t>(b.tile_d * (b.rows + 1 + b.cols + 1), b.tile_d * nx * b.wg_cols);
  return static_cast<size_t>(tiles + b.cols * (b.rows + 1) + b.rows * b.wg_cols + 2 * b.cols) *
         sizeof(float);
}

bool legal(const Block& b, const DeviceInfo& info, int64_t dqk, int64_t dv) {
  if (b.rows < 1 || b.cols < 1 || b.wg_rows < 1 || b.wg_cols < 1 || b.tile_d < 1) return false;
  if (b.rows % b.wg_rows || b.cols % b.wg_cols) return false;
  if (b.rows / b.wg_rows > 16 || b.cols / b.wg_cols > 16) return false;
  if (static_cast<size_t>(b.work_group()) > info.max_work_group) return false;
  return local_bytes(b, dqk, dv) <= info.local_mem;
}

// The profile's block, then the same halved (block and work-group together: the same register
// block per work-item in half the local memory and work-items) up to four times, keeping those
// legal on the device.
std::vector<Block> candidates(int device, int64_t dqk, int64_t dv) {
  const DeviceProfile& p = device_profile(device);
  const DeviceInfo& info = device_info(device);
  std::vector<Block> out;
  for (int s = 0; s <= 4; ++s) {
    const Block b{p.attention_flash_rows >> s, p.attention_flash_cols >> s,
                  std::max(1, p.attention_flash_wg_rows >> s),
                  std::max(1, p.attention_flash_wg_cols >> s), p.attention_flash_tile_d};
    if (legal(b, info, dqk, dv) && std::find(out.begin(), out.end(), b) == out.end())
      out.push_back(b);
  }
  return out;
}

std::string options(const Block& b, const FlashOperands& a, int device) {
  return std::string("-DT=") + type_tag(a.q.scalar_type(), device) +
         " -DM_T=" + type_tag(a.mask.type, device) + " -DDQK=" + std::to_string(a.g.DQK) +
         " -DDV=" + std::to_string(a.g.DV) + " -DBR=" + std::to_string(b.rows) +
         " -DBC=" + std::to_string(b.cols) + " -DWG_R=" + std::to_string(b.wg_rows) +
         " -DWG_C=" + std::to_string(b.wg_cols) + " -DTD=" + std::to_string(b.tile_d);
}

// The kernel `name` with the first candidate block whose compiled kernel allows its work-group
// (registers or private memory can limit it below the device's limit: Intel's CPU runtime), or
// nullptr when none does.
cl_kernel fitted_kernel(int device, const char* name, const FlashOperands& a, Block* block) {
  for (const Block& b : candidates(device, a.g.DQK, a.g.DV)) {
    cl_kernel k = get_kernel(device, "attention_flash.cl", name, options(b, a, device));
    if (kernel_work_group_limit(k, device) >= static_cast<size_t>(b.work_group())) {
      *block = b;
      return k;
    }
  }
  return nullptr;
}

// global = {ceil(rows / block rows) * wg_cols, groups * wg_rows}, local = {wg_cols, wg_rows}.
void enqueue_blocks(KernelLaunch& l, int device, const Block& b, int64_t rows, int64_t groups) {
  const size_t global[2] = {static_cast<size_t>((rows + b.rows - 1) / b.rows * b.wg_cols),
                            static_cast<size_t>(groups * b.wg_rows)};
  const size_t local[2] = {static_cast<size_t>(b.wg_cols), static_cast<size_t>(b.wg_rows)};
  l.enqueue(device, 2, global, local);
}

}  // namespace

bool flash_forward(int device, const FlashOperands& a, const at::Tensor& o, const at::Tensor& lse) {
  if (!device_profile(device).attention_flash) return false;
  Block b{};
  cl_kernel k = fitted_kernel(device, "flash_fwd", a, &b);
  if (!k) return false;
  KernelLaunch l(k);
  push4d(l, a.q);
  push4d(l, a.k);
  push4d(l, a.v);
  push4d(l, o);
  push_flat(l, lse);
  push_mask(l, a.mask, a.q);
  push_tail(l, a.causal, a.g, a.scale, a.drop);
  enqueue_blocks(l, device, b, a.g.L, a.g.B * a.g.H);
  return true;
}

bool flash_backward(int device, const FlashOperands& a, const at::Tensor& gr, const at::Tensor& o,
                    const at::Tensor& lse, const at::Tensor& dq, const at::Tensor& ds,
                    const at::Tensor& dk, const at::Tensor& dv) {
  if (!device_profile(device).attention_flash) return false;
  const Geometry& g = a.g;
  const bool want_q = dq.defined() || ds.defined(), want_kv = dk.defined() || dv.defined();
  Block bq{}, bkv{};
  cl_kernel kq = want_q ? fitted_kernel(device, "flash_bwd_dq", a, &bq) : nullptr;
  cl_kernel kkv = want_kv ? fitted_kernel(device, "flash_bwd_dkv", a, &bkv) : nullptr;
  if ((want_q && !kq) || (want_kv && !kkv)) return false;
  const Block& bd = want_q ? bq : bkv;  // delta's kernel: in the program built first

  at::Tensor delta = at::empty({g.B * g.H * g.L}, a.q.options().dtype(at::kFloat));
  {
    KernelLaunch l(
        get_kernel(device, "attention_flash.cl", "flash_bwd_delta", options(bd, a, device)));
    push4d(l, gr);
    push4d(l, o);
    push_flat(l, delta);
    l.arg(static_cast<cl_long>(g.H)).arg(static_cast<cl_long>(g.L));
    l.arg(static_cast<cl_long>(g.B * g.H * g.L));
    l.enqueue1d(device, g.B * g.H * g.L, device_profile(device).fit_lws(64));
  }
  if (want_q) {
    const at::Tensor t = dq.defined() ? dq : at::empty(a.q.sizes(), a.q.options());
    KernelLaunch l(kq);
    push4d(l, a.q);
    push4d(l, a.k);
    push4d(l, a.v);
    push4d(l, gr);
    push4d(l, t);
    push_flat(l, ds.defined() ? ds : delta);
    l.arg(static_cast<cl_int>(ds.defined()));
    push_flat(l, lse);
    push_flat(l, delta);
    push_mask(l, a.mask, a.q);
    push_tail(l, a.causal, g, a.scale, a.drop);
    enqueue_blocks(l, device, bq, g.L, g.B * g.H);
  }
  if (want_kv) {
    const at::Tensor tk = dk.defined() ? dk : at::empty(a.k.sizes(), a.k.options());
    const at::Tensor tv = dv.defined() ? dv : at::empty(a.v.sizes(), a.v.options());
    KernelLaunch l(kkv);
    push4d(l, a.q);
    push4d(l, a.k);
    push4d(l, a.v);
    push4d(l, gr);
    push4d(l, tk);
    push4d(l, tv);
    push_flat(l, lse);
    push_flat(l, delta);
    push_mask(l, a.mask, a.q);
    push_tail(l, a.causal, g, a.scale, a.drop);
    enqueue_blocks(l, device, bkv, g.S, g.B * g.HK);
  }
  return true;
}

}  // namespace torch_ocl::attention
