#pragma once
// `dvfsim sweep EXPERIMENT.yaml --out DIR`: runs the cartesian product of an
// experiment file (traces x devices x policies x swept parameters) in parallel,
// resumably (complete runs are skipped), with a progress line, and writes one
// tidy DIR/results.csv (apps/results_table.h, docs/experiments.md).
#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "apps/experiment.h"

namespace dvfsim {

struct SweepOptions {
  std::string out;
  unsigned jobs = 0;  // 0: hardware concurrency
  bool full_outputs = false;
  bool progress = true;
  bool dry_run = false;
  std::string shard;   // "K/N": run only the K-th of N parts (apps/shard.h)
  bool merge = false;  // run nothing: assemble results.csv from DIR/runs/
  bool slurm = false;  // submit a Slurm array job (apps/shard.h)
  std::size_t array_size = 0;
  std::vector<std::string> sbatch_options;
};

// Runs the sweep; returns the exit code (0 all runs succeeded, 1 some failed).
int run_sweep(const std::string& experiment_path, const SweepOptions& opts);

void add_sweep(CLI::App& app, int& exit_code);

}  // namespace dvfsim
