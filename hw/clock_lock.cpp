#include "hw/clock_lock.h"

#include <fmt/format.h>

#include <exception>
#include <iostream>

#include "hw/marker.h"
#include "hw/nvml.h"

namespace dvfsim::hw {

ClockLock::ClockLock(const Nvml& nvml, std::vector<unsigned> gpus, std::string marker_path)
    : nvml_(nvml),
      gpus_(std::move(gpus)),
      marker_path_(std::move(marker_path)),
      marker_(marker_for_this_process(gpus_)) {
  write_marker(marker_, marker_path_);
}

ClockLock::~ClockLock() {
  if (!active_ || reset_failed_) return;
  try {
    reset();
  } catch (const std::exception& error) {
    std::cerr << fmt::format(
        "dvfsim hw: error: could not restore default clocks or power limits: {}; the marker "
        "{} stays so "
        "that the next dvfsim hw command retries\n",
        error.what(), marker_path_);
  }
}

void ClockLock::set(const ClockSetting& clocks) {
  for (unsigned gpu : gpus_) {
    nvmlDevice_t device = nvml_.device(gpu);
    auto core = static_cast<unsigned>(clocks.core_mhz);
    nvml_.set_gpu_locked_clocks(device, core, core);
    if (clocks.memory_mhz > 0) {
      auto memory = static_cast<unsigned>(clocks.memory_mhz);
      nvml_.set_memory_locked_clocks(device, memory, memory);
    }
  }
  ++changes_;
}

void ClockLock::set_core(unsigned mhz) {
  for (unsigned gpu : gpus_) nvml_.set_gpu_locked_clocks(nvml_.device(gpu), mhz, mhz);
  ++changes_;
}

void ClockLock::set_memory(unsigned mhz) {
  for (unsigned gpu : gpus_) nvml_.set_memory_locked_clocks(nvml_.device(gpu), mhz, mhz);
  ++changes_;
}

void ClockLock::set_power_limit(int watts) {
  const auto mw = static_cast<unsigned>(watts) * 1000u;
  for (unsigned gpu : gpus_) {
    nvmlDevice_t device = nvml_.device(gpu);
    bool recorded = false;
    for (const auto& [g, before] : marker_.power_limits_mw) recorded = recorded || g == gpu;
    if (!recorded) {
      marker_.power_limits_mw.emplace_back(gpu, nvml_.power_limit_mw(device));
      write_marker(marker_, marker_path_);  // before the change: a crash can undo it
    }
    try {
      nvml_.set_power_limit_mw(device, mw);
    } catch (...) {
      if (!recorded) {  // the limit did not change: nothing to restore on this GPU
        marker_.power_limits_mw.pop_back();
        write_marker(marker_, marker_path_);
      }
      throw;
    }
  }
}

void ClockLock::reset() {
  if (!active_) return;
  std::exception_ptr first_error;
  for (unsigned gpu : gpus_) {
    try {
      reset_locked_clocks(nvml_, gpu);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  for (const auto& [gpu, mw] : marker_.power_limits_mw) {
    try {
      restore_power_limit(nvml_, gpu, mw);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) {
    reset_failed_ = true;
    std::rethrow_exception(first_error);
  }
  active_ = false;
  remove_marker(marker_path_);
}

}  // namespace dvfsim::hw
