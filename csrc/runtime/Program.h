// Programs built from kernels/*.cl (embedded at build time), specialised with build options,
// cached in memory per device and on disk (TORCH_OCL_CACHE_DIR, TORCH_OCL_CACHE=0 disables,
// TORCH_OCL_CACHE_LOG=1 reports the cache's decisions on stderr). The disk format and its
// guarantees are described at the top of Program.cpp.
//
// Thread safety: every function here may be called from any number of threads at once.
// - A program is built at most once per process for each exact (device, source, options); threads
//   that ask for it meanwhile wait for that build (and get its compiler error if it fails, after
//   trying again themselves), and no thread waits for the build of a different program: no lock
//   shared by all programs is held while the OpenCL compiler runs.
// - get_kernel returns the same cl_kernel for the same arguments to every thread, for the life of
//   the process (the shared kernel). Its lookup takes no lock once a thread has seen the kernel.
// - A kernel object carries its arguments, and clSetKernelArg is not thread-safe in OpenCL, so
//   nobody sets a shared kernel's arguments without a lock of its own. Launches go through
//   thread_kernel (KernelLaunch does that): each thread sets arguments on, and enqueues, its own
//   copy of the kernel, so launches from different threads take no common lock.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/OpenCL.h"

namespace torch_ocl {

// The kernel `kernel` of kernels/<file> built with `options` (plus the device's own options:
// -cl-std, fp64) for `device`. Builds on first use; throws with the compiler log on failure.
cl_kernel get_kernel(int device, const char* file, const char* kernel, const std::string& options);

// The calling thread's own kernel object for `shared` (a kernel returned by get_kernel): created
// from the same program on the thread's first use. When the thread exits it is handed over, not
// released (no OpenCL call from a thread-exit destructor: the driver's own thread-locals may be
// gone by then), and released by the next live thread that creates a kernel of its own or calls
// thread_kernel_count; those of the main thread and of threads ending with the process are left
// to the process's end, and a forked child leaves them alone. Throws if `shared` is not
// get_kernel's.
cl_kernel thread_kernel(cl_kernel shared);
// Number of live per-thread kernel objects, after releasing those of exited threads (test hook).
int64_t thread_kernel_count();

// Builds arbitrary source on `device` through the same in-memory and disk caches as get_kernel,
// and throws like get_kernel does on failure (test hook).
void build_source_for_test(int device, const std::string& source, const std::string& options);

// The kernel `kernel` of a program made at run time from `source` (kernels/common.clh is put in
// front of it, as for kernels/*.cl) built with `options` (plus the device's own options) for
// `device`: the same in-memory and disk caches, thread safety and per-thread copies as
// get_kernel (KernelLaunch takes it). `what` names the program in error messages. Builds on first
// use; throws with the compiler log on failure.
cl_kernel get_source_kernel(int device, const std::string& source, const std::string& kernel,
                            const std::string& options, const std::string& what);
// The full text get_source_kernel compiles for `source` (the lines a compiler log refers to).
std::string source_program_text(const std::string& source);

// The directory of the disk cache ("" when TORCH_OCL_CACHE=0 or no location is known).
std::string cache_directory();
// What a device's compiled code depends on besides the source: its name, vendor, driver and
// platform versions, and the implementations' compiler settings set in the environment
// (CL_CONFIG_* for Intel's CPU runtime, some POCL_*; see Program.cpp) (one string).
std::string device_identity(int device);

// FNV-1a 64 of `s` (the cache's file names and checksums; also the tuning store's).
uint64_t fnv1a(const std::string& s);

// The options every program on `device` gets (for example "-cl-std=CL1.2 -DTORCH_OCL_FP64").
std::string device_build_options(int device);

}  // namespace torch_ocl
