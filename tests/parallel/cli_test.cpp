// `dvfsim run --parallel` on the shipped trace (small M: fast), its
// summary.json fields, and bad input.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <fstream>

#include "tests/e2e/run_util.h"

namespace dvfsim::testing {
namespace {

std::string fmt_args(const std::string& dir) {
  return std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
         " --device a100-sxm --policy max --parallel pp=2,microbatches=2 --set straggler=1:20 "
         "--out " +
         dir;
}

TEST(ParallelCli, SummaryHasGpusPerGpuAndCriticalPath) {
  const std::string dir = temp_dir("parallel-cli");
  const ProcessResult r = run_dvfsim(fmt_args(dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  simdjson::dom::parser parser;
  const simdjson::dom::element s = parser.load(dir + "/summary.json");
  EXPECT_EQ(int64_t(s["gpus"]), 2);
  EXPECT_EQ(int64_t(s["parallel"]["pp"]), 2);
  EXPECT_EQ(int64_t(s["parallel"]["microbatches"]), 2);
  EXPECT_EQ(int64_t(s["parallel"]["layers"]), 24);
  EXPECT_EQ(std::string_view(s["parallel"]["schedule"]), "1f1b");
  EXPECT_EQ(int64_t(s["parallel"]["straggler"]["rank"]), 1);
  // The job's energy is the sum of its GPUs'; the straggler (rank 1, last
  // stage, +20 %) is busier than rank 0.
  double sum = 0;
  std::vector<double> busy;
  for (simdjson::dom::element g : s["per_gpu"].get_array()) {
    sum += double(g["energy_j"]);
    busy.push_back(double(g["busy_s"]));
  }
  EXPECT_NEAR(sum, double(s["energy_per_iteration_j"]), 1e-6 * sum);
  ASSERT_EQ(busy.size(), 2u);
  EXPECT_GT(busy[1], busy[0]);
  EXPECT_NEAR(double(s["critical_path_s"]), double(s["time_per_iteration_s"]), 1e-9);
}

TEST(ParallelCli, BadSpecIsExitTwoNamingTheKey) {
  const std::string dir = temp_dir("parallel-bad");
  ProcessResult r = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                               " --device a100-sxm --policy max --parallel pp=2,dq=3 --out " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown key 'dq'"), std::string::npos) << r.output;
  r = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                 " --device a100-sxm --policy max --parallel pp=2 --set straggler=9:20 --out " +
                 dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("straggler=9:20"), std::string::npos) << r.output;
}

TEST(ParallelCli, PerseusSavesEnergyWritesFrontierAndNeedsParallel) {
  const std::string dir = temp_dir("parallel-perseus");
  ProcessResult r = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                               " --device a100-sxm --policy perseus --baseline max --parallel "
                               "pp=2,microbatches=4 --set switch_latency_us=0 --out " +
                               dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  simdjson::dom::parser parser;
  const simdjson::dom::element s = parser.load(dir + "/summary.json");
  EXPECT_GT(double(s["energy_saving_pct"]), 1.0) << r.output;
  EXPECT_LT(double(s["slowdown_pct"]), 3.0) << r.output;
  const std::string frontier = read_text(dir + "/frontier.csv");
  EXPECT_EQ(frontier.rfind("plan,iteration_s,energy_j\n", 0), 0u);
  EXPECT_GT(std::count(frontier.begin(), frontier.end(), '\n'), 100);
  r = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                 " --device a100-sxm --policy perseus --out " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--parallel"), std::string::npos) << r.output;
}

TEST(ParallelCli, SweepTakesParallelAndStragglerAsParameters) {
  const std::string dir = temp_dir("parallel-sweep");
  {
    std::ofstream f(dir + "/e.yaml");
    f << "name: tiny\ntraces: [" << DVFSIM_SHIPPED_TRACE
      << "]\ndevices: [a100-sxm]\npolicies: [max]\nset:\n  parallel: [\"pp=2,microbatches=2\"]\n"
         "  straggler: [\"1:0\", \"1:20\"]\nbaseline: none\n";
  }
  const ProcessResult r = run_dvfsim("sweep " + dir + "/e.yaml --out " + dir + "/out --jobs 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read_text(dir + "/out/results.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  for (const char* col : {"parallel", "straggler", "gpus", "critical_path_s"})
    EXPECT_NE(header.find(col), std::string::npos) << col << " in " << header;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3) << csv;
  EXPECT_NE(csv.find("1:20"), std::string::npos) << csv;
}

}  // namespace
}  // namespace dvfsim::testing
