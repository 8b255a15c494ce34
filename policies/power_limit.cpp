// `power-limit`: the board power limit as the knob, in the style of Zeus's
// GlobalPowerLimitOptimizer (You, Chung, Chowdhury, NSDI'23): profile every
// allowed limit from the highest down in `step_w` steps (and the lowest),
// pick the one that minimises  eta x E + (1 - eta) x P_max x T  with P_max the
// highest allowed limit, and run there with the GPU otherwise left alone
// (default clocks, the firmware capping under the chosen limit). Zeus
// profiles online over the first iterations; here each limit is replayed on
// the whole modelled run, so profiling is free and exact: an oracle.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "policies/planning/report.h"
#include "policies/registry.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

// While the run replays, the GPU is left alone (as native): the limit is
// the whole decision.
class PowerLimitPolicy final : public Policy {
 public:
  bool acts_per_kernel() const override { return false; }
};

double choose(const Params& p, const PowerLimitProfiler& prof) {
  const auto started = std::chrono::steady_clock::now();
  const double eta = p.number("eta");
  const double step = p.number("step_w");
  if (!(eta >= 0.0 && eta <= 1.0))
    throw InputError(fmt::format("power-limit: eta = {:g}: expected a number in [0, 1]", eta));
  if (!(step > 0.0))
    throw InputError(fmt::format("power-limit: step_w = {:g}: expected a power > 0 W", step));
  std::vector<double> limits;
  for (double w = prof.max_w; w > prof.min_w + 1e-9; w -= step) limits.push_back(w);
  limits.push_back(prof.min_w);
  double best_w = prof.max_w, best_cost = 0.0, best_t = 0.0, best_e = 0.0;
  bool first = true;
  for (double w : limits) {
    const auto [t, e] = prof.time_energy_at(w);
    const double cost = eta * e + (1.0 - eta) * prof.max_w * t;
    if (first || cost < best_cost) {  // ties keep the higher limit
      best_w = w;
      best_cost = cost;
      best_t = t;
      best_e = e;
      first = false;
    }
  }
  plan::SolveReport r;
  r.policy = "power-limit";
  r.what = fmt::format(
      "profiled {} power limits {:g}..{:g} W (step {:g} W): chose {:g} W, cost eta x E + (1 - "
      "eta) x {:g} W x T = {:.4g} J at eta {:g}",
      limits.size(), prof.max_w, prof.min_w, step, best_w, prof.max_w, best_cost, eta);
  r.items = limits.size();
  r.time_ns = best_t * 1e9;
  r.energy_j = r.dual_bound_j = best_e;
  r.solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  prof.report(r);
  return best_w;
}

const bool registered = register_policy({
    "power-limit",
    "Zeus-style global power-limit optimiser: every allowed board power limit profiled (highest "
    "first, step_w apart), the one minimising eta x E + (1 - eta) x P_max x T chosen and the "
    "run replayed there with default clocks (summary.json power_limit_w). Profiles on the "
    "modelled run: an oracle.",
    true,
    {
        {"eta", ParamSpec::Kind::defaulted, "0.5",
         "weight of energy against time in eta x E + (1 - eta) x P_max x T (0: fastest, 1: least "
         "energy)"},
        {"step_w", ParamSpec::Kind::defaulted, "25",
         "distance between profiled limits in W (Zeus's default 25 W)"},
    },
    [](const Params&) { return std::make_unique<PowerLimitPolicy>(); },
    choose,
});

}  // namespace
}  // namespace dvfsim
