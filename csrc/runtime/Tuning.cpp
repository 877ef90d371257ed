// The tuning store of Tuning.h.
#include "runtime/Tuning.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "runtime/Program.h"

namespace torch_ocl {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_enabled{false};

struct Store {
  std::mutex mutex;
  // device -> (key -> choice); a device's map exists once its file was read.
  std::unordered_map<int, std::unordered_map<std::string, int>> choices;
};

Store& store() {
  static Store* s = new Store();  // never destroyed: usable during process exit
  return *s;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

fs::path file_of(int device) {
  const std::string dir = cache_directory();
  if (dir.empty()) return {};
  char name[48];
  std::snprintf(name, sizeof(name), "tuning-%016llx-v1.txt",
                static_cast<unsigned long long>(fnv1a(device_identity(device))));
  return fs::path(dir) / name;
}

// The device's map, read from its file on first use (caller holds the store's mutex).
std::unordered_map<std::string, int>& device_map(Store& s, int device) {
  auto found = s.choices.find(device);
  if (found != s.choices.end()) return found->second;
  auto& map = s.choices[device];
  const fs::path file = file_of(device);
  if (file.empty()) return map;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    int choice = 0;
    if (!(fields >> choice) || fields.get() != ' ') continue;
    std::string key;
    std::getline(fields, key);
    if (!key.empty()) map[key] = choice;  // a later line wins
  }
  return map;
}

}  // namespace

bool tuning_enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_tuning_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }

std::optional<int> tuned_choice(int device, const std::string& key) {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto& map = device_map(s, device);
  const auto found = map.find(key);
  if (found == map.end()) return std::nullopt;
  return found->second;
}

void record_tuned_choice(int device, const std::string& key, int choice) {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  device_map(s, device)[key] = choice;
  const fs::path file = file_of(device);
  if (file.empty() || key.find('\n') != std::string::npos) return;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  // One short line in append mode: concurrent processes interleave whole lines in practice, and
  // a damaged line is skipped when read.
  std::ofstream out(file, std::ios::app);
  if (out) out << choice << ' ' << key << '\n';
}

void clear_tuned_choices() {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.choices.clear();
}

std::string tuning_file(int device) { return file_of(device).string(); }

}  // namespace torch_ocl
