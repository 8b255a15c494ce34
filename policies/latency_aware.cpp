// `latency-aware`: groups consecutive kernels into segments that amortise the
// clock-switch latency and picks one pair per segment by dynamic programming
// under the time budget. Online: like kernel-predictive it learns the kernel
// sequence in a profiling iteration at default clocks (observing only launched
// kernels and measured durations), plans once when the next iteration starts,
// and applies the plan to every later iteration, issuing each switch early by
// the expected latency.
//
// The DP (per iteration, positions 0..n): f[b][p] = least cost E + lambda T of
// the kernels before b with a segment of pair p ending at b. A segment must
// last at least L_min (so that the request for the next segment, issued
// L_min before it, comes after this one landed): L_min = the expected core
// switch latency when the memory clock is held (one DP per memory clock), or
// the larger of core and memory latencies when the memory clock may change
// (then every memory change also costs the GPU stall in time and idle
// energy). Bisection on lambda meets the budget (the Lagrangian dual bound is
// reported), the plan is emulated through the firmware and tightened if it
// misses. L -> 0 gives a per-kernel plan; large L gives a few long segments,
// like per-pass clocks.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "policies/objective.h"
#include "policies/online/budget_guard.h"
#include "policies/online/learn_then_follow.h"
#include "policies/online/rehearsal_plan.h"
#include "policies/planning/emulation.h"
#include "policies/planning/kernel_plan.h"
#include "policies/planning/segments.h"
#include "policies/registry.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

// Segment lengths tried, in multiples of the least (L_min).
constexpr double kLminFactors[] = {1, 3, 10, 30};

class LatencyAware final : public plan::LearnThenFollow {
 public:
  explicit LatencyAware(const Params& p)
      : objective_(parse_objective(p, "latency-aware")),
        max_candidates_(std::max(2, p.integer("candidates"))),
        margin_pct_(p.number("margin_pct")),
        guard_enabled_(p.integer("guard") != 0) {
    host_slack_ = plan::parse_host_slack(p, "latency-aware");
    switcher_.set_idle_drop(p.integer("idle_drop") != 0);
    if (margin_pct_ < 0 || margin_pct_ >= 100)
      throw InputError(
          fmt::format("policy latency-aware: margin_pct={} must be in [0, 100)", margin_pct_));
  }

 private:
  bool make_plan(PolicyContext& ctx) override {
    const auto started = std::chrono::steady_clock::now();
    const auto& seq = learner_.sequence();
    const Device& d = ctx.device();
    const std::size_t n = seq.size();
    plan::SegmentPlanInput in;
    in.gpu = plan::gpu_model(ctx);
    // Shared by every candidate's plans; kept (with rest_*) only when the
    // plan is followed, so that a failed re-plan leaves the plan in force as
    // it was.
    auto owned_cache = std::make_unique<plan::PlanCache>(in.gpu);
    in.cache = owned_cache.get();
    plan::PlanCache& cache = *owned_cache;
    in.kernels = learned_items();
    in.start.cap_mhz = start_cap_mhz(ctx);
    in.start.from = start_clocks(ctx);
    in.start.stall_ns = ctx.expected_memory_stall_ns();
    const Clocks def = default_clocks(d);
    const std::vector<plan::ItemSpec> items = in.kernels;
    const plan::Emulation em0 = plan::emulate(in.gpu, items, std::vector<Clocks>(n, def), in.start);
    // The reference: the learned iteration rehearsed at the clocks in force.
    const plan::RehearsalStart rs{in.start.cap_mhz, in.start.from};
    const plan::RehearsalStart native_rs = reference_start(ctx, rs);
    const plan::Rehearsal ref = plan::rehearse(ctx, items, nullptr, true, native_rs);
    // Switches whose latency is random land a random moment early or late:
    // hold back margin_pct of the budget for that (none when the latency is
    // fixed, e.g. --set switch_latency_us, or zero), out of the slowdown the
    // objective allows: never below the time at the default clocks, which
    // holding them meets whatever the latency (a host-bound step cannot run
    // faster than its host).
    const bool random_latency =
        ctx.core_switch_quantile_ns(0.9) > ctx.expected_core_switch_ns() * (1 + 1e-9) ||
        ctx.memory_switch_quantile_ns(0.9) > ctx.expected_memory_switch_ns() * (1 + 1e-9);
    const double margin = random_latency ? margin_pct_ * 1e-2 : 0.0;
    auto held_back = [&](double t) { return std::min(margin * t, objective_.budget(t) - t); };
    const double budget = objective_.budget(ref.time_ns) - held_back(ref.time_ns);
    in.objective = objective_;
    in.budget_ns = objective_.budget(em0.time_ns) - held_back(em0.time_ns);
    for (std::size_t i = 0; i < n; ++i) in.kernels[i].max_core_mhz = em0.cap_mhz[i];
    // Segments must outlast the switch that starts them with a margin: plan
    // with the latency 90 % of switches land within, not the mean.
    in.core_lmin_ns = ctx.core_switch_quantile_ns(0.9);
    in.memory_lmin_ns = ctx.memory_switch_quantile_ns(0.9);
    in.memory_stall_ns = ctx.expected_memory_stall_ns();
    in.max_candidates = max_candidates_;
    const bool early = std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) >
                       plan::kImmediateSwitchNs;
    const Clocks single = best_single_pair(in.gpu, items, in.start, in.budget_ns);
    in.extra_candidates = {single};

