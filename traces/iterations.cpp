#include "traces/iterations.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <unordered_map>

namespace dvfsim {
namespace {

// Positions sampled per candidate period: enough for a 0.5 % resolution of
// the match share, and bounded work on traces of millions of activities.
constexpr std::size_t kMatchSamples = 4096;
// Anchor names whose occurrence distances give the candidate periods.
constexpr std::size_t kAnchors = 8;
// Occurrences of each anchor used for candidate distances.
constexpr std::size_t kAnchorOccurrences = 64;

double match_share(std::span<const std::uint32_t> s, std::size_t period) {
  const std::size_t span = s.size() - period;
  const std::size_t step = std::max<std::size_t>(1, span / kMatchSamples);
  std::size_t hits = 0, total = 0;
  for (std::size_t i = 0; i < span; i += step, ++total) hits += s[i] == s[i + period] ? 1 : 0;
  return total > 0 ? static_cast<double>(hits) / static_cast<double>(total) : 0.0;
}

}  // namespace

std::optional<PeriodFit> detect_period(std::span<const std::uint32_t> names,
                                       std::span<const std::int64_t> launch_ns) {
  const std::size_t n = names.size();
  if (n < 4) return std::nullopt;
  std::unordered_map<std::uint32_t, std::vector<std::size_t>> where;
  for (std::size_t i = 0; i < n; ++i) {
    auto& v = where[names[i]];
    if (v.size() <= kAnchorOccurrences) v.push_back(i);
  }
  std::unordered_map<std::uint32_t, std::size_t> count;
  for (const std::uint32_t id : names) ++count[id];
  std::vector<std::pair<std::size_t, std::size_t>> anchors;  // (count, first position)
  for (const auto& [id, c] : count)
    if (c >= 2) anchors.emplace_back(c, where[id].front());
  std::sort(anchors.begin(), anchors.end());
  if (anchors.size() > kAnchors) anchors.resize(kAnchors);

  std::set<std::size_t> candidates;
  for (const auto& [c, first] : anchors) {
    const auto& pos = where[names[first]];
    for (std::size_t j = 1; j < pos.size(); ++j) {
      candidates.insert(pos[j] - pos[0]);
      candidates.insert(pos[j] - pos[j - 1]);
    }
  }
  std::vector<PeriodFit> fits;
  for (const std::size_t p : candidates) {
    if (p == 0 || 2 * p > n) continue;
    fits.push_back({p, 0, match_share(names, p)});
  }
  if (fits.empty()) return std::nullopt;
  double best = 0;
  for (const PeriodFit& f : fits) best = std::max(best, f.match);
  if (best < kMinPeriodMatch) return std::nullopt;
  PeriodFit fit;
  fit.period = std::numeric_limits<std::size_t>::max();
  for (const PeriodFit& f : fits)
    if (f.match >= best - 0.01 && f.period < fit.period) fit = f;

  // Phase: the offset whose period starts follow the longest host pauses.
  std::vector<std::int64_t> score(fit.period, 0);
  for (std::size_t i = 1; i < n && i < launch_ns.size(); ++i)
    score[i % fit.period] += launch_ns[i] - launch_ns[i - 1];
  fit.phase =
      static_cast<std::size_t>(std::max_element(score.begin(), score.end()) - score.begin());
  return fit;
}

std::vector<std::size_t> period_boundaries(const PeriodFit& fit, std::size_t n) {
  std::vector<std::size_t> starts = {0};
  if (fit.period == 0) return starts;
  for (std::size_t s = fit.phase; s < n; s += fit.period)
    if (s > 0) starts.push_back(s);
  if (starts.size() > 1 && fit.phase > 0 && 2 * fit.phase < fit.period)
    starts.erase(starts.begin() + 1);
  if (starts.size() > 1 && 2 * (n - starts.back()) < fit.period) starts.pop_back();
  return starts;
}

std::vector<std::size_t> split_at_pauses(std::span<const std::int64_t> launch_ns,
                                         std::size_t count) {
  const std::size_t n = launch_ns.size();
  std::vector<std::size_t> starts = {0};
  if (count <= 1 || n < 2) return starts;
  const std::size_t min_len = std::max<std::size_t>(1, n / (4 * count));
  std::vector<std::size_t> order(n - 1);
  std::iota(order.begin(), order.end(), std::size_t{1});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return launch_ns[a] - launch_ns[a - 1] > launch_ns[b] - launch_ns[b - 1];
  });
  for (const std::size_t i : order) {
    if (starts.size() == count) break;
    if (i < min_len || n - i < min_len) continue;
    const bool far = std::all_of(starts.begin(), starts.end(),
                                 [&](std::size_t s) { return (i > s ? i - s : s - i) >= min_len; });
    if (far) starts.push_back(i);
  }
  std::sort(starts.begin(), starts.end());
  return starts;
}

std::vector<std::int64_t> iteration_step_ns(const Workload& w) {
  const auto n = static_cast<std::size_t>(std::max(w.iterations, 0));
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> first(n, kMax), last(n, std::numeric_limits<std::int64_t>::min());
  for (const Kernel& k : w.kernels) {
    if (k.iteration < 0 || static_cast<std::size_t>(k.iteration) >= n) continue;
    const auto i = static_cast<std::size_t>(k.iteration);
    first[i] = std::min(first[i], k.traced_start_ns);
    last[i] = std::max(last[i], k.traced_start_ns + k.work.duration_ns);
  }
  std::vector<std::int64_t> step(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (first[i] == kMax) continue;
    std::size_t next = i + 1;
    while (next < n && first[next] == kMax) ++next;
    step[i] = next < n ? first[next] - first[i] : last[i] - first[i];
  }
  return step;
}

std::vector<std::int32_t> steady_iterations(std::span<const std::int64_t> step_ns) {
  const std::size_t n = step_ns.size();
  std::size_t first = 0;
  if (n >= 2) {
    std::vector<std::int64_t> rest(step_ns.begin() + 1, step_ns.end());
    std::nth_element(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(rest.size() / 2),
                     rest.end());
    const double median = static_cast<double>(rest[rest.size() / 2]);
    while (first + 1 < n && static_cast<double>(step_ns[first]) > kWarmupStepRatio * median)
      ++first;
  }
  std::vector<std::int32_t> used;
  for (std::size_t i = first; i < n; ++i) used.push_back(static_cast<std::int32_t>(i));
  return used;
}

}  // namespace dvfsim
