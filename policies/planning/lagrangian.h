#pragma once
// Bisection on the Lagrange multiplier of a time budget, shared by the
// knapsack solver (policies/planning/solver.cpp) and the segment DP of
// latency-aware: a relaxed problem min E + lambda T is solved at each
// multiplier; its time falls as lambda grows, so bisection finds the least
// lambda whose minimiser meets the budget, and every evaluation tightens the
// Lagrangian dual bound max over lambda of (E + lambda T) - lambda budget: no
// plan meeting the budget uses less energy.
#include <algorithm>

namespace dvfsim::plan {

// Bisects [lo, hi] (lo infeasible, hi feasible: its minimiser's time <=
// budget) until max_steps steps or hi - lo <= rel_tol x hi. `eval(lambda)`
// returns the relaxed minimiser with fields `time` and `lagr` (E + lambda T);
// `on_feasible(r)` receives each evaluation that meets the budget (the new hi).
// `dual` is raised by every evaluation. Returns the number of steps.
template <class Eval, class OnFeasible>
int bisect_multiplier(double& lo, double& hi, double budget, double& dual, int max_steps,
                      double rel_tol, Eval&& eval, OnFeasible&& on_feasible) {
  int steps = 0;
  for (; steps < max_steps && hi - lo > rel_tol * hi; ++steps) {
    const double mid = 0.5 * (lo + hi);
    const auto r = eval(mid);
    dual = std::max(dual, r.lagr - mid * budget);
    if (r.time <= budget) {
      hi = mid;
      on_feasible(r);
    } else {
      lo = mid;
    }
  }
  return steps;
}

}  // namespace dvfsim::plan
