// The shipped GPT-3-XL H200 trace: structure, coverage and capture clocks.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/traces/test_util.h"
#include "traces/kineto.h"
#include "traces/stats.h"

namespace dvfsim {
namespace {

class ShippedTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { w_ = new Workload(read_kineto(test::shipped_trace_path())); }
  static void TearDownTestSuite() { delete w_; }
  static Workload* w_;
};
Workload* ShippedTrace::w_ = nullptr;

TEST_F(ShippedTrace, TwoIterationsOf1438Kernels) {
  const TraceStats s = compute_stats(*w_);
  ASSERT_EQ(s.iterations, 2);
  for (const IterationStats& it : s.per_iteration) {
    EXPECT_EQ(it.kernels, 1438u);
    EXPECT_EQ(it.memsets, 421u);
    EXPECT_EQ(it.memcpys, 0u);
  }
  EXPECT_EQ(w_->kernels.size(), 2u * (1438 + 421));
}

TEST_F(ShippedTrace, ShapesCoverAtLeast95PercentOfGpuTime) {
  const TraceStats s = compute_stats(*w_);
  EXPECT_GE(s.shapes_share, 0.95);
}

TEST_F(ShippedTrace, StepTimeAndPhases) {
  const TraceStats s = compute_stats(*w_);
  for (const IterationStats& it : s.per_iteration) {
    EXPECT_GT(it.step_time_ns, 140'000'000);  // measured 154.5 ms/step without profiler
    EXPECT_LT(it.step_time_ns, 170'000'000);
  }
  for (int p : {0, 1, 2}) EXPECT_GT(s.phase_time_ns[p], 0) << to_string(static_cast<Phase>(p));
  // Per-iteration FLOPs: ~6 x 1.31e9 matmul parameters x 8192 tokens + attention.
  EXPECT_NEAR(s.per_iteration[0].flops, 70.3e12, 1.0e12);
}

TEST_F(ShippedTrace, CaptureClocksFromNvmlSamples) {
  EXPECT_EQ(w_->capture.device, "h200");
  EXPECT_EQ(w_->capture.device_name, "NVIDIA H200");
  EXPECT_EQ(w_->capture.core_mhz, 1713);  // time-weighted mean 1712.6 MHz
  EXPECT_EQ(w_->capture.memory_mhz, 3201);
  EXPECT_NE(w_->capture.clocks_source.find("nvml_samples.csv"), std::string::npos);
}

TEST_F(ShippedTrace, HostSyncAtTheEnd) {
  ASSERT_EQ(w_->syncs.size(), 2u);
  EXPECT_EQ(w_->syncs[0].kind, SyncPoint::Kind::device);
  EXPECT_EQ(w_->syncs[0].waits_until_kernel, w_->kernels.size());
}

TEST_F(ShippedTrace, PrintStatsHasUnits) {
  std::ostringstream out;
  print_stats(compute_stats(*w_), out);
  const std::string text = out.str();
  EXPECT_NE(text.find("gpu_ms"), std::string::npos);
  EXPECT_NE(text.find("1438"), std::string::npos);
  EXPECT_NE(text.find("MHz"), std::string::npos);
}

}  // namespace
}  // namespace dvfsim
