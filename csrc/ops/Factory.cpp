// Tensor creation and storage-swapping ops: empty, empty_strided, set_ (views: View.cpp).
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/set_native.h>
#include <torch/library.h>

#include "runtime/Allocator.h"
#include "runtime/Device.h"

namespace torch_ocl {
namespace {

c10::DeviceIndex device_or_current(std::optional<at::Device> device) {
  if (device && device->has_index()) return device->index();
  return static_cast<c10::DeviceIndex>(current_device());
}

at::Tensor empty_memory_format(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format) {
  const c10::DeviceIndex index = device_or_current(device);
  require_devices();
  device_info(index);
  c10::DeviceGuard guard(at::Device(c10::DeviceType::PrivateUse1, index));
  const c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_generic(size, device_allocator(), keys, c10::dtype_or_default(dtype),
                                   memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<at::Device> device, std::optional<bool> pin_memory) {
  const c10::DeviceIndex index = device_or_current(device);
  require_devices();
  device_info(index);
  c10::DeviceGuard guard(at::Device(c10::DeviceType::PrivateUse1, index));
  const c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_strided_generic(size, stride, device_allocator(), keys,
                                           c10::dtype_or_default(dtype));
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, device_allocator(), true);
  return self.set_(storage, 0, {0}, {});
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("set_.source_Storage", at::native::set_);
  m.impl("set_.source_Storage_storage_offset", at::native::set_storage_cpu_);
  m.impl("set_.source_Tensor", at::native::set_tensor_);
  m.impl("set_", set_empty);
}

}  // namespace torch_ocl
