#include "hw/marker.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <ctime>
#include <fstream>
#include <ostream>
#include <sstream>

#include "hw/files.h"
#include "hw/nvml.h"

namespace dvfsim::hw {
namespace {

struct ProcessStat {
  char state = '?';
  unsigned long long start_ticks = 0;
};

// Fields 3 (state) and 22 (starttime) of /proc/PID/stat.
std::optional<ProcessStat> read_process_stat(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  size_t close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close_paren + 1));
  ProcessStat stat;
  fields >> stat.state;
  std::string skipped;
  for (int field = 4; field < 22; ++field) fields >> skipped;
  fields >> stat.start_ticks;
  if (!fields) return std::nullopt;
  return stat;
}

std::string utc_now() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

template <typename T>
bool parse_number(const std::string& text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string gpu_list(const std::vector<unsigned>& gpus) {
  std::string out;
  for (unsigned gpu : gpus) out += (out.empty() ? "" : ",") + std::to_string(gpu);
  return out;
}

}  // namespace

std::string marker_path() {
  const char* env = std::getenv(kMarkerEnv);
  if (env != nullptr && env[0] != '\0') return env;
  return kDefaultMarkerPath;
}

Marker marker_for_this_process(const std::vector<unsigned>& gpus) {
  Marker marker;
  marker.pid = static_cast<long>(getpid());
  if (auto stat = read_process_stat(marker.pid)) marker.pid_start_ticks = stat->start_ticks;
  marker.gpus = gpus;
  marker.started_utc = utc_now();
  return marker;
}

std::string format_marker(const Marker& marker) {
  std::string out = fmt::format(
      "# dvfsim hw apply is changing GPU clocks; if this process is gone, any dvfsim hw "
      "command resets them\npid={}\npid_start_ticks={}\ngpus={}\nstarted_utc={}\n",
      marker.pid, marker.pid_start_ticks, gpu_list(marker.gpus), marker.started_utc);
  if (!marker.power_limits_mw.empty()) {
    std::string limits;
    for (const auto& [gpu, mw] : marker.power_limits_mw)
      limits += fmt::format("{}{}:{}", limits.empty() ? "" : ",", gpu, mw);
    out += fmt::format("power_limits_mw={}\n", limits);
  }
  return out;
}

std::optional<Marker> parse_marker(const std::string& text) {
  Marker marker;
  bool have_pid = false;
  bool gpus_valid = false;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t equals = line.find('=');
    if (line.empty() || line[0] == '#' || equals == std::string::npos) continue;
    std::string key = line.substr(0, equals);
    std::string value = line.substr(equals + 1);
    if (key == "pid") {
      have_pid = parse_number(value, marker.pid) && marker.pid > 0;
    } else if (key == "pid_start_ticks") {
      if (!parse_number(value, marker.pid_start_ticks)) marker.pid_start_ticks = 0;
    } else if (key == "gpus") {
      gpus_valid = true;
      std::istringstream items(value);
      std::string item;
      while (std::getline(items, item, ',')) {
        unsigned gpu = 0;
        if (!parse_number(item, gpu)) gpus_valid = false;
        marker.gpus.push_back(gpu);
      }
    } else if (key == "started_utc") {
      marker.started_utc = value;
    } else if (key == "power_limits_mw") {
      std::istringstream items(value);
      std::string item;
      while (std::getline(items, item, ',')) {
        size_t colon = item.find(':');
        unsigned gpu = 0;
        unsigned mw = 0;
        if (colon == std::string::npos || !parse_number(item.substr(0, colon), gpu) ||
            !parse_number(item.substr(colon + 1), mw) || mw == 0) {
          gpus_valid = false;  // a limit we cannot read back: treat the marker as unreadable
          continue;
        }
        marker.power_limits_mw.emplace_back(gpu, mw);
      }
    }
  }
  if (!have_pid || !gpus_valid) return std::nullopt;
  return marker;
}

