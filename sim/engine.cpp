#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/error.h"
#include "sim/rng.h"

namespace dvfsim {

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

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

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

// A clock domain's switch state: the clock in force and at most one pending
// request, which a newer request retargets (DESIGN.md semantics 5).
struct Domain {
  std::int32_t landed_mhz = 0;
  std::int32_t pending_mhz = 0;
  std::int64_t pending_land_ns = kNever;
  std::int64_t pending_request_ns = 0;
  bool pending() const { return pending_land_ns != kNever; }
};

class Replay final : public PolicyContext {
 public:
  Replay(const EngineInputs& in, Policy& policy, const EngineConfig& cfg)
      : in_(in), w_(*in.workload), dev_(*in.device), policy_(policy), cfg_(cfg), rng_(cfg.seed) {
    if (cfg.switch_latency_override_us >= 0) {
      LatencyDistribution fixed;
      fixed.value_us = cfg.switch_latency_override_us;
      core_latency_ = memory_latency_ = fixed;
    } else {
      core_latency_ = dev_.core_switch;
      memory_latency_ = dev_.memory_switch;
    }
    origin_ns_ = w_.kernels.front().host_launch_ns;
    res_.policy = in.policy_name;
    const double stall_us = cfg.memory_stall_override_us >= 0 ? cfg.memory_stall_override_us
                                                              : dev_.memory_switch_stall_us;
    stall_ns_ = static_cast<std::int64_t>(std::llround(stall_us * 1e3));
  }

  RunResult run() {
    const auto n = w_.kernels.size();
    res_.kernels.resize(n);
    res_.iterations = w_.iterations;
    res_.iteration_time_ns.assign(static_cast<std::size_t>(w_.iterations), 0);
    res_.iteration_energy_j.assign(static_cast<std::size_t>(w_.iterations), 0.0);
    if (cfg_.record_timeline) res_.segments.reserve(2 * n + 64);

    core_.landed_mhz = dev_.default_core_mhz;
    memory_.landed_mhz = dev_.default_memory_mhz;
    wanted_ = make_clocks(dev_, dev_.default_core_mhz, dev_.default_memory_mhz);
    cap_mhz_ = dev_.max_core_mhz();
    now_ = 0;
    policy_.begin(*this);
    // Requests made in begin() land before the replay: the GPU was set up
    // before the traced work started.
    land_immediately(core_);
    land_immediately(memory_);
    if (cfg_.power_cap && cfg_.warm_firmware) warm_up_cap();
    update_effective();

    const std::int64_t first_ready = w_.kernels.front().host_launch_ns - origin_ns_;
    now_ = first_ready;
    res_.begin_ns = first_ready;
    next_tick_ns_ = cfg_.power_cap ? first_ready + in_.governor->period_ns() : kNever;

    std::size_t next_sync = 0;
    std::int64_t gpu_free = first_ready;
    for (std::uint32_t i = 0; i < n; ++i) {
      const Kernel& k = w_.kernels[i];
      while (next_sync < w_.syncs.size() && w_.syncs[next_sync].host_begin_ns <= k.host_launch_ns)
        apply_sync(w_.syncs[next_sync++]);
      const std::int64_t ready = k.host_launch_ns - origin_ns_ + host_delay_ns_;
      const std::int64_t start = std::max(ready, gpu_free);
      if (i == 0) res_.begin_ns = start;
      advance_idle(start);
      current_iteration_ = k.iteration;
      policy_.on_kernel_start(*this, i);
      fire_due_events();
      run_kernel(i);
      gpu_free = now_;
      policy_.on_kernel_end(*this, i);
      fire_due_events();
    }
    while (next_sync < w_.syncs.size()) apply_sync(w_.syncs[next_sync++]);
    res_.end_ns = gpu_free;
    res_.host_delay_ns = host_delay_ns_;
    return std::move(res_);
  }

