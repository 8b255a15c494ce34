// A fake NVML for tests: exports the NVML calls dvfsim uses, scripted by a small
// config file and recording every clock set/reset call.
//
// FAKE_NVML_CONFIG=path   "key = value" lines ('#' starts a comment):
//   name = NVIDIA H200 (fake)       driver = 580.00-fake      device_count = 1
//   memory_clocks = 3201,2201       graphics_clocks = 345:1980:15 (first:last:step, or a list)
//   graphics_clocks.2201 = ...      (per memory clock, overrides graphics_clocks)
//   power_w = 200                   power_trace = 0:100,0.5:300  (t_s:W steps since nvmlInit)
//   power_limit_w = 700             power_limit_min_w = 200      power_limit_max_w = 700
//   sm_mhz = 1980                   mem_mhz = 3201               reasons = 0x4
//   energy_tick_ms = 100            energy_offset_j = 100000     (counter at nvmlInit)
//   instant_power = 1               energy_counter = 1           reasons_supported = 1
//   error.<nvml call> = <code>      make that call fail with NVML error <code>
//   error_after.<nvml call> = N     ... but only after N successful calls
// FAKE_NVML_LOG=path   one line per set/reset call:
//   "<CLOCK_MONOTONIC ns> pid=<pid> <call> gpu=<i> [min=<MHz> max=<MHz>] [mw=<mW>] rc=<code>"
// nvmlDeviceSetPowerManagementLimit outside [power_limit_min_w, power_limit_max_w]
// fails with NVML error 2 (invalid argument), as the real call does.
//
// The energy counter advances like a real one: it holds the energy integrated up to
// the last tick, ticks falling on multiples of energy_tick_ms of CLOCK_MONOTONIC.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

struct nvmlDevice_st {
  unsigned index;
};

