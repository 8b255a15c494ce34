#pragma once
// The files `dvfsim run --out DIR` writes (docs/design.md, "Command line"):
// summary.json, kernels.csv with names.csv, timeline.csv, clock_switches.csv,
// trace.json, manifest.json; all written atomically.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "apps/files.h"
#include "apps/runner.h"

namespace dvfsim {

// Which files `run --out DIR` writes (`--outputs summary,kernels,...`).
// summary.json is always written: written last, it marks a complete run.
class OutputSelection {
 public:
  enum File : std::uint32_t {
    summary = 1u << 0,
    kernels = 1u << 1,
    timeline = 1u << 2,
    switches = 1u << 3,
    trace = 1u << 4,
    plan = 1u << 5,
    manifest = 1u << 6,
    names = 1u << 7,  // names.csv: written with kernels.csv, whose name ids it resolves
  };
  static OutputSelection all() { return OutputSelection(0xff); }
  // "summary,kernels,timeline,switches,trace,plan,manifest" or "all" (the
  // file names work too: clock_switches, clock_plan, kernels.csv, ...);
  // InputError naming `option` and the unknown entry.
  static OutputSelection parse(std::string_view list, std::string_view option = "--outputs");
  explicit OutputSelection(std::uint32_t mask = summary)
      : mask_(mask | summary | ((mask & kernels) != 0 ? std::uint32_t{names} : 0u)) {}
  bool has(File f) const { return (mask_ & f) != 0; }
  OutputSelection with(File f) const { return OutputSelection(mask_ | f); }
  // Whether the replay must record its timeline segments (timeline.csv, trace.json).
  bool needs_timeline() const { return has(timeline) || has(trace); }
  // The file names, in writing order ("kernels.csv, timeline.csv, ...").
  std::string describe() const;

 private:
  std::uint32_t mask_;
};

std::string summary_json(const RunSpec& spec, const Simulation& sim);
// kernels.csv names each kernel and operator by an id into names.csv
// (name_id,name: the workload's interned names, each written once).
std::string kernels_csv(const Simulation& sim);
std::string names_csv(const Simulation& sim);
std::string timeline_csv(const Simulation& sim);
std::string clock_switches_csv(const Simulation& sim);
std::string perfetto_trace_json(const Simulation& sim);
std::string manifest_json(const RunSpec& spec, const Simulation& sim);
// The clocks the policy asked for during the last iteration, as a repeating
// time-window plan for `dvfsim hw apply` (format in docs/hw.md).
std::string clock_plan_json(const RunSpec& spec, const Simulation& sim);

// The same, streamed into a sink (files of any size in bounded memory).
void write_summary_json(OutputSink& out, const RunSpec& spec, const Simulation& sim);
void write_kernels_csv(OutputSink& out, const Simulation& sim);
void write_names_csv(OutputSink& out, const Simulation& sim);
void write_timeline_csv(OutputSink& out, const Simulation& sim);
void write_clock_switches_csv(OutputSink& out, const Simulation& sim);
void write_perfetto_trace_json(OutputSink& out, const Simulation& sim);

// Writes the selected files into `dir`: each through a buffered stream into a
// temporary beside it, then one sync of the file system, then the renames,
// summary.json last. The previous run's summary.json is removed first, and
// so are its files that this selection does not write, so the directory never
// mixes two runs (apps/output_dir.h).
void write_run_outputs(const std::string& dir, const RunSpec& spec, const Simulation& sim,
                       OutputSelection selection = OutputSelection::all());
// The short human table `run` prints.
void print_run_summary(std::ostream& out, const RunSpec& spec, const Simulation& sim);
// One line per distinct kernel (name, class, phase) with the clocks chosen.
void print_kernel_choices(std::ostream& out, const Simulation& sim, std::size_t max_rows);

}  // namespace dvfsim
