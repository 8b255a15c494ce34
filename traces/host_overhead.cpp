#include "traces/host_overhead.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

#include "sim/error.h"

namespace dvfsim {

std::string HostOverhead::spec() const {
  return enabled ? fmt::format("{}", factor) : std::string("off");
}

HostOverhead parse_host_overhead(std::string_view value) {
  HostOverhead h;
  if (value == "off") {
    h.enabled = false;
    return h;
  }
  if (value == "auto") return h;
  double f = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), f);
  if (ec != std::errc() || ptr != value.data() + value.size() || !(f >= 1.0 && f <= 100.0))
    throw InputError(fmt::format(
        "--set host_overhead={}: expected 'off', 'auto' or a factor in [1, 100] (profiled over "
        "unprofiled host time)",
        value));
  h.factor = f;
  return h;
}

namespace {

// Blocked host intervals (inside synchronisation calls), merged and sorted,
// with the blocked time before each interval.
struct Blocked {
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  std::vector<std::int64_t> before;

  explicit Blocked(const Workload& w) {
    std::vector<std::pair<std::int64_t, std::int64_t>> raw;
    raw.reserve(w.syncs.size());
    for (const SyncPoint& s : w.syncs)
      if (s.traced_end_ns > s.host_begin_ns) raw.emplace_back(s.host_begin_ns, s.traced_end_ns);
    std::sort(raw.begin(), raw.end());
    for (const auto& r : raw) {
      if (!spans.empty() && r.first <= spans.back().second)
        spans.back().second = std::max(spans.back().second, r.second);
      else
        spans.push_back(r);
    }
    std::int64_t acc = 0;
    for (const auto& s : spans) {
      before.push_back(acc);
      acc += s.second - s.first;
    }
  }

  // Blocked time in (-inf, t].
  std::int64_t until(std::int64_t t) const {
    auto it = std::upper_bound(spans.begin(), spans.end(), t,
                               [](std::int64_t v, const auto& s) { return v < s.first; });
    if (it == spans.begin()) return 0;
    const auto i = static_cast<std::size_t>(it - spans.begin()) - 1;
    return before[i] + std::min(t, spans[i].second) - spans[i].first;
  }
};

// The host's pace per iteration. Each iteration owns a window of active
// host time from its first kernel's launch to the next iteration's; its pace
// is compared over its launches alone (first to last launch), so that the
// last iteration, which has no next one, is measured like the others.
struct IterationPace {
  std::vector<std::int64_t> start;  // active time at each window's start
  std::int64_t total = 0;           // active time at the end of the last window
  std::vector<double> scale;        // extra factor per window (1, or < 1 for warm-up)
  std::int32_t warm = 0;            // leading windows slower than the median
  double ratio = 1.0;               // span of window 0 over the median span
  std::int64_t length(std::size_t i) const {
    return (i + 1 < start.size() ? start[i + 1] : total) - start[i];
  }
};

template <typename ActiveAt>
IterationPace iteration_pace(const Workload& w, ActiveAt active_at, std::int64_t total) {
  IterationPace p;
  p.total = total;
  p.start.push_back(0);
  p.scale.push_back(1.0);
  const auto n = static_cast<std::size_t>(std::max(w.iterations, 0));
  if (n < 2 || w.iteration_begin.size() != n + 1) return p;
  // Only steps of one structure are compared: the same number of kernels.
  const std::uint32_t count = w.iteration_begin[1] - w.iteration_begin[0];
  for (std::size_t i = 0; i < n; ++i)
    if (count == 0 || w.iteration_begin[i + 1] - w.iteration_begin[i] != count) return p;
  std::vector<double> span(n);
  p.start.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t first = active_at(w.kernels[w.iteration_begin[i]].host_launch_ns);
    if (i > 0) p.start[i] = first;
    span[i] = static_cast<double>(
        active_at(w.kernels[w.iteration_begin[i + 1] - 1].host_launch_ns) - first);
  }
  p.scale.assign(n, 1.0);
  std::vector<double> rest(span.begin() + 1, span.end());
  std::nth_element(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(rest.size() / 2),
                   rest.end());
  const double median = rest[rest.size() / 2];
  if (!(median > 0)) return p;
  while (static_cast<std::size_t>(p.warm) + 1 < n &&
         span[static_cast<std::size_t>(p.warm)] > median) {
    p.scale[static_cast<std::size_t>(p.warm)] = median / span[static_cast<std::size_t>(p.warm)];
    ++p.warm;
  }
  if (p.warm > 0) p.ratio = span[0] / median;
  return p;
}

}  // namespace

HostOverheadStats remove_host_overhead(Workload& w, const HostOverhead& h) {
  HostOverheadStats st;
  if (!h.enabled || w.kernels.empty()) return st;
  const Blocked blocked(w);
  std::int64_t origin = w.kernels.front().host_launch_ns;
  std::int64_t last = w.kernels.back().host_launch_ns;
  for (const SyncPoint& s : w.syncs) {
    origin = std::min(origin, s.host_begin_ns);
    last = std::max(last, s.traced_end_ns);
  }
  const std::int64_t b0 = blocked.until(origin);
  auto active_at = [&](std::int64_t t) { return t - origin - (blocked.until(t) - b0); };
  st.blocked_ns = blocked.until(last) - b0;
  st.active_ns_before = last - origin - st.blocked_ns;

  // Host windows of the iterations, in active time: start[i] .. start[i + 1].
  const IterationPace pace = iteration_pace(w, active_at, st.active_ns_before);
  // Active time divided by the factor, the warm-up windows' further by
  // their own; mapped[i] is the corrected active time at start[i].
  std::vector<double> scale(pace.scale);
  for (double& s : scale) s /= h.factor;
  std::vector<double> mapped(pace.start.size(), 0.0);
  for (std::size_t i = 1; i < pace.start.size(); ++i)
    mapped[i] = mapped[i - 1] + static_cast<double>(pace.length(i - 1)) * scale[i - 1];
  auto map = [&](std::int64_t t) {
    const std::int64_t b = blocked.until(t) - b0;
    const std::int64_t active = t - origin - b;
    auto it = std::upper_bound(pace.start.begin(), pace.start.end(), active);
    const auto i =
        it == pace.start.begin() ? 0 : static_cast<std::size_t>(it - pace.start.begin()) - 1;
    const double a = mapped[i] + static_cast<double>(active - pace.start[i]) * scale[i];
    return origin + b + static_cast<std::int64_t>(std::llround(a));
  };
  for (Kernel& k : w.kernels) k.host_launch_ns = map(k.host_launch_ns);
  for (SyncPoint& s : w.syncs) {
    s.host_begin_ns = map(s.host_begin_ns);
    s.traced_end_ns = map(s.traced_end_ns);
  }
  st.active_ns_after = map(last) - origin - st.blocked_ns;
  st.warmup_iterations = pace.warm;
  if (pace.warm > 0) {
    st.warmup_ratio = pace.ratio;
    w.notes.push_back(fmt::format(
        "host-overhead correction: the host of iteration{} 0{} ran {:.2f}x as long as the median "
        "of the later iterations (profiler warm-up) and was brought to their pace before the "
        "division by {}",
        pace.warm > 1 ? "s" : "", pace.warm > 1 ? fmt::format("..{}", pace.warm - 1) : "",
        st.warmup_ratio, h.factor));
  }
  return st;
}

}  // namespace dvfsim
