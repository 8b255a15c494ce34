#pragma once
// Samples NVML power, clocks, clock-event reasons and the energy counter of some
// GPUs at a fixed interval in a background thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hw/nvml_types.h"

namespace dvfsim::hw {

class Nvml;

struct GpuSample {
  int64_t t_ns = 0;        // steady clock, nanoseconds since its epoch
  double power_avg_w = 0;  // nvmlDeviceGetPowerUsage (a 1 s average on Ampere and newer)
  std::optional<double> power_instant_w;  // field 186, when supported
  unsigned sm_mhz = 0;
  unsigned memory_mhz = 0;
  std::optional<unsigned long long> energy_mj;  // nvmlDeviceGetTotalEnergyConsumption
  std::optional<unsigned long long> reasons;    // clock-event reason bits
};

struct GpuSeries {
  unsigned index = 0;
  nvmlDevice_t device = nullptr;
  std::string name;
  bool has_instant_power = false;
  bool has_energy_counter = false;
  bool has_reasons = false;
  std::vector<GpuSample> samples;
};

class Sampler {
 public:
  Sampler(const Nvml& nvml, const std::vector<unsigned>& gpus, std::chrono::milliseconds interval);
  ~Sampler();  // stops and joins the thread
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Takes a first sample of every GPU in the calling thread, finding out which
  // optional readings the GPUs support (NVML errors other than "not supported"
  // throw), then starts the sampling thread.
  void start();
  // Keeps sampling past `end` until every GPU's energy counter has ticked after it
  // (or `max_tail` has passed), then stops. Rethrows an error from the thread.
  void finish(std::chrono::steady_clock::time_point end, std::chrono::nanoseconds max_tail);

  // Valid after finish().
  const std::vector<GpuSeries>& series() const { return series_; }
  // Readings found unavailable, one line each.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void probe();
  void sample_all();
  void run();
  bool tail_complete() const;

  const Nvml& nvml_;
  std::chrono::milliseconds interval_;
  std::vector<GpuSeries> series_;
  std::vector<std::string> notes_;
  std::thread thread_;
  std::atomic<bool> stop_now_{false};
  std::atomic<int64_t> end_ns_{INT64_MAX};
  std::atomic<int64_t> give_up_ns_{INT64_MAX};
  std::exception_ptr error_;
};

}  // namespace dvfsim::hw