namespace {

using Return = int;
constexpr Return kSuccess = 0;
constexpr Return kInvalidArgument = 2;
constexpr Return kNotSupported = 3;
constexpr Return kInsufficientSize = 7;
constexpr unsigned kMaxDevices = 16;

struct Config {
  std::string name = "NVIDIA H200 (fake)";
  std::string driver = "580.00-fake";
  unsigned device_count = 1;
  std::vector<unsigned> memory_clocks = {3201, 2201};
  std::vector<unsigned> graphics_clocks;
  std::map<unsigned, std::vector<unsigned>> graphics_by_memory;
  std::vector<std::pair<double, double>> power_trace;  // (t_s since init, W)
  double power_w = 200;
  double power_limit_w = 700;
  double power_limit_min_w = 200;
  double power_limit_max_w = 700;
  unsigned sm_mhz = 1980;
  unsigned mem_mhz = 3201;
  unsigned long long reasons = 0;
  long long energy_tick_ms = 100;
  double energy_offset_j = 100000;
  bool instant_power = true;
  bool energy_counter = true;
  bool reasons_supported = true;
  std::map<std::string, Return> errors;
  std::map<std::string, long> errors_after;
};

struct DeviceState {
  nvmlDevice_st handle{};
  unsigned locked_core_mhz = 0;
  unsigned locked_memory_mhz = 0;
  unsigned power_limit_mw = 0;  // 0: the configured power_limit_w
};

struct State {
  std::mutex mutex;
  bool loaded = false;
  int init_count = 0;
  Config config;
  long long init_ns = 0;
  DeviceState devices[kMaxDevices];
  std::map<std::string, long> calls;
};

State& state() {
  static State instance;
  return instance;
}

long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

std::string trim(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::vector<unsigned> parse_clocks(const std::string& text) {
  std::vector<unsigned> out;
  if (text.find(':') != std::string::npos) {
    unsigned first = 0, last = 0, step = 1;
    if (std::sscanf(text.c_str(), "%u:%u:%u", &first, &last, &step) == 3 && step > 0) {
      for (unsigned mhz = first; mhz <= last; mhz += step) out.push_back(mhz);
    }
    return out;
  }
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (!trim(item).empty()) out.push_back(static_cast<unsigned>(std::stoul(trim(item))));
  }
  return out;
}

void load_config(Config& config) {
  config.graphics_clocks = parse_clocks("345:1980:15");
  const char* path = std::getenv("FAKE_NVML_CONFIG");
  if (path == nullptr || path[0] == '\0') return;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    size_t equals = line.find('=');
    if (equals == std::string::npos) continue;
    std::string key = trim(line.substr(0, equals));
    std::string value = trim(line.substr(equals + 1));
    if (key == "name")
      config.name = value;
    else if (key == "driver")
      config.driver = value;
    else if (key == "device_count")
      config.device_count = static_cast<unsigned>(std::stoul(value));
    else if (key == "memory_clocks")
      config.memory_clocks = parse_clocks(value);
    else if (key == "graphics_clocks")
      config.graphics_clocks = parse_clocks(value);
    else if (key.rfind("graphics_clocks.", 0) == 0)
      config.graphics_by_memory[static_cast<unsigned>(std::stoul(key.substr(16)))] =
          parse_clocks(value);
    else if (key == "power_w")
      config.power_w = std::stod(value);
    else if (key == "power_trace") {
      std::stringstream items(value);
      std::string item;
      while (std::getline(items, item, ',')) {
        double t_s = 0, watts = 0;
        if (std::sscanf(item.c_str(), "%lf:%lf", &t_s, &watts) == 2) {
          config.power_trace.emplace_back(t_s, watts);
        }
      }
    } else if (key == "power_limit_w")
      config.power_limit_w = std::stod(value);
    else if (key == "power_limit_min_w")
      config.power_limit_min_w = std::stod(value);
    else if (key == "power_limit_max_w")
      config.power_limit_max_w = std::stod(value);
    else if (key == "sm_mhz")
      config.sm_mhz = static_cast<unsigned>(std::stoul(value));
    else if (key == "mem_mhz")
      config.mem_mhz = static_cast<unsigned>(std::stoul(value));
    else if (key == "reasons")
      config.reasons = std::stoull(value, nullptr, 0);
    else if (key == "energy_tick_ms")
      config.energy_tick_ms = std::stoll(value);
    else if (key == "energy_offset_j")
      config.energy_offset_j = std::stod(value);
    else if (key == "instant_power")
      config.instant_power = value == "1";
    else if (key == "energy_counter")
      config.energy_counter = value == "1";
    else if (key == "reasons_supported")
      config.reasons_supported = value == "1";
    else if (key.rfind("error.", 0) == 0)
      config.errors[key.substr(6)] = std::stoi(value);
    else if (key.rfind("error_after.", 0) == 0)
      config.errors_after[key.substr(12)] = std::stol(value);
  }
  if (config.device_count > kMaxDevices) config.device_count = kMaxDevices;
}

void ensure_loaded(State& s) {
  if (s.loaded) return;
  load_config(s.config);
  for (unsigned i = 0; i < kMaxDevices; ++i) s.devices[i].handle.index = i;
  s.loaded = true;
}

// The injected error for `call`, counting calls; 0 if none.
Return injected(State& s, const char* call) {
  ensure_loaded(s);
  long made = s.calls[call]++;
  auto error = s.config.errors.find(call);
  if (error == s.config.errors.end()) return kSuccess;
  auto after = s.config.errors_after.find(call);
  if (after != s.config.errors_after.end() && made < after->second) return kSuccess;
  return error->second;
}

// Power in W at `t_ns` (CLOCK_MONOTONIC).
double power_at(const State& s, long long t_ns) {
  const Config& c = s.config;
  if (c.power_trace.empty()) return c.power_w;
  double t_s = static_cast<double>(t_ns - s.init_ns) * 1e-9;
  double watts = c.power_trace.front().second;
  for (const auto& [start_s, w] : c.power_trace) {
    if (start_s <= t_s) watts = w;
  }
  return watts;
}

