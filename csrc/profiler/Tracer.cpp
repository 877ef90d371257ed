// The ocl command tracer (profiler/Tracer.h).
#include "profiler/Tracer.h"

#include <c10/util/ApproximateClock.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>

#ifdef USE_KINETO
#include <ThreadUtil.h>
#endif

#include "runtime/Device.h"
#include "runtime/OclApi.h"
#include "runtime/Program.h"
#include "runtime/Stream.h"

namespace torch_ocl::profiler {

namespace detail {
std::atomic<bool> g_recording{false};
}  // namespace detail

namespace {

struct Pending {
  Activity act;
  cl_event event = nullptr;  // retained; nullptr for the later shares of a batch
};

// One reading of the device clock between two readings of the host clock.
struct ClockSample {
  int64_t host_ns = 0;  // midpoint of the host readings
  int64_t device_ns = 0;
  int64_t error_ns = std::numeric_limits<int64_t>::max();  // half the bracket
};

struct DeviceClock {
  bool tried = false;  // whether the timer was tried this session
  bool timer = false;  // clGetDeviceAndHostTimer works on this device
  ClockSample first;
  std::string method;  // of the last drain
};

std::mutex g_mutex;  // everything below
std::vector<Pending> g_pending;
uint64_t g_next_id = 1;
std::array<DeviceClock, kMaxDevices> g_clocks;

// Kineto's correlation stack of this thread; `epoch` drops a stack left over by an earlier
// recording (pushes and pops of other threads are not balanced at start and stop).
std::atomic<uint64_t> g_epoch{1};
struct CorrelationStack {
  uint64_t epoch = 0;
  std::vector<uint64_t> ids;
};
thread_local CorrelationStack t_stack;

int32_t thread_id() {
#ifdef USE_KINETO
  return libkineto::systemThreadId();
#else
  return 0;
#endif
}

bool force_queued_clock() {
  const char* v = std::getenv("TORCH_OCL_PROFILER_CLOCK");
  return v && std::strcmp(v, "queued") == 0;
}

// OpenCL 2.1 or later ("OpenCL <major>.<minor> ..."): clGetDeviceAndHostTimer is core.
bool device_has_timer(const DeviceInfo& info) {
  int major = 0, minor = 0;
  if (std::sscanf(info.version.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 1);
}

bool sample_timer(int device, ClockSample* out) {
  const ClApi& api = cl();
  if (!api.clGetDeviceAndHostTimer) return false;
  cl_device_id id = device_info(device).id;
  ClockSample best;
  for (int i = 0; i < 5; ++i) {
    cl_ulong dev = 0, host = 0;
    const int64_t h0 = c10::getTime();
    const cl_int err = api.clGetDeviceAndHostTimer(id, &dev, &host);
    const int64_t h1 = c10::getTime();
    if (err != CL_SUCCESS || dev == 0) return false;
    if ((h1 - h0) / 2 < best.error_ns)
      best = {h0 + (h1 - h0) / 2, static_cast<int64_t>(dev), (h1 - h0) / 2};
  }
  *out = best;
  return true;
}

// Called with g_mutex held, at the first command of a recording on `device`.
void note_device(int device) {
  DeviceClock& c = g_clocks[device];
  if (c.tried) return;
  c.tried = true;
  c.timer = !force_queued_clock() && device_has_timer(device_info(device)) &&
            sample_timer(device, &c.first);
}

std::string info_string(cl_int (*get)(void*, cl_uint, size_t, void*, size_t*), void* obj,
                        cl_uint what) {
  size_t size = 0;
  if (get(obj, what, 0, nullptr, &size) != CL_SUCCESS || size <= 1) return "";
  std::string buf(size, '\0');
  if (get(obj, what, size, buf.data(), nullptr) != CL_SUCCESS) return "";
  return std::string(buf.c_str());
}

// "<function>[<variant>]": the variant is the value (or name) of the first -D option the op
// built the program with (kernels/elementwise.cl's EW_OP=EWOP_add gives "elementwise[add]").
// The options themselves go into the activity's arguments. Cached per kernel object.
struct KernelNames {
  std::string name, options;
};
const KernelNames& kernel_names(int device, cl_kernel k) {
  static std::unordered_map<cl_kernel, KernelNames> names;
  auto it = names.find(k);
  if (it != names.end()) return it->second;
  KernelNames n;
  const ClApi& api = cl();
  n.name = info_string(
      [](void* o, cl_uint w, size_t s, void* v, size_t* r) {
        return cl().clGetKernelInfo(static_cast<cl_kernel>(o), w, s, v, r);
      },
      k, CL_KERNEL_FUNCTION_NAME);
  if (n.name.empty()) n.name = "kernel";
  cl_program prog = nullptr;
  if (api.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(prog), &prog, nullptr) == CL_SUCCESS &&
      prog) {
    size_t size = 0;
    cl_device_id id = device_info(device).id;
    if (api.clGetProgramBuildInfo(prog, id, CL_PROGRAM_BUILD_OPTIONS, 0, nullptr, &size) ==
            CL_SUCCESS &&
        size > 1) {
      std::string buf(size, '\0');
      if (api.clGetProgramBuildInfo(prog, id, CL_PROGRAM_BUILD_OPTIONS, size, buf.data(),
                                    nullptr) == CL_SUCCESS)
        n.options = buf.c_str();
    }
  }
  const std::string common = device_build_options(device);
  if (n.options.compare(0, common.size(), common) == 0) n.options.erase(0, common.size());
  while (!n.options.empty() && n.options.front() == ' ') n.options.erase(0, 1);
  if (n.options.compare(0, 2, "-D") == 0) {
    std::string first = n.options.substr(2, n.options.find(' ') - 2);
    const size_t eq = first.find('=');
    if (eq != std::string::npos) first = first.substr(eq + 1);
    const size_t us = first.find('_');
    // EWOP_add -> add: drop an upper-case prefix that only says which table the value is from.
    if (us != std::string::npos && us + 1 < first.size() &&
        std::all_of(first.begin(), first.begin() + us, [](char c) { return c >= 'A' && c <= 'Z'; }))
      first = first.substr(us + 1);
    if (!first.empty()) n.name += "[" + first + "]";
  }
  return names.emplace(k, std::move(n)).first->second;
}

const char* copy_name(CommandKind kind) {
  switch (kind) {
    case CommandKind::kCopyH2D:
      return "Memcpy HtoD (ocl)";
    case CommandKind::kCopyD2H:
      return "Memcpy DtoH (ocl)";
    case CommandKind::kCopyD2D:
      return "Memcpy DtoD (ocl)";
    case CommandKind::kFill:
      return "Memset (ocl)";
    case CommandKind::kKernel:
      break;
  }
  return "kernel";
}

// Maps device timestamps of one device to the host clock.
struct ClockMap {
  // host = device + offset0 + slope * (device - device0)
  double offset0 = 0, slope = 0;
  int64_t device0 = 0;
  int64_t operator()(int64_t device_ns) const {
    return device_ns +
           static_cast<int64_t>(offset0 + slope * static_cast<double>(device_ns - device0));
  }
};

// The "queued" method over the commands of one device: each offset must lie in
// [begin - queued, end - queued].
ClockMap queued_map(const std::vector<std::pair<const Activity*, int64_t>>& queued) {
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> mids;
  for (const auto& [a, q] : queued) {
    lo = std::max(lo, a->enqueue_begin_ns - q);
    hi = std::min(hi, a->enqueue_end_ns - q);
    mids.push_back((a->enqueue_begin_ns + a->enqueue_end_ns) / 2 - q);
  }
  ClockMap m;
  if (mids.empty()) return m;
  if (lo <= hi) {
    m.offset0 = static_cast<double>(lo + (hi - lo) / 2);
  } else {
    std::nth_element(mids.begin(), mids.begin() + mids.size() / 2, mids.end());
    m.offset0 = static_cast<double>(mids[mids.size() / 2]);
  }
  return m;
}

cl_ulong profiling(cl_event e, cl_profiling_info what, cl_int* err) {
  cl_ulong v = 0;
  const cl_int r = cl().clGetEventProfilingInfo(e, what, sizeof(v), &v, nullptr);
  if (r != CL_SUCCESS && *err == CL_SUCCESS) *err = r;
  return v;
}

void add(Pending&& p) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!detail::g_recording.load()) {
    if (p.event) cl().clReleaseEvent(p.event);
    return;
  }
  note_device(p.act.device);
  g_pending.push_back(std::move(p));
}

}  // namespace

