// Native format: exact round trip and dispatch.
#include "traces/native.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "sim/error.h"
#include "tests/traces/error_util.h"
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
    EXPECT_EQ(x.correlation, y.correlation);
    EXPECT_EQ(x.work.l2_excess_bytes, y.work.l2_excess_bytes);
    EXPECT_EQ(x.work.zeroed_operands, y.work.zeroed_operands);
  }
  EXPECT_EQ(a.iteration_rule, b.iteration_rule);
  EXPECT_EQ(a.steady_iterations, b.steady_iterations);
  EXPECT_EQ(a.notes, b.notes);
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

TEST(NativeFormat, CarriesCorrelationIdsAndTheReadingsNotes) {
  // Was (issue 17): a converted trace lost the Kineto correlation id, so
  // kernels.csv's correlation_id column was empty for native traces.
  test::TempDir dir;
  const Workload original = read_kineto(test::shipped_trace_path());
  ASSERT_GE(original.kernels.front().correlation, 0);
  ASSERT_FALSE(original.iteration_rule.empty());
  const std::string path = dir.path("t.dvfsim");
  write_native(original, path);
  const Workload copy = read_native(path);
  std::size_t with_id = 0;
  for (std::size_t i = 0; i < copy.kernels.size(); ++i) {
    EXPECT_EQ(copy.kernels[i].correlation, original.kernels[i].correlation) << i;
    with_id += copy.kernels[i].correlation >= 0;
  }
  EXPECT_EQ(with_id, copy.kernels.size());  // every activity of the shipped trace has one
  EXPECT_EQ(copy.iteration_rule,
            "Optimizer.step annotations (an iteration ends with its optimizer step)");
  EXPECT_EQ(copy.steady_iterations, original.steady_iterations);
  EXPECT_EQ(copy.notes, original.notes);
}

TEST(NativeFormat, ReadsVersion2FilesWithoutCorrelationIds) {
  test::TempDir dir;
  const std::string v2 =
      "# dvfsim-trace v2\ndevice=h200\niterations=1\n@names 2\n0\t\n1\tk\n@kernels 1\n"
      "1\t0\t7\t0\t1\t1\t1\t1\t1\t1\t0\t0\t100\t200\tgemm\tforward\t0\t-1\t5000\t1e9\t"
      "4096\tshapes\t12\tncu\n@syncs 0\n@event_waits 0\n@iteration_begin 2\n0\n1\n@end\n";
  const Workload w = parse_native(v2, "v2.dvfsim");
  ASSERT_EQ(w.kernels.size(), 1u);
  EXPECT_EQ(w.kernels[0].correlation, -1);
  EXPECT_EQ(w.kernels[0].work.duration_ns, 5000);
  EXPECT_EQ(w.kernels[0].stream, 7);
  // A v3 file must have the 25th field; a v2 file must not.
  std::string v3 = v2;
  v3.replace(0, 17, "# dvfsim-trace v3");
  const std::string short_line = error_of([&] { parse_native(v3, "v3.dvfsim"); });
  EXPECT_CONTAINS(short_line, "v3.dvfsim:");
  EXPECT_CONTAINS(short_line, "expected 25 tab-separated fields, got 24");
}

// Version 4 adds each kernel's L2 excess (26th field); a v3 file reads as
// none; a negative one is refused naming the field.
// A one-kernel native file of `version` whose kernel line is `kernel` (the
// fields from name_id on), for the tests of what each version added.
std::string one_kernel_file(std::string_view version, std::string_view kernel) {
  return fmt::format(
      "# dvfsim-trace {}\niterations=1\n@names 2\n0\t\n1\tk\n@kernels 1\n{}\n@syncs 0\n"
      "@event_waits 0\n@iteration_begin 2\n0\n1\n@end\n",
      version, kernel);
}

TEST(NativeFormat, Version4CarriesTheL2Excess) {
  const std::string kernel =
      "1\t0\t7\t0\t1\t1\t1\t1\t1\t1\t0\t0\t100\t200\telementwise\tforward\t0\t-1\t5000\t0\t"
      "4096\tshapes\t12\testimated\t9";
  const Workload v3 = parse_native(one_kernel_file("v3", kernel), "v3.dvfsim");
  ASSERT_EQ(v3.kernels.size(), 1u);
  EXPECT_EQ(v3.kernels[0].correlation, 9);
  EXPECT_EQ(v3.kernels[0].work.l2_excess_bytes, 0.0);
  const Workload v4 = parse_native(one_kernel_file("v4", kernel + "\t1536.5"), "v4.dvfsim");
  EXPECT_EQ(v4.kernels[0].work.l2_excess_bytes, 1536.5);
  Workload again = parse_native(format_native(v4), "again.dvfsim");
  expect_identical(v4, again);
  const std::string negative =
      error_of([&] { parse_native(one_kernel_file("v4", kernel + "\t-1"), "bad.dvfsim"); });
  EXPECT_CONTAINS(negative, "bad.dvfsim:");
  EXPECT_CONTAINS(negative, "field 'l2_excess_bytes': must be >= 0");
}

// Version 5 adds how many of a matrix kernel's operands a ReLU zeroed (27th
// field); a v4 file reads as none; a count above two is refused naming the
// field.
TEST(NativeFormat, Version5CarriesTheZeroedOperands) {
  const std::string kernel =
      "1\t0\t7\t0\t1\t1\t1\t1\t1\t1\t0\t0\t100\t200\tconv\tbackward\t0\t-1\t5000\t1e9\t"
      "4096\tshapes\t12\testimated\t9\t0";
  const Workload v4 = parse_native(one_kernel_file("v4", kernel), "v4.dvfsim");
  ASSERT_EQ(v4.kernels.size(), 1u);
  EXPECT_EQ(v4.kernels[0].work.zeroed_operands, 0);
  const Workload v5 = parse_native(one_kernel_file("v5", kernel + "\t2"), "v5.dvfsim");
  EXPECT_EQ(v5.kernels[0].work.zeroed_operands, 2);
  expect_identical(v5, parse_native(format_native(v5), "again.dvfsim"));
  const std::string three =
      error_of([&] { parse_native(one_kernel_file("v5", kernel + "\t3"), "bad.dvfsim"); });
  EXPECT_CONTAINS(three, "bad.dvfsim:");
  EXPECT_CONTAINS(three, "field 'zeroed_operands': must be 0, 1 or 2");
}

TEST(NativeFormat, RefusesSteadyIterationsOutsideTheTrace) {
  const std::string text =
      "# dvfsim-trace v3\niterations=2\nsteady_iterations=1,2\n@names 0\n@kernels 0\n";
  try {
    parse_native(text, "s.dvfsim");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.dvfsim:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("steady_iterations"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dvfsim
