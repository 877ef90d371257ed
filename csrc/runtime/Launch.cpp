#include "runtime/Launch.h"

namespace torch_ocl {

std::mutex& launch_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace torch_ocl
