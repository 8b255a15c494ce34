#pragma once
// Turns a time-windows clock plan into the sequence of clock changes to make.
#include <cstdint>
#include <optional>

#include "hw/plan.h"

namespace dvfsim::hw {

struct ScheduledChange {
  int64_t at_ms = 0;  // since the command started
  ClockSetting clocks;
};

// Yields the plan's windows in time order, repeating every period_ms when it is
// positive. A window whose clocks equal the previous change's is skipped.
class PlanSchedule {
 public:
  explicit PlanSchedule(const ClockPlan& plan);
  // The next change, or nullopt when a non-repeating plan is exhausted.
  std::optional<ScheduledChange> next();

 private:
  ClockPlan plan_;
  size_t window_ = 0;
  int64_t period_start_ms_ = 0;
  std::optional<ClockSetting> last_;
};

}  // namespace dvfsim::hw
