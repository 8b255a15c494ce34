#include "hw/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace dvfsim::hw {
namespace {

constexpr nvmlReturn_t kErrorInsufficientSize = 7;
constexpr unsigned kNameBufferSize = 96;
constexpr unsigned kDriverBufferSize = 96;

}  // namespace

std::string nvml_library_path() {
  const char* env = std::getenv(kNvmlLibraryEnv);
  if (env != nullptr && env[0] != '\0') return env;
  return kDefaultNvmlLibrary;
}

NvmlError::NvmlError(std::string call, nvmlReturn_t code, const std::string& nvml_message)
    : std::runtime_error(fmt::format("{} failed: {} (NVML error {})", call, nvml_message, code)),
      call_(std::move(call)),
      code_(code) {}

Nvml::Nvml(const std::string& library_path) : library_path_(library_path) {
  handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    throw NvmlUnavailable(fmt::format(
        "cannot load NVML (the NVIDIA Management Library) from '{}': {}; is an NVIDIA driver "
        "installed? Set {} to the library's path to override",
        library_path, why != nullptr ? why : "unknown error", kNvmlLibraryEnv));
  }
  try {
    resolve_all();
    check(fn_.init(), "nvmlInit_v2");
    initialised_ = true;
  } catch (...) {
    dlclose(handle_);
    handle_ = nullptr;
    throw;
  }
}

