// Issue 14: inputs found by fuzzing and by hand that crashed, hung, allocated
// without bound or gave silent wrong numbers. Each is refused with an
// InputError naming the file and the line, event or field.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <string>

#include "sim/error.h"
#include "tests/traces/error_util.h"
#include "tests/traces/test_util.h"
#include "traces/capture_info.h"
#include "traces/instructions.h"
#include "traces/kineto.h"
#include "traces/native.h"
#include "traces/trace.h"

namespace dvfsim {
namespace {

std::string fmt_number(double us) {
  return fmt::format("{:.3f}", us);
}

// Two kernels 10 us long launched 100 us apart, with their launch calls:
// `launch2_ts` and `dur2` are the second kernel's launch time stamp and duration.
std::string two_kernels(const std::string& launch2_ts = "200.0", const std::string& dur2 = "10.0",
                        double base_us = 0) {
  auto ts = [&](double us) { return fmt_number(base_us + us); };
  return R"({"traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "k1", "ts": )" +
         ts(110) + R"(, "dur": 10.0, "args": {"correlation": 1, "stream": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": )" +
         ts(100) + R"(, "dur": 5.0, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "k2", "ts": )" +
         ts(210) + R"(, "dur": )" + dur2 + R"(, "args": {"correlation": 2, "stream": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": )" +
         (launch2_ts == "200.0" ? ts(200) : launch2_ts) +
         R"(, "dur": 5.0, "args": {"correlation": 2}}
]})";
}

std::string kineto_error(const std::string& json) {
  return error_of([&] { parse_kineto(json, "t.json"); });
}

