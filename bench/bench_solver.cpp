// The per-kernel planning solver at full scale: one step of the shipped trace
// (~1,859 activities) over the full RTX 3080 Ti grid (127 core x 5 memory
// clocks minus the forbidden pairs = 523 pairs). Tables are precomputed once
// (as a policy does once per run); BM_GlobalPerKernelSolve times the hulls, the
// Lagrangian bisection, the greedy fill and the dual bound, with every kernel
// its own item (no grouping of identical kernels).
#include <benchmark/benchmark.h>

#include "apps/runner.h"
#include "policies/planning/kernel_plan.h"

namespace dvfsim {
namespace {

struct Setup {
  Prepared p;
  std::vector<plan::ItemSpec> items;
  plan::Tables tables;
  double budget_ns = 0;
  Setup() {
    p = prepare(load_workload(DVFSIM_SHIPPED_TRACE), load_device_cached("rtx3080ti"));
    const Workload& w = *p.workload;
    const auto end = w.iteration_begin.size() > 1 ? w.iteration_begin[1] : w.kernels.size();
    for (std::size_t k = 0; k < end; ++k) {
      plan::ItemSpec it;
      it.cost = p.costs[k];
      items.push_back(it);
    }
    const Device& d = p.target->device;
    tables = plan::build_tables(d, *p.latency, *p.power, items, plan::default_table_options(d));
    const int def = tables.grid.find(d.default_core_mhz, d.default_memory_mhz);
    for (std::size_t i = 0; i < tables.items; ++i)
      budget_ns += tables.t(i, static_cast<std::size_t>(def));
  }
};

const Setup& setup() {
  static const Setup s;
  return s;
}

void BM_GlobalPerKernelSolve(benchmark::State& state) {
  const Setup& s = setup();
  double gap = 0;
  for (auto _ : state) {
    const plan::Hulls h = plan::lower_hulls(s.tables);
    const plan::Solution sol = plan::solve_budget(s.tables, h, s.budget_ns);
    gap = sol.gap_pct();
    benchmark::DoNotOptimize(sol.energy_j);
  }
  state.counters["items"] = static_cast<double>(s.tables.items);
  state.counters["pairs"] = static_cast<double>(s.tables.pairs);
  state.counters["gap_pct"] = gap;
  state.SetLabel("hulls + Lagrangian bisection + greedy fill");
}
BENCHMARK(BM_GlobalPerKernelSolve)->Unit(benchmark::kMillisecond);

void BM_BuildTables(benchmark::State& state) {
  const Setup& s = setup();
  const Device& d = s.p.target->device;
  for (auto _ : state) {
    const plan::Tables t =
        plan::build_tables(d, *s.p.latency, *s.p.power, s.items, plan::default_table_options(d));
    benchmark::DoNotOptimize(t.time_ns.data());
  }
}
BENCHMARK(BM_BuildTables)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dvfsim
