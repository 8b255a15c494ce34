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
//   switch_latency.core = lognormal:MEDIAN_US:SIGMA | uniform:MIN_US:MAX_US | fixed:US
//   switch_latency.memory = ...     a set/reset of that domain lands after a programmed
//                                   delay (default: at once); the k-th delay of a domain is
//                                   the distribution's quantile at frac(0.5 + k * 0.618034),
//                                   a low-discrepancy sequence: any run of draws has nearly
//                                   the distribution's median and spread
//   memory_stall_us = 1000          after a memory switch lands the GPU does no work this long
//   readback_lag_us = 2000          nvmlDeviceGetClockInfo reports a landed clock this much later
//   descheduled_read_us = 4000      after every third switch of a domain lands (its 3rd, 6th,
//                                   ...), the first nvmlDeviceGetClockInfo of that domain returns
//                                   this much later, as if the caller had been descheduled
// FAKE_NVML_STATE=path  written at nvmlShutdown, one line per GPU:
//   "gpu=<i> locked_core=<MHz|0> locked_memory=<MHz|0> core_target=<MHz> memory_target=<MHz>
//    power_limit_mw=<mW>" (the target is the clock the GPU runs or is switching to)
// dvfsim_probe_v1_start/collect/stop: the throughput probe of `dvfsim hw
//   switch-latency --probe-library`: back-to-back bursts of burst_us from start;
//   each burst's work is the integral of the effective clock of `domain` (0 core,
//   1 memory) in MHz x s (no work during a memory stall).
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

#include <algorithm>
#include <cmath>
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

struct Latency {
  enum Kind { kNone, kFixed, kUniform, kLognormal } kind = kNone;
  double a = 0;  // fixed: us; uniform: min; lognormal: median
  double b = 0;  // uniform: max; lognormal: sigma
};

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
  Latency core_latency;
  Latency memory_latency;
  long long memory_stall_ns = 0;
  long long readback_lag_ns = 0;
  long long descheduled_read_ns = 0;
};

// One clock domain of a GPU: it ran `from_mhz` until `land_ns`, then `to_mhz`.
struct DomainState {
  unsigned from_mhz = 0;
  unsigned to_mhz = 0;
  long long land_ns = 0;
  long long stall_ns = 0;  // no work in [land_ns, land_ns + stall_ns)
  long draws = 0;
  bool descheduled_read_due = false;  // the first read after this landing is slow
  unsigned effective(long long t) const { return t < land_ns ? from_mhz : to_mhz; }
};

struct DeviceState {
  nvmlDevice_st handle{};
  unsigned locked_core_mhz = 0;
  unsigned locked_memory_mhz = 0;
  unsigned power_limit_mw = 0;  // 0: the configured power_limit_w
  DomainState core;
  DomainState memory;
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
    else if (key == "switch_latency.core" || key == "switch_latency.memory") {
      Latency latency;
      char kind[16] = {};
      double a = 0, b = 0;
      int n = std::sscanf(value.c_str(), "%15[a-z]:%lf:%lf", kind, &a, &b);
      if (n >= 2 && std::strcmp(kind, "fixed") == 0) latency = {Latency::kFixed, a, 0};
      if (n == 3 && std::strcmp(kind, "uniform") == 0) latency = {Latency::kUniform, a, b};
      if (n == 3 && std::strcmp(kind, "lognormal") == 0) latency = {Latency::kLognormal, a, b};
      (key == "switch_latency.core" ? config.core_latency : config.memory_latency) = latency;
    } else if (key == "memory_stall_us")
      config.memory_stall_ns = static_cast<long long>(std::stod(value) * 1e3);
    else if (key == "readback_lag_us")
      config.readback_lag_ns = static_cast<long long>(std::stod(value) * 1e3);
    else if (key == "descheduled_read_us")
      config.descheduled_read_ns = static_cast<long long>(std::stod(value) * 1e3);
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
  for (unsigned i = 0; i < kMaxDevices; ++i) {
    s.devices[i].handle.index = i;
    s.devices[i].core.from_mhz = s.devices[i].core.to_mhz = s.config.sm_mhz;
    s.devices[i].memory.from_mhz = s.devices[i].memory.to_mhz = s.config.mem_mhz;
  }
  s.loaded = true;
}

