#pragma once
// The one model of a simulated GPU over time (docs/design.md, "Semantics"):
// two clock domains with their switch model (a request lands after a drawn
// latency; a newer request retargets a pending one), the GPU stall a memory
// switch causes, the firmware's power cap re-evaluated every governor period
// from the activity of the last one, the warm firmware a run starts with, the
// kernels running on it (one or several at once) and exact energy integration
// over piecewise-constant power.
//
// The replay engine (sim/engine.cpp) drives it from the trace and a policy;
// the planning policies drive the same type with a planned clock sequence to
// predict what the engine will do (emulate(), policies/). Nothing outside this
// file integrates power, ticks the governor or charges a stall.
//
// Concurrent kernels (docs/design.md, "Concurrent streams"): each runs at the
// rate it would run alone at the current clocks (a traced duration was
// measured under the overlap the trace shows, so it already holds the
// contention); their utilisations add and saturate at 1 per unit (busy,
// compute, memory, SIMT), and the board power is the power model's at the
// combined utilisation, so static and idle power are counted once. Each
// running kernel is credited an equal share of the energy of the time it
// shares with others.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "sim/model_forms.h"
#include "sim/models.h"
#include "sim/result.h"
#include "sim/rng.h"

namespace dvfsim {

// The models one simulated GPU is made of.
struct GpuModel {
  const Device* device = nullptr;
  const LatencyModel* latency = nullptr;
  const PowerModel* power = nullptr;
  const Governor* governor = nullptr;  // the firmware power cap; nullptr: none
};

struct TimelineConfig {
  LatencyDistribution core_switch;  // switch latencies, drawn per request
  LatencyDistribution memory_switch;
  std::int64_t memory_stall_ns = 0;  // the GPU stalls this long when a memory switch lands
  // A stall never outlasts the switch's own latency (so zero latency means
  // free switches). Off for a planner's emulation, which lands switches at
  // once but charges the stall the engine expects.
  bool stall_within_switch = true;
  std::uint64_t seed = 1;
  bool record_segments = false;  // fill segments()
  bool record_switches = true;   // fill switches()
};

// One kernel alone at fixed clocks, as the timeline runs it: its duration
// (at least 1 ns), its utilisation and the board power. The planners' tables
// use it for the same numbers.
struct KernelAtClocks {
  double duration_ns = 0.0;
  Utilisation u;
  double power_w = 0.0;
};
inline KernelAtClocks kernel_at(const LatencyModel& lat, const PowerModel& pow, const KernelCost& k,
                                const Clocks& c) {
  KernelAtClocks r;
  r.duration_ns = std::max(1.0, lat.duration_ns(k, c));
  r.u = lat.utilisation(k, c, r.duration_ns);
  r.power_w = pow.power_w(r.u, c);
  return r;
}
// The same through the models' inline forms, their terms at the clocks looked
// up once by the caller (`la`, `pa`: lat.at(c), pow.at(c)): the same numbers
// (sim/model_forms.h).
inline KernelAtClocks kernel_at(const RooflineForm& lat, const RooflineForm::At& la,
                                const CmosForm& pow, const CmosForm::At& pa, const KernelCost& k) {
  KernelAtClocks r;
  const double d = lat.duration_ns(k, la);
  r.duration_ns = d > 1.0 ? d : 1.0;  // std::max(1.0, d), as above
  r.u = lat.utilisation(k, la, r.duration_ns);
  r.power_w = pow.power_w(r.u, pa);
  return r;
}

// The firmware warm-ups of the replays of one workload (its costs and gaps)
// on one device with one set of models: the warm-up depends on nothing else
// than the clocks in force when it runs and the cap before it, so the
// baseline, the policy and a planner's replays of one run compute it once
// (it costs as much as a replay: every kernel at the clocks, several rounds).
// Thread-safe. Its user keeps it to one (workload, costs, device, models).
class WarmFirmwareCache {
 public:
  // The cap for (core, memory, cap before); `compute()` on a miss.
  template <class Fn>
  std::int32_t cap(std::int32_t core_mhz, std::int32_t memory_mhz, std::int32_t cap_mhz,
                   Fn&& compute) {
    const auto key = std::make_tuple(core_mhz, memory_mhz, cap_mhz);
    {
      const std::lock_guard<std::mutex> lock(m_);
      const auto it = caps_.find(key);
      if (it != caps_.end()) return it->second;
    }
    const std::int32_t c = compute();
    const std::lock_guard<std::mutex> lock(m_);
    caps_.emplace(key, c);
    return c;
  }
  // The cap for (core, memory, cap before) when computed already, else -1.
  std::int32_t find(std::int32_t core_mhz, std::int32_t memory_mhz, std::int32_t cap_mhz) {
    const std::lock_guard<std::mutex> lock(m_);
    const auto it = caps_.find(std::make_tuple(core_mhz, memory_mhz, cap_mhz));
    return it == caps_.end() ? -1 : it->second;
  }

