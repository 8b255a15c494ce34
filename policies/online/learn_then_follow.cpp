#include "policies/online/learn_then_follow.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "sim/error.h"

namespace dvfsim::plan {

std::vector<ParamSpec> learn_then_follow_params() {
  return {
      {"host_slack", ParamSpec::Kind::defaulted, "recurring",
       "a kernel followed by a wait for the host (one stream, no host synchronisation between the "
       "launches) may run slower, up to the wait: recurring (where the wait of the profiling "
       "iteration came back in the next one; planned again then), 1 (every wait of the profiling "
       "iteration: a wait seen once need not come back) or 0 (never)"},
      {"guard", ParamSpec::Kind::defaulted, "1",
       "1: a budget guard follows the plan: a followed iteration whose projected time (the "
       "measured kernels against their default-clock estimates, plus the plan's rehearsed rest) "
       "would exceed the budget runs its remaining kernels at the default clocks; 0: off"},
      {"idle_drop", ParamSpec::Kind::defaulted, "1",
       "1: a GPU idle past the plan's gap by the break-even time of a switch drops its clocks "
       "until the next kernel starts (for each memory clock at or below the one in force, its "
       "lowest core clock: the pair whose idle power pays soonest for the switch back); 0: off"},
  };
}

HostSlack parse_host_slack(const Params& p, const std::string& policy) {
  const std::string v = p.str("host_slack");
  if (v == "0" || v == "off") return HostSlack::off;
  if (v == "1" || v == "once") return HostSlack::once;
  if (v == "recurring") return HostSlack::recurring;
  throw InputError(fmt::format(
      "policy {}: host_slack={} is not one of recurring, 1 (once) or 0 (off)", policy, v));
}

std::vector<ItemSpec> LearnThenFollow::learned_items() const {
  const auto& seq = learner_.sequence();
  if (host_slack_ == HostSlack::once) {
    const std::vector<double> any(seq.size(), std::numeric_limits<double>::infinity());
    return items_from(seq, &any);
  }
  if (host_slack_ == HostSlack::recurring && waits_confirmed_)
    return items_from(seq, &learner_.followed_waits());
  return items_from(seq);
}

std::int32_t LearnThenFollow::start_cap_mhz(const PolicyContext& ctx) const {
  const std::int32_t top = ctx.device().max_core_mhz();
  return replanning_ ? top : std::min(ctx.effective().core_mhz, top);
}

RehearsalStart LearnThenFollow::reference_start(const PolicyContext& ctx,
                                                const RehearsalStart& plan_start) const {
  if (!replanning_) return plan_start;
  return {plan_start.cap_mhz, default_clocks(ctx.device())};
}

void LearnThenFollow::consider_plan_in_force(CandidateSet& cands, const GpuModel& gpu,
                                             const std::vector<ItemSpec>& items,
                                             const EmulationStart& start) const {
  if (!replanning_ || plan_steps_.size() != items.size()) return;
  std::vector<Clocks> pairs;
  pairs.reserve(plan_steps_.size());
  for (const Switcher::Step& s : plan_steps_) pairs.push_back(s.pair);
  cands.consider("the plan in force", plan_early_, [&](double /*tighten*/) {
    return Proposal{true, pairs, emulate(gpu, items, pairs, start)};
  });
}

void LearnThenFollow::plan_with_recurring_waits(PolicyContext& ctx) {
  const auto& seq = learner_.sequence();
  const auto& followed = learner_.followed_waits();
  int recurred = 0, seen = 0;
  for (std::size_t i = 0; i < seq.size() && i < followed.size(); ++i) {
    seen += seq[i].host_wait ? 1 : 0;
    recurred += seq[i].host_wait && followed[i] > 0 ? 1 : 0;
  }
  if (!on_one_stream(seq) || recurred == 0) return;
  note(fmt::format(
      "host slack: {} of the {} waits for the host of profiling iteration {} came back in the "
      "iteration after it: planning again with them as slack",
      recurred, seen, learner_.profiling_iteration()));
  waits_confirmed_ = replanning_ = true;
  if (!make_plan(ctx)) {
    // make_plan changed nothing: the plan in force (or the default clocks)
    // is followed on.
    waits_confirmed_ = false;
    note(fmt::format(
        "host slack: no plan with them met the budget or saved energy in rehearsal: {} kept",
        plan_steps_.empty() ? "the default clocks" : "the plan made without them"));
  }
  replanning_ = false;
}

void LearnThenFollow::drop_plan() {
  switcher_.set_plan({}, plan_early_);
  switcher_.set_floor(std::nullopt);
  in_flight_.clear();
  guard_.disarm();
  native_.reset();
  running_.clear();
  guard_iteration_ = -1;
  off_plan_ = catching_up_ = false;
  plan_steps_.clear();
}

void LearnThenFollow::follow(std::vector<Switcher::Step> steps, bool early, const GuardPath* first,
                             const GuardPath* later, double allowance_ns,
                             std::unique_ptr<NativeShadow> native) {
  plan_steps_ = steps;
  plan_early_ = early;
  switcher_.set_plan(std::move(steps), early);
  if (first && later && native && first->planned_ns.size() == plan_steps_.size() &&
      later->planned_ns.size() == plan_steps_.size()) {
    native_ = std::move(native);
    guard_.arm(*first, *later, allowance_ns);
  }
}

void LearnThenFollow::follow_guarded(std::vector<Switcher::Step> steps, bool early,
                                     const Rehearsal& plan, const Rehearsal& ref,
                                     double allowance_ns, std::unique_ptr<NativeShadow> native) {
  const GuardPath first{plan.step_ns, ref.step_ns, plan.time_ns, ref.time_ns};
  const GuardPath later{plan.next_step_ns, ref.next_step_ns, plan.next_time_ns, ref.next_time_ns};
  follow(std::move(steps), early, &first, &later, allowance_ns, std::move(native));
}

void LearnThenFollow::on_kernel_start(PolicyContext& ctx, std::uint32_t kernel) {
  learner_.on_start(ctx, kernel);
  if (learner_.just_relearning()) {
    // The iteration followed did not repeat the learned one: the plan is
    // dropped while this iteration is profiled; make_plan runs again when it
    // is learned.
    drop_plan();
    note(restart_profiling(ctx, learner_));
  }
  if (learner_.just_learned()) {
    waits_confirmed_ = false;
    make_plan(ctx);
  }
  if (learner_.just_recorded_waits() && host_slack_ == HostSlack::recurring)
    plan_with_recurring_waits(ctx);
  if (switcher_.active()) {
    // A switch applies to every kernel in flight: what this one was planned
    // at bounds the requests while it runs.
    const int tp = learner_.tracked_position();
    const auto& steps = switcher_.steps();
    in_flight_.emplace_back(kernel, tp >= 0 && tp < static_cast<int>(steps.size())
                                        ? steps[static_cast<std::size_t>(tp)].pair
                                        : default_clocks(ctx.device()));
    set_floor(ctx, kernel);
  }
  // A kernel of the next iteration started while the driving one still runs
  // (on another stream): the clocks and the guard follow the driving one
  // (the clocks before an idle drop, if one is in force).
  if (!learner_.driving()) {
    if (switcher_.active()) switcher_.end_drop(ctx);
    return;
  }
  const int position = learner_.position();
  if (guard_.armed()) {
    const std::int32_t it = ctx.workload().kernels[kernel].iteration;
    if (it != guard_iteration_) {
      guard_iteration_ = it;
      guard_.new_iteration();
      running_.clear();
      replans_ = 0;
      catching_up_ = false;
      phase_dev_ns_.fill(0.0);
      phase_ref_ns_.fill(0.0);
      if (off_plan_) {
        switcher_.set_plan(plan_steps_, plan_early_);
        off_plan_ = false;
      }
    }
    running_.push_back({kernel, position, ctx.now_ns()});
  }
  if (switcher_.active()) switcher_.on_start(ctx, position);
}

void LearnThenFollow::on_timer(PolicyContext& ctx) {
  if (!switcher_.active()) return;
  const std::int64_t drops = switcher_.idle_drops();
  switcher_.on_timer(ctx);
  if (drops == 0 && switcher_.idle_drops() == 1) {
    const Clocks from = *switcher_.dropped_from();
    const IdleDrop& q = switcher_.drop_in_force(ctx);
    const Clocks to = q.pair;
    note(fmt::format(
        "idle drop at {:.3f} ms: the GPU had idled {:.3f} ms past the plan's gap after position "
        "{}, the time {:.1f} W less idle power takes to pay for the switch back: {}/{} -> {}/{} "
        "MHz until the next kernel starts (the run's first drop; later ones are not noted)",
        static_cast<double>(ctx.now_ns()) * 1e-6, q.wait_ns * 1e-6, learner_.position(), q.saved_w,
        from.core_mhz, from.memory_mhz, to.core_mhz, to.memory_mhz));
  }
}

void LearnThenFollow::set_floor(PolicyContext& ctx, std::uint32_t except) {
  std::optional<Clocks> floor;
  for (const auto& [k, pair] : in_flight_)
    if (k != except) floor = floor ? at_least(ctx.device(), *floor, pair) : pair;
  switcher_.set_floor(floor);
}

void LearnThenFollow::on_kernel_end(PolicyContext& ctx, std::uint32_t kernel) {
  learner_.on_end(ctx, kernel);
  if (!in_flight_.empty()) {
    const auto f = std::find_if(in_flight_.begin(), in_flight_.end(),
                                [&](const auto& x) { return x.first == kernel; });
    if (f != in_flight_.end()) in_flight_.erase(f);
    set_floor(ctx, kernel);
  }
  if (guard_.armed()) {
    const auto r = std::find_if(running_.begin(), running_.end(),
                                [&](const Running& x) { return x.kernel == kernel; });
    if (r != running_.end()) {
      const Running done = *r;
      running_.erase(r);
      if (done.position >= 0) {
        // The work launched now, run by the native shadow: what native
        // would have taken for it.
        const double native =
            native_->run(static_cast<std::size_t>(done.position), ctx.costs()[kernel]);
        const double measured = static_cast<double>(ctx.now_ns() - done.start_ns);
        const auto ph = static_cast<std::size_t>(
            learner_.sequence()[static_cast<std::size_t>(done.position)].phase);
        phase_dev_ns_[ph] += (measured - native) - guard_.delta_ns(done.position);
        phase_ref_ns_[ph] += guard_.reference_ns(done.position);
        if (guard_.on_end(done.position, measured, native)) {
          trip(ctx, done.position);
        } else if (catching_up_) {
          catch_up(ctx);
        }
      }
    }
  }
  if (switcher_.active()) switcher_.on_end(ctx);
}

int LearnThenFollow::takeover(const PolicyContext& ctx, int position) const {
  const auto n = static_cast<int>(plan_steps_.size());
  const double lead = std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns());
  const std::vector<Switcher::Step>& cur = switcher_.steps();
  double t = cur[static_cast<std::size_t>(position)].gap_ns;
  int q = position + 1;
  while (q + 1 < n && t < lead) {
    const Switcher::Step& s = cur[static_cast<std::size_t>(q)];
    t += s.duration_ns + s.gap_ns;
    ++q;
  }
  return q;
}

