#include "models/device_yaml.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "models/capture_device.h"
#include "sim/error.h"
#include "sim/files.h"
#include "sim/model_registry.h"

#ifndef DVFSIM_DEFAULT_DEVICE_DIR
#define DVFSIM_DEFAULT_DEVICE_DIR "models/devices"
#endif

namespace dvfsim {
namespace {

constexpr const char* kSourcePrefixes[] = {"http://",   "https://",    "measured:",   "read:",
                                           "inferred:", "assumption:", "calibrated:", "file:"};

class Reader {
 public:
  Reader(std::string path, LoadedDevice& out) : path_(std::move(path)), out_(out) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what,
                         const YAML::Node* at = nullptr) const {
    std::string where;
    if (at && at->Mark().line >= 0) where = fmt::format(":{}", at->Mark().line + 1);
    throw InputError(fmt::format("{}{}: field '{}': {}", path_, where, field, what));
  }

  YAML::Node child(const YAML::Node& parent, const std::string& field, const std::string& key) {
    YAML::Node n = parent[key];
    if (!n) fail(join(field, key), "missing", &parent);
    return n;
  }

  static std::string join(const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "." + b;
  }

  void only_keys(const YAML::Node& n, const std::string& field, std::set<std::string> allowed) {
    if (!n.IsMap()) fail(field, "expected a mapping", &n);
    for (const auto& kv : n) {
      const auto key = kv.first.as<std::string>();
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(join(field, key), fmt::format("unknown key (expected one of: {})", list), &n);
      }
    }
  }

  std::string source_of(const YAML::Node& n, const std::string& field) {
    YAML::Node s = n["source"];
    if (!s || !s.IsScalar() || s.as<std::string>().empty())
      fail(field,
           "a number without a source (add `source:` with a URL, a measurement file, or "
           "`assumption: why`)",
           &n);
    const auto src = s.as<std::string>();
    bool ok = false;
    for (const char* p : kSourcePrefixes) ok = ok || src.rfind(p, 0) == 0;
    if (!ok)
      fail(join(field, "source"),
           fmt::format("'{}' must start with one of http(s)://, measured:, read:, inferred:, "
                       "assumption:, calibrated:, file:",
                       src),
           &n);
    return src;
  }

