#pragma once
// The model registry: every latency, power and governor model registers itself
// by name with a description and the YAML keys it reads from its section of a
// device file, the way policies do (policies/registry.h). A device file picks
// a model per section (`power: {model: cmos, ...}`); the loader checks the
// section's keys against the model's declaration (each a {value, source}
// number in its declared range) and the runner builds the models by name.
// Adding a model means its own files plus one entry in models/CMakeLists.txt;
// adding a parameter (a power term) means its own declaration and the device
// files that give the number.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sim/device.h"
#include "sim/models.h"
#include "sim/params.h"

namespace dvfsim {

enum class ModelKind : std::uint8_t { latency, power, governor };
// The device-file section of the kind: "latency", "power", "governor".
const char* model_kind_name(ModelKind k);

// A number a model reads from its device-file section.
struct ModelParamSpec {
  std::string name;
  bool required = true;  // optional keys are simply absent (the model says what that means)
  double min = 0.0;      // accepted range, inclusive
  double max = std::numeric_limits<double>::max();
  std::string description;  // with units
};

// Run-time settings a model may need beyond the device file.
struct ModelOptions {
  // Bit-toggle activity of the data relative to random data (1: random, the
  // calibration's data; 0: constant data). Power models with data-dependent
  // terms scale them; others ignore it.
  double data_activity = 1.0;
  // Whether tensor-core work on operands a ReLU zeroed draws the device's
  // tensor_power_zeroed1/2 (true, the default) or random data's power.
  bool zeroed_operands = true;
  // Whether batch-norm passes draw the busy term by the warps they keep on
  // each SM (true, the default; resident_warp_share, models/roofline_overlap.h)
  // or as if their blocks filled the SMs they occupy.
  bool resident_warps = true;
};

struct ModelInfo {
  ModelKind kind = ModelKind::power;
  std::string name;
  std::string description;
  std::vector<ModelParamSpec> params;
  // Exactly the one of these that matches `kind` is set. They read the
  // device's ModelChoice of their kind (Device::latency/power/governor).
  std::function<std::unique_ptr<LatencyModel>(const Device&, const ModelOptions&)> make_latency;
  std::function<std::unique_ptr<PowerModel>(const Device&, const ModelOptions&)> make_power;
  std::function<std::unique_ptr<Governor>(const Device&, const PowerModel&)> make_governor;
};

// Registers at static-initialisation time; returns true (for a static bool).
bool register_model(ModelInfo info);
// Every registered model of a kind, sorted by name.
std::vector<const ModelInfo*> all_models(ModelKind kind);
// Throws InputError listing the known names of the kind when `name` is unknown.
const ModelInfo& find_model(ModelKind kind, const std::string& name);

// The device's choice of a kind (Device::latency, ::power, ::governor).
const ModelChoice& model_choice(const Device& d, ModelKind kind);
// The device's choice of `kind`, checked to be `model`: what a model calls to
// read its own parameters from a device (InputError naming the device file
// when the device has no such section or uses another model).
const Params& model_params(const Device& d, ModelKind kind, const std::string& model);

// Builds the device's models by the names its file gives (InputError when the
// device has no such section, e.g. a device file meant for capture only).
std::unique_ptr<LatencyModel> make_latency_model(const Device& d, const ModelOptions& o = {});
std::unique_ptr<PowerModel> make_power_model(const Device& d, const ModelOptions& o = {});
std::unique_ptr<Governor> make_governor(const Device& d, const PowerModel& power);

}  // namespace dvfsim
