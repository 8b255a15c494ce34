// End to end: `dvfsim sweep --shard K/N`, `--merge`, `--slurm` (with a fake
// sbatch; tests/slurm/run.sh uses a real Slurm) and `seed:` lists (issue 18).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/run_util.h"

namespace {

using dvfsim::testing::ProcessResult;

ProcessResult dvfsim(const std::string& args) {
  return dvfsim::testing::run_dvfsim(args);
}
// With PATH set to `path` (for a fake sbatch, or none).
ProcessResult dvfsim_path(const std::string& path, const std::string& args) {
  const std::string cmd = "PATH='" + path + "' " + std::string(DVFSIM_EXE) + " " + args + " 2>&1";
  ProcessResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) r.output += buf;
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}
std::string slurp(const std::string& path) {
  return dvfsim::testing::read_text(path);
}
void spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}
std::string scratch(const std::string& name) {
  return dvfsim::testing::temp_dir("shard-" + name);
}
namespace fs = std::filesystem;

// 2 policies x 3 latencies = 6 runs on the H200.
std::string six_runs(const std::string& extra = "") {
  return std::string("name: six\ntraces: [\"") + DVFSIM_SHIPPED_TRACE +
         "\"]\n"
         "devices: [h200]\n"
         "policies:\n"
         "  - max\n"
         "  - {name: static, set: {core_mhz: 1500, memory_mhz: 3201}}\n"
         "set:\n  switch_latency_us: [1, 1000, 100000]\n" +
         extra;
}

// The run ids a dry run lists, with their state ("todo"/"done").
std::vector<std::string> listed(const std::string& output, const std::string& state = "") {
  std::vector<std::string> ids;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("  todo ", 0) == 0 || line.rfind("  done ", 0) == 0)
      if (state.empty() || line.substr(2, 4) == state) ids.push_back(line.substr(7));
  return ids;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Shard, ThreeShardsByHandMergeToTheLocalResults) {
  const std::string dir = scratch("three");
  spit(dir + "/e.yaml", six_runs());
  const ProcessResult local =
      dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/local --jobs 2 --no-progress");
  ASSERT_EQ(local.exit_code, 0) << local.output;

  // The shards are disjoint and together are the whole experiment: 2 + 2 + 2.
  std::set<std::string> all;
  for (int k = 1; k <= 3; ++k) {
    const auto dry = dvfsim("sweep " + dir + "/e.yaml --out " + dir +
                            "/sharded --dry-run --shard " + std::to_string(k) + "/3");
    ASSERT_EQ(dry.exit_code, 0) << dry.output;
    const auto ids = listed(dry.output);
    EXPECT_EQ(ids.size(), 2u) << dry.output;
    for (const auto& id : ids) EXPECT_TRUE(all.insert(id).second) << id << " in two shards";
  }
  EXPECT_EQ(all.size(), 6u);

  for (int k = 1; k <= 3; ++k) {
    const auto r = dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/sharded --no-progress " +
                          "--jobs 1 --shard " + std::to_string(k) + "/3");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("2 ran, 0 skipped"), std::string::npos) << r.output;
    // A shard writes only its own runs' files.
    EXPECT_FALSE(fs::exists(dir + "/sharded/results.csv"));
    EXPECT_FALSE(fs::exists(dir + "/sharded/experiment.yaml"));
  }
  const auto merged = dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/sharded --merge");
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("6 complete, 0 missing, 0 failed"), std::string::npos)
      << merged.output;
  // Byte for byte: the rows are in the experiment's order and carry no timing.
  EXPECT_EQ(slurp(dir + "/sharded/results.csv"), slurp(dir + "/local/results.csv"));

  // A shard run again skips its complete runs.
  const auto again = dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/sharded --shard 2/3");
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.output.find("0 ran, 2 skipped"), std::string::npos) << again.output;
}

TEST(Shard, ShardsRunAtTheSameTimeInOneDirectory) {
  // As array tasks do on a cluster: three processes, one output directory.
  // None may lock the others out (a shard takes no whole-directory lock).
  const std::string dir = scratch("concurrent");
  spit(dir + "/e.yaml", six_runs());
  std::string cmd;
  for (int k = 1; k <= 3; ++k)
    cmd += "(" + std::string(DVFSIM_EXE) + " sweep " + dir + "/e.yaml --out " + dir +
           "/out --jobs 1 --no-progress --shard " + std::to_string(k) + "/3 > " + dir + "/log" +
           std::to_string(k) + " 2>&1; echo $? > " + dir + "/rc" + std::to_string(k) + ") & ";
  ASSERT_EQ(std::system((cmd + "wait").c_str()), 0);
  for (int k = 1; k <= 3; ++k) {
    const std::string rc = slurp(dir + "/rc" + std::to_string(k));
    EXPECT_EQ(rc, "0\n") << "shard " << k << ": " << slurp(dir + "/log" + std::to_string(k));
    EXPECT_NE(slurp(dir + "/log" + std::to_string(k)).find("2 ran, 0 skipped"), std::string::npos);
  }
  const auto merged = dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/out --merge");
  EXPECT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("6 complete, 0 missing, 0 failed"), std::string::npos)
      << merged.output;
}

