#include "models/capture_device.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "sim/error.h"

namespace dvfsim {
namespace {

constexpr const char* kSourcePrefixes[] = {"http://",   "https://",    "measured:",   "read:",
                                           "inferred:", "assumption:", "calibrated:", "file:"};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_yaml_name(const std::filesystem::path& p) {
  return p.extension() == ".yaml" || p.extension() == ".yml";
}

std::string normalise(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open device file", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

YAML::Node parse_yaml(const std::string& text, const std::string& path) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", path, e.mark.line + 1, e.msg));
  }
}

bool capture_role(const YAML::Node& root) {
  return root.IsMap() && root["role"] && root["role"].IsScalar() &&
         root["role"].Scalar() == "capture";
}

// Field access that names the file, line and field in every error.
class Fields {
 public:
  Fields(const std::string& path, LoadedDevice& out) : path_(path), out_(out) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what,
                         const YAML::Node& at) const {
    const std::string where = at.Mark().line >= 0 ? fmt::format(":{}", at.Mark().line + 1) : "";
    throw InputError(fmt::format("{}{}: field '{}': {}", path_, where, field, what));
  }

  void only_keys(const YAML::Node& n, const std::string& field,
                 const std::set<std::string>& allowed) const {
    if (!n.IsMap()) fail(field, "expected a mapping", n);
    for (const auto& kv : n) {
      const auto key = kv.first.as<std::string>();
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(field.empty() ? key : field + "." + key,
             fmt::format("unknown key (expected one of: {})", list), n);
      }
    }
  }

  std::string source(const YAML::Node& n, const std::string& field) const {
    const YAML::Node s = n["source"];
    if (!s || !s.IsScalar() || s.Scalar().empty())
      fail(field,
           "a number without a source (add `source:` with a URL, a datasheet, or "
           "`assumption: why`)",
           n);
    bool ok = false;
    for (const char* p : kSourcePrefixes) ok = ok || s.Scalar().rfind(p, 0) == 0;
    if (!ok)
      fail(field + ".source",
           fmt::format("'{}' must start with one of http(s)://, measured:, read:, inferred:, "
                       "assumption:, calibrated:, file:",
                       s.Scalar()),
           n);
    return s.Scalar();
  }

  double value(const YAML::Node& n, const std::string& field, const std::string& key, double lo,
               double hi) const {
    const YAML::Node v = n[key];
    if (!v) fail(field + "." + key, "missing", n);
    if (!v.IsScalar()) fail(field + "." + key, "expected a number", v);
    double x = 0;
    try {
      x = v.as<double>();
    } catch (const YAML::Exception&) {
      fail(field + "." + key, fmt::format("'{}' is not a valid number", v.Scalar()), v);
    }
    if (!(x >= lo && x <= hi))
      fail(field + "." + key, fmt::format("{} is outside [{}, {}]", x, lo, hi), v);
    return x;
  }

  // `{value: X, source: S}` under parent[key].
  double number(const YAML::Node& parent, const std::string& field, const std::string& key,
                double lo, double hi) {
    const std::string f = field + "." + key;
    const YAML::Node n = parent[key];
    if (!n) fail(f, "missing", parent);
    if (!n.IsMap()) fail(f, "expected {value: ..., source: ...}", n);
    only_keys(n, f, {"value", "source", "note"});
    const double v = value(n, f, "value", lo, hi);
    out_.sources.push_back({f, n["value"].Scalar(), source(n, f)});
    return v;
  }

  const YAML::Node section(const YAML::Node& root, const std::string& key) const {
    const YAML::Node n = root[key];
    if (!n) fail(key, "missing", root);
    return n;
  }

 private:
  const std::string& path_;
  LoadedDevice& out_;
};

// Shipped device files: (name, path), sorted by name.
std::vector<std::pair<std::string, std::string>> shipped_files() {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(device_directory(), ec))
    if (e.is_regular_file() && is_yaml_name(e.path()))
      out.emplace_back(e.path().stem().string(), e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool is_device_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || ends_with(s, ".yaml") || ends_with(s, ".yml");
}

