#include "ops/GemmTiles.h"

#include <ATen/ops/abs.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "ops/Matmul.h"
#include "runtime/Device.h"
#include "runtime/OclApi.h"
#include "runtime/Program.h"
#include "runtime/Tuner.h"
#include "runtime/Tuning.h"

namespace torch_ocl {
namespace {

// Candidates a first-use tuning run times (a few seconds at most on a GPU); an explicit
// torch.ocl.tune_gemm() may time them all.
constexpr int kFirstUseCandidates = 8;

size_t compute_bytes(at::ScalarType t) {
  return (t == at::kHalf || t == at::kBFloat16) ? 4 : c10::elementSize(t);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t groups(const GemmTile& t, const GemmProblem& p) {
  return ceil_div(p.M, t.tile_m) * ceil_div(p.N, t.tile_n) * std::max<int64_t>(p.batches, 1);
}

// At most this many rows (columns) make a product skinny.
constexpr int64_t kSkinny = 16;

// Skinny products (few rows or few columns) by their own tiles; otherwise the largest tile class
// whose grid of work-groups still gives every compute unit one.
GemmSize size_class(const DeviceProfile& prof, const DeviceInfo& info, const GemmProblem& p) {
  if (p.M <= kSkinny && p.N > kSkinny) return GemmSize::kSkinnyM;
  if (p.N <= kSkinny && p.M > kSkinny) return GemmSize::kSkinnyN;
  const int64_t cus = std::max<int64_t>(1, info.compute_units);
  if (groups(prof.gemm_large, p) >= cus) return GemmSize::kLarge;
  if (groups(prof.gemm_medium, p) >= cus) return GemmSize::kMedium;
  return GemmSize::kSmall;
}

const char* class_name(GemmSize s) {
  switch (s) {
    case GemmSize::kLarge:
      return "large";
    case GemmSize::kMedium:
      return "medium";
    case GemmSize::kSkinnyM:
      return "skinny_m";
    case GemmSize::kSkinnyN:
      return "skinny_n";
    default:
      return "small";
  }
}

// The profile's tile for a class (the skinny tile transposed for few columns).
GemmTile profile_tile(const DeviceProfile& prof, GemmSize cls) {
  switch (cls) {
    case GemmSize::kLarge:
      return prof.gemm_large;
    case GemmSize::kMedium:
      return prof.gemm_medium;
    case GemmSize::kSkinnyM:
      return prof.gemm_skinny;
    case GemmSize::kSkinnyN:
      return prof.gemm_skinny.transposed();
    default:
      return prof.gemm_small;
  }
}

bool legal_on(const GemmTile& t, const DeviceInfo& info, size_t elem_bytes) {
  return t.legal(info.max_work_group, info.local_mem, elem_bytes);
}

// The profile's tile for the class, stepping down to smaller classes where it does not fit this
// element size.
std::optional<GemmTile> default_tile(const DeviceProfile& prof, const DeviceInfo& info,
                                     GemmSize cls, size_t elem_bytes) {
  if (cls == GemmSize::kSkinnyM || cls == GemmSize::kSkinnyN) {
    const GemmTile t = profile_tile(prof, cls);
    if (legal_on(t, info, elem_bytes)) return t;
    cls = GemmSize::kSmall;
  }
  const GemmTile order[3] = {prof.gemm_large, prof.gemm_medium, prof.gemm_small};
  for (int i = 2 - static_cast<int>(cls); i < 3; ++i) {
    if (legal_on(order[i], info, elem_bytes)) return order[i];
  }
  return std::nullopt;
}

// The tuning store's key: the product's dtype, layout and size class, and a hash of the candidate
// list (a new candidate list, or new device limits, make old entries misses).
std::string tuning_key(int device, const GemmProblem& p, GemmSize cls) {
  // The candidate list is the same for every product of a (device, class, element size): its
  // hash is worked out once (every tiled GEMM launch asks for its key).
  static std::mutex mutex;
  static std::map<std::tuple<int, int, size_t>, std::string> hashes;
  const size_t bytes = compute_bytes(p.dtype);
  const auto id = std::make_tuple(device, static_cast<int>(cls), bytes);
  std::string hash;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto found = hashes.find(id);
    if (found != hashes.end()) hash = found->second;
  }
  if (hash.empty()) {
    std::string list;
    for (const GemmTile& t : gemm_candidates(device, cls, bytes)) list += t.str() + ";";
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(fnv1a(list)));
    hash = buf;
    std::lock_guard<std::mutex> lock(mutex);
    hashes.emplace(id, hash);
  }
  return std::string("mm_tiled/") + c10::toString(p.dtype) + "/" + (p.a_trans ? "T" : "N") +
         (p.b_trans ? "T" : "N") + "/" + class_name(cls) + "/" + hash;
}

// Operands of the problem's shape and layout on the device: a [B, M, K] (stored [B, K, M] when
// transposed), b [B, K, N] likewise.
at::Tensor operand(int device, const GemmProblem& p, int64_t rows, int64_t cols, bool trans) {
  const at::TensorOptions o =
      at::TensorOptions().device(c10::Device(c10::DeviceType::PrivateUse1, device));
  const int64_t B = std::max<int64_t>(p.batches, 1);
  const std::vector<int64_t> shape =
      trans ? std::vector<int64_t>{B, cols, rows} : std::vector<int64_t>{B, rows, cols};
  at::Tensor x = at::isFloatingType(p.dtype) ? at::randn(shape, o.dtype(p.dtype))
                                             : at::randint(0, 8, shape, o.dtype(p.dtype));
  return trans ? x.transpose(1, 2) : x;
}

}  // namespace

