// End to end: the dvfsim program on the shipped GPT-3-XL H200 trace, checked
// against the measurement that came with it (golden numbers).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>

#include "apps/runner.h"
#include "hw/plan.h"
#include "tests/e2e/run_util.h"

namespace dvfsim::testing {
namespace {

constexpr double kMeasuredStepS = 0.1545;   // traces/data/...measured.json: 9.2717 s / 60 steps
constexpr double kMeasuredStepJ = 107.359;  // 6,441,557 mJ / 60 steps
constexpr double kTracedStepS = 0.15284;    // mean of the two traced steps (152.14, 153.54 ms)

class ShippedTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_dir("native");
    result_ = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                         " --device h200 --policy native --out " + dir_);
  }
  static std::string dir_;
  static ProcessResult result_;
};
std::string ShippedTrace::dir_;
ProcessResult ShippedTrace::result_;

TEST_F(ShippedTrace, NativeRunSucceedsAndWritesEveryOutput) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  for (const char* f : {"summary.json", "kernels.csv", "names.csv", "timeline.csv",
                        "clock_switches.csv", "trace.json", "clock_plan.json", "manifest.json"})
    EXPECT_FALSE(read_text(dir_ + "/" + f).empty()) << f;
}

TEST_F(ShippedTrace, NativeReproducesTracedStepAndMeasuredEnergy) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  simdjson::dom::parser parser;
  simdjson::dom::element s = parser.load(dir_ + "/summary.json");
  for (const char* key :
       {"trace", "device", "policy", "oracle", "time_s", "energy_j", "avg_power_w", "iterations",
        "time_per_iteration_s", "energy_per_iteration_j", "clock_switches", "switch_stall_s",
        "baseline", "energy_saving_pct", "slowdown_pct", "energy_saving_after_first_pct",
        "slowdown_after_first_pct"})
    EXPECT_EQ(s[key].error(), simdjson::SUCCESS) << key;
  EXPECT_EQ(int64_t(s["iterations"]), 2);
  const double t = double(s["time_per_iteration_s"]);
  const double e = double(s["energy_per_iteration_j"]);
  // The traced step is a profiled one: the replay's firmware settles on the
  // replayed timeline, and the replay adds the device gap between kernels
  // (156.68 ms, +2.5 % of it); the unprofiled measured step below is the one
  // to match.
  EXPECT_NEAR(t, kTracedStepS, 0.03 * kTracedStepS) << "time per iteration " << t;
  EXPECT_NEAR(e, kMeasuredStepJ, 0.05 * kMeasuredStepJ) << "energy per iteration " << e;
  // And within 2 % of the unprofiled measured step too.
  EXPECT_NEAR(t, kMeasuredStepS, 0.02 * kMeasuredStepS);
}

TEST_F(ShippedTrace, KernelsCsvHasOneRowPerActivityWithTheDesignColumns) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const std::string csv = read_text(dir_ + "/kernels.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  // The columns of the README's table, in its order.
  EXPECT_EQ(header,
            "kernel_index,iteration,name_id,operator_id,correlation_id,class,phase,stream,"
            "traced_start_ns,start_ns,duration_ns,flops,dram_bytes,work_source,instructions,"
            "instructions_source,l2_excess_bytes,zeroed_operands,requested_core_mhz,requested_"
            "memory_mhz,core_mhz,"
            "memory_mhz,power_w,energy_j,baseline_duration_ns,baseline_energy_j");
  std::size_t rows = 0;
  for (char c : csv) rows += c == '\n';
  EXPECT_EQ(rows, 1u + 3718u);  // 2 x (1,438 kernels + 421 memsets)
}

TEST_F(ShippedTrace, SameInputsGiveByteIdenticalOutputs) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const std::string again = temp_dir("native-again");
  const auto r = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                            " --device h200 --policy native --out " + again);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* f :
       {"summary.json", "kernels.csv", "timeline.csv", "clock_switches.csv", "trace.json"})
    EXPECT_EQ(read_text(dir_ + "/" + f), read_text(again + "/" + f)) << f;
}

TEST(EndToEnd, TraceInfoReportsIterationsKernelsAndShapesCoverage) {
  const auto r = run_dvfsim(std::string("trace info ") + DVFSIM_SHIPPED_TRACE);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1438"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gemm"), std::string::npos);
  EXPECT_NE(r.output.find("backward"), std::string::npos);
  EXPECT_NE(r.output.find("work from shapes"), std::string::npos);
}

TEST(EndToEnd, TraceInfoFlagsALaunchBoundTrace) {
  // GPT-3 medium, batch 1: 11.4 ms of GPU work in 112-135 ms traced steps.
  const auto launch_bound = run_dvfsim(std::string("trace info ") + DVFSIM_SOURCE_DIR +
                                       "/validation/h200/gpt3medium_train_b1_t512.kineto.json.gz");
  ASSERT_EQ(launch_bound.exit_code, 0) << launch_bound.output;
  EXPECT_NE(launch_bound.output.find("GPU busy 9.2 %"), std::string::npos) << launch_bound.output;
  EXPECT_NE(launch_bound.output.find("launch-bound"), std::string::npos);
  const auto gpu_bound = run_dvfsim(std::string("trace info ") + DVFSIM_SHIPPED_TRACE);
  EXPECT_NE(gpu_bound.output.find("GPU busy 97."), std::string::npos) << gpu_bound.output;
  EXPECT_EQ(gpu_bound.output.find("launch-bound"), std::string::npos);
}

