// Choices made by timing candidates (an autotuner's results), per device: kept in memory and on
// disk beside the program cache, one text file per device (tuning-<hash>-v1.txt, the hash of the
// device's name, vendor, driver and platform versions), one "<choice> <key>" line per entry; a
// line that does not parse is ignored. Keys and choices mean what their callers define (runtime/
// knows no op names); a key holds no newline. Thread-safe.
#pragma once

#include <optional>
#include <string>

namespace torch_ocl {

// Whether callers may time candidates for keys without a recorded choice (off by default; the
// Python side sets it, e.g. torch.ocl.conv_benchmark).
bool tuning_enabled();
void set_tuning_enabled(bool enabled);

// The recorded choice for `key` on `device` (read from disk on the device's first lookup).
std::optional<int> tuned_choice(int device, const std::string& key);
// Records a choice in memory and appends it to the device's file (errors writing are ignored:
// the choice is then made again in a later process).
void record_tuned_choice(int device, const std::string& key, int choice);
// Forgets the in-memory choices (a test hook; the files stay).
void clear_tuned_choices();
// The device's tuning file ("" when the disk cache is off).
std::string tuning_file(int device);

}  // namespace torch_ocl
