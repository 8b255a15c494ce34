#include "hw/clock_lock.h"

#include <fmt/format.h>

#include <exception>
#include <iostream>

#include "hw/marker.h"
#include "hw/nvml.h"

namespace dvfsim::hw {

ClockLock::ClockLock(const Nvml& nvml, std::vector<unsigned> gpus, std::string marker_path)
    : nvml_(nvml), gpus_(std::move(gpus)), marker_path_(std::move(marker_path)) {
  write_marker(marker_for_this_process(gpus_), marker_path_);
}

ClockLock::~ClockLock() {
  if (!active_ || reset_failed_) return;
  try {
    reset();
  } catch (const std::exception& error) {
    std::cerr << fmt::format(
        "dvfsim hw apply: error: could not restore default clocks: {}; the marker {} stays so "
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
  if (first_error) {
    reset_failed_ = true;
    std::rethrow_exception(first_error);
  }
  active_ = false;
  remove_marker(marker_path_);
}

}  // namespace dvfsim::hw
