#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/error.h"
#include "sim/graph.h"
#include "sim/rng.h"
#include "sim/timeline_context.h"

namespace dvfsim {

TimelineConfig timeline_config(const Device& d, const EngineConfig& cfg, std::uint64_t seed,
                               bool record_segments) {
  TimelineConfig t;
  if (cfg.switch_latency_override_us >= 0) {
    LatencyDistribution fixed;
    fixed.value_us = cfg.switch_latency_override_us;
    t.core_switch = t.memory_switch = fixed;
  } else {
    t.core_switch = d.core_switch;
    t.memory_switch = d.memory_switch;
  }
  const double stall_us =
      cfg.memory_stall_override_us >= 0 ? cfg.memory_stall_override_us : d.memory_switch_stall_us;
  t.memory_stall_ns = static_cast<std::int64_t>(std::llround(stall_us * 1e3));
  t.seed = seed;
  t.record_segments = record_segments;
  return t;
}

WorkloadShape workload_shape(const Workload& w) {
  WorkloadShape s;
  const std::size_t n = w.kernels.size();
  s.ended_by.resize(n);
  std::int64_t ended_by = std::numeric_limits<std::int64_t>::min();
  for (std::size_t i = 0; i < n; ++i) {
    const Kernel& a = w.kernels[i];
    s.one_stream = s.one_stream && a.stream == w.kernels.front().stream;
    ended_by = std::max(ended_by, a.traced_start_ns + a.work.duration_ns);
    s.ended_by[i] = ended_by;
  }
  return s;
}

namespace {

ContextInputs context_of(const EngineInputs& in, const EngineConfig& cfg) {
  ContextInputs c = shared_context_inputs(in, cfg);
  c.baseline = in.baseline;
  c.warm_cache = in.warm_cache;
  return c;
}

class Replay final : public TimelineContext<PolicyContext> {
 public:
  Replay(const EngineInputs& in, Policy& policy, const EngineConfig& cfg)
      : TimelineContext(context_of(in, cfg), &policy,
                        timeline_config(*in.device, cfg, cfg.seed, cfg.record_timeline)),
        in_(in),
        w_(*in.workload),
        policy_(policy),
        per_kernel_(policy.acts_per_kernel()),
        cfg_(cfg),
        gaps_(in.device->kernel_gaps()) {
    origin_ns_ = w_.kernels.front().host_launch_ns;
    res_.policy = in.policy_name;
  }

  RunResult run() {
    const auto n = w_.kernels.size();
    res_.iterations = w_.iterations;
    res_.iteration_time_ns.assign(static_cast<std::size_t>(w_.iterations), 0);
    res_.iteration_energy_j.assign(static_cast<std::size_t>(w_.iterations), 0.0);
    // Up to two segments a kernel (the kernel, and the idle gap before it:
    // with a device gap every kernel has one), plus the few where a cap
    // change or a switch splits one. Reserved with that margin: a vector
    // that outgrows its reservation by one segment doubles, which at 100x the
    // shipped trace cost 56 MB of peak memory (bench/bench_io.cpp,
    // BM_RunScaling/100).
    if (cfg_.record_timeline) tl_.segments().reserve(2 * n + n / 16 + 64);

    policy_.begin(*this);
    // Requests made in begin() land before the replay: the GPU was set up
    // before the traced work started.
    tl_.land_pending_now();
    // The firmware warm-up runs only when no earlier replay of the run
    // warmed up already.
    const bool warm =
        cfg_.power_cap && cfg_.warm_firmware && !tl_.warm_firmware_cached(in_.warm_cache);
    Stream& one = streams_.emplace_back();
    one.id = w_.kernels.front().stream;
    one.next = 0;
    // The streams, and on one the latest traced end so far, which its syncs
    // (nearly all of it) or the warm-up need: the workload's, taken once for
    // all its replays when the caller has it.
    if (in_.shape && in_.shape->ended_by.size() != n)
      throw std::logic_error("replay: the workload shape is another workload's");
    if (!in_.shape) own_shape_ = workload_shape(w_);
    const WorkloadShape& shape = in_.shape ? *in_.shape : own_shape_;
    multi_stream_ = !shape.one_stream;
    one_ended_by_ = &shape.ended_by;
    if (warm) tl_.warm_firmware(*in_.costs, replayed_gaps(shape.ended_by), in_.warm_cache);
    // On one stream the rows are written in order as kernels end, once each
    // (not zeroed first); on several a kernel's row gets its requested
    // clocks when it starts.
    if (multi_stream_)
      res_.kernels.resize(n);
    else
      res_.kernels.reserve(n);

    const std::int64_t first_ready = w_.kernels.front().host_launch_ns - origin_ns_;
    tl_.start(first_ready);
    res_.begin_ns = first_ready;

    set_up_streams();
    if (multi_stream_)
      run_streams();
    else
      run_one_stream();
    while (next_sync_ < w_.syncs.size()) apply_sync(w_.syncs[next_sync_++]);
    enter_iteration(-1);
    res_.end_ns = tl_.now();
    res_.host_delay_ns = host_delay_ns_;
    res_.energy_j = tl_.energy_j();
    res_.clock_switches = tl_.clock_switches();
    res_.coalesced_requests = tl_.coalesced_requests();
    res_.switch_stall_ns = tl_.switch_stall_ns();
    res_.off_target_ns = tl_.off_target_ns();
    res_.power_capped_ns = tl_.power_capped_ns();
    res_.switches = std::move(tl_.switches());
    res_.segments = std::move(tl_.segments());
    return std::move(res_);
  }

