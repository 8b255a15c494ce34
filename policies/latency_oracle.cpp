// `latency-oracle`: the best plan at the device's switch latency L, made with
// full knowledge of the run (an oracle: the upper bound the online curves of
// figure 03 are read against). It groups kernels into segments that amortise a
// switch (policies/planning/segments.h: one pair per segment, chosen jointly
// with the time budget by the segment DP on the whole run), and issues each
// switch early by L so that it lands when its segment starts
// (policies/online/switcher.h). It also plans the references a segment plan
// must never lose to: the per-kernel knapsack (kernel-oracle's plan, the
// answer as L -> 0), one pair per phase (pass-level's plan on the whole run)
// and the best single pair (static-best), each followed the same way. Every
// candidate is replayed on the engine (an oracle may), tightened by its
// overshoot while it misses the budget, and the one with the best score
// whose replayed time meets the budget is run; the default clocks (the
// baseline itself) when none does. So at any L its saving is at least the
// best of those references' and never negative, and its slowdown is within
// the budget whenever the replay is the run (a fixed switch latency).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <optional>

#include "policies/objective.h"
#include "policies/online/switcher.h"
#include "policies/planning/emulation.h"
#include "policies/planning/kernel_plan.h"
#include "policies/planning/replay.h"
#include "policies/planning/segments.h"
#include "policies/registry.h"

namespace dvfsim {
namespace {

// Replays of a tightened candidate before giving up on it: each replay's
// overshoot tightens the next plan's budget (plan::tightening_ns).
constexpr int kReplayChecks = 4;

// Follows a per-kernel plan, each switch issued early by the expected latency.
class Follow final : public Policy {
 public:
  Follow(std::vector<plan::Switcher::Step> steps, bool early)
      : steps_(std::move(steps)), early_(early) {
    switcher_.set_plan(steps_, early, false);
  }
  void begin(PolicyContext& ctx) override {
    // With a real latency the first kernel's pair is requested before the run
    // starts (it lands L in); with (almost) none at the first kernel's start,
    // as kernel-oracle does, so that the firmware warms up as under the baseline.
    if (early_ && !steps_.empty() && !(ctx.wanted() == steps_.front().pair))
      ctx.request(steps_.front().pair.core_mhz, steps_.front().pair.memory_mhz);
  }
  void on_kernel_start(PolicyContext& ctx, std::uint32_t kernel) override {
    switcher_.on_start(ctx, static_cast<int>(kernel));
  }
  void on_kernel_end(PolicyContext& ctx, std::uint32_t /*kernel*/) override {
    switcher_.on_end(ctx);
  }
  void on_timer(PolicyContext& ctx) override { switcher_.on_timer(ctx); }

 private:
  std::vector<plan::Switcher::Step> steps_;
  bool early_;
  plan::Switcher switcher_;
};

struct Candidate {
  std::string name;
  std::vector<Clocks> pairs;
  bool at_start = false;  // requested when each kernel starts (kernel-oracle's way), not early
  double time_ns = 0, energy_j = 0;
  bool feasible = false;
};

class LatencyOracle final : public Policy {
 public:
  explicit LatencyOracle(const Params& p)
      : objective_(parse_objective(p, "latency-oracle")),
        max_candidates_(std::max(2, p.integer("candidates"))) {}

  void begin(PolicyContext& ctx) override {
    const auto started = std::chrono::steady_clock::now();
    const Device& d = ctx.device();
    const std::size_t n = ctx.workload().kernels.size();
    if (n == 0) return;
    plan::KernelPlanInput whole = plan::whole_run_input(ctx);
    plan::PlanCache cache(whole.gpu);  // rows and hulls shared by every candidate's plans
    whole.cache = &cache;
    const Clocks def = default_clocks(d);
    const RunResult* base = ctx.baseline();
    const RunResult ref_run = base ? RunResult{} : plan::replay_plan(ctx, nullptr);
    const RunResult& ref = base ? *base : ref_run;
    const double ref_ns = static_cast<double>(ref.end_ns - ref.begin_ns);
    const double budget = objective_.budget(ref_ns);
    const plan::Emulation em0 =
        plan::emulate(whole.gpu, whole.kernels, std::vector<Clocks>(n, def), whole.start);
    const bool early = std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) >
                       plan::kImmediateSwitchNs;

    std::vector<Candidate> cands;
    int replays = 0;
    auto replay = [&](const std::vector<Clocks>& pairs, const plan::Emulation& em) {
      std::vector<plan::Switcher::Step> steps(n);
      for (std::size_t i = 0; i < n; ++i) {
        steps[i].pair = pairs[i];
        steps[i].duration_ns = em.time_of_step[i];
        steps[i].gap_ns = plan::idle_after_ns(whole.kernels[i], em.time_of_step[i]);
      }
      Follow f(std::move(steps), early);
      ++replays;
      return plan::replay_with(ctx, f);
    };
    auto consider = [&](const std::string& name, const std::vector<Clocks>& pairs,
                        const RunResult& r, bool at_start = false) {
      Candidate c;
      c.name = name;
      c.pairs = pairs;
      c.at_start = at_start;
      c.time_ns = static_cast<double>(r.end_ns - r.begin_ns);
      c.energy_j = r.energy_j;
      c.feasible = objective_.replay_meets(c.time_ns, budget);
      cands.push_back(std::move(c));
      return cands.back().feasible;
    };

