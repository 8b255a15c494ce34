// The run outputs join back to the trace and to each other (kernels.csv,
// timeline.csv, clock_switches.csv, summary.json), and trace.json is a
// correct timeline (exact stamps, no kernel overlapping its stream neighbour).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "tests/e2e/run_util.h"

namespace dvfsim::testing {
namespace {

// One CSV line split at commas outside quotes.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << "no column " << name;
  return static_cast<std::size_t>(it - header.begin());
}

class RunOutputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // pass-level on the 3080 Ti: a few clock switches, each with a latency.
    dir_ = temp_dir("outputs");
    result_ = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                         " --device rtx3080ti --policy pass-level --set switch_latency_us=100 "
                         "--out " +
                         dir_);
  }
  static std::string dir_;
  static ProcessResult result_;
};
std::string RunOutputs::dir_;
ProcessResult RunOutputs::result_;

TEST_F(RunOutputs, KernelsCsvCarriesOperatorCorrelationAndTracedStamp) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const auto lines = lines_of(read_text(dir_ + "/kernels.csv"));
  ASSERT_GT(lines.size(), 1u);
  const auto header = csv_cells(lines[0]);
  const auto row = csv_cells(lines[1]);
  ASSERT_EQ(row.size(), header.size());
  // The trace's first kernel: "ts": 5112196511067.996, "correlation": 21,
  // launched by External id 10 = aten::gather.
  EXPECT_EQ(row[column(header, "kernel_index")], "0");
  // The names by id, each once, in names.csv (name_id,name).
  const auto names = lines_of(read_text(dir_ + "/names.csv"));
  ASSERT_EQ(names[0], "name_id,name");
  auto name_of = [&](const std::string& id) {
    const std::size_t i = std::stoul(id) + 1;
    EXPECT_LT(i, names.size()) << id;
    const auto cells = csv_cells(i < names.size() ? names[i] : "");
    EXPECT_EQ(cells[0], id);
    return cells.size() == 2 ? cells[1] : std::string();
  };
  EXPECT_EQ(name_of(row[column(header, "name_id")]),
            "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, "
            "long, long, long, bool)");
  EXPECT_EQ(name_of(row[column(header, "operator_id")]), "aten::gather");
  // Each distinct kernel and operator once: a few dozen rows for 3,718 launches.
  EXPECT_LT(names.size(), 200u);
  EXPECT_EQ(lines.size(), 1u + 3718u);
  EXPECT_EQ(row[column(header, "correlation_id")], "21");
  EXPECT_EQ(row[column(header, "traced_start_ns")], "5112196511067996");
}

