#include "policies/online/rehearsal_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "policies/planning/kernel_plan.h"

namespace dvfsim::plan {

CandidateSet::CandidateSet(const PolicyContext& ctx, const std::vector<Observed>& /*seq*/,
                           const std::vector<ItemSpec>& items, const RehearsalStart& start,
                           const Objective& objective, double budget_ns)
    : ctx_(ctx), items_(items), start_(start), objective_(objective), budget_ns_(budget_ns) {
  const Rehearsal ref = rehearse(ctx_, items_, nullptr, true, start_);
  next_budget_ns_ = budget_ns_ + (ref.next_time_ns - ref.time_ns);
}

namespace {
// A rehearsal's two iterations together, for the objective's score.
double both_energy(const Rehearsal& r) {
  return r.energy_j + r.next_energy_j;
}
double both_time(const Rehearsal& r) {
  return r.time_ns + r.next_time_ns;
}
}  // namespace

void CandidateSet::consider(const std::string& name, bool early,
                            const std::function<Proposal(double)>& plan) {
  const std::size_t first = cands_.size();
  auto overshoot_of = [&](const RehearsedCandidate& c) {
    return std::max(c.rehearsal.time_ns - budget_ns_, c.rehearsal.next_time_ns - next_budget_ns_);
  };
  // Plans with `tighten`, rehearses and keeps the candidate; by how much it
  // missed the budget (0 when it met it; nullopt: no plan). A plan equal to
  // one this candidate already rehearsed (a tightening too small to move
  // it) is not rehearsed or kept again: its rehearsal would be the same.
  auto attempt = [&](double tighten) -> std::optional<double> {
    const Proposal p = plan(tighten);
    if (!p.have) return std::nullopt;
    RehearsedCandidate c;
    c.name = name;
    c.early = early;
    c.steps.resize(p.pairs.size());
    for (std::size_t i = 0; i < p.pairs.size(); ++i) {
      c.steps[i].pair = p.pairs[i];
      c.steps[i].duration_ns = p.emulation.time_of_step[i];
      c.steps[i].gap_ns = idle_after_ns(items_[i], p.emulation.time_of_step[i]);
    }
    for (std::size_t j = first; j < cands_.size(); ++j) {
      const RehearsedCandidate& o = cands_[j];
      const bool same = std::equal(o.steps.begin(), o.steps.end(), c.steps.begin(), c.steps.end(),
                                   [](const Switcher::Step& a, const Switcher::Step& b) {
                                     return a.pair == b.pair && a.duration_ns == b.duration_ns &&
                                            a.gap_ns == b.gap_ns;
                                   });
      if (same) return o.feasible ? 0.0 : overshoot_of(o);
    }
    c.rehearsal = rehearse(ctx_, items_, &c.steps, early, start_);
    ++rehearsals_;
    const double overshoot = overshoot_of(c);
    c.feasible = !objective_.time_bounded() || overshoot <= 0;
    cands_.push_back(std::move(c));
    return cands_.back().feasible ? 0.0 : overshoot;
  };
  replan_until_met(kRehearsalChecks, budget_ns_, kHopelessOvershoot * budget_ns_, attempt);
}

const RehearsedCandidate* CandidateSet::best(const Rehearsal& reference) const {
  const RehearsedCandidate* b = nullptr;
  for (const RehearsedCandidate& c : cands_)
    if (c.feasible &&
        (!b || objective_.score(both_energy(c.rehearsal), both_time(c.rehearsal)) <
                   objective_.score(both_energy(b->rehearsal), both_time(b->rehearsal))))
      b = &c;
  // A plan that saves less than kMinSaving of the reference is the default
  // clocks in all but rounding: hold them (no saving below the noise).
  if (b && objective_.time_bounded() &&
      !(both_energy(b->rehearsal) < both_energy(reference) * (1 - kMinSaving)))
    return nullptr;
  if (b && !objective_.time_bounded() &&
      !(objective_.score(both_energy(b->rehearsal), both_time(b->rehearsal)) <
        objective_.score(both_energy(reference), both_time(reference))))
    return nullptr;
  return b;
}

std::string CandidateSet::summary() const {
  std::string s;
  for (const RehearsedCandidate& c : cands_)
    s += fmt::format("{}{} {:.3f} ms {:.4f} J (then {:.3f} ms {:.4f} J){}", s.empty() ? "" : ", ",
                     c.name, c.rehearsal.time_ns * 1e-6, c.rehearsal.energy_j,
                     c.rehearsal.next_time_ns * 1e-6, c.rehearsal.next_energy_j,
                     c.feasible ? "" : " (over budget)");
  return s;
}

}  // namespace dvfsim::plan
