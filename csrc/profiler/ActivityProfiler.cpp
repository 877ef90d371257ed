// torch.profiler's device activity for ocl (profiler/ActivityProfiler.h).
#ifdef USE_KINETO

#include "profiler/ActivityProfiler.h"

#include <GenericTraceActivity.h>
#include <ThreadUtil.h>
#include <libkineto.h>
#include <output_base.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <map>
#include <sstream>

#include "profiler/Tracer.h"
#include "runtime/Device.h"

namespace torch_ocl::profiler {
namespace {

using libkineto::ActivityType;

const char* enqueue_call(CommandKind kind) {
  switch (kind) {
    case CommandKind::kKernel:
      return "clEnqueueNDRangeKernel";
    case CommandKind::kCopyH2D:
      return "clEnqueueWriteBuffer";
    case CommandKind::kCopyD2H:
      return "clEnqueueReadBuffer";
    case CommandKind::kCopyD2D:
      return "clEnqueueCopyBuffer";
    case CommandKind::kFill:
      return "clEnqueueFillBuffer";
  }
  return "clEnqueue";
}

ActivityType device_type(CommandKind kind) {
  switch (kind) {
    case CommandKind::kKernel:
      return ActivityType::CONCURRENT_KERNEL;
    case CommandKind::kFill:
      return ActivityType::GPU_MEMSET;
    default:
      return ActivityType::GPU_MEMCPY;
  }
}

std::string dims_json(const size_t* v, cl_uint dims) {
  std::ostringstream s;
  s << '[';
  for (cl_uint i = 0; i < 3; ++i) s << (i ? ", " : "") << (i < dims ? v[i] : 1);
  s << ']';
  return s.str();
}

// The value of a JSON string argument (Kineto writes quoted values verbatim).
std::string json_escaped(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

class OclActivityProfilerSession : public libkineto::IActivityProfilerSession {
 public:
  explicit OclActivityProfilerSession(const std::set<ActivityType>& types)
      : types_(types), buffer_(std::make_unique<libkineto::CpuTraceBuffer>()) {}

  ~OclActivityProfilerSession() override {
    if (status_ == libkineto::TraceStatus::RECORDING) stop_recording();
  }

  void start() override {
    start_recording();
    start_ns_ = host_now_ns();
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    stop_recording();
    end_ns_ = host_now_ns();
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(
        logger, [](int32_t) -> const libkineto::ITraceActivity* { return nullptr; }, 0, 0);
  }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked,
                    int64_t window_start, int64_t window_end) override {
    buffer_->span = libkineto::TraceSpan(start_ns_, end_ns_, "ocl");
    buffer_->gpuOpCount = -1;
    const int32_t pid = libkineto::processId();
    for (const Activity& a : drain(&errors_)) {
      if (!a.timed) continue;
      const libkineto::ITraceActivity* op =
          a.correlation ? linked(static_cast<int32_t>(a.correlation)) : nullptr;
      const auto flow_id = static_cast<uint32_t>(a.id);
      if (a.part == 0 && types_.count(ActivityType::PRIVATEUSE1_RUNTIME)) {
        // The enqueue call, on the row of the thread that made it.
        libkineto::GenericTraceActivity& r =
            add(ActivityType::PRIVATEUSE1_RUNTIME, enqueue_call(a.kind));
        r.device = pid;
        r.resource = a.thread;
        r.threadId = a.thread;
        r.startTime = a.enqueue_begin_ns;
        r.endTime = a.enqueue_end_ns;
        r.id = static_cast<int32_t>(a.id);
        // A batch is enqueued when it is flushed, by whatever op came next: link only one op.
        r.linked = a.parts == 1 ? op : nullptr;
        r.flow.id = flow_id;
        r.flow.type = libkineto::kLinkAsyncCpuGpu;
        r.flow.start = 1;
        r.addMetadata("correlation", a.id);
        logger.handleActivity(r);
      }
      const ActivityType type = device_type(a.kind);
      if (!types_.count(type)) continue;
      std::string name = a.name;
      if (a.parts > 1) {
        // elementwise_batch[float] -> elementwise_batch[float, add 2/5]
        const std::string share =
            a.label + " " + std::to_string(a.part + 1) + "/" + std::to_string(a.parts);
        if (!name.empty() && name.back() == ']')
          name.insert(name.size() - 1, ", " + share);
        else
          name += "[" + share + "]";
      }
      libkineto::GenericTraceActivity& d = add(type, name);
      d.device = a.device;
      d.resource = static_cast<int32_t>(a.stream);
      d.threadId = static_cast<int32_t>(a.stream);
      d.startTime = a.start_ns;
      d.endTime = a.end_ns;
      d.id = static_cast<int32_t>(a.id);
      d.linked = op;
      if (a.part == 0) {
        d.flow.id = flow_id;
        d.flow.type = libkineto::kLinkAsyncCpuGpu;
        d.flow.start = 0;
      }
      d.addMetadata("device", a.device);
      d.addMetadata("stream", a.stream);
      d.addMetadata("correlation", a.id);
      if (a.kind == CommandKind::kKernel) {
        size_t groups[3] = {1, 1, 1};
        for (cl_uint i = 0; i < a.dims; ++i)
          groups[i] = a.local[i] ? (a.global[i] + a.local[i] - 1) / a.local[i] : 0;
        d.addMetadata("global_size", dims_json(a.global, a.dims));
        d.addMetadata("local_size", dims_json(a.local, a.dims));
        d.addMetadata("grid", dims_json(groups, 3));
        d.addMetadata("block", dims_json(a.local, a.dims));
        if (!a.options.empty()) d.addMetadataQuoted("build_options", json_escaped(a.options));
        if (a.parts > 1) {
          d.addMetadataQuoted("batch_op", json_escaped(a.label));
          d.addMetadata("batch_size", a.parts);
        }
      } else {
        d.addMetadata("bytes", a.bytes);
        const double secs = static_cast<double>(a.end_ns - a.start_ns) * 1e-9;
        if (secs > 0) d.addMetadata("memory bandwidth (GB/s)", a.bytes / secs * 1e-9);
      }
      logger.handleActivity(d);
      streams_.insert({a.device, a.stream});
    }
    (void)window_start;
    (void)window_end;
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    if (streams_.empty()) return nullptr;
    const int device = streams_.begin()->first;
    std::string label = "ocl:" + std::to_string(device);
    try {
      label += " " + device_info(device).name;
    } catch (const std::exception&) {
    }
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{device, device + 0x1000000, "ocl", label});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (const auto& [device, stream] : streams_)
      out.push_back(libkineto::ResourceInfo{
          stream, stream, device,
          stream == 0 ? "stream 0 (default)" : "stream " + std::to_string(stream)});
    return out;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::move(buffer_);
  }

