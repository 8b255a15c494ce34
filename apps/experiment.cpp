#include "apps/experiment.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "apps/runner.h"
#include "apps/settings.h"
#include "policies/registry.h"
#include "sim/error.h"
#include "sim/hash.h"
#include "traces/capture_info.h"

namespace dvfsim {
namespace fs = std::filesystem;
namespace {
// Engine settings and the --parallel job's keys (`parallel`, `straggler`;
// docs/parallel.md) may be swept for any policy.
bool is_run_setting(const std::string& key) {
  return is_engine_setting(key) || key == "parallel" || key == "straggler";
}
}  // namespace

namespace {

// ---------------------------------------------------------------------------
// Reading the experiment file

class ExperimentReader {
 public:
  explicit ExperimentReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what,
                         const YAML::Node& at) const {
    std::string where;
    if (at.IsDefined() && at.Mark().line >= 0) where = fmt::format(":{}", at.Mark().line + 1);
    throw InputError(fmt::format("{}{}: field '{}': {}", path_, where, field, what));
  }

  std::string scalar(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) fail(field, "expected a single value (a string or a number)", n);
    return n.Scalar();
  }

  // A scalar or a non-empty sequence of scalars.
  std::vector<std::string> values(const YAML::Node& n, const std::string& field) const {
    std::vector<std::string> out;
    if (n.IsScalar()) {
      out.push_back(n.Scalar());
    } else if (n.IsSequence()) {
      for (std::size_t i = 0; i < n.size(); ++i)
        out.push_back(scalar(n[i], fmt::format("{}[{}]", field, i)));
      if (out.empty()) fail(field, "empty list: give at least one value", n);
    } else {
      fail(field,
           n.IsNull() ? "no value: give a value or a list of values"
                      : "expected a value or a list of values",
           n);
    }
    return out;
  }

  // A `set:` map: parameter -> value or list of values.
  std::vector<std::pair<std::string, std::vector<std::string>>> set_map(
      const YAML::Node& n, const std::string& field) const {
    if (n.IsNull()) return {};
    if (!n.IsMap()) fail(field, "expected a map of parameter: value or [values]", n);
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      for (const auto& [k, v] : out)
        if (k == key) fail(field + "." + key, "given twice", kv.first);
      out.emplace_back(key, values(kv.second, field + "." + key));
      // An engine setting's values are checked here, by the table that parses `--set`.
      if (const EngineSetting* s = find_engine_setting(key)) {
        const auto& vals = out.back().second;
        for (std::size_t i = 0; i < vals.size(); ++i) {
          try {
            RunSettings scratch;
            s->apply(scratch, vals[i]);
          } catch (const InputError& err) {
            const bool seq = kv.second.IsSequence();
            fail(seq ? fmt::format("{}.{}[{}]", field, key, i) : field + "." + key, err.what(),
                 seq ? kv.second[i] : kv.second);
          }
        }
      }
    }
    return out;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool declares(const PolicyInfo& info, const std::string& key) {
  return std::any_of(info.params.begin(), info.params.end(),
                     [&](const ParamSpec& p) { return p.name == key; });
}

// The trace's name: its file name without the trace extensions (the stem its
// sibling files share, traces/capture_info.h).
std::string trace_name(const std::string& label) {
  return fs::path(trace_stem(label)).filename().string();
}

// The key node of `key` in a map (for its line number); the map itself if absent.
YAML::Node key_node(const YAML::Node& map, const std::string& key) {
  if (map.IsMap())
    for (const auto& kv : map)
      if (kv.first.Scalar() == key) return kv.first;
  return map;
}

bool has_glob(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

// A relative input path is looked up in the experiment file's directory, then
// in each of its ancestors, then in the current directory; the first hit wins.
std::optional<fs::path> find_input(const std::string& written, const fs::path& exp_dir,
                                   bool want_directory = false) {
  auto ok = [&](const fs::path& p) {
    std::error_code ec;
    return want_directory ? fs::is_directory(p, ec) : fs::is_regular_file(p, ec);
  };
  const fs::path p(written);
  if (p.is_absolute()) return ok(p) ? std::optional<fs::path>(p) : std::nullopt;
  std::error_code ec;
  fs::path d = fs::absolute(exp_dir, ec);
  if (!ec) {
    for (;;) {
      if (ok(d / p)) return d / p;
      if (d == d.parent_path() || d.empty()) break;
      d = d.parent_path();
    }
  }
  if (ok(p)) return p;
  return std::nullopt;
}

// A path to use from the current directory: relative when that is shorter.
std::string usable(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::proximate(p, ec);
  if (ec) r = p;
  return r.lexically_normal().generic_string();
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_' || c == '=';
    out += ok ? c : '-';
  }
  return out;
}

}  // namespace