// Energy in J from nvmlInit to `t_ns`.
double energy_since_init(const State& s, long long t_ns) {
  if (t_ns <= s.init_ns) return 0;
  const Config& c = s.config;
  if (c.power_trace.empty()) return c.power_w * static_cast<double>(t_ns - s.init_ns) * 1e-9;
  double t_s = static_cast<double>(t_ns - s.init_ns) * 1e-9;
  double energy = 0;
  for (size_t i = 0; i < c.power_trace.size(); ++i) {
    double from = i == 0 ? 0 : c.power_trace[i].first;
    double to = i + 1 < c.power_trace.size() ? c.power_trace[i + 1].first : t_s;
    to = std::min(to, t_s);
    if (to > from) energy += c.power_trace[i].second * (to - from);
  }
  return energy;
}

bool valid(const State& s, nvmlDevice_st* device) {
  return device != nullptr && device->index < s.config.device_count;
}

void log_call(const char* call, unsigned gpu, const std::string& args, Return rc) {
  const char* path = std::getenv("FAKE_NVML_LOG");
  if (path == nullptr || path[0] == '\0') return;
  char line[256];
  int n = std::snprintf(line, sizeof line, "%lld pid=%d %s gpu=%u%s rc=%d\n", monotonic_ns(),
                        static_cast<int>(getpid()), call, gpu, args.c_str(), rc);
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = ::write(fd, line, static_cast<size_t>(n));
  (void)ignored;
  ::close(fd);
}

Return copy_clocks(const std::vector<unsigned>& clocks, unsigned* count, unsigned* mhz) {
  if (count == nullptr) return kInvalidArgument;
  if (*count < clocks.size() || mhz == nullptr) {
    *count = static_cast<unsigned>(clocks.size());
    return kInsufficientSize;
  }
  for (size_t i = 0; i < clocks.size(); ++i) mhz[i] = clocks[i];
  *count = static_cast<unsigned>(clocks.size());
  return kSuccess;
}

Return copy_string(const std::string& text, char* buffer, unsigned length) {
  if (buffer == nullptr || length <= text.size()) return kInsufficientSize;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return kSuccess;
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))
#define FAKE_BEGIN(call)                      \
  State& s = state();                         \
  std::lock_guard<std::mutex> guard(s.mutex); \
  if (Return rc = injected(s, call)) return rc;
#define FAKE_DEVICE(device) \
  if (!valid(s, device)) return kInvalidArgument;

FAKE_EXPORT Return nvmlInit_v2() {
  FAKE_BEGIN("nvmlInit_v2");
  if (s.init_count++ == 0) s.init_ns = monotonic_ns();
  return kSuccess;
}

FAKE_EXPORT Return nvmlShutdown() {
  FAKE_BEGIN("nvmlShutdown");
  if (s.init_count > 0) --s.init_count;
  return kSuccess;
}

FAKE_EXPORT const char* nvmlErrorString(Return code) {
  switch (code) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 5:
      return "Already Initialized";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 10:
      return "Timeout";
    case 15:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

FAKE_EXPORT Return nvmlSystemGetDriverVersion(char* buffer, unsigned length) {
  FAKE_BEGIN("nvmlSystemGetDriverVersion");
  return copy_string(s.config.driver, buffer, length);
}

FAKE_EXPORT Return nvmlDeviceGetCount_v2(unsigned* count) {
  FAKE_BEGIN("nvmlDeviceGetCount_v2");
  *count = s.config.device_count;
  return kSuccess;
}

FAKE_EXPORT Return nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_st** device) {
  FAKE_BEGIN("nvmlDeviceGetHandleByIndex_v2");
  if (index >= s.config.device_count) return kInvalidArgument;
  *device = &s.devices[index].handle;
  return kSuccess;
}

FAKE_EXPORT Return nvmlDeviceGetName(nvmlDevice_st* device, char* buffer, unsigned length) {
  FAKE_BEGIN("nvmlDeviceGetName");
  FAKE_DEVICE(device);
  return copy_string(s.config.name, buffer, length);
}

