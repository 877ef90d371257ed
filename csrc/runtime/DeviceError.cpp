#include "runtime/DeviceError.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/Device.h"
#include "runtime/OclApi.h"
#include "runtime/Stream.h"

namespace torch_ocl {
namespace {

std::mutex g_mutex;
std::vector<const char*> g_messages;  // code k is g_messages[k - 1]
std::array<cl_mem, kMaxDevices> g_words{};
// Per device and stream: an error-checking kernel was enqueued since the last check.
std::array<std::array<std::atomic<bool>, kStreamPoolSize + 1>, kMaxDevices> g_pending{};

}  // namespace

cl_int device_error_code(const char* message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (size_t i = 0; i < g_messages.size(); ++i)
    if (g_messages[i] == message) return static_cast<cl_int>(i + 1);
  g_messages.push_back(message);
  return static_cast<cl_int>(g_messages.size());
}

cl_mem device_error_word(int device) {
  const c10::Stream s = current_stream(device);
  g_pending[device][s.id()].store(true, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_words[device]) {
    cl_int zero = 0, err = CL_SUCCESS;
    cl_mem word =
        cl().clCreateBuffer(device_info(device).context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            sizeof(zero), &zero, &err);
    OCL_CHECK(err);
    try {
      OCL_CHECK(place_buffer(device, word, true));  // before other threads use it
    } catch (...) {
      cl().clReleaseMemObject(word);
      throw;
    }
    g_words[device] = word;
  }
  return g_words[device];
}

void check_device_errors(c10::Stream s) {
  const int device = s.device_index();
  if (!g_pending[device][s.id()].exchange(false)) return;
  cl_mem word = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    word = g_words[device];
  }
  cl_command_queue q = queue_of(s);
  cl_int code = 0;
  OCL_CHECK(
      cl().clEnqueueReadBuffer(q, word, CL_TRUE, 0, sizeof(code), &code, 0, nullptr, nullptr));
  if (code == 0) return;
  const cl_int zero = 0;
  OCL_CHECK(
      cl().clEnqueueWriteBuffer(q, word, CL_TRUE, 0, sizeof(zero), &zero, 0, nullptr, nullptr));
  const char* message = "an unknown error";
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (code >= 1 && static_cast<size_t>(code) <= g_messages.size()) message = g_messages[code - 1];
  }
  TORCH_CHECK(false, "torch-ocl: ", message, " (found by a kernel on ocl:", device,
              " and reported at the next wait for its stream; that op's results are undefined, "
              "the device stays usable)");
}

}  // namespace torch_ocl
