// `pass-level`: one pair per phase (forward, backward, optimizer; kernels
// annotated `other` belong to the phase before them). Online: it runs its
// profiling iteration at default clocks, observing each kernel as it is
// launched and its measured duration, then sums the per-kernel tables of each
// phase and picks one pair per phase under the objective (global: knapsack over
// the phases under the observed iteration time; local: each phase within its
// own observed time). From the next iteration on it requests a phase's pair
// when the phase's first kernel starts (or, with early=1, ahead of it by the
// expected switch latency).
#include <fmt/format.h>

#include <array>

#include "policies/objective.h"
#include "policies/online/learner.h"
#include "policies/online/rehearsal.h"
#include "policies/online/switcher.h"
#include "policies/planning/kernel_plan.h"
#include "policies/registry.h"

namespace dvfsim {
namespace {

class PassLevel final : public Policy {
 public:
  explicit PassLevel(const Params& p)
      : objective_(parse_objective(p, "pass-level")),
        aggregation_(plan::parse_aggregation(p, "pass-level")),
        memory_(plan::parse_memory_mode(p, "pass-level")),
        early_(p.integer("early") != 0) {}

  void on_kernel_start(PolicyContext& ctx, std::uint32_t kernel) override {
    learner_.on_start(ctx, kernel);
    if (learner_.just_relearning()) {
      planned_ = false;
      switcher_.set_plan({}, true);
      note(restart_profiling(ctx, learner_));
    }
    if (learner_.just_learned()) make_plan(ctx);
    // The clocks follow the driving iteration (a kernel of the next one may
    // start while it still runs, on another stream).
    if (!planned_ || !learner_.driving()) return;
    if (early_) {
      switcher_.on_start(ctx, learner_.position());
      return;
    }
    // The phase of the launched kernel is known at launch.
    Phase ph = ctx.workload().kernels[kernel].phase;
    if (ph == Phase::other) ph = last_phase_;
    last_phase_ = ph;
    const int g = group_of_phase_[static_cast<std::size_t>(ph)];
    if (g < 0) return;
    const Clocks& c = pair_of_group_[static_cast<std::size_t>(g)];
    if (!(ctx.wanted() == c)) ctx.request(c.core_mhz, c.memory_mhz);
  }
  void on_kernel_end(PolicyContext& ctx, std::uint32_t kernel) override {
    learner_.on_end(ctx, kernel);
    if (planned_ && early_) switcher_.on_end(ctx);
  }
  void on_timer(PolicyContext& ctx) override {
    if (planned_ && early_) switcher_.on_timer(ctx);
  }

