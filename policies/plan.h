#pragma once
// Shared planning helpers of the optimising policies (docs/policies.md):
//
//  - the clock grid: every supported (core, memory) pair of a device;
//  - per-item time/energy tables over the grid, computed once per policy run
//    from the latency and power models (an item is a kernel, a group of
//    identical kernels, or a whole phase), with the firmware power cap applied
//    per kernel and the idle power of the gap after a kernel included;
//  - each item's lower convex hull in the (time, energy) plane;
//  - the multiple-choice knapsack solver (least energy under a time budget) by
//    Lagrangian relaxation with bisection on the multiplier, a greedy fill of
//    the budget left over, and the dual bound that proves how far from optimal
//    the answer can be; the same hulls give edp/ed2p optima;
//  - solver reports (primal, dual bound, gap) that `dvfsim run` can print;
//  - for online policies: a learner that records the profiling iteration the
//    way an online policy may see it, and a switcher that issues each planned
//    switch early by the expected switch latency so that it lands on time.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "policies/objective.h"
#include "sim/gpu_timeline.h"
#include "sim/models.h"
#include "sim/policy.h"
#include "sim/result.h"

namespace dvfsim::plan {

// ---------------------------------------------------------------- the grid

// Every supported pair of a device, memory-major, core ascending within one
// memory clock: pairs of memory index m are [mem_begin[m], mem_begin[m + 1]).
struct Grid {
  std::vector<Clocks> pairs;
  std::vector<std::uint32_t> mem_begin;
  // Index of a pair, or -1 when the device does not support it.
  int find(std::int32_t core_mhz, std::int32_t memory_mhz) const;
};
Grid make_grid(const Device& d);

// ---------------------------------------------------------------- tables

// What a table row is built from: one kernel's cost, repeated `count` times.
struct ItemSpec {
  KernelCost cost;
  double time_scale = 1.0;        // measured / modelled time (online policies); 1 = the model
  double gap_ns = 0.0;            // idle time after the kernel, spent at its clocks
  std::int32_t max_core_mhz = 0;  // the firmware's cap in force for it (0: none)
  std::uint32_t count = 1;
};

// The firmware's power cap enters the tables in two ways: an item's
// max_core_mhz (the cap the governor emulation below predicts for it: a pair
// with a higher core clock runs at the cap), and optionally a per-kernel cap:
struct TableOptions {
  // Per-kernel power cap in W: a pair whose modelled power for the kernel
  // exceeds it runs at the highest core clock that fits. <= 0: none (the
  // default: the firmware caps windows of activity, not kernels, which the
  // governor emulation models).
  double cap_w = 0.0;
};
TableOptions default_table_options(const Device& d);

// time and energy of every item at every grid pair (row-major, item x pair).
// Energy = kernel power x time + context-idle power at the same clocks x gap:
// the whole board power, so a slower kernel pays the static power over the
// time it adds.
struct Tables {
  Grid grid;
  std::size_t items = 0;
  std::size_t pairs = 0;
  std::vector<double> time_ns;
  std::vector<double> energy_j;
  std::vector<std::uint32_t> count;
  double t(std::size_t item, std::size_t pair) const { return time_ns[item * pairs + pair]; }
  double e(std::size_t item, std::size_t pair) const { return energy_j[item * pairs + pair]; }
  std::uint64_t copies() const;
};
Tables build_tables(const Device& d, const LatencyModel& lat, const PowerModel& pow,
                    const std::vector<ItemSpec>& items, const TableOptions& opt);
// Sums rows of `t` into groups: group g's row is the sum of count x row over
// the items with group_of[item] == g (count of every group: 1).
Tables group_tables(const Tables& t, const std::vector<std::uint32_t>& group_of,
                    std::size_t groups);

// Groups identical kernels (same cost, scale and gap to 0.1 us) into items.
struct Grouping {
  std::vector<ItemSpec> items;
  std::vector<std::uint32_t> item_of;  // per input kernel
};
Grouping group_identical(const std::vector<ItemSpec>& kernels);

// ---------------------------------------------------------------- firmware

// A planned sequence run on the engine's own GPU model (sim/gpu_timeline.h)
// with switches that land at once: kernels back to back with their gaps, each
// memory-clock change stalling the GPU for the stall the engine expects, the
// firmware cap updated every governor period. It predicts the cap each kernel
// will meet, and the plan's time and energy.
struct Emulation {
  std::vector<std::int32_t> cap_mhz;  // cap in force when each kernel starts
  std::vector<double> time_of_step;   // kernel durations (ns)
  double time_ns = 0.0;               // first start to last end (gaps and stalls included)
  double energy_j = 0.0;
  std::int64_t memory_switches = 0;
};
struct EmulationStart {
  std::int32_t cap_mhz = 0;  // the cap in force at the start (0: computed as the engine's warm-up)
  Clocks warm_pair;          // warm-up: the clocks set before the run
  double first_tick_ns = -1.0;  // time of the first governor tick (< 0: one period in)
  // The clocks in force before the first kernel (memory_mhz 0: none): a
  // different memory clock for the first kernel costs a stall.
  Clocks from;
  // GPU stall per memory switch (< 0: the device's; policies pass
  // PolicyContext::expected_memory_stall_ns(), which honours the engine's
  // settings and never exceeds the switch latency).
  double stall_ns = -1.0;
};
Emulation emulate(const GpuModel& m, const std::vector<ItemSpec>& kernels,
                  const std::vector<Clocks>& pairs, const EmulationStart& start);
// The simulated GPU a policy runs on (its models and firmware), for emulate().
GpuModel gpu_model(const PolicyContext& ctx);

// ---------------------------------------------------------------- hulls

// Each item's lower-left convex hull in the (time, energy) plane: vertices in
// ascending time and descending energy, slopes increasing towards 0. Only hull
// vertices can minimise E + lambda T.
struct Hulls {
  std::vector<std::uint32_t> begin;  // item i: vertices [begin[i], begin[i + 1])
  std::vector<std::int32_t> pair;
  std::vector<double> t, e;
  std::vector<char> allowed;  // the pairs considered (empty: all)
  std::size_t size(std::size_t item) const { return begin[item + 1] - begin[item]; }
};
// `allowed` (optional, one flag per grid pair) restricts the pairs considered.
Hulls lower_hulls(const Tables& t, const std::vector<char>* allowed = nullptr);

// ---------------------------------------------------------------- the solver

// An assignment: for every item, how many of its copies run at which pair.
struct Choice {
  std::int32_t pair = 0;
  std::uint32_t count = 0;
};
struct Assignment {
  std::vector<std::vector<Choice>> items;
  // The pair of the r-th copy of an item (copies in launch order).
  std::int32_t pair_of(std::size_t item, std::uint32_t r) const;
};

struct Solution {
  Assignment assignment;
  double time_ns = 0.0;  // sum over copies (no offsets)
  double energy_j = 0.0;
  // Lagrangian dual bound: no assignment meeting the budget uses less energy.
  // Equal to energy_j when the solution is provably optimal.
  double dual_bound_j = 0.0;
  double lambda = 0.0;   // J/ns at the solution
  bool feasible = true;  // false: even the fastest pairs miss the budget
  int iterations = 0;    // bisection steps
  double gap_j() const { return energy_j - dual_bound_j; }
  double gap_pct() const { return energy_j > 0 ? 100.0 * gap_j() / energy_j : 0.0; }
};

// Least energy with sum(time) <= budget_ns: Lagrangian relaxation over the
// hulls (bisection on lambda, every item at argmin E + lambda T), then a greedy
// fill of the leftover budget along hull edges in order of joules saved per ns
// and one pass over all pairs. budget_ns = +inf gives each item its least
// energy. An infeasible budget gives the fastest pairs (feasible = false).
Solution solve_budget(const Tables& t, const Hulls& h, double budget_ns);

// Minimises objective.score(E + energy_offset, T + time_offset) over the
// aggregate hull (every Lagrangian breakpoint and the copies between them);
// for waste and energy it calls solve_budget with
// budget = objective.budget(reference_ns) - time_offset_ns.
Solution solve_objective(const Tables& t, const Hulls& h, const Objective& o, double reference_ns,
                         double time_offset_ns, double energy_offset_j);

// Every copy at the same pair `pair` (totals only).
Solution at_pair(const Tables& t, std::int32_t pair);

// ---------------------------------------------------------------- reports

// One solve, as `dvfsim run` reports it: what was solved, the primal, the
// Lagrangian bound and the gap.
struct SolveReport {
  std::string policy;
  std::string what;
  std::size_t items = 0;
  std::uint64_t copies = 0;
  std::size_t pairs = 0;
  std::size_t hull_vertices = 0;
  double budget_ns = 0.0;
  double time_ns = 0.0;
  double energy_j = 0.0;
  double dual_bound_j = 0.0;
  double gap_j = 0.0;
  double gap_pct = 0.0;
  bool feasible = true;
  double solve_ms = 0.0;
  std::string line() const;  // one readable line
};
// Stores the report for this thread and, unless quiet_reports(true), writes
// its line to stderr prefixed "dvfsim: ".
void publish(const SolveReport& r);
// The reports published on this thread since the last clear_reports().
const std::vector<SolveReport>& reports();
void clear_reports();
// Silences the stderr lines on this thread (tests, sweeps).
void quiet_reports(bool quiet);
// One free-form line on stderr ("dvfsim: " prefixed) unless quiet.
void note(const std::string& line);

// ---------------------------------------------------------------- kernel plans

// Budget tightening after a plan missed its budget in emulation or replay:
// the next round's knapsack budget shrinks by kOvershootTightening x the
// overshoot (the knapsack's separable time model misses part of what the
// emulation sees, the firmware cap and stalls, so taking off the overshoot
// alone tends to miss again) plus kBudgetTighteningFloor x the budget (so
// that an overshoot of a few ns still moves the plan).
inline constexpr double kOvershootTightening = 1.5;
inline constexpr double kBudgetTighteningFloor = 1e-5;
inline double tightening_ns(double overshoot_ns, double budget_ns) {
  return kOvershootTightening * overshoot_ns + kBudgetTighteningFloor * budget_ns;
}
// Rounds of plan_kernels: solve with the caps the emulation predicts, emulate,
// repeat until the caps are a fixed point. The shipped traces settle in 2-5
// rounds; the bound stops a plan whose caps oscillate.
inline constexpr int kCapRounds = 16;
// Re-solves of plan_steps with the memory-switch stalls taken out of the
// budget, and of the online planners' tightening: each round removes most
// of the overshoot, so a few suffice; more only cost solve time.
inline constexpr int kStallReserveRounds = 4;
inline constexpr int kTighteningRounds = 4;

// How a per-kernel plan may use the memory clock. A memory switch stalls the
// GPU (Device::memory_switch_stall_us), which the separable knapsack cannot
// see: `per-kernel` ignores it (the published method), `fixed` keeps one
// memory clock for the whole plan (the best one) and picks core clocks per
// kernel, `auto` solves both, charges the per-kernel plan its stalls (time and
// idle energy) and keeps the better.
enum class MemoryMode { automatic, per_kernel, fixed };
std::vector<ParamSpec> memory_mode_params();
MemoryMode parse_memory_mode(const Params& p, const std::string& policy);

// How the time budget is shared: `global` holds only the total (knapsack),
// `local` holds every step (kernel or phase) to its own reference time x
// (1 + max_slowdown/100).
enum class Aggregation { global, local };
std::vector<ParamSpec> aggregation_params();
Aggregation parse_aggregation(const Params& p, const std::string& policy);

// A plan over a sequence of steps (kernels, or phases), each step one copy of
// a table item: the r-th occurrence of item i in `sequence` is its r-th copy
// (the item counts must match the occurrences).
struct PlanInput {
  const Device* device = nullptr;
  const PowerModel* power = nullptr;
  const Tables* tables = nullptr;
  std::vector<std::uint32_t> sequence;
  bool cyclic = true;  // the sequence repeats (memory switch from last to first)
  Objective objective;
  Aggregation aggregation = Aggregation::global;
  MemoryMode memory = MemoryMode::automatic;
  // Modelled total time = time_offset + sum of step times (+ stalls), held to
  // objective.budget(reference_ns). reference_ns < 0: the modelled time at the
  // device's default clocks.
  double reference_ns = -1.0;
  double time_offset_ns = 0.0;
  // Local aggregation: each step's own reference time (empty: at default clocks).
  std::vector<double> step_reference_ns;
  double memory_stall_ns = -1.0;  // per memory switch (< 0: the device's)
  std::string policy;             // for the report
  std::string what;
  bool publish = true;  // publish the report
};

struct Plan {
  std::vector<std::int32_t> pair_of_step;  // grid index per step
  std::vector<double> time_of_step;        // modelled ns at that pair
  double time_ns = 0.0;                    // modelled total: offset, steps and stalls
  double energy_j = 0.0;                   // modelled total: steps and stalls
  double budget_ns = 0.0;                  // on the total; +inf when unbounded
  std::int64_t memory_switches = 0;
  std::string mode;  // the memory mode chosen
  SolveReport report;
};
// Plans one pair per step; publishes the solver report.
Plan plan_steps(const PlanInput& in);

// A per-kernel (or per-group) plan checked against the firmware: the
// reference is the emulated run at the device's default clocks (what the
// `native` baseline does), the budget objective.budget(reference); then, for
// rounds, tables are built with the caps the emulation predicts for each
// kernel, the knapsack is solved (plan_steps), and the plan is emulated again
// (new caps, and the budget tightened by any overshoot), until a round's caps
// and budget are those it started from (a fixed point) or `rounds` have run.
// The best plan whose emulated time meets the budget is kept — the default
// clocks when none does.
struct KernelPlanInput {
  GpuModel gpu;                   // the simulated GPU (gpu_model(ctx))
  std::vector<ItemSpec> kernels;  // one per kernel, launch order, count 1
  // Optional: kernels of one group share one pair (pass-level); groups are
  // numbered in order of first appearance.
  std::vector<std::uint32_t> group_of_kernel;
  std::size_t groups = 0;
  EmulationStart start;           // firmware state when the plan starts
  PlanInput plan;                 // objective, aggregation, memory, cyclic, policy, what
  int rounds = kCapRounds;        // at most
  double extra_tighten_ns = 0.0;  // taken off the knapsack budget from the start
};
struct KernelPlan {
  std::vector<Clocks> pairs;        // per kernel
  std::vector<Clocks> group_pairs;  // per group, when grouped
  Emulation emulation;              // of the chosen plan
  double reference_ns = 0.0;        // emulated time at default clocks
  double reference_energy_j = 0.0;
  double budget_ns = 0.0;
  SolveReport report;
};
KernelPlan plan_kernels(const KernelPlanInput& in);

// The whole run as an oracle sees it before it starts: every kernel's cost
// and the idle gap after each (from the baseline run, else from the trace);
// the firmware warmed up at the default clocks (the policy sets no clocks in
// begin()). Fills gpu, kernels, start and plan.cyclic.
KernelPlanInput whole_run_input(const PolicyContext& ctx);

// Oracles only (it replays the whole run): the run under a per-kernel plan
// (each kernel's pair requested when it starts; nullptr: no requests, the
// default clocks), replayed by the engine itself with the governor rule above
// and the expected core switch latency. Used to check a plan against its
// budget before committing to it.
RunResult replay_plan(const PolicyContext& ctx, const std::vector<Clocks>* pairs);

// Number of memory-clock changes along a sequence of grid pairs (cyclic when
// `cyclic`: the last pair is followed by the first, as in a repeated step).
std::int64_t memory_changes(const Grid& g, const std::vector<std::int32_t>& pair_of, bool cyclic);

// ---------------------------------------------------------------- online

// What an online policy saw of one kernel of its profiling iteration: the
// kernel as launched (name, launch configuration, cost from the latency model's
// split) and, once it ended, its measured duration at the clocks it ran at.
struct Observed {
  std::uint32_t name_id = 0;
  std::uint64_t launch_key = 0;
  Phase phase = Phase::other;
  KernelClass cls = KernelClass::other;
  KernelCost cost;
  Clocks clocks;  // effective clocks when it started
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  double scale = 1.0;         // measured / modelled duration at `clocks`
  double gap_after_ns = 0.0;  // until the next kernel started
  double measured_ns() const { return static_cast<double>(end_ns - start_ns); }
};

// Records the kernels of one profiling iteration (the first one the policy
// sees) from on_kernel_start / on_kernel_end alone, then follows later
// iterations position by position, checking every launched kernel against the
// learned sequence (name and launch configuration) and re-synchronising
// within a window when the sequence deviates.
// The measured / modelled duration ratio a profiling kernel may teach: a
// kernel measured at less than half or more than twice its modelled time was
// disturbed (a switch or a stall landed inside it, the cap moved), and the
// ratio would mislead every later plan of that position.
inline constexpr double kMinTimeScale = 0.5;
inline constexpr double kMaxTimeScale = 2.0;

class SequenceLearner {
 public:
  void on_start(PolicyContext& ctx, std::uint32_t kernel);
  void on_end(PolicyContext& ctx, std::uint32_t kernel);
  // True from the first kernel of the iteration after the profiling one.
  bool learned() const { return learned_; }
  // True exactly during the on_start call in which learning completed.
  bool just_learned() const { return just_learned_; }
  const std::vector<Observed>& sequence() const { return seq_; }
  // Position in the learned sequence of the kernel started last; -1 while
  // profiling or when lost.
  int position() const { return pos_; }
  // The profiling iteration's time: first start to the next iteration's first start.
  double iteration_ns() const { return iteration_ns_; }
  // Sum of the measured durations of the profiling iteration.
  double busy_ns() const;

