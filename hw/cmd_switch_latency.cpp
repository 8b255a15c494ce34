// dvfsim hw switch-latency: time clock switches on the user's GPU and write them as a
// device file's switch_latency block (hw/switch_latency.h has the method).
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <thread>

#include "hw/clock_lock.h"
#include "hw/command_util.h"
#include "hw/files.h"
#include "hw/marker.h"
#include "hw/nvml.h"
#include "hw/subcommands.h"
#include "hw/switch_latency.h"
#include "sim/error.h"

namespace dvfsim::hw {
namespace {

using Clock = std::chrono::steady_clock;

struct SwitchLatencyOptions {
  bool allow_clock_changes = false;
  std::string pairs;
  int repeats = 10;
  unsigned gpu = 0;
  std::string out;
  std::string probe_library;
  bool readback_only = false;
  int probe_us = 200;
  int timeout_ms = 2000;
  int settle_ms = 100;
  int gap_ms = 20;
  double tolerance = 0.02;
};

// SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked while clocks are changed and
// polled between NVML calls, so that an interrupted measurement restores them.
class SignalWatch {
 public:
  SignalWatch() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  }
  ~SignalWatch() {
    timespec zero{};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Throws Interrupted if one of the signals is pending.
  void check() {
    timespec zero{};
    int s = sigtimedwait(&set_, nullptr, &zero);
    if (s > 0) {
      throw Interrupted{s};
    }
  }
  struct Interrupted {
    int signal_number;
  };

 private:
  sigset_t set_;
  sigset_t previous_;
};

double us_since(Clock::time_point start, Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - start).count();
}

class Measurer {
 public:
  Measurer(const Nvml& nvml, unsigned gpu, ClockLock& lock, ThroughputProbe* probe,
           SignalWatch& signals, const SwitchLatencyOptions& options)
      : nvml_(nvml),
        device_(nvml.device(gpu)),
        gpu_(gpu),
        lock_(lock),
        probe_(probe),
        signals_(signals),
        options_(options) {}

  // Both directions of a pair, options.repeats times each.
  void measure_pair(const ClockPair& pair, std::vector<SwitchSample>& samples) {
    const double from_rate = settle(pair.domain, pair.from_mhz);
    const double to_rate = settle(pair.domain, pair.to_mhz);
    bool use_probe = probe_ != nullptr;
    if (use_probe &&
        std::abs(to_rate - from_rate) < 3 * options_.tolerance * std::max(from_rate, to_rate)) {
      std::cerr << fmt::format(
          "dvfsim hw switch-latency: warning: the probe runs at the same speed at {} {} and {} "
          "MHz ({:.4g} vs {:.4g}); timing this pair by clock read-back only\n",
          domain_name(pair.domain), pair.from_mhz, pair.to_mhz, from_rate, to_rate);
      use_probe = false;
    }
    settle(pair.domain, pair.from_mhz);
    const ClockPair reverse{pair.domain, pair.to_mhz, pair.from_mhz};
    // A switch the measurer could not time precisely (descheduled while it
    // waited: common on a busy machine) is timed again, up to seven extra
    // rounds per repeat; each round switches there and back, so both
    // directions are timed in every round and kept while they are wanted.
    int want_there = options_.repeats, want_back = options_.repeats, dropped = 0;
    const int max_rounds = 8 * options_.repeats;
    for (int round = 0; round < max_rounds && (want_there > 0 || want_back > 0); ++round) {
      const SwitchSample there = time_switch(pair, from_rate, to_rate, use_probe);
      rest();
      const SwitchSample back = time_switch(reverse, to_rate, from_rate, use_probe);
      rest();
      for (auto [sample, want] : {std::pair{&there, &want_there}, std::pair{&back, &want_back}}) {
        if (*want == 0) continue;
        if (!sample->precise()) {
          ++dropped;
          continue;
        }
        samples.push_back(*sample);
        --*want;
      }
    }
    if (dropped > 0 || want_there > 0 || want_back > 0) {
      std::cerr << fmt::format(
          "dvfsim hw switch-latency: {} {} <-> {} MHz: {} switch(es) timed again (landing known "
          "to less than 10 % or 100 us){}\n",
          domain_name(pair.domain), pair.from_mhz, pair.to_mhz, dropped,
          want_there > 0 || want_back > 0
              ? fmt::format("; only {} and {} precise switches of {} after {} rounds",
                            options_.repeats - want_there, options_.repeats - want_back,
                            options_.repeats, max_rounds)
              : "");
    }
  }