// The standard normal quantile, by bisection on erfc (exact enough for a fake).
double normal_quantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 100; ++i) {
    double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The k-th programmed delay in ns.
long long draw_delay_ns(const Latency& latency, long k) {
  double u = std::fmod(0.5 + static_cast<double>(k) * 0.6180339887498949, 1.0);
  double us = 0;
  switch (latency.kind) {
    case Latency::kNone:
      return 0;
    case Latency::kFixed:
      us = latency.a;
      break;
    case Latency::kUniform:
      us = latency.a + u * (latency.b - latency.a);
      break;
    case Latency::kLognormal:
      us = latency.a * std::exp(latency.b * normal_quantile(u));
      break;
  }
  return static_cast<long long>(us * 1e3);
}

// A request for `mhz` in one domain: it lands after the programmed delay (a request
// for the clock the domain already runs or switches to changes nothing).
void request_clock(State& s, DomainState& d, unsigned mhz, bool memory) {
  long long now = monotonic_ns();
  if (mhz == d.to_mhz) return;
  d.from_mhz = d.effective(now);
  d.to_mhz = mhz;
  d.land_ns =
      now + draw_delay_ns(memory ? s.config.memory_latency : s.config.core_latency, d.draws++);
  d.stall_ns = memory ? s.config.memory_stall_ns : 0;
  d.descheduled_read_due = s.config.descheduled_read_ns > 0 && d.draws % 3 == 0;
}

// What nvmlDeviceGetClockInfo reports: the landed clock, readback_lag_ns late.
unsigned read_back(const State& s, const DomainState& d, long long now) {
  return d.effective(now - s.config.readback_lag_ns);
}

// Work per second of the probe of one domain at `t` (MHz; 0 while a memory switch stalls).
double probe_rate(const DeviceState& d, int domain, long long t) {
  if (t >= d.memory.land_ns && t < d.memory.land_ns + d.memory.stall_ns) return 0;
  return domain == 1 ? d.memory.effective(t) : d.core.effective(t);
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
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (path != nullptr && path[0] != '\0') {
    std::ofstream out(path);
    for (unsigned i = 0; i < s.config.device_count; ++i) {
      const DeviceState& d = s.devices[i];
      out << "gpu=" << i << " locked_core=" << d.locked_core_mhz
          << " locked_memory=" << d.locked_memory_mhz << " core_target=" << d.core.to_mhz
          << " memory_target=" << d.memory.to_mhz << " power_limit_mw="
          << (d.power_limit_mw != 0 ? d.power_limit_mw
                                    : static_cast<unsigned>(s.config.power_limit_w * 1000.0))
          << "\n";
    }
  }
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
  DeviceState& d = s.devices[device->index];
  long long now = monotonic_ns();
  DomainState* domain = type == 0 || type == 1 ? &d.core : (type == 2 ? &d.memory : nullptr);
  if (domain != nullptr && domain->descheduled_read_due && now >= domain->land_ns) {
    domain->descheduled_read_due = false;
    const long long until = now + s.config.descheduled_read_ns;
    while ((now = monotonic_ns()) < until) {
    }
  }
  if (type == 0 || type == 1) {
    *mhz = read_back(s, d.core, now);
  } else if (type == 2) {
    *mhz = read_back(s, d.memory, now);
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
  if (rc == kSuccess) {
    s.devices[device->index].locked_core_mhz = max_mhz;
    request_clock(s, s.devices[device->index].core, max_mhz, false);
  }
  log_call("nvmlDeviceSetGpuLockedClocks", device != nullptr ? device->index : 0,
           " min=" + std::to_string(min_mhz) + " max=" + std::to_string(max_mhz), rc);
  return rc;
}

FAKE_EXPORT Return nvmlDeviceResetGpuLockedClocks(nvmlDevice_st* device) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  Return rc = injected(s, "nvmlDeviceResetGpuLockedClocks");
  if (rc == kSuccess && !valid(s, device)) rc = kInvalidArgument;
  if (rc == kSuccess) {
    s.devices[device->index].locked_core_mhz = 0;
    request_clock(s, s.devices[device->index].core, s.config.sm_mhz, false);
  }
  log_call("nvmlDeviceResetGpuLockedClocks", device != nullptr ? device->index : 0, "", rc);
  return rc;
}

FAKE_EXPORT Return nvmlDeviceSetMemoryLockedClocks(nvmlDevice_st* device, unsigned min_mhz,
                                                   unsigned max_mhz) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  Return rc = injected(s, "nvmlDeviceSetMemoryLockedClocks");
  if (rc == kSuccess && !valid(s, device)) rc = kInvalidArgument;
  if (rc == kSuccess) {
    s.devices[device->index].locked_memory_mhz = max_mhz;
    request_clock(s, s.devices[device->index].memory, max_mhz, true);
  }
  log_call("nvmlDeviceSetMemoryLockedClocks", device != nullptr ? device->index : 0,
           " min=" + std::to_string(min_mhz) + " max=" + std::to_string(max_mhz), rc);
  return rc;
}