TEST(KernelsCsv, CarriesInstructionsTheirSourceAndTheL2Excess) {
  // tests/fuzz/corpus/kineto/mini_layouts.json: a bf16 2x16x4x4 copy NCHW ->
  // channels-last (C read with stride 16: 30 bytes beyond each of 512
  // elements, 0.74 of them in L2: 11366.4 bytes) and a cat of an NCHW and a
  // channels-last 2x8x4x4 half (the latter read with stride 8 along W: 14
  // bytes beyond each of 256 elements: 2652.16), whose non-vectorised
  // CatArrayBatchedCopy issues 0.674 warp instructions per byte of its 2048
  // (512 elements read and 512 written, 2 bytes each): 1380.352.
  const std::string dir = temp_dir("kernels-csv-l2");
  const auto r = run_dvfsim(std::string("run --trace ") + DVFSIM_SOURCE_DIR +
                            "/tests/fuzz/corpus/kineto/mini_layouts.json --device h200 "
                            "--policy native --outputs summary,kernels --out " +
                            dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto lines = lines_of(read_text(dir + "/kernels.csv"));
  ASSERT_EQ(lines.size(), 3u);
  const auto header = csv_cells(lines[0]);
  const auto copy = csv_cells(lines[1]);
  const auto cat = csv_cells(lines[2]);
  ASSERT_EQ(copy.size(), header.size());
  ASSERT_EQ(cat.size(), header.size());
  EXPECT_NEAR(std::stod(copy[column(header, "l2_excess_bytes")]), 0.74 * 30 * 512, 1e-6);
  EXPECT_NEAR(std::stod(cat[column(header, "l2_excess_bytes")]), 0.74 * 14 * 256, 1e-6);
  EXPECT_NEAR(std::stod(cat[column(header, "instructions")]), 0.674 * 2048, 1e-6);
  EXPECT_EQ(cat[column(header, "instructions_source")], "estimated");
  EXPECT_EQ(copy[column(header, "instructions_source")], "estimated");
  EXPECT_GT(std::stod(copy[column(header, "instructions")]), 0.0);
}

TEST_F(RunOutputs, TimelineUsesTheKernelsCsvKey) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const auto kernels = csv_cells(lines_of(read_text(dir_ + "/kernels.csv"))[0]);
  const auto timeline = lines_of(read_text(dir_ + "/timeline.csv"));
  const auto header = csv_cells(timeline[0]);
  EXPECT_EQ(kernels[0], "kernel_index");
  const std::size_t key = column(header, "kernel_index");
  const std::size_t state = column(header, "state");
  // The first kernel segment names kernel 0.
  for (std::size_t i = 1; i < timeline.size(); ++i) {
    const auto cells = csv_cells(timeline[i]);
    if (cells[state] != "kernel") continue;
    EXPECT_EQ(cells[key], "0");
    break;
  }
}

TEST_F(RunOutputs, SummaryCountsTheCoreAndMemoryRowsOfClockSwitchesCsv) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const auto lines = lines_of(read_text(dir_ + "/clock_switches.csv"));
  std::map<std::string, std::int64_t> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) ++rows[csv_cells(lines[i])[0]];
  simdjson::dom::parser parser;
  const simdjson::dom::element s = parser.load(dir_ + "/summary.json");
  const std::int64_t counted = int64_t(s["clock_switches"]);
  EXPECT_GT(counted, 0);
  EXPECT_EQ(counted, rows["core"] + rows["memory"]);
}

TEST_F(RunOutputs, SummaryPolicyParamsKeepTheirTypes) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  simdjson::dom::parser parser;
  const simdjson::dom::element s = parser.load(dir_ + "/summary.json");
  // pass-level's parameters: max_slowdown (a number, default 0), objective (text).
  const simdjson::dom::element budget = s["policy_params"]["max_slowdown"];
  const simdjson::dom::element objective = s["policy_params"]["objective"];
  EXPECT_EQ(budget.type(), simdjson::dom::element_type::INT64);
  EXPECT_EQ(int64_t(budget), 0);
  EXPECT_EQ(objective.type(), simdjson::dom::element_type::STRING);
}

struct Slice {
  std::int64_t start_ns, dur_ns;
  std::string name;
};

// "ts": and "dur": values written as integers of ns: digits, '.', three digits.
bool fixed_three_decimals(const std::string& text, const std::string& key, std::size_t& count) {
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    std::size_t i = at + key.size();
    const std::size_t digits = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == digits || text[i] != '.') return false;
    const std::size_t frac = ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i - frac != 3) return false;
    ++count;
  }
  return true;
}

