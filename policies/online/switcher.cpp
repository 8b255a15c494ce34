#include "policies/online/switcher.h"

#include <algorithm>
#include <cmath>

namespace dvfsim::plan {

double Switcher::lead_ns(const PolicyContext& ctx, const Clocks& from, const Clocks& to) const {
  double lead = 0;
  if (from.core_mhz != to.core_mhz) lead = std::max(lead, ctx.expected_core_switch_ns());
  if (from.memory_mhz != to.memory_mhz) lead = std::max(lead, ctx.expected_memory_switch_ns());
  return lead;
}

void Switcher::on_start(PolicyContext& ctx, int position) {
  ++ordinal_;
  running_ = true;
  start_ns_ = ctx.now_ns();
  pos_ = position;
  if (steps_.empty() || position < 0 || position >= static_cast<int>(steps_.size())) {
    pos_ = -1;
    // A kernel the plan does not know (the sequence deviates from the learned
    // one): the default clocks, not whatever the plan last asked for, which
    // may be its slowest pair and would then hold for every kernel until the
    // sequence is found again; raised to the floor, as every request is.
    if (!steps_.empty()) {
      const Clocks def = raised(ctx, default_clocks(ctx.device()));
      if (!(ctx.wanted() == def)) {
        lands_ns_ =
            ctx.now_ns() + static_cast<std::int64_t>(std::ceil(lead_ns(ctx, ctx.wanted(), def)));
        issued_ordinal_ = -1;
        ctx.request(def.core_mhz, def.memory_mhz);
      }
    }
    return;
  }
  const bool early_pending = issued_ordinal_ > ordinal_;
  if (issued_ordinal_ >= 0 && issued_ordinal_ <= ordinal_) issued_ordinal_ = -1;
  const Clocks want = raised(ctx, steps_[static_cast<std::size_t>(pos_)].pair);
  if (!early_pending && !(ctx.wanted() == want)) {
    lands_ns_ =
        ctx.now_ns() + static_cast<std::int64_t>(std::ceil(lead_ns(ctx, ctx.wanted(), want)));
    ctx.request(want.core_mhz, want.memory_mhz);
  }
  if (early_) schedule(ctx, -1);
}

Clocks at_least(const Device& d, const Clocks& a, const Clocks& b) {
  if (b.core_mhz <= a.core_mhz && b.memory_mhz <= a.memory_mhz) return a;
  if (a.core_mhz <= b.core_mhz && a.memory_mhz <= b.memory_mhz) return b;
  const std::int32_t core = std::max(a.core_mhz, b.core_mhz);
  const std::int32_t memory = std::max(a.memory_mhz, b.memory_mhz);
  if (d.supports(core, memory)) return make_clocks(d, core, memory);
  return a.core_mhz > b.core_mhz ? a : b;
}

void Switcher::on_end(PolicyContext& ctx) {
  running_ = false;
  end_ns_ = ctx.now_ns();
  if (early_ && pos_ >= 0) schedule(ctx, end_ns_);
}

void Switcher::on_timer(PolicyContext& ctx) {
  // Between kernels the next one is predicted from when the last one ended,
  // not from now: a timer inside a long gap must not push the predicted start
  // out by the whole gap again.
  if (early_ && pos_ >= 0) schedule(ctx, running_ ? -1 : end_ns_);
}

void Switcher::schedule(PolicyContext& ctx, std::int64_t ended_ns) {
  if (pos_ < 0 || issued_ordinal_ > ordinal_) return;  // one early request in flight
  const auto n = static_cast<int>(steps_.size());
  const double now = static_cast<double>(ctx.now_ns());
  const Step& cur = steps_[static_cast<std::size_t>(pos_)];
  // Predicted start of the next kernel.
  double t = ended_ns >= 0
                 ? static_cast<double>(ended_ns) + cur.gap_ns
                 : std::max(now, static_cast<double>(start_ns_) + cur.duration_ns) + cur.gap_ns;
  const double horizon =
      std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) + 1.0;
  Clocks prev = cur.pair;
  for (int k = 1; k <= n; ++k) {
    if (!cyclic_ && pos_ + k >= n) return;
    const Step& s = steps_[static_cast<std::size_t>((pos_ + k) % n)];
    if (!(s.pair == prev)) {
      const double lead = lead_ns(ctx, prev, s.pair);
      // A switch that lands (almost) at once is best requested when its
      // kernel starts: an early one would land inside a late-running kernel.
      if (lead <= kImmediateSwitchNs) return;
      // Not before the last early request has landed: this one would
      // retarget it.
      const double issue = std::max(t - lead, static_cast<double>(lands_ns_));
      if (issue <= now + 0.5) {
        const Clocks to = raised(ctx, s.pair);
        ctx.request(to.core_mhz, to.memory_mhz);
        issued_ordinal_ = ordinal_ + k;
        lands_ns_ = ctx.now_ns() + static_cast<std::int64_t>(std::ceil(lead));
      } else {
        ctx.set_timer(static_cast<std::int64_t>(std::llround(issue)));
      }
      return;
    }
    // Nothing changes within the horizon: look again when it reaches the
    // predicted start of step k (a change there or later is issued no
    // earlier than that minus the horizon), or at the next kernel boundary.
    if (t - now > horizon) {
      ctx.set_timer(std::max(ctx.now_ns() + 1, static_cast<std::int64_t>(std::ceil(t - horizon))));
      return;
    }
    t += s.duration_ns + s.gap_ns;
  }
}

}  // namespace dvfsim::plan
