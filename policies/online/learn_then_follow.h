#pragma once
// The shape of every online planner: learn, plan once, follow.
#include <cstdint>

#include "policies/online/learner.h"
#include "policies/online/switcher.h"
#include "sim/policy.h"

namespace dvfsim::plan {

// An online policy that learns the kernel sequence during a profiling
// iteration (SequenceLearner), makes its plan once when the sequence is known,
// and follows it with a Switcher from then on.
class LearnThenFollow : public Policy {
 public:
  void on_kernel_start(PolicyContext& ctx, std::uint32_t kernel) override {
    learner_.on_start(ctx, kernel);
    if (learner_.just_learned()) make_plan(ctx);
    if (switcher_.active()) switcher_.on_start(ctx, learner_.position());
  }
  void on_kernel_end(PolicyContext& ctx, std::uint32_t kernel) override {
    learner_.on_end(ctx, kernel);
    if (switcher_.active()) switcher_.on_end(ctx);
  }
  void on_timer(PolicyContext& ctx) override {
    if (switcher_.active()) switcher_.on_timer(ctx);
  }

 protected:
  // Called once, when the learner has the sequence; sets switcher_'s plan.
  virtual void make_plan(PolicyContext& ctx) = 0;

  SequenceLearner learner_;
  Switcher switcher_;
};

}  // namespace dvfsim::plan