std::vector<GemmTile> gemm_candidates(int device, GemmSize cls, size_t elem_bytes) {
  const DeviceInfo& info = device_info(device);
  std::vector<GemmTile> out;
  const bool skinny = cls == GemmSize::kSkinnyM || cls == GemmSize::kSkinnyN;
  using Shape = std::array<int, 2>;
  const std::vector<Shape> shapes =
      skinny ? std::vector<Shape>{{4, 16}, {4, 32}, {2, 32}, {8, 16}}
             : std::vector<Shape>{{8, 8}, {16, 16}, {8, 16}, {16, 8}, {8, 32}, {32, 8}};
  const std::vector<int> ms = skinny ? std::vector<int>{8, 16} : std::vector<int>{32, 64, 128};
  for (int tm : ms) {
    for (int tn : {32, 64, 128}) {
      for (int tk : {8, 16, 32}) {
        for (const auto& wg : shapes) {
          for (int pad : {0, 1}) {
            for (int vec : {1, 4}) {
              GemmTile t{tm, tn, tk, wg[0], wg[1], pad, vec};
              if (tm % wg[0] || tn % wg[1]) continue;
              const int wm = tm / wg[0], wn = tn / wg[1];
              if (wm < 2 || wn < 2 || wm > 8 || wn > 8) continue;
              if (cls == GemmSize::kSkinnyN) t = t.transposed();
              if (legal_on(t, info, elem_bytes)) out.push_back(t);
            }
          }
        }
      }
    }
  }
  return out;
}

std::optional<GemmTile> gemm_tile_for(int device, const GemmProblem& p) {
  const DeviceProfile& prof = device_profile(device);
  if (prof.gemm_register_blocked) return std::nullopt;
  const DeviceInfo& info = device_info(device);
  const size_t bytes = compute_bytes(p.dtype);
  const GemmSize cls = size_class(prof, info, p);
  const std::string key = tuning_key(device, p, cls);
  if (const auto v = tuned_value(device, key)) {
    GemmTile t;
    if (GemmTile::parse(*v, &t) && legal_on(t, info, bytes)) return t;
  }
  if (tuning_enabled()) {
    const GemmTuneResult r = tune_gemm(device, p, kFirstUseCandidates);
    if (r.best) return r.best;
  }
  return default_tile(prof, info, cls, bytes);
}