  unsigned read(ClockDomain domain) const {
    return nvml_.clock_mhz(
        device_, domain == ClockDomain::core ? nvml_const::kClockSm : nvml_const::kClockMemory);
  }

 private:
  void request(ClockDomain domain, unsigned mhz) {
    if (domain == ClockDomain::core) {
      lock_.set_core(mhz);
    } else {
      lock_.set_memory(mhz);
    }
  }

  void pause(std::chrono::microseconds duration) {
    signals_.check();
    std::this_thread::sleep_for(duration);
  }

  void rest() {
    const auto until = Clock::now() + std::chrono::milliseconds(options_.gap_ms);
    while (Clock::now() < until) pause(std::chrono::microseconds(500));
  }

  // Locks `mhz` and waits until read-back shows it, settle_ms have passed and (with
  // a probe) three bursts agree; returns the probe's rate there (0 without a probe).
  double settle(ClockDomain domain, unsigned mhz) {
    const auto start = Clock::now();
    if (probe_ != nullptr) probe_->start(gpu_, domain, start);
    request(domain, mhz);
    const auto give_up =
        start + std::chrono::milliseconds(options_.timeout_ms + options_.settle_ms);
    const auto settled_at = start + std::chrono::milliseconds(options_.settle_ms);
    std::vector<ProbeBurst> bursts;
    while (true) {
      pause(std::chrono::microseconds(200));
      const unsigned now_mhz = read(domain);
      if (probe_ != nullptr) probe_->collect(bursts);
      if (now_mhz == mhz && Clock::now() >= settled_at) {
        if (probe_ == nullptr) return 0;
        if (bursts.size() >= 3) {
          const size_t n = bursts.size();
          const double a = bursts[n - 3].rate, b = bursts[n - 2].rate, c = bursts[n - 1].rate;
          const double mean = (a + b + c) / 3;
          if (mean > 0 && std::max({a, b, c}) - std::min({a, b, c}) <= options_.tolerance * mean) {
            probe_->stop();
            return mean;
          }
        }
      }
      if (Clock::now() > give_up) {
        throw std::runtime_error(fmt::format(
            "GPU {}'s {} clock did not settle at {} MHz within {} ms (read-back {} MHz{})", gpu_,
            domain_name(domain), mhz, options_.timeout_ms + options_.settle_ms, now_mhz,
            probe_ != nullptr ? ", or the probe's speed kept changing" : ""));
      }
    }
  }

  SwitchSample time_switch(const ClockPair& pair, double from_rate, double to_rate,
                           bool use_probe) {
    SwitchSample sample;
    sample.pair = pair;
    std::vector<ProbeBurst> bursts;
    std::optional<double> readback_us;
    std::optional<ProbeLanding> landing;
    double last_old_read_us = 0;
    const auto t0 = Clock::now();
    if (use_probe) probe_->start(gpu_, pair.domain, t0);
    request(pair.domain, pair.to_mhz);
    sample.request_us = us_since(t0, Clock::now());
    const auto give_up = t0 + std::chrono::milliseconds(options_.timeout_ms);
    while (true) {
      signals_.check();
      const auto a = Clock::now();
      const unsigned mhz = read(pair.domain);
      const double read_us = us_since(t0, a) + 0.5 * us_since(a, Clock::now());
      // Switched once read-back is nearer the new clock than the old one.
      const bool moved = std::abs(static_cast<double>(mhz) - pair.to_mhz) <
                         std::abs(static_cast<double>(mhz) - pair.from_mhz);
      if (!readback_us && moved) {
        readback_us = 0.5 * (last_old_read_us + read_us);
        sample.readback_uncertainty_us = read_us - last_old_read_us;
      }
      if (!moved) last_old_read_us = read_us;
      if (use_probe && !landing) {
        probe_->collect(bursts);
        landing = find_probe_landing(bursts, from_rate, to_rate, options_.tolerance);
      }
      if (readback_us && (!use_probe || landing)) break;
      if (Clock::now() > give_up) {
        sample.timed_out = true;
        std::cerr << fmt::format(
            "dvfsim hw switch-latency: warning: {} {} -> {} MHz did not take effect within {} ms "
            "(read-back {} MHz{})\n",
            domain_name(pair.domain), pair.from_mhz, pair.to_mhz, options_.timeout_ms, mhz,
            use_probe && !landing ? ", probe speed unchanged" : "");
        if (use_probe) probe_->stop();
        settle(pair.domain, pair.to_mhz);  // leave the GPU at the new clock
        return sample;
      }
      // No sleep: a sleeping process waits for the scheduler to wake it (ms on a
      // busy machine), which would coarsen read-back; reading on keeps it exact
      // to one NVML call while the process runs.
    }
    if (use_probe) probe_->stop();
    sample.readback_us = *readback_us;
    if (landing) {
      sample.probe_us = landing->land_us;
      sample.probe_uncertainty_us = landing->uncertainty_us;
      sample.stall_us = landing->stall_us;
    }
    return sample;
  }