  template <class T>
  T scalar(const YAML::Node& n, const std::string& field) {
    if (!n.IsScalar()) fail(field, "expected a number", &n);
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      fail(field, fmt::format("'{}' is not a valid number", n.Scalar()), &n);
    }
  }

  // A `{value: X, source: S}` mapping.
  double number(const YAML::Node& parent, const std::string& field, const std::string& key,
                double lo, double hi) {
    const std::string f = join(field, key);
    YAML::Node n = child(parent, field, key);
    if (!n.IsMap()) fail(f, "expected {value: ..., source: ...}", &n);
    only_keys(n, f, {"value", "source", "note"});
    const double v = scalar<double>(child(n, f, "value"), join(f, "value"));
    if (!(v >= lo && v <= hi)) fail(f, fmt::format("{} is outside [{}, {}]", v, lo, hi), &n);
    out_.sources.push_back({f, n["value"].Scalar(), source_of(n, f)});
    return v;
  }

  std::int32_t mhz(const YAML::Node& n, const std::string& field) {
    const auto v = scalar<std::int32_t>(n, field);
    if (v <= 0 || v > 100000) fail(field, fmt::format("{} MHz is not a plausible clock", v), &n);
    return v;
  }

  // `{min, max, step, source}` or `{values: [...], source}`.
  std::vector<std::int32_t> clock_list(const YAML::Node& parent, const std::string& field,
                                       const std::string& key) {
    const std::string f = join(field, key);
    YAML::Node n = child(parent, field, key);
    only_keys(n, f, {"min", "max", "step", "values", "source", "note"});
    std::vector<std::int32_t> out;
    if (n["values"]) {
      for (const auto& v : n["values"]) out.push_back(mhz(v, join(f, "values")));
    } else {
      const auto lo = mhz(child(n, f, "min"), join(f, "min"));
      const auto hi = mhz(child(n, f, "max"), join(f, "max"));
      const auto step = mhz(child(n, f, "step"), join(f, "step"));
      if (hi < lo) fail(f, "max below min", &n);
      for (auto v = lo; v <= hi; v += step) out.push_back(v);
      if (out.back() != hi) fail(f, "max is not min + k*step", &n);
    }
    if (out.empty()) fail(f, "no clocks", &n);
    for (std::size_t i = 1; i < out.size(); ++i)
      if (out[i] <= out[i - 1]) fail(f, "clocks must ascend without repeats", &n);
    out_.sources.push_back({f,
                            fmt::format("{}..{} ({} values)", out.front(), out.back(), out.size()),
                            source_of(n, f)});
    return out;
  }

  LatencyDistribution latency(const YAML::Node& parent, const std::string& field,
                              const std::string& key) {
    const std::string f = join(field, key);
    YAML::Node n = child(parent, field, key);
    only_keys(
        n, f,
        {"distribution", "value_us", "median_us", "min_us", "max_us", "sigma", "source", "note"});
    LatencyDistribution d;
    const auto kind = child(n, f, "distribution").as<std::string>();
    auto get = [&](const char* k) {
      const double v = scalar<double>(child(n, f, k), join(f, k));
      if (v < 0) fail(join(f, k), "must be >= 0", &n);
      return v;
    };
    if (kind == "fixed") {
      d.kind = LatencyDistribution::Kind::fixed;
      d.value_us = get("value_us");
    } else if (kind == "uniform") {
      d.kind = LatencyDistribution::Kind::uniform;
      d.min_us = get("min_us");
      d.max_us = get("max_us");
      if (d.max_us < d.min_us) fail(f, "max_us below min_us", &n);
    } else if (kind == "lognormal") {
      d.kind = LatencyDistribution::Kind::lognormal;
      d.value_us = get("median_us");
      d.sigma = get("sigma");
      d.min_us = get("min_us");
      d.max_us = get("max_us");
      if (d.max_us < d.min_us) fail(f, "max_us below min_us", &n);
    } else {
      fail(join(f, "distribution"), fmt::format("'{}' is not fixed, uniform or lognormal", kind),
           &n);
    }
    out_.sources.push_back({f, kind, source_of(n, f)});
    return d;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  LoadedDevice& out_;
};

// A model's section: `model: NAME` picks a registered model of the kind; the
// other keys are the ones that model declares (each {value, source} within
// its range) plus `device_keys`, which the caller reads itself.
ModelChoice model_section(Reader& r, const YAML::Node& n, ModelKind kind,
                          const std::set<std::string>& device_keys) {
  const std::string f = model_kind_name(kind);
  if (!n.IsMap()) r.fail(f, "expected a mapping", &n);
  const YAML::Node m = n["model"];
  std::string known;
  for (const ModelInfo* i : all_models(kind)) known += (known.empty() ? "" : ", ") + i->name;
  if (!m || !m.IsScalar() || m.Scalar().empty())
    r.fail(Reader::join(f, "model"),
           fmt::format("missing (the {} model that reads this section; known: {})", f, known), &n);
  const ModelInfo* info = nullptr;
  for (const ModelInfo* i : all_models(kind))
    if (i->name == m.Scalar()) info = i;
  if (!info)
    r.fail(Reader::join(f, "model"),
           fmt::format("unknown {} model '{}' (known: {})", f, m.Scalar(), known), &m);
  std::set<std::string> allowed = device_keys;
  allowed.insert("model");
  for (const auto& p : info->params) allowed.insert(p.name);
  r.only_keys(n, f, allowed);
  std::map<std::string, std::string> values;
  for (const auto& p : info->params) {
    if (!n[p.name]) {
      if (p.required)
        r.fail(Reader::join(f, p.name),
               fmt::format("missing ({}; the {} model needs it)", p.description, info->name), &n);
      continue;
    }
    // Kept in the shortest form that reads back to the same double.
    values[p.name] = fmt::format("{}", r.number(n, f, p.name, p.min, p.max));
  }
  return {info->name,
          Params(fmt::format("{}: {} model {}", r.path(), f, info->name), std::move(values))};
}