    plan::CandidateSet cands(ctx, seq, items, rs, objective_, budget);
    plan::SolveReport seg_report;
    // 1. The segment DP at this latency, and with segments kLminFactors
    // times longer: fewer switches, so fewer of them land off their
    // boundaries when the sequence or the latency deviates (a plan that works
    // at a larger latency works at a smaller one).
    for (const double f : kLminFactors) {
      if (f > 1 && std::max(in.core_lmin_ns, in.memory_lmin_ns) * f > ref.time_ns / 4) break;
      cands.consider(f == 1 ? std::string("segments") : fmt::format("segments (L_min x {})", f),
                     true, [&](double tighten) {
                       plan::SegmentPlanInput s = in;
                       s.core_lmin_ns *= f;
                       s.memory_lmin_ns *= f;
                       s.extra_tighten_ns = tighten;
                       const plan::SegmentPlan sp = plan::plan_segments(s, em0);
                       if (f == 1) seg_report = sp.report;
                       return plan::Proposal{sp.have, sp.pairs, sp.emulation};
                     });
    }
    // 2. One pair per kernel (kernel-predictive's knapsack: the answer as the
    // latency goes to zero), followed early and, with a real latency, also
    // requested at each kernel's start; 3. one pair per phase.
    plan::KernelPlanInput kin;
    kin.gpu = in.gpu;
    kin.kernels = items;
    kin.start = in.start;
    kin.plan.objective = objective_;
    kin.plan.cyclic = true;
    kin.plan.policy = "latency-aware";
    kin.cache = &cache;
    auto knapsack = [&](plan::KernelPlanInput k) {
      return [&, k](double tighten) mutable {
        k.extra_tighten_ns = tighten + held_back(em0.time_ns);
        const plan::KernelPlan kp = plan::plan_kernels(k);
        const bool saves = !(kp.pairs == std::vector<Clocks>(n, def));
        return plan::Proposal{saves, kp.pairs, kp.emulation};
      };
    };
    cands.consider("per-kernel knapsack", true, knapsack(kin));
    // The knapsack made as if switches were free (no memory stall in the
    // plan or its emulation; its cap rounds settle elsewhere), the stall
    // charged by the rehearsal.
    if (kin.start.stall_ns > 0) {
      plan::KernelPlanInput k = kin;
      k.start.stall_ns = 0;
      cands.consider("per-kernel knapsack planned without stalls, at kernel start", false,
                     knapsack(k));
    }
    if (early) cands.consider("per-kernel knapsack at kernel start", false, knapsack(kin));
    {
      plan::KernelPlanInput k = kin;
      std::array<int, kPhaseCount> group_of_phase{};
      group_of_phase.fill(-1);
      Phase cur = Phase::other;
      for (std::size_t i = 0; i < n; ++i) {
        Phase ph = seq[i].phase;
        if (ph == Phase::other && i > 0) ph = cur;
        cur = ph;
        auto& g = group_of_phase[static_cast<std::size_t>(ph)];
        if (g < 0) g = static_cast<int>(k.groups++);
        k.group_of_kernel.push_back(static_cast<std::uint32_t>(g));
      }
      cands.consider("one pair per phase", true, knapsack(k));
    }
    // 4. The best single pair.
    if (!(single == def))
      cands.consider("single pair", true, [&](double tighten) {
        if (tighten > 0) return plan::Proposal{};
        const std::vector<Clocks> pairs(n, single);
        return plan::Proposal{true, pairs, plan::emulate(in.gpu, items, pairs, in.start)};
      });