Nvml::~Nvml() {
  if (initialised_) fn_.shutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

template <typename F>
void Nvml::resolve(F& slot, const char* symbol, bool required) {
  dlerror();
  void* address = dlsym(handle_, symbol);
  if (address == nullptr) {
    if (required) {
      throw NvmlUnavailable(fmt::format("NVML library '{}' does not export {}, which dvfsim needs",
                                        library_path_, symbol));
    }
    slot = nullptr;
    return;
  }
  slot = reinterpret_cast<F>(address);
}

void Nvml::resolve_all() {
  resolve(fn_.init, "nvmlInit_v2", true);
  resolve(fn_.shutdown, "nvmlShutdown", true);
  resolve(fn_.error_string, "nvmlErrorString", true);
  resolve(fn_.driver_version, "nvmlSystemGetDriverVersion", true);
  resolve(fn_.device_count, "nvmlDeviceGetCount_v2", true);
  resolve(fn_.handle_by_index, "nvmlDeviceGetHandleByIndex_v2", true);
  resolve(fn_.name, "nvmlDeviceGetName", true);
  resolve(fn_.supported_memory_clocks, "nvmlDeviceGetSupportedMemoryClocks", true);
  resolve(fn_.supported_graphics_clocks, "nvmlDeviceGetSupportedGraphicsClocks", true);
  resolve(fn_.clock_info, "nvmlDeviceGetClockInfo", true);
  resolve(fn_.power_usage, "nvmlDeviceGetPowerUsage", true);
  resolve(fn_.power_limit, "nvmlDeviceGetPowerManagementLimit", true);
  resolve(fn_.power_limit_constraints, "nvmlDeviceGetPowerManagementLimitConstraints", true);
  // Calls that older drivers or GPUs may lack; a missing one fails when used.
  resolve(fn_.total_energy, "nvmlDeviceGetTotalEnergyConsumption", false);
  resolve(fn_.get_field_values, "nvmlDeviceGetFieldValues", false);
  resolve(fn_.clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons", false);
  if (fn_.clocks_event_reasons == nullptr) {
    clocks_event_reasons_symbol_ = "nvmlDeviceGetCurrentClocksThrottleReasons";
    resolve(fn_.clocks_event_reasons, clocks_event_reasons_symbol_, false);
  }
  resolve(fn_.set_gpu_locked_clocks, "nvmlDeviceSetGpuLockedClocks", false);
  resolve(fn_.reset_gpu_locked_clocks, "nvmlDeviceResetGpuLockedClocks", false);
  resolve(fn_.set_memory_locked_clocks, "nvmlDeviceSetMemoryLockedClocks", false);
  resolve(fn_.reset_memory_locked_clocks, "nvmlDeviceResetMemoryLockedClocks", false);
  resolve(fn_.set_power_limit, "nvmlDeviceSetPowerManagementLimit", false);
}

std::string Nvml::error_string(nvmlReturn_t code) const {
  const char* text = fn_.error_string != nullptr ? fn_.error_string(code) : nullptr;
  return text != nullptr ? text : "unknown NVML error";
}

void Nvml::check(nvmlReturn_t code, const char* call) const {
  if (code != nvml_const::kSuccess) throw NvmlError(call, code, error_string(code));
}

template <typename F>
F Nvml::require(F fn, const char* call) const {
  if (fn == nullptr) {
    throw NvmlUnavailable(fmt::format("NVML library '{}' does not export {}", library_path_, call));
  }
  return fn;
}

std::string Nvml::driver_version() const {
  char buffer[kDriverBufferSize] = {};
  check(fn_.driver_version(buffer, kDriverBufferSize), "nvmlSystemGetDriverVersion");
  buffer[kDriverBufferSize - 1] = '\0';
  return buffer;
}

unsigned Nvml::device_count() const {
  unsigned count = 0;
  check(fn_.device_count(&count), "nvmlDeviceGetCount_v2");
  return count;
}

nvmlDevice_t Nvml::device(unsigned index) const {
  nvmlDevice_t device = nullptr;
  check(fn_.handle_by_index(index, &device), "nvmlDeviceGetHandleByIndex_v2");
  return device;
}

std::string Nvml::name(nvmlDevice_t device) const {
  char buffer[kNameBufferSize] = {};
  check(fn_.name(device, buffer, kNameBufferSize), "nvmlDeviceGetName");
  buffer[kNameBufferSize - 1] = '\0';
  return buffer;
}

std::vector<unsigned> Nvml::supported_memory_clocks_mhz(nvmlDevice_t device) const {
  std::vector<unsigned> mhz(64);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto count = static_cast<unsigned>(mhz.size());
    nvmlReturn_t code = fn_.supported_memory_clocks(device, &count, mhz.data());
    if (code == kErrorInsufficientSize && count > mhz.size()) {
      mhz.resize(count);
      continue;
    }
    check(code, "nvmlDeviceGetSupportedMemoryClocks");
    mhz.resize(count);
    return mhz;
  }
  check(kErrorInsufficientSize, "nvmlDeviceGetSupportedMemoryClocks");
  return {};
}

std::vector<unsigned> Nvml::supported_graphics_clocks_mhz(nvmlDevice_t device,
                                                          unsigned memory_mhz) const {
  std::vector<unsigned> mhz(512);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto count = static_cast<unsigned>(mhz.size());
    nvmlReturn_t code = fn_.supported_graphics_clocks(device, memory_mhz, &count, mhz.data());
    if (code == kErrorInsufficientSize && count > mhz.size()) {
      mhz.resize(count);
      continue;
    }
    check(code, "nvmlDeviceGetSupportedGraphicsClocks");
    mhz.resize(count);
    return mhz;
  }
  check(kErrorInsufficientSize, "nvmlDeviceGetSupportedGraphicsClocks");
  return {};
}

unsigned Nvml::clock_mhz(nvmlDevice_t device, nvmlClockType_t type) const {
  unsigned mhz = 0;
  check(fn_.clock_info(device, type, &mhz), "nvmlDeviceGetClockInfo");
  return mhz;
}

unsigned Nvml::power_usage_mw(nvmlDevice_t device) const {
  unsigned mw = 0;
  check(fn_.power_usage(device, &mw), "nvmlDeviceGetPowerUsage");
  return mw;
}

unsigned long long Nvml::total_energy_mj(nvmlDevice_t device) const {
  unsigned long long mj = 0;
  const char* call = "nvmlDeviceGetTotalEnergyConsumption";
  check(require(fn_.total_energy, call)(device, &mj), call);
  return mj;
}