void write_marker(const Marker& marker, const std::string& path) {
  write_file_atomic(path, format_marker(marker));
}

void remove_marker(const std::string& path) {
  ::unlink(path.c_str());
}

bool marker_owner_alive(const Marker& marker) {
  if (::kill(static_cast<pid_t>(marker.pid), 0) != 0 && errno != EPERM) return false;
  auto stat = read_process_stat(marker.pid);
  if (!stat) return true;  // no /proc: trust kill()
  if (stat->state == 'Z' || stat->state == 'X') return false;
  return marker.pid_start_ticks == 0 || stat->start_ticks == marker.pid_start_ticks;
}

void reset_locked_clocks(const Nvml& nvml, unsigned gpu_index) {
  nvmlDevice_t device = nvml.device(gpu_index);
  std::exception_ptr first_error;
  try {
    nvml.reset_gpu_locked_clocks(device);
  } catch (...) {
    first_error = std::current_exception();
  }
  try {
    nvml.reset_memory_locked_clocks(device);
  } catch (const NvmlError& error) {
    if (error.code() != nvml_const::kErrorNotSupported && !first_error) {
      first_error = std::current_exception();
    }
  } catch (...) {
    if (!first_error) first_error = std::current_exception();
  }
  if (first_error) std::rethrow_exception(first_error);
}

void restore_power_limit(const Nvml& nvml, unsigned gpu_index, unsigned mw) {
  nvml.set_power_limit_mw(nvml.device(gpu_index), mw);
}

bool recover_stale_marker(const Nvml& nvml, std::ostream& log) {
  std::string path = marker_path();
  if (::access(path.c_str(), F_OK) != 0) return false;
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& error) {
    log << "dvfsim hw: warning: " << error.what() << "\n";
    return false;
  }
  std::optional<Marker> marker = parse_marker(text);
  std::vector<unsigned> gpus;
  std::vector<std::pair<unsigned, unsigned>> limits;
  if (marker) {
    limits = marker->power_limits_mw;
    if (marker_owner_alive(*marker)) return false;
    gpus = marker->gpus;
    log << fmt::format(
        "dvfsim hw: found a stale clock marker {} from pid {} (started {}), which is no longer "
        "running; resetting locked clocks on GPU {}\n",
        path, marker->pid, marker->started_utc.empty() ? "?" : marker->started_utc, gpu_list(gpus));
  } else {
    unsigned count = nvml.device_count();
    for (unsigned gpu = 0; gpu < count; ++gpu) gpus.push_back(gpu);
    log << fmt::format(
        "dvfsim hw: found an unreadable clock marker {}; resetting locked clocks on all GPUs "
        "({})\n",
        path, gpu_list(gpus));
  }
  bool all_reset = true;
  for (unsigned gpu : gpus) {
    try {
      reset_locked_clocks(nvml, gpu);
      log << fmt::format("dvfsim hw: reset locked GPU and memory clocks on GPU {}\n", gpu);
    } catch (const std::exception& error) {
      all_reset = false;
      log << fmt::format("dvfsim hw: warning: could not reset clocks on GPU {}: {}\n", gpu,
                         error.what());
    }
  }
  for (const auto& [gpu, mw] : limits) {
    try {
      restore_power_limit(nvml, gpu, mw);
      log << fmt::format("dvfsim hw: restored the power limit of GPU {} to {:g} W\n", gpu,
                         mw * 1e-3);
    } catch (const std::exception& error) {
      all_reset = false;
      log << fmt::format("dvfsim hw: warning: could not restore the power limit of GPU {}: {}\n",
                         gpu, error.what());
    }
  }
  if (all_reset) {
    remove_marker(path);
    log << fmt::format("dvfsim hw: removed {}\n", path);
  } else {
    log << fmt::format(
        "dvfsim hw: left {} in place; run a dvfsim hw command again as a user "
        "allowed to change clocks\n",
        path);
  }
  return true;
}

}  // namespace dvfsim::hw