    consider_plan_in_force(cands, in.gpu, items, in.start);
    const plan::RehearsedCandidate* best = cands.best(ref);
    plan::SolveReport r = seg_report;
    r.policy = "latency-aware";
    r.what = fmt::format("{}; rehearsed: {}; chose {}", seg_report.what, cands.summary(),
                         best ? best->name : std::string("the default clocks"));
    r.budget_ns = budget;
    r.time_ns = best ? best->rehearsal.time_ns : ref.time_ns;
    r.rounds = cands.rehearsals();
    r.solve_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    report(r);
    if (!best) return false;
    // The budget guard re-plans the rest of an iteration the way the chosen
    // plan was made: per kernel, or by segments.
    cache_ = std::move(owned_cache);
    // (The plan in force, kept by a re-plan, keeps its own way.)
    if (best->name != "the plan in force")
      rest_by_knapsack_ = best->name.find("knapsack") != std::string::npos;
    rest_seg_ = in;
    rest_kin_ = kin;
    if (guard_enabled_ && objective_.time_bounded()) {
      follow_guarded(best->steps, best->early, best->rehearsal, ref,
                     objective_.budget(ref.time_ns) - ref.time_ns,
                     std::make_unique<plan::NativeShadow>(ctx, items, native_rs));
    } else {
      follow(best->steps, best->early);
    }
    return true;
  }

  // The single pair best under the objective on the learned iteration whose
  // emulated time meets `budget_ns` (the default pair when none saves).
  // A function of the models, the items, the start, the objective and the
  // budget alone (one pair: no switch after the first, so no switch latency
  // but through the start's memory stall), so the runs of a sweep that share
  // those choose once (plan::PlanMemo; the key holds the models, the items,
  // the start and the tag).
  Clocks best_single_pair(const GpuModel& gpu, const std::vector<plan::ItemSpec>& items,
                          const plan::EmulationStart& st, double budget_ns) const {
    plan::KernelPlanInput key;
    key.gpu = gpu;
    key.kernels = items;
    key.start = st;
    const std::string tag =
        fmt::format("latency-aware single pair {} {:a} {:a}", static_cast<int>(objective_.kind),
                    objective_.max_slowdown_pct, budget_ns);
    return plan::PlanMemo::remember<Clocks>(key, tag, [&] {
      const Device& d = *gpu.device;
      const Clocks def = default_clocks(d);
      Clocks best = def;
      bool have = false;
      double best_s = 0;
      for (const Clocks& c : plan::make_grid(d).pairs) {
        const plan::Emulation em = plan::emulate(
            gpu, items, std::vector<Clocks>(items.size(), c), st,
            objective_.time_bounded() ? budget_ns : std::numeric_limits<double>::infinity());
        if (objective_.time_bounded() && em.time_ns > budget_ns) continue;
        const double s = objective_.score(em.energy_j, em.time_ns);
        if (!have || s < best_s) {
          best = c;
          best_s = s;
          have = true;
        }
      }
      return best;
    });
  }

  RestPlan replan_rest(PolicyContext& ctx, int position, double repay_ns) override {
    const auto& items = rest_kin_.kernels;
    std::vector<plan::ItemSpec> rest(items.begin() + position + 1, items.end());
    if (!rest_by_knapsack_) {
      RestPlan seg = plan::rest_by_segments(ctx, rest_seg_, rest, repay_ns);
      // The knapsack when no segment plan repays it (the DP keeps the default
      // clocks unless a plan saves energy), if switches land at once: a
      // per-kernel plan does not survive a real latency.
      if (seg.have || std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) >
                          plan::kImmediateSwitchNs)
        return seg;
    }
    return plan::rest_by_knapsack(ctx, rest_kin_, std::move(rest), repay_ns);
  }

  plan::HoldPair catch_up_clocks(PolicyContext& ctx, int position) override {
    return plan::fastest_hold_pair(ctx, rest_kin_, position);
  }

  Objective objective_;
  std::unique_ptr<plan::PlanCache> cache_;
  bool rest_by_knapsack_ = false;
  plan::SegmentPlanInput rest_seg_;
  plan::KernelPlanInput rest_kin_;
  int max_candidates_;
  double margin_pct_;
  bool guard_enabled_;
};

std::vector<ParamSpec> params() {
  std::vector<ParamSpec> v = objective_params();
  v.push_back({"candidates", ParamSpec::Kind::defaulted, "32",
               "pairs the DP considers per memory mode: those most often on the kernels' "
               "time-energy hulls (plus the default pair)"});
  v.push_back({"margin_pct", ParamSpec::Kind::defaulted, "0.1",
               "percent of the time budget held back for switch-timing uncertainty when the "
               "switch latency is random (it lands early or late), at most the allowed "
               "slowdown; none for a fixed latency"});
  for (auto& p : plan::learn_then_follow_params()) v.push_back(p);
  return v;
}

const bool registered = register_policy({
    "latency-aware",
    "Online: learns the kernel sequence in a profiling iteration at default clocks, groups "
    "consecutive kernels into segments that amortise the switch latency (and memory-switch "
    "stall) and picks one pair per segment by dynamic programming under the time budget; "
    "switches issued early by the expected latency.",
    false,
    params(),
    [](const Params& p) { return std::make_unique<LatencyAware>(p); },
});

}  // namespace
}  // namespace dvfsim
