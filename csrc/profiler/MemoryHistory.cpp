// The ocl allocator's history (profiler/MemoryHistory.h).
#include "profiler/MemoryHistory.h"

#include <c10/core/Allocator.h>
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/combined_traceback.h>

#include <deque>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "runtime/Allocator.h"

namespace torch_ocl::profiler {

namespace detail {
std::atomic<bool> g_memory_history{false};
}  // namespace detail

namespace {

struct Entry {
  MemoryAction action;
  int device;
  uint64_t address, size;
  int stream;
  int64_t time_us;
  std::shared_ptr<c10::GatheredContext> context;
};

std::mutex g_mutex;  // everything below
std::deque<Entry> g_trace;
size_t g_max_entries = 0;
bool g_stacks = true;
// The stack that allocated each live block, by (device, address).
std::map<std::pair<int, uint64_t>, std::shared_ptr<c10::GatheredContext>> g_live;

thread_local std::shared_ptr<c10::GatheredContext>* t_context = nullptr;

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
  }
  return out + "\"";
}

// The frames of every context, symbolized together (frames are shared between stacks).
class Frames {
 public:
  void add(const std::shared_ptr<c10::GatheredContext>& c) {
    auto* tb = dynamic_cast<torch::CapturedTraceback*>(c.get());
    if (tb && index_.emplace(tb, order_.size()).second) order_.push_back(tb);
  }
  void symbolize() {
    if (!order_.empty()) symbolized_ = torch::symbolize(order_);
  }
  std::string json(const std::shared_ptr<c10::GatheredContext>& c) const {
    auto* tb = dynamic_cast<torch::CapturedTraceback*>(c.get());
    auto it = tb ? index_.find(tb) : index_.end();
    if (it == index_.end() || it->second >= symbolized_.tracebacks.size()) return "[]";
    std::string out = "[";
    bool first = true;
    for (uint64_t f : symbolized_.tracebacks[it->second]) {
      const auto& frame = symbolized_.all_frames.at(f);
      out += first ? "" : ", ";
      first = false;
      out += "{\"filename\": " + json_string(frame.filename) +
             ", \"line\": " + std::to_string(frame.lineno) +
             ", \"name\": " + json_string(frame.funcname) + "}";
    }
    return out + "]";
  }

 private:
  std::unordered_map<torch::CapturedTraceback*, size_t> index_;
  std::vector<torch::CapturedTraceback*> order_;
  torch::SymbolizedTracebacks symbolized_;
};

const char* action_name(MemoryAction a) {
  switch (a) {
    case MemoryAction::kAlloc:
      return "alloc";
    case MemoryAction::kFree:
      return "free_completed";
    case MemoryAction::kSegmentAlloc:
      return "segment_alloc";
    case MemoryAction::kSegmentFree:
      return "segment_free";
    case MemoryAction::kOom:
      return "oom";
  }
  return "unknown";
}

void push(Entry e) {
  g_trace.push_back(std::move(e));
  while (g_max_entries > 0 && g_trace.size() > g_max_entries) g_trace.pop_front();
}

}  // namespace

MemoryContext::MemoryContext() {
  if (!memory_history_enabled()) return;
  bool stacks = false;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    stacks = g_stacks;
  }
  if (stacks)
    context_ = torch::CapturedTraceback::gather(/*python=*/true, /*script=*/true,
                                                /*cpp=*/false);
  previous_ = t_context;
  t_context = &context_;
  active_ = true;
}

MemoryContext::~MemoryContext() {
  if (active_) t_context = previous_;
}