TEST(Shard, MembershipDoesNotDependOnWhichRunsAreComplete) {
  const std::string dir = scratch("stable");
  spit(dir + "/e.yaml", six_runs());
  const std::string base = "sweep " + dir + "/e.yaml --out " + dir + "/out ";
  const auto before = listed(dvfsim(base + "--dry-run --shard 2/3").output);
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(dvfsim(base + "--shard 1/3 --no-progress").exit_code, 0);
  const auto after = dvfsim(base + "--dry-run --shard 2/3").output;
  EXPECT_EQ(listed(after), before);
  EXPECT_EQ(listed(after, "todo").size(), 2u);  // shard 1 did not take shard 2's runs
  // And shard 1's runs are the ones now done.
  EXPECT_EQ(listed(dvfsim(base + "--dry-run --shard 1/3").output, "done").size(), 2u);
}

TEST(Shard, MergeNamesMissingAndFailedRuns) {
  const std::string dir = scratch("missing");
  std::string yaml = six_runs();
  yaml.replace(yaml.find("core_mhz: 1500"), 14, "core_mhz: [1500, 7]");  // 7 MHz: fails
  spit(dir + "/e.yaml", yaml);                                           // 9 runs, 3 fail
  const std::string base = "sweep " + dir + "/e.yaml --out " + dir + "/out ";
  // Shard 1 of 1 is everything; run it with its failures, then lose one run.
  const auto all = dvfsim(base + "--shard 1/1 --no-progress");
  EXPECT_EQ(all.exit_code, 1) << all.output;  // some runs failed
  const auto done = listed(dvfsim(base + "--dry-run").output, "done");
  ASSERT_EQ(done.size(), 6u);
  fs::remove_all(dir + "/out/runs/" + done[0]);

  const auto merged = dvfsim(base + "--merge");
  EXPECT_EQ(merged.exit_code, 1) << merged.output;
  EXPECT_NE(merged.output.find("5 complete, 1 missing, 3 failed"), std::string::npos)
      << merged.output;
  EXPECT_NE(merged.output.find("missing runs (not run, or killed):\n  " + done[0]),
            std::string::npos)
      << merged.output;
  const std::string csv = slurp(dir + "/out/results.csv");
  EXPECT_EQ(count(csv, ",ok,"), 5u) << csv;
  EXPECT_EQ(count(csv, ",missing,"), 1u) << csv;
  EXPECT_EQ(count(csv, ",failed,"), 3u) << csv;
  EXPECT_NE(csv.find(done[0] + ",missing,"), std::string::npos);

  // Running the sweep again completes the missing run (and retries the failures).
  const auto rerun = dvfsim(base + "--no-progress");
  EXPECT_EQ(rerun.exit_code, 1);
  EXPECT_NE(rerun.output.find("1 ran, 5 skipped (already complete), 3 failed"), std::string::npos)
      << rerun.output;
}

TEST(Shard, BadShardAndSlurmOptionsAreRefused) {
  const std::string dir = scratch("bad");
  spit(dir + "/e.yaml", six_runs());
  const std::string base = "sweep " + dir + "/e.yaml --out " + dir + "/out ";
  for (const char* s : {"0/3", "4/3", "3", "a/b", "1/0", "/3", "2/"}) {
    const auto r = dvfsim(base + "--shard " + s);
    EXPECT_EQ(r.exit_code, 2) << s << ": " << r.output;
    EXPECT_NE(r.output.find(std::string("--shard '") + s + "': expected K/N"), std::string::npos)
        << r.output;
  }
  auto r = dvfsim(base + "--shard 1/2 --merge");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("exclude each other"), std::string::npos) << r.output;
  r = dvfsim(base + "--array-size 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("go with --slurm"), std::string::npos) << r.output;
  r = dvfsim(base + "--slurm --dry-run --sbatch-option partition=gpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--sbatch-option 'partition=gpu'"), std::string::npos) << r.output;
  r = dvfsim_path("/nonexistent", base + "--slurm");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("sbatch is not on PATH"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/out/runs"));  // nothing ran
}