 private:
  std::mutex m_;
  std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t>, std::int32_t> caps_;
};

// Receives the wake-up a driver asked for (set_wakeup).
class TimelineListener {
 public:
  virtual ~TimelineListener() = default;
  virtual void on_wakeup() = 0;
};

// A kernel that ran to completion, as the timeline saw it.
struct FinishedKernel {
  std::int32_t id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  double core_mhz = 0.0;  // time-weighted effective clocks while it ran
  double memory_mhz = 0.0;
  double energy_j = 0.0;  // its share of the board energy while it ran
};

class GpuTimeline {
 public:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  GpuTimeline(const GpuModel& m, const TimelineConfig& cfg);

  // ---- set-up (before the first kernel)
  // Sets both clocks at once, no switch (the GPU was set up before the run).
  void set_clocks_now(std::int32_t core_mhz, std::int32_t memory_mhz);
  // Lands any pending request at once.
  void land_pending_now();
  // Sets the firmware cap to its steady state for a run of `costs` (each
  // followed by gap_after_ns[i] of idle) at the clocks now in force, as after
  // warm-up steps on the real GPU: the cap the governor rule settles on for
  // the run's average activity, iterated to a fixed point. `cache`
  // (optional) holds the warm-ups of earlier replays of the same run.
  void warm_firmware(const std::vector<KernelCost>& costs, const std::vector<double>& gap_after_ns,
                     WarmFirmwareCache* cache = nullptr);
  // warm_firmware's result when `cache` holds it already (true: applied),
  // so that a caller builds the gaps only when the warm-up has to run.
  bool warm_firmware_cached(WarmFirmwareCache* cache);
  // Sets the firmware cap directly (a planner starting from a known state).
  void set_cap(std::int32_t cap_mhz);
  // Starts the clock at t0; the first governor tick at first_tick_ns (one
  // period after t0 when < 0).
  void start(std::int64_t t0, std::int64_t first_tick_ns = -1);

  // ---- clocks
  // Requests clocks through the switch model (validated by the caller).
  void request(std::int32_t core_mhz, std::int32_t memory_mhz);
  Clocks effective() const { return eff_; }
  Clocks wanted() const { return wanted_; }
  std::int32_t cap_mhz() const { return cap_mhz_; }
  bool stalled() const { return stall_until_ns_ != kNever && stall_until_ns_ > now_; }
  std::int64_t stall_end_ns() const { return stall_until_ns_; }
  double mean_core_switch_ns() const;
  double mean_memory_switch_ns() const;
  double core_switch_quantile_ns(double q) const;
  double memory_switch_quantile_ns(double q) const;
  // The stall a memory switch of the mean latency causes.
  double expected_memory_stall_ns() const;

