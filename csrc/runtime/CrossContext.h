// Ordering between devices. Every device has a context of its own (runtime/Device.h), and an
// OpenCL event can only be waited for by queues of its own context, so work on one device that
// must follow work on another waits for a bridge: a user event of its context that the driver
// completes (from a completion callback, without the host waiting) when the original completes.
#pragma once

#include "runtime/OpenCL.h"

namespace torch_ocl {

// An event of `device`'s context that completes when `event` completes, or fails with its error
// status if it fails; `event` itself (retained) if it already belongs to that context. The caller
// releases the result, and must have flushed `event`'s queue (or the bridge may never complete).
cl_event bridge_event(cl_event event, int device);

}  // namespace torch_ocl
