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

std::string restart_profiling(PolicyContext& ctx, const SequenceLearner& learner,
                              std::uint32_t kernel) {
  const Device& d = ctx.device();
  const Clocks def = default_clocks(d);
  if (!(ctx.wanted() == def)) ctx.request(def.core_mhz, def.memory_mhz);
  const std::int32_t it = ctx.workload().kernels[kernel].iteration;
  return fmt::format(
      "the iteration before {} did not repeat the learned sequence: profiling iteration {} at "
      "the default clocks and planning again (re-learn {} of at most {})",
      it, it, learner.relearns(), kMaxRelearns);
}

void SequenceLearner::profile_from(const Kernel& k, std::int64_t now) {
  learned_ = false;
  seq_.clear();
  seq_kernel_.clear();
  pos_ = -1;
  lost_from_ = 0;
  profiling_iteration_ = k.iteration;
  current_iteration_ = k.iteration;
  first_start_ns_ = now;
}

void SequenceLearner::on_start(PolicyContext& ctx, std::uint32_t kernel) {
  const Kernel& k = ctx.workload().kernels[kernel];
  const std::int64_t now = ctx.now_ns();
  just_learned_ = false;
  just_relearning_ = false;
  if (profiling_iteration_ < 0) profile_from(k, now);
  if (learned_ && k.iteration > current_iteration_) {
    // A followed iteration ended (a later one began: on several streams a
    // kernel of an earlier iteration may start after it): did it repeat the
    // learned one?
    const int n = static_cast<int>(seq_.size());
    const int off = followed_lost_ + std::abs(followed_started_ - n);
    followed_started_ = followed_lost_ = 0;
    if (static_cast<double>(off) > kRelearnShare * n && relearns_ < kMaxRelearns) {
      ++relearns_;
      just_relearning_ = true;
      profile_from(k, now);
    }
  }
  if (!learned_ && k.iteration == profiling_iteration_) {
    if (!seq_.empty()) {
      Observed& prev = seq_.back();
      prev.gap_after_ns = static_cast<double>(now - prev.end_ns);
      // A wait for the host: same stream, the previous kernel had ended
      // (a gap), and the host did not wait for the GPU between the two
      // launches (the syncs before this launch are the past), nor does this
      // kernel wait for another stream.
      bool synced = false;
      const auto& syncs = ctx.workload().syncs;
      const auto from = std::lower_bound(
          syncs.begin(), syncs.end(), prev.host_launch_ns,
          [](const SyncPoint& sp, std::int64_t t) { return sp.host_begin_ns < t; });
      synced = from != syncs.end() && from->host_begin_ns < k.host_launch_ns;
      bool waits = false;
      for (const EventWait& e : ctx.workload().event_waits) waits = waits || e.kernel == kernel;
      prev.host_wait = prev.gap_after_ns > 0 && prev.end_ns > prev.start_ns &&
                       k.stream == prev.stream && !synced && !waits;
    }
    Observed o;
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
    return;
  }
  if (!learned_) {
    learned_ = just_learned_ = true;
    iteration_ns_ = static_cast<double>(now - first_start_ns_);
    if (!seq_.empty()) seq_.back().gap_after_ns = static_cast<double>(now - seq_.back().end_ns);
    current_iteration_ = k.iteration;
    pos_ = -1;
  }
  if (seq_.empty()) return;
  int guess;
  if (k.iteration != current_iteration_) {
    current_iteration_ = k.iteration;
    guess = 0;
  } else {
    guess = pos_ >= 0 ? pos_ + 1 : 0;
  }
  if (pos_ < 0 && k.iteration == current_iteration_ && !just_learned_) {
    // Lost earlier in this iteration: look for the kernel anywhere ahead of the
    // last known position.
    guess = lost_from_;
  }
  const std::uint64_t key = launch_key(k);
  const int n = static_cast<int>(seq_.size());
  int found = -1;
  for (int q = guess; q < std::min(n, guess + 64); ++q)
    if (seq_[static_cast<std::size_t>(q)].launch_key == key) {
      found = q;
      break;
    }
  ++followed_started_;
  if (found < 0) ++followed_lost_;
  if (found < 0) {
    if (pos_ >= 0) lost_from_ = pos_ + 1;
    pos_ = -1;
  } else {
    pos_ = found;
  }
}

void SequenceLearner::on_end(PolicyContext& ctx, std::uint32_t kernel) {
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

double SequenceLearner::busy_ns() const {
  double s = 0;
  for (const auto& o : seq_) s += o.measured_ns();
  return s;
}

std::vector<ItemSpec> items_from(const std::vector<Observed>& seq, bool host_slack) {
  std::vector<ItemSpec> out(seq.size());
  bool one_stream = true;
  for (const Observed& o : seq) one_stream = one_stream && o.stream == seq.front().stream;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    out[i].cost = seq[i].cost;
    out[i].time_scale = seq[i].scale;
    out[i].gap_ns = seq[i].gap_after_ns;
    out[i].count = 1;
    if (host_slack && one_stream && seq[i].host_wait && i + 1 < seq.size()) {
      out[i].floor_ns = seq[i].measured_ns() + seq[i].gap_after_ns;
      out[i].gap_ns = 0.0;
    }
  }
  return out;
}

}  // namespace dvfsim::plan
