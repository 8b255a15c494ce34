// End to end: `dvfsim sweep` on the shipped trace — the product, results.csv,
// resuming, the undeclared-parameter rule, failing runs and bad experiment files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/run_util.h"

namespace {

using dvfsim::testing::ProcessResult;
using Exec = ProcessResult;

Exec dvfsim(const std::string& args) {
  return dvfsim::testing::run_dvfsim(args);
}
std::string slurp(const std::string& path) {
  return dvfsim::testing::read_text(path);
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string scratch(const std::string& name) {
  return dvfsim::testing::temp_dir("sweep-" + name);
}

// A CSV table: header and rows as maps (quoted fields understood).
struct Csv {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

Csv parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> lines(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      lines.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      lines.back().push_back(field);
      field.clear();
      lines.emplace_back();
    } else {
      field += c;
    }
  }
  if (lines.back().empty()) lines.pop_back();
  Csv csv;
  if (lines.empty()) return csv;
  csv.header = lines[0];
  for (std::size_t r = 1; r < lines.size(); ++r) {
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < csv.header.size() && c < lines[r].size(); ++c)
      row[csv.header[c]] = lines[r][c];
    EXPECT_EQ(lines[r].size(), csv.header.size())
        << "row " << r << " has a different number of fields";
    csv.rows.push_back(std::move(row));
  }
  return csv;
}

std::string tiny_experiment(const std::string& extra_policy_lines = "",
                            const std::string& set = "") {
  return std::string(
             "name: tiny\n"
             "description: two policies x two latencies on the H200\n"
             "traces: [\"") +
         DVFSIM_SHIPPED_TRACE +
         "\"]\n"
         "devices: [h200]\n"
         "policies:\n"
         "  - max\n"
         "  - {name: static, set: {core_mhz: 1500, memory_mhz: 3201}}\n" +
         extra_policy_lines + "set:\n  switch_latency_us: [1, 1000]\n" + set + "seed: 7\n";
}

TEST(Sweep, TinyProductWritesResultsAndResumes) {
  const std::string dir = scratch("tiny");
  spit(dir + "/tiny.yaml", tiny_experiment());
  const Exec first = dvfsim("sweep " + dir + "/tiny.yaml --out " + dir + "/out --jobs 2");
  ASSERT_EQ(first.exit_code, 0) << first.output;

  const std::string text = slurp(dir + "/out/results.csv");
  const Csv csv = parse_csv(text);
  ASSERT_EQ(csv.rows.size(), 4u) << text;
  for (const char* col : {"device",
                          "policy",
                          "switch_latency_us",
                          "energy_saving_pct",
                          "slowdown_pct",
                          "trace",
                          "oracle",
                          "memory_stall_us",
                          "data_activity",
                          "zeroed_operands",
                          "resident_warps",
                          "core_mhz",
                          "time_s",
                          "energy_j",
                          "avg_power_w",
                          "iterations",
                          "time_per_iteration_s",
                          "energy_per_iteration_j",
                          "clock_switches",
                          "switch_stall_s",
                          "off_target_s",
                          "power_capped_s",
                          "baseline_policy",
                          "baseline_time_s",
                          "baseline_energy_j",
                          "run_dir",
                          "error"})
    EXPECT_NE(std::find(csv.header.begin(), csv.header.end(), col), csv.header.end()) << col;
  // Parameter columns come from the policy registry: static declares core_mhz
  // (and memory_mhz); neither max nor static has max_slowdown.
  EXPECT_EQ(std::find(csv.header.begin(), csv.header.end(), "max_slowdown"), csv.header.end());

  std::map<std::string, int> per_policy;
  for (const auto& r : csv.rows) {
    EXPECT_EQ(r.at("status"), "ok") << r.at("error");
    EXPECT_EQ(r.at("device"), "h200");
    EXPECT_EQ(r.at("baseline_policy"), "native");
    EXPECT_EQ(r.at("seed"), "7");
    EXPECT_TRUE(r.at("switch_latency_us") == "1" || r.at("switch_latency_us") == "1000")
        << r.at("switch_latency_us");
    EXPECT_FALSE(r.at("energy_saving_pct").empty());
    EXPECT_GT(std::stod(r.at("energy_j")), 0.0);
    EXPECT_TRUE(std::filesystem::exists(dir + "/out/" + r.at("run_dir") + "/summary.json"))
        << r.at("run_dir");
    // Per-run kernels.csv only with `kernels_csv: true` (the next test).
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/" + r.at("run_dir") + "/kernels.csv"));
    EXPECT_TRUE(std::filesystem::exists(dir + "/out/" + r.at("run_dir") + "/clock_switches.csv"));
    ++per_policy[r.at("policy")];
  }
  EXPECT_EQ(per_policy["max"], 2);
  EXPECT_EQ(per_policy["static"], 2);
  // static at a lower clock than native's saves energy and costs time.
  for (const auto& r : csv.rows)
    if (r.at("policy") == "static") {
      EXPECT_EQ(r.at("core_mhz"), "1500");
      EXPECT_GT(std::stod(r.at("energy_saving_pct")), 0.0);
      EXPECT_GT(std::stod(r.at("slowdown_pct")), 0.0);
    } else {
      EXPECT_EQ(r.at("core_mhz"), "");  // max has no such parameter
    }

  // Again: every run is complete and skipped, results.csv is byte-identical.
  const Exec second = dvfsim("sweep " + dir + "/tiny.yaml --out " + dir + "/out --jobs 2");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("0 ran, 4 skipped"), std::string::npos) << second.output;
  EXPECT_EQ(slurp(dir + "/out/results.csv"), text);

  // A changed configuration is not mistaken for a complete run: the seed
  // changes every run's id, so the four runs are new.
  std::string reseeded = tiny_experiment();
  reseeded.replace(reseeded.find("seed: 7"), 7, "seed: 8");
  spit(dir + "/tiny.yaml", reseeded);
  const Exec third = dvfsim("sweep " + dir + "/tiny.yaml --out " + dir + "/out --jobs 2");
  ASSERT_EQ(third.exit_code, 0) << third.output;
  EXPECT_NE(third.output.find("4 ran, 0 skipped"), std::string::npos) << third.output;
}

