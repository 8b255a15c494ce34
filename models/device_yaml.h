#pragma once
// Loads a device model from YAML (models/devices/*.yaml). Every number in the
// file carries a `source`; a number without one, an unknown key, a clock list
// that does not ascend or a non-monotone voltage curve is rejected with an
// InputError naming the file and the field. The latency:, power: and
// governor: sections name their model (`model: cmos`); their keys are checked
// against that model's declaration in the model registry (sim/model_registry.h).
#include <string>
#include <vector>

#include "sim/device.h"

namespace dvfsim {

// A number's provenance, as written in the YAML.
struct SourcedField {
  std::string field;   // dotted path, e.g. "power.limit_w"
  std::string value;   // as written
  std::string source;  // e.g. "measured: ...", "https://...", "assumption: ..."
};

struct LoadedDevice {
  Device device;
  std::vector<SourcedField> sources;  // every sourced number, in file order
};

LoadedDevice load_device_file(const std::string& path);
// Parses YAML text; `path` names it in errors.
LoadedDevice load_device_yaml(const std::string& yaml_text, const std::string& path);

// Directory holding the shipped device files: $DVFSIM_DEVICES if set, else the
// source tree's models/devices.
std::string device_directory();
// The shipped device names, sorted.
std::vector<std::string> list_devices();
// Loads a device by name (a shipped one) or by path (contains '/' or ends in .yaml).
LoadedDevice load_device(const std::string& name_or_path);

}  // namespace dvfsim