  // ---- time
  std::int64_t now() const { return now_; }
  // Calls `l->on_wakeup()` at `at_ns` (one wake-up at a time; a later call replaces it).
  void set_wakeup(std::int64_t at_ns, TimelineListener* l);
  // Processes every event (landing, stall end, governor tick, wake-up) due now.
  void fire_due_events() {
    if (next_event_ns() <= now_) fire_events();
  }
  // Starts a kernel now (time_scale multiplies the latency model's duration).
  void begin_kernel(const KernelCost& cost, double time_scale, std::int32_t id);
  // Advances until `limit` or until a running kernel completes, whichever
  // comes first, processing events on the way. Returns true and fills `done`
  // when a kernel completed (the events due at that instant are left for the
  // caller's fire_due_events, after it handled the completion); false when
  // `limit` was reached (events due then processed).
  bool advance(std::int64_t limit, FinishedKernel* done);
  // begin_kernel(cost, time_scale, id), then advance(kNever, done) until it
  // completes, for a kernel that runs alone (none running, the single-stream
  // replay's hot path): the same numbers, with the kernel's state in locals
  // instead of the running list. Returns with the events due at its end left
  // for the caller's fire_due_events, as advance.
  // `at_start` (optional): the kernel alone at the effective clocks now, as
  // eval gives it, evaluated earlier.
  void run_alone(const KernelCost& cost, double time_scale, std::int32_t id, FinishedKernel* done,
                 const KernelAtClocks* at_start = nullptr);
  // run_alone(costs[i], 1.0, i, done) with the kernels ahead of it evaluated
  // in batches at the effective clocks while they hold (independent
  // evaluations overlap in the CPU, one kernel's chain of divisions and
  // power does not wait for the previous one's): the same numbers, each
  // evaluation being a function of the kernel and the clocks only. A batch
  // is evaluated again from the kernel that starts at other clocks; its
  // length adapts to how many kernels the clocks held for.
  void run_next(const std::vector<KernelCost>& costs, std::size_t i, FinishedKernel* done);
  // The quick path of the single-stream replay while nothing happens but
  // kernels (no switch landing, no stall, no governor tick, no wake-up):
  // kernels first, first + 1, ... one after the other, none alongside, each
  // as advance(start) then run_next(costs, j, ...) would run it (the same
  // operations on the same values), without their loops and with the
  // timeline's totals in locals. `feed` gives and takes the driver's part:
  //   std::int64_t start(j)  when kernel j may start (kNever: not before the
  //                          driver did something else, e.g. a host sync);
  //   void starting(j, e)    kernel j starts now, e the energy so far;
  //   void ended(const FinishedKernel&)  it ended.
  // Stops before `last`, before a kernel whose idle gap or run an event
  // falls in (its gap integrated up to its start when only the run does;
  // the caller then runs it with advance and run_next), or after a kernel at
  // whose end an event is due (left for the caller's fire_due_events, as
  // run_next). Returns the first kernel not run (`first`: none ran).
  template <class Feed>
  std::size_t run_quiet(const std::vector<KernelCost>& costs, std::size_t first, std::size_t last,
                        Feed& feed) {
    return cfg_.record_segments ? run_quiet<true>(costs, first, last, feed)
                                : run_quiet<false>(costs, first, last, feed);
  }
  // Runs kernels until all have completed: advance(kNever, ...).
  std::size_t running() const { return run_.size(); }

  // ---- totals
  double energy_j() const { return energy_j_; }
  std::int64_t switch_stall_ns() const { return stall_total_ns_; }
  std::int64_t off_target_ns() const { return off_target_ns_; }
  std::int64_t power_capped_ns() const { return capped_ns_; }
  std::int64_t clock_switches() const { return clock_switches_; }
  std::int64_t memory_switches() const { return memory_switches_; }
  std::int64_t coalesced_requests() const { return coalesced_; }
  std::vector<SwitchRecord>& switches() { return switches_; }
  std::vector<Segment>& segments() { return segments_; }

 private:
  struct Domain {
    std::int32_t landed_mhz = 0;
    std::int32_t pending_mhz = 0;
    std::int64_t pending_land_ns = kNever;
    std::int64_t pending_request_ns = 0;
    bool pending() const { return pending_land_ns != kNever; }
  };
  // Set by begin_kernel (no initialisers: it is on the replay's hot path).
  struct Running {
    Running() {}  // NOLINT: leaves the fields to begin_kernel (no zeroing on the hot path)
    const KernelCost* cost;
    double scale;
    std::int32_t id;
    double remaining;  // fraction of the work left
    double full_ns;    // duration of the whole kernel at the current clocks
    Utilisation u;
    std::int64_t start_ns;
    std::uint64_t epoch;  // clock_epoch_ when it started
    double core_time, memory_time, energy_j;
  };