GemmTuneResult tune_gemm(int device, const GemmProblem& p, int max_candidates) {
  const DeviceProfile& prof = device_profile(device);
  const DeviceInfo& info = device_info(device);
  TORCH_CHECK(!prof.gemm_register_blocked, "torch-ocl: device ", device, " (", info.name,
              ") runs the register-blocked GEMM of its '", prof.class_name(),
              "' profile, which has no tiles to tune; the tiled GEMM runs under the gpu profile "
              "(TORCH_OCL_DEVICE_PROFILE=gpu)");
  TORCH_CHECK(p.M > 0 && p.N > 0 && p.K > 0 && p.batches > 0,
              "torch-ocl: tune_gemm needs positive sizes, got M=", p.M, " N=", p.N, " K=", p.K,
              " batch=", p.batches);
  const size_t bytes = compute_bytes(p.dtype);
  const GemmSize cls = size_class(prof, info, p);
  GemmTuneResult result;
  result.key = tuning_key(device, p, cls);
  const std::optional<GemmTile> reference_tile = default_tile(prof, info, cls, bytes);
  TORCH_CHECK(reference_tile, "torch-ocl: no GEMM tile fits device ", device, " for ", p.dtype);

  // The candidates: all, or a bounded subset spread evenly over the list that always holds the
  // profile's tiles (so tuning never loses to the defaults it replaces).
  const std::vector<GemmTile> all = gemm_candidates(device, cls, bytes);
  std::vector<GemmTile>& tried = result.tried;
  tried.push_back(*reference_tile);
  for (const GemmTile& t :
       {prof.gemm_large, prof.gemm_medium, prof.gemm_small, profile_tile(prof, cls)}) {
    if (legal_on(t, info, bytes) && std::find(tried.begin(), tried.end(), t) == tried.end())
      tried.push_back(t);
  }
  const size_t fixed = tried.size();
  const size_t room =
      max_candidates <= 0
          ? all.size()
          : static_cast<size_t>(std::max<int64_t>(0, max_candidates - static_cast<int64_t>(fixed)));
  for (size_t j = 0; j < std::min(room, all.size()); ++j) {
    const GemmTile& t = all[room >= all.size() ? j : j * all.size() / room];
    if (std::find(tried.begin(), tried.end(), t) == tried.end()) tried.push_back(t);
  }

  const at::Tensor a = operand(device, p, p.M, p.K, p.a_trans);
  const at::Tensor b = operand(device, p, p.K, p.N, p.b_trans);
  const at::Tensor ref = at::empty({p.batches, p.M, p.N}, a.options());
  const at::Tensor out = at::empty_like(ref);
  gemm_with_tile(ref, a, b, *reference_tile, nullptr);
  const bool exact = !at::isFloatingType(p.dtype);
  const double scale = exact ? 0.0 : ref.abs().max().item<double>();

  const TimedCandidates timed = time_candidates(
      device, tried.size(),
      [&](size_t i, cl_event* ev) { gemm_with_tile(out, a, b, tried[i], ev); },
      [&](size_t) {
        const double diff = (out.to(at::kDouble) - ref.to(at::kDouble)).abs().max().item<double>();
        // The tiles change which work-item sums an element, not the order of its sum: results
        // agree to the last bits; a tile that computes something else is wrong.
        return exact ? diff == 0.0 : diff <= 1e-5 * (1.0 + scale);
      },
      3, "GEMM tuner (torch.ocl.tune_gemm)");
  result.seconds = timed.seconds;
  if (timed.best) {
    result.best = tried[*timed.best];
    record_tuned_value(device, result.key, result.best->str());
  }
  return result;
}

namespace {

GemmProblem problem(int64_t device, at::ScalarType dtype, bool ta, bool tb, int64_t m, int64_t n,
                    int64_t k, int64_t batch) {
  (void)device;
  return GemmProblem{dtype, ta, tb, m, n, k, batch};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ocl, m) {
  // The tile a product would use now ("" for the register-blocked kernel).
  m.def(
      "_gemm_tile(int device, ScalarType dtype, bool transpose_a, bool transpose_b, int m, int n, "
      "int k, int batch) -> str",
      [](int64_t device, at::ScalarType dtype, bool ta, bool tb, int64_t mm, int64_t n, int64_t k,
         int64_t batch) {
        const auto t = gemm_tile_for(static_cast<int>(device),
                                     problem(device, dtype, ta, tb, mm, n, k, batch));
        return t ? t->str() : std::string();
      });
  m.def(
      "_tune_gemm(int device, ScalarType dtype, bool transpose_a, bool transpose_b, int m, int n, "
      "int k, int batch, int max_candidates) -> (str, str, str[], float[])",
      [](int64_t device, at::ScalarType dtype, bool ta, bool tb, int64_t mm, int64_t n, int64_t k,
         int64_t batch, int64_t max_candidates) {
        const GemmTuneResult r =
            tune_gemm(static_cast<int>(device), problem(device, dtype, ta, tb, mm, n, k, batch),
                      static_cast<int>(max_candidates));
        std::vector<std::string> tried;
        for (const GemmTile& t : r.tried) tried.push_back(t.str());
        return std::make_tuple(r.best ? r.best->str() : std::string(), r.key, tried, r.seconds);
      });
}

size_t kernel_work_group_limit(cl_kernel k, int device) {
  static std::mutex mutex;
  static std::unordered_map<cl_kernel, size_t> limits;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto found = limits.find(k);
    if (found != limits.end()) return found->second;
  }
  size_t allowed = 0;
  if (cl().clGetKernelWorkGroupInfo(k, device_info(device).id, CL_KERNEL_WORK_GROUP_SIZE,
                                    sizeof(allowed), &allowed, nullptr) != CL_SUCCESS)
    allowed = SIZE_MAX;
  std::lock_guard<std::mutex> lock(mutex);
  limits.emplace(k, allowed);
  return allowed;
}

cl_kernel fitted_tiled_kernel(int device, const std::string& options, GemmTile* tile) {
  const GemmTile candidates[3] = {*tile, device_profile(device).gemm_small,
                                  GemmTile{16, 16, 8, 4, 4, 0, 1}};
  for (const GemmTile& t : candidates) {
    cl_kernel k = get_kernel(device, "mm_tiled.cl", "mm_tiled", options + " " + t.options());
    if (kernel_work_group_limit(k, device) >= static_cast<size_t>(t.work_group())) {
      *tile = t;
      return k;
    }
  }
  return nullptr;
}

}  // namespace torch_ocl
