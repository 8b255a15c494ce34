#include "hw/plan_schedule.h"

namespace dvfsim::hw {

PlanSchedule::PlanSchedule(const ClockPlan& plan) : plan_(plan) {}

std::optional<ScheduledChange> PlanSchedule::next() {
  // A repeating plan whose windows all hold the same clocks has one change only.
  size_t skipped_in_a_row = 0;
  while (true) {
    if (window_ == plan_.windows.size()) {
      if (plan_.period_ms <= 0 || plan_.windows.empty()) return std::nullopt;
      window_ = 0;
      period_start_ms_ += plan_.period_ms;
    }
    const ClockWindow& window = plan_.windows[window_++];
    ScheduledChange change{period_start_ms_ + window.start_ms, window.clocks};
    bool same = last_ && last_->core_mhz == change.clocks.core_mhz &&
                last_->memory_mhz == change.clocks.memory_mhz;
    if (!same) {
      last_ = change.clocks;
      return change;
    }
    if (++skipped_in_a_row > plan_.windows.size()) return std::nullopt;
  }
}

}  // namespace dvfsim::hw
