#pragma once
// Measuring clock-switch latencies (`dvfsim hw switch-latency`): the throughput
// probe interface, the analysis of one switch's probe bursts, the statistics of
// many switches and the device-file `switch_latency` block they become.
//
// A switch is timed from the request (just before the NVML set call) to the
// moment it takes effect. Clock read-back (nvmlDeviceGetClockInfo) alone can lag
// or lead the clock the GPU actually runs, so a short probe kernel runs in bursts
// between read-backs: its throughput tracks the effective clock of the domain
// (compute-bound for the core clock, bandwidth-bound for the memory clock), and
// the switch lands where the throughput leaves the old clock's rate.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dvfsim::hw {

enum class ClockDomain { core = 0, memory = 1 };
const char* domain_name(ClockDomain domain);

struct ClockPair {
  ClockDomain domain = ClockDomain::core;
  unsigned from_mhz = 0;
  unsigned to_mhz = 0;
};

// "core:1980-1410,memory:3201-2201" (each pair is switched both ways). Throws
// InputError naming the item.
std::vector<ClockPair> parse_clock_pairs(const std::string& text, const std::string& origin);

// Default pairs from the supported clocks: core high<->mid, mid<->low, high<->low
// (high = the highest, mid = the one nearest the middle of the range, low = the
// one nearest a quarter of it), at the highest memory clock; memory highest<->
// next lower and highest<->lowest. A domain with one clock gets none.
std::vector<ClockPair> default_clock_pairs(const std::vector<unsigned>& core_mhz,
                                           const std::vector<unsigned>& memory_mhz);

// One probe burst: times in us (since the switch was requested, or the probe
// started), and its rate.
struct ProbeBurst {
  double start_us = 0;
  double end_us = 0;
  double rate = 0;
};

// Back-to-back short bursts of work on the GPU whose throughput follows one
// domain's clock (compute-bound for core, bandwidth-bound for memory), timed on
// the GPU, so that the record has no gaps when the measuring process is
// descheduled (a real probe enqueues kernels with events between them and reads
// the events).
class ThroughputProbe {
 public:
  virtual ~ThroughputProbe() = default;
  // Starts recording on `gpu`; burst times are reported relative to `origin`.
  virtual void start(unsigned gpu, ClockDomain domain,
                     std::chrono::steady_clock::time_point origin) = 0;
  // Appends the bursts completed since the last call (rates in the probe's units;
  // only ratios matter).
  virtual void collect(std::vector<ProbeBurst>& out) = 0;
  virtual void stop() = 0;
  virtual std::string description() const = 0;
};

// A probe in a shared library exporting (0 on success; times in seconds of
// CLOCK_MONOTONIC, work in the probe's units):
//   int dvfsim_probe_v1_start(unsigned gpu, int domain /* 0 core, 1 memory */,
//                             unsigned burst_us);
//   int dvfsim_probe_v1_collect(double* start_s, double* end_s, double* work,
//                               unsigned capacity, unsigned* count);
//   int dvfsim_probe_v1_stop(void);
// The fake NVML exports one whose speed follows its effective clocks.
std::unique_ptr<ThroughputProbe> open_library_probe(const std::string& path, unsigned burst_us);

struct ProbeLanding {
  double land_us = 0;   // when the throughput left the old clock's rate
  double stall_us = 0;  // how long it then stayed near zero (a memory switch's stall)
  // How far off land_us can be: 0 inside a burst that ran the old rate, then the
  // new one (interpolated exactly); the burst's length when a stall also fell in
  // it; the gap's length when the landing fell between two bursts (the measuring
  // process was descheduled, or read back the clock).
  double uncertainty_us = 0;
};

// Where the switch landed, from bursts ordered in time, the calibrated rates at
// the old and new clock and the relative tolerance of a rate. A burst straddling
// the landing is interpolated (its rate mixes the old rate with the following
// one's, new or stalled). nullopt when no burst left the old rate, or no two
// consecutive bursts then ran at the new rate.
std::optional<ProbeLanding> find_probe_landing(const std::vector<ProbeBurst>& bursts,
                                               double old_rate, double new_rate, double tolerance);

// One timed switch.
struct SwitchSample {
  ClockPair pair;  // this direction: from -> to
  double readback_us = 0;
  double readback_uncertainty_us = 0;  // between the last old and the first new read
  std::optional<double> probe_us;      // absent: no probe, or it cannot tell the clocks apart
  double probe_uncertainty_us = 0;
  double stall_us = 0;
  double request_us = 0;  // from the timer's start until the request call returned
  bool timed_out = false;
  double latency_us() const { return probe_us ? *probe_us : readback_us; }
  // How far off the landing may be: the landing's own uncertainty plus the
  // time the request took to reach the driver (a process descheduled there,
  // or between two reads, times the switch late or coarsely).
  double uncertainty_us() const {
    return (probe_us ? probe_uncertainty_us : readback_uncertainty_us) + request_us;
  }
  // Precise enough to keep: known to within 10 % of its latency, or 100 us.
  bool precise() const {
    return timed_out || uncertainty_us() <= std::max(100.0, 0.1 * latency_us());
  }
};

// Order statistics of some latencies (us).
struct LatencyStats {
  size_t n = 0;
  double median = 0, p5 = 0, p16 = 0, p25 = 0, p75 = 0, p84 = 0, p95 = 0, min = 0, max = 0;
  // Of a lognormal with this median and p16/p84: (ln p84 - ln p16) / 2.
  double sigma = 0;
};
// Linear-interpolated quantiles (type 7). Empty input: n = 0.
LatencyStats latency_stats(std::vector<double> values_us);

struct SwitchLatencyReport {
  std::string gpu_name;
  unsigned gpu_index = 0;
  std::string driver;
  std::string date_utc;
  std::string command;
  std::string probe;                  // description, or "none (clock read-back only)"
  std::vector<SwitchSample> samples;  // the precise ones (timed out ones too)
  // Why a domain was not measured (e.g. one memory clock), if it was not.
  std::string core_not_measured;
  std::string memory_not_measured;
  bool memory_single_clock = false;  // the GPU has one memory clock: nothing to switch
};

// The YAML text: a comment table per pair and direction, then a `switch_latency:`
// block that models/device_yaml.cpp loads (core and memory as lognormal
// distributions with median, sigma and bounds; memory_stall_us), each with the
// measurement as its source.
std::string switch_latency_yaml(const SwitchLatencyReport& report);

}  // namespace dvfsim::hw
