// PrivateUse1 hooks: what PyTorch's core asks of a device backend outside the dispatcher
// (generators, pinned memory, availability). Registered when the library loads.
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "runtime/Allocator.h"
#include "runtime/Device.h"
#include "runtime/DeviceAddress.h"
#include "runtime/Generator.h"
#include "runtime/HostAllocator.h"

namespace torch_ocl {

namespace {

struct OclHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  void init() const override { check_not_forked(); }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return device_count() > 0; }
  c10::DeviceIndex deviceCount() const override {
    return static_cast<c10::DeviceIndex>(device_count());
  }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_device(d); }
  c10::DeviceIndex getCurrentDevice() const override {
    return static_cast<c10::DeviceIndex>(current_device());
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    return static_cast<c10::DeviceIndex>(exchange_device(d));
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override {
    if (d < 0 || d >= device_count()) return getCurrentDevice();
    return exchangeDevice(d);
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override {
    return default_generator(d);
  }
  at::Generator getNewGenerator(c10::DeviceIndex d) const override { return new_generator(d); }
  bool isPinnedPtr(const void* data) const override { return is_pinned(data); }
  c10::Allocator* getPinnedMemoryAllocator() const override { return host_allocator(); }
  at::Device getDeviceFromPtr(void* data) const override {
    int device = device_of_address(data);
    if (!data) device = current_device();
    TORCH_CHECK(device >= 0, "torch-ocl: ", data, " is not an ocl device address");
    return at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    resize_storage_bytes(storage, newsize);
  }
};

struct Registrar {
  Registrar() {
    static OclHooks hooks;
    at::RegisterPrivateUse1HooksInterface(&hooks);
    c10::SetAllocator(c10::DeviceType::PrivateUse1, device_allocator());
  }
};
Registrar g_registrar;

}  // namespace

}  // namespace torch_ocl
