#include "hw/measurement.h"

#include <fmt/format.h>

#include <algorithm>

#include "hw/command_util.h"
#include "hw/describe.h"
#include "hw/files.h"

namespace dvfsim::hw {
namespace {

constexpr double kSecondsPerNs = 1e-9;

std::string optional_number(const std::optional<double>& value) {
  return value ? json_number(*value) : "null";
}

std::string string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : ", ") + json_quote(items[i]);
  }
  return out + "]";
}

std::string gpu_json(const GpuSeries& gpu, const EnergyEstimate& estimate, double duration_s) {
  double max_power_w = 0;
  for (const auto& sample : gpu.samples) {
    max_power_w = std::max(max_power_w, sample.power_instant_w.value_or(sample.power_avg_w));
  }
  std::string out = "    {\n";
  out += fmt::format("      \"index\": {},\n", gpu.index);
  out += fmt::format("      \"name\": {},\n", json_quote(gpu.name));
  out += fmt::format("      \"energy_j\": {},\n", json_number(estimate.energy_j));
  out += fmt::format("      \"energy_uncertainty_j\": {},\n", json_number(estimate.uncertainty_j));
  out += fmt::format("      \"energy_lower_bound_j\": {},\n", json_number(estimate.lower_bound_j));
  out += fmt::format("      \"energy_upper_bound_j\": {},\n", json_number(estimate.upper_bound_j));
  out += fmt::format("      \"energy_method\": {},\n", json_quote(estimate.method));
  out += fmt::format("      \"mean_power_w\": {},\n",
                     json_number(duration_s > 0 ? estimate.energy_j / duration_s : 0));
  out += fmt::format("      \"max_power_w\": {},\n", json_number(max_power_w));
  out += fmt::format("      \"counter_tick_period_s\": {},\n",
                     optional_number(estimate.tick_period_s));
  out += fmt::format("      \"counter_ticks\": {},\n", estimate.ticks_observed);
  out += fmt::format("      \"instantaneous_power\": {},\n", gpu.has_instant_power);
  out += fmt::format("      \"sample_count\": {}\n", gpu.samples.size());
  return out + "    }";
}

}  // namespace

std::vector<EnergySample> energy_samples(const GpuSeries& series) {
  std::vector<EnergySample> out;
  out.reserve(series.samples.size());
  for (const auto& sample : series.samples) {
    out.push_back(
        {sample.t_ns, sample.power_instant_w.value_or(sample.power_avg_w), sample.energy_mj});
  }
  return out;
}

std::vector<EnergyEstimate> estimate_all(const MeasuredRun& run,
                                         const std::vector<GpuSeries>& series) {
  std::vector<EnergyEstimate> estimates;
  for (const auto& gpu : series) {
    estimates.push_back(estimate_energy(energy_samples(gpu), run.start_ns, run.end_ns));
  }
  return estimates;
}

std::string format_measurement_json(const MeasuredRun& run, const std::vector<GpuSeries>& series,
                                    const std::vector<EnergyEstimate>& estimates) {
  double duration_s = static_cast<double>(run.end_ns - run.start_ns) * kSecondsPerNs;
  double energy_j = 0;
  double uncertainty_j = 0;
  std::optional<double> tick_period_s;
  for (const auto& estimate : estimates) {
    energy_j += estimate.energy_j;
    uncertainty_j += estimate.uncertainty_j;
    if (estimate.tick_period_s) {
      tick_period_s = std::max(tick_period_s.value_or(0), *estimate.tick_period_s);
    }
  }
  std::vector<std::string> names;
  for (const auto& gpu : series) {
    if (std::find(names.begin(), names.end(), gpu.name) == names.end()) names.push_back(gpu.name);
  }
  std::string device;
  for (const auto& name : names) device += (device.empty() ? "" : ", ") + name;

  std::string out = "{\n";
  out += fmt::format("  \"format\": {},\n", json_quote(kMeasurementFormat));
  out += fmt::format("  \"command\": {},\n", string_array(run.command));
  out += fmt::format("  \"exit_code\": {},\n", run.exit_code);
  out += fmt::format("  \"forwarded_signal\": {},\n",
                     run.forwarded_signal ? std::to_string(*run.forwarded_signal) : "null");
  out += fmt::format("  \"start_utc\": {},\n", json_quote(utc_timestamp(run.start_wall)));
  out += fmt::format("  \"end_utc\": {},\n", json_quote(utc_timestamp(run.end_wall)));
  out += fmt::format("  \"duration_s\": {},\n", json_number(duration_s));
  out += fmt::format("  \"energy_j\": {},\n", json_number(energy_j));
  out += fmt::format("  \"energy_uncertainty_j\": {},\n", json_number(uncertainty_j));
  out += fmt::format("  \"mean_power_w\": {},\n",
                     json_number(duration_s > 0 ? energy_j / duration_s : 0));
  out += fmt::format("  \"counter_tick_period_s\": {},\n", optional_number(tick_period_s));
  out += fmt::format("  \"sample_interval_ms\": {},\n", run.interval_ms);
  out +=
      fmt::format("  \"sample_count\": {},\n", series.empty() ? 0 : series.front().samples.size());
  out += fmt::format("  \"device\": {},\n", json_quote(device));
  out += fmt::format("  \"driver\": {},\n", json_quote(run.driver));
  out += fmt::format("  \"nvml_library\": {},\n", json_quote(run.nvml_library));
  out += fmt::format("  \"notes\": {},\n", string_array(run.notes));
  out += "  \"gpus\": [\n";
  for (size_t i = 0; i < series.size(); ++i) {
    out += gpu_json(series[i], estimates[i], duration_s);
    out += i + 1 < series.size() ? ",\n" : "\n";
  }
  out += "  ]\n}\n";
  return out;
}

std::string format_samples_csv(const MeasuredRun& run, const std::vector<GpuSeries>& series) {
  std::string out =
      "t_s,gpu,power_avg_w,power_instant_w,sm_mhz,mem_mhz,energy_j,reasons,reason_names\n";
  // Rows in time order across GPUs.
  struct Row {
    int64_t t_ns;
    size_t gpu;
    size_t sample;
  };
  std::vector<Row> rows;
  for (size_t g = 0; g < series.size(); ++g) {
    for (size_t i = 0; i < series[g].samples.size(); ++i) {
      rows.push_back({series[g].samples[i].t_ns, g, i});
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.t_ns < b.t_ns; });
  for (const Row& row : rows) {
    const GpuSeries& gpu = series[row.gpu];
    const GpuSample& sample = gpu.samples[row.sample];
    const GpuSample& first = gpu.samples.front();
    std::string energy;
    if (sample.energy_mj && first.energy_mj && *sample.energy_mj >= *first.energy_mj) {
      energy =
          fmt::format("{:.3f}", static_cast<double>(*sample.energy_mj - *first.energy_mj) * 1e-3);
    }
    out += fmt::format("{:.6f},{},{:.3f},{},{},{},{},{},{}\n",
                       static_cast<double>(sample.t_ns - run.start_ns) * kSecondsPerNs, gpu.index,
                       sample.power_avg_w,
                       sample.power_instant_w ? fmt::format("{:.3f}", *sample.power_instant_w) : "",
                       sample.sm_mhz, sample.memory_mhz, energy,
                       sample.reasons ? fmt::format("0x{:x}", *sample.reasons) : "",
                       sample.reasons ? clock_event_reason_names(*sample.reasons) : "");
  }
  return out;
}

}  // namespace dvfsim::hw
