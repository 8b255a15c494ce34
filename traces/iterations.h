#pragma once
// Iterations of a trace without step markers, and the steady-state iterations
// whose figures stand for the run (docs/trace-format.md, "Iterations").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/workload.h"

namespace dvfsim {

// A repetition found in an activity sequence: activity i matches activity
// i + period for a share `match` of the sampled positions; iterations start
// at `phase` + k x period.
struct PeriodFit {
  std::size_t period = 0;
  std::size_t phase = 0;
  double match = 0.0;
};

// Smallest share of matching positions that counts as a repetition.
inline constexpr double kMinPeriodMatch = 0.9;

// The repetition of `names` (one id per activity, launch order) with the best
// match of at least kMinPeriodMatch and at least two whole periods; among
// matches within 0.01 of the best, the shortest period. Candidate periods are
// the distances between occurrences of the rarest repeated names. The phase
// is where the host paused longest before the period's first activity
// (`launch_ns`, ascending): loops pause between iterations (synchronisation,
// data loading, Python), rarely inside one. nullopt when nothing repeats.
std::optional<PeriodFit> detect_period(std::span<const std::uint32_t> names,
                                       std::span<const std::int64_t> launch_ns);

// First activity index of each iteration for a fit over `n` activities: a
// prefix shorter than half a period joins the first iteration, a tail shorter
// than half a period joins the last.
std::vector<std::size_t> period_boundaries(const PeriodFit& fit, std::size_t n);

// `count` iterations split at the count - 1 longest host pauses between
// launches, no iteration shorter than a quarter of n / count activities.
// Always begins with 0; fewer boundaries when n is too short.
std::vector<std::size_t> split_at_pauses(std::span<const std::int64_t> launch_ns,
                                         std::size_t count);

// Per-iteration step time: the first GPU start of the next iteration minus
// this one's; the last iteration's is its last end minus its first start.
std::vector<std::int64_t> iteration_step_ns(const Workload& w);

// A leading iteration is warm-up when its step time exceeds this multiple of
// the median step time of the iterations after the first.
inline constexpr double kWarmupStepRatio = 1.5;

// Steady-state iterations: all but the leading warm-up ones (never all; with
// one iteration, that one).
std::vector<std::int32_t> steady_iterations(std::span<const std::int64_t> step_ns);

}  // namespace dvfsim