TEST(Shard, SlurmSubmitsTheMissingShardsAndADependentMerge) {
  const std::string dir = scratch("slurm");
  spit(dir + "/e.yaml", six_runs());
  const std::string base = "sweep " + dir + "/e.yaml --out " + dir + "/out ";
  const auto dry = dvfsim(base + "--slurm --array-size 3 --dry-run --sbatch-option=--time=10");
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("6 runs, 6 incomplete; 3 of 3 array tasks to run"), std::string::npos)
      << dry.output;
  EXPECT_NE(dry.output.find("#SBATCH --array=1-3\n"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("#SBATCH --time=10\n"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("--shard \"${SLURM_ARRAY_TASK_ID}/3\""), std::string::npos);
  EXPECT_NE(dry.output.find(" --merge"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir + "/out"));  // a dry run writes nothing

  // A fake sbatch: records its arguments, prints a job id.
  const std::string bin = dir + "/bin";
  fs::create_directories(bin);
  spit(bin + "/sbatch", "#!/bin/sh\necho \"$@\" >> '" + dir + "/sbatch.log'\nn=$(wc -l < '" + dir +
                            "/sbatch.log')\necho $((100 + n))\n");
  fs::permissions(bin + "/sbatch", fs::perms::owner_all);

  // Shard 2 done by hand: resubmitting asks only for tasks 1 and 3.
  ASSERT_EQ(dvfsim(base + "--shard 2/3 --no-progress").exit_code, 0);
  const auto sub = dvfsim_path(bin + ":/usr/bin:/bin", base + "--slurm --array-size 3");
  ASSERT_EQ(sub.exit_code, 0) << sub.output;
  EXPECT_NE(sub.output.find("submitted array job 101 (6 runs, 4 incomplete; 2 of 3 array tasks "
                            "to run; tasks 1,3)"),
            std::string::npos)
      << sub.output;
  const std::string script = slurp(dir + "/out/slurm/sweep.sbatch");
  EXPECT_NE(script.find("#SBATCH --array=1,3\n"), std::string::npos) << script;
  const std::string log = slurp(dir + "/sbatch.log");
  EXPECT_NE(log.find("--parsable " + dir + "/out/slurm/sweep.sbatch\n"), std::string::npos) << log;
  EXPECT_NE(log.find("--parsable --dependency=afterany:101 " + dir + "/out/slurm/merge.sbatch\n"),
            std::string::npos)
      << log;
}

TEST(Shard, SeedListIsASweepAxis) {
  // No switch_latency_us override: the B200's own lognormal switch latencies
  // (median 50 us) are drawn, so the seed changes what pass-level at a 2 %
  // budget, which switches at every phase change here, spends.
  const std::string dir = scratch("seeds");
  spit(dir + "/e.yaml", std::string("name: seeds\ntraces: [\"") + DVFSIM_SHIPPED_TRACE +
                            "\"]\ndevices: [b200]\npolicies:\n  - name: pass-level\n"
                            "    set: {max_slowdown: 2}\nseed: [1, 2, 3]\n");
  const auto r = dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/out --jobs 2 --no-progress");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = slurp(dir + "/out/results.csv");
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::stringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  const auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::vector<std::string> seeds, energies, ids;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    for (std::stringstream s(line); std::getline(s, line, ',');) f.push_back(line);
    ASSERT_GT(f.size(), col("energy_j"));
    seeds.push_back(f[col("seed")]);
    energies.push_back(f[col("energy_j")]);
    ids.push_back(f[col("run_id")]);
  }
  EXPECT_EQ(seeds, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_NE(ids[0].find("seed=1__"), std::string::npos) << ids[0];
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 3u);
  // Different draws, different energies: the spread the seeds are there to show.
  EXPECT_EQ(std::set<std::string>(energies.begin(), energies.end()).size(), 3u) << csv;

  spit(dir + "/dup.yaml", std::string("traces: [\"") + DVFSIM_SHIPPED_TRACE +
                              "\"]\ndevices: [h200]\npolicies: [max]\nseed: [1, 1]\n");
  const auto dup = dvfsim("sweep " + dir + "/dup.yaml --out " + dir + "/dup");
  EXPECT_EQ(dup.exit_code, 2);
  EXPECT_NE(dup.output.find("dup.yaml:4: field 'seed[1]': seed 1 is listed twice"),
            std::string::npos)
      << dup.output;
  spit(dir + "/neg.yaml", std::string("traces: [\"") + DVFSIM_SHIPPED_TRACE +
                              "\"]\ndevices: [h200]\npolicies: [max]\nseed: [1, -2]\n");
  const auto neg = dvfsim("sweep " + dir + "/neg.yaml --out " + dir + "/neg");
  EXPECT_EQ(neg.exit_code, 2);
  EXPECT_NE(neg.output.find("field 'seed[1]': '-2' is not a non-negative integer"),
            std::string::npos)
      << neg.output;
}

}  // namespace