TEST(EndToEnd, StaticPolicyAtLowerClockSavesEnergyAndWritesItsClockPlan) {
  const std::string dir = temp_dir("static");
  const auto r = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                            " --device h200 --policy static --set core_mhz=1200 --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  simdjson::dom::parser parser;
  simdjson::dom::element s = parser.load(dir + "/summary.json");
  EXPECT_GT(double(s["slowdown_pct"]), 5.0);
  EXPECT_GT(double(s["energy_saving_pct"]), 0.0);
  // A static pair holds in both iterations, so the second alone is slower too.
  EXPECT_GT(double(s["slowdown_after_first_pct"]), 5.0);
  EXPECT_GT(double(s["energy_saving_after_first_pct"]), 0.0);
  // The run's clock plan is one window at the static pair, repeating every iteration.
  const hw::ClockPlan plan = hw::load_clock_plan(dir + "/clock_plan.json");
  ASSERT_EQ(plan.windows.size(), 1u);
  EXPECT_EQ(plan.windows[0].clocks.core_mhz, 1200);
  EXPECT_EQ(plan.windows[0].clocks.memory_mhz, 3201);
  const double last_iteration_s = double(s["iteration_time_s"].at(1));
  EXPECT_NEAR(static_cast<double>(plan.period_ms), 1e3 * last_iteration_s, 0.5);
}

TEST(EndToEnd, SavingAfterTheFirstIterationCountsIterationsTwoToN) {
  // Baseline: iterations of 100, 200, 200 ns and 1, 4, 4 J. The run: the
  // same first iteration (profiling), then 190 + 210 ns and 3 + 3 J. After
  // the first: 8 J -> 6 J is a 25 % saving, 400 ns -> 400 ns no slowdown;
  // over the whole run 9 J -> 7 J (22.2 %).
  RunResult base, run;
  base.iteration_time_ns = {100, 200, 200};
  base.iteration_energy_j = {1.0, 4.0, 4.0};
  run.iteration_time_ns = {100, 190, 210};
  run.iteration_energy_j = {1.0, 3.0, 3.0};
  EXPECT_NEAR(*energy_saving_after_first_pct(run, base), 25.0, 1e-12);
  EXPECT_NEAR(*slowdown_after_first_pct(run, base), 0.0, 1e-12);
  run.iteration_time_ns = {100, 250, 250};  // 500 ns against 400: +25 %
  EXPECT_NEAR(*slowdown_after_first_pct(run, base), 25.0, 1e-12);
  // One iteration, or runs of different lengths: nothing to report.
  RunResult one_base, one_run;
  one_base.iteration_time_ns = {100};
  one_base.iteration_energy_j = {1.0};
  one_run.iteration_time_ns = {90};
  one_run.iteration_energy_j = {0.5};
  EXPECT_FALSE(energy_saving_after_first_pct(one_run, one_base).has_value());
  EXPECT_FALSE(slowdown_after_first_pct(one_run, one_base).has_value());
  EXPECT_FALSE(energy_saving_after_first_pct(run, one_base).has_value());
}

