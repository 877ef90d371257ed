// The fill of new memory under torch.use_deterministic_algorithms(True) with
// torch.utils.deterministic.fill_uninitialized_memory (ops/Factory.cpp): empty, empty_strided
// and resize_'s grown part.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_ocl {

// True when both flags are on.
bool fill_uninitialized_memory();

// Fills t as the CPU fills new memory: NaN for floating dtypes (NaN + 0i for complex), the
// largest value for integers (true for bool). Dtypes the device stores but does not compute
// (uint16/32/64, complex, float8) are filled through an integer view of their bits.
void fill_uninitialized(const at::Tensor& t);

}  // namespace torch_ocl