int64_t host_now_ns() { return c10::getTime(); }

uint64_t current_correlation() {
  if (!recording()) return 0;
  const CorrelationStack& s = t_stack;
  if (s.epoch != g_epoch.load(std::memory_order_relaxed) || s.ids.empty()) return 0;
  return s.ids.back();
}

void push_correlation(uint64_t id) {
  CorrelationStack& s = t_stack;
  const uint64_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (s.epoch != epoch) {
    s.epoch = epoch;
    s.ids.clear();
  }
  s.ids.push_back(id);
}

void pop_correlation() {
  CorrelationStack& s = t_stack;
  if (s.epoch == g_epoch.load(std::memory_order_relaxed) && !s.ids.empty()) s.ids.pop_back();
}

Recorder::~Recorder() {
  if (event_) cl().clReleaseEvent(event_);
}

cl_event Recorder::take_event() {
  if (own_ && *own_) {
    cl().clRetainEvent(*own_);
    return *own_;
  }
  cl_event e = event_;
  event_ = nullptr;
  return e;
}

void Recorder::record_kernel(int device, int64_t stream, cl_kernel k, cl_uint dims,
                             const size_t* global, const size_t* local, const BatchPart* parts,
                             size_t n) {
  const int64_t end_ns = host_now_ns();
  Pending p;
  p.event = take_event();
  if (!p.event) return;
  Activity& a = p.act;
  a.kind = CommandKind::kKernel;
  a.device = device;
  a.stream = stream;
  a.thread = thread_id();
  a.enqueue_begin_ns = begin_ns_;
  a.correlation = current_correlation();
  a.dims = std::min<cl_uint>(dims, 3);
  for (cl_uint i = 0; i < a.dims; ++i) {
    a.global[i] = global[i];
    a.local[i] = local ? local[i] : 0;
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    const KernelNames& names = kernel_names(device, k);
    a.name = names.name;
    a.options = names.options;
    a.id = g_next_id++;
  }
  a.enqueue_end_ns = end_ns;
  if (!parts || n == 0) {
    add(std::move(p));
    return;
  }
  // One share per op of the batch, all of the same command (only the first holds the event).
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!detail::g_recording.load()) {
    cl().clReleaseEvent(p.event);
    return;
  }
  note_device(device);
  for (size_t i = 0; i < n; ++i) {
    Pending share;
    share.act = a;
    share.act.correlation = parts[i].correlation;
    share.act.label = parts[i].label ? parts[i].label : "";
    share.act.part = static_cast<int>(i);
    share.act.parts = static_cast<int>(n);
    if (i == 0) share.event = p.event;
    g_pending.push_back(std::move(share));
  }
}

