// `kernel-oracle`: one pair per kernel, planned before the run with full
// knowledge of every kernel (an oracle: its results are upper bounds). The
// published method (Spaan et al., kernel-level DVFS): `aggregation=global`
// holds only the total time to the budget and solves the multiple-choice
// knapsack over all kernels (Lagrangian relaxation + greedy fill, gap
// reported); `aggregation=local` holds every kernel to its own share (its
// baseline time x (1 + max_slowdown/100)). It requests each kernel's pair when
// the kernel starts: with zero switch latency that is exactly its plan; with a
// real latency it shows what ignoring latency costs.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "policies/objective.h"
#include "policies/planning/kernel_plan.h"
#include "policies/planning/replay.h"
#include "policies/registry.h"
#include "sim/result.h"

namespace dvfsim {
namespace {

// Replays of a tightened plan before giving up on it (the default clocks):
// each replay's overshoot tightens the next plan's budget
// (plan::replan_until_met), and the shipped traces meet the budget by the second.
constexpr int kReplayChecks = 4;

class KernelOracle final : public Policy {
 public:
  explicit KernelOracle(const Params& p)
      : objective_(parse_objective(p, "kernel-oracle")),
        aggregation_(plan::parse_aggregation(p, "kernel-oracle")),
        memory_(plan::parse_memory_mode(p, "kernel-oracle")) {}

  void begin(PolicyContext& ctx) override {
    // No clocks are set here: the firmware warms up at the default clocks, as
    // under the baseline, and each kernel's pair is requested when it starts.
    const std::size_t n = ctx.workload().kernels.size();
    plan::KernelPlanInput in = plan::whole_run_input(ctx);
    plan::PlanCache cache(in.gpu);  // rows and hulls shared by the re-plans
    in.cache = &cache;
    in.plan.objective = objective_;
    in.plan.aggregation = aggregation_;
    in.plan.memory = memory_;
    in.plan.policy = "kernel-oracle";
    in.plan.what = fmt::format("per-kernel knapsack over {} kernels", n);
    // Check the plan by replaying it (an oracle may) against the budget on the
    // baseline's time, tightening the knapsack budget by any overshoot.
    const RunResult* base = ctx.baseline();
    const RunResult ref_run = base ? RunResult{} : plan::replay_plan(ctx, nullptr);
    const RunResult& ref_result = base ? *base : ref_run;
    const double ref = static_cast<double>(ref_result.end_ns - ref_result.begin_ns);
    const double budget = objective_.budget(ref);
    pairs_.clear();
    if (!objective_.time_bounded()) {
      const plan::KernelPlan kp = plan::plan_kernels(in);
      report(kp.report);
      pairs_ = kp.pairs;
      return;
    }
    // The plan of least energy that meets the budget. One that, with its
    // switches landing late, uses more energy than the default clocks is not
    // kept: the oracle then runs at the default clocks (saving 0, never
    // negative).
    double best_j = ref_result.energy_j;
    plan::replan_until_met(kReplayChecks, budget, plan::kNeverHopeless,
                           [&](double tighten) -> std::optional<double> {
                             plan::KernelPlanInput k = in;
                             k.extra_tighten_ns = tighten;
                             const plan::KernelPlan kp = plan::plan_kernels(k);
                             report(kp.report);
                             const RunResult r = plan::replay_plan(ctx, &kp.pairs);
                             const double t = static_cast<double>(r.end_ns - r.begin_ns);
                             if (!objective_.replay_meets(t, budget)) return t - budget;
                             if (r.energy_j < best_j) {
                               pairs_ = kp.pairs;
                               best_j = r.energy_j;
                             }
                             return 0.0;
                           });
  }

  void on_kernel_start(PolicyContext& ctx, std::uint32_t kernel) override {
    if (pairs_.empty()) return;  // no plan met the budget: the default clocks
    const Clocks& c = pairs_[kernel];
    if (!(ctx.wanted() == c)) ctx.request(c.core_mhz, c.memory_mhz);
  }

 private:
  Objective objective_;
  plan::Aggregation aggregation_;
  plan::MemoryMode memory_;
  std::vector<Clocks> pairs_;
};

std::vector<ParamSpec> params() {
  std::vector<ParamSpec> v = plan::aggregation_params();
  for (auto& p : objective_params()) v.push_back(p);
  for (auto& p : plan::memory_mode_params()) v.push_back(p);
  return v;
}

const bool registered = register_policy({
    "kernel-oracle",
    "One pair per kernel planned with full knowledge of the run (Spaan et al.'s kernel-level "
    "DVFS; global = knapsack over the whole run's time budget, local = each kernel within its "
    "own share); switches requested at kernel start, latency ignored. An upper bound.",
    true,
    params(),
    [](const Params& p) { return std::make_unique<KernelOracle>(p); },
});

}  // namespace
}  // namespace dvfsim
