#include "runtime/DeviceProfile.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>

#include "runtime/Device.h"
#include "runtime/OpenCL.h"

namespace torch_ocl {

std::string GemmTile::str() const {
  return std::to_string(tile_m) + "x" + std::to_string(tile_n) + "x" + std::to_string(tile_k) +
         ":" + std::to_string(wg_m) + "x" + std::to_string(wg_n) + ":" + std::to_string(pad) + ":" +
         std::to_string(vec);
}

bool GemmTile::parse(const std::string& s, GemmTile* out) {
  GemmTile t;
  char tail = 0;
  const int n = std::sscanf(s.c_str(), "%dx%dx%d:%dx%d:%d:%d%c", &t.tile_m, &t.tile_n, &t.tile_k,
                            &t.wg_m, &t.wg_n, &t.pad, &t.vec, &tail);
  if (n == 6) {
    // Without the vector width: the string must end right after the padding.
    char tail6 = 0;
    if (std::sscanf(s.c_str(), "%*dx%*dx%*d:%*dx%*d:%*d%c", &tail6) == 1) return false;
    t.vec = 1;
  } else if (n != 7) {
    return false;
  }
  if (t.tile_m <= 0 || t.tile_n <= 0 || t.tile_k <= 0 || t.wg_m <= 0 || t.wg_n <= 0 || t.pad < 0 ||
      t.pad > 8 || (t.vec != 1 && t.vec != 2 && t.vec != 4))
    return false;
  *out = t;
  return true;
}

std::string GemmTile::options() const {
  return "-DTILE_M=" + std::to_string(tile_m) + " -DTILE_N=" + std::to_string(tile_n) +
         " -DTILE_K=" + std::to_string(tile_k) + " -DWG_M=" + std::to_string(wg_m) +
         " -DWG_N=" + std::to_string(wg_n) + " -DTILE_PAD=" + std::to_string(pad);
}

bool GemmTile::legal(size_t max_work_group, uint64_t local_mem, size_t elem_bytes) const {
  if (tile_m <= 0 || tile_n <= 0 || tile_k <= 0 || wg_m <= 0 || wg_n <= 0 || pad < 0) return false;
  if (tile_m % wg_m || tile_n % wg_n) return false;
  const int wm = tile_m / wg_m, wn = tile_n / wg_n;
  if (wm > 16 || wn > 16) return false;  // the register block
  const int wg = work_group();
  // The cooperative tile loads take the same number of vectors in every work-item.
  if (vec != 1 && vec != 2 && vec != 4) return false;
  if ((tile_m * tile_k) % (wg * vec) || (tile_n * tile_k) % (wg * vec)) return false;
  if (tile_m % vec || tile_n % vec || tile_k % vec) return false;
  if (static_cast<size_t>(wg) > max_work_group) return false;
  const uint64_t local = static_cast<uint64_t>(tile_k) *
                         static_cast<uint64_t>(tile_m + pad + tile_n + pad) * elem_bytes;
  return local <= local_mem;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

std::string normalised_vendor(const DeviceInfo& d) {
  const std::string platform = lower(d.platform_name), vendor = lower(d.vendor);
  const std::string name = lower(d.name);
  if (contains(platform, "oclgrind")) return "oclgrind";
  if (contains(platform, "portable computing language") || name.rfind("pthread-", 0) == 0 ||
      name.rfind("cpu-", 0) == 0)
    return "pocl";
  if (contains(vendor, "nvidia")) return "nvidia";
  if (contains(vendor, "advanced micro devices") || contains(vendor, "amd")) return "amd";
  if (contains(vendor, "intel")) return "intel";
  if (contains(vendor, "arm")) return "arm";
  if (contains(vendor, "qualcomm")) return "qualcomm";
  if (contains(vendor, "apple")) return "apple";
  return "other";
}

std::string normalised_arch(const DeviceInfo& d) {
  std::string name = d.name;
  for (const char* prefix : {"pthread-", "cpu-"}) {
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::strlen(prefix));
  }
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  return name;
}

ProfileClass requested_class(const DeviceInfo& d, std::string* source) {
  const char* env = std::getenv("TORCH_OCL_DEVICE_PROFILE");
  const std::string v = env ? lower(env) : std::string();
  if (v == "cpu" || v == "gpu") {
    *source = "TORCH_OCL_DEVICE_PROFILE";
    return v == "cpu" ? ProfileClass::kCpu : ProfileClass::kGpu;
  }
  TORCH_CHECK(v.empty() || v == "auto", "torch-ocl: TORCH_OCL_DEVICE_PROFILE='", env,
              "' is not a profile; use 'cpu', 'gpu' or 'auto' (the device's own, the default)");
  *source = "device type";
  // A device that lists CPU among its types (PoCL; Oclgrind lists GPU|ACCELERATOR|CPU) runs its
  // work-items on CPU cores.
  return (d.type & CL_DEVICE_TYPE_CPU) ? ProfileClass::kCpu : ProfileClass::kGpu;
}

int simd_width_of(const std::string& vendor) {
  if (vendor == "amd" || vendor == "qualcomm") return 64;
  if (vendor == "intel" || vendor == "arm") return 16;
  return 32;
}

void set_cpu_defaults(DeviceProfile& p, const DeviceInfo& d) {
  p.simd_width = 1;
  // Intel's CPU runtime vectorises across work-items: lanes 64 elements apart defeat its vector
  // loads (4M-float add: 17-27 ms with 64 per work-item, 3-8 ms with 1); PoCL vectorises a
  // work-item's own loop and wants the run.
  const bool across_items = p.vendor == "intel";
  p.stream_chunk = across_items ? 1 : 64;
  p.batch_lws = 64;
  p.batch_numel_divisor = 2;
  p.multi_tensor_lws = 64;
  p.multi_tensor_per_item = across_items ? 8 : 64;
  p.index_chunk = across_items ? 1 : 16;
  // PoCL runs the per-column route faster than work-group tiles (1e6-element cumsum: 26 ms tiled,
  // about 2 ms per column, 2 cores).
  p.scan_tiles = false;
  p.attention_rows = 4;
  p.attention_lws = 16;
  // One butterfly per work-item: PoCL vectorises the work-group's loop of scalar butterflies
  // (kernels/fft.cl); a loop of several per work-item ran 1.5-2x slower (64x256x256 fft2).
  p.fft_lws = 64;
  p.fft_per_item = 1;
  // Cache-sized im2col chunks (8x64x56x56 3x3 forward on PoCL: 17-18 ms against 23-26 ms with
  // all 58 MB of columns at once); TORCH_OCL_CONV_CHUNK_BYTES overrides.
  const char* chunk = std::getenv("TORCH_OCL_CONV_CHUNK_BYTES");
  p.conv_cols_bytes = chunk ? std::max<int64_t>(1, std::atoll(chunk)) : (int64_t{8} << 20);
  p.gemm_register_blocked = true;
  p.conv_implicit_gemm = false;
  // A few cores: 256 work-groups of 8192 elements or more keep them busy; a column is walked by
  // one work-item (its loads run along the row of outputs on the next iteration, in cache).
  p.reduce_fill_groups = 256;
  p.reduce_split_chunk = 8192;
  p.reduce_col_tile = 0;
  // Attention: the row-per-work-item kernel (kernels/attention.cl), whose float8 loops PoCL
  // runs vectorised; the flash-attention-2 layout's barriers per tile serialise its work-items.
  p.attention_flash = false;
  (void)d;
}

void set_gpu_defaults(DeviceProfile& p, const DeviceInfo& d) {
  p.simd_width = simd_width_of(p.vendor);
  p.stream_chunk = 1;
  p.batch_lws = 256;
  p.batch_numel_divisor = 1;
  p.multi_tensor_lws = 256;
  p.multi_tensor_per_item = 8;
  p.index_chunk = 1;
  p.scan_tiles = true;
  p.attention_rows = 1;
  p.attention_lws = 64;
  p.attention_flash = true;
  p.fft_lws = 64;
  p.fft_per_item = 1;
  p.conv_cols_bytes = int64_t{256} << 20;
  p.gemm_register_blocked = false;
  p.conv_implicit_gemm = true;
  // Tiles by vendor. Desktop GPUs: 128x128 blocks with 8x8 per work-item where the grid fills
  // the device, 64x64 (4x4 each) below that, 32x32 with 64 work-items for small products. Mobile
  // GPUs (Mali, Adreno: small register files, local memory often in global memory): half that.
  const bool mobile = p.vendor == "arm" || p.vendor == "qualcomm";
  if (mobile) {
    p.gemm_large = {64, 64, 16, 16, 16, 1, 1};
    p.gemm_medium = {32, 32, 16, 8, 8, 1, 1};
    p.gemm_small = {16, 16, 16, 8, 8, 1, 1};
    p.gemm_skinny = {8, 64, 16, 4, 16, 1, 1};
    // 64 work-items (2 x 2 scores each), about 10 KiB of local memory.
    p.attention_flash_rows = p.attention_flash_cols = 16;
    p.attention_flash_wg_rows = p.attention_flash_wg_cols = 8;
  } else {
    // 256 work-items (a multiple of 32- and 64-wide SIMD), 4 x 4 scores each, 29 KiB of local
    // memory at any head dim up to 128 (within 48-64 KiB: two work-groups per compute unit).
    p.attention_flash_rows = p.attention_flash_cols = 64;
    p.attention_flash_wg_rows = p.attention_flash_wg_cols = 16;
    // Large and medium tiles load 4-wide (128-bit) vectors where the operands are aligned.
    p.gemm_large = {128, 128, 16, 16, 16, 1, 4};
    p.gemm_medium = {64, 64, 16, 16, 16, 1, 4};
    p.gemm_small = {32, 32, 16, 8, 8, 1, 1};
    // 16 rows by 64 columns, 4 x 4 per work-item: a small batch wastes no rows of 32.
    p.gemm_skinny = {16, 64, 32, 4, 16, 1, 1};
  }
  // Four work-groups per compute unit keep a GPU's memory pipeline busy; column tiles as wide
  // as a lock-step unit (at most 64) load whole cache lines.
  p.reduce_fill_groups =
      static_cast<int>(std::clamp<uint32_t>(4 * std::max<uint32_t>(d.compute_units, 1), 64, 8192));
  p.reduce_split_chunk = 4096;
  p.reduce_col_tile = std::min(p.simd_width, 64);
}

// Keeps every GEMM tile legal for float32 on the device: an illegal one takes the next smaller
// tile's shape, and a device that can run none gets the register-blocked kernel.
void fit_gemm_tiles(DeviceProfile& p, const DeviceInfo& d) {
  const GemmTile tiny{16, 16, 8, 4, 4, 0, 1};
  auto ok = [&](const GemmTile& t) { return t.legal(d.max_work_group, d.local_mem, 4); };
  if (!ok(p.gemm_small)) p.gemm_small = tiny;
  if (!ok(p.gemm_medium)) p.gemm_medium = p.gemm_small;
  if (!ok(p.gemm_large)) p.gemm_large = p.gemm_medium;
  if (!ok(p.gemm_skinny) || !ok(p.gemm_skinny.transposed())) p.gemm_skinny = p.gemm_small;
  if (!ok(p.gemm_small)) p.gemm_register_blocked = true;
  // The implicit-GEMM convolution runs on the tiled kernel.
  if (p.gemm_register_blocked) p.conv_implicit_gemm = false;
}

struct Field {
  const char* name;
  std::function<std::string(const DeviceProfile&)> get;
  std::function<bool(DeviceProfile&, const std::string&)> set;  // false: bad value
};

bool parse_int(const std::string& s, int64_t lo, int64_t hi, int64_t* out) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

Field int_field(const char* name, int DeviceProfile::*member, int lo, int hi) {
  return {name, [member](const DeviceProfile& p) { return std::to_string(p.*member); },
          [member, lo, hi](DeviceProfile& p, const std::string& s) {
            int64_t v = 0;
            if (!parse_int(s, lo, hi, &v)) return false;
            p.*member = static_cast<int>(v);
            return true;
          }};
}

Field bool_field(const char* name, bool DeviceProfile::*member) {
  return {name, [member](const DeviceProfile& p) { return std::string(p.*member ? "1" : "0"); },
          [member](DeviceProfile& p, const std::string& s) {
            if (s != "0" && s != "1") return false;
            p.*member = s == "1";
            return true;
          }};
}

Field tile_field(const char* name, GemmTile DeviceProfile::*member) {
  return {name, [member](const DeviceProfile& p) { return (p.*member).str(); },
          [member](DeviceProfile& p, const std::string& s) {
            return GemmTile::parse(s, &(p.*member));
          }};
}

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      {"class", [](const DeviceProfile& p) { return std::string(p.class_name()); }, nullptr},
      {"class_source", [](const DeviceProfile& p) { return p.class_source; }, nullptr},
      {"vendor", [](const DeviceProfile& p) { return p.vendor; }, nullptr},
      {"arch", [](const DeviceProfile& p) { return p.arch; }, nullptr},
      int_field("simd_width", &DeviceProfile::simd_width, 1, 1024),
      bool_field("subgroups", &DeviceProfile::subgroups),
      int_field("stream_chunk", &DeviceProfile::stream_chunk, 1, 4096),
      int_field("batch_lws", &DeviceProfile::batch_lws, 1, 4096),
      int_field("batch_numel_divisor", &DeviceProfile::batch_numel_divisor, 1, 1024),
      int_field("multi_tensor_lws", &DeviceProfile::multi_tensor_lws, 1, 4096),
      int_field("multi_tensor_per_item", &DeviceProfile::multi_tensor_per_item, 1, 4096),
      int_field("index_chunk", &DeviceProfile::index_chunk, 1, 4096),
      bool_field("scan_tiles", &DeviceProfile::scan_tiles),
      int_field("attention_rows", &DeviceProfile::attention_rows, 1, 64),
      int_field("attention_lws", &DeviceProfile::attention_lws, 1, 4096),
      bool_field("attention_flash", &DeviceProfile::attention_flash),
      int_field("attention_flash_rows", &DeviceProfile::attention_flash_rows, 1, 256),
      int_field("attention_flash_cols", &DeviceProfile::attention_flash_cols, 1, 256),
      int_field("attention_flash_wg_rows", &DeviceProfile::attention_flash_wg_rows, 1, 256),
      int_field("attention_flash_wg_cols", &DeviceProfile::attention_flash_wg_cols, 1, 256),
      int_field("attention_flash_tile_d", &DeviceProfile::attention_flash_tile_d, 1, 128),
      int_field("fft_lws", &DeviceProfile::fft_lws, 1, 4096),
      int_field("fft_per_item", &DeviceProfile::fft_per_item, 1, 256),
      {"conv_cols_bytes", [](const DeviceProfile& p) { return std::to_string(p.conv_cols_bytes); },
       [](DeviceProfile& p, const std::string& s) {
         int64_t v = 0;
         if (!parse_int(s, 1, int64_t{1} << 40, &v)) return false;
         p.conv_cols_bytes = v;
         return true;
       }},
      bool_field("conv_implicit_gemm", &DeviceProfile::conv_implicit_gemm),
      int_field("reduce_fill_groups", &DeviceProfile::reduce_fill_groups, 1, 1 << 20),
      int_field("reduce_split_chunk", &DeviceProfile::reduce_split_chunk, 1, 1 << 30),
      int_field("reduce_col_tile", &DeviceProfile::reduce_col_tile, 0, 1024),
      bool_field("gemm_register_blocked", &DeviceProfile::gemm_register_blocked),
      tile_field("gemm_large", &DeviceProfile::gemm_large),
      tile_field("gemm_medium", &DeviceProfile::gemm_medium),
      tile_field("gemm_small", &DeviceProfile::gemm_small),
      tile_field("gemm_skinny", &DeviceProfile::gemm_skinny),
  };
  return f;
}