  const Nvml& nvml_;
  nvmlDevice_t device_;
  unsigned gpu_;
  ClockLock& lock_;
  ThroughputProbe* probe_;
  SignalWatch& signals_;
  const SwitchLatencyOptions& options_;
};

void check_options(const SwitchLatencyOptions& o) {
  if (!o.allow_clock_changes) {
    throw InputError(
        "refusing to change GPU clocks without --allow-clock-changes (dvfsim hw switch-latency "
        "switches clocks many times and restores the defaults afterwards)");
  }
  if (o.out.empty()) throw InputError("--out FILE is required");
  if (o.repeats < 1 || o.repeats > 10000)
    throw InputError(fmt::format("--repeats {}: expected 1 to 10000", o.repeats));
  if (o.probe_us < 10 || o.probe_us > 100000)
    throw InputError(fmt::format("--probe-us {}: expected 10 to 100000", o.probe_us));
  if (o.timeout_ms < 1 || o.timeout_ms > 600000)
    throw InputError(fmt::format("--timeout-ms {}: expected 1 to 600000", o.timeout_ms));
  if (o.settle_ms < 0 || o.settle_ms > 600000)
    throw InputError(fmt::format("--settle-ms {}: expected 0 to 600000", o.settle_ms));
  if (o.gap_ms < 0 || o.gap_ms > 600000)
    throw InputError(fmt::format("--gap-ms {}: expected 0 to 600000", o.gap_ms));
  if (!(o.tolerance > 0 && o.tolerance < 0.5))
    throw InputError(fmt::format("--tolerance {}: expected a fraction in (0, 0.5)", o.tolerance));
  if (o.probe_library.empty() && !o.readback_only) {
    throw InputError(
        "no throughput probe: give --probe-library PATH (a library exporting "
        "dvfsim_probe_v1_start/collect/stop, "
        "docs/hw.md), or --readback-only to time switches by clock read-back alone (which can "
        "lag the clock the GPU runs)");
  }
  if (!o.probe_library.empty() && o.readback_only)
    throw InputError("--probe-library and --readback-only exclude each other");
}

// Every pair's clocks must be supported: memory clocks from the list, core clocks
// from the graphics clocks at the highest memory clock.
void check_pairs(const std::vector<ClockPair>& pairs, const std::vector<unsigned>& core,
                 const std::vector<unsigned>& memory, unsigned gpu, const std::string& name) {
  for (const ClockPair& p : pairs) {
    const auto& list = p.domain == ClockDomain::core ? core : memory;
    for (unsigned mhz : {p.from_mhz, p.to_mhz}) {
      if (std::find(list.begin(), list.end(), mhz) == list.end()) {
        throw InputError(
            fmt::format("--pairs {}:{}-{}: {} MHz is not a supported {} clock of GPU {} ({})",
                        domain_name(p.domain), p.from_mhz, p.to_mhz, mhz,
                        p.domain == ClockDomain::core ? "graphics" : "memory", gpu, name));
      }
    }
  }
}

std::string command_text(const SwitchLatencyOptions& o, const std::vector<ClockPair>& pairs) {
  std::string pairs_text;
  for (const ClockPair& p : pairs) {
    pairs_text += fmt::format("{}{}:{}-{}", pairs_text.empty() ? "" : ",", domain_name(p.domain),
                              p.from_mhz, p.to_mhz);
  }
  std::string text =
      fmt::format("dvfsim hw switch-latency --allow-clock-changes --gpu {} --pairs {} --repeats {}",
                  o.gpu, pairs_text, o.repeats);
  text += o.readback_only
              ? std::string(" --readback-only")
              : fmt::format(" --probe-library {} --probe-us {}", o.probe_library, o.probe_us);
  text += fmt::format(" --settle-ms {} --gap-ms {} --timeout-ms {} --tolerance {:g} --out {}",
                      o.settle_ms, o.gap_ms, o.timeout_ms, o.tolerance, o.out);
  return text;
}

int run_switch_latency(const SwitchLatencyOptions& options) {
  check_options(options);
  auto nvml = open_nvml_and_recover();
  const unsigned gpu = select_gpus(*nvml, {options.gpu}).front();
  nvmlDevice_t device = nvml->device(gpu);
  SwitchLatencyReport report;
  report.gpu_name = nvml->name(device);
  report.gpu_index = gpu;
  report.driver = nvml->driver_version();
  report.date_utc = utc_timestamp(std::chrono::system_clock::now());

  const std::vector<unsigned> memory = nvml->supported_memory_clocks_mhz(device);
  if (memory.empty()) throw std::runtime_error(fmt::format("GPU {} reports no memory clocks", gpu));
  const unsigned top_memory = *std::max_element(memory.begin(), memory.end());
  const std::vector<unsigned> core = nvml->supported_graphics_clocks_mhz(device, top_memory);
  std::vector<ClockPair> pairs = options.pairs.empty()
                                     ? default_clock_pairs(core, memory)
                                     : parse_clock_pairs(options.pairs, "--pairs");
  check_pairs(pairs, core, memory, gpu, report.gpu_name);
  if (pairs.empty())
    throw std::runtime_error(fmt::format("GPU {} offers no two clocks to switch between", gpu));
  bool has_core = false, has_memory = false;
  for (const ClockPair& p : pairs) {
    (p.domain == ClockDomain::core ? has_core : has_memory) = true;
  }
  report.memory_single_clock = memory.size() < 2;
  if (!has_memory) {
    report.memory_not_measured = memory.size() < 2
                                     ? fmt::format(
                                           "the GPU has one memory clock ({} MHz), so "
                                           "memory switches never happen",
                                           top_memory)
                                     : "no memory pairs were requested (--pairs)";
  }
  if (!has_core) report.core_not_measured = "no core pairs were requested (--pairs)";
  report.command = command_text(options, pairs);

  std::unique_ptr<ThroughputProbe> probe;
  if (!options.probe_library.empty()) {
    probe = open_library_probe(options.probe_library, static_cast<unsigned>(options.probe_us));
    report.probe = "throughput probe: " + probe->description();
  } else {
    report.probe = "clock read-back only (no throughput probe)";
  }

  const std::string marker = marker_path();
  check_no_other_apply(marker);
  const unsigned start_core = nvml->clock_mhz(device, nvml_const::kClockSm);
  const unsigned start_memory = nvml->clock_mhz(device, nvml_const::kClockMemory);
  SignalWatch signals;  // before the first change: a signal from here on restores the clocks
  ClockLock lock(*nvml, {gpu}, marker);
  Measurer measurer(*nvml, gpu, lock, probe.get(), signals, options);
  try {
    for (const ClockPair& pair : pairs) measurer.measure_pair(pair, report.samples);
  } catch (const SignalWatch::Interrupted& interrupted) {
    lock.reset();
    std::cerr << fmt::format(
        "dvfsim hw switch-latency: interrupted by signal {} ({}) after {} switches; default "
        "clocks restored; {} not written\n",
        interrupted.signal_number, strsignal(interrupted.signal_number), report.samples.size(),
        options.out);
    return 128 + interrupted.signal_number;
  }
  lock.reset();

  // Read-back after the restore, once the last switch back has landed.
  const auto give_up = Clock::now() + std::chrono::milliseconds(options.timeout_ms);
  unsigned end_core = measurer.read(ClockDomain::core);
  unsigned end_memory = measurer.read(ClockDomain::memory);
  while ((end_core != start_core || end_memory != start_memory) && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    end_core = measurer.read(ClockDomain::core);
    end_memory = measurer.read(ClockDomain::memory);
  }
  std::string restored = fmt::format("SM {} MHz, memory {} MHz", end_core, end_memory);
  if (end_core == start_core && end_memory == start_memory) {
    restored += " as at the start";
  } else {
    restored += fmt::format(
        " (at the start: SM {} MHz, memory {} MHz; a GPU's default clocks "
        "follow its load)",
        start_core, start_memory);
  }

  size_t timed_out = 0;
  std::vector<double> core_us, memory_us;
  for (const SwitchSample& s : report.samples) {
    if (s.timed_out) {
      ++timed_out;
    } else {
      (s.pair.domain == ClockDomain::core ? core_us : memory_us).push_back(s.latency_us());
    }
  }
  if (core_us.empty() && memory_us.empty()) {
    throw std::runtime_error(fmt::format("none of the {} switches took effect within {} ms",
                                         report.samples.size(), options.timeout_ms));
  }
  write_file_atomic(options.out, switch_latency_yaml(report));
  auto summary = [](const char* name, const std::vector<double>& us) {
    if (us.empty()) return std::string();
    LatencyStats s = latency_stats(us);
    return fmt::format("; {} median {:.3f} ms (p5 {:.3f}, p95 {:.3f} ms, n {})", name,
                       s.median * 1e-3, s.p5 * 1e-3, s.p95 * 1e-3, s.n);
  };
  std::cerr << fmt::format(
      "dvfsim hw switch-latency: {} switches on GPU {} ({}){}{}{}; default clocks restored, "
      "read back {}; wrote {}\n",
      report.samples.size(), gpu, report.gpu_name, summary("core", core_us),
      summary("memory", memory_us),
      timed_out > 0 ? fmt::format("; {} timed out", timed_out) : std::string(), restored,
      options.out);
  return 0;
}

}  // namespace