unsigned Nvml::power_limit_mw(nvmlDevice_t device) const {
  unsigned mw = 0;
  check(fn_.power_limit(device, &mw), "nvmlDeviceGetPowerManagementLimit");
  return mw;
}

std::pair<unsigned, unsigned> Nvml::power_limit_constraints_mw(nvmlDevice_t device) const {
  unsigned min_mw = 0;
  unsigned max_mw = 0;
  check(fn_.power_limit_constraints(device, &min_mw, &max_mw),
        "nvmlDeviceGetPowerManagementLimitConstraints");
  return {min_mw, max_mw};
}

unsigned long long Nvml::clocks_event_reasons(nvmlDevice_t device) const {
  unsigned long long bits = 0;
  const char* call = clocks_event_reasons_symbol_;
  check(require(fn_.clocks_event_reasons, call)(device, &bits), call);
  return bits;
}

std::optional<double> Nvml::field_value(nvmlDevice_t device, unsigned field_id) const {
  if (fn_.get_field_values == nullptr) return std::nullopt;
  nvmlFieldValue_t value;
  std::memset(&value, 0, sizeof value);
  value.fieldId = field_id;
  nvmlReturn_t code = fn_.get_field_values(device, 1, &value);
  if (code == nvml_const::kErrorNotSupported) return std::nullopt;
  check(code, "nvmlDeviceGetFieldValues");
  if (value.nvmlReturn == nvml_const::kErrorNotSupported) return std::nullopt;
  if (value.nvmlReturn != nvml_const::kSuccess) {
    throw NvmlError(fmt::format("nvmlDeviceGetFieldValues(field {})", field_id), value.nvmlReturn,
                    error_string(value.nvmlReturn));
  }
  switch (value.valueType) {
    case nvml_const::kValueDouble:
      return value.value.dVal;
    case nvml_const::kValueUnsignedInt:
      return static_cast<double>(value.value.uiVal);
    case nvml_const::kValueUnsignedLong:
      return static_cast<double>(value.value.ulVal);
    case nvml_const::kValueUnsignedLongLong:
      return static_cast<double>(value.value.ullVal);
    case nvml_const::kValueSignedLongLong:
      return static_cast<double>(value.value.sllVal);
    case nvml_const::kValueSignedInt:
      return static_cast<double>(value.value.siVal);
    case nvml_const::kValueUnsignedShort:
      return static_cast<double>(value.value.usVal);
    default:
      throw NvmlError(fmt::format("nvmlDeviceGetFieldValues(field {})", field_id), 999,
                      fmt::format("unknown value type {}", value.valueType));
  }
}

void Nvml::set_gpu_locked_clocks(nvmlDevice_t device, unsigned min_mhz, unsigned max_mhz) const {
  const char* call = "nvmlDeviceSetGpuLockedClocks";
  check(require(fn_.set_gpu_locked_clocks, call)(device, min_mhz, max_mhz), call);
}

void Nvml::reset_gpu_locked_clocks(nvmlDevice_t device) const {
  const char* call = "nvmlDeviceResetGpuLockedClocks";
  check(require(fn_.reset_gpu_locked_clocks, call)(device), call);
}

void Nvml::set_memory_locked_clocks(nvmlDevice_t device, unsigned min_mhz, unsigned max_mhz) const {
  const char* call = "nvmlDeviceSetMemoryLockedClocks";
  check(require(fn_.set_memory_locked_clocks, call)(device, min_mhz, max_mhz), call);
}

void Nvml::reset_memory_locked_clocks(nvmlDevice_t device) const {
  const char* call = "nvmlDeviceResetMemoryLockedClocks";
  check(require(fn_.reset_memory_locked_clocks, call)(device), call);
}

void Nvml::set_power_limit_mw(nvmlDevice_t device, unsigned mw) const {
  const char* call = "nvmlDeviceSetPowerManagementLimit";
  check(require(fn_.set_power_limit, call)(device, mw), call);
}

std::unique_ptr<Nvml> open_nvml() {
  return std::make_unique<Nvml>(nvml_library_path());
}

}  // namespace dvfsim::hw