    // 1. Segment DP on the whole run at this latency.
    plan::SegmentPlanInput sin;
    sin.gpu = whole.gpu;
    sin.cache = &cache;
    sin.kernels = whole.kernels;
    for (std::size_t i = 0; i < n; ++i) sin.kernels[i].max_core_mhz = em0.cap_mhz[i];
    sin.start = whole.start;
    sin.objective = objective_;
    sin.budget_ns = objective_.budget(em0.time_ns);
    sin.core_lmin_ns = ctx.core_switch_quantile_ns(0.9);
    sin.memory_lmin_ns = ctx.memory_switch_quantile_ns(0.9);
    sin.memory_stall_ns = ctx.expected_memory_stall_ns();
    sin.max_candidates = max_candidates_;
    const Clocks single = static_best(whole, em0.time_ns);
    sin.extra_candidates = {single};
    sin.what = "whole run: ";
    plan::SolveReport seg_report;
    // By how much a checked plan's replay missed the budget (<= 0: met).
    auto miss = [&](const RunResult& r) {
      return static_cast<double>(r.end_ns - r.begin_ns) - budget;
    };
    // A re-plan equal to one already replayed under the same name (a
    // tightening too small to move it): its miss, without replaying it again.
    auto seen = [&](const std::string& name,
                    const std::vector<Clocks>& pairs) -> std::optional<double> {
      for (const Candidate& c : cands)
        if (c.name == name && c.pairs == pairs) return c.feasible ? 0.0 : c.time_ns - budget;
      return std::nullopt;
    };
    plan::replan_until_met(kReplayChecks, budget, plan::kNeverHopeless,
                           [&](double tighten) -> std::optional<double> {
                             plan::SegmentPlanInput s = sin;
                             s.extra_tighten_ns = tighten;
                             const plan::SegmentPlan sp = plan::plan_segments(s, em0);
                             seg_report = sp.report;
                             if (!sp.have) return std::nullopt;
                             if (const auto m = seen("segments", sp.pairs)) return m;
                             const RunResult r = replay(sp.pairs, sp.emulation);
                             return consider("segments", sp.pairs, r) ? 0.0 : miss(r);
                           });

    // 2. The per-kernel knapsack (kernel-oracle's plan) and 3. one pair per
    // phase, each replayed under the early switcher.
    auto knapsack = [&](plan::KernelPlanInput in, const std::string& name) {
      in.plan.objective = objective_;
      in.plan.aggregation = plan::Aggregation::global;
      in.plan.memory = plan::MemoryMode::automatic;
      in.plan.policy = "latency-oracle";
      in.plan.what = name;
      plan::replan_until_met(kReplayChecks, budget, plan::kNeverHopeless,
                             [&](double tighten) -> std::optional<double> {
                               plan::KernelPlanInput k = in;
                               k.extra_tighten_ns = tighten;
                               const plan::KernelPlan kp = plan::plan_kernels(k);
                               if (const auto m = seen(name, kp.pairs)) return m;
                               const RunResult r = replay(kp.pairs, kp.emulation);
                               return consider(name, kp.pairs, r) ? 0.0 : miss(r);
                             });
    };
    knapsack(whole, "per-kernel knapsack");
    // kernel-oracle itself: its plan requested when each kernel starts (with
    // a real latency the switches land late, which may still pay).
    if (early) {
      plan::KernelPlanInput in = whole;
      in.plan.objective = objective_;
      in.plan.policy = "latency-oracle";
      in.plan.what = "per-kernel knapsack, requested at kernel start";
      plan::replan_until_met(
          kReplayChecks, budget, plan::kNeverHopeless,
          [&](double tighten) -> std::optional<double> {
            plan::KernelPlanInput k = in;
            k.extra_tighten_ns = tighten;
            const plan::KernelPlan kp = plan::plan_kernels(k);
            if (const auto m = seen("per-kernel knapsack at kernel start", kp.pairs)) return m;
            ++replays;
            const RunResult r = plan::replay_plan(ctx, &kp.pairs);
            return consider("per-kernel knapsack at kernel start", kp.pairs, r, true) ? 0.0
                                                                                      : miss(r);
          });
    }
    {
      plan::KernelPlanInput in = whole;
      std::array<int, kPhaseCount> group_of_phase{};
      group_of_phase.fill(-1);
      Phase cur = Phase::other;
      bool seen_any = false;
      for (const Kernel& k : ctx.workload().kernels) {
        Phase ph = k.phase;
        if (ph == Phase::other && seen_any) ph = cur;
        cur = ph;
        seen_any = true;
        auto& g = group_of_phase[static_cast<std::size_t>(ph)];
        if (g < 0) g = static_cast<int>(in.groups++);
        in.group_of_kernel.push_back(static_cast<std::uint32_t>(g));
      }
      knapsack(in, "one pair per phase");
    }
    // 4. The best single pair.
    {
      const std::vector<Clocks> pairs(n, single);
      plan::EmulationStart st;
      st.warm_pair = single;
      const plan::Emulation em = plan::emulate(whole.gpu, whole.kernels, pairs, st);
      consider("single pair", pairs, replay(pairs, em));
    }