  // The kernel alone at `c` (kernel_at), through the models' inline forms
  // when they have them (the same numbers, sim/model_forms.h); `with_power`
  // false leaves power_w 0.
  // At the effective clocks, through the forms' terms at them (eff_lat_,
  // eff_pow_: the same numbers as at eff_).
  KernelAtClocks eval(const KernelCost& k, bool with_power) const {
    KernelAtClocks r;
    if (lat_form_) {
      const double d = lat_form_->duration_ns(k, eff_lat_);
      r.duration_ns = d > 1.0 ? d : 1.0;  // std::max(1.0, d), as kernel_at
      r.u = lat_form_->utilisation(k, eff_lat_, r.duration_ns);
    } else {
      r.duration_ns = std::max(1.0, m_.latency->duration_ns(k, eff_));
      r.u = m_.latency->utilisation(k, eff_, r.duration_ns);
    }
    if (with_power) r.power_w = board_power(r.u);
    return r;
  }
  // The board power at the effective clocks.
  double board_power(const Utilisation& u) const {
    return pow_form_ ? pow_form_->power_w(u, eff_pow_) : m_.power->power_w(u, eff_);
  }
  void fire_events();
  void retarget(Domain& d, std::int32_t target_mhz, const LatencyDistribution& lat);
  static void land_now(Domain& d);
  void land(Domain& d, SwitchRecord::Domain which);
  void governor_tick();
  void update_effective();
  void refresh_running();
  // The earliest pending event, kept in next_event_ns_ by every change of one.
  std::int64_t next_event_ns() const { return next_event_ns_; }
  void update_next_event() {
    next_event_ns_ = std::min({core_.pending_land_ns, memory_.pending_land_ns, next_tick_ns_,
                               wakeup_ns_, stall_until_ns_});
  }
  // The board power at the effective clocks with no kernel running (kept
  // while they hold).
  double idle_power() {
    const std::int64_t key = std::int64_t{eff_.core_mhz} * 100000 + eff_.memory_mhz;
    if (idle_clocks_key_ != key) set_idle_power(key);
    return idle_power_w_;
  }
  void set_idle_power(std::int64_t key);
  // run_quiet with record_segments known.
  template <bool segments, class Feed>
  std::size_t run_quiet(const std::vector<KernelCost>& costs, std::size_t first, std::size_t last,
                        Feed& feed);
  // run_next's evaluation of costs[i] at the effective clocks, from the
  // batch evaluated ahead (evaluated again from i when the clocks changed).
  const KernelAtClocks& ahead_at(const std::vector<KernelCost>& costs, std::size_t i) {
    const Ahead& a = ahead_;
    if (a.costs != &costs || i < a.begin || i >= a.end || !(a.clocks == eff_))
      evaluate_ahead(costs, i);
    return a.at[i - a.begin];
  }
  // Evaluates the batch from kernel i at the effective clocks.
  void evaluate_ahead(const std::vector<KernelCost>& costs, std::size_t i);
  // Integrates [now, t) at constant state and moves now to t; `progress`:
  // the running kernels advance (not stalled).
  void integrate(std::int64_t t, const Utilisation& u, double power_w, std::int32_t segment_id,
                 bool progress);
  // What every stretch of dt ns at constant state adds to the GPU's totals
  // (energy, the governor's activity, off-target and capped time); returns
  // its energy (J). integrate() and run_alone() share it.
  double account(std::int64_t dt, const Utilisation& u, double power_w);
  // Appends [now, now + dt) at the effective clocks to segments_ (merged
  // into the last one when it continues it unchanged).
  void record_segment(std::int64_t dt, double power_w, std::int32_t segment_id);

  // run_next's evaluations of costs[begin, end) at `clocks` (at[j - begin]).
  struct Ahead {
    const std::vector<KernelCost>* costs = nullptr;
    std::size_t begin = 0, end = 0;
    Clocks clocks;
    std::size_t batch = 16;  // the next batch's length
    std::vector<KernelAtClocks> at;
  };
  static constexpr std::size_t kMaxAhead = 64;