void note_memory_slow(MemoryAction action, int device, uint64_t address, uint64_t size,
                      int stream) {
  std::shared_ptr<c10::GatheredContext> context = t_context ? *t_context : nullptr;
  const int64_t now_us = c10::getTime() / 1000;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!detail::g_memory_history.load()) return;
  const auto key = std::make_pair(device, address);
  if (action == MemoryAction::kAlloc) {
    g_live[key] = context;
  } else if (action == MemoryAction::kFree) {
    // A free without a stack of its own (a tensor freed by C++) shows where it was allocated.
    auto it = g_live.find(key);
    if (it != g_live.end()) {
      if (!context) context = it->second;
      g_live.erase(it);
    }
  }
  push({action, device, address, size, stream, now_us, std::move(context)});
}

void set_memory_history(bool enabled, int64_t max_entries, bool stacks) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_max_entries = max_entries > 0 ? static_cast<size_t>(max_entries) : 0;
  g_stacks = stacks;
  if (!enabled) {
    g_trace.clear();
    g_live.clear();
  }
  detail::g_memory_history.store(enabled);
}

std::string memory_snapshot_json() {
  const std::vector<SegmentView> segments = allocator_segments();
  std::lock_guard<std::mutex> lock(g_mutex);
  Frames frames;
  for (const auto& [key, c] : g_live) frames.add(c);
  for (const Entry& e : g_trace) frames.add(e.context);
  frames.symbolize();
  std::ostringstream out;
  out << "{\"segments\": [";
  for (size_t i = 0; i < segments.size(); ++i) {
    const SegmentView& s = segments[i];
    uint64_t allocated = 0, requested = 0;
    for (const BlockView& b : s.blocks) {
      if (b.allocated) {
        allocated += b.size;
        requested += b.requested;
      }
    }
    out << (i ? ", " : "") << "{\"device\": " << s.device << ", \"address\": " << s.address
        << ", \"total_size\": " << s.size << ", \"allocated_size\": " << allocated
        << ", \"active_size\": " << allocated << ", \"requested_size\": " << requested
        << ", \"stream\": " << s.stream << ", \"segment_type\": \"" << (s.small ? "small" : "large")
        << "\", \"segment_pool_id\": [0, 0], \"is_expandable\": false, \"frames\": [], "
           "\"blocks\": [";
    for (size_t j = 0; j < s.blocks.size(); ++j) {
      const BlockView& b = s.blocks[j];
      const char* state = b.allocated      ? "active_allocated"
                          : b.pending_free ? "active_pending_free"
                                           : "inactive";
      std::string block_frames = "[]";
      if (b.allocated) {
        auto it = g_live.find({s.device, b.address});
        if (it != g_live.end()) block_frames = frames.json(it->second);
      }
      out << (j ? ", " : "") << "{\"address\": " << b.address << ", \"size\": " << b.size
          << ", \"requested_size\": " << (b.allocated ? b.requested : b.size) << ", \"state\": \""
          << state << "\", \"frames\": " << block_frames << "}";
    }
    out << "]}";
  }
  // One trace per device up to the highest device with an event or a segment.
  int devices = 0;
  for (const SegmentView& s : segments) devices = std::max(devices, s.device + 1);
  for (const Entry& e : g_trace) devices = std::max(devices, e.device + 1);
  out << "], \"device_traces\": [";
  for (int d = 0; d < devices; ++d) {
    out << (d ? ", " : "") << "[";
    bool first = true;
    for (const Entry& e : g_trace) {
      if (e.device != d) continue;
      auto entry = [&](const char* action) {
        out << (first ? "" : ", ") << "{\"action\": \"" << action << "\", \"addr\": " << e.address
            << ", \"size\": " << e.size << ", \"stream\": " << e.stream
            << ", \"time_us\": " << e.time_us << ", \"frames\": " << frames.json(e.context);
        if (e.action == MemoryAction::kOom) out << ", \"device_free\": " << e.address;
        out << "}";
        first = false;
      };
      if (e.action == MemoryAction::kFree) entry("free_requested");
      entry(action_name(e.action));
    }
    out << "]";
  }
  out << "], \"allocator_settings\": {}}";
  return out.str();
}

}  // namespace torch_ocl::profiler
