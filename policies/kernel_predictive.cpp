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

#include "policies/objective.h"
#include "policies/online/learn_then_follow.h"
#include "policies/planning/kernel_plan.h"
#include "policies/registry.h"

namespace dvfsim {
namespace {

class KernelPredictive final : public plan::LearnThenFollow {
 public:
  explicit KernelPredictive(const Params& p)
      : objective_(parse_objective(p, "kernel-predictive")),
        memory_(plan::parse_memory_mode(p, "kernel-predictive")),
        early_(p.integer("early") != 0) {}

 private:
  void make_plan(PolicyContext& ctx) override {
    const auto& seq = learner_.sequence();
    const Device& d = ctx.device();
    plan::KernelPlanInput in;
    in.gpu = plan::gpu_model(ctx);
    in.kernels = plan::items_from(seq);
    // The firmware now: the cap is the effective core clock when it is below
    // the default clock (the policy has not set any clocks yet).
    in.start.cap_mhz = std::min(ctx.effective().core_mhz, d.max_core_mhz());
    in.start.from = ctx.effective();
    in.start.stall_ns = ctx.expected_memory_stall_ns();
    in.plan.objective = objective_;
    in.plan.memory = memory_;
    in.plan.cyclic = true;
    in.plan.policy = "kernel-predictive";
    in.plan.what = fmt::format("per-kernel knapsack over the {} kernels of the profiling iteration",
                               seq.size());
    const plan::KernelPlan p = plan::plan_kernels(in);
    report(p.report);
    std::vector<plan::Switcher::Step> steps(seq.size());
    for (std::size_t i = 0; i < seq.size(); ++i) {
      steps[i].pair = p.pairs[i];
      steps[i].duration_ns = p.emulation.time_of_step[i];
      steps[i].gap_ns = seq[i].gap_after_ns;
    }
    // A per-kernel plan can only be followed when switches land within the
    // stretches between them. If more than a tenth of those stretches are
    // shorter than the expected latency, the plan would run at the wrong
    // clocks most of the time: hold the default clocks instead.
    const double latency_ns =
        std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns());
    std::size_t stretches = 0, too_short = 0;
    double run_ns = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      run_ns += steps[i].duration_ns + steps[i].gap_ns;
      const auto& next = steps[(i + 1) % steps.size()];
      if (!(next.pair == steps[i].pair)) {
        ++stretches;
        too_short += run_ns < latency_ns;
        run_ns = 0;
      }
    }
    if (stretches > 0 && too_short * 10 > stretches) {
      note(fmt::format(
          "kernel-predictive: {} of {} stretches between planned switches are shorter than the "
          "expected switch latency ({:.3f} ms): the plan cannot be followed, holding the default "
          "clocks",
          too_short, stretches, latency_ns * 1e-6));
      return;
    }
    switcher_.set_plan(std::move(steps), early_);
  }

  Objective objective_;
  plan::MemoryMode memory_;
  bool early_;
};

std::vector<ParamSpec> params() {
  std::vector<ParamSpec> v = objective_params();
  for (auto& p : plan::memory_mode_params()) v.push_back(p);
  v.push_back({"early", ParamSpec::Kind::defaulted, "1",
               "1: issue each switch ahead of its kernel by the expected switch latency; 0: at "
               "kernel start"});
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
