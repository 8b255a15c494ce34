#pragma once
// Follows a per-position plan of pairs, issuing switches early so that they
// land on time.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim/policy.h"

namespace dvfsim::plan {

// Drives a per-position plan of pairs through ctx.request. With `early`, each
// change of pair is requested ahead of the kernel it is for by the expected
// switch latency of the domains that change (core, memory), predicted from
// the planned durations and observed gaps, via set_timer or the end of an
// earlier kernel; it lands on time when the prediction holds. Without
// `early`, each change is requested when its kernel starts.
// A switch whose expected latency is at most this lands (almost) at once: it
// is requested when its kernel starts, since an early request would land
// inside the kernel before, if that one runs late (1 us: far below any
// kernel-to-kernel stretch, far above the zero of --set switch_latency_us=0).
inline constexpr double kImmediateSwitchNs = 1000.0;

// The slowest pair at least as fast as `a` and `b` in each domain: their
// per-domain maximum, or, where the device does not support that
// combination, the one of the two with the higher core clock (then memory).
Clocks at_least(const Device& d, const Clocks& a, const Clocks& b);

// Where an idle GPU may drop its clocks (Switcher::set_idle_drop): of the
// pairs at or below `from` in both domains (for each memory clock, the
// lowest core clock it allows), the one whose idle power saving pays soonest
// for what the drop costs when the host resumes. `wait_ns`: the break-even
// idle time (ski rental: the debt, the next kernel's time lost while its pair
// lands plus any memory retraining, at the board's power limit, over the
// idle power saved). None (have = false) when no pair draws less idle power.
struct IdleDrop {
  bool have = false;
  Clocks pair;
  double wait_ns = 0.0;
  double saved_w = 0.0;
};
IdleDrop idle_drop(const PolicyContext& ctx, const Clocks& from);

class Switcher {
 public:
  struct Step {
    Clocks pair;
    double duration_ns = 0.0;  // predicted at `pair`
    double gap_ns = 0.0;       // predicted idle time after it
  };
  // `cyclic`: the plan repeats (position n - 1 is followed by position 0);
  // otherwise nothing is issued past its end.
  void set_plan(std::vector<Step> steps, bool early, bool cyclic = true) {
    steps_ = std::move(steps);
    early_ = early;
    cyclic_ = cyclic;
    issued_ordinal_ = -1;
    lands_ns_ = -1;
    dropped_from_.reset();
  }
  // The plan's steps replaced, the request in flight kept (no early request
  // goes out before it is expected to land): a plan changed while it is
  // followed.
  void replace_steps(std::vector<Step> steps) { steps_ = std::move(steps); }
  const std::vector<Step>& steps() const { return steps_; }
  bool active() const { return !steps_.empty(); }
  // The slowest clocks a request may ask for now: the kernels in flight on
  // other streams were planned at these (their per-domain maximum), and a
  // switch applies to every kernel in flight, so a request for a slower pair
  // (a memset planned at the lowest core clock, say, while a long kernel runs
  // beside it) is raised to them. None (the default): requests as planned.
  void set_floor(const std::optional<Clocks>& floor) { floor_ = floor; }
  // `want` raised to the floor (at_least).
  Clocks raised(const PolicyContext& ctx, const Clocks& want) const {
    return floor_ ? at_least(ctx.device(), want, *floor_) : want;
  }
  // The kernel at `position` of the plan starts now (position < 0: unknown,
  // the switcher stops predicting until the next known position).
  void on_start(PolicyContext& ctx, int position);
  void on_end(PolicyContext& ctx);
  void on_timer(PolicyContext& ctx);
  double lead_ns(const PolicyContext& ctx, const Clocks& from, const Clocks& to) const;
  // Idle drops (off by default): once the GPU has idled past the plan's gap
  // by the break-even time of idle_drop(), it drops to that pair until the
  // next kernel starts (its planned pair is requested then, as always).
  void set_idle_drop(bool on) { idle_drop_ = on; }
  // Idle drops requested so far.
  std::int64_t idle_drops() const { return drops_; }
  // While an idle drop lasts (until the next kernel starts): the pair asked
  // for before it.
  const std::optional<Clocks>& dropped_from() const { return dropped_from_; }
  // The drop in force (while dropped_from() has a value): where to, and its
  // break-even time and saving.
  const IdleDrop& drop_in_force(const PolicyContext& ctx) const {
    return drop_for(ctx, *dropped_from_);
  }
  // A kernel the plan's position does not follow (on another stream) starts
  // during an idle drop: the pair dropped from is asked for again (raised to
  // the floor), so that it does not run at the idle pair.
  void end_drop(PolicyContext& ctx);

 private:
  void schedule(PolicyContext& ctx, std::int64_t next_free_ns);
  // The timer the early requests need (-1: none), without setting it.
  std::int64_t next_switch_timer(PolicyContext& ctx, std::int64_t next_free_ns);
  // When an idle GPU drops its clocks (-1: it does not).
  std::int64_t idle_drop_at(const PolicyContext& ctx) const;
  // idle_drop(ctx, from), kept for the last `from` asked about: it is asked
  // at every kernel end and timer, from the few pairs a plan uses, and
  // depends on nothing else that changes within a run.
  const IdleDrop& drop_for(const PolicyContext& ctx, const Clocks& from) const;
  std::vector<Step> steps_;
  bool early_ = true;
  bool cyclic_ = true;
  int pos_ = -1;
  std::int64_t ordinal_ = 0;   // kernels started under the plan
  std::int64_t start_ns_ = 0;  // start of the current kernel
  std::int64_t end_ns_ = 0;    // end of the last kernel (while none runs)
  bool running_ = false;
  std::int64_t issued_ordinal_ = -1;  // ordinal of the kernel the last early request is for
  // When the last request is expected to land: no early request is issued
  // before then, since it would retarget the pending one (a segment shorter
  // than the latency would lose the switch that starts it).
  std::int64_t lands_ns_ = -1;
  std::optional<Clocks> floor_;
  bool idle_drop_ = false;
  std::optional<Clocks> dropped_from_;  // the clocks dropped in this gap, from this pair
  std::int64_t drops_ = 0;
  mutable std::optional<std::pair<Clocks, IdleDrop>> drop_memo_;
};

}  // namespace dvfsim::plan