void parse(const YAML::Node& root, Reader& r, Device& d) {
  r.only_keys(root, "",
              {"name", "display_name", "nvml_name", "nvml_names", "notes", "clocks", "voltage",
               "compute", "memory", "latency", "power", "governor", "switch_latency"});
  auto str = [&](const char* key) {
    YAML::Node n = r.child(root, "", key);
    if (!n.IsScalar() || n.as<std::string>().empty())
      r.fail(key, "expected a non-empty string", &n);
    return n.as<std::string>();
  };
  d.name = str("name");
  d.display_name = str("display_name");
  // nvml_names: every name the driver reports for this GPU (capture-device
  // resolution, models/capture_device.h); the first is the NVML name.
  if (const YAML::Node names = root["nvml_names"]) {
    if (!names.IsSequence() || names.size() == 0 || !names[0].IsScalar())
      r.fail("nvml_names", "expected a non-empty list of driver names", &names);
    d.nvml_name = names[0].as<std::string>();
  } else {
    d.nvml_name = str("nvml_name");
  }

  const YAML::Node clocks = r.child(root, "", "clocks");
  r.only_keys(clocks, "clocks",
              {"core_mhz", "memory_mhz", "memory_core_limits", "default", "deep_idle_core_mhz"});
  d.core_clocks_mhz = r.clock_list(clocks, "clocks", "core_mhz");
  d.memory_clocks_mhz = r.clock_list(clocks, "clocks", "memory_mhz");
  if (YAML::Node lim = clocks["memory_core_limits"]) {
    if (!lim.IsSequence()) r.fail("clocks.memory_core_limits", "expected a list", &lim);
    for (std::size_t i = 0; i < lim.size(); ++i) {
      const std::string f = fmt::format("clocks.memory_core_limits[{}]", i);
      const YAML::Node e = lim[i];
      r.only_keys(e, f, {"memory_mhz", "max_core_mhz", "source", "note"});
      Device::MemoryCoreLimit l{r.mhz(r.child(e, f, "memory_mhz"), f + ".memory_mhz"),
                                r.mhz(r.child(e, f, "max_core_mhz"), f + ".max_core_mhz")};
      if (d.memory_index(l.memory_mhz) < 0)
        r.fail(f + ".memory_mhz", fmt::format("{} MHz is not in clocks.memory_mhz", l.memory_mhz),
               &e);
      r.source_of(e, f);
      d.memory_core_limits.push_back(l);
    }
  }
  {
    const YAML::Node def = r.child(clocks, "clocks", "default");
    r.only_keys(def, "clocks.default", {"core_mhz", "memory_mhz", "source", "note"});
    d.default_core_mhz =
        r.mhz(r.child(def, "clocks.default", "core_mhz"), "clocks.default.core_mhz");
    d.default_memory_mhz =
        r.mhz(r.child(def, "clocks.default", "memory_mhz"), "clocks.default.memory_mhz");
    r.source_of(def, "clocks.default");
    const std::string why = d.why_unsupported(d.default_core_mhz, d.default_memory_mhz);
    if (!why.empty()) r.fail("clocks.default", why, &def);
  }
  d.deep_idle_core_mhz =
      static_cast<std::int32_t>(r.number(clocks, "clocks", "deep_idle_core_mhz", 1, 100000));

  if (root["voltage"]) {
    const YAML::Node v = root["voltage"];
    r.only_keys(v, "voltage", {"points", "source", "note"});
    const YAML::Node pts = r.child(v, "voltage", "points");
    if (!pts.IsSequence() || pts.size() < 1)
      r.fail("voltage.points", "expected [[MHz, V], ...]", &pts);
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const std::string f = fmt::format("voltage.points[{}]", i);
      if (!pts[i].IsSequence() || pts[i].size() != 2) r.fail(f, "expected [MHz, V]", &pts);
      VoltagePoint p{r.mhz(pts[i][0], f), r.scalar<double>(pts[i][1], f)};
      if (p.volts <= 0.3 || p.volts > 2.0)
        r.fail(f, fmt::format("{} V is not plausible", p.volts), &pts);
      if (!d.voltage_curve.empty()) {
        if (p.core_mhz <= d.voltage_curve.back().core_mhz) r.fail(f, "clocks must ascend", &pts);
        if (p.volts < d.voltage_curve.back().volts)
          r.fail(f, "voltage must not fall as the clock rises (V/F curve not monotone)", &pts);
      }
      d.voltage_curve.push_back(p);
    }
    r.source_of(v, "voltage");
  }

  const YAML::Node c = r.child(root, "", "compute");
  r.only_keys(
      c, "compute",
      {"sm_count", "tensor_flops_per_clock_per_sm", "fp32_flops_per_clock_per_sm",
       "warp_schedulers_per_sm", "kernel_gap_ns", "graph_kernel_gap_ns", "max_threads_per_sm",
       "max_blocks_per_sm", "registers_per_sm", "shared_memory_per_sm"});
  d.sm_count = static_cast<std::int32_t>(r.number(c, "compute", "sm_count", 1, 10000));
  d.tensor_flops_per_clock_per_sm = r.number(c, "compute", "tensor_flops_per_clock_per_sm", 1, 1e6);
  d.fp32_flops_per_clock_per_sm = r.number(c, "compute", "fp32_flops_per_clock_per_sm", 1, 1e6);
  d.warp_schedulers_per_sm =
      static_cast<std::int32_t>(r.number(c, "compute", "warp_schedulers_per_sm", 1, 64));
  // Optional: the GPU's idle time between consecutive kernels of a stream
  // (0, not modelled, when the file gives none; docs/validation.md, "Gaps
  // between kernels on the GPU").
  if (c["kernel_gap_ns"]) d.kernel_gap_ns = r.number(c, "compute", "kernel_gap_ns", 0, 1e6);
  if (c["graph_kernel_gap_ns"])
    d.graph_kernel_gap_ns = r.number(c, "compute", "graph_kernel_gap_ns", 0, 1e6);
  // Optional, all four or none: the SM's occupancy limits (resident_warp_share).
  {
    static constexpr const char* kLimits[] = {"max_threads_per_sm", "max_blocks_per_sm",
                                              "registers_per_sm", "shared_memory_per_sm"};
    int given = 0;
    for (const char* k : kLimits) given += c[k] ? 1 : 0;
    if (given > 0) {
      for (const char* k : kLimits)
        if (!c[k])
          r.fail(fmt::format("compute.{}", k),
                 "missing: the SM's occupancy limits come together (max_threads_per_sm, "
                 "max_blocks_per_sm, registers_per_sm, shared_memory_per_sm)",
                 &c);
      const auto whole = [&](const char* k, double lo, double hi) {
        const double v = r.number(c, "compute", k, lo, hi);
        if (v != std::floor(v)) {
          const YAML::Node at = c[k];
          r.fail(fmt::format("compute.{}", k), fmt::format("{} is not a whole number", v), &at);
        }
        return static_cast<std::int32_t>(v);
      };
      d.max_threads_per_sm = whole("max_threads_per_sm", 32, 65536);
      d.max_blocks_per_sm = whole("max_blocks_per_sm", 1, 1024);
      d.registers_per_sm = whole("registers_per_sm", 1024, 16777216);
      d.shared_memory_per_sm = whole("shared_memory_per_sm", 1024, 1 << 30);
    }
  }

  const YAML::Node m = r.child(root, "", "memory");
  r.only_keys(m, "memory", {"bandwidth_gbs", "bandwidth_memory_mhz"});
  d.dram_bandwidth_gbs = r.number(m, "memory", "bandwidth_gbs", 1, 1e6);
  d.dram_bandwidth_memory_mhz =
      static_cast<std::int32_t>(r.number(m, "memory", "bandwidth_memory_mhz", 1, 100000));

  d.latency = model_section(r, r.child(root, "", "latency"), ModelKind::latency, {});
  // Optional together: a device file without power, governor and
  // switch_latency describes a capture device only (make_power_model says so
  // when it is simulated); with `power:` the other two are required.
  if (const YAML::Node p = root["power"]) {
    for (const char* key : {"governor", "switch_latency"})
      if (!root[key]) r.fail(key, "missing (a device with a power model is simulated)", &root);
    d.power = model_section(r, p, ModelKind::power, {"limit_w", "limit_min_w", "limit_max_w"});
    d.power_limit_w = r.number(p, "power", "limit_w", 1, 1e5);
    // Optional together: the range of limits the board accepts.
    if (p["limit_min_w"] || p["limit_max_w"]) {
      d.power_limit_min_w = r.number(p, "power", "limit_min_w", 1, 1e5);
      d.power_limit_max_w = r.number(p, "power", "limit_max_w", 1, 1e5);
      if (!(d.power_limit_min_w <= d.power_limit_w && d.power_limit_w <= d.power_limit_max_w))
        r.fail("power.limit_w",
               fmt::format("{:g} W is outside power.limit_min_w..limit_max_w ({:g}..{:g} W)",
                           d.power_limit_w, d.power_limit_min_w, d.power_limit_max_w),
               &p);
    }
    if (d.voltage_curve.empty())
      r.fail("voltage", "missing (the power model needs the V/F curve)", &root);
  }
  if (const YAML::Node g = root["governor"]) {
    if (!root["power"]) r.fail("power", "missing (the governor caps the board power)", &root);
    d.governor = model_section(r, g, ModelKind::governor, {});
  }

  if (!root["switch_latency"]) return;
  const YAML::Node s = r.child(root, "", "switch_latency");
  r.only_keys(s, "switch_latency", {"core", "memory", "memory_stall_us"});
  d.core_switch = r.latency(s, "switch_latency", "core");
  d.memory_switch = r.latency(s, "switch_latency", "memory");
  d.memory_switch_stall_us = r.number(s, "switch_latency", "memory_stall_us", 0, 1e7);
}

}  // namespace

