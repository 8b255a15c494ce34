// The streaming Kineto reader: the same workload, field by field, whatever
// the sizes of the pieces it reads and the batches it parses, on every
// Kineto trace in the repository (one batch of the whole events array is
// what the earlier whole-DOM reader parsed; the commit that brought this
// reader compared the two on the same traces); and its syntax errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/error.h"
#include "sim/files.h"
#include "test_util.h"
#include "traces/kineto.h"

namespace dvfsim {
namespace {

namespace fs = std::filesystem;

// Every Kineto JSON trace below the repository's trace folders.
std::vector<std::string> repo_traces() {
  std::vector<std::string> out;
  const std::string root = DVFSIM_SOURCE_DIR;
  for (const char* dir : {"/traces/data", "/validation/h200", "/tests/traces/data"}) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root + dir, ec), end; !ec && it != end;
         it.increment(ec)) {
      const std::string p = it->path().string();
      const bool json = p.ends_with(".json") || p.ends_with(".json.gz");
      if (!it->is_regular_file() || !json || p.ends_with(".measured.json")) continue;
      const std::string text = read_file(p);
      if (text.find("\"traceEvents\"") != std::string::npos) out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void expect_same(const Workload& a, const Workload& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.source_path, b.source_path);
  EXPECT_EQ(a.capture.device, b.capture.device);
  EXPECT_EQ(a.capture.device_name, b.capture.device_name);
  EXPECT_EQ(a.capture.core_mhz, b.capture.core_mhz);
  EXPECT_EQ(a.capture.memory_mhz, b.capture.memory_mhz);
  EXPECT_EQ(a.capture.clocks_source, b.capture.clocks_source);
  EXPECT_EQ(a.capture.instructions_source, b.capture.instructions_source);
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.iteration_begin, b.iteration_begin);
  EXPECT_EQ(a.iteration_rule, b.iteration_rule);
  EXPECT_EQ(a.steady_iterations, b.steady_iterations);
  EXPECT_EQ(a.notes, b.notes);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    const Kernel& x = a.kernels[i];
    const Kernel& y = b.kernels[i];
    SCOPED_TRACE("kernel " + std::to_string(i));
    EXPECT_EQ(x.name_id, y.name_id);
    EXPECT_EQ(x.op_id, y.op_id);
    EXPECT_EQ(x.stream, y.stream);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(0, std::memcmp(&x.launch, &y.launch, sizeof x.launch));
    EXPECT_EQ(x.host_launch_ns, y.host_launch_ns);
    EXPECT_EQ(x.traced_start_ns, y.traced_start_ns);
    EXPECT_EQ(x.cls, y.cls);
    EXPECT_EQ(x.phase, y.phase);
    EXPECT_EQ(x.iteration, y.iteration);
    EXPECT_EQ(x.layer, y.layer);
    EXPECT_EQ(x.correlation, y.correlation);
    EXPECT_EQ(x.work.duration_ns, y.work.duration_ns);
    EXPECT_EQ(x.work.flops, y.work.flops);  // exact: the same arithmetic
    EXPECT_EQ(x.work.dram_bytes, y.work.dram_bytes);
    EXPECT_EQ(x.work.source, y.work.source);
    EXPECT_EQ(x.work.instructions, y.work.instructions);
    EXPECT_EQ(x.work.instructions_source, y.work.instructions_source);
    if (::testing::Test::HasFailure()) return;  // one kernel's mismatch is enough
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

// The workload or the error message.
template <class F>
std::pair<std::optional<Workload>, std::string> outcome(F&& read) {
  try {
    return {read(), ""};
  } catch (const InputError& e) {
    return {std::nullopt, e.what()};
  }
}

// Built with AddressSanitizer (CI's second stage, about six times slower
// here: 268 s against 45 s for the 149 traces of 2026-12-05).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(StreamingKineto, SameWorkloadInOneBatchAsInManyOnEveryRepoTrace) {
  const std::vector<std::string> all = repo_traces();
  ASSERT_GE(all.size(), 25u);  // 1 shipped, 16 validation, 10 test excerpts
  // The plain build reads every trace. Under the sanitizers, every third
  // validation capture (in path order) and every other trace: the captures
  // grow with each device session, and the sanitizer stage must stay within
  // CI's time while still reading each kind of capture the folders hold.
  std::vector<std::string> traces;
  std::size_t validation = 0;
  for (const std::string& path : all) {
    const bool capture = path.find("/validation/") != std::string::npos;
    if (!kSanitized || !capture || validation++ % 3 == 0) traces.push_back(path);
  }
  std::size_t read = 0;
  for (const std::string& path : traces) {
    const std::string text = read_file(path);
    TraceOptions o;
    o.gpu = path.find("two_gpus") != std::string::npos ? 0 : -1;
    const auto whole = outcome(
        [&] { return parse_kineto_in_pieces(text, path, text.size() + 1, text.size() + 1, o); });
    const auto pieces = outcome([&] { return parse_kineto_in_pieces(text, path, 4093, 1, o); });
    const auto file = outcome([&] { return read_kineto(path, o); });
    ASSERT_TRUE(whole.first && pieces.first && file.first)
        << path << ": " << whole.second << pieces.second << file.second;
    expect_same(*whole.first, *pieces.first, path + " in pieces");
    expect_same(*whole.first, *file.first, path + " streamed from the file");
    ++read;
  }
  EXPECT_EQ(read, traces.size());
}

