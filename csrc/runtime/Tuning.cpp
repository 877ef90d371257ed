// The tuning store of Tuning.h.
#include "runtime/Tuning.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "runtime/Program.h"

namespace torch_ocl {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_enabled{false};

struct Store {
  std::mutex mutex;
  // device -> (key -> value); a device's map exists once its file was read.
  std::unordered_map<int, std::unordered_map<std::string, std::string>> values;
};

Store& store() {
  static Store* s = new Store();  // never destroyed: usable during process exit
  return *s;
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The checksum field of a line: covers the value, the key and the separator between them.
std::string checksum(const std::string& value, const std::string& key) {
  return hex16(fnv1a(value + '\t' + key));
}

fs::path file_of(int device) {
  const std::string dir = cache_directory();
  if (dir.empty()) return {};
  return fs::path(dir) / tuning_file_name(device_identity(device));
}

// "<value>\t<key>\t<checksum>" -> (key, value); false for anything else.
bool parse_line(const std::string& line, std::string* key, std::string* value) {
  const size_t t1 = line.find('\t');
  if (t1 == std::string::npos || t1 == 0) return false;
  const size_t t2 = line.find('\t', t1 + 1);
  if (t2 == std::string::npos || t2 == t1 + 1) return false;
  if (line.find('\t', t2 + 1) != std::string::npos) return false;
  std::string v = line.substr(0, t1), k = line.substr(t1 + 1, t2 - t1 - 1);
  if (line.substr(t2 + 1) != checksum(v, k)) return false;
  *key = std::move(k);
  *value = std::move(v);
  return true;
}

// The device's map, read from its file on first use (caller holds the store's mutex).
std::unordered_map<std::string, std::string>& device_map(Store& s, int device) {
  auto found = s.values.find(device);
  if (found != s.values.end()) return found->second;
  auto& map = s.values[device];
  const fs::path file = file_of(device);
  if (file.empty()) return map;
  std::ifstream in(file, std::ios::binary);
  std::string line, key, value;
  while (std::getline(in, line)) {
    if (parse_line(line, &key, &value)) map[key] = value;  // a later line wins
  }
  return map;
}

bool plain(const std::string& s) {
  return !s.empty() && s.find('\t') == std::string::npos && s.find('\n') == std::string::npos &&
         s.find('\r') == std::string::npos;
}

}  // namespace

bool tuning_enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_tuning_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }

std::optional<std::string> tuned_value(int device, const std::string& key) {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto& map = device_map(s, device);
  const auto found = map.find(key);
  if (found == map.end()) return std::nullopt;
  return found->second;
}

void record_tuned_value(int device, const std::string& key, const std::string& value) {
  if (!plain(key) || !plain(value)) return;
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  device_map(s, device)[key] = value;
  const fs::path file = file_of(device);
  if (file.empty()) return;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  // The whole line in one write in append mode: concurrent writers add whole lines (O_APPEND), and
  // a line damaged anyway fails its checksum when read.
  const std::string line = value + '\t' + key + '\t' + checksum(value, key) + '\n';
  if (std::FILE* f = std::fopen(file.string().c_str(), "ab")) {
    std::setvbuf(f, nullptr, _IOFBF, line.size() + 1);
    std::fwrite(line.data(), 1, line.size(), f);
    std::fclose(f);
  }
}

std::optional<int> tuned_choice(int device, const std::string& key) {
  const auto v = tuned_value(device, key);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const long c = std::strtol(v->c_str(), &end, 10);
  if (*end != '\0') return std::nullopt;
  return static_cast<int>(c);
}

void record_tuned_choice(int device, const std::string& key, int choice) {
  record_tuned_value(device, key, std::to_string(choice));
}

void clear_tuned_choices() {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.values.clear();
}

std::string tuning_file(int device) { return file_of(device).string(); }

std::string tuning_file_name(const std::string& identity) {
  return "tuning-" + hex16(fnv1a(identity)) + "-v2.txt";
}

}  // namespace torch_ocl
