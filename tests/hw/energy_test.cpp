// Energy from a simulated energy counter: the counter holds the exact energy up to
// its last tick (every 100 ms), so the true energy of any window is known and the
// estimate can be checked by hand.
#include "hw/energy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>

namespace dvfsim::hw {
namespace {

constexpr int64_t kMs = 1'000'000;

// Piecewise-constant power: (from_ns, W) steps, the first from -infinity.
struct PowerTrace {
  std::vector<std::pair<int64_t, double>> steps;

  double at(int64_t t_ns) const {
    double watts = steps.front().second;
    for (const auto& [from, w] : steps) {
      if (from <= t_ns) watts = w;
    }
    return watts;
  }
  // Exact energy in J over [a, b].
  double energy_j(int64_t a_ns, int64_t b_ns) const {
    double joules = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      int64_t from = i == 0 ? INT64_MIN : steps[i].first;
      int64_t to = i + 1 < steps.size() ? steps[i + 1].first : INT64_MAX;
      int64_t lo = std::max(from, a_ns);
      int64_t hi = std::min(to, b_ns);
      if (hi > lo) joules += steps[i].second * static_cast<double>(hi - lo) * 1e-9;
    }
    return joules;
  }
};

// Samples every interval from `from` to `to`; the counter ticks at phase + k * tick.
std::vector<EnergySample> simulate(const PowerTrace& power, int64_t tick_ns, int64_t phase_ns,
                                   int64_t interval_ns, int64_t from_ns, int64_t to_ns) {
  const int64_t origin_ns = -10'000 * kMs;  // the counter starts counting here
  std::vector<EnergySample> samples;
  for (int64_t t = from_ns; t <= to_ns; t += interval_ns) {
    int64_t k =
        (t - phase_ns) >= 0 ? (t - phase_ns) / tick_ns : (t - phase_ns - tick_ns + 1) / tick_ns;
    int64_t last_tick = phase_ns + k * tick_ns;
    double counter_j = power.energy_j(origin_ns, last_tick);
    samples.push_back(
        {t, power.at(t), static_cast<unsigned long long>(std::llround(counter_j * 1e3))});
  }
  return samples;
}

TEST(HwEnergy, ConstantPowerOverOneSecond) {
  PowerTrace power{{{0, 200.0}}};
  auto samples = simulate(power, 100 * kMs, 3 * kMs, 10 * kMs, -50 * kMs, 1300 * kMs);
  EnergyEstimate e = estimate_energy(samples, 37 * kMs, 1037 * kMs);
  EXPECT_EQ(e.method, "energy-counter");
  // 200 W x 1 s = 200 J; edges estimated from the (constant) power: nearly exact.
  EXPECT_NEAR(e.energy_j, 200.0, 2.0);
  EXPECT_LE(e.lower_bound_j, 200.0);
  EXPECT_GE(e.upper_bound_j, 200.0);
  // At most one tick period (+ one sample interval) of 200 W on each side.
  EXPECT_LE(e.uncertainty_j, 2 * 0.11 * 200.0 + 1e-6);
  EXPECT_GE(e.uncertainty_j, 10.0);  // edges are real: the counter alone cannot tell
  ASSERT_TRUE(e.tick_period_s.has_value());
  EXPECT_NEAR(*e.tick_period_s, 0.1, 0.011);
  EXPECT_GE(e.ticks_observed, 13);
}

TEST(HwEnergy, TruthIsAlwaysInsideTheReportedUncertainty) {
  // Power steps 100 -> 450 -> 150 W; windows and counter phases varied.
  PowerTrace power{{{0, 100.0}, {230 * kMs, 450.0}, {610 * kMs, 150.0}}};
  for (int64_t phase = 0; phase < 100; phase += 7) {
    for (int64_t start = 0; start < 120; start += 11) {
      for (int64_t length : {40, 150, 333, 900}) {
        int64_t start_ns = start * kMs;
        int64_t end_ns = (start + length) * kMs;
        auto samples = simulate(power, 100 * kMs, phase * kMs, 10 * kMs, start_ns - 5 * kMs,
                                end_ns + 400 * kMs);
        EnergyEstimate e = estimate_energy(samples, start_ns, end_ns);
        double truth = power.energy_j(start_ns, end_ns);
        SCOPED_TRACE(testing::Message() << "phase " << phase << " start " << start << " length "
                                        << length << " truth " << truth << " est " << e.energy_j);
        EXPECT_LE(e.lower_bound_j, truth + 1e-3);
        EXPECT_GE(e.upper_bound_j, truth - 1e-3);
        EXPECT_LE(std::abs(e.energy_j - truth), e.uncertainty_j + 1e-3);
      }
    }
  }
}

TEST(HwEnergy, WindowInsideOneTickHasNoLowerBound) {
  PowerTrace power{{{0, 300.0}}};
  auto samples = simulate(power, 100 * kMs, 0, 10 * kMs, 0, 400 * kMs);
  EnergyEstimate e = estimate_energy(samples, 120 * kMs, 150 * kMs);  // 30 ms
  EXPECT_DOUBLE_EQ(e.lower_bound_j, 0.0);
  EXPECT_NEAR(e.energy_j, 9.0, 0.5);  // 300 W x 30 ms from the power readings
  EXPECT_GE(e.upper_bound_j, 9.0);
  EXPECT_LE(std::abs(e.energy_j - 9.0), e.uncertainty_j);
}

TEST(HwEnergy, WithoutSamplesAfterTheEndTheUpperBoundUsesMaxPower) {
  PowerTrace power{{{0, 200.0}}};
  auto samples = simulate(power, 100 * kMs, 5 * kMs, 10 * kMs, -20 * kMs, 1000 * kMs);
  EnergyEstimate e = estimate_energy(samples, 0, 1000 * kMs);
  EXPECT_NEAR(e.energy_j, 200.0, 2.5);
  EXPECT_GE(e.upper_bound_j, 200.0);
  EXPECT_LE(std::abs(e.energy_j - 200.0), e.uncertainty_j);
}

TEST(HwEnergy, WithoutACounterPowerIsIntegrated) {
  std::vector<EnergySample> samples;
  for (int64_t t = 0; t <= 1000; t += 10) {
    samples.push_back({t * kMs, t < 500 ? 100.0 : 300.0, std::nullopt});
  }
  EnergyEstimate e = estimate_energy(samples, 0, 1000 * kMs);
  EXPECT_EQ(e.method, "power-integral");
  EXPECT_NEAR(e.energy_j, 0.5 * 100 + 0.5 * 300, 1e-9);
  EXPECT_NEAR(e.uncertainty_j, 200.0, 1e-9);  // (max - min) x duration
}

TEST(HwEnergy, HasTickAfterNeedsAChangeWhollyAfterTheEnd) {
  std::vector<EnergySample> samples = {
      {0, 100, 1000}, {10, 100, 1000}, {20, 100, 2000}, {30, 100, 2000}, {40, 100, 3000}};
  EXPECT_TRUE(has_tick_after(samples, 20));   // change between 30 and 40
  EXPECT_FALSE(has_tick_after(samples, 35));  // no sample pair wholly after 35
  samples[0].energy_mj.reset();
  std::vector<EnergySample> no_counter = {{0, 100, std::nullopt}};
  EXPECT_TRUE(has_tick_after(no_counter, 0));
}

}  // namespace
}  // namespace dvfsim::hw
