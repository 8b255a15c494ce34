#include "hw/sampler.h"

#include <fmt/format.h>

#include "hw/energy.h"
#include "hw/nvml.h"

namespace dvfsim::hw {
namespace {

constexpr double kWattsPerMw = 1e-3;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool not_supported(const std::exception& error) {
  if (dynamic_cast<const NvmlUnavailable*>(&error) != nullptr) return true;
  const auto* nvml_error = dynamic_cast<const NvmlError*>(&error);
  return nvml_error != nullptr && nvml_error->code() == nvml_const::kErrorNotSupported;
}

}  // namespace

Sampler::Sampler(const Nvml& nvml, const std::vector<unsigned>& gpus,
                 std::chrono::milliseconds interval)
    : nvml_(nvml), interval_(interval) {
  for (unsigned index : gpus) {
    GpuSeries series;
    series.index = index;
    series.device = nvml.device(index);
    series.name = nvml.name(series.device);
    series_.push_back(std::move(series));
  }
}

Sampler::~Sampler() {
  stop_now_ = true;
  if (thread_.joinable()) thread_.join();
}

void Sampler::probe() {
  for (auto& gpu : series_) {
    gpu.has_instant_power =
        nvml_.field_value(gpu.device, nvml_const::kFieldPowerInstant).has_value();
    if (!gpu.has_instant_power) {
      notes_.push_back(fmt::format(
          "GPU {}: instantaneous power (nvmlDeviceGetFieldValues field 186) is not available; "
          "power_instant_w is empty",
          gpu.index));
    }
    try {
      nvml_.total_energy_mj(gpu.device);
      gpu.has_energy_counter = true;
    } catch (const std::exception& error) {
      if (!not_supported(error)) throw;
      notes_.push_back(
          fmt::format("GPU {}: no energy counter ({}); energy integrates the power readings",
                      gpu.index, error.what()));
    }
    try {
      nvml_.clocks_event_reasons(gpu.device);
      gpu.has_reasons = true;
    } catch (const std::exception& error) {
      if (!not_supported(error)) throw;
      notes_.push_back(fmt::format("GPU {}: clock-event reasons are not available ({})", gpu.index,
                                   error.what()));
    }
  }
}

void Sampler::sample_all() {
  for (auto& gpu : series_) {
    GpuSample sample;
    sample.t_ns = now_ns();
    if (gpu.has_energy_counter) sample.energy_mj = nvml_.total_energy_mj(gpu.device);
    sample.power_avg_w = nvml_.power_usage_mw(gpu.device) * kWattsPerMw;
    if (gpu.has_instant_power) {
      if (auto mw = nvml_.field_value(gpu.device, nvml_const::kFieldPowerInstant)) {
        sample.power_instant_w = *mw * kWattsPerMw;
      }
    }
    sample.sm_mhz = nvml_.clock_mhz(gpu.device, nvml_const::kClockSm);
    sample.memory_mhz = nvml_.clock_mhz(gpu.device, nvml_const::kClockMemory);
    if (gpu.has_reasons) sample.reasons = nvml_.clocks_event_reasons(gpu.device);
    gpu.samples.push_back(sample);
  }
}

void Sampler::start() {
  probe();
  sample_all();
  thread_ = std::thread([this] { run(); });
}

bool Sampler::tail_complete() const {
  int64_t end_ns = end_ns_.load();
  if (end_ns == INT64_MAX) return false;
  if (now_ns() >= give_up_ns_.load()) return true;
  for (const auto& gpu : series_) {
    if (!gpu.has_energy_counter) continue;
    std::vector<EnergySample> counter;
    for (const auto& sample : gpu.samples) {
      if (sample.t_ns >= end_ns - 1) counter.push_back({sample.t_ns, 0, sample.energy_mj});
    }
    if (!has_tick_after(counter, end_ns)) return false;
  }
  return true;
}

void Sampler::run() {
  auto next = std::chrono::steady_clock::now();
  try {
    while (!stop_now_) {
      next += interval_;
      auto now = std::chrono::steady_clock::now();
      if (next < now) next = now;  // fell behind: do not burst
      std::this_thread::sleep_until(next);
      sample_all();
      if (tail_complete()) break;
    }
  } catch (...) {
    error_ = std::current_exception();
  }
}

void Sampler::finish(std::chrono::steady_clock::time_point end, std::chrono::nanoseconds max_tail) {
  int64_t end_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(end.time_since_epoch()).count();
  give_up_ns_ = end_ns + max_tail.count();
  end_ns_ = end_ns;
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(error_);
}

}  // namespace dvfsim::hw