TEST(EndToEnd, ValidateComparesWithTheMeasurement) {
  const std::string measured =
      std::string(DVFSIM_SOURCE_DIR) + "/traces/data/gpt3xl_h200_train_b4_t2048.measured.json";
  const auto r = run_dvfsim(std::string("hw validate --trace ") + DVFSIM_SHIPPED_TRACE +
                            " --measured " + measured + " --device h200 --tolerance 5");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("energy (J)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("107.36"), std::string::npos) << r.output;
}

TEST(EndToEnd, ValidateReadsAHwMeasureRecord) {
  // A `hw measure` record of a command that ran the traced step twice:
  // 309.06 ms and 214.72 J in all, so 154.53 ms and 107.36 J per iteration.
  const std::string dir = temp_dir("hw-measure");
  const std::string m = dir + "/measurement.json";
  std::ofstream(m) << R"({"format": "dvfsim-hw-measurement/1", "duration_s": 0.30906,)"
                   << R"( "energy_j": 214.72, "gpus": []})";
  const std::string base = std::string("hw validate --trace ") + DVFSIM_SHIPPED_TRACE +
                           " --measured " + m + " --device h200";
  const auto r = run_dvfsim(base + " --iterations 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("154.53"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("107.36"), std::string::npos) << r.output;
  const auto no_n = run_dvfsim(base);
  EXPECT_EQ(no_n.exit_code, 2) << no_n.output;
  EXPECT_NE(no_n.output.find("--iterations N"), std::string::npos) << no_n.output;
  // Raw and corrected side by side; off makes them equal.
  const auto off = run_dvfsim(base + " --iterations 2 --host-overhead off");
  EXPECT_NE(off.output.find("--host-overhead off; predicted = raw"), std::string::npos)
      << off.output;
}

// A trace whose first iteration is warm-up (steady_iterations=1): `hw
// validate` compares the steady-state iteration with the measurement, as `run`
// reports it, not the mean of both (the warm-up kernel moves 10x the bytes).
TEST(EndToEnd, ValidatePredictsTheSteadyStateIterationsAsRunReportsThem) {
  const std::string dir = temp_dir("validate-steady");
  const std::string trace = dir + "/warm.trace";
  std::ofstream(trace)
      << "# dvfsim-trace v4\ndevice=h200\niterations=2\nsteady_iterations=1\n"
         "@names 2\n0\t\n1\tvoid at::native::elementwise_kernel<128, 4>\n"
         "@kernels 2\n"
         "1\t0\t7\t0\t1056\t1\t1\t128\t1\t1\t0\t0\t0\t0\telementwise\tforward\t0\t-1\t"
         "1000000\t0\t4000000000\tshapes\t0\testimated\t1\t0\n"
         "1\t0\t7\t0\t1056\t1\t1\t128\t1\t1\t0\t0\t2000000\t2000000\telementwise\t"
         "forward\t1\t-1\t100000\t0\t400000000\tshapes\t0\testimated\t2\t0\n"
         "@syncs 0\n@event_waits 0\n@iteration_begin 3\n0\n1\n2\n@end\n";
  const std::string measured = dir + "/warm.measured.json";
  std::ofstream(measured) << R"({"time_per_step_s": 0.0001, "energy_per_step_j": 0.05})";
  const auto run =
      run_dvfsim("run --trace " + trace + " --device h200 --policy native --out " + dir + "/run");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto v = run_dvfsim("hw validate --json --trace " + trace + " --measured " + measured +
                            " --device h200");
  ASSERT_LE(v.exit_code, 1) << v.output;  // 1: outside the tolerance, still a report
  simdjson::dom::parser p1, p2;
  const simdjson::dom::element s = p1.load(dir + "/run/summary.json");
  const simdjson::dom::element j = p2.parse(simdjson::padded_string(v.output));
  const double run_t = double(s["time_per_iteration_s"]);
  const double run_e = double(s["energy_per_iteration_j"]);
  // 400 MB at the H200's ~4.8 TB/s is about 0.1 ms; the warm-up's 4 GB ~1 ms.
  EXPECT_GT(run_t, 0.05e-3);
  EXPECT_LT(run_t, 0.3e-3);
  EXPECT_DOUBLE_EQ(double(j["predicted"]["time_per_iteration_s"]), run_t);
  EXPECT_DOUBLE_EQ(double(j["predicted"]["energy_per_iteration_j"]), run_e);
}

// A measurement of the shipped step (154.53 ms and 107.36 J per step) with
// more of capture.py's fields, in a file of its own, and `hw validate` of the
// shipped trace against it.
class ShippedMeasurement {
 public:
  explicit ShippedMeasurement(const std::string& name)
      : path_(temp_dir(name) + "/x.measured.json") {}
  // `fields`: more JSON members, e.g. R"("board": {"uuid": "GPU-1"})".
  void write(const std::string& fields) const {
    std::ofstream(path_) << R"({"time_per_step_s": 0.15453, "energy_per_step_j": 107.36)"
                         << (fields.empty() ? "" : ", ") << fields << "}";
  }
  // The whole file, in another of the formats hw validate reads.
  void write_whole(const std::string& json) const { std::ofstream(path_) << json; }
  ProcessResult validate(const std::string& options = "") const {
    return run_dvfsim(std::string("hw validate --trace ") + DVFSIM_SHIPPED_TRACE + " --measured " +
                      path_ + " --device h200" + options);
  }

 private:
  std::string path_;
};

TEST(EndToEnd, ValidateNamesTheBoardOfTheMeasurement) {
  // capture.py's `board` block: printed and kept in --json; the wrong types
  // are refused naming the field.
  const ShippedMeasurement m("board");
  m.write(R"("board": {"uuid": "GPU-9d9a2a6b", "serial": "1652326033923"})");
  const auto r = m.validate();
  EXPECT_NE(r.output.find("measured on board GPU-9d9a2a6b, serial 1652326033923"),
            std::string::npos)
      << r.output;
  const auto j = m.validate(" --json");
  EXPECT_NE(j.output.find("\"board_uuid\": \"GPU-9d9a2a6b\""), std::string::npos) << j.output;
  m.write(R"("board": {"uuid": 7})");
  const auto bad = m.validate();
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("field 'board.uuid' is not a string"), std::string::npos) << bad.output;
  m.write(R"("board": "GPU-9d9a2a6b")");
  EXPECT_NE(m.validate().output.find("field 'board' is not an object"), std::string::npos);
  // Without the block: no board line.
  m.write("");
  EXPECT_EQ(m.validate().output.find("measured on board"), std::string::npos);
}

TEST(EndToEnd, ValidateSaysWhenTheMeasuredRunDiverged) {
  // capture.py's `step_result`: the loss after the energy window and after
  // the profiled steps. One NaN is enough for the warning (text and --json);
  // finite or absent, no warning; the wrong types are refused naming the field.
  const ShippedMeasurement m("step-result");
  const char* warning = "the measured run diverged";
  m.write(R"("step_result": {"after_window": {"finite": true, "value": 2.3, "elements": 1}, )"
          R"("after_profile": {"finite": false, "value": null, "elements": 1}})");
  const auto r = m.validate();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(warning), std::string::npos) << r.output;
  const auto j = m.validate(" --json");
  EXPECT_NE(j.output.find("\"step_result_finite\": false"), std::string::npos) << j.output;
  m.write(R"("step_result": {"after_window": {"finite": true}, "after_profile": null})");
  const auto fine = m.validate(" --json");
  EXPECT_EQ(fine.output.find(warning), std::string::npos) << fine.output;
  EXPECT_NE(fine.output.find("\"step_result_finite\": true"), std::string::npos) << fine.output;
  m.write(R"("step_result": {"after_window": {"finite": "no"}})");
  const auto bad = m.validate();
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("field 'step_result.after_window' is not an object with a true/false "
                            "'finite'"),
            std::string::npos)
      << bad.output;
  m.write("");
  EXPECT_EQ(m.validate().output.find(warning), std::string::npos);
}