 private:
  bool learned_ = false, just_learned_ = false;
  std::int32_t profiling_iteration_ = -1;
  std::int32_t current_iteration_ = -1;
  std::vector<Observed> seq_;
  int pos_ = -1;
  int lost_from_ = 0;
  std::int64_t first_start_ns_ = 0;
  double iteration_ns_ = 0.0;
};

std::uint64_t launch_key(const Kernel& k);

// Items (one per position) of a learned sequence, for build_tables.
std::vector<ItemSpec> items_from(const std::vector<Observed>& seq);

// Drives a per-position plan of pairs through ctx.request. With `early`, each
// change of pair is requested ahead of the kernel it is for by the expected
// switch latency of the domains that change (core, memory), predicted from
// the planned durations and observed gaps, via set_timer or the end of an
// earlier kernel; it lands on time when the prediction holds. Without
// `early`, each change is requested when its kernel starts.
// A switch whose expected latency is at most this lands (almost) at once: it
// is requested when its kernel starts, since an early request would land
// inside the kernel before, if that one runs late (1 us: far below any
// kernel-to-kernel stretch, far above the zero of --set switch_latency_us=0).
inline constexpr double kImmediateSwitchNs = 1000.0;

class Switcher {
 public:
  struct Step {
    Clocks pair;
    double duration_ns = 0.0;  // predicted at `pair`
    double gap_ns = 0.0;       // predicted idle time after it
  };
  void set_plan(std::vector<Step> steps, bool early) {
    steps_ = std::move(steps);
    early_ = early;
    issued_ordinal_ = -1;
  }
  bool active() const { return !steps_.empty(); }
  // The kernel at `position` of the plan starts now (position < 0: unknown,
  // the switcher stops predicting until the next known position).
  void on_start(PolicyContext& ctx, int position);
  void on_end(PolicyContext& ctx);
  void on_timer(PolicyContext& ctx);
  double lead_ns(const PolicyContext& ctx, const Clocks& from, const Clocks& to) const;

