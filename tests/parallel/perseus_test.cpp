// The Phillips-Dessouky time-cost trade-off against hand-computed and
// brute-force optima, and the perseus policy on the shipped trace.
#include "parallel/perseus.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <random>

namespace dvfsim {
namespace {

TEST(PhillipsDessouky, ChainCrashesTheCheaperActivityFirst) {
  // A -> B. A: 4 units at cost 0, 2 units at cost 4 (2 per unit); B: 3 at 0,
  // 1 at 3 (1.5 per unit). Makespan 7 at cost 0; B first, down to its
  // breakpoint in one step: 5 at 3; then A: 3 at 7.
  TimeCostProblem p;
  p.times = {{2, 4}, {1, 3}};
  p.costs = {{4.0, 0.0}, {3.0, 0.0}};
  p.edges = {{0, 1, 0}};
  const auto steps = phillips_dessouky(p, 100);
  ASSERT_EQ(steps.size(), 3u);
  const std::vector<std::int64_t> T = {7, 5, 3};
  const std::vector<double> C = {0, 3, 7};
  for (std::size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(steps[k].makespan, T[k]);
    EXPECT_NEAR(steps[k].cost, C[k], 1e-9);
  }
}

double cost_at(const TimeCostProblem& p, std::size_t i, std::int64_t d) {
  const auto& t = p.times[i];
  const auto& c = p.costs[i];
  for (std::size_t k = 0; k + 1 < t.size(); ++k)
    if (d <= t[k + 1])
      return c[k] + (c[k + 1] - c[k]) * static_cast<double>(d - t[k]) /
                        static_cast<double>(t[k + 1] - t[k]);
  return c.back();
}

TEST(PhillipsDessouky, MatchesBruteForceOnRandomDags) {
  // Six activities with convex decreasing costs on random DAGs: at every
  // makespan on the way, the cost equals the least cost of any integer
  // assignment meeting that makespan (exhaustive search).
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 6;
    TimeCostProblem p;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t t0 = 1 + static_cast<std::int64_t>(rng() % 3);
      const std::int64_t t1 = t0 + 1 + static_cast<std::int64_t>(rng() % 2);
      const std::int64_t t2 = t1 + 1 + static_cast<std::int64_t>(rng() % 2);
      const double s1 = 1.0 + static_cast<double>(rng() % 5);           // slope fast segment
      const double s2 = static_cast<double>(rng() % 100) / 100.0 * s1;  // flatter
      p.times.push_back({t0, t1, t2});
      p.costs.push_back({s2 * static_cast<double>(t2 - t1) + s1 * static_cast<double>(t1 - t0),
                         s2 * static_cast<double>(t2 - t1), 0.0});
    }
    for (std::uint32_t a = 0; a < n; ++a)
      for (std::uint32_t b = a + 1; b < n; ++b)
        if (rng() % 3 == 0) p.edges.push_back({a, b, static_cast<std::int64_t>(rng() % 2)});
    const auto steps = phillips_dessouky(p, 1000);
    // Brute force: least cost per makespan.
    std::map<std::int64_t, double> best;
    std::vector<std::int64_t> d(n);
    std::function<void(std::size_t)> rec = [&](std::size_t i) {
      if (i == n) {
        std::vector<std::int64_t> fin(n, 0);
        std::int64_t T = 0;
        double c = 0;
        for (std::size_t v = 0; v < n; ++v) {
          std::int64_t s = 0;
          for (const auto& e : p.edges)
            if (e.to == v) s = std::max(s, fin[e.from] + e.delay);
          fin[v] = s + d[v];
          T = std::max(T, fin[v]);
          c += cost_at(p, v, d[v]);
        }
        auto it = best.find(T);
        if (it == best.end() || c < it->second) best[T] = c;
        return;
      }
      for (std::int64_t x = p.times[i].front(); x <= p.times[i].back(); ++x) {
        d[i] = x;
        rec(i + 1);
      }
    };
    rec(0);
    // Least cost with makespan <= T.
    ASSERT_FALSE(steps.empty());
    EXPECT_EQ(steps.back().makespan, best.begin()->first) << "trial " << trial;
    for (const auto& st : steps) {
      double least = std::numeric_limits<double>::infinity();
      for (const auto& [T, c] : best)
        if (T <= st.makespan) least = std::min(least, c);
      EXPECT_NEAR(st.cost, least, 1e-9) << "trial " << trial << " makespan " << st.makespan;
    }
  }
}

TEST(KernelPlanCurve, TakesTheSteepestSavingFirst) {
  // Kernel A: 10 ms at 5 J or 20 ms at 2 J (saves 0.3 J per ms); kernel B:
  // 10 ms at 4 J or 15 ms at 3 J (0.2 J per ms), and 12 ms at 3.9 J (above
  // B's hull: never chosen). The instruction: 20 ms at 9 J, A slowed first
  // 30 ms at 6 J, then B 35 ms at 5 J.
  const std::vector<std::vector<double>> t = {{10e6, 20e6}, {10e6, 12e6, 15e6}};
  const std::vector<std::vector<double>> c = {{5.0, 2.0}, {4.0, 3.9, 3.0}};
  const KernelPlanCurve k = kernel_plan_curve(t, c);
  ASSERT_EQ(k.time_ns.size(), 3u);
  EXPECT_DOUBLE_EQ(k.time_ns[0], 20e6);
  EXPECT_DOUBLE_EQ(k.cost_j[0], 9.0);
  EXPECT_DOUBLE_EQ(k.time_ns[1], 30e6);
  EXPECT_DOUBLE_EQ(k.cost_j[1], 6.0);
  EXPECT_DOUBLE_EQ(k.time_ns[2], 35e6);
  EXPECT_DOUBLE_EQ(k.cost_j[2], 5.0);
  // 32 ms allotted: A slow (option 1), B fast (option 0): 30 ms, 6 J.
  EXPECT_EQ(kernel_plan_at(k, 32e6), (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(kernel_plan_at(k, 35e6), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(kernel_plan_at(k, 19e6), (std::vector<std::size_t>{0, 0}));  // none fits: fastest
}

}  // namespace
}  // namespace dvfsim
