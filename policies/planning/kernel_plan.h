#pragma once
// Plans of one pair per step (a kernel, a group of identical kernels, a
// phase): the knapsack under the objective with the memory-clock modes
// (plan_steps), and per-kernel plans checked against the firmware by emulation
// until the caps they meet are a fixed point (plan_kernels).
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "policies/objective.h"
#include "policies/planning/emulation.h"
#include "policies/planning/report.h"
#include "policies/planning/solver.h"
#include "policies/planning/tables.h"
#include "sim/params.h"
#include "sim/policy.h"
#include "sim/result.h"

namespace dvfsim::plan {

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
// Re-planning until a plan's check (a policy's rehearsal, an oracle's replay)
// meets the budget. `check(tighten_ns)` plans with that much more taken off
// the planner's budget, checks the plan and returns by how much its time
// missed the budget (<= 0: met; nullopt: no plan); the caller keeps the
// checked plans and picks the best that met. The plan is made first
// untightened, then tightened by tightening_ns of each miss, up to `checks`
// plans in all, until one meets the budget, misses by more than
// `hopeless_ns`, or there is no plan. Then, if the first plan missed, the
// ladder: kLadderFractions of the first re-plan's tightening, smallest first,
// until one meets the budget. The per-kernel knapsack and the segment DP are
// not monotone in their budget (the knapsack's cap rounds settle elsewhere;
// a switch latency the plan ignores moves its checked time by up to 2 %
// either way), so tightening by 1.5x a miss can land on a plan that misses by
// more, or meets the budget with much to spare, where a smaller tightening
// meets it at less energy: docs/policies.md, "Re-planning down a ladder". The
// fractions are a choice (three more checks at most), not fitted. Returns
// whether a plan met the budget.
inline constexpr double kLadderFractions[] = {0.125, 0.25, 0.5};
// `hopeless_ns` for a caller that re-plans after any miss (the oracles).
inline constexpr double kNeverHopeless = std::numeric_limits<double>::infinity();
bool replan_until_met(int checks, double budget_ns, double hopeless_ns,
                      const std::function<std::optional<double>(double tighten_ns)>& check);
// Rounds of plan_kernels: solve with the caps the emulation predicts, emulate,
// repeat until the caps are a fixed point, the round's state (caps and budget)
// repeats an earlier round's (the rounds would cycle), or kPlateauRounds rounds
// in a row have not improved the best plan. The caps of a per-kernel plan
// rarely reach a fixed point: they oscillate between a few sets. On the
// shipped trace the best plan comes by round 9 in every configuration checked
// and is never improved after eight rounds without progress (four are not
// enough: pass-level at max_slowdown=5 on the RTX 3080 Ti improves in round
// 9 after four), docs/policies.md "Planning rounds"; kCapRounds bounds the loop.
inline constexpr int kCapRounds = 16;
inline constexpr int kPlateauRounds = 8;
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
  // Optional: the hulls of every memory mode (mode_hulls order), computed by
  // the caller from cached rows; else plan_steps computes them.
  const std::vector<Hulls>* hulls = nullptr;
  // Optional, instead of hulls: each item's chains (PlanCache::chains), from
  // which plan_steps builds a mode's hulls when it solves that mode. A
  // fixed-memory mode whose least time (every step at its fastest pair of
  // that memory clock) misses the budget is then solved only if no mode
  // meets it: its plan could not be chosen otherwise.
  const std::vector<const ModeChains*>* chains = nullptr;
  Hulls* scratch = nullptr;  // optional: where those hulls are built (reused)
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
// Plans one pair per step; the plan carries its solve report.
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
  EmulationStart start;                 // firmware state when the plan starts
  PlanInput plan;                       // objective, aggregation, memory, cyclic, policy, what
  int rounds = kCapRounds;              // at most
  int plateau_rounds = kPlateauRounds;  // rounds without a better plan before it stops
  double extra_tighten_ns = 0.0;        // taken off the knapsack budget from the start
  // Optional: rows and hulls shared with the caller's other plans of these
  // models (no part of the plan's input: the plan is the same without it).
  PlanCache* cache = nullptr;
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

// Plans computed once per distinct input. While a PlanMemo is installed on a
// thread (PlanMemo::Scope), plan_kernels returns the plan it computed before
// for an input equal to this one field by field (kernels, groups, start,
// objective, memory mode, rounds, tightening, and the models by identity),
// for the models the memo was told to admit: objects that outlive it (a
// sweep's shared prepared inputs, apps/runner.h RunCache). plan_kernels is a
// deterministic function of its input, so a remembered plan equals a fresh
// one bit for bit; the report's policy and description are the caller's, its
// solve time the lookup's. Thread-safe.
class PlanMemo {
 public:
  void admit(const GpuModel& m);
  bool admits(const GpuModel& m) const;
  std::size_t hits() const;
  std::size_t misses() const;
  // Installs `memo` (nullptr: none) on this thread until the scope ends.
  class Scope {
   public:
    explicit Scope(PlanMemo* memo);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PlanMemo* previous_;
  };
  static PlanMemo* current();

