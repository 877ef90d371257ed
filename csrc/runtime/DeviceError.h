// Errors that a kernel finds in its inputs (a class index out of range, ...). A kernel cannot
// raise where it runs, and it runs after the op has returned; so a kernel that can find one gets
// the device's error word and a code, records the first error there (atomic_cmpxchg), and the
// host raises it as a RuntimeError at its next wait for that stream - like CUDA's device-side
// asserts, except that the device and the process stay usable afterwards.
#pragma once

#include <c10/core/Stream.h>

#include "runtime/OpenCL.h"

namespace torch_ocl {

// The code (>= 1) a kernel writes for `message` (a string literal naming the op and the
// problem); the same message always gets the same code.
cl_int device_error_code(const char* message);

// The error word of `device` (one cl_int, 0 while there is no error) for a kernel argument. It
// marks the current stream of `device` as needing a check at its next host wait.
cl_mem device_error_word(int device);

// After the host has waited for stream `s` (everything enqueued there before has finished):
// raises the error a kernel recorded, if any, and clears it.
void check_device_errors(c10::Stream s);

}  // namespace torch_ocl