bool is_capture_only_file(const std::string& path) {
  try {
    return capture_role(YAML::LoadFile(path));
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::vector<std::string> list_capture_devices() {
  std::vector<std::string> names;
  for (const auto& [name, path] : shipped_files()) names.push_back(name);
  return names;
}

std::string device_for_driver_name(std::string_view driver_name) {
  static std::mutex m;
  static std::map<std::string, std::map<std::string, std::string>> index_by_dir;
  const std::string dir = device_directory();
  std::lock_guard<std::mutex> lock(m);
  auto [it, fresh] = index_by_dir.try_emplace(dir);
  if (fresh) {
    // Simulation targets first: a GPU both a target and a capture-only file
    // list resolves to the target. (YAML::Node assignment copies content,
    // so the nodes stay in place and an index list is ordered.)
    std::vector<std::pair<std::string, YAML::Node>> files;
    for (const auto& [name, path] : shipped_files()) {
      try {
        files.emplace_back(name, YAML::LoadFile(path));
      } catch (const YAML::Exception&) {
        continue;  // a broken file is reported when it is loaded
      }
    }
    std::vector<std::size_t> order;
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t i = 0; i < files.size(); ++i)
        if (capture_role(files[i].second) == (pass == 1)) order.push_back(i);
    for (const std::size_t i : order) {
      const std::string& name = files[i].first;
      const YAML::Node& root = files[i].second;
      if (!root.IsMap()) continue;
      if (const YAML::Node names = root["nvml_names"]; names && names.IsSequence())
        for (const auto& n : names)
          if (n.IsScalar()) it->second.try_emplace(normalise(n.Scalar()), name);
      if (const YAML::Node one = root["nvml_name"]; one && one.IsScalar())
        it->second.try_emplace(normalise(one.Scalar()), name);
    }
  }
  const auto found = it->second.find(normalise(driver_name));
  return found != it->second.end() ? found->second : std::string();
}

LoadedDevice load_capture_yaml(const std::string& yaml_text, const std::string& path) {
  const YAML::Node root = parse_yaml(yaml_text, path);
  LoadedDevice out;
  Fields f(path, out);
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a YAML mapping", path));
  if (!capture_role(root))
    throw InputError(
        fmt::format("{}: field 'role': expected 'capture' in a capture-only file", path));
  f.only_keys(root, "",
              {"name", "role", "display_name", "nvml_names", "architecture", "compute", "memory",
               "clocks"});
  Device& d = out.device;
  d.source_path = path;
  if (!root["name"] || !root["name"].IsScalar()) f.fail("name", "missing", root);
  d.name = root["name"].Scalar();
  d.display_name = root["display_name"] ? root["display_name"].as<std::string>() : d.name;
  const YAML::Node names = root["nvml_names"];
  if (!names || !names.IsSequence() || names.size() == 0)
    f.fail("nvml_names", "missing: list the names the driver reports for this GPU", root);
  d.nvml_name = names[0].as<std::string>();

  const YAML::Node compute = f.section(root, "compute");
  f.only_keys(compute, "compute",
              {"sm_count", "peak_clock_mhz", "tensor_peak_clock_mhz", "peak_tflops"});
  d.sm_count = static_cast<std::int32_t>(f.number(compute, "compute", "sm_count", 1, 10000));
  // The core clock the datasheet's peaks are quoted at; Hopper quotes its
  // tensor peaks at a lower clock than its FP32 peak.
  const double boost = f.number(compute, "compute", "peak_clock_mhz", 100, 10000);
  const double tensor_clock =
      compute["tensor_peak_clock_mhz"]
          ? f.number(compute, "compute", "tensor_peak_clock_mhz", 100, 10000)
          : boost;
  const YAML::Node peaks = f.section(compute, "peak_tflops");
  f.only_keys(peaks, "compute.peak_tflops",
              {"fp64", "fp32", "fp16", "tf32_tensor", "fp16_tensor", "bf16_tensor", "fp8_tensor",
               "int8_tensor", "fp4_tensor", "fp64_tensor"});
  std::map<std::string, double> tflops;
  for (const auto& kv : peaks)
    tflops[kv.first.Scalar()] =
        f.number(peaks, "compute.peak_tflops", kv.first.Scalar(), 0.001, 1e6);
  if (!tflops.count("fp32")) f.fail("compute.peak_tflops.fp32", "missing", peaks);
  const double tensor = tflops.count("bf16_tensor")   ? tflops["bf16_tensor"]
                        : tflops.count("fp16_tensor") ? tflops["fp16_tensor"]
                                                      : 0.0;
  if (tensor <= 0)
    f.fail("compute.peak_tflops.fp16_tensor",
           "missing: a capture device needs the dense fp16 or bf16 tensor peak", peaks);
  const double sms = static_cast<double>(d.sm_count);
  d.tensor_flops_per_clock_per_sm = tensor * 1e12 / (sms * tensor_clock * 1e6);
  d.fp32_flops_per_clock_per_sm = tflops["fp32"] * 1e12 / (sms * boost * 1e6);
  d.warp_schedulers_per_sm = 4;  // every NVIDIA SM since Maxwell: 4 processing blocks

  const YAML::Node memory = f.section(root, "memory");
  f.only_keys(memory, "memory", {"bandwidth_gbs", "memory_mhz", "l2_mb"});
  d.dram_bandwidth_gbs = f.number(memory, "memory", "bandwidth_gbs", 1, 1e6);
  d.dram_bandwidth_memory_mhz =
      static_cast<std::int32_t>(f.number(memory, "memory", "memory_mhz", 100, 100000));
  if (memory["l2_mb"]) f.number(memory, "memory", "l2_mb", 0.1, 10000);

  const YAML::Node clocks = f.section(root, "clocks");
  f.only_keys(clocks, "clocks", {"default", "max_core_mhz"});
  const YAML::Node def = f.section(clocks, "default");
  f.only_keys(def, "clocks.default", {"core_mhz", "memory_mhz", "source", "note"});
  d.default_core_mhz =
      static_cast<std::int32_t>(f.value(def, "clocks.default", "core_mhz", 100, 10000));
  d.default_memory_mhz =
      static_cast<std::int32_t>(f.value(def, "clocks.default", "memory_mhz", 100, 100000));
  out.sources.push_back({"clocks.default",
                         fmt::format("{}/{}", d.default_core_mhz, d.default_memory_mhz),
                         f.source(def, "clocks.default")});
  const auto max_core =
      static_cast<std::int32_t>(f.number(clocks, "clocks", "max_core_mhz", 100, 10000));
  if (d.default_core_mhz > max_core)
    f.fail("clocks.default.core_mhz",
           fmt::format("{} MHz is above clocks.max_core_mhz {}", d.default_core_mhz, max_core),
           def);
  // No clock table: a capture clock read beside the trace is taken as it is.
  for (std::int32_t c = 1; c <= max_core; ++c) d.core_clocks_mhz.push_back(c);
  d.memory_clocks_mhz = {std::min(d.default_memory_mhz, d.dram_bandwidth_memory_mhz),
                         std::max(d.default_memory_mhz, d.dram_bandwidth_memory_mhz)};
  if (d.memory_clocks_mhz[0] == d.memory_clocks_mhz[1]) d.memory_clocks_mhz.pop_back();
  d.deep_idle_core_mhz = d.core_clocks_mhz.front();
  // Latency parameters of the capture side (the roofline-overlap model):
  // the shipped targets' assumptions (docs/devices.md): 1 us fixed part, 10 %
  // overlap penalty, L2 bandwidth twice the DRAM peak at the top core clock,
  // DRAM traffic of tensor kernels at their compulsory bytes.
  const double l2 = 2.0 * d.dram_bandwidth_gbs * 1e9 / (max_core * 1e6);
  d.latency = ModelChoice{"roofline-overlap",
                          Params(fmt::format("{}: capture device (role: capture)", path),
                                 {{"kappa", "0.1"},
                                  {"fixed_ns", "1000"},
                                  {"min_kernel_ns", "1500"},
                                  {"compute_efficiency", "1"},
                                  {"memory_efficiency", "1"},
                                  {"l2_bytes_per_clock", fmt::format("{}", l2)},
                                  {"tensor_dram_amplification", "1"}})};
  d.voltage_curve = {{d.core_clocks_mhz.front(), 1.0}, {max_core, 1.0}};
  return out;
}

LoadedDevice load_capture_device(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (!is_device_path(name_or_path)) {
    path.clear();
    for (const auto& [name, p] : shipped_files())
      if (name == name_or_path) path = p;
    if (path.empty()) {
      std::string known;
      for (const auto& n : list_capture_devices()) known += (known.empty() ? "" : ", ") + n;
      throw InputError(
          fmt::format("unknown capture device '{}' (known: {}; or give a path to a YAML file)",
                      name_or_path, known));
    }
  }
  const std::string text = read_text(path);
  if (capture_role(parse_yaml(text, path))) return load_capture_yaml(text, path);
  return load_device_yaml(text, path);
}

std::string capture_only_as_target_message(const std::string& path) {
  return fmt::format(
      "{}: a capture-only device (role: capture): it describes a GPU traces are captured on "
      "(peaks, bandwidth, clocks) but has no power, voltage or governor model to simulate; use "
      "it with --capture-device, and pick a simulation target for --device (`dvfsim devices`)",
      path);
}

}  // namespace dvfsim
