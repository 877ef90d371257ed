// Multi-tensor launches (ops/MultiTensor.h): launch geometry, table building, argument pushing.
#include "ops/MultiTensor.h"

#include <c10/util/Exception.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>

#include "ops/KernelTypes.h"
#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

constexpr uint32_t kMaxWords = 1024;
// Bytes of kernel arguments besides the buffers and the table: chunk, up to five scalars of 8
// bytes, up to three (buffer, offset) pairs and an int, rounded up.
constexpr size_t kOtherArgBytes = 128;
// Rows index offsets with 32-bit arithmetic; a row also needs room for one chunk past its end.
constexpr int64_t kMaxIndex = int64_t{1} << 31;

MtGeometry make_geometry(int device) {
  const DeviceInfo& info = device_info(device);
  MtGeometry g;
  const DeviceProfile& profile = device_profile(device);
  // CPU devices (PoCL) vectorise a work-item's loop over consecutive elements, as in the
  // elementwise kernels; GPUs want neighbouring work-items on neighbouring elements.
  g.lws = std::min<size_t>(profile.multi_tensor_lws, info.max_work_group);
  size_t p2 = 1;
  while (p2 * 2 <= g.lws) p2 *= 2;
  g.lws = p2;
  g.per = profile.multi_tensor_per_item;
  size_t max_param = 0;
  cl_uint address_bits = 64;
  OCL_CHECK(cl().clGetDeviceInfo(info.id, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof(max_param),
                                 &max_param, nullptr));
  OCL_CHECK(cl().clGetDeviceInfo(info.id, CL_DEVICE_ADDRESS_BITS, sizeof(address_bits),
                                 &address_bits, nullptr));
  const size_t buffer_bytes = kMtBuffers * (address_bits / 8);
  TORCH_CHECK(max_param > buffer_bytes + kOtherArgBytes + 64,
              "torch-ocl: the device's kernel arguments (CL_DEVICE_MAX_PARAMETER_SIZE ", max_param,
              ") are too small for multi-tensor kernels");
  g.words = static_cast<uint32_t>(
      std::min<size_t>(kMaxWords, (max_param - buffer_bytes - kOtherArgBytes) / 4));
  g.options = " -DMT_WORDS=" + std::to_string(g.words) + " -DLWS=" + std::to_string(g.lws) +
              " -DMT_PER=" + std::to_string(g.per) +
              // A work-item's elements consecutive where the profile streams runs per work-item.
              (profile.stream_chunk > 1 ? " -DMT_CONSEC" : "");
  return g;
}

// Launches through mt_push and the table rows they carried (a test hook: torch.ops.ocl.
// multi_tensor_counts() shows that one launch covers many tensors).
std::atomic<int64_t> g_launches{0}, g_rows{0};

uint32_t elem_offset(const BufferRef& b, const at::Tensor& t) {
  const uint64_t item = t.itemsize();
  TORCH_INTERNAL_ASSERT(b.offset % item == 0, "torch-ocl: misaligned tensor in a multi-tensor op");
  return static_cast<uint32_t>(b.offset / item);
}

}  // namespace

const MtGeometry& mt_geometry(int device) {
  static std::mutex m;
  static std::array<std::unique_ptr<MtGeometry>, kMaxDevices> geometries;
  std::lock_guard<std::mutex> lock(m);
  auto& g = geometries.at(device);
  if (!g) g = std::make_unique<MtGeometry>(make_geometry(device));
  return *g;
}

bool mt_fits(const at::Tensor& t) {
  if (t.numel() == 0) return true;
  const int64_t offset = static_cast<int64_t>(buffer_of(t).offset / t.itemsize());
  return offset + t.numel() < kMaxIndex - (int64_t{1} << 20);
}

std::array<uint32_t, 2> mt_scalar_words(const c10::Scalar& v, at::ScalarType compute) {
  std::array<uint32_t, 2> w{};
  if (at::isIntegralType(compute, /*includeBool=*/true)) {
    const int64_t i = v.isBoolean() ? static_cast<int64_t>(v.toBool()) : v.toLong();
    std::memcpy(w.data(), &i, sizeof(i));
  } else if (compute == at::kDouble) {
    const double d = v.isIntegral(false) ? static_cast<double>(v.toLong())
                     : v.isBoolean()     ? static_cast<double>(v.toBool())
                                         : v.toDouble();
    std::memcpy(w.data(), &d, sizeof(d));
  } else {
    const float f = scalar_as_float(v);
    std::memcpy(w.data(), &f, sizeof(f));
  }
  return w;
}

