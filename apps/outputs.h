#pragma once
// The files `dvfsim run --out DIR` writes (docs/design.md, "Command line"):
// summary.json, kernels.csv, timeline.csv, clock_switches.csv, trace.json,
// manifest.json; all written atomically.
#include <iosfwd>
#include <string>

#include "apps/runner.h"

namespace dvfsim {

std::string summary_json(const RunSpec& spec, const Simulation& sim);
std::string kernels_csv(const Simulation& sim);
std::string timeline_csv(const Simulation& sim);
std::string clock_switches_csv(const Simulation& sim);
std::string perfetto_trace_json(const Simulation& sim);
std::string manifest_json(const RunSpec& spec, const Simulation& sim);
// The clocks the policy asked for during the last iteration, as a repeating
// time-window plan for `dvfsim hw apply` (format in docs/hw.md).
std::string clock_plan_json(const RunSpec& spec, const Simulation& sim);

void write_run_outputs(const std::string& dir, const RunSpec& spec, const Simulation& sim);
// The short human table `run` prints.
void print_run_summary(std::ostream& out, const RunSpec& spec, const Simulation& sim);
// One line per distinct kernel (name, class, phase) with the clocks chosen.
void print_kernel_choices(std::ostream& out, const Simulation& sim, std::size_t max_rows);

}  // namespace dvfsim