  void pushCorrelationId(uint64_t id) override { push_correlation(id); }
  void popCorrelationId() override { pop_correlation(); }

 private:
  libkineto::GenericTraceActivity& add(ActivityType type, const std::string& name) {
    buffer_->emplace_activity(buffer_->span, type, name);
    return *buffer_->activities.back();
  }

  std::set<ActivityType> types_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
  std::vector<std::string> errors_;
  std::set<std::pair<int, int64_t>> streams_;
  int64_t start_ns_ = 0, end_ns_ = 0;
};

const std::set<ActivityType> kActivities{ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                         ActivityType::GPU_MEMSET,
                                         ActivityType::PRIVATEUSE1_RUNTIME};

}  // namespace

const std::string& OclActivityProfiler::name() const {
  static const std::string kName = "ocl";
  return kName;
}

const std::set<ActivityType>& OclActivityProfiler::availableActivities() const {
  return kActivities;
}

std::unique_ptr<libkineto::IActivityProfilerSession> OclActivityProfiler::configure(
    const std::set<ActivityType>& activity_types, const libkineto::Config& config) {
  std::set<ActivityType> types;
  for (ActivityType t : activity_types)
    if (kActivities.count(t)) types.insert(t);
  // Nothing of ours requested (a CPU-only profile): no session, and nothing recorded.
  if (types.count(ActivityType::CONCURRENT_KERNEL) + types.count(ActivityType::GPU_MEMCPY) +
          types.count(ActivityType::GPU_MEMSET) ==
      0)
    return nullptr;
  return std::make_unique<OclActivityProfilerSession>(types);
}

std::unique_ptr<libkineto::IActivityProfilerSession> OclActivityProfiler::configure(
    int64_t /*ts_ms*/, int64_t /*duration_ms*/, const std::set<ActivityType>& activity_types,
    const libkineto::Config& config) {
  return configure(activity_types, config);
}

REGISTER_PRIVATEUSE1_PROFILER(OclActivityProfiler);

}  // namespace torch_ocl::profiler

#endif  // USE_KINETO