TEST(Sweep, KernelsCsvKeyWritesEachRunsKernels) {
  const std::string dir = scratch("kernels-csv");
  spit(dir + "/k.yaml", tiny_experiment() + "kernels_csv: true\n");
  const Exec r = dvfsim("sweep " + dir + "/k.yaml --out " + dir + "/out --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Csv csv = parse_csv(slurp(dir + "/out/results.csv"));
  ASSERT_EQ(csv.rows.size(), 4u);
  for (const auto& row : csv.rows) {
    const std::string kernels = slurp(dir + "/out/" + row.at("run_dir") + "/kernels.csv");
    // One header line and one row per activity of the shipped trace (3,718).
    EXPECT_EQ(std::count(kernels.begin(), kernels.end(), '\n'), 3719) << row.at("run_dir");
  }
  spit(dir + "/bad.yaml", tiny_experiment() + "kernels_csv: sometimes\n");
  const Exec bad = dvfsim("sweep " + dir + "/bad.yaml --out " + dir + "/out2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("kernels_csv"), std::string::npos) << bad.output;
}

// A sweep shares work between its runs (prepared models, baselines, plans
// computed once per distinct input: apps/runner.h RunCache); each run's
// summary.json is byte for byte the one `dvfsim run` writes for that point
// alone.
TEST(Sweep, SharedWorkGivesEachRunItsSingleRunResult) {
  const std::string dir = scratch("shared");
  spit(dir + "/s.yaml", std::string("name: shared\n"
                                    "description: planners across two latencies on the B200\n"
                                    "traces: [\"") +
                            DVFSIM_SHIPPED_TRACE +
                            "\"]\n"
                            "devices: [b200]\n"
                            "policies:\n"
                            "  - {name: kernel-oracle, set: {aggregation: global}}\n"
                            "  - latency-oracle\n"
                            "  - static-best\n"
                            "set:\n  switch_latency_us: [10, 10000]\n  max_slowdown: [5]\n"
                            "seed: 1\n");
  const Exec r = dvfsim("sweep " + dir + "/s.yaml --out " + dir + "/out --jobs 2 --no-progress");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Six runs, one baseline per latency; kernel-oracle's knapsack at 10 ms
  // is the one at 10 us, and latency-oracle's per-kernel knapsacks are
  // kernel-oracle's: plans are reused.
  EXPECT_NE(r.output.find("shared work: 2 baseline replays for 6 runs"), std::string::npos)
      << r.output;
  const auto at = r.output.find(" computed, ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GT(std::stoi(r.output.substr(at + 11)), 0) << r.output;
  const Csv csv = parse_csv(slurp(dir + "/out/results.csv"));
  ASSERT_EQ(csv.rows.size(), 6u);
  for (const auto& row : csv.rows) {
    std::string set =
        " --set switch_latency_us=" + row.at("switch_latency_us") + " --set max_slowdown=5";
    if (row.at("policy") == "kernel-oracle") set += " --set aggregation=global";
    const std::string one = dir + "/one-" + row.at("policy") + "-" + row.at("switch_latency_us");
    const Exec single =
        dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE + " --device b200 --policy " +
               row.at("policy") + set + " --seed 1 --outputs summary --out " + one);
    ASSERT_EQ(single.exit_code, 0) << single.output;
    // The same file but for the trace's path (the sweep's is relative to the
    // experiment's directory).
    auto after_trace = [](const std::string& s) { return s.substr(s.find("\"device\"")); };
    const std::string swept = slurp(dir + "/out/" + row.at("run_dir") + "/summary.json");
    EXPECT_TRUE(after_trace(swept) == after_trace(slurp(one + "/summary.json")))
        << row.at("run_dir");
    // At 10 us the plans save energy (plans that do something are compared).
    if (row.at("switch_latency_us") == "10") {
      EXPECT_GT(std::stod(row.at("energy_saving_pct")), 5.0) << row.at("run_dir");
    }
  }
}

TEST(Sweep, ParameterThatAPolicyDoesNotDeclareIsSkippedForIt) {
  const std::string dir = scratch("undeclared");
  // core_mhz is swept for every policy; max and native do not declare it, so
  // each runs once (not once per value) with an empty core_mhz cell.
  spit(dir + "/e.yaml", tiny_experiment("  - native\n", "  core_mhz: [1200, 1500]\n"));
  const Exec r = dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/out --jobs 2 --no-progress");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Csv csv = parse_csv(slurp(dir + "/out/results.csv"));
  std::map<std::string, int> per_policy;
  for (const auto& row : csv.rows) {
    ++per_policy[row.at("policy")];
    if (row.at("policy") != "static") {
      EXPECT_EQ(row.at("core_mhz"), "");
    }
  }
  EXPECT_EQ(per_policy["max"], 2);     // x 2 latencies
  EXPECT_EQ(per_policy["native"], 2);  // x 2 latencies
  // static: its own core_mhz list (1500) replaces the experiment-wide one.
  EXPECT_EQ(per_policy["static"], 2);
  EXPECT_EQ(csv.rows.size(), 6u);
}

TEST(Sweep, FailingRunIsRecordedAndExitCodeIsOne) {
  const std::string dir = scratch("failing");
  std::string yaml = tiny_experiment();
  yaml.replace(yaml.find("core_mhz: 1500"), 14, "core_mhz: [1500, 7]");
  spit(dir + "/e.yaml", yaml);
  const Exec r = dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/out --jobs 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const Csv csv = parse_csv(slurp(dir + "/out/results.csv"));
  ASSERT_EQ(csv.rows.size(), 6u);
  int failed = 0;
  for (const auto& row : csv.rows)
    if (row.at("status") == "failed") {
      ++failed;
      EXPECT_EQ(row.at("core_mhz"), "7");
      EXPECT_NE(row.at("error").find("7"), std::string::npos) << row.at("error");
      EXPECT_FALSE(std::filesystem::exists(dir + "/out/" + row.at("run_dir") + "/summary.json"));
    } else {
      EXPECT_TRUE(row.at("error").empty());
    }
  EXPECT_EQ(failed, 2);
}

TEST(Sweep, BadExperimentFileNamesTheFileAndTheField) {
  const std::string dir = scratch("bad");
  struct Case {
    std::string yaml, field;
  };
  std::string unknown_key = tiny_experiment();
  unknown_key.replace(unknown_key.find("policies:"), 9, "polices:");
  const std::vector<Case> cases = {
      {unknown_key, "polices"},
      {tiny_experiment("", "  max_slowdonw: [1]\n"), "max_slowdonw"},
      {std::string("traces: [\"") + DVFSIM_SHIPPED_TRACE + "\"]\ndevices: []\npolicies: [max]\n",
       "devices"},
      {std::string("traces: [\"") + DVFSIM_SHIPPED_TRACE +
           "\"]\ndevices: [h200]\npolicies: [max]\n"
           "set: {switch_latency_us: []}\n",
       "switch_latency_us"},
      // An engine setting's value is checked when the file is read (apps/settings.h).
      {std::string("traces: [\"") + DVFSIM_SHIPPED_TRACE +
           "\"]\ndevices: [h200]\npolicies: [max]\n"
           "set: {data_activity: [1, 1.5]}\n",
       "set.data_activity[1]"},
      {std::string("traces: [\"") + DVFSIM_SHIPPED_TRACE +
           "\"]\ndevices: [h200]\npolicies: [no-such-policy]\n",
       "policies[0]"},
      {"traces: [no/such/trace.json]\ndevices: [h200]\npolicies: [max]\n", "traces[0]"},
      {"traces: [x\n", ""},  // not YAML at all
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string file = dir + "/bad" + std::to_string(i) + ".yaml";
    spit(file, cases[i].yaml);
    const Exec r = dvfsim("sweep " + file + " --out " + dir + "/out" + std::to_string(i));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(file), std::string::npos) << "no file name in: " << r.output;
    EXPECT_NE(r.output.find(cases[i].field), std::string::npos)
        << "no field '" << cases[i].field << "' in: " << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out" + std::to_string(i) + "/results.csv"));
  }
}

TEST(Sweep, ShippedExperimentFilesParse) {
  // Every experiment of experiments/ and experiments/small/ is well-formed
  // (only checked when all its policies and devices are built in).
  for (const char* sub : {"/experiments", "/experiments/small"}) {
    const std::filesystem::path d = std::string(DVFSIM_SOURCE_DIR) + sub;
    if (!std::filesystem::is_directory(d)) continue;
    for (const auto& ent : std::filesystem::directory_iterator(d)) {
      if (ent.path().extension() != ".yaml") continue;
      const Exec r = dvfsim("sweep " + ent.path().string() + " --out /nonexistent --dry-run");
      if (r.exit_code == 2 && (r.output.find("unknown policy") != std::string::npos ||
                               r.output.find("unknown device") != std::string::npos))
        continue;  // a policy or device of another milestone
      EXPECT_EQ(r.exit_code, 0) << ent.path() << ": " << r.output;
    }
  }
}

}  // namespace
