#include "runtime/Stream.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "runtime/Batch.h"
#include "runtime/Device.h"
#include "runtime/DeviceError.h"
#include "runtime/External.h"
#include "runtime/OclApi.h"
#include "runtime/Sync.h"

namespace torch_ocl {
namespace {

// Per queue: how many commands were submitted (gen) and up to which count they are known to have
// completed (done), so that query() on an idle or synchronized stream answers at once; and the
// marker of the last query that found work pending.
struct QueueState {
  std::atomic<uint64_t> gen{0}, done{0};
  cl_event marker = nullptr;
  uint64_t marker_gen = 0;
  // Outside code enqueues on this queue too (share_stream_queue): gen does not count everything.
  std::atomic<bool> shared{false};
};

struct DeviceQueues {
  std::array<std::atomic<cl_command_queue>, kStreamPoolSize + 1> queues{};
  std::array<QueueState, kStreamPoolSize + 1> state{};
  std::atomic<unsigned> next{0};
  std::mutex create_mutex;
  std::mutex query_mutex;
};

std::array<DeviceQueues, kMaxDevices> g_queues;
thread_local std::array<int, kMaxDevices> t_current{};  // stream id per device, 0 = default

cl_command_queue create_queue(int device) {
  const DeviceInfo& info = device_info(device);
  cl_int err = CL_SUCCESS;
  cl_command_queue q =
      cl().clCreateCommandQueue(info.context, info.id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) q = cl().clCreateCommandQueue(info.context, info.id, 0, &err);
  OCL_CHECK(err);
  return q;
}

QueueState* state_of(cl_command_queue q) {
  const int cur = current_device();
  for (int pass = 0; pass < 2; ++pass) {
    for (int d = pass == 0 ? cur : 0; d < (pass == 0 ? cur + 1 : kMaxDevices); ++d) {
      DeviceQueues& dq = g_queues[d];
      for (size_t i = 0; i < dq.queues.size(); ++i)
        if (dq.queues[i].load(std::memory_order_relaxed) == q) return &dq.state[i];
    }
  }
  return nullptr;
}

void mark_submitted(cl_command_queue q) {
  if (QueueState* st = state_of(q)) st->gen.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

cl_command_queue queue_of(c10::Stream s) {
  cl_command_queue q = raw_queue_of(s);
  batch_flush(s.device_index(), s.id());
  return q;
}

cl_command_queue raw_queue_of(c10::Stream s) {
  const int device = s.device_index();
  const auto id = s.id();
  TORCH_CHECK(device >= 0 && device < kMaxDevices && id >= 0 && id <= kStreamPoolSize,
              "torch-ocl: invalid stream ", s);
  check_not_forked();
  DeviceQueues& dq = g_queues[device];
  cl_command_queue q = dq.queues[id].load(std::memory_order_acquire);
  if (q) return q;
  std::lock_guard<std::mutex> lock(dq.create_mutex);
  q = dq.queues[id].load();
  if (!q) {
    q = create_queue(device);
    dq.queues[id].store(q, std::memory_order_release);
  }
  return q;
}

c10::Stream default_stream(int device) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device), 0);
}

c10::Stream current_stream(int device) {
  if (device < 0) device = current_device();
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device),
                     t_current[device]);
}

c10::Stream set_current_stream(c10::Stream s) {
  const int device = s.device_index();
  c10::Stream old = current_stream(device);
  t_current[device] = static_cast<int>(s.id());
  return old;
}

c10::Stream stream_from_pool(int device) {
  device_info(device);
  const unsigned n = g_queues[device].next.fetch_add(1);
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device),
                     1 + static_cast<int>(n % kStreamPoolSize));
}

cl_command_queue current_queue(int device) {
  if (device < 0) device = current_device();
  return queue_of(current_stream(device));
}

void flush(cl_command_queue q) {
  mark_submitted(q);
  OCL_CHECK(cl().clFlush(q));
}

