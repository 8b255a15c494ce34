// `kernel-predictive`: online per-kernel DVFS. It runs its profiling iteration
// (the first one it sees) at the device's default clocks, recording only what
// an online policy may see: each kernel as it is launched (name, launch
// configuration, the latency model's split of its work) and, when it ends,
// its measured duration at the clocks it ran at (a scale factor on the
// model). When the next iteration starts it plans one pair per position of
// the learned sequence (the same knapsack as kernel-oracle, budget from the
// observed iteration time), then follows the repeating sequence, checking
// every launched kernel against the prediction, and issues each switch ahead
// of the kernel it is for by the expected switch latency (set_timer or the
// end of an earlier kernel) so that it lands on time.
#include <fmt/format.h>

#include <memory>

#include "policies/objective.h"
#include "policies/online/budget_guard.h"
#include "policies/online/learn_then_follow.h"
#include "policies/online/rehearsal_plan.h"
#include "policies/planning/kernel_plan.h"
#include "policies/registry.h"

namespace dvfsim {
namespace {

class KernelPredictive final : public plan::LearnThenFollow {
 public:
  explicit KernelPredictive(const Params& p)
      : objective_(parse_objective(p, "kernel-predictive")),
        memory_(plan::parse_memory_mode(p, "kernel-predictive")),
        early_(p.integer("early") != 0),
        guard_enabled_(p.integer("guard") != 0) {
    host_slack_ = plan::parse_host_slack(p, "kernel-predictive");
    switcher_.set_idle_drop(p.integer("idle_drop") != 0);
  }

 private:
  bool make_plan(PolicyContext& ctx) override {
    const auto& seq = learner_.sequence();
    const Device& d = ctx.device();
    plan::KernelPlanInput in;
    in.gpu = plan::gpu_model(ctx);
    // Rows and hulls shared by the re-plans; kept (with rest_in_) only when
    // the plan is followed, so that a failed re-plan leaves the plan in force
    // as it was.
    auto cache = std::make_unique<plan::PlanCache>(in.gpu);
    in.cache = cache.get();
    in.kernels = learned_items();
    // The firmware now (start_cap_mhz).
    in.start.cap_mhz = start_cap_mhz(ctx);
    in.start.from = start_clocks(ctx);
    in.start.stall_ns = ctx.expected_memory_stall_ns();
    in.plan.objective = objective_;
    in.plan.memory = memory_;
    in.plan.cyclic = true;
    in.plan.policy = "kernel-predictive";
    in.plan.what = fmt::format("per-kernel knapsack over the {} kernels of the profiling iteration",
                               seq.size());
    const std::size_t n = seq.size();
    const Clocks def = default_clocks(d);
    // The plan is checked by rehearsal on the learned iteration
    // (policies/online/rehearsal.h): switches at the expected latency,
    // followed as they will be. A plan whose switches land on the wrong
    // kernels (kernels far shorter than the latency) or inside late-running
    // ones shows there as lost time; it is re-planned tighter by its overshoot
    // (up to kRehearsalChecks times) and, when no plan meets the budget or
    // saves energy, the default clocks are held.
    const plan::RehearsalStart rs{in.start.cap_mhz, in.start.from};
    const plan::RehearsalStart native_rs = reference_start(ctx, rs);
    const plan::Rehearsal ref = plan::rehearse(ctx, in.kernels, nullptr, true, native_rs);
    plan::CandidateSet cands(ctx, seq, in.kernels, rs, objective_, objective_.budget(ref.time_ns));
    plan::SolveReport last;
    auto knapsack = [&](double tighten) {
      plan::KernelPlanInput k = in;
      k.extra_tighten_ns = tighten;
      const plan::KernelPlan p = plan::plan_kernels(k);
      last = p.report;
      return plan::Proposal{!(p.pairs == std::vector<Clocks>(n, def)), p.pairs, p.emulation};
    };
    const bool real_latency = std::max(ctx.expected_core_switch_ns(),
                                       ctx.expected_memory_switch_ns()) > plan::kImmediateSwitchNs;
    cands.consider(early_ ? "followed early" : "requested at kernel start", early_, knapsack);
    // With a real latency a switch requested early may land inside a
    // late-running kernel; requested at kernel start it lands late instead:
    // the rehearsal decides.
    if (early_ && real_latency) cands.consider("requested at kernel start", false, knapsack);
    // The plan made as if switches were free (no memory stall in the
    // knapsack or its emulation): the knapsack's cap rounds settle on
    // different plans with and without a stall, and the rehearsal charges
    // the stall either way.
    if (in.start.stall_ns > 0)
      cands.consider(
          "planned without stalls, requested at kernel start", false, [&](double tighten) {
            plan::KernelPlanInput k = in;
            k.start.stall_ns = 0;
            k.extra_tighten_ns = tighten;
            const plan::KernelPlan p = plan::plan_kernels(k);
            return plan::Proposal{!(p.pairs == std::vector<Clocks>(n, def)), p.pairs, p.emulation};
          });
    consider_plan_in_force(cands, in.gpu, in.kernels, in.start);
    const plan::RehearsedCandidate* best = cands.best(ref);
    last.what += fmt::format("; rehearsed: {}; chose {}", cands.summary(),
                             best ? best->name : std::string("the default clocks"));
    last.time_ns = best ? best->rehearsal.time_ns : ref.time_ns;
    last.budget_ns = objective_.budget(ref.time_ns);
    report(last);
    if (!best) {
      if (replanning()) return false;  // LearnThenFollow says what it does instead
      note(fmt::format(
          "kernel-predictive: no per-kernel plan met the budget or saved energy in rehearsal at "
          "the expected switch latency ({:.3f} ms): holding the default clocks",
          std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) * 1e-6));
      return false;
    }
    cache_ = std::move(cache);
    rest_in_ = in;
    if (guard_enabled_ && objective_.time_bounded()) {
      follow_guarded(best->steps, best->early, best->rehearsal, ref,
                     objective_.budget(ref.time_ns) - ref.time_ns,
                     std::make_unique<plan::NativeShadow>(ctx, in.kernels, native_rs));
    } else {
      follow(best->steps, best->early);
    }
    return true;
  }