LoadedDevice load_device_yaml(const std::string& yaml_text, const std::string& path) {
  LoadedDevice out;
  Reader r(path, out);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root || !root.IsMap()) throw InputError(fmt::format("{}: expected a YAML mapping", path));
  if (root["role"] && root["role"].IsScalar() && root["role"].Scalar() == "capture")
    throw InputError(capture_only_as_target_message(path));
  try {
    parse(root, r, out.device);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
  out.device.source_path = path;
  return out;
}

LoadedDevice load_device_file(const std::string& path) {
  return load_device_yaml(read_file(path), path);
}

std::string device_directory() {
  if (const char* env = std::getenv("DVFSIM_DEVICES"); env && *env) return env;
  return DVFSIM_DEFAULT_DEVICE_DIR;
}

std::vector<std::string> list_devices() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(device_directory(), ec))
    if (e.path().extension() == ".yaml" && !is_capture_only_file(e.path().string()))
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

LoadedDevice load_device(const std::string& name_or_path) {
  if (is_device_path(name_or_path)) return load_device_file(name_or_path);
  const auto path = std::filesystem::path(device_directory()) / (name_or_path + ".yaml");
  if (!std::filesystem::exists(path)) {
    std::string known;
    for (const auto& n : list_devices()) known += (known.empty() ? "" : ", ") + n;
    throw InputError(fmt::format("unknown device '{}' (known: {}; or give a path to a YAML file)",
                                 name_or_path, known));
  }
  return load_device_file(path.string());
}

}  // namespace dvfsim
