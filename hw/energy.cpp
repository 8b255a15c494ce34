#include "hw/energy.h"

#include <algorithm>
#include <cmath>

namespace dvfsim::hw {
namespace {

constexpr double kSecondsPerNs = 1e-9;
constexpr double kJoulesPerMj = 1e-3;

bool changed(const std::vector<EnergySample>& s, size_t i) {
  return i > 0 && s[i].energy_mj && s[i - 1].energy_mj && *s[i].energy_mj != *s[i - 1].energy_mj;
}

double counter_j(const EnergySample& sample) {
  return static_cast<double>(*sample.energy_mj) * kJoulesPerMj;
}

// First index i > from with a counter change between i-1 and i; size() if none.
size_t next_change(const std::vector<EnergySample>& s, size_t from) {
  for (size_t i = from + 1; i < s.size(); ++i) {
    if (changed(s, i)) return i;
  }
  return s.size();
}

// Mean power of samples in [from_ns, to_ns]; the nearest sample if none lies inside.
double mean_power(const std::vector<EnergySample>& s, int64_t from_ns, int64_t to_ns) {
  double sum = 0;
  int count = 0;
  for (const auto& sample : s) {
    if (sample.t_ns >= from_ns && sample.t_ns <= to_ns) {
      sum += sample.power_w;
      ++count;
    }
  }
  if (count > 0) return sum / count;
  int64_t middle = from_ns + (to_ns - from_ns) / 2;
  const EnergySample* nearest = &s.front();
  for (const auto& sample : s) {
    if (std::llabs(sample.t_ns - middle) < std::llabs(nearest->t_ns - middle)) nearest = &sample;
  }
  return nearest->power_w;
}

double max_power(const std::vector<EnergySample>& s, int64_t from_ns, int64_t to_ns) {
  double result = 0;
  const EnergySample* before = nullptr;
  for (const auto& sample : s) {
    if (sample.t_ns < from_ns) before = &sample;
    if (sample.t_ns >= from_ns && sample.t_ns <= to_ns) result = std::max(result, sample.power_w);
  }
  // The reading held at from_ns counts too.
  if (before != nullptr) result = std::max(result, before->power_w);
  return result;
}

void add_tick_statistics(const std::vector<EnergySample>& s, EnergyEstimate& estimate) {
  std::vector<int64_t> tick_ns;
  for (size_t i = 1; i < s.size(); ++i) {
    if (changed(s, i)) tick_ns.push_back(s[i - 1].t_ns + (s[i].t_ns - s[i - 1].t_ns) / 2);
  }
  estimate.ticks_observed = static_cast<int>(tick_ns.size());
  if (tick_ns.size() < 2) return;
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < tick_ns.size(); ++i) gaps.push_back(tick_ns[i] - tick_ns[i - 1]);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<long>(gaps.size() / 2), gaps.end());
  estimate.tick_period_s = static_cast<double>(gaps[gaps.size() / 2]) * kSecondsPerNs;
}

EnergyEstimate integrate_power(const std::vector<EnergySample>& s, int64_t start_ns,
                               int64_t end_ns) {
  EnergyEstimate estimate;
  estimate.method = "power-integral";
  if (s.empty() || end_ns <= start_ns) return estimate;
  double energy_j = 0;
  double low_w = s.front().power_w;
  double high_w = s.front().power_w;
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t from = std::max(start_ns, i == 0 ? start_ns : s[i].t_ns);
    int64_t to = std::min(end_ns, i + 1 < s.size() ? s[i + 1].t_ns : end_ns);
    if (to <= from) continue;
    energy_j += s[i].power_w * static_cast<double>(to - from) * kSecondsPerNs;
    low_w = std::min(low_w, s[i].power_w);
    high_w = std::max(high_w, s[i].power_w);
  }
  double duration_s = static_cast<double>(end_ns - start_ns) * kSecondsPerNs;
  estimate.energy_j = energy_j;
  estimate.uncertainty_j = (high_w - low_w) * duration_s;
  estimate.lower_bound_j = energy_j - estimate.uncertainty_j;
  estimate.upper_bound_j = energy_j + estimate.uncertainty_j;
  return estimate;
}

}  // namespace

