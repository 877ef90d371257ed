#include "runtime/Stream.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/Device.h"
#include "runtime/OclApi.h"
#include "runtime/Sync.h"

namespace torch_ocl {
namespace {

constexpr int kMaxDevices = 64;

struct DeviceQueues {
  std::once_flag once;
  std::array<std::atomic<cl_command_queue>, kStreamPoolSize + 1> queues{};
  std::array<std::atomic<int>, kStreamPoolSize + 1> pending{};
  std::atomic<unsigned> next{0};
  std::mutex create_mutex;
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

}  // namespace

cl_command_queue queue_of(c10::Stream s) {
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

void flush(cl_command_queue q) { OCL_CHECK(cl().clFlush(q)); }

void note_enqueued(cl_command_queue q) {
  // A per-thread counter is enough: flushing is a hint for progress, not for correctness.
  thread_local unsigned count = 0;
  if (++count % 8 == 0) flush(q);
}

bool query_stream(c10::Stream s) {
  cl_command_queue q = queue_of(s);
  cl_event marker = nullptr;
  OCL_CHECK(cl().clEnqueueMarkerWithWaitList(q, 0, nullptr, &marker));
  flush(q);
  // A marker behind no work completes within microseconds, but not at once: poll it briefly
  // (at most ~100 us, never a blocking wait) so that an idle stream reports true.
  cl_int status = CL_QUEUED;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
  do {
    OCL_CHECK(cl().clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                                  &status, nullptr));
    if (status == CL_COMPLETE || status < 0) break;
    std::this_thread::yield();
  } while (std::chrono::steady_clock::now() < deadline);
  cl().clReleaseEvent(marker);
  return status == CL_COMPLETE;
}

void synchronize_stream(c10::Stream s, const char* why) {
  cl_command_queue q = queue_of(s);
  host_wait(why);
  OCL_CHECK(cl().clFinish(q));
}

void synchronize_device(int device, const char* why) {
  device_info(device);
  host_wait(why);
  for (auto& slot : g_queues[device].queues) {
    cl_command_queue q = slot.load();
    if (q) OCL_CHECK(cl().clFinish(q));
  }
}

}  // namespace torch_ocl