  GpuModel m_;
  const RooflineForm* lat_form_ = nullptr;  // the models' inline forms (nullptr: none)
  const CmosForm* pow_form_ = nullptr;
  TimelineConfig cfg_;
  Rng rng_;
  bool capping_ = false;
  std::int64_t period_ns_ = 0;

  std::int64_t now_ = 0;
  Domain core_, memory_;
  Clocks wanted_, eff_;
  RooflineForm::At eff_lat_;  // the forms' terms at eff_ (set with it; unused without forms)
  CmosForm::At eff_pow_;
  std::int32_t cap_mhz_ = 0;
  std::int64_t next_tick_ns_ = kNever;
  std::int64_t wakeup_ns_ = kNever;
  TimelineListener* listener_ = nullptr;
  std::int64_t stall_until_ns_ = kNever;
  std::int64_t next_event_ns_ = kNever;  // min of the five above
  // Counts the changes of the effective clocks: a kernel that saw one value
  // ran at its start clocks throughout.
  std::uint64_t clock_epoch_ = 0;
  std::int64_t exact_time_ns_ = 0;  // below it, time x any clock of the device is exact (< 2^53)
  Utilisation activity_;            // integrated u·dt since the last governor tick
  std::vector<Running> run_;
  bool dirty_ = true;  // clocks changed since the running kernels' rates were computed
  Utilisation run_u_;  // combined utilisation of the running kernels
  double run_power_w_ = 0.0;
  double idle_power_w_ = 0.0;
  std::int64_t idle_clocks_key_ = -1;