TEST(EndToEnd, ValidateReplaysAtTheMeasuredPowerLimit) {
  // capture.py's `power_limit_mW`: the board's limit when it was measured. The
  // shipped GPT-3-XL step draws ~690 W uncapped; measured under a 450 W limit
  // the firmware holds it at 450 W, so the prediction must be replayed there:
  // mean power at most 450 W, the step longer than uncapped. The device
  // file's own limit (700 W) changes nothing; one outside its 200..700 W
  // range is refused naming the field.
  const ShippedMeasurement m("power-limit");
  const std::string json = " --host-overhead off --tolerance 1000 --json";
  auto predicted = [&](const std::string& limit_mw) {
    m.write(R"("power_limit_mW": )" + limit_mw);
    const auto r = m.validate(json);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    simdjson::dom::parser parser;
    const simdjson::dom::element j = parser.parse(r.output);
    return std::pair{double(j["predicted"]["time_per_iteration_s"]),
                     double(j["predicted"]["power_w"])};
  };
  const auto [t700, p700] = predicted("700000");
  const auto [t450, p450] = predicted("450000");
  EXPECT_GT(p700, 600.0);
  EXPECT_LE(p450, 450.0 * 1.01);
  EXPECT_GT(t450, 1.05 * t700);
  const auto text = m.validate();
  EXPECT_NE(text.output.find("power limit: the board was measured at a 450 W limit (the device "
                             "file's: 700 W)"),
            std::string::npos)
      << text.output;
  // capture_gpt3.py's form (the window's totals in steps[0]) carries it too.
  m.write_whole(R"({"steps": [{"dt_s": 1.5453, "steps": 10, "energy_mJ": 1073600}], )"
                R"("power_limit_mW": 450000})");
  EXPECT_NE(m.validate().output.find("measured at a 450 W limit"), std::string::npos);
  m.write(R"("power_limit_mW": 150000)");
  const auto low = m.validate(json);
  EXPECT_EQ(low.exit_code, 2) << low.output;
  EXPECT_NE(
      low.output.find("field 'power_limit_mW': the board was measured at a 150 W power "
                      "limit, which h200 cannot be set to (its power-limit range: 200..700 W)"),
      std::string::npos)
      << low.output;
  m.write(R"("power_limit_mW": "700 W")");
  EXPECT_NE(m.validate(json).output.find("field 'power_limit_mW' is not a positive number"),
            std::string::npos);
}

TEST(EndToEnd, ValidatePointsAtLockedClocksInTheMeasurement) {
  // NVML's AppClocks reason (0x2) in capture.py's clock_event_reasons_mask
  // with the SM clock below h200's default 1980 MHz: the clocks were held,
  // which the native prediction does not know; the hint names the mean clock
  // and the flags to pass. AppClocks at the default clock (a GPU whose
  // default application clock is its top one), SwPowerCap (0x4) alone, or a
  // policy given, is no such hint.
  const ShippedMeasurement m("app-clocks");
  const char* hint = "by an application-clock or locked-clock setting";
  m.write(R"("clock_event_reasons_mask": 2, "mean_sm_mhz": 1410)");
  const auto r = m.validate();
  EXPECT_NE(r.output.find("held below the GPU's default 1980 MHz by an application-clock or "
                          "locked-clock setting (NVML clock-event reason AppClocks, mean SM "
                          "clock 1410 MHz)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--policy static --set core_mhz=F"), std::string::npos) << r.output;
  EXPECT_EQ(m.validate(" --policy static --set core_mhz=1410").output.find(hint),
            std::string::npos);
  m.write(R"("clock_event_reasons_mask": 4, "mean_sm_mhz": 1755.2)");
  EXPECT_EQ(m.validate().output.find(hint), std::string::npos);
  m.write(R"("clock_event_reasons_mask": 2, "mean_sm_mhz": 1980)");
  EXPECT_EQ(m.validate().output.find(hint), std::string::npos);
  // Application clocks set below the board's default (capture.py records
  // both): said directly, with the clock to pass.
  m.write(R"("app_clock_sm": 1410, "default_app_clock_sm": 1980, "clock_event_reasons_mask": 2, )"
          R"("mean_sm_mhz": 1409.6)");
  const auto app = m.validate();
  EXPECT_NE(app.output.find("application SM clock was set to 1410 MHz (the board's default: 1980 "
                            "MHz): the native prediction assumes the default clocks; pass --policy "
                            "static --set core_mhz=1410"),
            std::string::npos)
      << app.output;
  EXPECT_EQ(app.output.find(hint), std::string::npos) << app.output;
  m.write(R"("app_clock_sm": 1980, "default_app_clock_sm": 1980)");
  EXPECT_EQ(m.validate().output.find("application SM clock was set"), std::string::npos);
  m.write(R"("app_clock_sm": -5)");
  EXPECT_NE(m.validate().output.find("field 'app_clock_sm' is not a positive integer of MHz"),
            std::string::npos);
  m.write(R"("clock_event_reasons_mask": "AppClocks")");
  EXPECT_NE(m.validate().output.find("field 'clock_event_reasons_mask' is not a non-negative "
                                     "integer"),
            std::string::npos);
}

