// Kernels from OpenCL C source made at run time (torch.compile's generated kernels): registered
// once, built through the program cache (runtime/Program.h: in memory and on disk, crash-safe),
// and launched on the current stream through KernelLaunch, the one enqueue path (so the stream's
// pending batch of tiny ops goes first, and the profiler sees the launch).
//
// A kernel's arguments, in this order: each tensor as two arguments, its buffer
// (`__global T*`) and the offset of its first element in elements (`ulong`: a cl_mem cannot be
// offset); then each integer scalar as a `long`; then each floating scalar as a `double` on
// devices with fp64, a `float` on the others (the generated source spells that type
// OCL_SCALAR_T).
#pragma once

#include <ATen/core/TensorBase.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torch_ocl {

// Registers the kernel `name` of `source` and builds it for the current device now, so that a
// compiler error surfaces here (with the compiler log and the path of a file holding the full
// program text). Returns a handle for launch_source_kernel; the same (source, name, options)
// gets the same handle. Handles live as long as the process.
int64_t register_source_kernel(const std::string& source, const std::string& name,
                               const std::string& options);

// Launches a registered kernel on the current stream of the tensors' device (all tensors must
// be on one ocl device; with no tensors, the current device) without waiting. `global` has one
// to three sizes; each is rounded up to a multiple of the matching `local` size (the kernel
// checks its bounds). `local` has the same length; its sizes shrink (to powers of two) to what
// the device and the kernel allow, so kernels read their work-group size from get_local_size.
// Nothing is launched when a global size is 0.
void launch_source_kernel(int64_t handle, const std::vector<at::TensorBase>& tensors,
                          c10::ArrayRef<int64_t> ints, c10::ArrayRef<double> floats,
                          c10::ArrayRef<int64_t> global, c10::ArrayRef<int64_t> local);

// Launches made by launch_source_kernel in this process (for tests: how many kernels a
// compiled function ran).
int64_t source_launch_count();

}  // namespace torch_ocl