FAKE_EXPORT Return nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_st* device, unsigned* count,
                                                      unsigned* mhz) {
  FAKE_BEGIN("nvmlDeviceGetSupportedMemoryClocks");
  FAKE_DEVICE(device);
  return copy_clocks(s.config.memory_clocks, count, mhz);
}

FAKE_EXPORT Return nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_st* device, unsigned memory_mhz,
                                                        unsigned* count, unsigned* mhz) {
  FAKE_BEGIN("nvmlDeviceGetSupportedGraphicsClocks");
  FAKE_DEVICE(device);
  auto specific = s.config.graphics_by_memory.find(memory_mhz);
  if (specific != s.config.graphics_by_memory.end())
    return copy_clocks(specific->second, count, mhz);
  bool known = false;
  for (unsigned clock : s.config.memory_clocks) known = known || clock == memory_mhz;
  if (!known) return kInvalidArgument;
  return copy_clocks(s.config.graphics_clocks, count, mhz);
}

FAKE_EXPORT Return nvmlDeviceGetClockInfo(nvmlDevice_st* device, int type, unsigned* mhz) {
  FAKE_BEGIN("nvmlDeviceGetClockInfo");
  FAKE_DEVICE(device);
  const DeviceState& d = s.devices[device->index];
  if (type == 0 || type == 1) {
    *mhz = d.locked_core_mhz != 0 ? d.locked_core_mhz : s.config.sm_mhz;
  } else if (type == 2) {
    *mhz = d.locked_memory_mhz != 0 ? d.locked_memory_mhz : s.config.mem_mhz;
  } else {
    return kNotSupported;
  }
  return kSuccess;
}

FAKE_EXPORT Return nvmlDeviceGetPowerUsage(nvmlDevice_st* device, unsigned* mw) {
  FAKE_BEGIN("nvmlDeviceGetPowerUsage");
  FAKE_DEVICE(device);
  *mw = static_cast<unsigned>(power_at(s, monotonic_ns()) * 1000.0 + 0.5);
  return kSuccess;
}

FAKE_EXPORT Return nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_st* device,
                                                       unsigned long long* mj) {
  FAKE_BEGIN("nvmlDeviceGetTotalEnergyConsumption");
  FAKE_DEVICE(device);
  if (!s.config.energy_counter) return kNotSupported;
  long long tick_ns = s.config.energy_tick_ms * 1'000'000LL;
  long long now = monotonic_ns();
  long long last_tick = tick_ns > 0 ? now / tick_ns * tick_ns : now;
  double joules = s.config.energy_offset_j + energy_since_init(s, last_tick);
  *mj = static_cast<unsigned long long>(joules * 1000.0);
  return kSuccess;
}

FAKE_EXPORT Return nvmlDeviceGetPowerManagementLimit(nvmlDevice_st* device, unsigned* mw) {
  FAKE_BEGIN("nvmlDeviceGetPowerManagementLimit");
  FAKE_DEVICE(device);
  const unsigned set = s.devices[device->index].power_limit_mw;
  *mw = set != 0 ? set : static_cast<unsigned>(s.config.power_limit_w * 1000.0);
  return kSuccess;
}

FAKE_EXPORT Return nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_st* device,
                                                                unsigned* min_mw,
                                                                unsigned* max_mw) {
  FAKE_BEGIN("nvmlDeviceGetPowerManagementLimitConstraints");
  FAKE_DEVICE(device);
  *min_mw = static_cast<unsigned>(s.config.power_limit_min_w * 1000.0);
  *max_mw = static_cast<unsigned>(s.config.power_limit_max_w * 1000.0);
  return kSuccess;
}

FAKE_EXPORT Return nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_st* device,
                                                          unsigned long long* bits) {
  FAKE_BEGIN("nvmlDeviceGetCurrentClocksEventReasons");
  FAKE_DEVICE(device);
  if (!s.config.reasons_supported) return kNotSupported;
  *bits = s.config.reasons;
  return kSuccess;
}

// Layout of nvmlFieldValue_t (40 bytes).
struct FakeFieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;
  int nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long long ull;
  } value;
};
static_assert(sizeof(FakeFieldValue) == 40, "nvmlFieldValue_t is 40 bytes");

