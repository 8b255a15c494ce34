// The per-kernel planning solver at full scale: one step of the shipped trace
// (~1,859 activities) over the full RTX 3080 Ti grid (127 core x 5 memory
// clocks minus the forbidden pairs = 523 pairs). Tables are precomputed once
// (as a policy does once per run); BM_GlobalPerKernelSolve times the hulls, the
// Lagrangian bisection, the greedy fill and the dual bound, with every kernel
// its own item (no grouping of identical kernels).
#include <benchmark/benchmark.h>

#include "apps/runner.h"
#include "policies/planning/kernel_plan.h"
#include "policies/planning/segments.h"

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

// The segment DP of latency-oracle (and latency-aware) on the whole shipped
// run (two steps, 3,718 kernels, gaps from the trace) on the RTX 3080 Ti at
// switch latency L = range(0) us: every memory mode, the bisection on lambda,
// the emulations of its tightening rounds. The oracle's replays of its
// candidates on the engine come on top (BM_ReplayShippedTrace each).
void BM_SegmentPlan(benchmark::State& state) {
  const Setup& s = setup();
  const Workload& w = *s.p.workload;
  const Device& d = s.p.target->device;
  const std::size_t n = w.kernels.size();
  plan::SegmentPlanInput in;
  in.gpu = GpuModel{&d, s.p.latency.get(), s.p.power.get(), s.p.governor.get()};
  in.kernels.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    in.kernels[k].cost = s.p.costs[k];
    if (k + 1 < n)
      in.kernels[k].gap_ns = std::max(
          0.0, static_cast<double>(w.kernels[k + 1].traced_start_ns - w.kernels[k].traced_start_ns -
                                   w.kernels[k].work.duration_ns));
  }
  in.start.warm_pair = default_clocks(d);
  in.start.from = in.start.warm_pair;
  const plan::Emulation em0 =
      plan::emulate(in.gpu, in.kernels, std::vector<Clocks>(n, in.start.warm_pair), in.start);
  for (std::size_t k = 0; k < n; ++k) in.kernels[k].max_core_mhz = em0.cap_mhz[k];
  in.budget_ns = em0.time_ns;
  in.core_lmin_ns = in.memory_lmin_ns = static_cast<double>(state.range(0)) * 1e3;
  in.memory_stall_ns = std::min(in.core_lmin_ns, d.memory_switch_stall_us * 1e3);
  in.start.stall_ns = in.memory_stall_ns;
  double saving = 0;
  for (auto _ : state) {
    const plan::SegmentPlan sp = plan::plan_segments(in, em0);
    saving = 100.0 * (1.0 - sp.emulation.energy_j / em0.energy_j);
    benchmark::DoNotOptimize(sp.pairs.data());
  }
  state.counters["kernels"] = static_cast<double>(n);
  state.counters["emulated_saving_pct"] = saving;
  state.SetLabel("segment DP, whole run, every memory mode");
}
BENCHMARK(BM_SegmentPlan)->Arg(1)->Arg(10)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dvfsim
