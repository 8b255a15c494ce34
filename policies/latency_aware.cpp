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
#include <chrono>
#include <cmath>
#include <limits>

#include "policies/objective.h"
#include "policies/online/learn_then_follow.h"
#include "policies/planning/emulation.h"
#include "policies/planning/segments.h"
#include "policies/registry.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

class LatencyAware final : public plan::LearnThenFollow {
 public:
  explicit LatencyAware(const Params& p)
      : objective_(parse_objective(p, "latency-aware")),
        max_candidates_(std::max(2, p.integer("candidates"))),
        margin_pct_(p.number("margin_pct")) {
    if (margin_pct_ < 0 || margin_pct_ >= 100)
      throw InputError(
          fmt::format("policy latency-aware: margin_pct={} must be in [0, 100)", margin_pct_));
  }

 private:
  void make_plan(PolicyContext& ctx) override {
    const auto started = std::chrono::steady_clock::now();
    const auto& seq = learner_.sequence();
    const Device& d = ctx.device();
    const std::size_t n = seq.size();
    plan::SegmentPlanInput in;
    in.gpu = plan::gpu_model(ctx);
    in.kernels = plan::items_from(seq);
    in.start.cap_mhz = std::min(ctx.effective().core_mhz, d.max_core_mhz());
    in.start.from = ctx.effective();
    in.start.stall_ns = ctx.expected_memory_stall_ns();
    const Clocks def = make_clocks(d, d.default_core_mhz, d.default_memory_mhz);
    const plan::Emulation em0 =
        plan::emulate(in.gpu, in.kernels, std::vector<Clocks>(n, def), in.start);
    // Switches whose latency is random land a random moment early or late:
    // hold back margin_pct of the budget for that (none when the latency is
    // fixed, e.g. --set switch_latency_us, or zero).
    const bool random_latency =
        ctx.core_switch_quantile_ns(0.9) > ctx.expected_core_switch_ns() * (1 + 1e-9) ||
        ctx.memory_switch_quantile_ns(0.9) > ctx.expected_memory_switch_ns() * (1 + 1e-9);
    in.objective = objective_;
    in.budget_ns =
        objective_.budget(em0.time_ns) - (random_latency ? margin_pct_ * 1e-2 * em0.time_ns : 0.0);
    for (std::size_t i = 0; i < n; ++i) in.kernels[i].max_core_mhz = em0.cap_mhz[i];
    // Segments must outlast the switch that starts them with a margin: plan
    // with the latency 90 % of switches land within, not the mean.
    in.core_lmin_ns = ctx.core_switch_quantile_ns(0.9);
    in.memory_lmin_ns = ctx.memory_switch_quantile_ns(0.9);
    in.memory_stall_ns = ctx.expected_memory_stall_ns();
    in.max_candidates = max_candidates_;
    plan::SegmentPlan sp = plan::plan_segments(in, em0);
    sp.report.policy = "latency-aware";
    sp.report.solve_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    report(sp.report);
    std::vector<plan::Switcher::Step> steps(n);
    for (std::size_t i = 0; i < n; ++i) {
      steps[i].pair = sp.pairs[i];
      steps[i].duration_ns = sp.emulation.time_of_step[i];
      steps[i].gap_ns = seq[i].gap_after_ns;
    }
    switcher_.set_plan(std::move(steps), true);
  }

  Objective objective_;
  int max_candidates_;
  double margin_pct_;
};

std::vector<ParamSpec> params() {
  std::vector<ParamSpec> v = objective_params();
  v.push_back({"candidates", ParamSpec::Kind::defaulted, "32",
               "pairs the DP considers per memory mode: those most often on the kernels' "
               "time-energy hulls (plus the default pair)"});
  v.push_back({"margin_pct", ParamSpec::Kind::defaulted, "0.1",
               "percent of the time budget held back for switch-timing uncertainty when the "
               "switch latency is random (it lands early or late); none for a fixed latency"});
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
