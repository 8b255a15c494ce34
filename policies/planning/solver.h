#pragma once
// Each item's lower convex hull in the (time, energy) plane and the
// multiple-choice knapsack solver (least energy under a time budget) by
// Lagrangian relaxation with bisection on the multiplier
// (policies/planning/lagrangian.h), a greedy fill of the budget left over,
// and the dual bound that proves how far from optimal the answer can be; the
// same hulls give edp/ed2p optima.
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "policies/objective.h"
#include "policies/planning/tables.h"
#include "sim/gpu_timeline.h"

namespace dvfsim::plan {

// ---------------------------------------------------------------- hulls

// Each item's lower-left convex hull in the (time, energy) plane: vertices in
// ascending time and descending energy, slopes increasing towards 0. Only hull
// vertices can minimise E + lambda T.
struct HullVertex;
struct Hulls {
  std::vector<std::uint32_t> begin;  // item i: vertices [begin[i], begin[i + 1])
  std::vector<std::int32_t> pair;
  std::vector<double> t, e;
  // Per vertex, where hulls_of_mode copied it from (empty: elsewhere): the
  // vertex's cheaper_dt is kept there.
  std::vector<const HullVertex*> source;
  std::vector<char> allowed;  // the pairs considered (empty: all)
  std::size_t size(std::size_t item) const { return begin[item + 1] - begin[item]; }
};
// `allowed` (optional, one flag per grid pair) restricts the pairs considered.
Hulls lower_hulls(const Tables& t, const std::vector<char>* allowed = nullptr);

// One item's hulls for every memory mode, from its per-column hulls computed
// once: chains[0] over every pair (lower_hulls without a mask), then one per
// memory clock with supported pairs, in memory_masks order (lower_hulls with
// that clock's mask). Equal to lower_hulls' vertices bit for bit.
struct HullVertex {
  double t, e;
  std::int32_t pair;
  // At most the least time over t (t_p - t, rounded) of the mode's pairs p
  // that use less energy (e_p < e), +inf when none does; NaN until
  // solve_budget's last pass, which looks for such a pair within the budget
  // left, first needs it (it then skips the vertex whenever this is above
  // what is left). A float rounded down, in what would be the padding.
  mutable float cheaper_dt = std::numeric_limits<float>::quiet_NaN();
};
static_assert(sizeof(HullVertex) == 2 * sizeof(double) + 2 * sizeof(std::int32_t));
using ModeChains = std::vector<std::vector<HullVertex>>;
void row_hulls(const Grid& g, const double* time_ns, const double* energy_j, ModeChains& out);
// Table rows and each row's hulls of every memory mode (row_hulls): what a
// PlanCache holds.
struct PlanStore {
  explicit PlanStore(const GpuModel& m);
  TableCache tables;
  std::vector<std::unique_ptr<ModeChains>> chains;  // by row slot
  std::size_t chain_bytes = 0;
  // About the memory held (rows and hulls).
  std::size_t bytes() const { return tables.bytes() + chain_bytes; }
};
// Table rows and each row's hulls of every memory mode (row_hulls), kept for
// all the plans a policy makes of one run on one GPU model: the knapsacks'
// rounds, the segment DP's modes and rounds, and the re-plans after a
// rehearsal or replay see mostly the same rows. Rows and hulls are functions
// of the item alone, so sharing them changes no plan. While a PlanMemo that
// admits the models is installed (a sweep, a `dvfsim run`), the store is one
// the memo keeps for those models, so a sweep's runs on one device share the
// rows and hulls too (PlanMemo::store). Not thread-safe (one cache's store
// is used by no other cache at the same time).
class PlanCache {
 public:
  explicit PlanCache(const GpuModel& m);
  // Whether this cache's rows are those of `m`'s models.
  bool serves(const GpuModel& m) const {
    return m.device == gpu_.device && m.latency == gpu_.latency && m.power == gpu_.power;
  }
  TableCache& tables() { return store_->tables; }
  const ModeChains& chains(const TableCache::Row& r);

 private:
  GpuModel gpu_;
  std::shared_ptr<PlanStore> store_;
};

// Hulls of every memory mode of a table, in the order of row_hulls.
std::vector<Hulls> mode_hulls(const Tables& t);
// Hulls of mode `mode` (row_hulls order) from each item's chains.
Hulls hulls_of_mode(const Grid& g, const std::vector<const ModeChains*>& items, std::size_t mode);
// The same into `out`, reusing its arrays (a planner's rounds rebuild their
// hulls: the same sizes, give or take).
void hulls_of_mode(const Grid& g, const std::vector<const ModeChains*>& items, std::size_t mode,
                   Hulls& out);

// ---------------------------------------------------------------- the solver

// An assignment: for every item, how many of its copies run at which pair.
struct Choice {
  std::int32_t pair = 0;
  std::uint32_t count = 0;
};
struct Assignment {
  std::vector<std::vector<Choice>> items;
  // The pair of the r-th copy of an item (copies in launch order).
  std::int32_t pair_of(std::size_t item, std::uint32_t r) const;
};

struct Solution {
  Assignment assignment;
  double time_ns = 0.0;  // sum over copies (no offsets)
  double energy_j = 0.0;
  // Lagrangian dual bound: no assignment meeting the budget uses less energy.
  // Equal to energy_j when the solution is provably optimal.
  double dual_bound_j = 0.0;
  double lambda = 0.0;   // J/ns at the solution
  bool feasible = true;  // false: even the fastest pairs miss the budget
  int iterations = 0;    // bisection steps
  double gap_j() const { return energy_j - dual_bound_j; }
  double gap_pct() const { return energy_j > 0 ? 100.0 * gap_j() / energy_j : 0.0; }
};

// Least energy with sum(time) <= budget_ns: Lagrangian relaxation over the
// hulls (bisection on lambda, every item at argmin E + lambda T), then a greedy
// fill of the leftover budget along hull edges in order of joules saved per ns
// and one pass over all pairs. budget_ns = +inf gives each item its least
// energy. An infeasible budget gives the fastest pairs (feasible = false).
Solution solve_budget(const Tables& t, const Hulls& h, double budget_ns);

// Minimises objective.score(E + energy_offset, T + time_offset) over the
// aggregate hull (every Lagrangian breakpoint and the copies between them);
// for waste and energy it calls solve_budget with
// budget = objective.budget(reference_ns) - time_offset_ns.
Solution solve_objective(const Tables& t, const Hulls& h, const Objective& o, double reference_ns,
                         double time_offset_ns, double energy_offset_j);

// Every copy at the same pair `pair` (totals only).
Solution at_pair(const Tables& t, std::int32_t pair);

}  // namespace dvfsim::plan
