#include "sim/gpu_timeline.h"

#include <algorithm>
#include <cmath>

namespace dvfsim {

namespace {

// Rounds of the firmware warm-up: the cap the governor rule gives for the
// run's average activity changes the activity it sees (the kernels run at the
// cap), so the rule is iterated; it settles in two or three rounds on every
// shipped device, eight bound the loop on a rule that oscillates.
constexpr int kWarmUpRounds = 8;

// Inverse of the standard normal CDF (Acklam's rational approximation,
// relative error < 1.2e-9), for lognormal quantiles.
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  p = std::clamp(p, 1e-12, 1.0 - 1e-12);
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - 0.02425) return -normal_quantile(1 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double quantile_latency_ns(const LatencyDistribution& d, double q) {
  switch (d.kind) {
    case LatencyDistribution::Kind::fixed:
      return d.value_us * 1e3;
    case LatencyDistribution::Kind::uniform:
      return (d.min_us + std::clamp(q, 0.0, 1.0) * (d.max_us - d.min_us)) * 1e3;
    case LatencyDistribution::Kind::lognormal: {
      double us = d.value_us * std::exp(d.sigma * normal_quantile(q));
      if (d.max_us > 0) us = std::clamp(us, d.min_us, d.max_us);
      return us * 1e3;
    }
  }
  return 0.0;
}

double mean_latency_ns(const LatencyDistribution& d) {
  switch (d.kind) {
    case LatencyDistribution::Kind::fixed:
      return d.value_us * 1e3;
    case LatencyDistribution::Kind::uniform:
      return 0.5 * (d.min_us + d.max_us) * 1e3;
    case LatencyDistribution::Kind::lognormal:
      return d.value_us * std::exp(0.5 * d.sigma * d.sigma) * 1e3;
  }
  return 0.0;
}

}  // namespace

double draw_latency_ns(const LatencyDistribution& d, Rng& rng) {
  double us = d.value_us;
  switch (d.kind) {
    case LatencyDistribution::Kind::fixed:
      break;
    case LatencyDistribution::Kind::uniform:
      us = d.min_us + (d.max_us - d.min_us) * rng.uniform();
      break;
    case LatencyDistribution::Kind::lognormal:
      us = d.value_us * std::exp(d.sigma * rng.normal());
      if (d.max_us > 0) us = std::clamp(us, d.min_us, d.max_us);
      break;
  }
  return std::max(0.0, us) * 1e3;
}

GpuTimeline::GpuTimeline(const GpuModel& m, const TimelineConfig& cfg)
    : m_(m),
      lat_form_(m.latency ? m.latency->inline_form() : nullptr),
      pow_form_(m.power ? m.power->inline_form() : nullptr),
      cfg_(cfg),
      rng_(cfg.seed),
      capping_(m.governor != nullptr) {
  const Device& d = *m_.device;
  period_ns_ = capping_ ? std::max<std::int64_t>(1, m_.governor->period_ns()) : 0;
  core_.landed_mhz = d.default_core_mhz;
  memory_.landed_mhz = d.default_memory_mhz;
  wanted_ = default_clocks(d);
  cap_mhz_ = d.max_core_mhz();
  exact_time_ns_ = (std::int64_t{1} << 53) /
                   std::max<std::int64_t>(1, std::max(d.max_core_mhz(), d.max_memory_mhz()));
  update_effective();
}

double GpuTimeline::mean_core_switch_ns() const {
  return mean_latency_ns(cfg_.core_switch);
}
double GpuTimeline::mean_memory_switch_ns() const {
  return mean_latency_ns(cfg_.memory_switch);
}
double GpuTimeline::core_switch_quantile_ns(double q) const {
  return quantile_latency_ns(cfg_.core_switch, q);
}
double GpuTimeline::memory_switch_quantile_ns(double q) const {
  return quantile_latency_ns(cfg_.memory_switch, q);
}
double GpuTimeline::expected_memory_stall_ns() const {
  const auto stall = static_cast<double>(cfg_.memory_stall_ns);
  return cfg_.stall_within_switch ? std::min(stall, mean_memory_switch_ns()) : stall;
}

void GpuTimeline::set_clocks_now(std::int32_t core_mhz, std::int32_t memory_mhz) {
  wanted_ = make_clocks(*m_.device, core_mhz, memory_mhz);
  core_.landed_mhz = core_mhz;
  memory_.landed_mhz = memory_mhz;
  core_.pending_land_ns = memory_.pending_land_ns = kNever;
  update_next_event();
  update_effective();
}

void GpuTimeline::land_now(Domain& d) {
  if (!d.pending()) return;
  d.landed_mhz = d.pending_mhz;
  d.pending_land_ns = kNever;
}

void GpuTimeline::land_pending_now() {
  land_now(core_);
  land_now(memory_);
  update_next_event();
  update_effective();
}

void GpuTimeline::warm_firmware(const std::vector<KernelCost>& costs,
                                const std::vector<double>& gap_after_ns, WarmFirmwareCache* cache) {
  if (!capping_) return;
  if (cache) {
    const std::int32_t start_cap = cap_mhz_;
    cap_mhz_ = cache->cap(core_.landed_mhz, memory_.landed_mhz, start_cap, [&] {
      warm_firmware(costs, gap_after_ns, nullptr);
      const std::int32_t c = cap_mhz_;
      cap_mhz_ = start_cap;
      return c;
    });
    update_effective();
    return;
  }
  const Device& dev = *m_.device;
  const LatencyModel& lat = *m_.latency;
  const std::size_t n = costs.size();
  double gaps_ns = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) gaps_ns += gap_after_ns[i];
  for (int round = 0; round < kWarmUpRounds; ++round) {
    const Clocks c = make_clocks(dev, std::min(core_.landed_mhz, cap_mhz_), memory_.landed_mhz);
    Utilisation acc;
    double kernels_ns = 0;
    if (lat_form_) {
      const RooflineForm::At at = lat_form_->at(c);
      for (std::size_t i = 0; i < n; ++i) {
        const double d = lat_form_->duration_ns(costs[i], at);
        acc.add(lat_form_->utilisation(costs[i], at, d), d);
        kernels_ns += d;
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const double d = lat.duration_ns(costs[i], c);
        acc.add(lat.utilisation(costs[i], c, d), d);
        kernels_ns += d;
      }
    }
    const double total = kernels_ns + gaps_ns;
    if (total <= 0) break;
    const std::int32_t cap = m_.governor->cap_core_mhz(acc.per(total), c, dev.max_core_mhz());
    if (cap == cap_mhz_) break;
    cap_mhz_ = cap;
  }
  update_effective();
}

