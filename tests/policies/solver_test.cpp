// The planning helpers: hulls, the knapsack solver and its dual bound, on
// instances small enough to check by hand or by brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "models/native_governor.h"
#include "policies/online/learn_then_follow.h"
#include "policies/online/learner.h"
#include "policies/online/switcher.h"
#include "policies/planning/kernel_plan.h"
#include "sim/error.h"
#include "tests/sim/fixtures.h"

namespace dvfsim::plan {
namespace {

// Tables by hand: `pairs` toy pairs, rows given directly.
Tables hand_tables(const std::vector<std::vector<std::pair<double, double>>>& rows,
                   std::vector<std::uint32_t> counts = {}) {
  Tables t;
  const std::size_t P = rows.front().size();
  t.grid.mem_begin = {0, static_cast<std::uint32_t>(P)};
  for (std::size_t p = 0; p < P; ++p)
    t.grid.pairs.push_back(
        Clocks{static_cast<std::int32_t>(1000 + p), 1000, static_cast<std::int16_t>(p), 0});
  t.items = rows.size();
  t.pairs = P;
  for (const auto& r : rows)
    for (const auto& [time, energy] : r) {
      t.time_ns.push_back(time);
      t.energy_j.push_back(energy);
    }
  t.count = counts.empty() ? std::vector<std::uint32_t>(rows.size(), 1) : counts;
  return t;
}

TEST(Hull, KeepsTheLowerLeftConvexChain) {
  // (t, e): (1, 10), (2, 6), (3, 5), (4, 1), (5, 2): (3, 5) lies above the chord
  // from (2, 6) to (4, 1); (5, 2) is dominated by (4, 1).
  const Tables t = hand_tables({{{5, 2}, {4, 1}, {3, 5}, {2, 6}, {1, 10}}});
  const Hulls h = lower_hulls(t);
  ASSERT_EQ(h.size(0), 3u);
  EXPECT_EQ(h.t[0], 1);
  EXPECT_EQ(h.t[1], 2);
  EXPECT_EQ(h.t[2], 4);
}

TEST(Solver, TwoKernelsTwoPairsHandOptimum) {
  // Kernel A: fast (10, 5 J) or slow (20, 3 J): saves 2 J for 10 ns.
  // Kernel B: fast (10, 5 J) or slow (15, 4 J): saves 1 J for 5 ns.
  const Tables t = hand_tables({{{10, 5}, {20, 3}}, {{10, 5}, {15, 4}}});
  const Hulls h = lower_hulls(t);
  // Budget 20: both fast, 10 J.
  Solution s = solve_budget(t, h, 20);
  EXPECT_DOUBLE_EQ(s.energy_j, 10);
  EXPECT_DOUBLE_EQ(s.time_ns, 20);
  // Budget 26: only B can slow (A needs 10 more): 9 J. The LP bound is
  // 10 - 6 x 0.2 = 8.8 J; the gap is reported.
  s = solve_budget(t, h, 26);
  EXPECT_DOUBLE_EQ(s.energy_j, 9);
  EXPECT_NEAR(s.dual_bound_j, 8.8, 1e-6);
  EXPECT_NEAR(s.gap_j(), 0.2, 1e-6);
  // Budget 30: A slow (8 J) beats B slow (9 J).
  s = solve_budget(t, h, 30);
  EXPECT_DOUBLE_EQ(s.energy_j, 8);
  EXPECT_EQ(s.assignment.pair_of(0, 0), 1);
  EXPECT_EQ(s.assignment.pair_of(1, 0), 0);
  // Budget 35: both slow.
  s = solve_budget(t, h, 35);
  EXPECT_DOUBLE_EQ(s.energy_j, 7);
  EXPECT_DOUBLE_EQ(s.gap_j(), 0);
  // Budget 15: infeasible, the fastest pairs.
  s = solve_budget(t, h, 15);
  EXPECT_FALSE(s.feasible);
  EXPECT_DOUBLE_EQ(s.time_ns, 20);
}

TEST(Solver, CopiesOfOneItemSplitBetweenPairs) {
  // Four identical kernels, fast (10, 5) or slow (20, 3); budget 60: two slow.
  const Tables t = hand_tables({{{10, 5}, {20, 3}}}, {4});
  const Solution s = solve_budget(t, lower_hulls(t), 60);
  EXPECT_DOUBLE_EQ(s.energy_j, 16);
  EXPECT_DOUBLE_EQ(s.time_ns, 60);
  EXPECT_NEAR(s.gap_j(), 0, 1e-9);
}

TEST(Solver, EdpWalksTheAggregateHull) {
  // One kernel: (10, 10) EDP 100, (20, 4) EDP 80, (40, 3) EDP 120.
  const Tables t = hand_tables({{{10, 10}, {20, 4}, {40, 3}}});
  Objective o;
  o.kind = ObjectiveKind::edp;
  const Solution s = solve_objective(t, lower_hulls(t), o, 10, 0, 0);
  EXPECT_DOUBLE_EQ(s.energy_j, 4);
  o.kind = ObjectiveKind::energy;
  EXPECT_DOUBLE_EQ(solve_objective(t, lower_hulls(t), o, 10, 0, 0).energy_j, 3);
}

TEST(Solver, PrimalBetweenDualBoundAndBruteForceOnRandomInstances) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> U(1.0, 10.0);
  for (int inst = 0; inst < 200; ++inst) {
    const int items = 5, pairs = 4;
    std::vector<std::vector<std::pair<double, double>>> rows(items);
    for (auto& r : rows)
      for (int p = 0; p < pairs; ++p) r.push_back({std::round(U(rng) * 10), U(rng)});
    const Tables t = hand_tables(rows);
    double tmin = 0, tmax = 0;
    for (auto& r : rows) {
      double a = 1e9, b = 0;
      for (auto& [x, y] : r) a = std::min(a, x), b = std::max(b, x);
      tmin += a, tmax += b;
    }
    const double budget = tmin + (tmax - tmin) * std::uniform_real_distribution<double>(0, 1)(rng);
    double best = std::numeric_limits<double>::infinity();
    for (int code = 0; code < 1024; ++code) {
      double T = 0, E = 0;
      int c = code;
      for (int i = 0; i < items; ++i, c /= pairs)
        T += rows[i][c % pairs].first, E += rows[i][c % pairs].second;
      if (T <= budget) best = std::min(best, E);
    }
    const Solution s = solve_budget(t, lower_hulls(t), budget);
    ASSERT_TRUE(s.feasible);
    EXPECT_LE(s.time_ns, budget + 1e-9);
    EXPECT_GE(s.energy_j, best - 1e-9);
    EXPECT_LE(s.dual_bound_j, best + 1e-9) << "instance " << inst;
  }
}

TEST(Tables, GroupIdenticalKernels) {
  std::vector<ItemSpec> k(5);
  k[0].cost.compute_ns_mhz = k[2].cost.compute_ns_mhz = k[4].cost.compute_ns_mhz = 1e9;
  k[1].cost.compute_ns_mhz = k[3].cost.compute_ns_mhz = 2e9;
  k[3].gap_ns = 5000;
  const Grouping g = group_identical(k);
  ASSERT_EQ(g.items.size(), 3u);
  EXPECT_EQ(g.items[0].count, 3u);
  EXPECT_EQ(g.item_of, (std::vector<std::uint32_t>{0, 1, 0, 2, 0}));
}

TEST(Tables, EnergyIncludesIdlePowerOfTheGap) {
  testing::ToyLatency lat;
  testing::ToyPower pow;
  const Device d = testing::toy_device();
  std::vector<ItemSpec> k(1);
  k[0].cost.compute_ns_mhz = 10e6 * 2000.0;  // 10 ms at 2000 MHz
  k[0].gap_ns = 5e6;                         // then 5 ms idle at 100 W
  const Tables t = build_tables(d, lat, pow, k, default_table_options(d));
  const int fast = t.grid.find(2000, 1000), slow = t.grid.find(1000, 1000);
  EXPECT_DOUBLE_EQ(t.t(0, static_cast<std::size_t>(fast)), 10e6);
  EXPECT_DOUBLE_EQ(t.e(0, static_cast<std::size_t>(fast)), 2.0 + 0.5);
  EXPECT_DOUBLE_EQ(t.t(0, static_cast<std::size_t>(slow)), 20e6);
  EXPECT_DOUBLE_EQ(t.e(0, static_cast<std::size_t>(slow)), 3.0 + 0.5);
}

TEST(PlanCache, SharesItsRowsThroughTheInstalledMemo) {
  testing::ToyLatency lat;
  testing::ToyPower pow;
  const Device d = testing::toy_device();
  const GpuModel gpu{&d, &lat, &pow, nullptr};
  ItemSpec k;
  k.cost.compute_ns_mhz = 10e6 * 2000.0;  // 10 ms at 2000 MHz
  const int fast = make_grid(d).find(2000, 1000);
  ASSERT_GE(fast, 0);
  {  // no memo: every cache starts empty
    PlanCache a(gpu);
    EXPECT_EQ(a.tables().row(k).time_ns[fast], 10e6);
    PlanCache b(gpu);
    EXPECT_EQ(b.tables().slots(), 0u);
  }
  PlanMemo memo;
  memo.admit(gpu);
  const PlanMemo::Scope scope(&memo);
  const double* row = nullptr;
  {
    PlanCache a(gpu);
    row = a.tables().row(k).time_ns;
    // A cache made while `a` lives has a store of its own.
    PlanCache b(gpu);
    EXPECT_EQ(b.tables().slots(), 0u);
  }
  // After them, a cache of the same models gets a's rows: the same row, not
  // derived again.
  PlanCache c(gpu);
  EXPECT_EQ(c.tables().slots(), 1u);
  EXPECT_EQ(c.tables().row(k).time_ns, row);
  EXPECT_EQ(c.tables().slots(), 1u);
}

// Every kernel issues at full rate: SIMT activity 1.
class IssueBoundLatency final : public LatencyModel {
 public:
  std::vector<KernelCost> prepare(const Workload&, const Device&, const Device&) const override {
    return {};
  }
  double duration_ns(const KernelCost& k, const Clocks& c) const override {
    return k.compute_ns_mhz / c.core_mhz;
  }
  Utilisation utilisation(const KernelCost&, const Clocks&, double) const override {
    return {1.0, 0.0, 0.0, 1.0};
  }
};
// 100 W idle; busy and SIMT activity 100 W each at 2000 MHz, 50 W at 1000 MHz.
class SimtPower final : public PowerModel {
 public:
  double power_w(const Utilisation& u, const Clocks& c) const override {
    const double w = c.core_mhz == 2000 ? 100.0 : 50.0;
    return 100.0 + (u.busy + u.simt) * w;
  }
  double deep_idle_w() const override { return 50.0; }
};

TEST(Emulation, TheGovernorSeesSimtActivity) {
  // Limit 250 W (x 0.99): busy + SIMT draws 300 W at 2000 MHz, 200 W at 1000,
  // so the firmware holds 1000 MHz; busy alone (200 W) would fit at 2000.
  Device d = testing::toy_device();
  d.power_limit_w = 250;
  d.governor = {"native",
                Params("toy governor",
                       {{"period_ms", "1"}, {"up_step_mhz", "120"}, {"target_fraction", "0.99"}})};
  IssueBoundLatency lat;
  SimtPower pow;
  std::vector<ItemSpec> k(1);
  k[0].cost.compute_ns_mhz = 10e6 * 2000.0;  // 10 ms at 2000 MHz
  const std::vector<Clocks> pairs = {make_clocks(d, 2000, 1000)};
  EmulationStart warm;
  warm.warm_pair = pairs[0];
  const NativeGovernor gov(d, pow);
  const GpuModel gpu{&d, &lat, &pow, &gov};
  const Emulation a = emulate(gpu, k, pairs, warm);
  EXPECT_EQ(a.cap_mhz[0], 1000);  // the warm-up cap
  EXPECT_DOUBLE_EQ(a.time_ns, 20e6);
  // Starting uncapped, the first tick (one 1 ms period in) caps it: 1 ms at
  // 2000 MHz does a tenth of the work, the rest takes 18 ms at 1000 MHz.
  EmulationStart hot = warm;
  hot.cap_mhz = 2000;
  const Emulation b = emulate(gpu, k, pairs, hot);
  EXPECT_DOUBLE_EQ(b.time_ns, 19e6);
}

TEST(Emulation, IsTheEnginesGpuDrivenByThePlan) {
  // Two 10 ms kernels (at 2000 MHz) 5 ms apart; the plan runs the second at
  // 1000 MHz: 10 ms at 200 W (2 J), 5 ms idle at 100 W (0.5 J), 20 ms at
  // 150 W (3 J). The engine, the same plan requested at kernel start with
  // free switches, gets the same 35 ms and 5.5 J: one GPU model, two drivers.
  testing::ToyRig rig(testing::toy_workload({10, 10}, {0, 15}));
  const std::vector<Clocks> pairs = {make_clocks(rig.device, 2000, 1000),
                                     make_clocks(rig.device, 1000, 1000)};
  testing::ScriptedPolicy p;
  p.on_start = [&](PolicyContext& c, std::uint32_t k) {
    c.request(pairs[k].core_mhz, pairs[k].memory_mhz);
  };
  EngineConfig cfg;
  cfg.switch_latency_override_us = 0;
  const RunResult r = rig.run(p, cfg);
  EXPECT_EQ(r.end_ns - r.begin_ns, 35'000'000);
  EXPECT_NEAR(r.energy_j, 5.5, 1e-9);

  std::vector<ItemSpec> k(2);
  for (std::size_t i = 0; i < 2; ++i) k[i].cost = rig.costs[i];
  k[0].gap_ns = 5e6;
  EmulationStart st;
  st.cap_mhz = 2000;
  const GpuModel gpu{&rig.device, &rig.latency, &rig.power, &rig.governor};
  const Emulation em = emulate(gpu, k, pairs, st);
  EXPECT_DOUBLE_EQ(em.time_ns, 35e6);
  EXPECT_NEAR(em.energy_j, 5.5, 1e-9);
  EXPECT_DOUBLE_EQ(em.time_of_step[1], 20e6);
}

// plan::replan_until_met against a planner that is not monotone in its budget
// (budget 1000 ns: the floor of a tightening is 1e-5 x 1000 = 0.01 ns, so a
// miss of 10 ns tightens by 1.5 x 10 + 0.01 = 15.01 ns).
TEST(Replan, WalksDownTheLadderWhenTighteningMissesByMore) {
  std::vector<double> asked;
  // Untightened: 10 ns over; at 15.01: 40 ns over (worse); at 15.01 + 60.01:
  // no plan; down the ladder at 15.01 / 8: 5 over, at 15.01 / 4: met.
  const bool met = replan_until_met(4, 1000.0, 100.0, [&](double t) -> std::optional<double> {
    asked.push_back(t);
    switch (asked.size()) {
      case 1:
        return 10.0;
      case 2:
        return 40.0;
      case 3:
        return std::nullopt;
      case 4:
        return 5.0;
      default:
        return -1.0;
    }
  });
  EXPECT_TRUE(met);
  ASSERT_EQ(asked.size(), 5u);
  EXPECT_DOUBLE_EQ(asked[0], 0.0);
  EXPECT_DOUBLE_EQ(asked[1], 15.01);
  EXPECT_DOUBLE_EQ(asked[2], 15.01 + 60.01);
  EXPECT_DOUBLE_EQ(asked[3], 15.01 / 8);
  EXPECT_DOUBLE_EQ(asked[4], 15.01 / 4);
}

TEST(Replan, TriesBelowATighteningThatMetAndStopsWhereNothingIsToGain) {
  std::vector<double> asked;
  auto record = [&](std::vector<std::optional<double>> answers) {
    asked.clear();
    return [&asked, answers](double t) -> std::optional<double> {
      asked.push_back(t);
      return answers[std::min(asked.size(), answers.size()) - 1];
    };
  };
  // Met at once: one plan.
  EXPECT_TRUE(replan_until_met(4, 1000.0, 100.0, record({-2.0})));
  EXPECT_EQ(asked.size(), 1u);
  // The first re-plan meets the budget: the ladder below it is still tried,
  // up to its first rung that meets (the caller keeps the better plan).
  EXPECT_TRUE(replan_until_met(4, 1000.0, 100.0, record({10.0, -30.0, -1.0})));
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_DOUBLE_EQ(asked[2], 15.01 / 8);
  // A miss above the hopeless bound: nothing more is planned.
  EXPECT_FALSE(replan_until_met(4, 1000.0, 100.0, record({150.0})));
  EXPECT_EQ(asked.size(), 1u);
  // No plan at all.
  EXPECT_FALSE(replan_until_met(4, 1000.0, 100.0, record({std::nullopt})));
  EXPECT_EQ(asked.size(), 1u);
  // Every plan misses: four re-plans, three rungs.
  EXPECT_FALSE(replan_until_met(4, 1000.0, 100.0, record({1.0})));
  EXPECT_EQ(asked.size(), 7u);
}

TEST(Learner, TellsCopiesApartByTheirSize) {
  Kernel a;
  a.cls = KernelClass::memcpy;
  a.name_id = 3;
  a.work.dram_bytes = 1e6;
  Kernel b = a;
  EXPECT_EQ(launch_key(a), launch_key(b));
  b.work.dram_bytes = 2e6;
  EXPECT_NE(launch_key(a), launch_key(b));
  // A kernel's own work does not enter its key (the learner matches launches).
  a.cls = b.cls = KernelClass::gemm;
  EXPECT_EQ(launch_key(a), launch_key(b));
}

TEST(Objective, ParsesAndRejects) {
  const PolicyInfo& info = find_policy("kernel-oracle");
  const Objective o =
      parse_objective(resolve_params(info, {{"objective", "edp"}}), "kernel-oracle");
  EXPECT_EQ(o.kind, ObjectiveKind::edp);
  EXPECT_THROW(parse_objective(resolve_params(info, {{"objective", "speed"}}), "x"), InputError);
  EXPECT_THROW(parse_objective(resolve_params(info, {{"max_slowdown", "-1"}}), "x"), InputError);
  Objective w;
  w.max_slowdown_pct = 10;
  EXPECT_DOUBLE_EQ(w.budget(100), 110);
}

TEST(Registry, PoliciesDeclareOracleHonestly) {
  EXPECT_TRUE(find_policy("kernel-oracle").oracle);
  EXPECT_TRUE(find_policy("static-best").oracle);
  EXPECT_FALSE(find_policy("kernel-predictive").oracle);
  EXPECT_FALSE(find_policy("latency-aware").oracle);
  EXPECT_FALSE(find_policy("pass-level").oracle);
  const PolicyInfo& info = find_policy("kernel-oracle");
  EXPECT_THROW(info.make(resolve_params(info, {{"aggregation", "x"}})), InputError);
  EXPECT_THROW(info.make(resolve_params(info, {{"memory", "x"}})), InputError);
  // host_slack: recurring (the default), 1 or once, 0 or off; nothing else.
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const PolicyInfo& online = find_policy(p);
    EXPECT_EQ(parse_host_slack(resolve_params(online, {}), p), HostSlack::recurring);
    EXPECT_EQ(parse_host_slack(resolve_params(online, {{"host_slack", "once"}}), p),
              HostSlack::once);
    EXPECT_EQ(parse_host_slack(resolve_params(online, {{"host_slack", "0"}}), p), HostSlack::off);
    try {
      online.make(resolve_params(online, {{"host_slack", "2"}}));
      ADD_FAILURE() << p << ": host_slack=2 accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("host_slack=2 is not one of"), std::string::npos) << p;
    }
  }
}

}  // namespace
}  // namespace dvfsim::plan
