#include "runtime/Generator.h"

#include <ATen/Functions.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <random>

#include "runtime/Device.h"

namespace torch_ocl {

OclGeneratorImpl::OclGeneratorImpl(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void OclGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}
void OclGeneratorImpl::set_offset(uint64_t offset) { offset_ = offset; }
uint64_t OclGeneratorImpl::get_offset() const { return offset_; }
uint64_t OclGeneratorImpl::current_seed() const { return seed_; }

uint64_t OclGeneratorImpl::seed() {
  std::random_device rd;
  const uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  set_current_seed(s);
  return s;
}

// State layout: 16 bytes, uint8 CPU tensor: seed (8 bytes, native order), offset (8 bytes).
void OclGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && new_state.numel() == 16 &&
                  new_state.device().is_cpu(),
              "torch-ocl: RNG state must be a CPU torch.ByteTensor of 16 bytes, got ",
              new_state.numel(), " elements");
  const auto* p = static_cast<const uint8_t*>(new_state.data());
  std::memcpy(&seed_, p, 8);
  std::memcpy(&offset_, p + 8, 8);
}

c10::intrusive_ptr<c10::TensorImpl> OclGeneratorImpl::get_state() const {
  at::Tensor state = at::empty({16}, at::TensorOptions().dtype(at::kByte).device(at::kCPU));
  auto* p = state.data_ptr<uint8_t>();
  std::memcpy(p, &seed_, 8);
  std::memcpy(p + 8, &offset_, 8);
  return state.getIntrusivePtr();
}

uint64_t OclGeneratorImpl::reserve(uint64_t counters) {
  const uint64_t first = offset_;
  offset_ += counters;
  return first;
}

OclGeneratorImpl* OclGeneratorImpl::clone_impl() const {
  auto* g = new OclGeneratorImpl(device().index(), seed_);
  g->offset_ = offset_;
  return g;
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  static std::mutex mutex;
  static std::deque<at::Generator> generators;  // stable addresses
  if (device < 0) device = static_cast<c10::DeviceIndex>(current_device());
  const int n = device_count();
  TORCH_CHECK_INDEX(device >= 0 && device < std::max(n, 1),
                    "torch-ocl: invalid device index ocl:", device, "; there are ", n,
                    " OpenCL devices");
  std::lock_guard<std::mutex> lock(mutex);
  while (static_cast<int>(generators.size()) <= device) {
    generators.push_back(
        at::make_generator<OclGeneratorImpl>(static_cast<c10::DeviceIndex>(generators.size())));
  }
  return generators[device];
}

at::Generator new_generator(c10::DeviceIndex device) {
  if (device < 0) device = static_cast<c10::DeviceIndex>(current_device());
  return at::make_generator<OclGeneratorImpl>(device);
}

}  // namespace torch_ocl