Experiment load_experiment(const std::string& path) {
  ExperimentReader rd(path);
  YAML::Node loaded;
  try {
    loaded = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(fmt::format("{}: cannot read the experiment file", path));
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  const YAML::Node root = loaded;
  if (!root.IsMap())
    rd.fail("(top level)", "expected a map with traces, devices, policies, ...", root);

  static const std::vector<std::string> known = {"name",     "description", "traces",
                                                 "devices",  "policies",    "set",
                                                 "baseline", "seed",        "kernels_csv"};
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      rd.fail(key, fmt::format("unknown key (valid keys: {})", list), kv.first);
    }
  }
  auto required = [&](const char* key) {
    const YAML::Node n = root[key];
    if (!n) rd.fail(key, "missing (required)", root);
    return n;
  };

  Experiment e;
  e.path = path;
  const fs::path exp_dir =
      fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  e.name = root["name"] ? rd.scalar(root["name"], "name") : fs::path(path).stem().string();
  if (root["description"]) e.description = rd.scalar(root["description"], "description");
  if (root["baseline"]) e.baseline = rd.scalar(root["baseline"], "baseline");
  if (e.baseline.empty()) e.baseline = "none";
  if (e.baseline != "none") {
    try {
      find_policy(e.baseline);
    } catch (const InputError& err) {
      rd.fail("baseline", err.what(), root["baseline"]);
    }
  }
  if (root["kernels_csv"]) {
    const std::string v = rd.scalar(root["kernels_csv"], "kernels_csv");
    if (v == "true")
      e.kernels_csv = true;
    else if (v == "false")
      e.kernels_csv = false;
    else
      rd.fail("kernels_csv", fmt::format("'{}' is not true or false", v), root["kernels_csv"]);
  }
  if (root["seed"]) {
    const YAML::Node n = root["seed"];
    e.seeds.clear();
    const auto list = rd.values(n, "seed");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string& s = list[i];
      const std::string field = n.IsSequence() ? fmt::format("seed[{}]", i) : "seed";
      const YAML::Node at = n.IsSequence() ? n[i] : n;
      std::uint64_t v = 0;
      try {
        std::size_t used = 0;
        if (s.empty() || s[0] == '-') throw std::invalid_argument("negative");
        v = std::stoull(s, &used);
        if (used != s.size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        rd.fail(field, fmt::format("'{}' is not a non-negative integer", s), at);
      }
      if (std::find(e.seeds.begin(), e.seeds.end(), v) != e.seeds.end())
        rd.fail(field, fmt::format("seed {} is listed twice", v), at);
      e.seeds.push_back(v);
    }
  }

  // traces
  {
    const YAML::Node n = required("traces");
    const auto list = rd.values(n, "traces");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = fmt::format("traces[{}]", i);
      const YAML::Node at = n.IsSequence() ? n[i] : n;
      const std::string& w = list[i];
      if (w.empty()) rd.fail(field, "empty path", at);
      if (has_glob(fs::path(w).parent_path().string()))
        rd.fail(field, "wildcards are allowed in the file name only", at);
      if (has_glob(w)) {
        const fs::path wdir = fs::path(w).parent_path();
        const std::string pattern = fs::path(w).filename().string();
        const auto dir = find_input(wdir.empty() ? "." : wdir.string(), exp_dir, true);
        std::vector<std::string> names;
        if (dir) {
          for (const auto& ent : fs::directory_iterator(*dir)) {
            const std::string f = ent.path().filename().string();
            if (ent.is_regular_file() && fnmatch(pattern.c_str(), f.c_str(), 0) == 0)
              names.push_back(f);
          }
        }
        std::sort(names.begin(), names.end());
        if (names.empty())
          std::cerr << fmt::format("dvfsim sweep: note: {}: {} '{}' matches no file (skipped)\n",
                                   path, field, w);
        for (const auto& f : names)
          e.traces.push_back({(wdir / f).generic_string(), usable(*dir / f),
                              trace_name((wdir / f).generic_string())});
      } else {
        const auto found = find_input(w, exp_dir);
        if (!found)
          rd.fail(field,
                  fmt::format("'{}': no such file (looked in {} and its parent directories, "
                              "and in the current directory)",
                              w, exp_dir.string()),
                  at);
        e.traces.push_back({fs::path(w).generic_string(), usable(*found),
                            trace_name(fs::path(w).generic_string())});
      }
    }
    // Duplicates (a glob and a literal naming the same file) collapse.
    std::vector<ExperimentTrace> unique;
    for (auto& t : e.traces)
      if (std::none_of(unique.begin(), unique.end(), [&](auto& u) { return u.label == t.label; }))
        unique.push_back(t);
    e.traces = std::move(unique);
    if (e.traces.empty()) rd.fail("traces", "no trace file found", n);
  }

  // devices
  {
    const YAML::Node n = required("devices");
    const auto list = rd.values(n, "devices");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = fmt::format("devices[{}]", i);
      const YAML::Node at = n.IsSequence() ? n[i] : n;
      std::string d = list[i];
      const bool is_path =
          d.find('/') != std::string::npos || d.ends_with(".yaml") || d.ends_with(".yml");
      if (is_path) {
        const auto found = find_input(d, exp_dir);
        if (!found) rd.fail(field, fmt::format("'{}': no such device file", d), at);
        d = usable(*found);
      }
      try {
        load_device_cached(d);
      } catch (const InputError& err) {
        rd.fail(field, err.what(), at);
      }
      if (std::find(e.devices.begin(), e.devices.end(), d) == e.devices.end())
        e.devices.push_back(d);
    }
  }

  // policies
  {
    const YAML::Node n = required("policies");
    if (!n.IsSequence() && !n.IsScalar()) rd.fail("policies", "expected a list of policies", n);
    if (n.IsSequence() && n.size() == 0)
      rd.fail("policies", "empty list: give at least one policy", n);
    const std::size_t count = n.IsSequence() ? n.size() : 1;
    for (std::size_t i = 0; i < count; ++i) {
      const std::string field = fmt::format("policies[{}]", i);
      const YAML::Node p = n.IsSequence() ? n[i] : n;
      ExperimentPolicy ep;
      YAML::Node name_node = p;
      if (p.IsScalar()) {
        ep.name = p.Scalar();
      } else if (p.IsMap()) {
        for (const auto& kv : p) {
          const std::string key = kv.first.Scalar();
          if (key != "name" && key != "set")
            rd.fail(field + "." + key, "unknown key (valid keys: name, set)", kv.first);
        }
        if (!p["name"]) rd.fail(field + ".name", "missing (required)", p);
        name_node.reset(p["name"]);  // rebind, not assign (yaml-cpp)
        ep.name = rd.scalar(p["name"], field + ".name");
        if (p["set"]) ep.set = rd.set_map(p["set"], field + ".set");
      } else {
        rd.fail(field, "expected a policy name or {name: ..., set: {...}}", p);
      }
      const PolicyInfo* info = nullptr;
      try {
        info = &find_policy(ep.name);
      } catch (const InputError& err) {
        rd.fail(field, err.what(), name_node);
      }
      for (const auto& [key, vals] : ep.set) {
        if (!is_run_setting(key) && !declares(*info, key)) {
          std::string valid;
          for (const auto& s : info->params) valid += (valid.empty() ? "" : ", ") + s.name;
          valid += (valid.empty() ? "" : ", ") + engine_setting_names();
          rd.fail(
              fmt::format("{}.set.{}", field, key),
              fmt::format("policy '{}' has no parameter '{}' (valid: {})", info->name, key, valid),
              key_node(p["set"], key));
        }
      }
      e.policies.push_back(std::move(ep));
    }
  }

  // set: every key must be an engine setting or declared by a listed policy.
  if (root["set"]) {
    e.set = rd.set_map(root["set"], "set");
    for (const auto& [key, vals] : e.set) {
      if (is_run_setting(key)) continue;
      bool used = false;
      std::set<std::string> valid;
      for (const auto& s : engine_settings()) valid.insert(std::string(s.name));
      for (const auto& ep : e.policies) {
        const PolicyInfo& info = find_policy(ep.name);
        used = used || declares(info, key);
        for (const auto& s : info.params) valid.insert(s.name);
      }
      if (!used) {
        std::string list;
        for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
        rd.fail(
            "set." + key,
            fmt::format("no policy of this experiment has a parameter '{}' (valid: {})", key, list),
            key_node(root["set"], key));
      }
    }
  }
  return e;
}

