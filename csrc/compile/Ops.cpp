// torch.ops.ocl.* of run-time source kernels (python/torch_ocl/_inductor/runtime.py, which
// torch.compile's generated code calls).
#include <torch/library.h>

#include <string>
#include <vector>

#include "runtime/SourceKernel.h"

namespace torch_ocl {

TORCH_LIBRARY_FRAGMENT(ocl, m) {
  // Registers kernel `name` of OpenCL C `source` (built now for the current device, through the
  // program cache) and returns its handle.
  m.def("_compile_source(str source, str name, str options) -> int",
        [](const std::string& source, const std::string& name, const std::string& options) {
          return register_source_kernel(source, name, options);
        });
  // Launches a handle's kernel on the current stream: tensors as (buffer, element offset)
  // pairs, then the int and float scalars, over `global` work-items in groups of `local`.
  m.def(
      "_launch_source(int handle, Tensor[] tensors, int[] ints, float[] floats, int[] global_size, "
      "int[] local_size) -> ()",
      [](int64_t handle, const std::vector<at::Tensor>& tensors, std::vector<int64_t> ints,
         std::vector<double> floats, std::vector<int64_t> global, std::vector<int64_t> local) {
        const std::vector<at::TensorBase> bases(tensors.begin(), tensors.end());
        launch_source_kernel(handle, bases, ints, floats, global, local);
      });
  m.def("_source_launch_count() -> int", [] { return source_launch_count(); });
}

}  // namespace torch_ocl
