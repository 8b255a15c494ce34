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
  const double inv = 1.0 / h.factor;
  auto map = [&](std::int64_t t) {
    const std::int64_t b = blocked.until(t) - b0;
    const std::int64_t active = t - origin - b;
    return origin + b + static_cast<std::int64_t>(std::llround(static_cast<double>(active) * inv));
  };
  st.blocked_ns = blocked.until(last) - b0;
  st.active_ns_before = last - origin - st.blocked_ns;
  for (Kernel& k : w.kernels) k.host_launch_ns = map(k.host_launch_ns);
  for (SyncPoint& s : w.syncs) {
    s.host_begin_ns = map(s.host_begin_ns);
    s.traced_end_ns = map(s.traced_end_ns);
  }
  st.active_ns_after = map(last) - origin - st.blocked_ns;
  return st;
}

}  // namespace dvfsim
