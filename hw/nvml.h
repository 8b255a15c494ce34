#pragma once
// A run-time binding to NVML: the library is opened with dlopen, so dvfsim has
// no link-time dependency on it and builds and runs on machines without a GPU.
// Only the calls dvfsim uses are resolved. Every failing call throws NvmlError
// naming the call and NVML's own error string.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hw/nvml_types.h"

namespace dvfsim::hw {

// Environment variable that overrides the NVML library path.
inline constexpr const char* kNvmlLibraryEnv = "DVFSIM_NVML_LIBRARY";
inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";

// The library to load: $DVFSIM_NVML_LIBRARY if set and non-empty, else libnvidia-ml.so.1.
std::string nvml_library_path();

// NVML could not be loaded, or lacks a call dvfsim needs.
class NvmlUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An NVML call returned an error.
class NvmlError : public std::runtime_error {
 public:
  NvmlError(std::string call, nvmlReturn_t code, const std::string& nvml_message);
  const std::string& call() const { return call_; }
  nvmlReturn_t code() const { return code_; }

 private:
  std::string call_;
  nvmlReturn_t code_;
};

class Nvml {
 public:
  // Loads the library at `library_path`, resolves the calls and runs nvmlInit_v2.
  explicit Nvml(const std::string& library_path);
  ~Nvml();  // nvmlShutdown, then dlclose
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& library_path() const { return library_path_; }

  std::string driver_version() const;
  unsigned device_count() const;
  nvmlDevice_t device(unsigned index) const;

  std::string name(nvmlDevice_t device) const;
  std::vector<unsigned> supported_memory_clocks_mhz(nvmlDevice_t device) const;
  std::vector<unsigned> supported_graphics_clocks_mhz(nvmlDevice_t device,
                                                      unsigned memory_mhz) const;
  unsigned clock_mhz(nvmlDevice_t device, nvmlClockType_t type) const;
  unsigned power_usage_mw(nvmlDevice_t device) const;
  unsigned long long total_energy_mj(nvmlDevice_t device) const;
  unsigned power_limit_mw(nvmlDevice_t device) const;
  std::pair<unsigned, unsigned> power_limit_constraints_mw(nvmlDevice_t device) const;
  unsigned long long clocks_event_reasons(nvmlDevice_t device) const;

  // True when the library exports nvmlDeviceGetFieldValues.
  bool has_field_values() const { return fn_.get_field_values != nullptr; }
  // One field as a double; nullopt when the library lacks nvmlDeviceGetFieldValues
  // or NVML reports the field as not supported.
  std::optional<double> field_value(nvmlDevice_t device, unsigned field_id) const;

  void set_gpu_locked_clocks(nvmlDevice_t device, unsigned min_mhz, unsigned max_mhz) const;
  void reset_gpu_locked_clocks(nvmlDevice_t device) const;
  void set_memory_locked_clocks(nvmlDevice_t device, unsigned min_mhz, unsigned max_mhz) const;
  void reset_memory_locked_clocks(nvmlDevice_t device) const;
  // nvmlDeviceSetPowerManagementLimit (root; the limit must lie inside the constraints).
  void set_power_limit_mw(nvmlDevice_t device, unsigned mw) const;

  // NVML's text for an error code (nvmlErrorString).
  std::string error_string(nvmlReturn_t code) const;

 private:
  struct Functions {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    const char* (*error_string)(nvmlReturn_t) = nullptr;
    nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
    nvmlReturn_t (*device_count)(unsigned*) = nullptr;
    nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*supported_memory_clocks)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
    nvmlReturn_t (*supported_graphics_clocks)(nvmlDevice_t, unsigned, unsigned*,
                                              unsigned*) = nullptr;
    nvmlReturn_t (*clock_info)(nvmlDevice_t, nvmlClockType_t, unsigned*) = nullptr;
    nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*power_limit_constraints)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
    nvmlReturn_t (*clocks_event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*get_field_values)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
    nvmlReturn_t (*set_gpu_locked_clocks)(nvmlDevice_t, unsigned, unsigned) = nullptr;
    nvmlReturn_t (*reset_gpu_locked_clocks)(nvmlDevice_t) = nullptr;
    nvmlReturn_t (*set_memory_locked_clocks)(nvmlDevice_t, unsigned, unsigned) = nullptr;
    nvmlReturn_t (*reset_memory_locked_clocks)(nvmlDevice_t) = nullptr;
    nvmlReturn_t (*set_power_limit)(nvmlDevice_t, unsigned) = nullptr;
  };

  void resolve_all();
  template <typename F>
  void resolve(F& slot, const char* symbol, bool required);
  // Throws NvmlError when `code` is not success.
  void check(nvmlReturn_t code, const char* call) const;
  template <typename F>
  F require(F fn, const char* call) const;

  std::string library_path_;
  void* handle_ = nullptr;
  bool initialised_ = false;
  const char* clocks_event_reasons_symbol_ = "nvmlDeviceGetCurrentClocksEventReasons";
  Functions fn_;
};

// Opens NVML at nvml_library_path().
std::unique_ptr<Nvml> open_nvml();

}  // namespace dvfsim::hw