double LearnThenFollow::expected_rest_deviation_ns(int position) const {
  const auto& seq = learner_.sequence();
  double s = 0;
  for (std::size_t j = static_cast<std::size_t>(position + 1); j < seq.size(); ++j) {
    const auto ph = static_cast<std::size_t>(seq[j].phase);
    if (phase_ref_ns_[ph] > 0)
      s += phase_dev_ns_[ph] / phase_ref_ns_[ph] * guard_.reference_ns(static_cast<int>(j));
  }
  return std::max(0.0, s);
}

void LearnThenFollow::trip(PolicyContext& ctx, int position) {
  const auto n = static_cast<int>(plan_steps_.size());
  if (position + 1 >= n) return;
  RestPlan rest;
  if (replans_ < kGuardReplans) {
    ++replans_;
    // Repay the account, and what the rest is expected to deviate by: each
    // phase at the rate it has deviated so far this iteration.
    rest = replan_rest(
        ctx, position,
        guard_.debt_ns() - guard_.allowance_ns() + expected_rest_deviation_ns(position));
  }
  const bool immediate_switches = std::max(ctx.expected_core_switch_ns(),
                                           ctx.expected_memory_switch_ns()) <= kImmediateSwitchNs;
  const bool owing = guard_.debt_ns() > guard_.allowance_ns();
  // No re-plan. With switches that land at once: the fastest clocks while
  // the account is over the allowance (the one pair the rest runs fastest
  // at, cap included), then the default ones; but the plan is kept where
  // its own rest is projected to end nearer the budget than that pair's (a
  // plan that repays on later kernels, e.g. GEMMs it runs faster under the
  // cap at a lower memory clock, can repay more than any one pair). With a
  // real latency the switch there lands a latency late (the switch back
  // too, and a memory switch stalls the GPU): the default clocks when the
  // account is within the allowance (they keep it there), else the plan is
  // kept: the default clocks repay nothing, its later positions are all that
  // can.
  HoldPair hold_pair;
  bool catch_up_now = false;
  if (!rest.have && immediate_switches && owing) {
    hold_pair = catch_up_clocks(ctx, position);
    catch_up_now = guard_.debt_ns() + hold_pair.use_ns < guard_.projected_ns();
  }
  note(fmt::format(
      "budget guard: iteration {} projected {:.3f} ms over its budget after position {} "
      "(account {:+.3f} ms against native): {}",
      guard_iteration_, (guard_.projected_ns() - guard_.allowance_ns()) * 1e-6, position,
      guard_.debt_ns() * 1e-6,
      rest.have      ? "the rest of the iteration re-planned"
      : !owing       ? "the default clocks for the rest of the iteration"
      : catch_up_now ? "the fastest clocks until repaid"
      : immediate_switches
          ? "the plan kept (no re-plan repays it, and its rest ends nearer the budget than any "
            "one pair)"
          : "the plan kept (no re-plan repays it)"));
  // The new clocks take over where a switch requested now lands; the kernels
  // before keep what is followed now (and the switch in flight for them).
  const int from = takeover(ctx, position);
  std::vector<Switcher::Step> steps = switcher_.steps();
  if (rest.have && static_cast<int>(rest.pairs.size()) == n - position - 1) {
    for (int j = from; j < n; ++j) {
      const auto k = static_cast<std::size_t>(j - position - 1);
      steps[static_cast<std::size_t>(j)].pair = rest.pairs[k];
      steps[static_cast<std::size_t>(j)].duration_ns = rest.planned_ns[k];
    }
    guard_.rearm_rest(position, rest.planned_ns, rest.reference_ns, rest.extra_ns);
    switcher_.replace_steps(std::move(steps));
    off_plan_ = true;
    return;
  }
  replans_ = kGuardReplans;
  if (owing && !catch_up_now) return;
  const Device& d = ctx.device();
  catching_up_ = catch_up_now;
  catch_up_pair_ = hold_pair.pair;
  catch_up_from_ns_ = -1;
  hold(ctx, from, catching_up_ ? catch_up_pair_ : default_clocks(d));
}