  double energy_j_ = 0.0;
  std::int64_t stall_total_ns_ = 0, off_target_ns_ = 0, capped_ns_ = 0;
  std::int64_t clock_switches_ = 0, memory_switches_ = 0, coalesced_ = 0;
  std::vector<SwitchRecord> switches_;
  std::vector<Segment> segments_;
  Ahead ahead_;
};

// Draws one switch latency in ns from a distribution.
double draw_latency_ns(const LatencyDistribution& d, Rng& rng);

// ---- the replay's hot path, inline for the engine's loop

namespace timeline_detail {
// std::llround (halves away from zero) for |x| < 2^52, without the libm call:
// x - trunc(x) is exact there.
inline std::int64_t round_ns(double x) {
  const auto i = static_cast<std::int64_t>(x);
  const double frac = x - static_cast<double>(i);
  // Branch-free: frac >= 0.5 and frac <= -0.5 exclude each other, and
  // whether a kernel's time ends in a half above or below is a coin toss.
  return i + static_cast<std::int64_t>(frac >= 0.5) - static_cast<std::int64_t>(frac <= -0.5);
}

// Utilisations of concurrent kernels add and saturate at 1 per unit.
inline void add_saturating(Utilisation& acc, const Utilisation& u) {
  acc.busy = std::min(1.0, acc.busy + u.busy);
  acc.compute = std::min(1.0, acc.compute + u.compute);
  acc.memory = std::min(1.0, acc.memory + u.memory);
  acc.simt = std::min(1.0, acc.simt + u.simt);
  acc.simt_matrix = std::min(1.0, acc.simt_matrix + u.simt_matrix);
  acc.compute_fp16 = std::min(acc.compute, acc.compute_fp16 + u.compute_fp16);
  acc.l2_excess = std::min(1.0, acc.l2_excess + u.l2_excess);
  acc.compute_zeroed1 = std::min(acc.compute, acc.compute_zeroed1 + u.compute_zeroed1);
  acc.compute_zeroed2 = std::min(acc.compute, acc.compute_zeroed2 + u.compute_zeroed2);
  acc.compute_fp8 = std::min(acc.compute, acc.compute_fp8 + u.compute_fp8);
}
}  // namespace timeline_detail

inline void GpuTimeline::integrate(std::int64_t t, const Utilisation& u, double power_w,
                                   std::int32_t segment_id, bool progress) {
  const std::int64_t dt = t - now_;
  if (dt <= 0) return;
  const auto dts = static_cast<double>(dt);
  const double e = account(dt, u, power_w);
  if (!run_.empty()) {
    const double share = run_.size() == 1 ? e : e / static_cast<double>(run_.size());
    for (Running& r : run_) {
      r.energy_j += share;
      r.core_time += dts * eff_.core_mhz;
      r.memory_time += dts * eff_.memory_mhz;
      if (progress) r.remaining -= dts / r.full_ns;
    }
  }
  if (cfg_.record_segments) record_segment(dt, power_w, segment_id);
  now_ = t;
}

inline double GpuTimeline::account(std::int64_t dt, const Utilisation& u, double power_w) {
  const auto dts = static_cast<double>(dt);
  const double e = power_w * dts * 1e-9;
  energy_j_ += e;
  activity_.add(u, dts);
  if (core_.landed_mhz != wanted_.core_mhz || memory_.landed_mhz != wanted_.memory_mhz)
    off_target_ns_ += dt;
  if (capping_ && cap_mhz_ < core_.landed_mhz) capped_ns_ += dt;
  return e;
}

inline void GpuTimeline::record_segment(std::int64_t dt, double power_w, std::int32_t segment_id) {
  if (!segments_.empty()) {
    Segment& last = segments_.back();
    if (last.kernel == segment_id && last.core_mhz == eff_.core_mhz &&
        last.memory_mhz == eff_.memory_mhz && last.power_w == power_w &&
        last.start_ns + last.duration_ns == now_) {
      last.duration_ns += dt;
      return;
    }
  }
  segments_.push_back({now_, dt, eff_.core_mhz, eff_.memory_mhz, power_w, segment_id});
}

inline void GpuTimeline::begin_kernel(const KernelCost& cost, double time_scale, std::int32_t id) {
  Running& r = run_.emplace_back();
  r.cost = &cost;
  r.scale = time_scale;
  r.id = id;
  r.remaining = 1.0;
  r.start_ns = now_;
  r.epoch = clock_epoch_;
  r.core_time = r.memory_time = r.energy_j = 0.0;
  dirty_ = true;
}

inline bool GpuTimeline::advance(std::int64_t limit, FinishedKernel* done) {
  for (;;) {
    if (run_.empty()) {
      if (now_ >= limit) {
        fire_due_events();
        return false;
      }
      const std::int64_t stop = std::min(limit, next_event_ns());
      integrate(stop, Utilisation{}, idle_power(), stalled() ? Segment::kStall : Segment::kIdle,
                false);
      fire_due_events();
      continue;
    }
    if (dirty_) refresh_running();
    const std::int64_t stop = std::min(next_event_ns(), limit);
    if (stalled()) {
      integrate(stop, Utilisation{}, idle_power(), Segment::kStall, false);
    } else {
      std::size_t first = 0;
      std::int64_t first_end = kNever;
      for (std::size_t k = 0; k < run_.size(); ++k) {
        const std::int64_t end =
            now_ + std::max<std::int64_t>(
                       0, timeline_detail::round_ns(run_[k].remaining * run_[k].full_ns));
        if (end < first_end) {
          first_end = end;
          first = k;
        }
      }
      const std::int32_t seg = run_.front().id;
      if (first_end <= stop) {
        integrate(first_end, run_u_, run_power_w_, seg, run_.size() > 1);
        const Running& r = run_[first];
        done->id = r.id;
        done->start_ns = r.start_ns;
        done->end_ns = now_;
        const std::int64_t dur = now_ - r.start_ns;
        if (dur <= 0 || (r.epoch == clock_epoch_ && dur < exact_time_ns_)) {
          // Constant clocks: the time-weighted mean below is exactly them
          // (dur x MHz and its sums are exact integers under 2^53).
          done->core_mhz = eff_.core_mhz;
          done->memory_mhz = eff_.memory_mhz;
        } else {
          const auto d = static_cast<double>(dur);
          done->core_mhz = r.core_time / d;
          done->memory_mhz = r.memory_time / d;
        }
        done->energy_j = r.energy_j;
        run_.erase(run_.begin() + static_cast<std::ptrdiff_t>(first));
        dirty_ = true;
        return true;
      }
      integrate(stop, run_u_, run_power_w_, seg, true);
    }
    fire_due_events();
    if (now_ >= limit) return false;
  }
}

inline void GpuTimeline::refresh_running() {
  dirty_ = false;
  if (run_.size() == 1) {  // the model's own numbers (no saturation)
    Running& r = run_.front();
    const KernelAtClocks k = eval(*r.cost, true);
    r.full_ns = k.duration_ns * r.scale;
    r.u = run_u_ = k.u;
    run_power_w_ = k.power_w;
    return;
  }
  run_u_ = {};
  for (Running& r : run_) {
    const KernelAtClocks k = eval(*r.cost, false);
    r.full_ns = k.duration_ns * r.scale;
    r.u = k.u;
    timeline_detail::add_saturating(run_u_, r.u);
  }
  run_power_w_ = board_power(run_u_);
}

inline void GpuTimeline::run_next(const std::vector<KernelCost>& costs, std::size_t i,
                                  FinishedKernel* done) {
  if (!lat_form_ || !pow_form_) {
    run_alone(costs[i], 1.0, static_cast<std::int32_t>(i), done);
    return;
  }
  run_alone(costs[i], 1.0, static_cast<std::int32_t>(i), done, &ahead_at(costs, i));
}

template <bool segments, class Feed>
inline std::size_t GpuTimeline::run_quiet(const std::vector<KernelCost>& costs, std::size_t first,
                                          std::size_t last, Feed& feed) {
  if (stall_until_ns_ != kNever || !run_.empty()) return first;
  // What integrate() looks at and only an event changes: constant here.
  const std::int64_t next = next_event_ns_;
  const bool off_target =
      core_.landed_mhz != wanted_.core_mhz || memory_.landed_mhz != wanted_.memory_mhz;
  const bool capped = capping_ && cap_mhz_ < core_.landed_mhz;
  const bool forms = lat_form_ && pow_form_;
  const double idle_w = idle_power();
  const std::int64_t from = now_;  // integrated from here on without a break
  std::int64_t now = from;
  double energy = energy_j_;
  Utilisation activity = activity_;
  KernelAtClocks alone;
  // The batch evaluated ahead (ahead_at's, the clocks holding here):
  // kernel j's evaluation at ahead[j] for j in [ahead_begin, ahead_end).
  const KernelAtClocks* ahead = nullptr;  // at ahead_begin
  std::size_t ahead_begin = 0, ahead_end = 0;
  std::size_t j = first;
  for (; j < last; ++j) {
    const std::int64_t start = feed.start(j);
    if (std::max(start, now) >= next) break;  // (kNever included)
    if (start > now) {                        // integrate(start, {}, idle, kIdle, false)
      const std::int64_t dt = start - now;
      const auto dts = static_cast<double>(dt);
      energy += idle_w * dts * 1e-9;
      // activity.add(Utilisation{}, dts) adds +0.0 (dts > 0) to sums that
      // are never -0.0 (from +0.0 by adding utilisations >= 0 or NaN): no
      // change, bit for bit.
      if constexpr (segments) {
        now_ = now;
        record_segment(dt, idle_w, Segment::kIdle);
      }
      now = start;
    }
    feed.starting(j, energy);
    const KernelAtClocks* k = &alone;
    if (forms) {
      if (j < ahead_begin || j >= ahead_end) {
        k = &ahead_at(costs, j);
        ahead_begin = ahead_.begin;
        ahead_end = ahead_.end;
        ahead = ahead_.at.data();
      } else {
        k = ahead + (j - ahead_begin);
      }
    } else {
      alone = eval(costs[j], true);
    }
    // run_alone's first step at time scale 1 with all of the work left (the
    // products by 1.0 exact), ending by the next event.
    const std::int64_t end =
        now + std::max<std::int64_t>(0, timeline_detail::round_ns(k->duration_ns));
    if (end > next) break;
    FinishedKernel f;
    f.id = static_cast<std::int32_t>(j);
    f.start_ns = now;
    double kernel_energy = 0.0;
    const std::int64_t dt = end - now;
    if (dt > 0) {
      const auto dts = static_cast<double>(dt);
      const double e = k->power_w * dts * 1e-9;
      energy += e;
      activity.add(k->u, dts);
      kernel_energy += e;
      if constexpr (segments) {
        now_ = now;
        record_segment(dt, k->power_w, f.id);
      }
      now = end;
    }
    f.end_ns = now;
    const std::int64_t dur = now - f.start_ns;
    if (dur < exact_time_ns_) {  // the clocks held (no event: the epoch is the start's)
      f.core_mhz = eff_.core_mhz;
      f.memory_mhz = eff_.memory_mhz;
    } else {  // run_alone's time-weighted clocks over the one step (dur = dt > 0)
      const auto d = static_cast<double>(dur);
      f.core_mhz = (0.0 + d * eff_.core_mhz) / d;
      f.memory_mhz = (0.0 + d * eff_.memory_mhz) / d;
    }
    f.energy_j = kernel_energy;
    feed.ended(f);
    if (now >= next) {  // an event due at its end: the caller fires it
      ++j;
      break;
    }
  }
  const std::int64_t time = now - from;  // the sum of the integrated dt, exactly
  now_ = now;
  energy_j_ = energy;
  activity_ = activity;
  if (off_target) off_target_ns_ += time;
  if (capped) capped_ns_ += time;
  dirty_ = true;
  return j;
}

inline void GpuTimeline::run_alone(const KernelCost& cost, double time_scale, std::int32_t id,
                                   FinishedKernel* done, const KernelAtClocks* at_start) {
  // advance's loop with run_ holding this one kernel (refresh_running's
  // single-kernel case, integrate's with one running kernel).
  const std::int64_t start = now_;
  const std::uint64_t epoch = clock_epoch_;
  double remaining = 1.0, full_ns = 0.0, core_time = 0.0, memory_time = 0.0, energy = 0.0;
  Utilisation u;
  double power_w = 0.0;
  dirty_ = true;
  // integrate(t, u, p, segment, progress) while the kernel runs.
  auto step = [&](std::int64_t t, const Utilisation& su, double p, std::int32_t seg,
                  bool progress) {
    const std::int64_t dt = t - now_;
    if (dt <= 0) return;
    const auto dts = static_cast<double>(dt);
    energy += account(dt, su, p);
    core_time += dts * eff_.core_mhz;
    memory_time += dts * eff_.memory_mhz;
    if (progress) remaining -= dts / full_ns;
    if (cfg_.record_segments) record_segment(dt, p, seg);
    now_ = t;
  };
  for (;;) {
    if (dirty_) {
      dirty_ = false;
      const KernelAtClocks k = at_start ? *at_start : eval(cost, true);
      at_start = nullptr;  // the clocks changed when dirty again
      full_ns = k.duration_ns * time_scale;
      u = k.u;
      power_w = k.power_w;
    }
    const std::int64_t stop = next_event_ns();
    if (stalled()) {
      step(stop, Utilisation{}, idle_power(), Segment::kStall, false);
    } else {
      const std::int64_t end =
          now_ + std::max<std::int64_t>(0, timeline_detail::round_ns(remaining * full_ns));
      if (end <= stop) {
        step(end, u, power_w, id, false);
        done->id = id;
        done->start_ns = start;
        done->end_ns = now_;
        const std::int64_t dur = now_ - start;
        if (dur <= 0 || (epoch == clock_epoch_ && dur < exact_time_ns_)) {
          done->core_mhz = eff_.core_mhz;
          done->memory_mhz = eff_.memory_mhz;
        } else {
          const auto d = static_cast<double>(dur);
          done->core_mhz = core_time / d;
          done->memory_mhz = memory_time / d;
        }
        done->energy_j = energy;
        dirty_ = true;
        return;
      }
      step(stop, u, power_w, id, true);
    }
    fire_due_events();
  }
}

}  // namespace dvfsim