void Recorder::record_copy(CommandKind kind, int device, int64_t stream, uint64_t bytes) {
  const int64_t end_ns = host_now_ns();
  Pending p;
  p.event = take_event();
  if (!p.event) return;
  Activity& a = p.act;
  a.kind = kind;
  a.device = device;
  a.stream = stream;
  a.thread = thread_id();
  a.enqueue_begin_ns = begin_ns_;
  a.enqueue_end_ns = end_ns;
  a.correlation = current_correlation();
  a.name = copy_name(kind);
  a.bytes = bytes;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    a.id = g_next_id++;
  }
  add(std::move(p));
}

void start_recording() {
  std::vector<Pending> old;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    old.swap(g_pending);
    for (DeviceClock& c : g_clocks) {
      c.tried = false;
      c.timer = false;
    }
    g_epoch.fetch_add(1);
    detail::g_recording.store(true);
  }
  if (!in_bad_fork())
    for (Pending& p : old)
      if (p.event) cl().clReleaseEvent(p.event);
}

void stop_recording() { detail::g_recording.store(false); }

std::vector<Activity> drain(std::vector<std::string>* errors) {
  std::vector<Pending> pending;
  std::array<DeviceClock, kMaxDevices> clocks;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    pending.swap(g_pending);
    clocks = g_clocks;
  }
  std::vector<Activity> out;
  if (pending.empty()) return out;
  if (in_bad_fork()) {
    // The events belong to the parent's OpenCL state: neither read nor release them.
    static const std::string kDropped =
        "torch-ocl: device activity recorded before fork() is dropped";
    if (errors) errors->push_back(kDropped);
    return out;
  }
  // Device timestamps of each command (the shares of a batch follow their first).
  struct Stamps {
    cl_ulong queued = 0, start = 0, end = 0;
    bool ok = false;
  };
  std::vector<Stamps> stamps(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) {
    if (!pending[i].event) {
      if (i > 0) stamps[i] = stamps[i - 1];
      continue;
    }
    cl_event e = pending[i].event;
    cl_int err = cl().clWaitForEvents(1, &e);  // also flushes its queue
    Stamps& s = stamps[i];
    if (err == CL_SUCCESS) {
      s.queued = profiling(e, CL_PROFILING_COMMAND_QUEUED, &err);
      s.start = profiling(e, CL_PROFILING_COMMAND_START, &err);
      s.end = profiling(e, CL_PROFILING_COMMAND_END, &err);
    }
    s.ok = err == CL_SUCCESS && s.end >= s.start && s.start > 0;
    if (!s.ok && errors)
      errors->push_back("torch-ocl: no device times for " + pending[i].act.name + " (" +
                        cl_error_name(err) + ")");
    cl().clReleaseEvent(e);
  }
  // A clock map per device.
  std::array<ClockMap, kMaxDevices> maps;
  std::array<std::vector<std::pair<const Activity*, int64_t>>, kMaxDevices> queued;
  for (size_t i = 0; i < pending.size(); ++i)
    if (stamps[i].ok && pending[i].event)
      queued[pending[i].act.device].emplace_back(&pending[i].act,
                                                 static_cast<int64_t>(stamps[i].queued));
  for (int d = 0; d < kMaxDevices; ++d) {
    if (queued[d].empty()) continue;
    ClockSample last;
    if (clocks[d].timer && sample_timer(d, &last)) {
      const ClockSample& first = clocks[d].first;
      ClockMap& m = maps[d];
      m.device0 = first.device_ns;
      m.offset0 = static_cast<double>(first.host_ns - first.device_ns);
      const int64_t span = last.device_ns - first.device_ns;
      if (span > 0)
        m.slope = static_cast<double>((last.host_ns - last.device_ns) -
                                      (first.host_ns - first.device_ns)) /
                  static_cast<double>(span);
      clocks[d].method = "device_and_host_timer";
    } else {
      maps[d] = queued_map(queued[d]);
      clocks[d].method = "queued";
    }
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (int d = 0; d < kMaxDevices; ++d)
      if (!clocks[d].method.empty()) g_clocks[d].method = clocks[d].method;
  }
  out.reserve(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) {
    Activity a = std::move(pending[i].act);
    const Stamps& s = stamps[i];
    if (s.ok) {
      const ClockMap& m = maps[a.device];
      const int64_t start = m(static_cast<int64_t>(s.start));
      const int64_t end = m(static_cast<int64_t>(s.end));
      const int64_t dur = end - start;
      a.start_ns = start + dur * a.part / a.parts;
      a.end_ns = start + dur * (a.part + 1) / a.parts;
      a.timed = true;
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::string clock_method(int device) {
  if (device < 0 || device >= kMaxDevices) return "";
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_clocks[device].method;
}

}  // namespace torch_ocl::profiler