TEST(EndToEnd, ValidateStatesTheSpreadOfTheMeasuredWindowsHalves) {
  // capture.py's `sub_windows`: halves of 10 steps in 1.0 and 1.1 s with 100
  // and 110 J: 0.10 and 0.11 s, 10 and 11 J per step, each 0.01 / 0.105 =
  // 9.52 % apart.
  const ShippedMeasurement m("parts");
  m.write(R"("sub_windows": [{"dt_s": 1.0, "steps": 10, "energy_mJ": 100000}, )"
          R"({"dt_s": 1.1, "steps": 10, "energy_mJ": 110000}])");
  const auto r = m.validate();
  EXPECT_NE(r.output.find("the measured window's halves differ by 9.52% in time and 9.52% in "
                          "energy per step"),
            std::string::npos)
      << r.output;
  const auto j = m.validate(" --json");
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(j.output);
  EXPECT_NEAR(double(doc["measured"]["parts_time_spread_pct"]), 100.0 * 0.01 / 0.105, 1e-9);
  EXPECT_NEAR(double(doc["measured"]["parts_energy_spread_pct"]), 100.0 * 1.0 / 10.5, 1e-9);
  m.write(R"("sub_windows": [{"dt_s": 1.0, "steps": 0, "energy_mJ": 100000}, {}])");
  const auto bad = m.validate();
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("field 'sub_windows[0]': expected positive dt_s, steps and energy_mJ"),
            std::string::npos)
      << bad.output;
  m.write("");
  EXPECT_EQ(m.validate().output.find("measured window's halves"), std::string::npos);
}

TEST(EndToEnd, ValidatePredictsUnderTheConditionsTheRunRanUnder) {
  // A run measured with the core clock locked at 1410 MHz is predicted by
  // `static` at 1410: the time and energy of the last of the two iterations
  // `dvfsim run` replays, recorded in --json with its settings. An engine setting
  // (power_limit_w) set by hand replaces the measurement's own limit; the
  // host correction keeps its own flag; names are checked.
  const ShippedMeasurement m("conditions");
  m.write(R"("power_limit_mW": 700000)");
  const std::string dir = temp_dir("conditions-run");
  const auto run = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                              " --device h200 --policy static --set core_mhz=1410 "
                              "--baseline none --outputs summary --out " +
                              dir);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  simdjson::dom::parser sp;
  const simdjson::dom::element s = sp.load(dir + "/summary.json");
  const auto r = m.validate(" --policy static --set core_mhz=1410 --tolerance 1000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  simdjson::dom::parser vp;
  const simdjson::dom::element j = vp.parse(r.output);
  EXPECT_EQ(std::string_view(j["policy"]), "static");
  EXPECT_EQ(std::string_view(j["settings"]["core_mhz"]), "1410");
  // The run's last iteration: the one its clock_plan.json holds.
  EXPECT_DOUBLE_EQ(double(j["predicted"]["time_per_iteration_s"]),
                   double(s["iteration_time_s"].at(1)));
  EXPECT_DOUBLE_EQ(double(j["predicted"]["energy_per_iteration_j"]),
                   double(s["iteration_energy_j"].at(1)));
  const auto text = m.validate(" --policy static --set core_mhz=1410");
  EXPECT_NE(text.output.find("(static, core_mhz=1410) against"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("policy static: the last iteration of `dvfsim run --policy static`"),
            std::string::npos)
      << text.output;
  // 450 W by hand: capped, although the board was measured at 700 W.
  const auto capped = m.validate(" --set power_limit_w=450 --tolerance 1000 --json");
  ASSERT_EQ(capped.exit_code, 0) << capped.output;
  simdjson::dom::parser cp;
  EXPECT_LE(double(cp.parse(capped.output)["predicted"]["power_w"]), 450.0 * 1.01);
  const auto host = m.validate(" --set host_overhead=off");
  EXPECT_EQ(host.exit_code, 2);
  EXPECT_NE(host.output.find("hw validate takes it as --host-overhead"), std::string::npos)
      << host.output;
  const auto typo = m.validate(" --policy statik");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.output.find("unknown policy 'statik'"), std::string::npos) << typo.output;
}