TEST_F(RunOutputs, TraceJsonHasExactStampsAndNoKernelOverlapsItsStreamNeighbour) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const std::string text = read_text(dir_ + "/trace.json");
  std::size_t stamps = 0, durations = 0;
  EXPECT_TRUE(fixed_three_decimals(text, "\"ts\":", stamps));
  EXPECT_TRUE(fixed_three_decimals(text, "\"dur\":", durations));
  EXPECT_GT(stamps, 2u * 3718u);

  simdjson::dom::parser parser;
  const simdjson::dom::element root = parser.parse(simdjson::padded_string(text));
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Slice>> tracks;  // (pid, tid)
  std::map<std::int64_t, std::string> processes;
  std::map<std::string, std::int64_t> categories;
  std::int64_t switch_events = 0;
  for (const simdjson::dom::element e : root["traceEvents"].get_array()) {
    const std::string_view ph = e["ph"].get_string();
    if (ph == "M" && std::string_view(e["name"].get_string()) == "process_name")
      processes[int64_t(e["pid"])] = std::string(std::string_view(e["args"]["name"]));
    if (std::string_view cat; e["cat"].get(cat) == simdjson::SUCCESS && cat == "switch") {
      ++switch_events;
      // the values are in args, not in the name
      EXPECT_EQ(std::string_view(e["name"].get_string()).find("MHz"), std::string_view::npos);
      EXPECT_EQ(e["args"]["to_mhz"].error(), simdjson::SUCCESS);
    }
    if (ph != "X") continue;
    const std::string cat(std::string_view(e["cat"].get_string()));
    ++categories[cat];
    // Exact: three decimals of µs are integer ns.
    const auto ns = [](double us) { return std::llround(us * 1000.0); };
    tracks[{int64_t(e["pid"]), int64_t(e["tid"])}].push_back(
        {ns(double(e["ts"])), ns(double(e["dur"])), std::string(std::string_view(e["name"]))});
  }
  // The policy's run and the baseline side by side.
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_NE(processes[1].find("pass-level"), std::string::npos) << processes[1];
  EXPECT_NE(processes[2].find("native"), std::string::npos) << processes[2];
  EXPECT_EQ(categories["iteration"], 2 * 2);  // two iterations, two processes
  EXPECT_GT(categories["phase"], 2 * 2 * 2);  // at least forward and backward per iteration
  EXPECT_GT(switch_events, 0);
  std::size_t kernel_slices = 0, touching = 0;
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(),
              [](const Slice& a, const Slice& b) { return a.start_ns < b.start_ns; });
    for (std::size_t i = 1; i < slices.size(); ++i) {
      const Slice& a = slices[i - 1];
      const Slice& b = slices[i];
      EXPECT_LE(a.start_ns + a.dur_ns, b.start_ns)
          << "pid " << track.first << " tid " << track.second << ": '" << a.name << "' overlaps '"
          << b.name << "'";
      touching += a.start_ns + a.dur_ns == b.start_ns;
    }
    kernel_slices += slices.size();
  }
  EXPECT_GT(kernel_slices, 2u * 3718u);
  EXPECT_GT(touching, 100u);  // back-to-back kernels: they touch exactly
}

TEST_F(RunOutputs, TraceJsonShowsShortKernelNamesAndHoldsEachFullNameOnce) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const std::string text = read_text(dir_ + "/trace.json");
  simdjson::dom::parser parser;
  const simdjson::dom::element root = parser.parse(simdjson::padded_string(text));
  const simdjson::dom::array names = root["dvfsimNames"].get_array();
  const auto csv = lines_of(read_text(dir_ + "/names.csv"));
  ASSERT_EQ(names.size() + 1, csv.size());  // the same table as names.csv
  std::size_t kernels = 0, kernel_bytes = 0;
  for (const simdjson::dom::element e : root["traceEvents"].get_array()) {
    std::int64_t index = 0;
    if (e["args"]["kernel_index"].get(index) != simdjson::SUCCESS) continue;
    ++kernels;
    const std::string_view shown = e["name"].get_string();
    const std::string_view full = names.at(std::size_t(int64_t(e["args"]["name_id"]))).get_string();
    EXPECT_LE(shown.size(), full.size());
    EXPECT_NE(full.find(shown), std::string_view::npos) << shown << " not in " << full;
    if (index == 0) {  // the shipped trace's first kernel, a templated signature
      EXPECT_EQ(shown, "at::native::vectorized_gather_kernel");
      EXPECT_EQ(full.substr(0, 46), "void at::native::vectorized_gather_kernel<16, ");
      // energy = power x time (the power to the mW, the energy to the nJ)
      const double dur_s = double(e["dur"]) * 1e-6;
      EXPECT_GT(dur_s, 0);
      EXPECT_NEAR(double(e["args"]["energy_j"]), double(e["args"]["power_w"]) * dur_s,
                  0.0005 * dur_s + 1e-9);
    }
  }
  EXPECT_EQ(kernels, 2u * 3718u);  // the policy's run and the baseline
  // The events' lines stay short: no 200-character names repeated per kernel.
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find("\"kernel_index\"") != std::string::npos) kernel_bytes += line.size() + 1;
  EXPECT_LT(kernel_bytes / kernels, 260u) << kernel_bytes / kernels << " bytes per kernel event";
}

