#pragma once
// What an online policy may learn of the run: the kernels of one profiling
// iteration as they were launched and measured, and its position in the
// repeating sequence afterwards.
#include <cstdint>
#include <string>
#include <vector>

#include "policies/planning/tables.h"
#include "sim/policy.h"

namespace dvfsim::plan {

// What an online policy saw of one kernel of its profiling iteration: the
// kernel as launched (name, launch configuration, cost from the latency model's
// split) and, once it ended, its measured duration at the clocks it ran at.
struct Observed {
  std::uint32_t name_id = 0;
  std::uint64_t launch_key = 0;
  Phase phase = Phase::other;
  KernelClass cls = KernelClass::other;
  KernelCost cost;
  Clocks clocks;  // effective clocks when it started
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  double scale = 1.0;         // measured / modelled duration at `clocks`
  double gap_after_ns = 0.0;  // until the next kernel started
  // The gap after it was a wait for the host: the next kernel, on the same
  // stream, was launched after this one ended, with no host synchronisation
  // between the two launches and no cross-stream wait on the next one (see
  // items_from).
  bool host_wait = false;
  // The host synchronised with the GPU between the previous kernel's launch
  // and this one's (ItemSpec::launched_after_sync).
  bool after_sync = false;
  std::int32_t stream = 0;
  std::int64_t host_launch_ns = 0;
  double measured_ns() const { return static_cast<double>(end_ns - start_ns); }
};

// Records the kernels of one profiling iteration (the first one the policy
// sees) from on_kernel_start / on_kernel_end alone, then follows later
// iterations position by position, checking every launched kernel against the
// learned sequence (name and launch configuration) and re-synchronising
// within a window when the sequence deviates.
// The measured / modelled duration ratio a profiling kernel may teach: a
// kernel measured at less than half or more than twice its modelled time was
// disturbed (a switch or a stall landed inside it, the cap moved), and the
// ratio would mislead every later plan of that position.
inline constexpr double kMinTimeScale = 0.5;
inline constexpr double kMaxTimeScale = 2.0;
// A followed iteration that does not repeat the learned one (more than this
// share of the learned kernel count either not found at a position or
// missing or extra: a warm-up iteration learned, a step that changes its
// kernels) makes the learner profile the next iteration again, up to
// kMaxRelearns times in a run (once: a trace whose every iteration differs
// gains nothing from more, and each costs an iteration at the default
// clocks). Both are choices, not fitted: the shipped trace's iterations
// repeat exactly; a foreign trace's warm-up iteration (397 kernels, then 335
// an iteration) differs by 16 % (docs/policies.md, "A first iteration unlike
// the rest").
inline constexpr double kRelearnShare = 0.05;
inline constexpr int kMaxRelearns = 1;

class SequenceLearner {
 public:
  void on_start(PolicyContext& ctx, std::uint32_t kernel);
  void on_end(PolicyContext& ctx, std::uint32_t kernel);
  // True from the first kernel of a later iteration that starts once every
  // kernel of the profiling one has started (on one stream: the next
  // iteration's first kernel).
  bool learned() const { return learned_; }
  // True exactly during the on_start call in which learning completed.
  bool just_learned() const { return just_learned_; }
  // True exactly during the on_start call that began profiling again (the
  // followed iteration that just ended did not repeat the learned one);
  // learned() is then false until profiling_iteration() is
  // learned.
  bool just_relearning() const { return just_relearning_; }
  int relearns() const { return relearns_; }
  const std::vector<Observed>& sequence() const { return seq_; }
  // Position in the learned sequence of the kernel started last; -1 while
  // profiling, when lost, or when it does not belong to the driving
  // iteration.
  int position() const { return pos_; }
  // Whether the kernel started last belongs to the driving iteration: the
  // oldest one not all of whose kernels have started. On several streams the
  // next iteration's first kernels (a prefetch on a side stream, say) can
  // start while the driving one still runs; they are tracked, but the clocks
  // follow the driving iteration (docs/policies.md, "Iterations that
  // overlap").
  bool driving() const { return driving_; }
  // Position of the kernel started last in its own iteration, driving or
  // the next one (-1: lost, untracked or while profiling).
  int tracked_position() const { return tracked_pos_; }
  // The iteration being profiled (or last profiled).
  std::int32_t profiling_iteration() const { return profiling_iteration_; }
  // The followed iteration whose deviation began the profiling again.
  std::int32_t deviated_iteration() const { return deviated_iteration_; }
  // True exactly during the on_start call that ends the first iteration
  // followed after the sequence was learned, that iteration having repeated
  // the learned one; followed_waits() then says where it waited for the host.
  bool just_recorded_waits() const { return just_recorded_waits_; }
  // Per position of the learned sequence: in the first followed iteration,
  // the time from the kernel's start to the next kernel's start where the
  // gap between them was a wait for the host (the conditions of
  // Observed::host_wait; the next kernel started at its launch), else -1.
  const std::vector<double>& followed_waits() const { return followed_wait_ns_; }
  // Whether the host synchronised with the GPU between two launches (a
  // SyncPoint begun in between).
  static bool synced_between(const Workload& w, std::int64_t from_launch_ns,
                             std::int64_t to_launch_ns);
  // Whether a gap before `kernel`, after a kernel of `prev_stream` that had
  // ended, was a wait for the host: the same stream, no synchronisation
  // between the launches (`after_sync`), no cross-stream wait on `kernel`.
  static bool waited_for_host(const Workload& w, std::int32_t prev_stream, bool after_sync,
                              std::uint32_t kernel);

