// Sorting along a dimension (ops/Sort.cpp), for the ops that build on it (unique).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace torch_ocl {

// Sorts `self` (any layout) along `dim`, stably, NaN largest, into `values` (self's dtype) and
// `indices` (int64), both contiguous with self's shape (they may be self's own storage only if
// they are self).
void sort_along(const at::Tensor& self, int64_t dim, bool descending, const at::Tensor& values,
                const at::Tensor& indices);

}  // namespace torch_ocl
