#include "policies/online/learner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "sim/hash.h"

namespace dvfsim::plan {

std::uint64_t launch_key(const Kernel& k) {
  Fnv1a h;
  for (int i = 0; i < 3; ++i) h.word(k.launch.grid[i]);
  for (int i = 0; i < 3; ++i) h.word(k.launch.block[i]);
  h.word(k.launch.registers_per_thread);
  h.word(k.launch.shared_memory_bytes);
  h.word(k.name_id);
  // A copy or a fill has no launch configuration: its size tells one from
  // another (a profiler reports it with the call).
  if (k.cls == KernelClass::memcpy || k.cls == KernelClass::memset)
    h.word(static_cast<std::uint64_t>(k.work.dram_bytes));
  return h.value();
}

std::string restart_profiling(PolicyContext& ctx, const SequenceLearner& learner) {
  const Device& d = ctx.device();
  const Clocks def = default_clocks(d);
  if (!(ctx.wanted() == def)) ctx.request(def.core_mhz, def.memory_mhz);
  return fmt::format(
      "iteration {} did not repeat the learned sequence: profiling iteration {} at "
      "the default clocks and planning again (re-learn {} of at most {})",
      learner.deviated_iteration(), learner.profiling_iteration(), learner.relearns(),
      kMaxRelearns);
}

void SequenceLearner::profile_from(std::int32_t iteration) {
  learned_ = false;
  seq_.clear();
  seq_kernel_.clear();
  pos_ = -1;
  profiling_iteration_ = iteration;
  drive_ = Track{};
  drive_.iteration = iteration;
  next_ = Track{};
  followed_wait_ns_.clear();
  waits_iteration_ = -1;
  last_ = Last{};
}

SequenceLearner::Track* SequenceLearner::next_track(std::int32_t iteration) {
  if (next_.iteration < 0) next_.iteration = iteration;
  return iteration == next_.iteration ? &next_ : nullptr;
}

bool SequenceLearner::complete(const Workload& w, std::int32_t iteration, int started) {
  const auto i = static_cast<std::size_t>(iteration);
  if (iteration < 0 || i + 1 >= w.iteration_begin.size()) return true;
  return started >= static_cast<int>(w.iteration_begin[i + 1] - w.iteration_begin[i]);
}

void SequenceLearner::place(Track& t, std::uint64_t key) const {
  const int guess = t.pos >= 0 ? t.pos + 1 : t.lost_from;
  const int n = static_cast<int>(seq_.size());
  int found = -1;
  for (int q = guess; q < std::min(n, guess + 64); ++q)
    if (seq_[static_cast<std::size_t>(q)].launch_key == key) {
      found = q;
      break;
    }
  ++t.started;
  if (found < 0) {
    ++t.lost;
    if (t.pos >= 0) t.lost_from = t.pos + 1;
    t.pos = -1;
  } else {
    t.pos = found;
  }
}

bool SequenceLearner::synced_between(const Workload& w, std::int64_t from_launch_ns,
                                     std::int64_t to_launch_ns) {
  // The syncs before `to_launch_ns` are the past: an online policy may see them.
  const auto& syncs = w.syncs;
  const auto from =
      std::lower_bound(syncs.begin(), syncs.end(), from_launch_ns,
                       [](const SyncPoint& sp, std::int64_t t) { return sp.host_begin_ns < t; });
  return from != syncs.end() && from->host_begin_ns < to_launch_ns;
}

bool SequenceLearner::waited_for_host(const Workload& w, std::int32_t prev_stream, bool after_sync,
                                      std::uint32_t kernel) {
  // A wait for the host: same stream, the host did not wait for the GPU
  // between the two launches, nor does this kernel wait for another stream.
  if (w.kernels[kernel].stream != prev_stream || after_sync) return false;
  for (const EventWait& e : w.event_waits)
    if (e.kernel == kernel) return false;
  return true;
}

void SequenceLearner::on_start(PolicyContext& ctx, std::uint32_t kernel) {
  const Workload& w = ctx.workload();
  const Kernel& k = w.kernels[kernel];
  const std::int64_t now = ctx.now_ns();
  just_learned_ = false;
  just_relearning_ = false;
  just_recorded_waits_ = false;
  driving_ = false;
  pos_ = tracked_pos_ = -1;
  if (profiling_iteration_ < 0) profile_from(k.iteration);
  // A kernel of a later iteration starts: the driving iteration is over once
  // all its kernels have started (on one stream, always by now).
  if (k.iteration > drive_.iteration &&
      complete(w, drive_.iteration, learned_ ? drive_.started : static_cast<int>(seq_.size()))) {
    if (!learned_) {
      learned_ = just_learned_ = true;
      if (!seq_.empty()) seq_.back().gap_after_ns = static_cast<double>(now - seq_.back().end_ns);
      const Track t = next_;
      next_ = Track{};
      drive_ = Track{};
      drive_.iteration = t.iteration >= 0 ? t.iteration : k.iteration;
      for (const std::uint64_t key : t.pending) place(drive_, key);
      // The first followed iteration: its waits for the host are recorded,
      // to be compared with the profiling iteration's.
      followed_wait_ns_.assign(seq_.size(), -1.0);
      waits_iteration_ = drive_.iteration;
      last_ = Last{};
    } else {
      // Did the followed iteration repeat the learned one?
      const int n = static_cast<int>(seq_.size());
      const int off = drive_.lost + std::abs(drive_.started - n);
      if (static_cast<double>(off) > kRelearnShare * n && relearns_ < kMaxRelearns) {
        ++relearns_;
        just_relearning_ = true;
        deviated_iteration_ = drive_.iteration;
        // The next iteration, unless some of its kernels have started
        // already: then the one after it.
        const bool begun = next_.iteration == k.iteration && next_.started > 0;
        profile_from(begun ? k.iteration + 1 : k.iteration);
      } else {
        if (drive_.iteration == waits_iteration_) {
          just_recorded_waits_ = true;
          waits_iteration_ = -1;
        }
        drive_ = next_;
        if (drive_.iteration < 0) drive_.iteration = k.iteration;
        next_ = Track{};
      }
    }
  }
  if (!learned_) {
    if (k.iteration == profiling_iteration_) {
      bool after_sync = false;
      if (!seq_.empty()) {
        Observed& prev = seq_.back();
        prev.gap_after_ns = static_cast<double>(now - prev.end_ns);
        after_sync = synced_between(w, prev.host_launch_ns, k.host_launch_ns);
        prev.host_wait = prev.gap_after_ns > 0 && prev.end_ns > prev.start_ns &&
                         waited_for_host(w, prev.stream, after_sync, kernel);
      }
      Observed o;
      o.after_sync = after_sync;
      o.name_id = k.name_id;
      o.launch_key = launch_key(k);
      o.phase = k.phase;
      o.cls = k.cls;
      o.cost = ctx.costs()[kernel];  // the kernel being launched: allowed
      o.clocks = ctx.effective();
      o.start_ns = o.end_ns = now;
      o.stream = k.stream;
      o.host_launch_ns = k.host_launch_ns;
      seq_.push_back(o);
      seq_kernel_.push_back(kernel);
    } else if (k.iteration > profiling_iteration_) {
      // The next iteration's early kernels: placed once the sequence is known.
      if (Track* t = next_track(k.iteration)) t->pending.push_back(launch_key(k));
    }
    return;
  }
  if (seq_.empty()) return;
  if (k.iteration == drive_.iteration) {
    place(drive_, launch_key(k));
    pos_ = tracked_pos_ = drive_.pos;
    driving_ = true;
    if (drive_.iteration == waits_iteration_) record_wait(w, kernel, now);
  } else if (k.iteration > drive_.iteration) {
    if (Track* t = next_track(k.iteration)) {
      place(*t, launch_key(k));
      tracked_pos_ = t->pos;
    }
  }
}

void SequenceLearner::record_wait(const Workload& w, std::uint32_t kernel, std::int64_t now) {
  const Kernel& k = w.kernels[kernel];
  // The kernel before, at the position before, had ended: the gap between
  // them was a wait for the host when the same conditions hold as in the
  // profiling iteration (on_start). Then this kernel started at its launch,
  // so its start less the one before's is the host's time between them.
  if (pos_ >= 1 && last_.position == pos_ - 1 && last_.end_ns > last_.start_ns &&
      last_.end_ns < now &&
      waited_for_host(w, last_.stream, synced_between(w, last_.host_launch_ns, k.host_launch_ns),
                      kernel))
    followed_wait_ns_[static_cast<std::size_t>(last_.position)] =
        static_cast<double>(now - last_.start_ns);
  last_ = Last{kernel, pos_, now, -1, k.stream, k.host_launch_ns};
}

void SequenceLearner::on_end(PolicyContext& ctx, std::uint32_t kernel) {
  if (kernel == last_.kernel && last_.position >= 0) last_.end_ns = ctx.now_ns();
  if (learned_ || seq_.empty()) return;
  const Kernel& k = ctx.workload().kernels[kernel];
  if (k.iteration != profiling_iteration_) return;
  // On several streams kernels end out of start order (sim/engine.h): find
  // the one that ended (the last one started, on one stream).
  std::size_t at = seq_.size() - 1;
  while (at > 0 && seq_kernel_[at] != kernel) --at;
  if (seq_kernel_[at] != kernel) return;
  Observed& o = seq_[at];
  o.end_ns = ctx.now_ns();
  const double model = ctx.latency().duration_ns(o.cost, o.clocks);
  o.scale = model > 0 ? std::clamp(o.measured_ns() / model, kMinTimeScale, kMaxTimeScale) : 1.0;
  // A kernel that ended after the next one started leaves no gap.
  if (at + 1 < seq_.size()) {
    o.gap_after_ns = std::max(0.0, static_cast<double>(seq_[at + 1].start_ns - o.end_ns));
    o.host_wait = false;  // the next one started before this one ended
  }
}

bool on_one_stream(const std::vector<Observed>& seq) {
  return std::all_of(seq.begin(), seq.end(),
                     [&](const Observed& o) { return o.stream == seq.front().stream; });
}

std::vector<ItemSpec> items_from(const std::vector<Observed>& seq,
                                 const std::vector<double>* slack) {
  std::vector<ItemSpec> out(seq.size());
  const bool host = slack && on_one_stream(seq) && slack->size() == seq.size();
  double start = 0.0;  // the host's pace: observed starts, a wait cut to its slack
  for (std::size_t i = 0; i < seq.size(); ++i) {
    out[i].cost = seq[i].cost;
    out[i].time_scale = seq[i].scale;
    out[i].gap_ns = seq[i].gap_after_ns;
    out[i].count = 1;
    if (!host) continue;
    out[i].observed_start_ns = start;
    out[i].launched_after_sync = seq[i].after_sync;
    double step =
        i + 1 < seq.size() ? static_cast<double>(seq[i + 1].start_ns - seq[i].start_ns) : 0.0;
    if (seq[i].host_wait && i + 1 < seq.size() && (*slack)[i] > 0) {
      out[i].floor_ns = std::min(seq[i].measured_ns() + seq[i].gap_after_ns, (*slack)[i]);
      out[i].gap_ns = 0.0;
      step = std::min(step, out[i].floor_ns);
    }
    start += step;
  }
  return out;
}

}  // namespace dvfsim::plan
