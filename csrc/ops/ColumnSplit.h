// How the column-tile kernels (reduce.cl's reduce_tiles, norm.cl's norm_col_stats and
// norm_col_sums) share the rows of their columns among work-groups.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/DeviceProfile.h"

namespace torch_ocl {

struct ColumnSplit {
  uint64_t groups;  // work-groups per column tile (1: no partials)
  uint64_t chunk;   // rows each takes: a multiple of ty, at least 1
};

// `rows` rows of `groups_x` column tiles, each with `ty` rows of work-items: the rows are split
// until the profile's reduce_fill_groups work-groups fill the device, each row of work-items
// keeping 8 rows or more.
inline ColumnSplit column_split(const DeviceProfile& prof, uint64_t groups_x, uint64_t rows,
                                uint64_t ty) {
  const uint64_t fill = static_cast<uint64_t>(prof.reduce_fill_groups);
  uint64_t g = 1;
  if (groups_x < fill)
    g = std::min((fill + groups_x - 1) / groups_x, (rows + 8 * ty - 1) / (8 * ty));
  g = std::max<uint64_t>(g, 1);
  uint64_t chunk = (rows + g - 1) / g;
  chunk = std::max<uint64_t>((chunk + ty - 1) / ty * ty, 1);
  return {std::max<uint64_t>((rows + chunk - 1) / chunk, 1), chunk};
}

}  // namespace torch_ocl