TEST(EndToEnd, ValidatePrintsTheCapturesOwnHostPairing) {
  // capture.py's paired host times: unprofiled 50 ms a step, profiled 100 and
  // 120 ms: the profiler stretched this capture's host 110 / 50 = 2.20 times.
  const std::string dir = temp_dir("paired-host");
  const std::string m = dir + "/x.measured.json";
  std::ofstream(m) << R"({"time_per_step_s": 0.15453, "energy_per_step_j": 107.36,)"
                   << R"( "host_step_s_mean": 0.05, "profile": {"host_step_s": [0.1, 0.12]}})";
  const std::string base = std::string("hw validate --trace ") + DVFSIM_SHIPPED_TRACE +
                           " --measured " + m + " --device h200";
  const auto r = run_dvfsim(base);
  EXPECT_NE(r.output.find("profiled host time 2.20 x the unprofiled"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--set host_overhead=2.20"), std::string::npos) << r.output;
  // The shipped step is GPU-bound: its host waits for the GPU whether
  // profiled or not, which the line says.
  EXPECT_NE(r.output.find("the GPU bounds this step, so the ratio is its pace"), std::string::npos)
      << r.output;
  // A launch-bound capture's pairing is the profiler's stretch: no such caveat.
  const std::string small =
      std::string(DVFSIM_SOURCE_DIR) + "/validation/h200/classes/encoder_small_train_b2";
  const auto launch = run_dvfsim("hw validate --trace " + small + ".kineto.json.gz --measured " +
                                 small + ".measured.json --device h200 --tolerance 100");
  EXPECT_NE(launch.output.find("this capture's own pairing: profiled host time 1.97"),
            std::string::npos)
      << launch.output;
  EXPECT_EQ(launch.output.find("so the ratio is its pace"), std::string::npos) << launch.output;
  const auto j = run_dvfsim(base + " --json");
  EXPECT_NE(j.output.find("\"paired_host_factor\": 2.19999"), std::string::npos)
      << j.output;  // 0.11 / 0.05
  // The prediction with that factor, beside the default's: with a pairing of
  // 1.00 it is the raw one (the host as traced), with 2.06 the default's.
  auto paired_is = [&](const char* prof, const char* other) {
    std::ofstream(m) << R"({"time_per_step_s": 0.15453, "energy_per_step_j": 107.36,)"
                     << R"( "host_step_s_mean": 0.5, "profile": {"host_step_s": )" << prof << "}}";
    const auto out = run_dvfsim(base + " --json");
    simdjson::dom::parser parser;
    const simdjson::dom::element doc = parser.parse(out.output);
    for (const char* k : {"time_per_iteration_s", "energy_per_iteration_j"})
      EXPECT_DOUBLE_EQ(double(doc["paired"][k]), double(doc[other][k])) << prof << " " << k;
    EXPECT_NE(
        double(doc["paired"]["time_per_iteration_s"]),
        double(
            doc[std::string_view(other) == "raw" ? "predicted" : "raw"]["time_per_iteration_s"]));
  };
  paired_is("[0.5, 0.5]", "raw");
  paired_is("[1.03, 1.03]", "predicted");  // 1.03 / 0.5: 2.06 exactly
  // A profiled step that is no number is refused, naming the field.
  std::ofstream(m) << R"({"time_per_step_s": 0.15453, "energy_per_step_j": 107.36,)"
                   << R"( "host_step_s_mean": 0.05, "profile": {"host_step_s": [0.1, "x"]}})";
  const auto bad = run_dvfsim(base);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("field 'profile.host_step_s[1]'"), std::string::npos) << bad.output;
}

TEST(EndToEnd, ValidateReplaysTheHostFactorsRange) {
  // The band's two ends are the predictions with --host-overhead 1.45 and
  // 2.61: a slower host is a longer step.
  auto validate = [](const std::string& stem, const std::string& extra) {
    const auto r = run_dvfsim("hw validate --trace " + stem + ".kineto.json.gz --measured " + stem +
                              ".measured.json --device h200 --json" + extra);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;  // 1: above the tolerance
    return r.output;
  };
  auto time_of = [](const std::string& json, std::initializer_list<const char*> path) {
    simdjson::dom::parser parser;
    simdjson::dom::element e = parser.parse(json);
    for (const char* k : path) e = e[k];
    return double(e["time_per_iteration_s"]);
  };
  const std::string gpu_bound = std::string(DVFSIM_SHIPPED_TRACE)
                                    .substr(0, std::string(DVFSIM_SHIPPED_TRACE).size() -
                                                   std::string(".kineto.json.gz").size());
  const std::string launch_bound =
      std::string(DVFSIM_SOURCE_DIR) + "/validation/h200/heldout/mlp_train_b32";
  for (const std::string& stem : {gpu_bound, launch_bound}) {
    const std::string band = validate(stem, "");
    EXPECT_DOUBLE_EQ(time_of(band, {"host_band", "slow"}),
                     time_of(validate(stem, " --host-overhead 1.45"), {"predicted"}));
    EXPECT_DOUBLE_EQ(time_of(band, {"host_band", "fast"}),
                     time_of(validate(stem, " --host-overhead 2.61"), {"predicted"}));
  }
  // GPU-bound: the host hardly matters (the shipped step, 156 ms: under 1 %
  // apart); launch-bound: the time follows the host (the MLP's 1.3 ms step:
  // over 30 % apart, 2.61 / 1.45 = 1.8 at most).
  const std::string g = validate(gpu_bound, "");
  EXPECT_LT(time_of(g, {"host_band", "slow"}) / time_of(g, {"host_band", "fast"}), 1.01);
  const std::string l = validate(launch_bound, "");
  const double spread = time_of(l, {"host_band", "slow"}) / time_of(l, {"host_band", "fast"});
  EXPECT_GT(spread, 1.3);
  EXPECT_LT(spread, 1.8);
  simdjson::dom::parser parser;
  EXPECT_FALSE(bool(parser.parse(g)["host_band"]["host_bound"]));
  EXPECT_TRUE(bool(parser.parse(l)["host_band"]["host_bound"]));
  // Off: no correction, no band.
  EXPECT_EQ(validate(launch_bound, " --host-overhead off").find("host_band"), std::string::npos);
  EXPECT_NE(run_dvfsim("hw validate --trace " + launch_bound + ".kineto.json.gz --measured " +
                       launch_bound + ".measured.json --device h200")
                .output.find("host factor from 1.45 to 2.61"),
            std::string::npos);
}

// `hw validate --device h100-sxm --json` of a capture under validation/h100/
// (STEM without the suffixes) against its measured time (s) and energy (J)
// per step and the predicted errors (%) they should read.
void expect_h100_row(const std::string& stem, double time_s, double energy_j, double time_pct,
                     double energy_pct, const std::string& extra = "") {
  const std::string path = std::string(DVFSIM_SOURCE_DIR) + "/validation/h100/" + stem;
  const auto r = run_dvfsim("hw validate --trace " + path + ".kineto.json.gz --measured " + path +
                            ".measured.json --device h100-sxm --json" + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  simdjson::dom::parser parser;
  const simdjson::dom::element d = parser.parse(r.output);
  EXPECT_NEAR(double(d["measured"]["time_per_iteration_s"]), time_s, 0.00001) << stem;
  EXPECT_NEAR(double(d["measured"]["energy_per_iteration_j"]), energy_j, 0.01) << stem;
  EXPECT_NEAR(double(d["predicted"]["time_error_pct"]), time_pct, 0.1) << stem;
  EXPECT_NEAR(double(d["predicted"]["energy_error_pct"]), energy_pct, 0.1) << stem;
}

TEST(EndToEnd, RunStatesHowMuchOfTheStepRestsOnTheHostCorrection) {
  // `run` replays a Kineto trace natively at both ends of the profiler
  // factor's range too: its summary's host_range holds what a run with
  // --set host_overhead=1.45 and 2.61 gives, whatever the run's own policy.
  auto run = [](const std::string& trace, const std::string& extra) {
    const std::string dir = temp_dir("host_range");
    const auto r = run_dvfsim("run --trace " + trace + " --device h200 --out " + dir +
                              " --outputs summary " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::ifstream f(dir + "/summary.json");
    return std::pair{std::string(std::istreambuf_iterator<char>(f), {}), r.output};
  };
  auto num = [](const std::string& json, std::initializer_list<const char*> path) {
    simdjson::dom::parser parser;
    simdjson::dom::element e = parser.parse(json);
    for (const char* k : path) e = e[k];
    return double(e);
  };
  const std::string mlp =
      std::string(DVFSIM_SOURCE_DIR) + "/validation/h200/heldout/mlp_train_b32.kineto.json.gz";
  const auto [launch, launch_out] = run(mlp, "--policy static --set core_mhz=1200");
  EXPECT_DOUBLE_EQ(
      num(launch, {"host_range", "time_per_iteration_s", "slow"}),
      num(run(mlp, "--policy native --set host_overhead=1.45").first, {"time_per_iteration_s"}));
  EXPECT_DOUBLE_EQ(
      num(launch, {"host_range", "energy_per_iteration_j", "fast"}),
      num(run(mlp, "--policy native --set host_overhead=2.61").first, {"energy_per_iteration_j"}));
  // The MLP's 1.3 ms step follows its host: 0.99 to 1.75 ms (2.61 / 1.45 =
  // 1.8 at most); the shipped 156 ms step does not (within 0.2 %).
  const double spread = num(launch, {"host_range", "time_spread_pct"});
  EXPECT_GT(spread, 50.0);
  EXPECT_LT(spread, 80.0);
  simdjson::dom::parser parser;
  EXPECT_TRUE(bool(parser.parse(launch)["host_range"]["host_bound"]));
  EXPECT_NE(launch_out.find("the host bounds this step"), std::string::npos) << launch_out;
  const auto [gpu, gpu_out] = run(DVFSIM_SHIPPED_TRACE, "--policy native");
  EXPECT_LT(num(gpu, {"host_range", "time_spread_pct"}), 0.2);
  EXPECT_FALSE(bool(parser.parse(gpu)["host_range"]["host_bound"]));
  EXPECT_NE(gpu_out.find("the GPU bounds this step"), std::string::npos) << gpu_out;
  // No correction, no range.
  EXPECT_EQ(run(mlp, "--policy native --set host_overhead=off").first.find("host_range"),
            std::string::npos);
}

TEST(EndToEnd, TheH100FileTransfersTheH200DieToAMeasuredH100) {
  // validation/h100/: h100-sxm.yaml (the H200's V/F curve, device gap and L2
  // rule, power terms fitted on the microbenchmarks of one H100 board) against
  // captures on a real H100, none fitted on. ResNet-50 b128 measured 34.31 ms
  // and 19.17 J per step; the replay reads -0.53 % and -1.36 % (-3.05 % in
  // time without the device gap; in energy -2.09 % without the L2 rule and
  // the gap, -0.11 % on the H200's die terms the file held before, +1.50 %
  // before batch-norm passes drew the
  // busy term by their resident warps, -0.29 % before the convolutions' L2
  // traffic from their tiles, -2.63 % before their operand re-reads'
  // instructions, -2.30 % before its ReLUs (aten::clamp_min) took their bytes
  // from their shapes; docs/validation.md, "Another GPU: an H100 SXM"). The
  // capture's GPU is recognised from the trace (capture device h100-sxm, not
  // h200).
  expect_h100_row("resnet50_train_b128", 0.03431, 19.17, -0.53, -1.36);
  // Retargeted to the H200 (4.8 against 3.35 TB/s, same die and clocks) the
  // step is predicted 24.8 % shorter than the H100 measured: the trace's
  // kernels are scaled from the H100 they ran on, not taken as H200 times.
  const std::string stem = std::string(DVFSIM_SOURCE_DIR) + "/validation/h100/resnet50_train_b128";
  const auto h200 = run_dvfsim("hw validate --trace " + stem + ".kineto.json.gz --measured " +
                               stem + ".measured.json --device h200 --json");
  simdjson::dom::parser parser;
  EXPECT_LT(double(parser.parse(h200.output)["predicted"]["time_error_pct"]), -20.0) << h200.output;
}

TEST(EndToEnd, AnFp8StepIsPricedAtHalfA16BitFlopTimesItsRatio) {
  // validation/h100/fp8/: eight FFN blocks with FP8 (e4m3) matrix products,
  // 25.73 ms and 17.82 J per step at the 700 W limit on an H100, held out
  // from the FP8 ratio's GEMM rows. Its nvjet "qqtst" GEMMs run on the FP8
  // pipe: t +1.14 %, E +1.32 % (its bf16 twin -4.31 / -4.53 %; before its
  // layer norms took their instructions from their shapes, +0.66 / +1.57 %).
  // On the H200's die terms the file held before: -0.90 / -0.46 %, as 16-bit
  // work +0.52 / +1.35 %, at half a 16-bit FLOP without the ratio -4.31 /
  // -3.92 %.
  expect_h100_row("fp8/ffn_fp8_infer_t8192", 0.02573, 17.82, 1.14, 1.32);
}

TEST(EndToEnd, AMultiStreamLstmKeepsTheOrderTheGpuRanItsStreamsIn) {
  // validation/h200/heldout/: cuDNN's LSTM runs each step on four streams
  // joined by event waits the trace does not record; 22.41 ms and 13.01 J
  // per step on an H200. A kernel waits for later launches the capture ran
  // before it and starts the device gap after every kernel it waited for:
  // t -1.57 %, E -2.55 % (-3.94 / -6.02 % when the capture order named only
  // earlier launches and the gap followed the stream's own kernel; E -5.12 %
  // before its gate kernels took their own bytes from the weight shapes).
  const std::string stem =
      std::string(DVFSIM_SOURCE_DIR) + "/validation/h200/heldout/lstm_train_b64_t128";
  const auto r = run_dvfsim("hw validate --trace " + stem + ".kineto.json.gz --measured " + stem +
                            ".measured.json --device h200 --json --tolerance 50");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  simdjson::dom::parser parser;
  const simdjson::dom::element d = parser.parse(r.output);
  EXPECT_NEAR(double(d["measured"]["time_per_iteration_s"]), 0.02241, 0.00001);
  EXPECT_NEAR(double(d["predicted"]["time_error_pct"]), -1.57, 0.1);
  EXPECT_NEAR(double(d["predicted"]["energy_error_pct"]), -2.55, 0.1);
}

TEST(EndToEnd, BatchNormPassesDrawTheBusyTermByTheirResidentWarps) {
  // validation/h100/families/: NCHW batch norm on 64 x 128 x 56 x 56, whose
  // statistics and backward kernels run 128 blocks of 16 warps, one an SM
  // (busy share 128 / 132 x sqrt(16 / 64)): 13.91 ms and 3.81 J per step,
  // +10.91 % in energy, +33.94 % priced as if the blocks filled their SMs
  // (+15.06 and +46.27 % on the H200's die terms, on which the rule was
  // fitted; the board's streaming control reads +11.3 %).
  // (--tolerance 50: the verdict's exit status is not what is tested.)
  expect_h100_row("families/op_bn_nchw_c128", 0.01391, 3.815, 1.07, 10.91, " --tolerance 50");
  expect_h100_row("families/op_bn_nchw_c128", 0.01391, 3.815, 1.07, 33.94,
                  " --tolerance 50 --set resident_warps=off");
  // Held out: channels-last batch norm at 16 channels on 128 x 112 x 112
  // (another board, captured after the rule was set): +6.12 % against +28.04 %.
  expect_h100_row("families/norms/op_bn_cl_c16_hw112", 0.01027, 3.192, 1.96, 6.12,
                  " --tolerance 50");
  expect_h100_row("families/norms/op_bn_cl_c16_hw112", 0.01027, 3.192, 1.96, 28.04,
                  " --tolerance 50 --set resident_warps=off");
}

TEST(EndToEnd, CalibratePredictOnlyFitsAndWritesNothing) {
  // The data suite's rows against h200.yaml as it is: the fp16 GEMM within
  // 0.3 pp of its bf16 twin (-1.88 %), since the file holds their ratio.
  const std::string csv =
      std::string(DVFSIM_SOURCE_DIR) + "/models/calibration/h200/measurements_data.csv";
  const auto r = run_dvfsim("calibrate --device h200 --measurements " + csv + " --predict-only");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gemm_fp16_m8192_n8192_k8192                     692.2        677.5    "
                          "-2.12%"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(nothing fitted)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;
  // A fit needs somewhere to write; --predict-only writes nowhere.
  const auto no_out = run_dvfsim("calibrate --device h200 --measurements " + csv);
  EXPECT_EQ(no_out.exit_code, 2) << no_out.output;
  EXPECT_NE(no_out.output.find("--out FILE is required (or --predict-only)"), std::string::npos)
      << no_out.output;
  const auto both = run_dvfsim("calibrate --device h200 --measurements " + csv +
                               " --predict-only --out " + temp_dir("calibrate") + "/x.yaml");
  EXPECT_EQ(both.exit_code, 2) << both.output;
}

}  // namespace
}  // namespace dvfsim::testing
