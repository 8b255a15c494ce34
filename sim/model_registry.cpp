#include "sim/model_registry.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "sim/error.h"

namespace dvfsim {
namespace {
std::map<std::pair<ModelKind, std::string>, ModelInfo>& registry() {
  static std::map<std::pair<ModelKind, std::string>, ModelInfo> r;
  return r;
}

std::string device_label(const Device& d) {
  return d.source_path.empty() ? fmt::format("device {}", d.name) : d.source_path;
}
}  // namespace

const char* model_kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::latency:
      return "latency";
    case ModelKind::power:
      return "power";
    case ModelKind::governor:
      return "governor";
  }
  return "?";
}

bool register_model(ModelInfo info) {
  auto key = std::make_pair(info.kind, info.name);
  registry().emplace(std::move(key), std::move(info));
  return true;
}

std::vector<const ModelInfo*> all_models(ModelKind kind) {
  std::vector<const ModelInfo*> out;
  for (const auto& [key, info] : registry())
    if (key.first == kind) out.push_back(&info);
  return out;
}

const ModelInfo& find_model(ModelKind kind, const std::string& name) {
  auto it = registry().find({kind, name});
  if (it == registry().end()) {
    std::string known;
    for (const ModelInfo* m : all_models(kind)) known += (known.empty() ? "" : ", ") + m->name;
    throw InputError(fmt::format("unknown {} model '{}' (known: {})", model_kind_name(kind), name,
                                 known.empty() ? "none" : known));
  }
  return it->second;
}

const ModelChoice& model_choice(const Device& d, ModelKind kind) {
  switch (kind) {
    case ModelKind::latency:
      return d.latency;
    case ModelKind::power:
      return d.power;
    case ModelKind::governor:
      return d.governor;
  }
  return d.power;
}

const Params& model_params(const Device& d, ModelKind kind, const std::string& model) {
  const ModelChoice& c = model_choice(d, kind);
  if (!c.given())
    throw InputError(fmt::format(
        "{}: no `{}:` section, so {} cannot be simulated with it (a device file for capture "
        "only?); the {} model needs one",
        device_label(d), model_kind_name(kind), d.name, model));
  if (c.model != model)
    throw InputError(fmt::format("{}: field '{}.model': the device uses '{}', not '{}'",
                                 device_label(d), model_kind_name(kind), c.model, model));
  return c.params;
}

namespace {
const ModelInfo& chosen(const Device& d, ModelKind kind) {
  const ModelChoice& c = model_choice(d, kind);
  if (!c.given())
    throw InputError(
        fmt::format("{}: no `{}:` section, so {} cannot be simulated (a device file for capture "
                    "only?)",
                    device_label(d), model_kind_name(kind), d.name));
  return find_model(kind, c.model);
}
}  // namespace

std::unique_ptr<LatencyModel> make_latency_model(const Device& d, const ModelOptions& o) {
  return chosen(d, ModelKind::latency).make_latency(d, o);
}
std::unique_ptr<PowerModel> make_power_model(const Device& d, const ModelOptions& o) {
  return chosen(d, ModelKind::power).make_power(d, o);
}
std::unique_ptr<Governor> make_governor(const Device& d, const PowerModel& power) {
  return chosen(d, ModelKind::governor).make_governor(d, power);
}

}  // namespace dvfsim