std::vector<SweepPoint> expand_experiment(const Experiment& e) {
  // The swept axes of each policy: its own lists replace the experiment-wide
  // ones for a key. They do not depend on the trace or device.
  using Axes = std::vector<std::pair<std::string, std::vector<std::string>>>;
  std::vector<Axes> policy_axes;
  double runs = 0;  // the size of the product, counted before it is built
  for (const auto& ep : e.policies) {
    const PolicyInfo& info = find_policy(ep.name);
    Axes axes;
    for (const auto& [key, vals] : e.set) {
      if (!is_run_setting(key) && !declares(info, key)) continue;  // not this policy's
      const std::string& k = key;  // clang 14 cannot capture structured bindings
      auto own =
          std::find_if(ep.set.begin(), ep.set.end(), [&](auto& kv) { return kv.first == k; });
      axes.emplace_back(key, own != ep.set.end() ? own->second : vals);
    }
    for (const auto& [key, vals] : ep.set) {
      const std::string& k = key;
      if (std::none_of(axes.begin(), axes.end(), [&](auto& kv) { return kv.first == k; }))
        axes.emplace_back(key, vals);
    }
    double product = static_cast<double>(e.traces.size() * e.devices.size());
    for (const auto& axis : axes) product *= static_cast<double>(axis.second.size());
    runs += product;
    policy_axes.push_back(std::move(axes));
  }
  if (runs > static_cast<double>(kMaxSweepRuns))
    throw InputError(fmt::format(
        "{}: the experiment has {:.0f} runs (traces x devices x policies x parameter values); "
        "a sweep takes at most {}: split it into several experiments",
        e.path, runs, kMaxSweepRuns));

  std::vector<SweepPoint> out;
  std::set<std::string> seen;
  for (const auto& trace : e.traces) {
    for (const auto& device : e.devices) {
      for (std::size_t pi = 0; pi < e.policies.size(); ++pi) {
        const PolicyInfo& info = find_policy(e.policies[pi].name);
        const Axes& axes = policy_axes[pi];
        std::vector<std::size_t> idx(axes.size(), 0);
        for (;;) {
          for (const std::uint64_t seed : e.seeds) {
            SweepPoint pt;
            pt.trace = &trace;
            pt.device = device;
            pt.policy = info.name;
            pt.baseline = e.baseline;
            pt.seed = seed;
            for (std::size_t a = 0; a < axes.size(); ++a)
              pt.settings.emplace_back(axes[a].first, axes[a].second[idx[a]]);
            std::sort(pt.settings.begin(), pt.settings.end());
            // The stable id: readable fields plus a hash of the whole configuration.
            std::string key = fmt::format("trace={}\ndevice={}\npolicy={}\nbaseline={}\nseed={}\n",
                                          trace.label, device, pt.policy, pt.baseline, pt.seed);
            std::string readable =
                fmt::format("{}__{}__{}", trace.name, fs::path(device).stem().string(), pt.policy);
            std::string params;
            for (const auto& [k, v] : pt.settings) {
              key += fmt::format("set.{}={}\n", k, v);
              params += (params.empty() ? "" : "_") + k + "=" + v;
            }
            // Several seeds: the seed is in the readable id too.
            if (e.seeds.size() > 1)
              params += fmt::format("{}seed={}", params.empty() ? "" : "_", seed);
            if (!params.empty()) readable += "__" + params;
            readable = sanitize(readable);
            if (readable.size() > 160) readable.resize(160);
            pt.id = fmt::format("{}__{:08x}", readable,
                                static_cast<std::uint32_t>(fnv1a(key) & 0xffffffffu));
            if (seen.insert(pt.id).second) out.push_back(std::move(pt));
          }
          // Next combination, last axis fastest.
          bool more = false;
          for (std::size_t a = axes.size(); a-- > 0;) {
            if (++idx[a] < axes[a].second.size()) {
              more = true;
              break;
            }
            idx[a] = 0;
          }
          if (!more) break;
        }
      }
    }
  }
  return out;
}

}  // namespace dvfsim