  // PolicyContext
  std::int64_t now_ns() const override { return now_; }
  void request(std::int32_t core_mhz, std::int32_t memory_mhz) override {
    const std::string why = dev_.why_unsupported(core_mhz, memory_mhz);
    if (!why.empty()) throw InputError(fmt::format("policy {}: {}", res_.policy, why));
    wanted_ = make_clocks(dev_, core_mhz, memory_mhz);
    retarget(core_, core_mhz, core_latency_);
    retarget(memory_, memory_mhz, memory_latency_);
  }
  void set_timer(std::int64_t at_ns) override { timer_ns_ = std::max(at_ns, now_); }
  Clocks effective() const override { return eff_; }
  Clocks wanted() const override { return wanted_; }
  double expected_core_switch_ns() const override { return mean_latency_ns(core_latency_); }
  double expected_memory_switch_ns() const override { return mean_latency_ns(memory_latency_); }
  double core_switch_quantile_ns(double q) const override {
    return quantile_latency_ns(core_latency_, q);
  }
  double memory_switch_quantile_ns(double q) const override {
    return quantile_latency_ns(memory_latency_, q);
  }
  double expected_memory_stall_ns() const override {
    return std::min(static_cast<double>(stall_ns_), mean_latency_ns(memory_latency_));
  }
  const Device& device() const override { return dev_; }
  const Workload& workload() const override { return w_; }
  const std::vector<KernelCost>& costs() const override { return *in_.costs; }
  const LatencyModel& latency() const override { return *in_.latency; }
  const PowerModel& power() const override { return *in_.power; }
  const RunResult* baseline() const override { return in_.baseline; }

  RunResult& result() { return res_; }

 private:
  void retarget(Domain& d, std::int32_t target_mhz, const LatencyDistribution& lat) {
    if (d.pending()) {
      if (d.pending_mhz != target_mhz) {
        d.pending_mhz = target_mhz;
        ++res_.coalesced_requests;
      }
      return;
    }
    if (d.landed_mhz == target_mhz) return;
    d.pending_mhz = target_mhz;
    d.pending_request_ns = now_;
    d.pending_land_ns = now_ + static_cast<std::int64_t>(std::llround(draw_latency_ns(lat, rng_)));
  }

  static void land_immediately(Domain& d) {
    if (!d.pending()) return;
    d.landed_mhz = d.pending_mhz;
    d.pending_land_ns = kNever;
  }

  // Sets the firmware cap to its steady state for the whole workload at the
  // policy's first clocks, as after warm-up steps on the real GPU.
  void warm_up_cap() {
    for (int round = 0; round < 8; ++round) {
      const Clocks c = make_clocks(dev_, std::min(core_.landed_mhz, cap_mhz_), memory_.landed_mhz);
      Utilisation acc;  // acc.busy: kernel time (a running kernel has busy 1)
      double gaps_ns = 0;
      for (std::size_t i = 0; i < w_.kernels.size(); ++i) {
        const KernelCost& kc = (*in_.costs)[i];
        const double d = in_.latency->duration_ns(kc, c);
        const Utilisation u = in_.latency->utilisation(kc, c, d);
        acc.add(u, d);
        if (i + 1 < w_.kernels.size()) {
          const Kernel& a = w_.kernels[i];
          const Kernel& b = w_.kernels[i + 1];
          gaps_ns += static_cast<double>(std::max<std::int64_t>(
              0, b.traced_start_ns - a.traced_start_ns - a.work.duration_ns));
        }
      }
      const double total = acc.busy + gaps_ns;
      if (total <= 0) return;
      const Utilisation avg = acc.per(total);
      const std::int32_t cap = in_.governor->cap_core_mhz(avg, c, dev_.max_core_mhz());
      if (cap == cap_mhz_) return;
      cap_mhz_ = cap;
    }
  }

  void update_effective() {
    const std::int32_t core =
        cfg_.power_cap ? std::min(core_.landed_mhz, cap_mhz_) : core_.landed_mhz;
    eff_ = make_clocks(dev_, core, memory_.landed_mhz);
    kernel_dirty_ = true;
  }

  std::int64_t next_event_ns() const {
    return std::min({core_.pending_land_ns, memory_.pending_land_ns, next_tick_ns_, timer_ns_,
                     stall_until_ns_});
  }

  // Processes every event due at or before now, in time order.
  void fire_due_events() {
    for (;;) {
      const std::int64_t t = next_event_ns();
      if (t > now_) return;
      if (stall_until_ns_ <= now_) {
        stall_until_ns_ = kNever;
      } else if (core_.pending_land_ns <= now_) {
        land(core_, SwitchRecord::Domain::core);
      } else if (memory_.pending_land_ns <= now_) {
        land(memory_, SwitchRecord::Domain::memory);
      } else if (next_tick_ns_ <= now_) {
        governor_tick();
      } else if (timer_ns_ <= now_) {
        timer_ns_ = kNever;
        policy_.on_timer(*this);
      }
    }
  }

