// c10 device guard for PrivateUse1: current device, streams, and events (OpenCL markers).
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "runtime/Allocator.h"
#include "runtime/CrossContext.h"
#include "runtime/Device.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"
#include "runtime/Sync.h"
#include "runtime/TimingMarker.h"

namespace torch_ocl {
namespace {

struct OclEvent {
  cl_event event = nullptr;
  int device = -1;
  bool timing = false;
};

// A device without an index ("ocl") means the current device.
int index_of(c10::Device d) { return d.has_index() ? d.index() : current_device(); }

struct OclGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return kType; }

  c10::Device exchangeDevice(c10::Device d) const override {
    return c10::Device(kType, static_cast<c10::DeviceIndex>(exchange_device(d.index())));
  }
  c10::Device getDevice() const override {
    return c10::Device(kType, static_cast<c10::DeviceIndex>(current_device()));
  }
  void setDevice(c10::Device d) const override { set_device(d.index()); }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    try {
      set_device(d.index());
    } catch (...) {
    }
  }
  c10::Stream getStream(c10::Device d) const override { return current_stream(index_of(d)); }
  c10::Stream getDefaultStream(c10::Device d) const override { return default_stream(index_of(d)); }
  c10::Stream getNewStream(c10::Device d, int priority) const override {
    return stream_from_pool(index_of(d));
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool high_priority) const override {
    return stream_from_pool(index_of(d));
  }
  c10::Stream exchangeStream(c10::Stream s) const override { return set_current_stream(s); }
  c10::DeviceIndex deviceCount() const noexcept override {
    return static_cast<c10::DeviceIndex>(device_count());
  }

  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    auto* e = static_cast<OclEvent*>(event);
    if (!e) return;
    if (e->event && !in_bad_fork()) {
      try {
        cl().clReleaseEvent(e->event);
      } catch (...) {  // cl() throws only without a loaded OpenCL library: nothing to release
      }
    }
    delete e;
  }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "Event device index ",
                device_index, " does not match the recording stream's device index ",
                stream.device_index(), ".");
    auto* e = static_cast<OclEvent*>(*event);
    if (!e) {
      e = new OclEvent;
      e->timing = flag == c10::EventFlag::BACKEND_DEFAULT;
      *event = e;
    }
    cl_command_queue q = queue_of(stream);
    cl_event marker = nullptr;
    if (e->timing) {
      marker = enqueue_timing_marker(stream.device_index(), q);  // timestamps on every driver
    } else {
      OCL_CHECK(cl().clEnqueueMarkerWithWaitList(q, 0, nullptr, &marker));
    }
    flush(q);
    if (e->event) cl().clReleaseEvent(e->event);
    e->event = marker;
    e->device = stream.device_index();
  }

  void block(void* event, const c10::Stream& stream) const override {
    auto* e = static_cast<OclEvent*>(event);
    if (!e || !e->event) return;
    cl_command_queue q = queue_of(stream);
    if (e->device == stream.device_index()) {
      OCL_CHECK(cl().clEnqueueBarrierWithWaitList(q, 1, &e->event, nullptr));
    } else {
      // An event of another device (another context): wait for its bridge.
      cl_event bridge = bridge_event(e->event, stream.device_index());
      const cl_int err = cl().clEnqueueBarrierWithWaitList(q, 1, &bridge, nullptr);
      cl().clReleaseEvent(bridge);
      OCL_CHECK(err);
    }
    note_enqueued(q);
  }

  bool queryEvent(void* event) const override {
    auto* e = static_cast<OclEvent*>(event);
    if (!e || !e->event) return true;
    cl_int status = CL_QUEUED;
    OCL_CHECK(cl().clGetEventInfo(e->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                                  &status, nullptr));
    TORCH_CHECK(status >= 0, "torch-ocl: a command before this event failed (",
                cl_error_name(status), ")");
    return status == CL_COMPLETE;
  }

  bool queryStream(const c10::Stream& stream) const override { return query_stream(stream); }
  void synchronizeStream(const c10::Stream& stream) const override {
    synchronize_stream(stream, "Stream.synchronize()");
  }
  void synchronizeEvent(void* event) const override {
    auto* e = static_cast<OclEvent*>(event);
    if (!e || !e->event) return;
    HostWait wait("Event.synchronize()");
    OCL_CHECK(cl().clWaitForEvents(1, &e->event));
  }
  void synchronizeDevice(const c10::DeviceIndex device_index) const override {
    synchronize_device(device_index < 0 ? current_device() : device_index,
                       "torch.ocl.synchronize()");
  }

  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    auto* a = static_cast<OclEvent*>(start);
    auto* b = static_cast<OclEvent*>(end);
    TORCH_CHECK(a && b && a->event && b->event,
                "torch-ocl: both events must be recorded before elapsed_time().");
    TORCH_CHECK(a->timing && b->timing,
                "torch-ocl: both events must be created with enable_timing=True to measure "
                "elapsed time.");
    cl_event evs[2] = {a->event, b->event};
    HostWait wait("Event.elapsed_time()");
    OCL_CHECK(cl().clWaitForEvents(2, evs));
    cl_ulong t0 = 0, t1 = 0;
    OCL_CHECK(
        cl().clGetEventProfilingInfo(a->event, CL_PROFILING_COMMAND_END, sizeof(t0), &t0, nullptr));
    OCL_CHECK(
        cl().clGetEventProfilingInfo(b->event, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, nullptr));
    return (static_cast<double>(t1) - static_cast<double>(t0)) / 1e6;
  }

  void recordDataPtrOnStream(const c10::DataPtr& data_ptr,
                             const c10::Stream& stream) const override {
    record_stream(data_ptr, stream);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, OclGuardImpl);

}  // namespace
}  // namespace torch_ocl
