#include "sim/graph.h"

#include <gtest/gtest.h>

#include "sim/error.h"
#include "tests/sim/fixtures.h"

namespace dvfsim::testing {
namespace {

TEST(DependencyGraph, StreamOrderEventWaitsAndCriticalPath) {
  Workload w = toy_workload({1.0, 2.0, 3.0});
  w.kernels[1].stream = 1;          // kernel 1 on its own stream
  w.event_waits.push_back({2, 1});  // kernel 2 waits for kernel 1
  const auto g = build_dependency_graph(w);
  EXPECT_EQ(boost::num_edges(g), 2u);  // 0->2 (stream 0), 1->2 (event)
  check_launch_order(w, g);
  // Longest path: kernel 1 (2 ms) then kernel 2 (3 ms).
  EXPECT_EQ(critical_path_ns(w, g), 5'000'000);
}

TEST(DependencyGraph, HostSyncOrdersLaterKernelsAfterTheWaitedWork) {
  Workload w = toy_workload({1.0, 2.0}, {0.0, 5.0});
  w.kernels[1].stream = 1;
  SyncPoint s;
  s.host_begin_ns = 2'000'000;
  s.traced_end_ns = 3'000'000;
  s.waits_until_kernel = 1;
  w.syncs.push_back(s);
  const auto g = build_dependency_graph(w);
  EXPECT_EQ(boost::num_edges(g), 1u);
  EXPECT_EQ(critical_path_ns(w, g), 3'000'000);
}

}  // namespace
}  // namespace dvfsim::testing