bool GpuTimeline::warm_firmware_cached(WarmFirmwareCache* cache) {
  if (!capping_) return true;
  if (!cache) return false;
  const std::int32_t cap = cache->find(core_.landed_mhz, memory_.landed_mhz, cap_mhz_);
  if (cap < 0) return false;
  cap_mhz_ = cap;
  update_effective();
  return true;
}

void GpuTimeline::set_cap(std::int32_t cap_mhz) {
  cap_mhz_ = cap_mhz;
  update_effective();
}

void GpuTimeline::start(std::int64_t t0, std::int64_t first_tick_ns) {
  now_ = t0;
  next_tick_ns_ = capping_ ? (first_tick_ns >= 0 ? first_tick_ns : t0 + period_ns_) : kNever;
  update_next_event();
}

void GpuTimeline::request(std::int32_t core_mhz, std::int32_t memory_mhz) {
  wanted_ = make_clocks(*m_.device, core_mhz, memory_mhz);
  retarget(core_, core_mhz, cfg_.core_switch);
  retarget(memory_, memory_mhz, cfg_.memory_switch);
}

void GpuTimeline::retarget(Domain& d, std::int32_t target_mhz, const LatencyDistribution& lat) {
  if (d.pending()) {
    if (d.pending_mhz != target_mhz) {
      d.pending_mhz = target_mhz;
      ++coalesced_;
    }
    return;
  }
  if (d.landed_mhz == target_mhz) return;
  d.pending_mhz = target_mhz;
  d.pending_request_ns = now_;
  d.pending_land_ns = now_ + static_cast<std::int64_t>(std::llround(draw_latency_ns(lat, rng_)));
  update_next_event();
}

void GpuTimeline::set_wakeup(std::int64_t at_ns, TimelineListener* l) {
  wakeup_ns_ = std::max(at_ns, now_);
  listener_ = l;
  update_next_event();
}