    const Candidate* best = nullptr;
    for (const Candidate& c : cands)
      if (c.feasible && (!best || objective_.score(c.energy_j, c.time_ns) <
                                      objective_.score(best->energy_j, best->time_ns)))
        best = &c;
    // Never worse than the baseline: its own clocks when no candidate beats it.
    if (best && objective_.time_bounded() && !(best->energy_j < ref.energy_j)) best = nullptr;

    plan::SolveReport r = seg_report;
    r.policy = "latency-oracle";
    std::string tried;
    for (const Candidate& c : cands)
      tried += fmt::format("{}{} {:.3f} ms {:.4f} J{}", tried.empty() ? "" : ", ", c.name,
                           c.time_ns * 1e-6, c.energy_j, c.feasible ? "" : " (over budget)");
    r.what = fmt::format("{}; replayed: {}; chose {}", seg_report.what, tried,
                         best ? best->name : std::string("the default clocks"));
    r.budget_ns = budget;
    r.time_ns = best ? best->time_ns : ref_ns;
    r.rounds = replays;
    r.solve_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    report(r);
    if (!best) return;
    // Follow the chosen plan: its own emulated durations predict when to switch.
    plan::EmulationStart st = whole.start;
    const plan::Emulation em = plan::emulate(whole.gpu, whole.kernels, best->pairs, st);
    std::vector<plan::Switcher::Step> steps(n);
    for (std::size_t i = 0; i < n; ++i) {
      steps[i].pair = best->pairs[i];
      steps[i].duration_ns = em.time_of_step[i];
      steps[i].gap_ns = plan::idle_after_ns(whole.kernels[i], em.time_of_step[i]);
    }
    follow_ = std::make_unique<Follow>(std::move(steps), early && !best->at_start);
    follow_->begin(ctx);
  }

  void on_kernel_start(PolicyContext& ctx, std::uint32_t kernel) override {
    if (follow_) follow_->on_kernel_start(ctx, kernel);
  }
  void on_kernel_end(PolicyContext& ctx, std::uint32_t kernel) override {
    if (follow_) follow_->on_kernel_end(ctx, kernel);
  }
  void on_timer(PolicyContext& ctx) override {
    if (follow_) follow_->on_timer(ctx);
  }

 private:
  // The single pair best under the objective, emulated with the firmware
  // warmed up at it (as static-best does).
  // A function of the models, the kernels, the objective and ref_ns alone
  // (one pair for the whole run: no switch, so no switch latency), so the
  // runs of a sweep that differ only in the latency choose once
  // (plan::PlanMemo; the key holds the models, the kernels and the tag).
  Clocks static_best(const plan::KernelPlanInput& whole, double ref_ns) const {
    plan::KernelPlanInput key;
    key.gpu = whole.gpu;
    key.kernels = whole.kernels;
    const std::string tag =
        fmt::format("latency-oracle static-best {} {:a} {:a}", static_cast<int>(objective_.kind),
                    objective_.max_slowdown_pct, ref_ns);
    return plan::PlanMemo::remember<Clocks>(key, tag, [&] {
      const Device& d = *whole.gpu.device;
      const std::size_t n = whole.kernels.size();
      const Clocks def = default_clocks(d);
      const double budget = objective_.budget(ref_ns);
      Clocks best = def;
      double best_s = kNone;
      for (const Clocks& c : plan::make_grid(d).pairs) {
        plan::EmulationStart st;
        st.warm_pair = c;
        const plan::Emulation em =
            plan::emulate(whole.gpu, whole.kernels, std::vector<Clocks>(n, c), st, budget);
        if (em.time_ns > budget) continue;
        const double s = objective_.score(em.energy_j, em.time_ns);
        if (best_s == kNone || s < best_s) {
          best = c;
          best_s = s;
        }
      }
      return best;
    });
  }
  static constexpr double kNone = -1.0;

  Objective objective_;
  int max_candidates_;
  std::unique_ptr<Follow> follow_;
};

std::vector<ParamSpec> params() {
  std::vector<ParamSpec> v = objective_params();
  v.push_back({"candidates", ParamSpec::Kind::defaulted, "32",
               "pairs the segment DP considers per memory mode: those most often on the kernels' "
               "time-energy hulls (plus the default and the best single pair)"});
  return v;
}

const bool registered = register_policy({
    "latency-oracle",
    "Oracle at the switch latency: segments of kernels that amortise a switch, one pair per "
    "segment chosen jointly with the time budget on the whole run, switches issued early so "
    "they land on time; never worse than the per-kernel knapsack, per-phase and single-pair "
    "plans followed the same way (all replayed). The upper bound at latency L.",
    true,
    params(),
    [](const Params& p) { return std::make_unique<LatencyOracle>(p); },
});

}  // namespace
}  // namespace dvfsim
