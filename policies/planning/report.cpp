#include "policies/planning/report.h"

#include <fmt/format.h>

#include <cmath>

namespace dvfsim::plan {

std::string line(const SolveReport& r) {
  return fmt::format(
      "{}: {}: {} items ({} kernels) x {} pairs, {} hull vertices; time {:.3f} ms of budget {}; "
      "energy {:.4f} J, Lagrangian bound {:.4f} J, gap {:.4g} J ({:.4f} %){}; {} rounds; {:.1f} ms",
      r.policy, r.what, r.items, r.copies, r.pairs, r.hull_vertices, r.time_ns * 1e-6,
      std::isfinite(r.budget_ns) ? fmt::format("{:.3f} ms", r.budget_ns * 1e-6)
                                 : std::string("none"),
      r.energy_j, r.dual_bound_j, r.gap_j, r.gap_pct,
      r.feasible ? "" : " [budget infeasible: fastest pairs]", r.rounds, r.solve_ms);
}

}  // namespace dvfsim::plan
