// Per-device Philox4x32-10 generator state: a 64-bit seed (the key) and a 64-bit counter offset.
// Kernels draw counters [offset, offset + n) and the generator advances past them.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <cstdint>

namespace torch_ocl {

struct OclGeneratorImpl : public c10::GeneratorImpl {
  explicit OclGeneratorImpl(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  // Reserves `counters` Philox counters; returns the first.
  uint64_t reserve(uint64_t counters);

 private:
  OclGeneratorImpl* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

const at::Generator& default_generator(c10::DeviceIndex device);
at::Generator new_generator(c10::DeviceIndex device);

}  // namespace torch_ocl