void GpuTimeline::update_effective() {
  const std::int32_t core = capping_ ? std::min(core_.landed_mhz, cap_mhz_) : core_.landed_mhz;
  const Clocks c = make_clocks(*m_.device, core, memory_.landed_mhz);
  if (!(c == eff_)) ++clock_epoch_;
  eff_ = c;
  if (lat_form_) eff_lat_ = lat_form_->at(c);
  if (pow_form_) eff_pow_ = pow_form_->at(c);
  dirty_ = true;
}

void GpuTimeline::fire_events() {
  for (;;) {
    // Every event handler (and a listener's request) keeps next_event_ns_.
    update_next_event();
    if (next_event_ns_ > now_) return;
    if (stall_until_ns_ <= now_) {
      stall_until_ns_ = kNever;
    } else if (core_.pending_land_ns <= now_) {
      land(core_, SwitchRecord::Domain::core);
    } else if (memory_.pending_land_ns <= now_) {
      land(memory_, SwitchRecord::Domain::memory);
    } else if (next_tick_ns_ <= now_) {
      governor_tick();
    } else if (wakeup_ns_ <= now_) {
      wakeup_ns_ = kNever;
      if (listener_) listener_->on_wakeup();
    }
  }
}

void GpuTimeline::land(Domain& d, SwitchRecord::Domain which) {
  const std::int64_t land_ns = d.pending_land_ns;
  d.pending_land_ns = kNever;
  if (d.pending_mhz == d.landed_mhz) return;  // retargeted back: nothing changes
  SwitchRecord r;
  r.domain = which;
  r.request_ns = d.pending_request_ns;
  r.land_ns = land_ns;
  r.from_mhz = d.landed_mhz;
  r.to_mhz = d.pending_mhz;
  d.landed_mhz = d.pending_mhz;
  if (which == SwitchRecord::Domain::memory) {
    ++memory_switches_;
    if (cfg_.memory_stall_ns > 0) {
      // The stall is part of the transition: it cannot outlast the switch.
      r.stall_ns = cfg_.stall_within_switch ? std::min(cfg_.memory_stall_ns, land_ns - r.request_ns)
                                            : cfg_.memory_stall_ns;
      stall_until_ns_ = now_ + r.stall_ns;
      stall_total_ns_ += r.stall_ns;
    }
  }
  ++clock_switches_;
  if (cfg_.record_switches) switches_.push_back(r);
  update_effective();
}

void GpuTimeline::governor_tick() {
  const Utilisation avg = activity_.per(static_cast<double>(period_ns_));
  activity_ = {};
  next_tick_ns_ += period_ns_;
  const std::int32_t cap = m_.governor->cap_core_mhz(avg, eff_, cap_mhz_);
  if (cap == cap_mhz_) return;
  if (cfg_.record_switches) {
    SwitchRecord r;
    r.domain = SwitchRecord::Domain::power_cap;
    r.request_ns = r.land_ns = now_;
    r.from_mhz = cap_mhz_;
    r.to_mhz = cap;
    switches_.push_back(r);
  }
  cap_mhz_ = cap;
  update_effective();
}

void GpuTimeline::evaluate_ahead(const std::vector<KernelCost>& costs, std::size_t i) {
  Ahead& a = ahead_;
  if (a.costs == &costs && i >= a.begin && i < a.end)  // the clocks held for i - begin kernels
    a.batch = std::max<std::size_t>(1, i - a.begin);
  else if (a.costs == &costs && i == a.end)  // they held for the whole batch
    a.batch = std::min(kMaxAhead, 2 * a.batch);
  a.costs = &costs;
  a.begin = i;
  a.end = std::min(costs.size(), i + a.batch);
  a.clocks = eff_;
  if (a.at.size() < kMaxAhead) a.at.resize(kMaxAhead);
  // eval(costs[j], true) through the forms, which run_next's callers have:
  // the forms and their terms at the clocks in locals (the rows written do
  // not alias them).
  const RooflineForm& lat = *lat_form_;
  const CmosForm& pow = *pow_form_;
  const RooflineForm::At lat_at = eff_lat_;
  const CmosForm::At pow_at = eff_pow_;
  const KernelCost* __restrict k = costs.data() + i;
  KernelAtClocks* __restrict out = a.at.data();
  const std::size_t n = a.end - i;
  for (std::size_t j = 0; j < n; ++j) out[j] = kernel_at(lat, lat_at, pow, pow_at, k[j]);
}

void GpuTimeline::set_idle_power(std::int64_t key) {
  idle_power_w_ = board_power(Utilisation{});
  idle_clocks_key_ = key;
}

}  // namespace dvfsim