 private:
  // Energy up to now belongs to the current iteration; from now on to `it`
  // (-1: the end). Iterations only move forward: a late kernel of an earlier
  // iteration on another stream does not take the energy back.
  void enter_iteration(std::int32_t it) { enter_iteration(it, tl_.energy_j()); }
  // The same with the timeline's energy so far `e` (GpuTimeline::run_quiet's).
  void enter_iteration(std::int32_t it, double e) {
    if (it == current_iteration_ || (it >= 0 && it < current_iteration_)) return;
    if (current_iteration_ >= 0)
      res_.iteration_energy_j[static_cast<std::size_t>(current_iteration_)] +=
          e - iteration_mark_j_;
    iteration_mark_j_ = e;
    current_iteration_ = it;
  }

  // The idle gap after each kernel in a replay at the traced durations, for
  // the firmware warm-up: kernels in launch order on one stream, each when
  // the host launched it on the timeline the replay uses (with the
  // profiler host-overhead correction where it applies, and the host's
  // syncs re-timed as apply_sync does) and the one before it has ended.
  // Not the traced gaps: a traced step is stretched by the profiler's host
  // overhead, its idle gaps are not those of the unprofiled steps whose
  // average power set the firmware's cap (docs/validation.md, "Power-capped
  // steps"). `ended_by[i]`: the latest traced end among kernels 0..i.
  std::vector<double> replayed_gaps(const std::vector<std::int64_t>& ended_by) const {
    const std::size_t n = w_.kernels.size();
    std::vector<double> gaps(n, 0.0);
    std::vector<std::int64_t> end_ns(n, 0);
    std::int64_t delay = 0, free_ns = 0;
    std::size_t next = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Kernel& k = w_.kernels[i];
      while (next < w_.syncs.size() && w_.syncs[next].host_begin_ns <= k.host_launch_ns &&
             w_.syncs[next].waits_until_kernel <= i) {
        const SyncPoint& s = w_.syncs[next++];
        // The last kernel launched before the sync that had ended when the host resumed.
        const auto launched =
            static_cast<std::ptrdiff_t>(std::min<std::size_t>(s.waits_until_kernel, i));
        const auto it =
            std::upper_bound(ended_by.begin(), ended_by.begin() + launched, s.traced_end_ns);
        std::int64_t f_sim = 0, f_traced = 0;
        if (it != ended_by.begin()) {
          const auto j = static_cast<std::size_t>(it - ended_by.begin()) - 1;
          f_sim = end_ns[j];
          f_traced = ended_by[j] - origin_ns_;
        }
        const std::int64_t begin = s.host_begin_ns - origin_ns_;
        const std::int64_t end = s.traced_end_ns - origin_ns_;
        const std::int64_t lag = std::max<std::int64_t>(0, end - std::max(begin, f_traced));
        delay = std::max(begin + delay, f_sim) + lag - end;
      }
      const std::int64_t ready = k.host_launch_ns - origin_ns_ + delay;
      const std::int64_t start =
          i == 0 ? ready : std::max(ready, free_ns + gap_ns(w_.kernels[i - 1], k));
      if (i > 0) gaps[i - 1] = static_cast<double>(start - free_ns);
      free_ns = start + k.work.duration_ns;
      end_ns[i] = free_ns;
    }
    return gaps;
  }

