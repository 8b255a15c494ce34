#pragma once
// Capture devices: the GPU a trace was captured on. Any device file serves,
// a simulation target or a capture-only file (`role: capture`: the peaks,
// bandwidth, SM count and clocks a trace's work is measured against, no
// power or governor model). The driver's device name in a trace resolves
// through the files' `nvml_names` (docs/devices.md, "Capture devices").
#include <string>
#include <string_view>
#include <vector>

#include "models/device_yaml.h"

namespace dvfsim {

// The one rule for --device and --capture-device: a path when it contains a
// '/' or ends in ".yaml" or ".yml"; else the name of a shipped device file.
bool is_device_path(std::string_view name_or_path);

// Whether the YAML file at `path` is a capture-only device (`role: capture`).
bool is_capture_only_file(const std::string& path);

// Shipped device files (targets and capture-only), by name, sorted.
std::vector<std::string> list_capture_devices();

// The shipped device whose `nvml_names` lists `driver_name` (compared
// ignoring case and repeated blanks); "" when none does.
std::string device_for_driver_name(std::string_view driver_name);

// Parses a capture-only device file (`role: capture`); `path` names it in
// errors. Every number needs a source; unknown keys are refused.
LoadedDevice load_capture_yaml(const std::string& yaml_text, const std::string& path);

// Loads the capture device `name_or_path`: a shipped name or a path, a
// capture-only file or a simulation target.
LoadedDevice load_capture_device(const std::string& name_or_path);

// Message for --device given a capture-only file: what it is and what to use.
std::string capture_only_as_target_message(const std::string& path);

}  // namespace dvfsim
