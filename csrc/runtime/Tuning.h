// Choices made by timing candidates (an autotuner's results), per device: kept in memory and on
// disk beside the program cache, one text file per device (tuning-<hash>-v2.txt, the hash of the
// device's identity: name, vendor, driver and platform versions, and the compiler settings that
// change binaries; another driver gets another file). One line per entry,
// "<value>\t<key>\t<checksum>": append-only, a later line wins, and a line whose checksum does not
// match (truncated by a crash, interleaved by concurrent writers, edited) is ignored, so any doubt
// means "not tuned" and the caller decides again. Keys and values mean what their callers define
// (runtime/ knows no op names); neither holds a tab or a newline. Thread-safe.
#pragma once

#include <optional>
#include <string>

namespace torch_ocl {

// Whether callers may time candidates for keys without a recorded choice (off by default; the
// Python side sets it: torch.ocl.conv_benchmark / torch.ocl.tuning_enabled).
bool tuning_enabled();
void set_tuning_enabled(bool enabled);

// The recorded value for `key` on `device` (read from disk on the device's first lookup).
std::optional<std::string> tuned_value(int device, const std::string& key);
// Records a value in memory and appends it to the device's file (errors writing are ignored:
// the choice is then made again in a later process).
void record_tuned_value(int device, const std::string& key, const std::string& value);

// Integer choices (an algorithm's number) through the same store: a value that is not an integer
// counts as no choice.
std::optional<int> tuned_choice(int device, const std::string& key);
void record_tuned_choice(int device, const std::string& key, int choice);

// Forgets the in-memory choices (a test hook; the files stay).
void clear_tuned_choices();
// The device's tuning file ("" when the disk cache is off).
std::string tuning_file(int device);
// The file name a device of this identity string uses (a test hook: another driver version gives
// another identity, so another file).
std::string tuning_file_name(const std::string& identity);

}  // namespace torch_ocl
