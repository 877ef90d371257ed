// Device addresses: what data_ptr() of an ocl tensor holds. Every device gets a range of a private
// virtual address space, and the caching allocator (runtime/Allocator.cpp) places each of its
// buffers at an address in its device's range, so that pointer arithmetic works as on CUDA. The
// addresses are never dereferenced on the host: they start at 2^62, outside any canonical x86-64
// or AArch64 user address, so a stray host access faults. This header is the only place that
// knows the layout:
//
//   bits 63-62: 01   bits 61-52: device index   bits 51-0: offset in the device's range (4 PiB)
#pragma once

#include <cstdint>

namespace torch_ocl {

constexpr uint64_t kDeviceAddressBase = uint64_t{1} << 62;
constexpr int kDeviceAddressShift = 52;
constexpr uint64_t kDeviceAddressSpan = uint64_t{1} << kDeviceAddressShift;  // bytes per device
constexpr int kDeviceAddressMaxDevices = 1 << (62 - kDeviceAddressShift);

// The first address of `device`'s range (0 <= device < kDeviceAddressMaxDevices).
constexpr uint64_t device_range_base(int device) {
  return kDeviceAddressBase + (static_cast<uint64_t>(device) << kDeviceAddressShift);
}

// The device whose range holds `addr`, or -1 if `addr` is not a device address.
constexpr int device_of_address(uint64_t addr) {
  if (addr < kDeviceAddressBase || addr >= (kDeviceAddressBase << 1)) return -1;
  return static_cast<int>((addr - kDeviceAddressBase) >> kDeviceAddressShift);
}

inline int device_of_address(const void* ptr) {
  return device_of_address(reinterpret_cast<uint64_t>(ptr));
}

static_assert(device_of_address(device_range_base(5) + 123) == 5);
static_assert(device_of_address(device_range_base(kDeviceAddressMaxDevices - 1) +
                                kDeviceAddressSpan - 1) == kDeviceAddressMaxDevices - 1);
static_assert(device_of_address(kDeviceAddressBase - 1) == -1);

}  // namespace torch_ocl