std::string settable_names() {
  std::string s;
  for (const Field& f : fields()) {
    if (!f.set) continue;
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

// TORCH_OCL_DEVICE_PARAMS="name=value,name=value".
void apply_overrides(DeviceProfile& p, const DeviceInfo& d) {
  const char* env = std::getenv("TORCH_OCL_DEVICE_PARAMS");
  if (!env || !*env) return;
  std::string all(env);
  size_t pos = 0;
  while (pos <= all.size()) {
    const size_t comma = std::min(all.find(',', pos), all.size());
    const std::string item = all.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const Field* field = nullptr;
    for (const Field& f : fields()) {
      if (f.set && name == f.name) field = &f;
    }
    TORCH_CHECK(field && eq != std::string::npos, "torch-ocl: TORCH_OCL_DEVICE_PARAMS: '", item,
                "' does not set a parameter; use name=value with one of: ", settable_names());
    const std::string value = item.substr(eq + 1);
    TORCH_CHECK(field->set(p, value), "torch-ocl: TORCH_OCL_DEVICE_PARAMS: bad value '", value,
                "' for ", name,
                " (integers in range; 0/1 for switches; GEMM tiles as MxNxK:WMxWN:PAD[:VEC], e.g. "
                "64x64x16:16x16:1:4)");
    if (name.rfind("gemm_", 0) == 0 && name != "gemm_register_blocked") {
      const GemmTile& t = name == "gemm_large"    ? p.gemm_large
                          : name == "gemm_medium" ? p.gemm_medium
                          : name == "gemm_skinny" ? p.gemm_skinny
                                                  : p.gemm_small;
      TORCH_CHECK(t.legal(d.max_work_group, d.local_mem, 4),
                  "torch-ocl: TORCH_OCL_DEVICE_PARAMS: ", name, "=", value,
                  " is not a legal tile on this device (tiles must be multiples of the "
                  "work-group shape, at most 16x16 per work-item, loads evenly shared, and fit "
                  "the work-group size ",
                  d.max_work_group, " and local memory ", d.local_mem, " bytes)");
    }
  }
}

DeviceProfile build_profile(const DeviceInfo& d) {
  DeviceProfile p;
  p.vendor = normalised_vendor(d);
  p.arch = normalised_arch(d);
  p.subgroups =
      contains(d.extensions, "cl_khr_subgroups") || contains(d.extensions, "cl_intel_subgroups");
  p.cls = requested_class(d, &p.class_source);
  if (p.cls == ProfileClass::kCpu) {
    set_cpu_defaults(p, d);
  } else {
    set_gpu_defaults(p, d);
  }
  apply_overrides(p, d);
  TORCH_CHECK(p.attention_flash_rows % p.attention_flash_wg_rows == 0 &&
                  p.attention_flash_cols % p.attention_flash_wg_cols == 0 &&
                  p.attention_flash_rows / p.attention_flash_wg_rows <= 16 &&
                  p.attention_flash_cols / p.attention_flash_wg_cols <= 16,
              "torch-ocl: TORCH_OCL_DEVICE_PARAMS: attention_flash_rows (", p.attention_flash_rows,
              ") and attention_flash_cols (", p.attention_flash_cols,
              ") must be multiples of attention_flash_wg_rows (", p.attention_flash_wg_rows,
              ") and attention_flash_wg_cols (", p.attention_flash_wg_cols,
              "), at most 16 times them; set them together");
  fit_gemm_tiles(p, d);
  // Launch sizes never exceed the device's work-group limit.
  p.max_work_group = std::max<size_t>(d.max_work_group, 1);
  const int max_wg = static_cast<int>(std::min<size_t>(p.max_work_group, 1 << 20));
  p.batch_lws = std::min(p.batch_lws, max_wg);
  p.multi_tensor_lws = std::min(p.multi_tensor_lws, max_wg);
  p.fft_lws = static_cast<int>(p.fit_lws(p.fft_lws));
  // A column tile is a power of two within the work-group limit (0 keeps the per-column walk).
  if (p.reduce_col_tile > 0) p.reduce_col_tile = static_cast<int>(p.fit_lws(p.reduce_col_tile));
  return p;
}

std::once_flag g_once;
std::deque<std::once_flag> g_flags;
std::deque<DeviceProfile> g_profiles;

}  // namespace

std::vector<std::pair<std::string, std::string>> DeviceProfile::params() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Field& f : fields()) out.emplace_back(f.name, f.get(*this));
  return out;
}

const DeviceProfile& device_profile(int index) {
  const DeviceInfo& info = device_info(index);  // checks the index
  std::call_once(g_once, [] {
    const int n = device_count();
    g_flags.resize(n);
    g_profiles.resize(n);
  });
  std::call_once(g_flags[index], [&] { g_profiles[index] = build_profile(info); });
  return g_profiles[index];
}

}  // namespace torch_ocl
