// Concurrent streams end to end: the four-stream V100 recommender excerpt
// (tests/traces/data/foreign/v100_recsys_excerpt.json.gz) replayed with the
// overlap its capture shows (docs/design.md, "Concurrent streams").
#include <gtest/gtest.h>
#include <simdjson.h>

#include "tests/e2e/run_util.h"

namespace dvfsim::testing {
namespace {

const std::string kRecsys =
    std::string(DVFSIM_SOURCE_DIR) + "/tests/traces/data/foreign/v100_recsys_excerpt.json.gz";

// Time with two or more activities at once in the excerpt: 15.789 ms (an
// event sweep over its 1,360 activities; 10.5 ms of it memcpys on stream 16
// beside stream 7's kernels, 5.2 ms the NCCL kernel on stream 15).
constexpr double kTracedOverlapMs = 15.789;

TEST(ConcurrentStreams, TraceInfoReportsTheTracedOverlap) {
  const auto r = run_dvfsim("trace info " + kRecsys);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("4 stream(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("overlap          15.789 ms"), std::string::npos) << r.output;
}

TEST(ConcurrentStreams, RecsysExcerptReplaysItsCapturedOverlap) {
  // On the V100 model with the traced host timeline. Replayed 12.88 ms: the
  // excerpt's stream 7 has 1,166 activities launched before its window (no
  // launch call: all ready at once), so its traced idle gaps (5.7 ms) close
  // and it ends before the NCCL kernel starts, which it overlapped for 5.2 ms
  // in the trace; the memcpy overlap is kept (11.4 ms replayed, 10.5 traced).
  // One kernel at a time (before concurrent streams) the replay overlapped
  // nothing; with a sync waiting for all launched work on every stream rather
  // than for the work that had ended when the host resumed, 0.65 ms.
  const std::string dir = temp_dir("streams-recsys");
  const auto r = run_dvfsim("run --trace " + kRecsys +
                            " --device v100 --capture-device v100 --policy native --baseline none "
                            "--set host_overhead=off --out " +
                            dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("concurrent streams: 15.789 ms"), std::string::npos) << r.output;
  simdjson::dom::parser parser;
  simdjson::dom::element s = parser.load(dir + "/summary.json");
  const double traced = double(s["overlap_ms"]["traced"]);
  const double replayed = double(s["overlap_ms"]["replayed"]);
  EXPECT_NEAR(traced, kTracedOverlapMs, 1e-3);
  EXPECT_GT(replayed, 0.75 * traced) << replayed;
  EXPECT_LT(replayed, 1.1 * traced) << replayed;
}

}  // namespace
}  // namespace dvfsim::testing
