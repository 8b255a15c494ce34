// Bad input gives InputError naming the file and the field or line; never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "sim/error.h"
#include "tests/traces/error_util.h"
#include "tests/traces/test_util.h"
#include "traces/kineto.h"
#include "traces/native.h"
#include "traces/trace.h"

namespace dvfsim {
namespace {

TEST(BadInput, TruncatedGzip) {
  test::TempDir dir;
  std::ifstream in(test::shipped_trace_path(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = dir.write("cut.kineto.json.gz", bytes.substr(0, bytes.size() / 2));
  const std::string msg = error_of([&] { read_trace(path); });
  EXPECT_CONTAINS(msg, "cut.kineto.json.gz");
  EXPECT_CONTAINS(msg, "truncated gzip");
}

TEST(BadInput, CorruptGzip) {
  test::TempDir dir;
  const std::string path =
      dir.write("bad.json.gz", std::string("\x1f\x8b\x08\x00garbage-garbage", 19));
  EXPECT_CONTAINS(error_of([&] { read_kineto(path); }), "bad.json.gz");
}

TEST(BadInput, InvalidJson) {
  test::TempDir dir;
  const std::string path = dir.write("broken.json", R"({"traceEvents": [{"ph": "X",)");
  const std::string msg = error_of([&] { read_kineto(path); });
  EXPECT_CONTAINS(msg, "broken.json");
  EXPECT_CONTAINS(msg, "invalid JSON");
}

TEST(BadInput, NoTraceEvents) {
  test::TempDir dir;
  const std::string path = dir.write("empty.json", R"({"schemaVersion": 1})");
  const std::string msg = error_of([&] { read_kineto(path); });
  EXPECT_CONTAINS(msg, "empty.json");
  EXPECT_CONTAINS(msg, "'traceEvents'");
}

TEST(BadInput, NoGpuActivities) {
  test::TempDir dir;
  const std::string path = dir.write("cpu_only.json", R"({"traceEvents": []})");
  EXPECT_CONTAINS(error_of([&] { read_kineto(path); }), "no GPU kernels");
}

TEST(BadInput, KernelWithoutDuration) {
  test::TempDir dir;
  const std::string path = dir.write("nodur.json", R"({"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "x"}},
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "args": {"correlation": 1}}]})");
  const std::string msg = error_of([&] { read_kineto(path); });
  EXPECT_CONTAINS(msg, "nodur.json: event 1 (cat kernel): missing field 'dur'");
}

TEST(BadInput, KernelWithoutCorrelationOrWithBadTs) {
  test::TempDir dir;
  std::string path = dir.write("nocorr.json", R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "dur": 2, "args": {}}]})");
  EXPECT_CONTAINS(error_of([&] { read_kineto(path); }), "missing field 'args.correlation'");
  path = dir.write("badts.json", R"({"traceEvents": [
    {"ph": "X", "cat": "gpu_memset", "name": "m", "ts": "soon", "dur": 2, "args": {"correlation": 1}}]})");
  EXPECT_CONTAINS(error_of([&] { read_kineto(path); }),
                  "badts.json: event 0 (cat gpu_memset): non-numeric field 'ts'");
}

TEST(BadInput, UnknownFormatAndMissingFile) {
  test::TempDir dir;
  const std::string path = dir.write("notes.txt", "hello world\n");
  const std::string msg = error_of([&] { read_trace(path); });
  EXPECT_CONTAINS(msg, "notes.txt");
  EXPECT_CONTAINS(msg, "unknown trace format");
  EXPECT_CONTAINS(error_of([&] { read_trace(dir.path("absent.json")); }),
                  "absent.json: cannot open");
}

TEST(BadInput, NativeBadFieldNamesLine) {
  test::TempDir dir;
  std::string text = format_native(read_kineto(test::test_data("mini_event_wait.json")));
  const std::size_t pos = text.find("\tforward\t");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 9, "\tsideways\t");
  const std::string path = dir.write("bad.dvfsim", text);
  const std::string msg = error_of([&] { read_trace(path); });
  EXPECT_CONTAINS(msg, "bad.dvfsim:");
  EXPECT_CONTAINS(msg, "field 'phase'");
}

TEST(BadInput, NativeTruncated) {
  test::TempDir dir;
  const std::string text = format_native(read_kineto(test::test_data("mini_event_wait.json")));
  const std::string path = dir.write("short.dvfsim", text.substr(0, text.size() / 2));
  EXPECT_CONTAINS(error_of([&] { read_native(path); }), "short.dvfsim:");
}

TEST(BadInput, EveryPrefixOfAValidTraceFailsCleanly) {
  test::TempDir dir;
  std::ifstream in(test::test_data("mini_optimizer.json"), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t n = 0; n < text.size(); n += 97) {
    const std::string path = dir.write("prefix.json", text.substr(0, n));
    EXPECT_FALSE(error_of([&] { read_trace(path); }).empty()) << n;
  }
}

}  // namespace
}  // namespace dvfsim
