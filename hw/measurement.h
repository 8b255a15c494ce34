#pragma once
// The files `dvfsim hw measure` writes: measurement.json and samples.csv.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/energy.h"
#include "hw/sampler.h"

namespace dvfsim::hw {

inline constexpr const char* kMeasurementFormat = "dvfsim-hw-measurement/1";

struct MeasuredRun {
  std::vector<std::string> command;
  int exit_code = 0;
  std::optional<int> forwarded_signal;
  std::chrono::system_clock::time_point start_wall;
  std::chrono::system_clock::time_point end_wall;
  int64_t start_ns = 0;  // steady clock, same base as GpuSample::t_ns
  int64_t end_ns = 0;
  int interval_ms = 0;
  std::string nvml_library;
  std::string driver;
  std::vector<std::string> notes;
};

// The samples of one GPU as energy-estimation input (instantaneous power when
// available, else the averaged reading).
std::vector<EnergySample> energy_samples(const GpuSeries& series);

// One estimate per GPU, in the order of `series`.
std::vector<EnergyEstimate> estimate_all(const MeasuredRun& run,
                                         const std::vector<GpuSeries>& series);

std::string format_measurement_json(const MeasuredRun& run, const std::vector<GpuSeries>& series,
                                    const std::vector<EnergyEstimate>& estimates);

// Columns: t_s (since the command started), gpu, power_avg_w, power_instant_w,
// sm_mhz, mem_mhz, energy_j (counter minus its first reading), reasons (hex),
// reason_names. Empty cells for readings a GPU does not support.
std::string format_samples_csv(const MeasuredRun& run, const std::vector<GpuSeries>& series);

}  // namespace dvfsim::hw