  // Several streams: the host launches kernels in order (up to a sync whose
  // work has not ended); each stream starts its launched kernels in order,
  // each when its predecessors have ended (docs/design.md, "Concurrent
  // streams").
  void run_streams() {
    const auto n = static_cast<std::uint32_t>(w_.kernels.size());
    ready_ns_.assign(n, 0);
    finished_.assign(n, 0);
    for (;;) {
      launch();
      const std::int64_t next_ready = start_ready();
      if (tl_.running() == 0 && next_ready == GpuTimeline::kNever) {
        if (launched_ == n && started_ == n) break;
        throw std::logic_error("replay: no kernel can start");  // unreachable: preds come first
      }
      FinishedKernel f;
      if (tl_.advance(next_ready, &f)) finish(f);
    }
  }

  // One stream: the same rules, where each kernel starts when it is ready and
  // the one before it has ended (stream order implies every other
  // dependency), run without the bookkeeping of several streams (the
  // replay's hot path, bench/bench_replay.cpp). A policy that does nothing
  // per kernel is not called per kernel, and while nothing happens but
  // kernels (no switch, stall, governor tick or timer due before a kernel's
  // end) each runs through the timeline's quick path: the same numbers as
  // the full path below, which a kernel takes when something is due.
  void run_one_stream() {
    const auto n = static_cast<std::uint32_t>(w_.kernels.size());
    const bool quiet = !per_kernel_;
    std::int64_t prev_end = tl_.now();  // when the kernel before ended
    FinishedKernel done;
    for (std::uint32_t i = 0; i < n;) {
      const Kernel& k = w_.kernels[i];
      // Every kernel before i has ended: the syncs before it apply at once.
      while (next_sync_ < w_.syncs.size() &&
             w_.syncs[next_sync_].host_begin_ns <= k.host_launch_ns &&
             w_.syncs[next_sync_].waits_until_kernel <= i)
        apply_sync(w_.syncs[next_sync_++]);
      // The quick path up to the next sync or event (the first kernel's
      // start, the run's begin, set by the full path).
      if (quiet && i > 0) {
        QuietFeed feed(*this, prev_end);
        const auto j = static_cast<std::uint32_t>(tl_.run_quiet(*in_.costs, i, n, feed));
        if (j > i) {
          i = j;
          tl_.fire_due_events();
          continue;
        }
      }
      const std::int64_t gpu_free = i > 0 ? prev_end + gap_ns(w_.kernels[i - 1], k) : prev_end;
      const std::int64_t ready = k.host_launch_ns - origin_ns_ + host_delay_ns_;
      tl_.advance(std::max(ready, gpu_free), &done);
      about_to_start(i);
      tl_.run_next(*in_.costs, i, &done);
      add_row(done, requested_);
      prev_end = tl_.now();
      if (!quiet) policy_.on_kernel_end(*this, i);
      tl_.fire_due_events();
      ++i;
    }
    launched_ = started_ = n;
  }

  // run_one_stream's part of GpuTimeline::run_quiet: the same steps as its
  // full path, kernel j being neither the first nor after a sync that
  // applies before it.
  // What stays the same up to the next sync is taken once.
  struct QuietFeed {
    QuietFeed(Replay& replay, std::int64_t& end) : r(replay), prev_end(end) {
      if (r.next_sync_ < r.w_.syncs.size()) {
        sync_begin_ns = r.w_.syncs[r.next_sync_].host_begin_ns;
        sync_waits_until = r.w_.syncs[r.next_sync_].waits_until_kernel;
      }
    }
    Replay& r;
    std::int64_t& prev_end;
    const Kernel* kernels = r.w_.kernels.data();
    const std::int64_t delay_ns = r.host_delay_ns_ - r.origin_ns_;  // host time to the replay's
    const KernelGaps gaps = r.gaps_;
    // The next sync (none: never applies).
    std::int64_t sync_begin_ns = std::numeric_limits<std::int64_t>::max();
    std::size_t sync_waits_until = 0;

    std::int64_t start(std::size_t j) const {
      const Kernel& k = kernels[j];
      if (sync_begin_ns <= k.host_launch_ns && sync_waits_until <= j) return GpuTimeline::kNever;
      // k.host_launch_ns - origin_ns_ + host_delay_ns_ and gap_ns(kernels[j - 1], k)
      const std::int64_t ready = k.host_launch_ns + delay_ns;
      return std::max(ready, prev_end + gaps.between(kernels[j - 1].correlation, k.correlation));
    }
    void starting(std::size_t j, double energy_j) const {
      const std::int32_t it = kernels[j].iteration;
      if (it != r.current_iteration_) r.enter_iteration(it, energy_j);
    }
    void ended(const FinishedKernel& f) const {
      r.add_row(f, r.tl_.wanted());
      prev_end = f.end_ns;
    }
  };