TEST_F(RunOutputs, DiffComparesTwoRunsPerClassPhaseAndKernel) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const std::string native = temp_dir("outputs-native");
  ASSERT_EQ(run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                       " --device rtx3080ti --policy native --baseline none --out " + native)
                .exit_code,
            0);
  const std::string csv = native + "/diff.csv";
  const auto r = run_dvfsim("diff " + native + " " + dir_ + " --csv " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("by phase"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gemm"), std::string::npos) << r.output;
  const auto lines = lines_of(read_text(csv));
  const auto header = csv_cells(lines.at(0));
  const auto total = csv_cells(lines.at(1));
  EXPECT_EQ(total[column(header, "level")], "total");
  EXPECT_EQ(total[column(header, "count")], "3718");
  // A is native, B is pass-level: B's kernel energy is the policy's, summed
  // from its kernels.csv.
  const auto kernels = lines_of(read_text(dir_ + "/kernels.csv"));
  const auto kh = csv_cells(kernels[0]);
  double energy_b = 0;
  for (std::size_t i = 1; i < kernels.size(); ++i)
    energy_b += std::stod(csv_cells(kernels[i])[column(kh, "energy_j")]);
  EXPECT_NEAR(std::stod(total[column(header, "energy_b_j")]), energy_b, 1e-6 * energy_b);
  std::size_t phases = 0;
  for (const auto& l : lines) phases += l.rfind("phase,", 0) == 0;
  EXPECT_GE(phases, 3u);  // forward, backward, optimizer (and other)
  // A run against itself: no change anywhere.
  const auto same = run_dvfsim("diff " + dir_ + " " + dir_ + " --csv " + csv);
  ASSERT_EQ(same.exit_code, 0) << same.output;
  const auto self = lines_of(read_text(csv));
  for (std::size_t i = 1; i < self.size(); ++i) {
    const auto c = csv_cells(self[i]);
    EXPECT_EQ(std::stod(c[column(header, "energy_change_pct")]), 0.0) << self[i];
    EXPECT_EQ(std::stod(c[column(header, "time_change_pct")]), 0.0) << self[i];
  }
  // Not a run directory: exit 2, naming it.
  const auto bad = run_dvfsim("diff " + dir_ + " /nonexistent/run");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("/nonexistent/run"), std::string::npos) << bad.output;
}

TEST(RunOutputsSelection, OutputsFlagWritesTheChosenFilesAndRemovesTheOthers) {
  const std::string dir = temp_dir("outputs-select");
  const std::string trace =
      std::string(DVFSIM_SOURCE_DIR) + "/tests/traces/data/mini_optimizer.json";
  const std::string base =
      "run --no-cache --trace " + trace + " --device h200 --policy native --out " + dir;
  ASSERT_EQ(run_dvfsim(base).exit_code, 0);
  const std::string full_kernels = read_text(dir + "/kernels.csv");
  ASSERT_TRUE(std::filesystem::exists(dir + "/trace.json"));
  const ProcessResult r = run_dvfsim(base + " --outputs kernels");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // summary.json always; kernels.csv as before, byte for byte; the previous
  // run's other files are gone, so the directory holds one run.
  EXPECT_TRUE(std::filesystem::exists(dir + "/summary.json"));
  EXPECT_EQ(read_text(dir + "/kernels.csv"), full_kernels);
  for (const char* f :
       {"timeline.csv", "clock_switches.csv", "trace.json", "clock_plan.json", "manifest.json"})
    EXPECT_FALSE(std::filesystem::exists(dir + "/" + f)) << f;
  const ProcessResult bad = run_dvfsim(base + " --outputs kernels,timelines");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("unknown output 'timelines'"), std::string::npos) << bad.output;
}