TEST(Hardening, KinetoTwoKernelsReadAsWritten) {
  const Workload w = parse_kineto(two_kernels(), "t.json");
  ASSERT_EQ(w.kernels.size(), 2u);
  EXPECT_EQ(w.kernels[1].host_launch_ns - w.kernels[0].host_launch_ns, 100'000);
  EXPECT_EQ(w.kernels[1].work.duration_ns, 10'000);
}

TEST(Hardening, KinetoEpochTimeStampsStillExact) {
  // Newer Kineto writes Unix-epoch microseconds (~1.7e15 us): inside 2^52 us.
  const Workload w = parse_kineto(two_kernels("200.0", "10.0", 1.7e15), "t.json");
  EXPECT_EQ(w.kernels[0].host_launch_ns, 1'700'000'000'000'100'000);
  EXPECT_EQ(w.kernels[1].work.duration_ns, 10'000);
}

TEST(Hardening, KinetoHugeDurationRefused) {
  // Was: 1e300 silently became 0 ns, 1e16 was reported as "negative".
  for (const char* dur : {"1e300", "1e16", "3600000001"}) {
    SCOPED_TRACE(dur);
    const std::string msg = kineto_error(two_kernels("200.0", dur));
    EXPECT_CONTAINS(msg, "t.json: event 2 (cat kernel)");
    EXPECT_CONTAINS(msg, "field 'dur'");
  }
  EXPECT_CONTAINS(kineto_error(two_kernels("200.0", "-1")), "negative or NaN field 'dur'");
}

TEST(Hardening, KinetoTimeStampFarFromTheTraceRefused) {
  // One launch 35 days (3.024e12 us) off: was exit 0 with 3.0e9 ms.
  const std::string msg = kineto_error(two_kernels("3024000000200.0"));
  EXPECT_CONTAINS(msg, "t.json: event 3 (cat cuda_runtime): field 'ts' lies 3024000 s");
  EXPECT_CONTAINS(msg, "more than 1 h");
  EXPECT_CONTAINS(kineto_error(two_kernels("1e300")), "out-of-range (|ts| > 2^52 us) field 'ts'");
  // Half an hour away is within the rule.
  EXPECT_EQ(parse_kineto(two_kernels("1800000000.0"), "t.json").kernels.size(), 2u);
}

std::string native_error(const std::string& text) {
  return error_of([&] { parse_native(text, "t.trace"); });
}

std::string small_native() {
  const Workload w = parse_kineto(two_kernels(), "t.json");
  return format_native(w);
}

TEST(Hardening, NativeCountsBoundedByTheFile) {
  // Was: 61 bytes with "@kernels 20000000" touched 2.5 GB before failing;
  // "@names 99999999999999" ended in std::bad_alloc.
  const std::string head = "# dvfsim-trace v2\niterations=1\n@names 0\n@kernels 20000000\n";
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_CONTAINS(native_error(head),
                  "t.trace:4: section '@kernels' claims 20000000 entries but the file has only 0 "
                  "lines left");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_CONTAINS(native_error("# dvfsim-trace v2\niterations=1\n@names 99999999999999\nx\n"),
                  "t.trace:3: section '@names' claims 99999999999999 entries");
}

TEST(Hardening, NativeRefusesNonFiniteAndOutOfRangeValues) {
  const std::string good = small_native();
  EXPECT_EQ(parse_native(good, "t.trace").kernels.size(), 2u);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  // Kernel line 1 ends "...\tfallback\t<instructions>\testimated\t<correlation>\t<l2 excess>
  // \t<zeroed operands>": flops is field 20.
  const std::string columns =
      "instructions instructions_source correlation l2_excess_bytes zeroed_operands\n";
  const std::string k1 = good.substr(good.find(columns) + columns.size());
  const std::string line = k1.substr(0, k1.find('\n'));
  std::string nan_line = line;
  {
    std::size_t pos = 0;
    for (int i = 0; i < 19; ++i) pos = nan_line.find('\t', pos) + 1;
    nan_line.replace(pos, nan_line.find('\t', pos) - pos, "nan");
  }
  EXPECT_CONTAINS(native_error(replace(line, nan_line)), "field 'flops': 'nan' is not a finite");
  EXPECT_CONTAINS(native_error(replace("iterations=1", "iterations=-1")),
                  "'iterations' must be >= 1");
  // A host launch 10^18 ns (31 years) after the other kernel.
  std::string far_line = line;
  {
    std::size_t pos = 0;
    for (int i = 0; i < 12; ++i) pos = far_line.find('\t', pos) + 1;
    far_line.replace(pos, far_line.find('\t', pos) - pos, "1000000000000000000");
  }
  const std::string far = native_error(replace(line, far_line));
  EXPECT_CONTAINS(far, "t.trace: invalid workload: kernel 0: host launch 1000000000000000000 ns");
  EXPECT_CONTAINS(far, "more than 1 h from the median GPU start");
}

TEST(Hardening, SidecarDuplicateColumnRefused) {
  // Was SIGSEGV: a duplicated header column made the reader index past the row.
  Workload w = parse_kineto(two_kernels(), "t.json");
  const std::string msg = error_of([&] {
    annotate_instructions_from_text(w,
                                    "kernel,grid,block,registers,instructions,grid\n"
                                    "k1,1,1,0,100\n",
                                    "t.ncu.csv");
  });
  EXPECT_CONTAINS(msg, "t.ncu.csv:1: column 'grid' appears twice in the header");
}

TEST(Hardening, SidecarCountsMustBeWholeNumbersInRange) {
  // Was: unchecked double -> integer casts; such rows silently matched nothing.
  Workload w = parse_kineto(two_kernels(), "t.json");
  auto err = [&](const std::string& row) {
    return error_of([&] {
      annotate_instructions_from_text(w, "kernel,grid,block,registers,instructions\n" + row,
                                      "t.ncu.csv");
    });
  };
  EXPECT_CONTAINS(err("k1,1.5,1,0,100\n"),
                  "t.ncu.csv:2: column 'grid': '1.5' is not a whole number");
  EXPECT_CONTAINS(err("k1,1,1,1e30,100\n"),
                  "t.ncu.csv:2: column 'registers': '1e30' is not a whole number <= 4294967295");
  EXPECT_CONTAINS(err("k1,1e300,1,0,100\n"), "t.ncu.csv:2: column 'grid'");
  // A good row matches: k1 has grid 1, block 1, 0 registers.
  annotate_instructions_from_text(w, "kernel,grid,block,registers,instructions\nk1,1,1,0,100\n",
                                  "t.ncu.csv");
  EXPECT_EQ(w.kernels[0].work.instructions, 100);
  EXPECT_EQ(w.kernels[0].work.instructions_source, InstructionSource::ncu);
}

TEST(Hardening, CaptureClocksOutsideAnyGpuRefused) {
  // Found by fuzz_measurement: a sample of 198043201 MHz gave that mean clock.
  test::TempDir dir;
  dir.write("t.measured.json", R"({"steps": [{"t0": 0.5, "t1": 2.0}]})");
  dir.write("t.nvml_samples.csv",
            "t,sm_MHz,mem_MHz\n0,198043201,3201\n1,1700,3201\n2.5,1500,3201\n");
  CaptureInfo c;
  EXPECT_CONTAINS(error_of([&] { load_capture_clocks(dir.path("t.kineto.json"), c); }),
                  "t.nvml_samples.csv: time-weighted mean sm_MHz 66015533.6");
  dir.write("t.nvml_samples.csv", "t,sm_MHz,mem_MHz\n0,nan,3201\n1,1700,3201\n");
  EXPECT_CONTAINS(error_of([&] { load_capture_clocks(dir.path("t.kineto.json"), c); }),
                  "t.nvml_samples.csv:2: not a number: 'nan'");
  dir.write("t.measured.json", R"({"mean_sm_mhz": -5})");
  EXPECT_CONTAINS(error_of([&] { load_capture_clocks(dir.path("t.kineto.json"), c); }),
                  "t.measured.json: mean_sm_mhz -5 MHz is not a clock in 0..100000 MHz");
  // The window 0.5..2.0 s: 0.5 s at 1980 MHz, 1 s at 1700 MHz.
  dir.write("t.measured.json", R"({"steps": [{"t0": 0.5, "t1": 2.0}]})");
  dir.write("t.nvml_samples.csv", "t,sm_MHz,mem_MHz\n0,1980,3201\n1,1700,3201\n2.5,1500,3201\n");
  load_capture_clocks(dir.path("t.kineto.json"), c);
  EXPECT_EQ(c.core_mhz, 1793);  // (0.5 x 1980 + 1 x 1700) / 1.5 = 1793.3
  EXPECT_EQ(c.memory_mhz, 3201);
}

TEST(Hardening, CaptureClocksHeaderAfterBlankLines) {
  // Found by the 35-minute fuzz_measurement campaign: a blank first line made
  // the header unread and the sample columns index -1 (UBSan).
  test::TempDir dir;
  dir.write("t.measured.json", R"({"steps": [{"t0": 0.5, "t1": 2.0}]})");
  dir.write("t.nvml_samples.csv",
            "\n\nt,sm_MHz,mem_MHz\n0,1980,3201\n1,1700,3201\n2.5,1500,3201\n");
  CaptureInfo c;
  load_capture_clocks(dir.path("t.kineto.json"), c);
  EXPECT_EQ(c.core_mhz, 1793);  // the same samples as above, after two blank lines
  dir.write("t.nvml_samples.csv", "\n0,1980,3201\n1,1700,3201\n");
  EXPECT_CONTAINS(error_of([&] { load_capture_clocks(dir.path("t.kineto.json"), c); }),
                  "t.nvml_samples.csv:2: header lacks column 't' or 'sm_MHz'");
}

TEST(Hardening, SpecialFilesRefusedAsTraces) {
  // Was: a directory gave "internal error: std::bad_alloc", /dev/zero read
  // forever and a FIFO blocked in open().
  test::TempDir dir;
  const std::string fifo = dir.path("pipe.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string sub = dir.path("sub.json");
  ASSERT_EQ(::mkdir(sub.c_str(), 0700), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_CONTAINS(error_of([&] { read_trace(sub); }), "sub.json: not a regular file (a directory)");
  EXPECT_CONTAINS(error_of([&] { read_trace("/dev/zero"); }),
                  "/dev/zero: not a regular file (a character device)");
  EXPECT_CONTAINS(error_of([&] { read_trace(fifo); }), "pipe.json: not a regular file (a FIFO)");
  EXPECT_CONTAINS(error_of([&] { read_kineto(fifo); }), "pipe.json: not a regular file (a FIFO)");
  EXPECT_CONTAINS(error_of([&] { read_native(sub); }), "sub.json: not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

}  // namespace
}  // namespace dvfsim