 private:
  // Position tracking of one followed iteration.
  struct Track {
    std::int32_t iteration = -1;
    int pos = -1;                        // position of its kernel started last (-1: lost)
    int lost_from = 0;                   // where to look again once lost
    int started = 0;                     // kernels started
    int lost = 0;                        // of them not found at a learned position
    std::vector<std::uint64_t> pending;  // keys started before the sequence was learned
  };
  // Finds the kernel with launch key `key` in the learned sequence from `t`'s
  // last position on.
  void place(Track& t, std::uint64_t key) const;
  // Whether every kernel of `iteration` has started (`started` of them), as
  // known when a kernel of a later iteration starts: the host has launched
  // them all by then (Workload::iteration_begin). Without iteration bounds:
  // true.
  static bool complete(const Workload& w, std::int32_t iteration, int started);
  void profile_from(std::int32_t iteration);
  // The track of `iteration`, a later one than the driving iteration's: the
  // next one (taken by the first later iteration seen), else none.
  Track* next_track(std::int32_t iteration);
  // The driving kernel started last in the first followed iteration.
  struct Last {
    std::uint32_t kernel = 0;
    int position = -1;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = -1;  // -1: still running
    std::int32_t stream = 0;
    std::int64_t host_launch_ns = 0;
  };
  void record_wait(const Workload& w, std::uint32_t kernel, std::int64_t now);
  bool learned_ = false, just_learned_ = false, just_relearning_ = false;
  bool just_recorded_waits_ = false;
  std::int32_t waits_iteration_ = -1;  // the followed iteration whose waits are recorded
  std::vector<double> followed_wait_ns_;
  Last last_;
  bool driving_ = false;
  int relearns_ = 0;
  std::int32_t profiling_iteration_ = -1;
  std::int32_t deviated_iteration_ = -1;
  Track drive_, next_;  // the driving iteration and the one after it
  std::vector<Observed> seq_;
  std::vector<std::uint32_t> seq_kernel_;  // the kernel index of each entry of seq_
  int pos_ = -1;
  int tracked_pos_ = -1;
};

std::uint64_t launch_key(const Kernel& k);

// What a policy does when its learner begins profiling again
// (SequenceLearner::just_relearning): back to the default clocks
// while the iteration is profiled. Returns the note that says why.
std::string restart_profiling(PolicyContext& ctx, const SequenceLearner& learner);

// Whether every kernel of a learned sequence ran on one stream (host slack
// is given only then: items_from).
bool on_one_stream(const std::vector<Observed>& seq);

// Items (one per position) of a learned sequence, for build_tables. With
// `slack` (one entry per position) and the whole profiling iteration on one
// stream, a kernel whose gap was a wait for the host (Observed::host_wait)
// and whose entry is positive gets ItemSpec::floor_ns = its measured
// duration + the gap, at most that entry, and no fixed gap, so a slower
// kernel absorbs the wait at no cost in time, as whole_run_input gives the
// oracles from the baseline; every item then carries the host's pace
// (ItemSpec::observed_start_ns: the observed starts, each wait cut to its
// floor). Without `slack` (nullptr): no host slack.
std::vector<ItemSpec> items_from(const std::vector<Observed>& seq,
                                 const std::vector<double>* slack = nullptr);

}  // namespace dvfsim::plan