TEST(TraceCache, ASecondRunReadsTheCacheAndAChangedTraceMisses) {
  const std::string dir = temp_dir("trace-cache");
  const std::string trace = dir + "/t.json";
  std::filesystem::copy_file(
      std::string(DVFSIM_SOURCE_DIR) + "/tests/traces/data/mini_optimizer.json", trace);
  const std::string cache = dir + "/cache";
  auto run = [&](const std::string& out, const std::string& cache_args) {
    return run_dvfsim("run --trace " + trace + " --device h200 --policy native --out " + dir + "/" +
                      out + " " + cache_args);
  };
  auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(cache))
      names.push_back(e.path().string());
    return names;
  };
  ASSERT_EQ(run("plain", "--no-cache").exit_code, 0);
  ASSERT_EQ(run("miss", "--cache-dir " + cache).exit_code, 0);
  ASSERT_EQ(entries().size(), 1u);
  ASSERT_EQ(run("hit", "--cache-dir " + cache).exit_code, 0);
  EXPECT_EQ(entries().size(), 1u);
  for (const char* f : {"kernels.csv", "names.csv", "timeline.csv", "summary.json", "trace.json"}) {
    EXPECT_EQ(read_text(dir + "/miss/" + f), read_text(dir + "/plain/" + f)) << f;
    EXPECT_EQ(read_text(dir + "/hit/" + f), read_text(dir + "/plain/" + f)) << f;
  }
  // The hit came from the entry: a note put into it shows in summary.json.
  const std::string entry = entries().front();
  std::string text = read_text(entry);
  text.insert(text.find('\n') + 1, "note=read from the cache\n");
  std::ofstream(entry, std::ios::binary) << text;
  ASSERT_EQ(run("edited", "--cache-dir " + cache).exit_code, 0);
  EXPECT_NE(read_text(dir + "/edited/summary.json").find("read from the cache"), std::string::npos);
  // Any change to the trace's bytes is a new key (not its time stamp).
  std::ofstream(trace, std::ios::app) << "\n";
  ASSERT_EQ(run("changed", "--cache-dir " + cache).exit_code, 0);
  EXPECT_EQ(entries().size(), 2u);
  EXPECT_EQ(read_text(dir + "/changed/summary.json").find("read from the cache"),
            std::string::npos);
  // A cache directory that cannot be written is skipped.
  std::ofstream(dir + "/file") << "x";
  const ProcessResult r = run("blocked", "--cache-dir " + dir + "/file/sub");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(dir + "/blocked/kernels.csv"), read_text(dir + "/plain/kernels.csv"));
}

TEST(TraceConvert, AConvertedTraceKeepsCorrelationIdsAndReplaysTheSame) {
  // Was (issue 17): kernels.csv's correlation_id was empty for a trace
  // converted to the native format.
  const std::string dir = temp_dir("convert-corr");
  const std::string native = dir + "/t.dvfsim";
  ASSERT_EQ(run_dvfsim(std::string("trace convert --no-cache ") + DVFSIM_SHIPPED_TRACE + " --out " +
                       native)
                .exit_code,
            0);
  const std::string args = " --device h200 --policy native --set host_overhead=off --out ";
  ASSERT_EQ(run_dvfsim(std::string("run --no-cache --trace ") + DVFSIM_SHIPPED_TRACE + args + dir +
                       "/kineto")
                .exit_code,
            0);
  ASSERT_EQ(run_dvfsim("run --trace " + native + args + dir + "/native").exit_code, 0);
  const std::string kernels = read_text(dir + "/native/kernels.csv");
  EXPECT_EQ(kernels, read_text(dir + "/kineto/kernels.csv"));
  const auto lines = lines_of(kernels);
  const auto header = csv_cells(lines[0]);
  EXPECT_EQ(csv_cells(lines[1])[column(header, "correlation_id")], "21");
  EXPECT_EQ(read_text(dir + "/native/timeline.csv"), read_text(dir + "/kineto/timeline.csv"));
}

