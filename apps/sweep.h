#pragma once
// `dvfsim sweep EXPERIMENT.yaml --out DIR`: runs the cartesian product of an
// experiment file (traces x devices x policies x swept parameters) in parallel,
// resumably, and writes one tidy DIR/results.csv (docs/experiments.md).
#include <CLI/CLI.hpp>
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
  std::uint64_t seed = 1;
};

// Parses and checks an experiment file; InputError naming file, line and field.
Experiment load_experiment(const std::string& path);

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

struct SweepOptions {
  std::string out;
  unsigned jobs = 0;  // 0: hardware concurrency
  bool full_outputs = false;
  bool progress = true;
  bool dry_run = false;
};

// Runs the sweep; returns the exit code (0 all runs succeeded, 1 some failed).
int run_sweep(const std::string& experiment_path, const SweepOptions& opts);

void add_sweep(CLI::App& app, int& exit_code);

}  // namespace dvfsim