  using Key = std::pair<std::uint32_t, std::string>;  // (kernels blob, the rest)
  Key key(const KernelPlanInput& in);
  std::shared_ptr<const KernelPlan> find(const Key& k);
  void insert(const Key& k, KernelPlan plan);

  // Appends the bytes of scalars to a key (or a remember() tag).
  struct KeyBytes {
    std::string s;
    template <class T>
    KeyBytes& operator<<(const T& v) {
      static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_pointer_v<T>);
      s.append(reinterpret_cast<const char*>(&v), sizeof v);
      return *this;
    }
    KeyBytes& operator<<(const Clocks& c) { return *this << c.core_mhz << c.memory_mhz; }
  };

  // Another planner's result for `in` (every field key() reads) and `tag`
  // (what else the result depends on), computed by `compute` on the first
  // call; without an installed memo admitting in.gpu, computed every time.
  template <class T, class Fn>
  static T remember(const KernelPlanInput& in, const std::string& tag, Fn&& compute) {
    PlanMemo* memo = current();
    if (!memo || !memo->admits(in.gpu)) return compute();
    Key k = memo->key(in);
    k.second += tag;
    if (const std::shared_ptr<const void> hit = memo->find_other(k))
      return *static_cast<const T*>(hit.get());
    T value = compute();
    memo->insert_other(k, std::make_shared<const T>(value));
    return value;
  }
  std::shared_ptr<const void> find_other(const Key& k);
  void insert_other(const Key& k, std::shared_ptr<const void> value);

  // Rows and hulls of the admitted models of `m` (PlanCache's store) that no
  // other cache uses now: one an earlier plan left, else a new one. A store
  // grown past kMaxStoreBytes is replaced by a new one when handed out again.
  std::shared_ptr<PlanStore> store(const GpuModel& m);

 private:
  static constexpr std::size_t kMaxStoreBytes = std::size_t{256} << 20;
  // Plans kept at most (about 100 KB each on the shipped trace); later ones
  // are computed every time.
  static constexpr std::size_t kMaxPlans = 4096;
  // find and insert, over either map.
  template <class V>
  std::shared_ptr<V> find_in(std::map<Key, std::shared_ptr<V>>& map, const Key& k);
  template <class V>
  void insert_in(std::map<Key, std::shared_ptr<V>>& map, const Key& k, std::shared_ptr<V> value);
  mutable std::mutex m_;
  std::set<std::tuple<const void*, const void*, const void*, const void*>> admitted_;
  std::map<std::string, std::uint32_t> blobs_;
  std::map<Key, std::shared_ptr<const KernelPlan>> plans_;
  std::map<Key, std::shared_ptr<const void>> others_;
  std::multimap<std::tuple<const void*, const void*, const void*>, std::shared_ptr<PlanStore>>
      stores_;
  std::size_t hits_ = 0, misses_ = 0;
};

// The whole run as an oracle sees it before it starts: every kernel's cost
// and the idle gap after each (from the baseline run, else from the trace);
// the firmware warmed up at the default clocks (the policy sets no clocks in
// begin()). Fills gpu, kernels, start and plan.cyclic.
KernelPlanInput whole_run_input(const PolicyContext& ctx);

}  // namespace dvfsim::plan
