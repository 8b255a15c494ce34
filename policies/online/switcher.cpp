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
  dropped_from_.reset();
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
  if (pos_ >= 0) schedule(ctx, end_ns_);
}

void Switcher::on_timer(PolicyContext& ctx) {
  if (pos_ < 0) return;
  const std::int64_t drop = idle_drop_at(ctx);
  if (drop >= 0 && ctx.now_ns() >= drop) {
    const Clocks from = ctx.wanted();
    const IdleDrop& q = drop_for(ctx, from);
    dropped_from_ = from;
    ++drops_;
    issued_ordinal_ = -1;
    lands_ns_ = ctx.now_ns() + static_cast<std::int64_t>(std::ceil(lead_ns(ctx, from, q.pair)));
    ctx.request(q.pair.core_mhz, q.pair.memory_mhz);
    return;
  }
  // Between kernels the next one is predicted from when the last one ended,
  // not from now: a timer inside a long gap must not push the predicted start
  // out by the whole gap again.
  schedule(ctx, running_ ? -1 : end_ns_);
}

IdleDrop idle_drop(const PolicyContext& ctx, const Clocks& from) {
  const Device& d = ctx.device();
  const PowerModel& pm = ctx.power();
  const double from_w = pm.power_w(Utilisation{}, from);
  const double busy_w =
      d.power_limit_w > 0.0 ? d.power_limit_w : pm.power_w(Utilisation{1.0, 1.0, 1.0}, from);
  IdleDrop best;
  for (const std::int32_t m : d.memory_clocks_mhz) {
    if (m > from.memory_mhz) break;
    std::int32_t core = -1;
    for (const std::int32_t c : d.core_clocks_mhz)
      if (c <= from.core_mhz && d.supports(c, m)) {
        core = c;
        break;
      }
    if (core < 0 || (core == from.core_mhz && m == from.memory_mhz)) continue;
    const Clocks q = make_clocks(d, core, m);
    const double saved_w = from_w - pm.power_w(Utilisation{}, q);
    if (!(saved_w > 0.0)) continue;
    // What the drop costs when the host resumes: the next kernel starts at
    // `q` and runs slow until its pair lands (by the clock ratio of the
    // domain that gives back most, over its latency), and a memory switch
    // stops the GPU while the memory retrains, on the way down (should the
    // host resume then) and back.
    double debt_ns = 0.0;
    if (core != from.core_mhz)
      debt_ns = ctx.expected_core_switch_ns() *
                (1.0 - static_cast<double>(core) / static_cast<double>(from.core_mhz));
    if (m != from.memory_mhz)
      debt_ns = std::max(debt_ns, ctx.expected_memory_switch_ns() *
                                      (1.0 - static_cast<double>(m) /
                                                 static_cast<double>(from.memory_mhz))) +
                2.0 * ctx.expected_memory_stall_ns();
    // Ski rental: drop once the idle power lost by holding `from` equals
    // that debt, repaid at up to the board's power (its limit).
    const double wait_ns = busy_w * debt_ns / saved_w;
    if (!best.have || wait_ns < best.wait_ns) best = {true, q, wait_ns, saved_w};
  }
  return best;
}

void Switcher::end_drop(PolicyContext& ctx) {
  if (!dropped_from_) return;
  const Clocks back = raised(ctx, *dropped_from_);
  dropped_from_.reset();
  lands_ns_ = ctx.now_ns() + static_cast<std::int64_t>(std::ceil(lead_ns(ctx, ctx.wanted(), back)));
  ctx.request(back.core_mhz, back.memory_mhz);
}

const IdleDrop& Switcher::drop_for(const PolicyContext& ctx, const Clocks& from) const {
  if (!drop_memo_ || !(drop_memo_->first == from)) drop_memo_.emplace(from, idle_drop(ctx, from));
  return drop_memo_->second;
}

std::int64_t Switcher::idle_drop_at(const PolicyContext& ctx) const {
  if (!idle_drop_ || dropped_from_ || running_ || floor_ || pos_ < 0) return -1;
  const IdleDrop& q = drop_for(ctx, ctx.wanted());
  if (!q.have) return -1;
  const Step& cur = steps_[static_cast<std::size_t>(pos_)];
  return end_ns_ + static_cast<std::int64_t>(std::ceil(cur.gap_ns + q.wait_ns));
}

void Switcher::schedule(PolicyContext& ctx, std::int64_t ended_ns) {
  std::int64_t at = early_ && !dropped_from_ ? next_switch_timer(ctx, ended_ns) : -1;
  const std::int64_t drop = idle_drop_at(ctx);
  if (drop >= 0 && (at < 0 || drop < at)) at = drop;
  if (at >= 0) ctx.set_timer(std::max(at, ctx.now_ns() + 1));
}

std::int64_t Switcher::next_switch_timer(PolicyContext& ctx, std::int64_t ended_ns) {
  if (pos_ < 0 || issued_ordinal_ > ordinal_) return -1;  // one early request in flight
  const auto n = static_cast<int>(steps_.size());
  const double now = static_cast<double>(ctx.now_ns());
  const Step& cur = steps_[static_cast<std::size_t>(pos_)];
  // Predicted start of the next kernel: not before now, since it has not
  // started (a host later than the plan's gap delays every position after
  // it; predicted from the gap alone, the kernels after it would be taken to
  // have run during the wait, and a request for a position far ahead, the
  // next iteration's first, say, would go out now and hold for all of them).
  double t = ended_ns >= 0
                 ? std::max(now, static_cast<double>(ended_ns) + cur.gap_ns)
                 : std::max(now, static_cast<double>(start_ns_) + cur.duration_ns) + cur.gap_ns;
  const double horizon =
      std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) + 1.0;
  Clocks prev = cur.pair;
  for (int k = 1; k <= n; ++k) {
    if (!cyclic_ && pos_ + k >= n) return -1;
    const Step& s = steps_[static_cast<std::size_t>((pos_ + k) % n)];
    if (!(s.pair == prev)) {
      const double lead = lead_ns(ctx, prev, s.pair);
      // A switch that lands (almost) at once is best requested when its
      // kernel starts: an early one would land inside a late-running kernel.
      if (lead <= kImmediateSwitchNs) return -1;
      // Not before the last early request has landed: this one would
      // retarget it.
      const double issue = std::max(t - lead, static_cast<double>(lands_ns_));
      if (issue <= now + 0.5) {
        const Clocks to = raised(ctx, s.pair);
        ctx.request(to.core_mhz, to.memory_mhz);
        issued_ordinal_ = ordinal_ + k;
        lands_ns_ = ctx.now_ns() + static_cast<std::int64_t>(std::ceil(lead));
        return -1;
      }
      return static_cast<std::int64_t>(std::llround(issue));
    }
    // Nothing changes within the horizon: look again when it reaches the
    // predicted start of step k (a change there or later is issued no
    // earlier than that minus the horizon), or at the next kernel boundary.
    if (t - now > horizon)
      return std::max(ctx.now_ns() + 1, static_cast<std::int64_t>(std::ceil(t - horizon)));
    t += s.duration_ns + s.gap_ns;
  }
  return -1;
}

}  // namespace dvfsim::plan
