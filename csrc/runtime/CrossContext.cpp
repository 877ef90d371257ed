#include "runtime/CrossContext.h"

#include <c10/util/Exception.h>

#include "runtime/Device.h"
#include "runtime/OclApi.h"

namespace torch_ocl {
namespace {

// Runs on a driver thread when the original event completes (or fails).
void CL_CALLBACK complete_bridge(cl_event, cl_int status, void* data) {
  auto user = static_cast<cl_event>(data);
  cl().clSetUserEventStatus(user, status < 0 ? status : CL_COMPLETE);
  cl().clReleaseEvent(user);  // the callback's reference
}

}  // namespace

cl_event bridge_event(cl_event event, int device) {
  const DeviceInfo& info = device_info(device);
  cl_context context = nullptr;
  OCL_CHECK(cl().clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof(context), &context, nullptr));
  if (context == info.context) {
    OCL_CHECK(cl().clRetainEvent(event));
    return event;
  }
  cl_int err = CL_SUCCESS;
  cl_event user = cl().clCreateUserEvent(info.context, &err);
  OCL_CHECK(err);
  cl().clRetainEvent(user);  // released by complete_bridge
  err = cl().clSetEventCallback(event, CL_COMPLETE, &complete_bridge, user);
  if (err != CL_SUCCESS) {
    cl().clSetUserEventStatus(user, err);  // nothing may wait for it forever
    cl().clReleaseEvent(user);
    cl().clReleaseEvent(user);
    OCL_CHECK(err);
  }
  return user;
}

}  // namespace torch_ocl