TEST(Cli, UnknownCommandsAndOptionsAreNamedWithASuggestion) {
  const auto cmd = run_dvfsim("rn --trace x");
  EXPECT_EQ(cmd.exit_code, 2);
  EXPECT_NE(cmd.output.find("unknown command 'rn' (did you mean 'run'?)"), std::string::npos)
      << cmd.output;
  const auto sub = run_dvfsim("trace inf x");
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_NE(sub.output.find("dvfsim trace: unknown command 'inf' (did you mean 'info'?)"),
            std::string::npos)
      << sub.output;
  const auto opt = run_dvfsim("run --trcae x --device h200 --policy native --out /tmp/x");
  EXPECT_EQ(opt.exit_code, 2);
  EXPECT_NE(opt.output.find("dvfsim run: unknown option '--trcae' (did you mean '--trace'?)"),
            std::string::npos)
      << opt.output;
}

TEST(Cli, VersionSaysVersionCommitAndBuildType) {
  const auto r = run_dvfsim("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("dvfsim ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("commit "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" build)"), std::string::npos) << r.output;
}

TEST(Cli, DeviceAndPolicyNamesAreCheckedBeforeTheTraceLoads) {
  // The trace does not exist: a name error shows the name was checked first.
  const auto d = run_dvfsim(
      "run --trace /nonexistent.json --device nosuchgpu --policy native "
      "--out /tmp/dvfsim-never");
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_NE(d.output.find("nosuchgpu"), std::string::npos) << d.output;
  const auto p = run_dvfsim(
      "run --trace /nonexistent.json --device h200 --policy nosuchpolicy "
      "--out /tmp/dvfsim-never");
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.output.find("nosuchpolicy"), std::string::npos) << p.output;
}

TEST(Cli, TraceInfoAndValidateSpeakJson) {
  const auto info = run_dvfsim(std::string("trace info --json ") + DVFSIM_SHIPPED_TRACE);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  simdjson::dom::parser parser;
  const simdjson::dom::element t = parser.parse(simdjson::padded_string(info.output));
  EXPECT_EQ(int64_t(t["iterations"]), 2);
  EXPECT_EQ(int64_t(t["activities"]), 3718);
  EXPECT_EQ(int64_t(t["per_iteration"].at(0)["kernels"]), 1438);
  EXPECT_GT(double(t["classes"]["gemm"]["gpu_time_s"]), 0.0);

  const std::string shipped = DVFSIM_SHIPPED_TRACE;
  const std::string measured =
      shipped.substr(0, shipped.find(".kineto.json.gz")) + ".measured.json";
  const auto v = run_dvfsim("hw validate --json --trace " + shipped + " --measured " + measured +
                            " --device h200");
  ASSERT_EQ(v.exit_code, 0) << v.output;
  simdjson::dom::parser p2;
  const simdjson::dom::element j = p2.parse(simdjson::padded_string(v.output));
  // 6,441,557 mJ over 60 steps; predicted 108.51 J (README)
  EXPECT_NEAR(double(j["measured"]["energy_per_iteration_j"]), 107.359, 0.001);
  EXPECT_NEAR(double(j["predicted"]["energy_per_iteration_j"]), 108.51, 0.01);
  EXPECT_TRUE(bool(j["pass"]));
}

}  // namespace
}  // namespace dvfsim::testing
