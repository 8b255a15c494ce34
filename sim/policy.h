#pragma once
// The interface DVFS policies implement (docs/design.md, "Policies"). The engine
// calls a policy when a kernel is about to start, when it ends, and on timers
// the policy asks for; the policy answers with clock requests, which go through
// the engine's switch model like any real request.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/models.h"
#include "sim/result.h"
#include "sim/workload.h"

namespace dvfsim {

// What a policy may see and do. Online policies must only read kernels up to
// the one being started; a policy that reads further is an oracle and must be
// registered as one.
class WarmFirmwareCache;  // sim/gpu_timeline.h

class PolicyContext {
 public:
  virtual ~PolicyContext() = default;
  virtual std::int64_t now_ns() const = 0;
  // Asks for new clocks; they land after the switch latency. Throws InputError
  // when the pair is not supported by the device.
  virtual void request(std::int32_t core_mhz, std::int32_t memory_mhz) = 0;
  // Calls on_timer at `at_ns` (one timer at a time; a later call replaces it).
  virtual void set_timer(std::int64_t at_ns) = 0;
  // The clocks the GPU runs at now (after switches and the power cap).
  virtual Clocks effective() const = 0;
  // The last clocks the policy asked for.
  virtual Clocks wanted() const = 0;
  // The mean switch latency the policy should expect, per domain.
  virtual double expected_core_switch_ns() const = 0;
  virtual double expected_memory_switch_ns() const = 0;
  // The latency a fraction `q` (0..1) of switches land within, per domain:
  // what a policy that must not be late plans with.
  virtual double core_switch_quantile_ns(double q) const = 0;
  virtual double memory_switch_quantile_ns(double q) const = 0;
  // How long the GPU stalls when a memory switch of the mean latency lands.
  virtual double expected_memory_stall_ns() const = 0;

  virtual const Device& device() const = 0;
  virtual const Workload& workload() const = 0;
  virtual const std::vector<KernelCost>& costs() const = 0;
  virtual const LatencyModel& latency() const = 0;
  virtual const PowerModel& power() const = 0;
  // The firmware that caps the core clock (nullptr when the cap is off).
  virtual const Governor* governor() const = 0;
  // The baseline run on the same device and trace, when there is one.
  virtual const RunResult* baseline() const = 0;
  // The firmware warm-ups of this run's replays, for a planner's own
  // replays of the run (nullptr: none kept).
  virtual WarmFirmwareCache* warm_firmware_cache() const { return nullptr; }
};

class Policy {
 public:
  virtual ~Policy() = default;
  // Before the replay, at time 0. A policy sets its first clocks here.
  virtual void begin(PolicyContext& /*ctx*/) {}
  virtual void on_kernel_start(PolicyContext& /*ctx*/, std::uint32_t /*kernel*/) {}
  virtual void on_kernel_end(PolicyContext& /*ctx*/, std::uint32_t /*kernel*/) {}
  virtual void on_timer(PolicyContext& /*ctx*/) {}
  // False for a policy whose on_kernel_start and on_kernel_end do nothing
  // (its clocks set in begin(), or on timers): the engine then runs the
  // kernels of one stream without calling them, through the timeline's
  // quick path while nothing else happens (sim/engine.cpp). The numbers are
  // the same either way.
  virtual bool acts_per_kernel() const { return true; }

  // What the policy reports of its planning (solver gap, rounds) and notes on
  // what it decided; the runner copies both into the run's RunResult.
  const std::vector<SolveReport>& solve_reports() const { return solve_reports_; }
  const std::vector<std::string>& notes() const { return notes_; }

 protected:
  void report(SolveReport r) { solve_reports_.push_back(std::move(r)); }
  void note(std::string line) { notes_.push_back(std::move(line)); }

 private:
  std::vector<SolveReport> solve_reports_;
  std::vector<std::string> notes_;
};

}  // namespace dvfsim
