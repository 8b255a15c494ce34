#pragma once
// Experiment files (docs/experiments.md): reading and checking one — traces
// (with globs), devices, policies, swept parameters — and expanding it into
// the runs of its cartesian product, each with a stable id.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dvfsim {

// One entry of `policies:` with its own parameter lists (`set:`).
struct ExperimentPolicy {
  std::string name;
  std::vector<std::pair<std::string, std::vector<std::string>>> set;  // in file order
};

// One path of `traces:` after resolution (a glob yields several).
struct ExperimentTrace {
  std::string label;  // as written in the file (globs: expanded, with the written directory)
  std::string path;   // where it was found, usable from the current directory
  std::string name;   // the file name without trace extensions (results.csv trace_name)
};

struct Experiment {
  std::string path;  // of the YAML file
  std::string name;
  std::string description;
  std::vector<ExperimentTrace> traces;
  std::vector<std::string> devices;  // names, or YAML paths resolved like traces
  std::vector<ExperimentPolicy> policies;
  std::vector<std::pair<std::string, std::vector<std::string>>> set;  // swept, in file order
  std::string baseline = "native";
  std::vector<std::uint64_t> seeds = {1};  // `seed:` a value or a list (a sweep axis)
  // `kernels_csv: true`: every run writes its kernels.csv (one row per
  // activity); without it a run writes summary.json, clock_switches.csv and
  // manifest.json only (`--full-outputs` writes every file).
  bool kernels_csv = false;
};

// Parses and checks an experiment file; InputError naming file, line and field.
Experiment load_experiment(const std::string& path);

// The most runs one sweep expands to (expand_experiment refuses more): far
// beyond any useful sweep, small enough that the points fit in memory.
inline constexpr std::size_t kMaxSweepRuns = 100'000;

// One point of the product after the "undeclared parameter" rule.
struct SweepPoint {
  std::string id;  // stable directory name under DIR/runs/
  const ExperimentTrace* trace = nullptr;
  std::string device;
  std::string policy;
  std::vector<std::pair<std::string, std::string>> settings;  // applied, sorted by key
  std::string baseline;
  std::uint64_t seed = 1;
};

// The product in a fixed order (traces, devices, policies, then parameters with
// the last one varying fastest), duplicates (same id) removed.
std::vector<SweepPoint> expand_experiment(const Experiment& e);

}  // namespace dvfsim