void add_switch_latency_command(CLI::App& hw, int& exit_code) {
  auto options = std::make_shared<SwitchLatencyOptions>();
  CLI::App* cmd = hw.add_subcommand(
      "switch-latency",
      "Time clock switches on the GPU and write a device file's switch_latency block (needs "
      "root)");
  cmd->add_flag("--allow-clock-changes", options->allow_clock_changes,
                "Required: permit dvfsim to switch GPU clocks (they are restored afterwards)");
  cmd->add_option("--pairs", options->pairs,
                  "Clock pairs to switch between, both ways: DOMAIN:FROM-TO,... e.g. "
                  "core:1980-1410,memory:3201-2201 (default: a spread of the supported clocks)");
  cmd->add_option("--repeats", options->repeats, "Switches per pair and direction (default 10)");
  cmd->add_option("--gpu", options->gpu, "GPU index (default 0)");
  cmd->add_option("--out", options->out, "Where to write the switch_latency YAML block")
      ->required();
  cmd->add_option(
      "--probe-library", options->probe_library,
      "Shared library exporting dvfsim_probe_v1_{start,collect,stop}, the throughput probe");
  cmd->add_flag("--readback-only", options->readback_only,
                "Time switches by clock read-back alone (no probe; read-back can lag)");
  cmd->add_option("--probe-us", options->probe_us, "Length of one probe burst in us (default 200)");
  cmd->add_option("--timeout-ms", options->timeout_ms,
                  "Give up on a switch after this long (default 2000)");
  cmd->add_option("--settle-ms", options->settle_ms,
                  "Wait at least this long at a clock before calibrating the probe (default 100)");
  cmd->add_option("--gap-ms", options->gap_ms, "Pause between switches (default 20)");
  cmd->add_option("--tolerance", options->tolerance,
                  "Relative spread of the probe's speed at one clock (default 0.02)");
  cmd->callback([options, &exit_code] {
    exit_code =
        run_reporting_errors("switch-latency", [&] { return run_switch_latency(*options); });
  });
}

}  // namespace dvfsim::hw
