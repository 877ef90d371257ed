// Reading a few values of device data on the host: the one host wait allowed to an op whose
// result's size depends on the data (unique, bincount), as on CUDA.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace torch_ocl {

// The elements of `t` (int64, contiguous, a handful) on the host, after waiting for the device;
// `why` names the op and the reason for the wait (torch.ocl.set_sync_debug_mode reports it).
// Raises a kernel-reported device error (runtime/DeviceError.h) first, if there is one.
std::vector<int64_t> read_longs(const at::Tensor& t, const char* why);

}  // namespace torch_ocl
