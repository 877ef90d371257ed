#include "ops/ElementwiseBatch.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "ops/ElementwiseOps.h"
#include "profiler/Record.h"
#include "runtime/Batch.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/External.h"
#include "runtime/OclApi.h"
#include "runtime/Program.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

// The batch kernel runs every op of the table (ops/ElementwiseOps.h) flagged kBatch; an op's
// code in the kernel is its EwId.
constexpr int kSlots = 8;      // buffers per batch (BATCH_SLOTS in the kernel)
constexpr int kBatchMax = 16;  // ops per batch
constexpr int kNumStreams = kStreamPoolSize + 1;

// The kernel's batch_op and batch_list: 32-bit fields only, so the layouts agree.
struct BatchOp {
  cl_uint op, n, out_slot, a_slot, b_slot, out_off, a_off, b_off;
  cl_float p0, p1, bv;
};
struct BatchList {
  BatchOp ops[kBatchMax];
  cl_uint count;
};
static_assert(sizeof(BatchOp) == 44 && sizeof(BatchList) == 44 * kBatchMax + 4,
              "BatchOp must match the kernel's batch_op");

enum DtypeIndex { kF32, kF16, kBF16, kNumDtypes };

int dtype_index(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return kF32;
    case at::kHalf:
      return kF16;
    case at::kBFloat16:
      return kBF16;
    default:
      return -1;
  }
}
constexpr const char* kDtypeTags[] = {"float", "half", "bfloat16"};
constexpr size_t kItemSize[] = {4, 2, 2};

struct Pending {
  int dtype = -1;
  int nslots = 0;
  cl_mem slots[kSlots] = {};
  BatchList list{};
  // torch.profiler: the op that recorded each entry (its correlation id when it was recorded,
  // 0 when not profiling), so that the launch's time is attributed to those ops, not to the op
  // that happens to flush the batch.
  profiler::BatchPart parts[kBatchMax] = {};
};

struct DeviceBatches {
  bool checked = false, usable = false;
  int64_t max_numel = 0;
  size_t local_size = 0;
  cl_kernel kernels[kNumDtypes] = {};
  bool failed[kNumDtypes] = {};
  std::array<std::unique_ptr<Pending>, kNumStreams> pending;
};

std::mutex g_mutex;  // everything below; taken after the launch and allocator mutexes
std::array<DeviceBatches, kMaxDevices> g_devices;
int64_t g_ops = 0, g_launches = 0;  // batch_counts()

bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TORCH_OCL_BATCH");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

// Whether the device can take a batch: its kernel arguments must hold the op list by value.
void check_device(int device, DeviceBatches& db) {
  db.checked = true;
  const DeviceInfo& info = device_info(device);
  size_t max_param = 0;
  if (cl().clGetDeviceInfo(info.id, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof(max_param), &max_param,
                           nullptr) != CL_SUCCESS)
    return;
  if (max_param < sizeof(BatchList) + kSlots * sizeof(cl_mem)) return;
  const DeviceProfile& profile = device_profile(device);
  // One work-group runs the whole batch: worth it for ops the size of a few driver launches.
  db.max_numel = kBatchNumelLimit / profile.batch_numel_divisor;
  db.local_size = std::min<size_t>(profile.batch_lws, info.max_work_group);
  db.usable = db.local_size > 0;
}

cl_kernel batch_kernel(int device, DeviceBatches& db, int dtype) {
  if (db.kernels[dtype] || db.failed[dtype]) return db.kernels[dtype];
  std::string opts = "-DBATCH_T=";
  opts += kDtypeTags[dtype];
  opts += " -DBATCH_MAX=" + std::to_string(kBatchMax) + " -DBATCH_OPS=";
  for (int i = 0; i < static_cast<int>(EwId::kCount); ++i) {
    const EwOp& op = ew_op(static_cast<EwId>(i));
    if (!(op.flags & kBatch)) continue;
    opts += "X(" + std::to_string(i) + ",EWOP_";
    opts += op.name;
    opts += ')';
  }
  try {
    cl_kernel k = get_kernel(device, "elementwise.cl", "elementwise_batch", opts);
    size_t wg = 0;
    if (cl().clGetKernelWorkGroupInfo(k, device_info(device).id, CL_KERNEL_WORK_GROUP_SIZE,
                                      sizeof(wg), &wg, nullptr) == CL_SUCCESS &&
        wg > 0 && wg < db.local_size)
      db.local_size = wg;
    db.kernels[dtype] = k;
  } catch (const c10::Error&) {
    // Ops then launch their own kernels; a broken kernel shows up there with its build log.
    db.failed[dtype] = true;
  }
  return db.kernels[dtype];
}

void set_arg(cl_kernel k, cl_uint index, size_t size, const void* value) {
  const cl_int err = cl().clSetKernelArg(k, index, size, value);
  TORCH_CHECK(err == CL_SUCCESS, "torch-ocl: clSetKernelArg(", index,
              ") of elementwise_batch failed with ", cl_error_name(err));
}