bool has_tick_after(const std::vector<EnergySample>& s, int64_t end_ns) {
  bool any_counter = false;
  for (size_t i = 0; i < s.size(); ++i) {
    any_counter = any_counter || s[i].energy_mj.has_value();
    if (changed(s, i) && s[i - 1].t_ns >= end_ns) return true;
  }
  return !any_counter;
}

EnergyEstimate estimate_energy(const std::vector<EnergySample>& s, int64_t start_ns,
                               int64_t end_ns) {
  bool any_counter = std::any_of(s.begin(), s.end(), [](const auto& x) { return x.energy_mj; });
  if (!any_counter) return integrate_power(s, start_ns, end_ns);

  EnergyEstimate estimate;
  estimate.method = "energy-counter";
  add_tick_statistics(s, estimate);
  // Sample indices around the window.
  size_t first_at_start = s.size();     // first sample with t >= start
  size_t last_before_start = s.size();  // last sample with t <= start
  size_t first_at_end = s.size();       // first sample with t >= end
  size_t last_before_end = s.size();    // last sample with t <= end
  for (size_t i = 0; i < s.size(); ++i) {
    if (!s[i].energy_mj) continue;
    if (s[i].t_ns >= start_ns && first_at_start == s.size()) first_at_start = i;
    if (s[i].t_ns <= start_ns) last_before_start = i;
    if (s[i].t_ns >= end_ns && first_at_end == s.size()) first_at_end = i;
    if (s[i].t_ns <= end_ns) last_before_end = i;
  }

  // Lower bound: the ticks wholly inside the window.
  double inner_j = 0;
  int64_t head_end_ns = start_ns;    // estimated first tick inside the window
  int64_t tail_start_ns = start_ns;  // estimated last tick inside the window
  // The longest the parts outside the inner ticks can be, from the bracketing samples.
  int64_t outside_max_ns = end_ns - start_ns;
  size_t first_tick = first_at_start < s.size() ? next_change(s, first_at_start) : s.size();
  if (first_tick < s.size() && last_before_end < s.size() && first_tick <= last_before_end) {
    inner_j = counter_j(s[last_before_end]) - counter_j(s[first_tick]);
    size_t last_tick = first_tick;
    for (size_t i = first_tick; i <= last_before_end; ++i) {
      if (changed(s, i)) last_tick = i;
    }
    head_end_ns = s[first_tick - 1].t_ns + (s[first_tick].t_ns - s[first_tick - 1].t_ns) / 2;
    tail_start_ns = s[last_tick - 1].t_ns + (s[last_tick].t_ns - s[last_tick - 1].t_ns) / 2;
    outside_max_ns = (s[first_tick].t_ns - start_ns) + (end_ns - s[last_tick - 1].t_ns);
  }
  head_end_ns = std::clamp(head_end_ns, start_ns, end_ns);
  tail_start_ns = std::clamp(tail_start_ns, head_end_ns, end_ns);

  // Edges from the power readings.
  double head_s = static_cast<double>(head_end_ns - start_ns) * kSecondsPerNs;
  double tail_s = static_cast<double>(end_ns - tail_start_ns) * kSecondsPerNs;
  double edges_j =
      mean_power(s, start_ns, head_end_ns) * head_s + mean_power(s, tail_start_ns, end_ns) * tail_s;

  // Upper bound: from the last tick before start to the first tick after end.
  size_t tick_after_end = first_at_end < s.size() ? next_change(s, first_at_end) : s.size();
  double lower_j = inner_j;
  double upper_j;
  if (last_before_start < s.size() && tick_after_end < s.size()) {
    upper_j = counter_j(s[tick_after_end]) - counter_j(s[last_before_start]);
  } else {
    // No counter reading beyond the window: bound the outside parts by the highest
    // power seen in the window over the longest they can be.
    upper_j = inner_j + max_power(s, start_ns, end_ns) *
                            static_cast<double>(std::min(outside_max_ns, end_ns - start_ns)) *
                            kSecondsPerNs;
  }
  upper_j = std::max(upper_j, lower_j);

  estimate.lower_bound_j = lower_j;
  estimate.upper_bound_j = upper_j;
  estimate.energy_j = std::clamp(inner_j + edges_j, lower_j, upper_j);
  estimate.uncertainty_j = std::max(estimate.energy_j - lower_j, upper_j - estimate.energy_j);
  return estimate;
}

}  // namespace dvfsim::hw