cl_int place_buffer(int device, cl_mem mem, bool keep_contents) {
  cl_command_queue q = raw_queue_of(current_stream(device));
  const cl_mem_migration_flags flags = keep_contents ? 0 : CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
  const cl_int err = cl().clEnqueueMigrateMemObjects(q, 1, &mem, flags, 0, nullptr, nullptr);
  if (err == CL_SUCCESS) flush(q);
  return err;
}

void note_enqueued(cl_command_queue q) {
  mark_submitted(q);
  // A per-thread counter is enough: flushing is a hint for progress, not for correctness.
  thread_local unsigned count = 0;
  if (++count % 8 == 0) flush(q);
}

void share_stream_queue(c10::Stream s, bool shared) {
  raw_queue_of(s);  // checks the stream
  g_queues[s.device_index()].state[s.id()].shared.store(shared, std::memory_order_release);
}

bool stream_queue_shared(c10::Stream s) {
  const int device = s.device_index();
  const auto id = s.id();
  if (device < 0 || device >= kMaxDevices || id < 0 || id > kStreamPoolSize) return false;
  return g_queues[device].state[id].shared.load(std::memory_order_relaxed);
}

bool query_stream(c10::Stream s) {
  cl_command_queue q = queue_of(s);
  QueueState& st = g_queues[s.device_index()].state[s.id()];
  const uint64_t gen = st.gen.load(std::memory_order_acquire);
  const bool shared = st.shared.load(std::memory_order_acquire);
  if (!shared && st.done.load(std::memory_order_acquire) >= gen) return true;
  std::lock_guard<std::mutex> lock(g_queues[s.device_index()].query_mutex);
  if (!st.marker || st.marker_gen != gen || shared) {
    // A marker behind the work submitted so far; its completion means the stream is idle.
    if (st.marker) cl().clReleaseEvent(st.marker);
    st.marker = nullptr;
    OCL_CHECK(cl().clEnqueueMarkerWithWaitList(q, 0, nullptr, &st.marker));
    OCL_CHECK(cl().clFlush(q));
    st.marker_gen = gen;
  }
  cl_int status = CL_QUEUED;
  OCL_CHECK(cl().clGetEventInfo(st.marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                                &status, nullptr));
  TORCH_CHECK(status >= 0, "torch-ocl: a command on ", s, " failed (", cl_error_name(status), ")");
  if (status != CL_COMPLETE) return false;
  uint64_t done = st.done.load();
  while (done < gen && !st.done.compare_exchange_weak(done, gen)) {
  }
  return true;
}

// After a finish, everything submitted before it is complete.
void mark_finished(int device, size_t index, uint64_t gen) {
  std::atomic<uint64_t>& done = g_queues[device].state[index].done;
  uint64_t cur = done.load();
  while (cur < gen && !done.compare_exchange_weak(cur, gen)) {
  }
}

void synchronize_stream(c10::Stream s, const char* why) {
  cl_command_queue q = queue_of(s);
  const uint64_t gen = g_queues[s.device_index()].state[s.id()].gen.load();
  HostWait wait(why);
  OCL_CHECK(cl().clFinish(q));
  mark_finished(s.device_index(), static_cast<size_t>(s.id()), gen);
  check_device_errors(s);
}

void synchronize_device(int device, const char* why) {
  device_info(device);
  HostWait wait(why);
  DeviceQueues& dq = g_queues[device];
  for (size_t i = 0; i < dq.queues.size(); ++i) {
    batch_flush(device, static_cast<int64_t>(i));  // creates the queue if only a batch used it
    cl_command_queue q = dq.queues[i].load();
    if (!q) continue;
    const uint64_t gen = dq.state[i].gen.load();
    OCL_CHECK(cl().clFinish(q));
    mark_finished(device, i, gen);
  }
  for (size_t i = 0; i < dq.queues.size(); ++i) {
    if (dq.queues[i].load())
      check_device_errors(c10::Stream(c10::Stream::UNSAFE,
                                      c10::Device(c10::DeviceType::PrivateUse1, device),
                                      static_cast<c10::StreamId>(i)));
  }
}

}  // namespace torch_ocl