void LearnThenFollow::catch_up(PolicyContext& ctx) {
  const Device& d = ctx.device();
  const Clocks def = default_clocks(d);
  const std::int64_t now = ctx.now_ns();
  if (catch_up_from_ns_ < 0) {
    if (ctx.effective() == catch_up_pair_) {
      catch_up_from_ns_ = now;
      catch_up_from_debt_ns_ = guard_.debt_ns();
    }
  }
  // The switch back to the default clocks takes its latency, while the
  // account keeps falling at the rate it has since the fastest clocks
  // landed: issue it that much early.
  double ahead = 0;
  if (catch_up_from_ns_ >= 0 && now > catch_up_from_ns_) {
    const double rate = std::max(0.0, (catch_up_from_debt_ns_ - guard_.debt_ns()) /
                                          static_cast<double>(now - catch_up_from_ns_));
    ahead = rate * switcher_.lead_ns(ctx, catch_up_pair_, def);
  }
  if (guard_.debt_ns() - ahead <= guard_.allowance_ns()) {
    catching_up_ = false;
    const int pos = learner_.position();
    if (pos >= 0) hold(ctx, pos + 1, def);
  }
}

void LearnThenFollow::hold(PolicyContext& /*ctx*/, int from, const Clocks& pair) {
  std::vector<Switcher::Step> steps = switcher_.steps();
  for (std::size_t j = static_cast<std::size_t>(std::max(0, from)); j < steps.size(); ++j)
    steps[j].pair = pair;
  switcher_.replace_steps(std::move(steps));
  off_plan_ = true;
}

}  // namespace dvfsim::plan