void flush_locked(int device, int64_t stream_id, Pending& p) {
  if (p.list.count == 0) return;
  DeviceBatches& db = g_devices[device];
  cl_kernel k = db.kernels[p.dtype];
  const BatchList list = p.list;
  cl_mem slots[kSlots];
  for (int i = 0; i < kSlots; ++i) slots[i] = i < p.nslots ? p.slots[i] : p.slots[0];
  // Reset first: an enqueue error below must not leave the batch to be enqueued again. The
  // pending flag stays set until the kernel is enqueued (or failed): see g_nonempty.
  p.list.count = 0;
  p.nslots = 0;
  struct ClearFlag {
    int device;
    int64_t stream_id;
    ~ClearFlag() { clear_pending(device, stream_id); }
  } clear{device, stream_id};
  for (cl_uint i = 0; i < kSlots; ++i) set_arg(k, i, sizeof(cl_mem), &slots[i]);
  set_arg(k, kSlots, sizeof(list), &list);
  const c10::Stream s(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device),
                      stream_id);
  cl_command_queue q = raw_queue_of(s);
  const size_t size = db.local_size;
  profiler::BatchPart parts[kBatchMax];
  std::copy(p.parts, p.parts + list.count, parts);
  profiler::Recorder rec;
  OCL_CHECK(cl().clEnqueueNDRangeKernel(q, k, 1, nullptr, &size, &size, 0, nullptr, rec.event()));
  rec.batch(device, stream_id, k, 1, &size, &size, parts, list.count);
  note_enqueued(q);
  ++g_launches;
}

// The slot of `mem` in the batch, adding it if there is room; -1 if the batch is full.
int slot_of(Pending& p, cl_mem mem) {
  for (int i = 0; i < p.nslots; ++i)
    if (p.slots[i] == mem) return i;
  if (p.nslots == kSlots) return -1;
  p.slots[p.nslots] = mem;
  return p.nslots++;
}

// The flusher the runtime calls before the next enqueue on a stream with a pending batch.
void flush_stream(int device, int64_t stream_id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (const auto& p = g_devices[device].pending[stream_id]) flush_locked(device, stream_id, *p);
}

}  // namespace

bool batch_record(int device, EwId op, at::ScalarType t, int64_t n, const BufferRef& out,
                  const BufferRef& a, const BufferRef* b, float p0, float p1, float bv) {
  if (!enabled() || n <= 0 || device < 0 || device >= kMaxDevices) return false;
  if (!(ew_op(op).flags & kBatch)) return false;
  const int dtype = dtype_index(t);
  const int code = static_cast<int>(op);
  if (dtype < 0) return false;
  static const bool registered = [] {
    set_pending_flusher(&flush_stream);
    return true;
  }();
  (void)registered;
  const size_t item = kItemSize[dtype];
  uint64_t offs[3] = {out.offset, a.offset, b ? b->offset : 0};
  for (uint64_t& o : offs) {
    if (o % item != 0 || o / item > UINT32_MAX - static_cast<uint64_t>(n)) return false;
    o /= item;
  }
  const c10::Stream stream = current_stream(device);
  // Outside code enqueues on a shared queue (torch_ocl.interop): nothing may be held back there.
  if (stream_queue_shared(stream)) return false;
  const int64_t stream_id = stream.id();

  std::lock_guard<std::mutex> lock(g_mutex);
  DeviceBatches& db = g_devices[device];
  if (!db.checked) check_device(device, db);
  if (!db.usable || n > db.max_numel || !batch_kernel(device, db, dtype)) return false;
  std::unique_ptr<Pending>& slot = db.pending[stream_id];
  if (!slot) slot = std::make_unique<Pending>();
  Pending& p = *slot;
  if (p.list.count > 0 && p.dtype != dtype) flush_locked(device, stream_id, p);
  int so = slot_of(p, out.mem), sa = slot_of(p, a.mem), sb = b ? slot_of(p, b->mem) : kSlots;
  if (so < 0 || sa < 0 || sb < 0) {
    flush_locked(device, stream_id, p);  // an empty batch has room for three buffers
    so = slot_of(p, out.mem);
    sa = slot_of(p, a.mem);
    sb = b ? slot_of(p, b->mem) : kSlots;
  }
  p.dtype = dtype;
  BatchOp& o = p.list.ops[p.list.count++];
  o.op = static_cast<cl_uint>(code);
  o.n = static_cast<cl_uint>(n);
  o.out_slot = static_cast<cl_uint>(so);
  o.a_slot = static_cast<cl_uint>(sa);
  o.b_slot = static_cast<cl_uint>(sb);
  o.out_off = static_cast<cl_uint>(offs[0]);
  o.a_off = static_cast<cl_uint>(offs[1]);
  o.b_off = static_cast<cl_uint>(offs[2]);
  o.p0 = p0;
  o.p1 = p1;
  o.bv = bv;
  // The correlation lookup only while recording (it is 0 otherwise): a call into the profiler
  // per op costs the tiny-op path measurably.
  p.parts[p.list.count - 1] = {profiler::recording() ? profiler::current_correlation() : 0,
                               ew_op(op).name};
  ++g_ops;
  if (p.list.count == kBatchMax) {
    flush_locked(device, stream_id, p);
  } else {
    mark_pending(device, stream_id);
  }
  return true;
}

BatchCounts batch_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return {g_ops, g_launches};
}

}  // namespace torch_ocl
