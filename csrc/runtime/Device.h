// OpenCL platforms and devices: lazy enumeration, ordering, selection, current device, fork
// safety. One context per device.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/OpenCL.h"

namespace torch_ocl {

struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_device_type type = 0;
  std::string name, vendor, platform_name, platform_version, driver_version, version, c_version,
      extensions;
  uint64_t global_mem = 0, max_alloc = 0, local_mem = 0;
  uint32_t compute_units = 0, vendor_id = 0, mem_base_align_bits = 0;
  size_t max_work_group = 0;
  bool fp16 = false, fp64 = false;
  int c_major = 1, c_minor = 2;  // OpenCL C version of the device
};

// Number of usable devices; 0 (never an exception) if OpenCL or devices are missing.
int device_count() noexcept;
// Why there are no devices ("" if there are some).
std::string init_error();
// Checks the index (naming the device count in the error) and that the process is not a
// forked child of one that initialised OpenCL; throws otherwise.
const DeviceInfo& device_info(int index);
// Throws the "no OpenCL device" error if there is no device.
void require_devices();

int current_device();
void set_device(int index);  // checks the index
int exchange_device(int index);

bool in_bad_fork();
void check_not_forked();

}  // namespace torch_ocl