std::vector<MtBatch> mt_plan(int device, const std::vector<at::TensorList>& lists,
                             const std::vector<std::array<uint32_t, 2>>* scalars, bool keep_empty) {
  const MtGeometry& geo = mt_geometry(device);
  const size_t nlist = lists.size();
  TORCH_INTERNAL_ASSERT(nlist >= 1 && nlist <= 6, "torch-ocl: multi-tensor ops take 1 to 6 lists");
  const size_t ntensors = lists[0].size();
  const uint32_t row_words = static_cast<uint32_t>(3 + nlist + (scalars ? 2 : 0));
  const uint32_t capacity = (geo.words - 1) / row_words;
  const uint32_t chunk = geo.chunk();

  std::vector<MtBatch> batches;
  MtBatch cur;
  auto start = [&](size_t first) {
    cur = MtBatch();
    cur.table.assign(geo.words, 0);
    cur.first = first;
  };
  auto close = [&](size_t end) {
    cur.count = end - cur.first;
    cur.table[0] = cur.rows;
    if (cur.rows > 0) batches.push_back(std::move(cur));
  };
  start(0);
  std::array<cl_mem, 6> mems{};
  std::array<uint32_t, 6> offsets{};
  for (size_t i = 0; i < ntensors; ++i) {
    const int64_t numel = lists[0][i].numel();
    if (numel == 0 && !keep_empty) continue;
    // The row's buffers; how many of them this launch does not have yet.
    int fresh = 0;
    for (size_t l = 0; l < nlist; ++l) {
      mems[l] = nullptr;
      offsets[l] = 0;
      if (numel == 0) continue;  // an empty row is never read
      const BufferRef b = buffer_of(lists[l][i]);
      mems[l] = b.mem;
      offsets[l] = elem_offset(b, lists[l][i]);
      const bool known = std::find(cur.slots.begin(), cur.slots.begin() + cur.nslots, b.mem) !=
                             cur.slots.begin() + cur.nslots ||
                         std::find(mems.begin(), mems.begin() + l, b.mem) != mems.begin() + l;
      fresh += known ? 0 : 1;
    }
    if (cur.rows == capacity || cur.nslots + fresh > kMtBuffers) {
      close(i);
      start(i);
    }
    uint32_t slot_bits = 0;
    for (size_t l = 0; l < nlist; ++l) {
      if (!mems[l]) continue;
      const auto end = cur.slots.begin() + cur.nslots;
      auto it = std::find(cur.slots.begin(), end, mems[l]);
      if (it == end) {
        cur.slots[cur.nslots++] = mems[l];
        it = end;
      }
      slot_bits |= static_cast<uint32_t>(it - cur.slots.begin()) << (5 * l);
    }
    const uint32_t chunks = static_cast<uint32_t>((numel + chunk - 1) / chunk);
    cur.chunks += chunks;
    uint32_t* row = cur.table.data() + 1 + cur.rows * row_words;
    row[0] = static_cast<uint32_t>(numel);
    row[1] = cur.chunks;
    row[2] = slot_bits;
    for (size_t l = 0; l < nlist; ++l) row[3 + l] = offsets[l];
    if (scalars) {
      row[3 + nlist] = (*scalars)[i][0];
      row[4 + nlist] = (*scalars)[i][1];
    }
    ++cur.rows;
  }
  close(ntensors);
  return batches;
}

void mt_push(KernelLaunch& launch, const MtBatch& batch, cl_mem fallback) {
  const cl_mem fill = batch.nslots > 0 ? batch.slots[0] : fallback;
  TORCH_INTERNAL_ASSERT(fill, "torch-ocl: a multi-tensor launch without any buffer");
  for (int s = 0; s < kMtBuffers; ++s) launch.arg(s < batch.nslots ? batch.slots[s] : fill);
  launch.raw(batch.table.size() * sizeof(uint32_t), batch.table.data());
  g_launches.fetch_add(1, std::memory_order_relaxed);
  g_rows.fetch_add(batch.rows, std::memory_order_relaxed);
}

TORCH_LIBRARY_FRAGMENT(ocl, m) {
  m.def("multi_tensor_counts() -> int[]", [] {
    return std::vector<int64_t>{g_launches.load(), g_rows.load()};
  });
}

}  // namespace torch_ocl