FAKE_EXPORT Return nvmlDeviceGetFieldValues(nvmlDevice_st* device, int count,
                                            FakeFieldValue* values) {
  FAKE_BEGIN("nvmlDeviceGetFieldValues");
  FAKE_DEVICE(device);
  long long now = monotonic_ns();
  for (int i = 0; i < count; ++i) {
    FakeFieldValue& v = values[i];
    v.timestamp = now / 1000;
    v.latency_usec = 0;
    if ((v.field_id == 186 || v.field_id == 185) && s.config.instant_power) {
      v.value_type = 1;  // unsigned int
      v.value.ui = static_cast<unsigned>(power_at(s, now) * 1000.0 + 0.5);
      v.nvml_return = kSuccess;
    } else {
      v.nvml_return = kNotSupported;
    }
  }
  return kSuccess;
}

FAKE_EXPORT Return nvmlDeviceSetGpuLockedClocks(nvmlDevice_st* device, unsigned min_mhz,
                                                unsigned max_mhz) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  Return rc = injected(s, "nvmlDeviceSetGpuLockedClocks");
  if (rc == kSuccess && !valid(s, device)) rc = kInvalidArgument;
  if (rc == kSuccess) s.devices[device->index].locked_core_mhz = max_mhz;
  log_call("nvmlDeviceSetGpuLockedClocks", device != nullptr ? device->index : 0,
           " min=" + std::to_string(min_mhz) + " max=" + std::to_string(max_mhz), rc);
  return rc;
}

FAKE_EXPORT Return nvmlDeviceResetGpuLockedClocks(nvmlDevice_st* device) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  Return rc = injected(s, "nvmlDeviceResetGpuLockedClocks");
  if (rc == kSuccess && !valid(s, device)) rc = kInvalidArgument;
  if (rc == kSuccess) s.devices[device->index].locked_core_mhz = 0;
  log_call("nvmlDeviceResetGpuLockedClocks", device != nullptr ? device->index : 0, "", rc);
  return rc;
}

FAKE_EXPORT Return nvmlDeviceSetMemoryLockedClocks(nvmlDevice_st* device, unsigned min_mhz,
                                                   unsigned max_mhz) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  Return rc = injected(s, "nvmlDeviceSetMemoryLockedClocks");
  if (rc == kSuccess && !valid(s, device)) rc = kInvalidArgument;
  if (rc == kSuccess) s.devices[device->index].locked_memory_mhz = max_mhz;
  log_call("nvmlDeviceSetMemoryLockedClocks", device != nullptr ? device->index : 0,
           " min=" + std::to_string(min_mhz) + " max=" + std::to_string(max_mhz), rc);
  return rc;
}

FAKE_EXPORT Return nvmlDeviceResetMemoryLockedClocks(nvmlDevice_st* device) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  Return rc = injected(s, "nvmlDeviceResetMemoryLockedClocks");
  if (rc == kSuccess && !valid(s, device)) rc = kInvalidArgument;
  if (rc == kSuccess) s.devices[device->index].locked_memory_mhz = 0;
  log_call("nvmlDeviceResetMemoryLockedClocks", device != nullptr ? device->index : 0, "", rc);
  return rc;
}

FAKE_EXPORT Return nvmlDeviceSetPowerManagementLimit(nvmlDevice_st* device, unsigned mw) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  Return rc = injected(s, "nvmlDeviceSetPowerManagementLimit");
  if (rc == kSuccess && !valid(s, device)) rc = kInvalidArgument;
  if (rc == kSuccess &&
      (mw < s.config.power_limit_min_w * 1000.0 || mw > s.config.power_limit_max_w * 1000.0))
    rc = kInvalidArgument;
  if (rc == kSuccess) s.devices[device->index].power_limit_mw = mw;
  log_call("nvmlDeviceSetPowerManagementLimit", device != nullptr ? device->index : 0,
           " mw=" + std::to_string(mw), rc);
  return rc;
}