  // Kernel f's row on one stream (f being the next kernel).
  void add_row(const FinishedKernel& f, const Clocks& requested) {
    res_.kernels.push_back({f.start_ns, f.end_ns - f.start_ns, f.core_mhz, f.memory_mhz,
                            requested.core_mhz, requested.memory_mhz, f.energy_j});
  }

  // The streams' kernels in launch order, and on several streams the
  // dependencies (stream order, event waits, host syncs, capture order).
  void set_up_streams() {
    if (!multi_stream_) return;  // streams_: the one stream, all kernels (kernels left empty)
    std::vector<StreamKernels> streams = stream_kernels(w_);
    deps_ = dependencies(w_, streams, true);
    streams_.clear();
    for (StreamKernels& s : streams) streams_.push_back({std::move(s), 0});
  }

  // The host launches kernels up to the next sync whose work has not ended.
  void launch() {
    const auto n = static_cast<std::uint32_t>(w_.kernels.size());
    while (launched_ < n) {
      const Kernel& k = w_.kernels[launched_];
      // A sync waits for work launched before it (a blocking copy for its
      // own copy too: it applies once the copy is launched).
      while (next_sync_ < w_.syncs.size() &&
             w_.syncs[next_sync_].host_begin_ns <= k.host_launch_ns &&
             w_.syncs[next_sync_].waits_until_kernel <= launched_) {
        if (!sync_done(w_.syncs[next_sync_])) return;  // the host waits
        apply_sync(w_.syncs[next_sync_++]);
      }
      ready_ns_[launched_++] = k.host_launch_ns - origin_ns_ + host_delay_ns_;
    }
  }

  // Starts, lowest index first, every launched kernel that heads its stream,
  // is ready and whose predecessors have ended; returns the earliest ready
  // time of one still waiting only for its launch to arrive (kNever: none).
  std::int64_t start_ready() {
    for (;;) {
      std::int64_t next = GpuTimeline::kNever;
      Stream* best = nullptr;
      std::uint32_t best_k = 0;
      for (Stream& s : streams_) {
        if (s.next >= s.kernels.size()) continue;
        const std::uint32_t k = s.kernels[s.next];
        if (k >= launched_) continue;
        // Its predecessors must have ended; it starts the device gap after
        // every one of them: its stream's previous kernel and those of other
        // streams.
        std::int64_t ready = ready_ns_[k];
        bool waiting = false;
        for (auto q = deps_.begin[k]; q < deps_.begin[k + 1]; ++q) {
          const std::uint32_t p = deps_.preds[q];
          if (!finished_[p]) {
            waiting = true;
            break;
          }
          const KernelResult& pr = res_.kernels[p];
          ready =
              std::max(ready, pr.start_ns + pr.duration_ns + gap_ns(w_.kernels[p], w_.kernels[k]));
        }
        if (waiting) continue;
        if (ready > tl_.now()) {
          next = std::min(next, ready);
        } else if (!best || k < best_k) {
          best = &s;
          best_k = k;
        }
      }
      if (!best) return next;
      ++best->next;
      start(best_k);
    }
  }

  void start(std::uint32_t i) {
    about_to_start(i);
    res_.kernels[i].requested_core_mhz = requested_.core_mhz;
    res_.kernels[i].requested_memory_mhz = requested_.memory_mhz;
    tl_.begin_kernel((*in_.costs)[i], 1.0, static_cast<std::int32_t>(i));
  }

  // What happens as kernel i starts, before the timeline runs it.
  void about_to_start(std::uint32_t i) {
    tl_.fire_due_events();
    if (started_++ == 0) res_.begin_ns = tl_.now();
    enter_iteration(w_.kernels[i].iteration);
    if (per_kernel_) {
      policy_.on_kernel_start(*this, i);
      tl_.fire_due_events();
    }
    requested_ = tl_.wanted();
  }

  // The device gap before `next`, launched in time after `prev` on its stream.
  std::int64_t gap_ns(const Kernel& prev, const Kernel& next) const {
    return gaps_.between(prev.correlation, next.correlation);
  }