 private:
  void schedule(PolicyContext& ctx, std::int64_t next_free_ns);
  std::vector<Step> steps_;
  bool early_ = true;
  int pos_ = -1;
  std::int64_t ordinal_ = 0;   // kernels started under the plan
  std::int64_t start_ns_ = 0;  // start of the current kernel
  bool running_ = false;
  std::int64_t issued_ordinal_ = -1;  // ordinal of the kernel the last early request is for
};

// Context-idle power at a pair.
double idle_power_w(const PowerModel& pow, const Clocks& c);

// What the solvers charge for memory switches, which their separable cost
// models cannot see: each stalls the GPU for `ns` at context-idle power `w`
// (the engine's stall, sim/gpu_timeline.h; emulate() checks the plan on it).
struct StallCharge {
  double ns = 0.0;
  double w = 0.0;
  double time_ns(std::int64_t switches) const { return static_cast<double>(switches) * ns; }
  double energy_j(std::int64_t switches) const { return time_ns(switches) * w * 1e-9; }
};

// An online policy that learns the kernel sequence during a profiling
// iteration (SequenceLearner), makes its plan once when the sequence is known,
// and follows it with a Switcher from then on.
class LearnThenFollow : public Policy {
 public:
  void on_kernel_start(PolicyContext& ctx, std::uint32_t kernel) override {
    learner_.on_start(ctx, kernel);
    if (learner_.just_learned()) make_plan(ctx);
    if (switcher_.active()) switcher_.on_start(ctx, learner_.position());
  }
  void on_kernel_end(PolicyContext& ctx, std::uint32_t kernel) override {
    learner_.on_end(ctx, kernel);
    if (switcher_.active()) switcher_.on_end(ctx);
  }
  void on_timer(PolicyContext& ctx) override {
    if (switcher_.active()) switcher_.on_timer(ctx);
  }

 protected:
  // Called once, when the learner has the sequence; sets switcher_'s plan.
  virtual void make_plan(PolicyContext& ctx) = 0;

  SequenceLearner learner_;
  Switcher switcher_;
};

}  // namespace dvfsim::plan
