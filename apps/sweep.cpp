#include "apps/sweep.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "apps/files.h"
#include "apps/outputs.h"
#include "apps/runner.h"
#include "models/device_yaml.h"
#include "policies/plan.h"
#include "policies/registry.h"
#include "sim/error.h"
#include "sim/json.h"

#ifndef DVFSIM_VERSION
#define DVFSIM_VERSION "0.0.0"
#endif

namespace dvfsim {
namespace fs = std::filesystem;
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
    }
    return out;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool is_engine_key(const std::string& key) {
  const auto& keys = engine_setting_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

bool declares(const PolicyInfo& info, const std::string& key) {
  return std::any_of(info.params.begin(), info.params.end(),
                     [&](const ParamSpec& p) { return p.name == key; });
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

std::string trace_stem(const std::string& label) {
  std::string f = fs::path(label).filename().string();
  const auto dot = f.find('.');
  return dot == std::string::npos || dot == 0 ? f : f.substr(0, dot);
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

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
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

  static const std::vector<std::string> known = {"name",     "description", "traces",   "devices",
                                                 "policies", "set",         "baseline", "seed"};
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
  if (root["seed"]) {
    const YAML::Node n = root["seed"];
    const std::string s = rd.scalar(n, "seed");
    try {
      std::size_t used = 0;
      if (s.empty() || s[0] == '-') throw std::invalid_argument("negative");
      e.seed = std::stoull(s, &used);
      if (used != s.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      rd.fail("seed", fmt::format("'{}' is not a non-negative integer", s), n);
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
          e.traces.push_back({(wdir / f).generic_string(), usable(*dir / f)});
      } else {
        const auto found = find_input(w, exp_dir);
        if (!found)
          rd.fail(field,
                  fmt::format("'{}': no such file (looked in {} and its parent directories, "
                              "and in the current directory)",
                              w, exp_dir.string()),
                  at);
        e.traces.push_back({fs::path(w).generic_string(), usable(*found)});
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
        if (!is_engine_key(key) && !declares(*info, key)) {
          std::string valid;
          for (const auto& s : info->params) valid += (valid.empty() ? "" : ", ") + s.name;
          for (const auto& k : engine_setting_keys()) valid += (valid.empty() ? "" : ", ") + k;
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
      if (is_engine_key(key)) continue;
      bool used = false;
      std::set<std::string> valid(engine_setting_keys().begin(), engine_setting_keys().end());
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
  std::vector<SweepPoint> out;
  std::set<std::string> seen;
  for (const auto& trace : e.traces) {
    for (const auto& device : e.devices) {
      for (const auto& ep : e.policies) {
        const PolicyInfo& info = find_policy(ep.name);
        // The policy's own lists replace the experiment-wide ones for a key.
        std::vector<std::pair<std::string, std::vector<std::string>>> axes;
        for (const auto& [key, vals] : e.set) {
          if (!is_engine_key(key) && !declares(info, key)) continue;  // not this policy's: skipped
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
        std::vector<std::size_t> idx(axes.size(), 0);
        for (;;) {
          SweepPoint pt;
          pt.trace = &trace;
          pt.device = device;
          pt.policy = info.name;
          pt.baseline = e.baseline;
          pt.seed = e.seed;
          for (std::size_t a = 0; a < axes.size(); ++a)
            pt.settings.emplace_back(axes[a].first, axes[a].second[idx[a]]);
          std::sort(pt.settings.begin(), pt.settings.end());
          // The stable id: readable fields plus a hash of the whole configuration.
          std::string key = fmt::format("trace={}\ndevice={}\npolicy={}\nbaseline={}\nseed={}\n",
                                        trace.label, device, pt.policy, pt.baseline, pt.seed);
          std::string readable = fmt::format("{}__{}__{}", trace_stem(trace.label),
                                             fs::path(device).stem().string(), pt.policy);
          std::string params;
          for (const auto& [k, v] : pt.settings) {
            key += fmt::format("set.{}={}\n", k, v);
            params += (params.empty() ? "" : "_") + k + "=" + v;
          }
          if (!params.empty()) readable += "__" + params;
          readable = sanitize(readable);
          if (readable.size() > 160) readable.resize(160);
          pt.id = fmt::format("{}__{:08x}", readable,
                              static_cast<std::uint32_t>(fnv1a(key) & 0xffffffffu));
          if (seen.insert(pt.id).second) out.push_back(std::move(pt));
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

namespace {

// ---------------------------------------------------------------------------
// Running

using Row = std::map<std::string, std::string>;

// Flattens summary.json into columns: top-level scalars by name, the baseline
// object as baseline_<key>, policy parameters by their own name; arrays are
// left out. `param_keys` collects the policy-parameter names.
Row summary_row(const std::string& summary_text, std::set<std::string>& param_keys) {
  Row row;
  const YAML::Node root = YAML::Load(summary_text);
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const YAML::Node v = kv.second;
    if (key == "policy_params" && v.IsMap()) {
      for (const auto& p : v) {
        row[p.first.Scalar()] = p.second.IsScalar() ? p.second.Scalar() : "";
        param_keys.insert(p.first.Scalar());
      }
    } else if (key == "baseline") {
      if (v.IsMap())
        for (const auto& b : v)
          if (b.second.IsScalar()) row["baseline_" + b.first.Scalar()] = b.second.Scalar();
    } else if (v.IsScalar()) {
      row[key] = v.Scalar();
    } else if (v.IsNull()) {
      row[key] = "";
    }
  }
  return row;
}

// The file, or "" when it does not exist (a run not done yet).
std::string read_file_or_empty(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Progress {
  std::size_t total = 0;
  std::atomic<std::size_t> done{0}, skipped{0}, failed{0};
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;

  static std::string clock(double s) {
    const auto t = static_cast<long>(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                     : fmt::format("{}:{:02}", t / 60, t % 60);
  }
  std::string line() const {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::size_t d = done, sk = skipped, f = failed;
    const std::size_t ran = d - sk;
    std::string eta = "--:--";
    if (ran > 0 && d < total)
      eta = clock(el / static_cast<double>(ran) * static_cast<double>(total - d));
    if (d == total) eta = "0:00";
    const std::size_t width = 24;
    const std::size_t fill = total ? d * width / total : width;
    return fmt::format("[{}{}] {}/{} runs ({} skipped, {} failed)  elapsed {}  ETA {}",
                       std::string(fill, '#'), std::string(width - fill, '.'), d, total, sk, f,
                       clock(el), eta);
  }
};

}  // namespace

int run_sweep(const std::string& experiment_path, const SweepOptions& opts) {
  const Experiment e = load_experiment(experiment_path);
  const std::vector<SweepPoint> points = expand_experiment(e);
  const fs::path out(opts.out);
  const fs::path runs_dir = out / "runs";

  // Input fingerprints, part of each run's configuration key.
  std::map<std::string, std::string> trace_fp, device_fp;
  for (const auto& t : e.traces) trace_fp[t.label] = file_fingerprint(t.path);
  for (const auto& d : e.devices)
    device_fp[d] = file_fingerprint(load_device_cached(d)->device.source_path);
  // The capture device's file shapes every retargeted run, and the program
  // itself shapes every run: a rebuilt dvfsim re-runs the sweep.
  for (const auto& t : e.traces) {
    const std::string& cap = load_workload(t.path)->capture.device;
    if (!cap.empty())
      trace_fp[t.label] += "+" + file_fingerprint(load_device_cached(cap)->device.source_path);
  }
  const std::string build_fp = file_fingerprint("/proc/self/exe");

  auto config_key = [&](const SweepPoint& p) {
    JsonWriter j;
    j.begin_object();
    j.field("dvfsim_version", DVFSIM_VERSION);
    j.field("dvfsim_build", build_fp);
    j.field("trace", p.trace->label);
    j.field("trace_hash", trace_fp[p.trace->label]);
    j.field("device", p.device);
    j.field("device_hash", device_fp[p.device]);
    j.field("policy", p.policy);
    j.key("set").begin_object();
    for (const auto& [k, v] : p.settings) j.field(k, v);
    j.end_object();
    j.field("baseline", p.baseline);
    j.field("seed", static_cast<std::uint64_t>(p.seed));
    j.end_object();
    return j.str() + "\n";
  };
  auto complete = [&](const SweepPoint& p) {
    const fs::path dir = runs_dir / p.id;
    std::error_code ec;
    if (!fs::is_regular_file(dir / "summary.json", ec)) return false;
    if (opts.full_outputs && !fs::is_regular_file(dir / "trace.json", ec)) return false;
    return read_file_or_empty(dir / "sweep_key.json") == config_key(p);
  };

  if (opts.dry_run) {
    std::cout << fmt::format("{}: {} runs ({} traces, {} devices, {} policies)\n", e.name,
                             points.size(), e.traces.size(), e.devices.size(), e.policies.size());
    for (const auto& p : points)
      std::cout << fmt::format("  {} {}\n", complete(p) ? "done" : "todo", p.id);
    return 0;
  }

  make_output_dir(runs_dir.string());
  write_file_atomic((out / "experiment.yaml").string(), read_file(experiment_path));

  Progress prog;
  prog.total = points.size();
  std::vector<Row> rows(points.size());
  std::vector<std::set<std::string>> params_seen(points.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (complete(points[i])) {
      try {
        rows[i] = summary_row(read_file_or_empty(runs_dir / points[i].id / "summary.json"),
                              params_seen[i]);
        ++prog.skipped;
        ++prog.done;
        continue;
      } catch (const std::exception&) {
        rows[i].clear();  // unreadable: run it again
      }
    }
    todo.push_back(i);
  }

  unsigned jobs = opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(todo.size(), 1)));
  std::cerr << fmt::format("dvfsim sweep: {}: {} runs ({} already complete), {} thread{}, out {}\n",
                           e.name, points.size(), prog.skipped.load(), jobs, jobs == 1 ? "" : "s",
                           out.string());

  // Load each trace once before the threads start (the loader caches by path).
  {
    std::set<std::string> loaded;
    for (auto i : todo) {
      const std::string& path = points[i].trace->path;
      if (!loaded.insert(path).second) continue;
      const auto t0 = std::chrono::steady_clock::now();
      try {
        load_workload(path);
        std::cerr << fmt::format(
            "dvfsim sweep: loaded {} in {:.1f} s\n", path,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      } catch (const std::exception&) {
        // Reported by each run that needs it.
      }
    }
  }
  prog.t0 = std::chrono::steady_clock::now();

  const bool tty = isatty(fileno(stderr)) != 0;
  std::thread reporter;
  if (opts.progress) {
    reporter = std::thread([&] {
      std::unique_lock<std::mutex> lock(prog.m);
      const auto period = tty ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000);
      while (!prog.stop) {
        prog.cv.wait_for(lock, period, [&] { return prog.stop; });
        if (prog.stop) break;
        std::cerr << (tty ? "\r" + prog.line() + "  " : "dvfsim sweep: " + prog.line() + "\n")
                  << std::flush;
      }
    });
  }

  std::atomic<std::size_t> next{0};
  std::mutex errors_m;
  auto worker = [&] {
    plan::quiet_reports(true);  // solver lines would interleave with the progress bar
    for (;;) {
      const std::size_t t = next++;
      if (t >= todo.size()) break;
      const std::size_t i = todo[t];
      const SweepPoint& p = points[i];
      const fs::path dir = runs_dir / p.id;
      RunSpec spec;
      spec.trace_path = p.trace->path;
      spec.device = p.device;
      spec.policy = p.policy;
      for (const auto& [k, v] : p.settings) spec.settings[k] = v;
      spec.baseline = p.baseline;
      spec.seed = p.seed;
      spec.record_timeline = opts.full_outputs;
      try {
        std::error_code ec;
        fs::remove_all(dir, ec);  // stale or partial outputs of this id
        make_output_dir(dir.string());
        write_file_atomic((dir / "sweep_key.json").string(), config_key(p));
        const Simulation sim = simulate(spec);
        const std::string summary = summary_json(spec, sim);
        if (opts.full_outputs) {
          write_run_outputs(dir.string(), spec, sim);
        } else {
          write_file_atomic((dir / "kernels.csv").string(), kernels_csv(sim));
          write_file_atomic((dir / "clock_switches.csv").string(), clock_switches_csv(sim));
          write_file_atomic((dir / "manifest.json").string(), manifest_json(spec, sim));
          write_file_atomic((dir / "summary.json").string(),
                            summary);  // last: marks the run complete
        }
        rows[i] = summary_row(summary, params_seen[i]);
      } catch (const std::exception& err) {
        Row r;
        r["status"] = "failed";
        r["error"] = one_line(err.what());
        r["device"] = p.device;
        r["policy"] = p.policy;
        r["seed"] = fmt::format("{}", p.seed);
        r["baseline_policy"] = p.baseline;
        for (const auto& [k, v] : p.settings) {
          r[k] = v;
          if (!is_engine_key(k)) params_seen[i].insert(k);
        }
        rows[i] = std::move(r);
        ++prog.failed;
        std::lock_guard<std::mutex> lock(errors_m);
        std::cerr << fmt::format("{}dvfsim sweep: run {} failed: {}\n",
                                 tty && opts.progress ? "\r" : "", p.id, one_line(err.what()));
      }
      ++prog.done;
    }
  };
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < jobs && !todo.empty(); ++k) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
  if (reporter.joinable()) {
    {
      std::lock_guard<std::mutex> lock(prog.m);
      prog.stop = true;
    }
    prog.cv.notify_all();
    reporter.join();
  }
  if (opts.progress)
    std::cerr << (tty ? "\r" + prog.line() + "  \n" : "dvfsim sweep: " + prog.line() + "\n");

  // results.csv: fixed leading columns, then any other parameter and summary
  // columns in name order, then run_dir and error.
  std::set<std::string> param_keys;
  for (const auto& s : params_seen) param_keys.insert(s.begin(), s.end());
  for (const auto& [k, v] : e.set)
    if (!is_engine_key(k)) param_keys.insert(k);
  for (const auto& ep : e.policies)
    for (const auto& [k, v] : ep.set)
      if (!is_engine_key(k)) param_keys.insert(k);
  std::vector<std::string> cols = {
      "experiment",   "run_id",         "status",     "trace",  "trace_name",
      "device",       "capture_device", "policy",     "oracle", "switch_latency_us",
      "max_slowdown", "objective",      "aggregation"};
  for (const auto& k : param_keys)
    if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
  for (const char* k : {"seed",
                        "time_s",
                        "energy_j",
                        "avg_power_w",
                        "iterations",
                        "time_per_iteration_s",
                        "energy_per_iteration_j",
                        "clock_switches",
                        "coalesced_requests",
                        "switch_stall_s",
                        "off_target_s",
                        "power_capped_s",
                        "baseline_policy",
                        "baseline_time_s",
                        "baseline_energy_j",
                        "baseline_avg_power_w",
                        "baseline_iterations",
                        "baseline_time_per_iteration_s",
                        "baseline_energy_per_iteration_j",
                        "energy_saving_pct",
                        "slowdown_pct"})
    cols.emplace_back(k);
  std::set<std::string> extra;
  for (const auto& r : rows)
    for (const auto& [k, v] : r)
      if (std::find(cols.begin(), cols.end(), k) == cols.end() && k != "run_dir" && k != "error")
        extra.insert(k);
  cols.insert(cols.end(), extra.begin(), extra.end());
  cols.emplace_back("run_dir");
  cols.emplace_back("error");

  std::string csv;
  for (std::size_t c = 0; c < cols.size(); ++c) csv += (c ? "," : "") + cols[c];
  csv += "\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    Row& r = rows[i];
    const SweepPoint& p = points[i];
    r["experiment"] = e.name;
    r["run_id"] = p.id;
    if (r["status"].empty()) r["status"] = "ok";
    r["trace"] = p.trace->label;
    r["trace_name"] = trace_stem(p.trace->label);
    r["device"] = p.device;
    r["run_dir"] = (fs::path("runs") / p.id).generic_string();
    for (std::size_t c = 0; c < cols.size(); ++c) {
      auto it = r.find(cols[c]);
      csv += (c ? "," : "") + (it == r.end() ? std::string() : csv_field(it->second));
    }
    csv += "\n";
  }
  write_file_atomic((out / "results.csv").string(), csv);

  const double el =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - prog.t0).count();
  std::cerr << fmt::format(
      "dvfsim sweep: {}: {} runs: {} ran, {} skipped (already complete), {} failed; "
      "wrote {} in {:.1f} s\n",
      e.name, points.size(), points.size() - prog.skipped - prog.failed, prog.skipped.load(),
      prog.failed.load(), (out / "results.csv").string(), el);
  return prog.failed > 0 ? 1 : 0;
}

void add_sweep(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run an experiment file (traces x devices x policies x parameters) in parallel, resumably");
  struct Opts {
    std::string experiment;
    SweepOptions o;
    bool no_progress = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("EXPERIMENT", o->experiment, "Experiment YAML file (docs/experiments.md)")
      ->required();
  cmd->add_option("--out", o->o.out, "Output directory (results.csv, runs/<id>/)")->required();
  cmd->add_option("--jobs,-j", o->o.jobs, "Parallel runs (default: hardware concurrency)");
  cmd->add_flag("--full-outputs", o->o.full_outputs,
                "Also write timeline.csv and trace.json per run (slower, larger)");
  cmd->add_flag("--no-progress", o->no_progress, "No progress line on stderr");
  cmd->add_flag("--dry-run", o->o.dry_run,
                "List the runs (and which are complete) without running");
  cmd->callback([o, &exit_code] {
    o->o.progress = !o->no_progress;
    exit_code = run_sweep(o->experiment, o->o);
  });
}

}  // namespace dvfsim
