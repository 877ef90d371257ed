// _assert_async (with and without a message), as CUDA does it: the value is checked on the device
// (kernels/assert.cl) and a zero raised at the next host wait (runtime/DeviceError.h), so code
// that asserts on device values (ATen's multinomial, torch._assert_async) does not wait. The
// checks on the number of elements are the CPU's.
#include <torch/library.h>

#include <mutex>
#include <string>
#include <unordered_set>

#include "ops/KernelTypes.h"
#include "runtime/DeviceError.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

// device_error_code keeps the message's pointer: a message built at run time (the caller's) is
// kept here for the life of the process, one copy per distinct text.
const char* interned(const std::string& message) {
  static std::mutex mutex;
  static std::unordered_set<std::string> messages;
  std::lock_guard<std::mutex> lock(mutex);
  return messages.insert(message).first->c_str();
}

void assert_nonzero(const at::Tensor& self, const std::string& message) {
  TORCH_CHECK(self.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  TORCH_CHECK(self.numel() <= 1, "Boolean value of Tensor with more than one value is ambiguous");
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_complex(),
                              "_assert_async: complex tensors are not "
                              "supported on this device");
  const int device = self.device().index();
  const std::string opts = std::string("-DT=") + type_tag(self.scalar_type(), device);
  KernelLaunch launch(get_kernel(device, "assert.cl", "assert_nonzero", opts));
  launch.buffer(buffer_of(self), self.itemsize());
  launch.arg(device_error_word(device)).arg(device_error_code(interned(message)));
  const size_t one = 1;
  launch.enqueue(device, 1, &one, &one);
}

void assert_async(const at::Tensor& self) {
  assert_nonzero(self, "Expected Tensor with single nonzero value, but got zero");
}

void assert_async_msg(const at::Tensor& self, c10::string_view assert_msg) {
  assert_nonzero(self,
                 assert_msg.empty() ? std::string("Assertion is failed") : std::string(assert_msg));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_assert_async", assert_async);
  m.impl("_assert_async.msg", assert_async_msg);
}

}  // namespace torch_ocl