  // The budget guard tripped after `position`: the knapsack over the rest.
  RestPlan replan_rest(PolicyContext& ctx, int position, double repay_ns) override {
    const auto& items = rest_in_.kernels;
    return plan::rest_by_knapsack(
        ctx, rest_in_, std::vector<plan::ItemSpec>(items.begin() + position + 1, items.end()),
        repay_ns);
  }

  plan::HoldPair catch_up_clocks(PolicyContext& ctx, int position) override {
    return plan::fastest_hold_pair(ctx, rest_in_, position);
  }

  Objective objective_;
  plan::MemoryMode memory_;
  std::unique_ptr<plan::PlanCache> cache_;
  plan::KernelPlanInput rest_in_;
  bool early_;
  bool guard_enabled_;
};

std::vector<ParamSpec> params() {
  std::vector<ParamSpec> v = objective_params();
  for (auto& p : plan::memory_mode_params()) v.push_back(p);
  v.push_back({"early", ParamSpec::Kind::defaulted, "1",
               "1: issue each switch ahead of its kernel by the expected switch latency; 0: at "
               "kernel start"});
  for (auto& p : plan::learn_then_follow_params()) v.push_back(p);
  return v;
}

const bool registered = register_policy({
    "kernel-predictive",
    "Online per-kernel DVFS: learns the kernel sequence in a profiling iteration at default "
    "clocks, plans one pair per kernel (knapsack under the observed iteration time), predicts "
    "upcoming kernels from the repeating sequence and issues each switch early by the expected "
    "switch latency.",
    false,
    params(),
    [](const Params& p) { return std::make_unique<KernelPredictive>(p); },
});

}  // namespace
}  // namespace dvfsim