  void finish(const FinishedKernel& f) {
    record(f);
    finished_[static_cast<std::size_t>(f.id)] = 1;
    if (per_kernel_) policy_.on_kernel_end(*this, static_cast<std::uint32_t>(f.id));
    tl_.fire_due_events();
  }

  void record(const FinishedKernel& f) {
    KernelResult& out = res_.kernels[static_cast<std::size_t>(f.id)];
    out.start_ns = f.start_ns;
    out.duration_ns = f.end_ns - f.start_ns;
    out.core_mhz = f.core_mhz;
    out.memory_mhz = f.memory_mhz;
    out.energy_j = f.energy_j;
  }

  // Calls fn(j) for the kernels a sync waits for: on its stream (on every
  // stream for a device-wide sync, or when the trace does not say which), the
  // last one launched before it by which all of that stream's work had ended
  // in the trace when the host resumed. The work still running then was not
  // waited for (a stream sync on another stream, an event recorded earlier).
  template <class Fn>
  void for_waited(const SyncPoint& s, Fn&& fn) const {
    for (const Stream& st : streams_) {
      if (s.stream >= 0 && st.id != s.stream) continue;
      // On one stream its kernels are all of them, in order.
      const auto launched =
          multi_stream_
              ? static_cast<std::size_t>(
                    std::lower_bound(st.kernels.begin(), st.kernels.end(), s.waits_until_kernel) -
                    st.kernels.begin())
              : std::min<std::size_t>(s.waits_until_kernel, one_ended_by_->size());
      const std::vector<std::int64_t>& ended_by = multi_stream_ ? st.ended_by : *one_ended_by_;
      const auto ended = std::upper_bound(ended_by.begin(),
                                          ended_by.begin() + static_cast<std::ptrdiff_t>(launched),
                                          s.traced_end_ns);
      if (ended == ended_by.begin()) continue;
      const auto at = static_cast<std::size_t>(ended - ended_by.begin()) - 1;
      fn(multi_stream_ ? st.kernels[at] : static_cast<std::uint32_t>(at));
    }
  }

  bool sync_done(const SyncPoint& s) const {
    bool done = true;
    for_waited(s, [&](std::uint32_t j) { done = done && finished_[j]; });
    return done;
  }

  void apply_sync(const SyncPoint& s) {
    // When the simulated GPU finished the work the host waited for (the
    // latest end over the streams it waited for).
    std::int64_t f_sim = 0, f_traced = 0;
    for_waited(s, [&](std::uint32_t j) {
      const Kernel& k = w_.kernels[j];
      f_sim = std::max(f_sim, res_.kernels[j].start_ns + res_.kernels[j].duration_ns);
      f_traced = std::max(f_traced, k.traced_start_ns + k.work.duration_ns - origin_ns_);
    });
    const std::int64_t begin = s.host_begin_ns - origin_ns_;
    const std::int64_t end = s.traced_end_ns - origin_ns_;
    const std::int64_t lag = std::max<std::int64_t>(0, end - std::max(begin, f_traced));
    const std::int64_t resume = std::max(begin + host_delay_ns_, f_sim) + lag;
    host_delay_ns_ = resume - end;
  }

  // On one stream kernels and ended_by stay empty (the workload's kernels
  // and one_ended_by_ stand in).
  struct Stream : StreamKernels {
    std::size_t next = 0;  // its first kernel not yet started
  };

  const EngineInputs& in_;
  const Workload& w_;
  Policy& policy_;
  const bool per_kernel_;  // Policy::acts_per_kernel
  const EngineConfig& cfg_;
  const KernelGaps gaps_;  // Device::kernel_gaps
  std::int64_t origin_ns_ = 0;
  RunResult res_;
  std::int64_t host_delay_ns_ = 0;
  std::int32_t current_iteration_ = -1;
  double iteration_mark_j_ = 0.0;
  bool multi_stream_ = false;
  WorkloadShape own_shape_;  // without the caller's (EngineInputs::shape)
  const std::vector<std::int64_t>* one_ended_by_ = nullptr;  // WorkloadShape::ended_by
  Dependencies deps_;
  std::vector<Stream> streams_;
  std::vector<std::int64_t> ready_ns_;  // per launched kernel: when the host launched it
  std::vector<char> finished_;          // per kernel: it ran to completion
  std::uint32_t launched_ = 0, started_ = 0;
  Clocks requested_;  // the policy's wanted clocks as the last kernel started
  std::size_t next_sync_ = 0;
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