  void land(Domain& d, SwitchRecord::Domain which) {
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
    if (which == SwitchRecord::Domain::memory && stall_ns_ > 0) {
      // The stall is part of the transition: it cannot outlast the switch.
      r.stall_ns = std::min(stall_ns_, land_ns - r.request_ns);
      stall_until_ns_ = now_ + r.stall_ns;
      res_.switch_stall_ns += r.stall_ns;
    }
    ++res_.clock_switches;
    res_.switches.push_back(r);
    update_effective();
  }

  void governor_tick() {
    const double period = static_cast<double>(in_.governor->period_ns());
    const Utilisation avg = activity_.per(period);
    activity_ = {};
    next_tick_ns_ += in_.governor->period_ns();
    const std::int32_t cap = in_.governor->cap_core_mhz(avg, eff_, cap_mhz_);
    if (cap == cap_mhz_) return;
    SwitchRecord r;
    r.domain = SwitchRecord::Domain::power_cap;
    r.request_ns = r.land_ns = now_;
    r.from_mhz = cap_mhz_;
    r.to_mhz = cap;
    res_.switches.push_back(r);
    cap_mhz_ = cap;
    update_effective();
  }

  // Integrates [now, t) at constant state and moves now to t.
  void integrate(std::int64_t t, const Utilisation& u, double power_w, std::int32_t kernel) {
    const std::int64_t dt = t - now_;
    if (dt <= 0) return;
    const double dts = static_cast<double>(dt);
    const double e = power_w * dts * 1e-9;
    res_.energy_j += e;
    res_.iteration_energy_j[static_cast<std::size_t>(current_iteration_)] += e;
    activity_.add(u, dts);
    if (core_.landed_mhz != wanted_.core_mhz || memory_.landed_mhz != wanted_.memory_mhz)
      res_.off_target_ns += dt;
    if (cfg_.power_cap && cap_mhz_ < core_.landed_mhz) res_.power_capped_ns += dt;
    if (cfg_.record_timeline) {
      if (!res_.segments.empty()) {
        Segment& last = res_.segments.back();
        if (last.kernel == kernel && last.core_mhz == eff_.core_mhz &&
            last.memory_mhz == eff_.memory_mhz && last.power_w == power_w &&
            last.start_ns + last.duration_ns == now_) {
          last.duration_ns += dt;
          now_ = t;
          return;
        }
      }
      res_.segments.push_back({now_, dt, eff_.core_mhz, eff_.memory_mhz, power_w, kernel});
    }
    now_ = t;
  }

  double idle_power() {
    if (idle_dirty_clocks_ != eff_.core_mhz * 100000 + eff_.memory_mhz) {
      idle_power_w_ = in_.power->power_w(Utilisation{}, eff_);
      idle_dirty_clocks_ = eff_.core_mhz * 100000 + eff_.memory_mhz;
    }
    return idle_power_w_;
  }

  // The GPU waits (no kernel) until t, processing events on the way.
  void advance_idle(std::int64_t t) {
    while (now_ < t) {
      const std::int64_t stop = std::min(t, next_event_ns());
      integrate(stop, Utilisation{}, idle_power(), stop_kernel_id(Segment::kIdle));
      fire_due_events();
    }
    fire_due_events();
  }

  std::int32_t stop_kernel_id(std::int32_t id) const {
    return stall_until_ns_ != kNever && stall_until_ns_ > now_ ? Segment::kStall : id;
  }

