#pragma once
// Sweeps past one machine (issue 18, docs/experiments.md "Shards and Slurm"):
// `--shard K/N` picks the K-th of N disjoint, stable parts of an experiment's
// runs, and `--slurm` writes and submits a Slurm array job whose task K runs
// shard K/N, plus a merge job that depends on it.
#include <cstddef>
#include <string>
#include <vector>

namespace dvfsim {

struct ShardSpec {
  std::size_t k = 0;  // 1..n
  std::size_t n = 0;  // 0: no sharding
  bool active() const { return n > 0; }
};

// "K/N" with 1 <= K <= N; InputError naming --shard otherwise.
ShardSpec parse_shard(const std::string& text);

// The shard (1..n) of each run: the runs sorted by id, dealt out in turn. It
// depends only on the set of ids (not on the runs' order in the file, nor on
// which runs are complete), and neighbouring ids — the same trace, device and
// policy — land in different shards, so shards are balanced.
std::vector<std::size_t> assign_shards(const std::vector<std::string>& ids, std::size_t n);

struct SlurmOptions {
  std::string experiment;                   // as given on the command line
  std::string out;                          // --out, as given
  std::string name;                         // the experiment's name (job names)
  std::size_t array_size = 0;               // 0: one task per run, at most 1000
  std::vector<std::string> sbatch_options;  // each becomes an #SBATCH line
  bool full_outputs = false;
  bool dry_run = false;  // print the scripts and the sbatch commands only
};

// Writes DIR/slurm/sweep.sbatch and DIR/slurm/merge.sbatch and submits them
// (sbatch --parsable; the merge job with --dependency=afterany:ARRAY). Only
// the array tasks whose shard still has incomplete runs are submitted, so a
// resubmission after failures reruns only what is missing. `complete[i]`
// says whether run ids[i] is complete. Returns the exit code.
int submit_slurm(const SlurmOptions& opts, const std::vector<std::string>& ids,
                 const std::vector<bool>& complete);

}  // namespace dvfsim
