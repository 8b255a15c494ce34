#include "policies/online/rehearsal_plan.h"

#include <fmt/format.h>

#include "policies/planning/kernel_plan.h"

namespace dvfsim::plan {

CandidateSet::CandidateSet(const PolicyContext& ctx, const std::vector<Observed>& /*seq*/,
                           const std::vector<ItemSpec>& items, const RehearsalStart& start,
                           const Objective& objective, double budget_ns)
    : ctx_(ctx), items_(items), start_(start), objective_(objective), budget_ns_(budget_ns) {}

void CandidateSet::consider(const std::string& name, bool early,
                            const std::function<Proposal(double)>& plan) {
  double tighten = 0;
  for (int attempt = 0; attempt < kRehearsalChecks; ++attempt) {
    const Proposal p = plan(tighten);
    if (!p.have) return;
    RehearsedCandidate c;
    c.name = name;
    c.early = early;
    c.steps.resize(p.pairs.size());
    for (std::size_t i = 0; i < p.pairs.size(); ++i) {
      c.steps[i].pair = p.pairs[i];
      c.steps[i].duration_ns = p.emulation.time_of_step[i];
      c.steps[i].gap_ns = idle_after_ns(items_[i], p.emulation.time_of_step[i]);
    }
    c.rehearsal = rehearse(ctx_, items_, &c.steps, early, start_);
    ++rehearsals_;
    c.feasible = !objective_.time_bounded() || c.rehearsal.time_ns <= budget_ns_;
    const double overshoot = c.rehearsal.time_ns - budget_ns_;
    const bool feasible = c.feasible;
    cands_.push_back(std::move(c));
    if (feasible || overshoot > kHopelessOvershoot * budget_ns_) return;
    tighten += tightening_ns(overshoot, budget_ns_);
  }
}

const RehearsedCandidate* CandidateSet::best(const Rehearsal& reference) const {
  const RehearsedCandidate* b = nullptr;
  for (const RehearsedCandidate& c : cands_)
    if (c.feasible && (!b || objective_.score(c.rehearsal.energy_j, c.rehearsal.time_ns) <
                                 objective_.score(b->rehearsal.energy_j, b->rehearsal.time_ns)))
      b = &c;
  // A plan that saves less than kMinSaving of the reference is the default
  // clocks in all but rounding: hold them (no saving below the noise).
  if (b && objective_.time_bounded() &&
      !(b->rehearsal.energy_j < reference.energy_j * (1 - kMinSaving)))
    return nullptr;
  if (b && !objective_.time_bounded() &&
      !(objective_.score(b->rehearsal.energy_j, b->rehearsal.time_ns) <
        objective_.score(reference.energy_j, reference.time_ns)))
    return nullptr;
  return b;
}

std::string CandidateSet::summary() const {
  std::string s;
  for (const RehearsedCandidate& c : cands_)
    s += fmt::format("{}{} {:.3f} ms {:.4f} J{}", s.empty() ? "" : ", ", c.name,
                     c.rehearsal.time_ns * 1e-6, c.rehearsal.energy_j,
                     c.feasible ? "" : " (over budget)");
  return s;
}

}  // namespace dvfsim::plan
