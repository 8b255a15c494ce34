// Native format: exact round trip and dispatch.
#include "traces/native.h"

#include <gtest/gtest.h>

#include "tests/traces/test_util.h"
#include "traces/kineto.h"
#include "traces/trace.h"

namespace dvfsim {
namespace {

void expect_identical(const Workload& a, const Workload& b) {
  EXPECT_EQ(a.capture.device, b.capture.device);
  EXPECT_EQ(a.capture.device_name, b.capture.device_name);
  EXPECT_EQ(a.capture.core_mhz, b.capture.core_mhz);
  EXPECT_EQ(a.capture.memory_mhz, b.capture.memory_mhz);
  EXPECT_EQ(a.capture.clocks_source, b.capture.clocks_source);
  EXPECT_EQ(a.capture.instructions_source, b.capture.instructions_source);
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.iteration_begin, b.iteration_begin);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    const Kernel &x = a.kernels[i], &y = b.kernels[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(x.name_id, y.name_id);
    EXPECT_EQ(x.op_id, y.op_id);
    EXPECT_EQ(x.stream, y.stream);
    EXPECT_EQ(x.device, y.device);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(x.launch.grid[d], y.launch.grid[d]);
      EXPECT_EQ(x.launch.block[d], y.launch.block[d]);
    }
    EXPECT_EQ(x.launch.registers_per_thread, y.launch.registers_per_thread);
    EXPECT_EQ(x.launch.shared_memory_bytes, y.launch.shared_memory_bytes);
    EXPECT_EQ(x.host_launch_ns, y.host_launch_ns);
    EXPECT_EQ(x.traced_start_ns, y.traced_start_ns);
    EXPECT_EQ(x.cls, y.cls);
    EXPECT_EQ(x.phase, y.phase);
    EXPECT_EQ(x.iteration, y.iteration);
    EXPECT_EQ(x.layer, y.layer);
    EXPECT_EQ(x.work.duration_ns, y.work.duration_ns);
    EXPECT_EQ(x.work.flops, y.work.flops);  // bit-exact, not approximately equal
    EXPECT_EQ(x.work.dram_bytes, y.work.dram_bytes);
    EXPECT_EQ(x.work.source, y.work.source);
    EXPECT_EQ(x.work.instructions, y.work.instructions);
    EXPECT_EQ(x.work.instructions_source, y.work.instructions_source);
  }
  ASSERT_EQ(a.syncs.size(), b.syncs.size());
  for (std::size_t i = 0; i < a.syncs.size(); ++i) {
    EXPECT_EQ(a.syncs[i].kind, b.syncs[i].kind);
    EXPECT_EQ(a.syncs[i].host_begin_ns, b.syncs[i].host_begin_ns);
    EXPECT_EQ(a.syncs[i].traced_end_ns, b.syncs[i].traced_end_ns);
    EXPECT_EQ(a.syncs[i].waits_until_kernel, b.syncs[i].waits_until_kernel);
    EXPECT_EQ(a.syncs[i].stream, b.syncs[i].stream);
  }
  ASSERT_EQ(a.event_waits.size(), b.event_waits.size());
  for (std::size_t i = 0; i < a.event_waits.size(); ++i) {
    EXPECT_EQ(a.event_waits[i].kernel, b.event_waits[i].kernel);
    EXPECT_EQ(a.event_waits[i].after, b.event_waits[i].after);
  }
}

TEST(NativeFormat, ShippedTraceRoundTripIsExact) {
  test::TempDir dir;
  const Workload original = read_kineto(test::shipped_trace_path());
  for (const char* name : {"trace.dvfsim", "trace.dvfsim.gz"}) {
    const std::string path = dir.path(name);
    write_native(original, path);
    EXPECT_EQ(detect_trace_format(path), TraceFormat::native);
    const Workload copy = read_trace(path);
    EXPECT_EQ(copy.source_path, path);
    expect_identical(original, copy);
    // Writing the copy again gives the same bytes.
    EXPECT_EQ(format_native(copy), format_native(original));
  }
}

TEST(NativeFormat, EscapesAwkwardNamesAndEventWaits) {
  test::TempDir dir;
  Workload w = read_kineto(test::test_data("mini_event_wait.json"));
  w.names[w.kernels[0].name_id] = "tab\there\\ and\nnewline";
  w.kernels[1].work.flops = 0.1 + 0.2;    // not representable in short decimal
  w.kernels[1].work.dram_bytes = 1e-310;  // subnormal
  const std::string path = dir.path("w.dvfsim");
  write_native(w, path);
  expect_identical(w, read_native(path));
}

}  // namespace
}  // namespace dvfsim