  void run_kernel(std::uint32_t i) {
    const KernelCost& kc = (*in_.costs)[i];
    KernelResult& out = res_.kernels[i];
    out.start_ns = now_;
    out.requested_core_mhz = wanted_.core_mhz;
    out.requested_memory_mhz = wanted_.memory_mhz;
    const double energy_before = res_.energy_j;
    double core_time = 0, memory_time = 0;
    double remaining = 1.0;  // fraction of the kernel's work left
    double full_ns = 0;
    Utilisation u;
    double p = 0;
    kernel_dirty_ = true;
    for (;;) {
      const bool stalled = stall_until_ns_ != kNever && stall_until_ns_ > now_;
      if (kernel_dirty_) {
        full_ns = std::max(1.0, in_.latency->duration_ns(kc, eff_));
        u = in_.latency->utilisation(kc, eff_, full_ns);
        p = in_.power->power_w(u, eff_);
        kernel_dirty_ = false;
      }
      const std::int64_t ev = next_event_ns();
      const std::int64_t t_start = now_;
      if (stalled) {
        integrate(std::min(ev, stall_until_ns_), Utilisation{}, idle_power(), Segment::kStall);
      } else {
        const std::int64_t end =
            now_ +
            std::max<std::int64_t>(0, static_cast<std::int64_t>(std::llround(remaining * full_ns)));
        if (end <= ev) {
          integrate(end, u, p, static_cast<std::int32_t>(i));
          core_time += static_cast<double>(end - t_start) * eff_.core_mhz;
          memory_time += static_cast<double>(end - t_start) * eff_.memory_mhz;
          break;
        }
        integrate(ev, u, p, static_cast<std::int32_t>(i));
        remaining -= static_cast<double>(ev - t_start) / full_ns;
      }
      core_time += static_cast<double>(now_ - t_start) * eff_.core_mhz;
      memory_time += static_cast<double>(now_ - t_start) * eff_.memory_mhz;
      fire_due_events();
    }
    out.duration_ns = now_ - out.start_ns;
    const double d = static_cast<double>(std::max<std::int64_t>(1, out.duration_ns));
    out.core_mhz = out.duration_ns > 0 ? core_time / d : eff_.core_mhz;
    out.memory_mhz = out.duration_ns > 0 ? memory_time / d : eff_.memory_mhz;
    out.energy_j = res_.energy_j - energy_before;
  }

  void apply_sync(const SyncPoint& s) {
    // When the simulated GPU finished the work the host waited for.
    std::int64_t f_sim = 0, f_traced = 0;
    for (std::uint32_t j = s.waits_until_kernel; j-- > 0;) {
      const Kernel& k = w_.kernels[j];
      if (s.stream >= 0 && k.stream != s.stream) continue;
      f_sim = res_.kernels[j].start_ns + res_.kernels[j].duration_ns;
      f_traced = k.traced_start_ns + k.work.duration_ns - origin_ns_;
      break;
    }
    const std::int64_t begin = s.host_begin_ns - origin_ns_;
    const std::int64_t end = s.traced_end_ns - origin_ns_;
    const std::int64_t lag = std::max<std::int64_t>(0, end - std::max(begin, f_traced));
    const std::int64_t resume = std::max(begin + host_delay_ns_, f_sim) + lag;
    host_delay_ns_ = resume - end;
  }

  const EngineInputs& in_;
  const Workload& w_;
  const Device& dev_;
  Policy& policy_;
  const EngineConfig& cfg_;
  Rng rng_;
  LatencyDistribution core_latency_, memory_latency_;
  std::int64_t origin_ns_ = 0;
  std::int64_t stall_ns_ = 0;  // memory-switch stall, before the per-switch cap

  RunResult res_;
  std::int64_t now_ = 0;
  Domain core_, memory_;
  Clocks wanted_, eff_;
  std::int32_t cap_mhz_ = 0;
  std::int64_t next_tick_ns_ = kNever;
  std::int64_t timer_ns_ = kNever;
  std::int64_t stall_until_ns_ = kNever;
  Utilisation activity_;  // integrated u·dt since the last governor tick
  std::int64_t host_delay_ns_ = 0;
  std::int32_t current_iteration_ = 0;
  bool kernel_dirty_ = true;
  double idle_power_w_ = 0;
  std::int64_t idle_dirty_clocks_ = -1;
};

}  // namespace

RunResult replay(const EngineInputs& in, Policy& policy, const EngineConfig& cfg) {
  if (!in.workload || !in.device || !in.latency || !in.power || !in.costs ||
      (cfg.power_cap && !in.governor))
    throw std::logic_error("replay: missing input");
  if (in.workload->kernels.empty()) throw InputError("replay: the workload has no kernels");
  Replay r(in, policy, cfg);
  RunResult res = r.run();
  // Iteration times: from each iteration's first kernel start to the next's
  // (the last one to the end of its last kernel).
  const auto& w = *in.workload;
  for (std::int32_t it = 0; it < w.iterations; ++it) {
    const auto b = w.iteration_begin[static_cast<std::size_t>(it)];
    const auto e = w.iteration_begin[static_cast<std::size_t>(it) + 1];
    if (b == e) continue;
    const std::int64_t start = res.kernels[b].start_ns;
    const std::int64_t stop = e < w.kernels.size()
                                  ? res.kernels[e].start_ns
                                  : res.kernels[e - 1].start_ns + res.kernels[e - 1].duration_ns;
    res.iteration_time_ns[static_cast<std::size_t>(it)] = stop - start;
  }
  return res;
}

}  // namespace dvfsim
