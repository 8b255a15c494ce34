#include "policies/online/rehearsal.h"

#include <cmath>

#include "sim/timeline_context.h"

namespace dvfsim::plan {

namespace {

class Context final : public TimelineContext<PolicyContext> {
 public:
  using TimelineContext::TimelineContext;
  GpuTimeline& timeline() { return tl_; }
};

class Driver final : public Policy {
 public:
  Switcher switcher;
  void on_timer(PolicyContext& ctx) override {
    if (switcher.active()) switcher.on_timer(ctx);
  }
};

LatencyDistribution fixed_us(double ns) {
  LatencyDistribution d;
  d.value_us = ns * 1e-3;
  return d;
}

}  // namespace

Rehearsal rehearse(const PolicyContext& ctx, const std::vector<ItemSpec>& items,
                   const std::vector<Switcher::Step>* steps, bool early,
                   const RehearsalStart& start) {
  Rehearsal r;
  const std::size_t n = items.size();
  if (n == 0) return r;
  // Each domain at its expected latency, as an oracle's replay does.
  Device dev = ctx.device();
  dev.core_switch = fixed_us(ctx.expected_core_switch_ns());
  dev.memory_switch = fixed_us(ctx.expected_memory_switch_ns());
  ContextInputs in;
  in.device = &dev;
  in.workload = &ctx.workload();  // not read: the policy sees only the learned items
  in.costs = &ctx.costs();
  in.latency = &ctx.latency();
  in.power = &ctx.power();
  in.governor = ctx.governor();
  in.policy_name = "rehearsal";
  TimelineConfig tc;
  tc.core_switch = dev.core_switch;
  tc.memory_switch = dev.memory_switch;
  tc.memory_stall_ns = static_cast<std::int64_t>(std::llround(ctx.expected_memory_stall_ns()));
  tc.record_switches = false;
  Driver driver;
  Context c(in, &driver, tc);
  GpuTimeline& tl = c.timeline();
  if (start.cap_mhz > 0) tl.set_cap(start.cap_mhz);
  const Device& d = ctx.device();
  const Clocks from = start.from.memory_mhz != 0 ? start.from : default_clocks(d);
  tl.set_clocks_now(from.core_mhz, from.memory_mhz);
  tl.start(0);
  if (steps) driver.switcher.set_plan(*steps, early);
  FinishedKernel done;
  r.next_step_ns.assign(n, 0.0);
  r.step_ns.assign(n, 0.0);
  double first_end_ns = 0, first_energy_j = 0, next_begin_ns = 0;
  for (int copy = 0; copy < 2; ++copy) {
    // The host's delay against the learned iteration: where a kernel's start
    // waited for the host, its launch is the learned one moved by this (the
    // host kept launching while the GPU ran late). Only a kernel launched
    // after a host synchronisation moves it (to that kernel's start): the
    // host waited for the GPU there, and nowhere else, as in the engine.
    std::int64_t origin = 0, host_delay = 0;
    for (std::size_t i = 0; i < n; ++i) {
      tl.fire_due_events();
      if (steps) driver.switcher.on_start(c, static_cast<int>(i));
      tl.fire_due_events();
      const std::int64_t begin = tl.now();
      if (i == 0) {
        origin = begin;
        host_delay = 0;
      } else if (items[i].launched_after_sync && items[i].observed_start_ns >= 0) {
        host_delay = std::max(
            host_delay,
            begin - origin - static_cast<std::int64_t>(std::llround(items[i].observed_start_ns)));
      }
      if (copy == 1 && i == 0) next_begin_ns = static_cast<double>(begin);
      tl.begin_kernel(items[i].cost, items[i].time_scale, static_cast<std::int32_t>(i));
      while (!tl.advance(GpuTimeline::kNever, &done)) {
      }
      (copy == 0 ? r.step_ns : r.next_step_ns)[i] = static_cast<double>(tl.now() - begin);
      if (steps) driver.switcher.on_end(c);
      tl.fire_due_events();
      if (copy == 0 && i + 1 == n) {
        first_end_ns = static_cast<double>(tl.now());
        first_energy_j = tl.energy_j();
      }
      if (copy == 1 && i + 1 == n) break;
      // The host wait the kernel did not absorb (ItemSpec::floor_ns): until
      // the next kernel's launch; then its gap.
      const std::int64_t ready =
          items[i].floor_ns > 0 && i + 1 < n && items[i + 1].observed_start_ns >= 0
              ? origin + host_delay +
                    static_cast<std::int64_t>(std::llround(items[i + 1].observed_start_ns))
              : begin + static_cast<std::int64_t>(std::llround(items[i].floor_ns));
      if (ready > tl.now()) tl.advance(ready, &done);
      tl.advance(tl.now() + static_cast<std::int64_t>(std::llround(items[i].gap_ns)), &done);
    }
  }
  r.time_ns = first_end_ns;
  r.energy_j = first_energy_j;
  r.next_time_ns = static_cast<double>(tl.now()) - next_begin_ns;
  r.next_energy_j = tl.energy_j() - first_energy_j;
  r.switches = tl.clock_switches();
  return r;
}

struct NativeShadow::State {
  Device dev;
  GpuTimeline tl;
  State(const PolicyContext& ctx, const Device& d, const TimelineConfig& tc)
      : dev(d), tl(GpuModel{&dev, &ctx.latency(), &ctx.power(), ctx.governor()}, tc) {}
};

NativeShadow::~NativeShadow() = default;

NativeShadow::NativeShadow(const PolicyContext& ctx, const std::vector<ItemSpec>& items,
                           const RehearsalStart& start)
    : items_(items) {
  TimelineConfig tc;
  tc.record_switches = false;
  s_ = std::make_unique<State>(ctx, ctx.device(), tc);
  GpuTimeline& tl = s_->tl;
  if (start.cap_mhz > 0) tl.set_cap(start.cap_mhz);
  const Device& d = ctx.device();
  const Clocks def = default_clocks(d);
  tl.set_clocks_now(def.core_mhz, def.memory_mhz);
  tl.start(0);
}

double NativeShadow::run(std::size_t position, const KernelCost& cost) {
  if (position >= items_.size()) return 0.0;
  GpuTimeline& tl = s_->tl;
  const ItemSpec& it = items_[position];
  FinishedKernel done;
  tl.fire_due_events();
  const std::int64_t begin = tl.now();
  tl.begin_kernel(cost, it.time_scale, static_cast<std::int32_t>(position));
  while (!tl.advance(GpuTimeline::kNever, &done)) {
  }
  const double d = static_cast<double>(tl.now() - begin);
  tl.fire_due_events();
  const std::int64_t ready = begin + static_cast<std::int64_t>(std::llround(it.floor_ns));
  if (ready > tl.now()) tl.advance(ready, &done);
  tl.advance(tl.now() + static_cast<std::int64_t>(std::llround(it.gap_ns)), &done);
  return d;
}

}  // namespace dvfsim::plan
