#pragma once
// What a replay produces: per-kernel outcomes, the power/clock timeline, every
// clock switch, and totals.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dvfsim {

struct KernelResult {
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  double core_mhz = 0.0;  // time-weighted effective clocks while it ran
  double memory_mhz = 0.0;
  std::int32_t requested_core_mhz = 0;  // what the policy wanted when it started
  std::int32_t requested_memory_mhz = 0;
  double energy_j = 0.0;  // energy while it ran (stalls inside it included)
};

// A stretch of constant clocks and power.
struct Segment {
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  std::int32_t core_mhz = 0;
  std::int32_t memory_mhz = 0;
  double power_w = 0.0;
  std::int32_t kernel = -1;  // kernel index, kIdle or kStall
  static constexpr std::int32_t kIdle = -1;
  static constexpr std::int32_t kStall = -2;
};

struct SwitchRecord {
  enum class Domain : std::uint8_t { core, memory, power_cap };
  Domain domain = Domain::core;
  std::int64_t request_ns = 0;
  std::int64_t land_ns = 0;
  std::int32_t from_mhz = 0;
  std::int32_t to_mhz = 0;
  std::int64_t stall_ns = 0;
};

// One solve of a planning policy (policies/planning/report.h): what was
// solved, the primal, the Lagrangian dual bound and the gap, the rounds of
// re-planning it took. The runner copies a policy's reports into its result;
// summary.json lists them under "solver" and `dvfsim run` prints one line each.
struct SolveReport {
  std::string policy;
  std::string what;
  std::size_t items = 0;
  std::uint64_t copies = 0;
  std::size_t pairs = 0;
  std::size_t hull_vertices = 0;
  double budget_ns = 0.0;  // +inf: unbounded
  double time_ns = 0.0;
  double energy_j = 0.0;
  double dual_bound_j = 0.0;
  double gap_j = 0.0;
  double gap_pct = 0.0;
  bool feasible = true;
  int rounds = 0;         // re-planning rounds (caps, tightening, replays) the solve took
  double solve_ms = 0.0;  // wall time (printed, not in summary.json: results stay reproducible)
};

struct RunResult {
  std::string policy;
  bool oracle = false;
  std::int64_t begin_ns = 0;  // start of the first kernel
  std::int64_t end_ns = 0;    // end of the last kernel
  double energy_j = 0.0;      // integrated over [begin_ns, end_ns]
  std::int32_t iterations = 0;
  std::vector<std::int64_t> iteration_time_ns;
  std::vector<double> iteration_energy_j;
  std::vector<KernelResult> kernels;
  std::vector<Segment> segments;  // only when recording the timeline
  std::vector<SwitchRecord> switches;
  std::int64_t clock_switches = 0;      // policy switches that landed and changed a clock
  std::int64_t coalesced_requests = 0;  // requests that replaced a pending target
  std::int64_t switch_stall_ns = 0;
  std::int64_t off_target_ns = 0;         // time before a wanted switch landed (cap aside)
  std::int64_t power_capped_ns = 0;       // time the firmware cap held the core below the request
  std::int64_t host_delay_ns = 0;         // final host shift imposed by the GPU
  std::vector<SolveReport> solver;        // the policy's solve reports (Policy::solve_reports)
  std::vector<std::string> policy_notes;  // and its notes (Policy::notes)

  double time_s() const { return static_cast<double>(end_ns - begin_ns) * 1e-9; }
};

}  // namespace dvfsim