FAKE_EXPORT Return nvmlDeviceResetMemoryLockedClocks(nvmlDevice_st* device) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  Return rc = injected(s, "nvmlDeviceResetMemoryLockedClocks");
  if (rc == kSuccess && !valid(s, device)) rc = kInvalidArgument;
  if (rc == kSuccess) {
    s.devices[device->index].locked_memory_mhz = 0;
    request_clock(s, s.devices[device->index].memory, s.config.mem_mhz, true);
  }
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

// The throughput probe (see the header comment): back-to-back virtual bursts from
// dvfsim_probe_v1_start, like kernels timed by GPU events, so the record has no
// gaps whatever the calling process does. Each returns 0, or 2 for a bad argument.
namespace {

struct ProbeState {
  bool running = false;
  unsigned gpu = 0;
  int domain = 0;
  long long start_ns = 0;
  long long burst_ns = 0;
  long long reported = 0;  // bursts handed out so far
};

ProbeState& probe_state() {
  static ProbeState instance;
  return instance;
}

// The probe's work (MHz x s) over [start, end]: the rate is piecewise constant
// between the domain's landing and stall times, so this is exact.
double probe_work(const DeviceState& d, int domain, long long start, long long end) {
  std::vector<long long> cuts = {start, end, d.core.land_ns, d.memory.land_ns,
                                 d.memory.land_ns + d.memory.stall_ns};
  std::sort(cuts.begin(), cuts.end());
  double mhz_s = 0;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    long long a = std::max(cuts[i], start);
    long long b = std::min(cuts[i + 1], end);
    if (b <= a) continue;
    mhz_s += probe_rate(d, domain, a + (b - a) / 2) * static_cast<double>(b - a) * 1e-9;
  }
  return mhz_s;
}

}  // namespace

FAKE_EXPORT int dvfsim_probe_v1_start(unsigned gpu, int domain, unsigned burst_us) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  ensure_loaded(s);
  if (gpu >= s.config.device_count || (domain != 0 && domain != 1) || burst_us == 0) return 2;
  ProbeState& p = probe_state();
  p = {true, gpu, domain, monotonic_ns(), static_cast<long long>(burst_us) * 1000LL, 0};
  return 0;
}

FAKE_EXPORT int dvfsim_probe_v1_collect(double* start_s, double* end_s, double* work,
                                        unsigned capacity, unsigned* count) {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  ProbeState& p = probe_state();
  if (!p.running || count == nullptr || start_s == nullptr || end_s == nullptr || work == nullptr)
    return 2;
  const long long done = (monotonic_ns() - p.start_ns) / p.burst_ns;
  unsigned n = 0;
  // A burst's work uses the clocks as they are now: a request made while a burst
  // ran moves the landing times, so bursts are handed out as soon as they end.
  while (p.reported < done && n < capacity) {
    long long a = p.start_ns + p.reported * p.burst_ns;
    long long b = a + p.burst_ns;
    start_s[n] = static_cast<double>(a) * 1e-9;
    end_s[n] = static_cast<double>(b) * 1e-9;
    work[n] = probe_work(s.devices[p.gpu], p.domain, a, b);
    ++p.reported;
    ++n;
  }
  *count = n;
  return 0;
}

FAKE_EXPORT int dvfsim_probe_v1_stop() {
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  probe_state().running = false;
  return 0;
}