 private:
  void make_plan(PolicyContext& ctx) {
    const auto& seq = learner_.sequence();
    const Device& d = ctx.device();
    // Phases in order of first appearance; `other` joins the phase before it.
    group_of_phase_.fill(-1);
    std::vector<std::uint32_t> group_of(seq.size());
    std::vector<Phase> phases;
    Phase cur = Phase::other;
    bool seen_any = false;
    for (std::size_t i = 0; i < seq.size(); ++i) {
      Phase ph = seq[i].phase;
      if (ph == Phase::other && seen_any) ph = cur;
      cur = ph;
      seen_any = true;
      auto& g = group_of_phase_[static_cast<std::size_t>(ph)];
      if (g < 0) {
        g = static_cast<int>(phases.size());
        phases.push_back(ph);
      }
      group_of[i] = static_cast<std::uint32_t>(g);
    }
    plan::KernelPlanInput in;
    in.gpu = plan::gpu_model(ctx);
    in.kernels = plan::items_from(seq);
    in.group_of_kernel = group_of;
    in.groups = phases.size();
    in.start.cap_mhz = std::min(ctx.effective().core_mhz, d.max_core_mhz());
    in.start.from = ctx.effective();
    in.start.stall_ns = ctx.expected_memory_stall_ns();
    in.plan.objective = objective_;
    in.plan.aggregation = aggregation_;
    in.plan.memory = memory_;
    in.plan.cyclic = true;
    in.plan.policy = "pass-level";
    std::string names;
    for (auto ph : phases) names += (names.empty() ? "" : "/") + std::string(to_string(ph));
    in.plan.what = fmt::format("one pair per phase ({})", names);
    plan::KernelPlan p = plan::plan_kernels(in);
    report(p.report);
    // A phase's switch lands L after it is requested, so a phase shorter than
    // L never runs at its own clocks. When most of the stretches between
    // planned switches are shorter than the expected latency, the switches
    // land in the wrong phases and cannot pay for themselves (the RTX 5090 at
    // 200 ms: -0.66 %): hold the default clocks.
    {
      const Clocks def = default_clocks(d);
      const double latency_ns =
          std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns());
      std::size_t stretches = 0, too_short = 0;
      double run_ns = 0;
      const std::size_t n = seq.size();
      for (std::size_t i = 0; i < n; ++i) {
        run_ns += p.emulation.time_of_step[i] + seq[i].gap_after_ns;
        if (!(p.pairs[(i + 1) % n] == p.pairs[i])) {
          ++stretches;
          too_short += run_ns < latency_ns;
          run_ns = 0;
        }
      }
      if (stretches > 0 && too_short * 2 > stretches) {
        note(
            fmt::format("pass-level: {} of {} phases are shorter than the expected switch latency "
                        "({:.3f} ms): holding the default clocks",
                        too_short, stretches, latency_ns * 1e-6));
        p.group_pairs.assign(p.group_pairs.size(), def);
        p.pairs.assign(p.pairs.size(), def);
      }
    }
    // The plan rehearsed as it will be followed (policies/online/rehearsal.h:
    // switches at the expected latency, over two iterations of the learned
    // sequence): a phase shorter than the latency loses its switch, or
    // carries it into the next iteration's first phase. When it misses the
    // budget or saves no energy in rehearsal, hold the default clocks (the
    // RTX 3080 Ti at 200 ms: the optimizer's 1425 MHz landed after the run,
    // -0.05 %).
    {
      const Clocks def = default_clocks(d);
      const std::size_t n = seq.size();
      if (!(p.pairs == std::vector<Clocks>(n, def))) {
        const std::vector<plan::ItemSpec> items = plan::items_from(seq);
        const plan::RehearsalStart rs{in.start.cap_mhz, in.start.from};
        std::vector<plan::Switcher::Step> steps(n);
        for (std::size_t i = 0; i < n; ++i) {
          steps[i].pair = p.pairs[i];
          steps[i].duration_ns = p.emulation.time_of_step[i];
          steps[i].gap_ns = seq[i].gap_after_ns;
        }
        const plan::Rehearsal ref = plan::rehearse(ctx, items, nullptr, true, rs);
        const plan::Rehearsal r = plan::rehearse(ctx, items, &steps, early_, rs);
        const bool meets =
            !objective_.time_bounded() ||
            (r.time_ns <= objective_.budget(ref.time_ns) &&
             r.next_time_ns <= objective_.budget(ref.time_ns) + ref.next_time_ns - ref.time_ns);
        const double e = r.energy_j + r.next_energy_j, e0 = ref.energy_j + ref.next_energy_j;
        const double t = r.time_ns + r.next_time_ns, t0 = ref.time_ns + ref.next_time_ns;
        const bool saves =
            objective_.time_bounded() ? e < e0 : objective_.score(e, t) < objective_.score(e0, t0);
        if (!meets || !saves) {
          note(fmt::format(
              "pass-level: the plan {} in rehearsal at the expected switch latency "
              "({:.3f} ms; {:.3f} ms, {:.4f} J then {:.3f} ms, {:.4f} J against the default "
              "clocks' {:.3f} ms, {:.4f} J then {:.3f} ms, {:.4f} J): holding the default clocks",
              meets ? "saves no energy" : "misses the budget",
              std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) * 1e-6,
              r.time_ns * 1e-6, r.energy_j, r.next_time_ns * 1e-6, r.next_energy_j,
              ref.time_ns * 1e-6, ref.energy_j, ref.next_time_ns * 1e-6, ref.next_energy_j));
          p.group_pairs.assign(p.group_pairs.size(), def);
          p.pairs.assign(n, def);
        }
      }
    }
    pair_of_group_ = p.group_pairs;
    if (early_) {
      std::vector<plan::Switcher::Step> steps(seq.size());
      for (std::size_t i = 0; i < seq.size(); ++i) {
        steps[i].pair = p.pairs[i];
        steps[i].duration_ns = p.emulation.time_of_step[i];
        steps[i].gap_ns = seq[i].gap_after_ns;
      }
      switcher_.set_plan(std::move(steps), true);
    }
    last_phase_ = phases.empty() ? Phase::other : phases.front();
    planned_ = true;
  }

  Objective objective_;
  plan::Aggregation aggregation_;
  plan::MemoryMode memory_;
  bool early_;
  bool planned_ = false;
  plan::SequenceLearner learner_;
  plan::Switcher switcher_;
  std::array<int, kPhaseCount> group_of_phase_{};
  std::vector<Clocks> pair_of_group_;
  Phase last_phase_ = Phase::other;
};

std::vector<ParamSpec> params() {
  std::vector<ParamSpec> v = plan::aggregation_params();
  for (auto& p : objective_params()) v.push_back(p);
  for (auto& p : plan::memory_mode_params()) v.push_back(p);
  v.push_back({"early", ParamSpec::Kind::defaulted, "0",
               "1: issue each phase's switch ahead of it by the expected switch latency; 0: when "
               "the phase's first kernel starts"});
  return v;
}

const bool registered = register_policy({
    "pass-level",
    "Online: one pair per phase (forward, backward, optimizer), chosen from a profiling "
    "iteration at default clocks under the objective; switches when a phase starts.",
    false,
    params(),
    [](const Params& p) { return std::make_unique<PassLevel>(p); },
});

}  // namespace
}  // namespace dvfsim
