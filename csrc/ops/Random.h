// The Philox draw shared by the random ops (Random.cpp, Sampling.cpp): a generator's key and a
// reserved run of counters.
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>
#include <optional>

namespace torch_ocl {

struct PhiloxDraw {
  uint32_t key0, key1;
  uint64_t base;  // the first of the reserved counters
};

// Reserves `counters` Philox counters of `gen` (the device's default generator when none; an
// error naming the device types when gen is not an ocl generator) and returns the key and the
// first counter.
PhiloxDraw philox_draw(std::optional<at::Generator> gen, int device, uint64_t counters);

}  // namespace torch_ocl