TEST(StreamingKineto, TinyPiecesAndBatches) {
  for (const char* name :
       {"mini_optimizer.json", "mini_event_wait.json",
        "foreign/v100_resnet50_legacy_excerpt.json.gz", "foreign/b200_vllm_excerpt.json.gz"}) {
    const std::string path = test::test_data(name);
    const std::string text = read_file(path);
    const Workload whole = parse_kineto_in_pieces(text, path, text.size() + 1, text.size() + 1);
    for (const auto& [chunk, batch] :
         std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {7, 1}, {64, 200}}) {
      const Workload w = parse_kineto_in_pieces(text, path, chunk, batch);
      expect_same(whole, w, std::string(name) + " chunk " + std::to_string(chunk));
    }
  }
}

// Strings with escapes, brackets and quotes, split at every byte: the names
// come through as written.
TEST(StreamingKineto, EscapesAndBracketsInsideStringsAcrossPieces) {
  const std::string json = R"({"deviceProperties": [{"id": 0, "name": "GPU \"x\" ]}"}],
  "traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "a\"}]{[b", "ts": 110, "dur": 10, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 100, "dur": 5, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "c\\\\", "ts": 210, "dur": 10, "args": {"correlation": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 200, "dur": 5, "args": {"correlation": 2}}
]})";
  for (std::size_t chunk = 1; chunk <= 40; ++chunk) {
    const Workload w = parse_kineto_in_pieces(json, "t.json", chunk, chunk % 3);
    ASSERT_EQ(w.kernels.size(), 2u) << chunk;
    EXPECT_EQ(w.name(w.kernels[0]), "a\"}]{[b") << chunk;
    EXPECT_EQ(w.name(w.kernels[1]), "c\\\\") << chunk;
    EXPECT_EQ(w.capture.device_name, "GPU \"x\" ]}") << chunk;
    EXPECT_EQ(w.kernels[1].host_launch_ns - w.kernels[0].host_launch_ns, 100'000);
  }
}

std::string error_of(std::string_view json) {
  try {
    parse_kineto_in_pieces(json, "t.json", 5, 1);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(StreamingKineto, SyntaxErrorsNameTheLineAndTheEvent) {
  EXPECT_EQ(error_of("{\"traceEvents\": [\n{\"ph\": \"X\"},\n{\"ph\": tru}\n]}"),
            "t.json:3: event 1: invalid JSON: Problem while parsing an atom starting with the "
            "letter 't'");
  EXPECT_EQ(error_of("{\"traceEvents\": [{\"ph\": \"X\"}\n {\"ph\": \"X\"}]}"),
            "t.json:2: invalid JSON: expected ',' or ']' after event 0");
  EXPECT_EQ(error_of("{\"traceEvents\": [{\"ph\": \"X\"}, {\"ph\": \"X"),
            "t.json: invalid JSON: the text ends inside the events array (a truncated file)");
  EXPECT_EQ(error_of("{\"traceEvents\": []}\n\nx"),
            "t.json:3: invalid JSON: content after the end of the trace");
  EXPECT_EQ(error_of("{\"schemaVersion\": 1, \"deviceProperties\": [{]}"),
            "t.json:1: invalid JSON: The JSON document has an improper structure: missing or "
            "superfluous commas, braces, missing keys, etc.");
  EXPECT_EQ(error_of("{\"traceEvents\": [1, 2], \"x\": 1"),
            "t.json: event 0: not a JSON object");  // the events come first
  EXPECT_EQ(error_of("{\"traceEvents\": []"),
            "t.json: invalid JSON: the text ends inside the trace (a truncated file)");
  EXPECT_EQ(error_of("  x"), "t.json: not a Kineto JSON trace (does not start with '{')");
}

}  // namespace
}  // namespace dvfsim
