#include "hw/switch_latency.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "sim/error.h"
#include "sim/json.h"

namespace dvfsim::hw {
namespace {

std::string trim(const std::string& text) {
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

unsigned parse_mhz(const std::string& text, const std::string& where) {
  size_t used = 0;
  unsigned long value = 0;
  try {
    value = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value == 0 || value > 100000) {
    throw InputError(fmt::format("{}: '{}' is not a clock in MHz", where, text));
  }
  return static_cast<unsigned>(value);
}

// The supported clock nearest to `target`.
unsigned nearest(const std::vector<unsigned>& clocks, double target) {
  unsigned best = clocks.front();
  for (unsigned mhz : clocks) {
    if (std::abs(mhz - target) < std::abs(best - target)) best = mhz;
  }
  return best;
}

double quantile(const std::vector<double>& sorted, double p) {
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto low = static_cast<size_t>(std::floor(h));
  const size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (h - static_cast<double>(low)) * (sorted[high] - sorted[low]);
}

class LibraryProbe : public ThroughputProbe {
 public:
  LibraryProbe(const std::string& path, unsigned burst_us) : path_(path), burst_us_(burst_us) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = dlerror();
      throw InputError(fmt::format("--probe-library {}: cannot load it: {}", path,
                                   why != nullptr ? why : "unknown error"));
    }
    try {
      resolve(start_, "dvfsim_probe_v1_start");
      resolve(collect_, "dvfsim_probe_v1_collect");
      resolve(stop_, "dvfsim_probe_v1_stop");
    } catch (...) {
      dlclose(handle_);
      throw;
    }
  }
  ~LibraryProbe() override {
    if (running_) stop_();
    dlclose(handle_);
  }
  LibraryProbe(const LibraryProbe&) = delete;
  LibraryProbe& operator=(const LibraryProbe&) = delete;

  void start(unsigned gpu, ClockDomain domain,
             std::chrono::steady_clock::time_point origin) override {
    if (running_) stop();
    origin_s_ = std::chrono::duration<double>(origin.time_since_epoch()).count();
    check(start_(gpu, static_cast<int>(domain), burst_us_), "dvfsim_probe_v1_start");
    running_ = true;
  }
  void collect(std::vector<ProbeBurst>& out) override {
    constexpr unsigned kCapacity = 256;
    double start_s[kCapacity], end_s[kCapacity], work[kCapacity];
    unsigned count = 0;
    do {
      check(collect_(start_s, end_s, work, kCapacity, &count), "dvfsim_probe_v1_collect");
      for (unsigned i = 0; i < count && i < kCapacity; ++i) {
        const double length = end_s[i] - start_s[i];
        if (!(length > 0) || !(work[i] >= 0)) {
          throw std::runtime_error(
              fmt::format("probe {}: dvfsim_probe_v1_collect returned a burst of {} s with work {}",
                          path_, length, work[i]));
        }
        out.push_back(
            {(start_s[i] - origin_s_) * 1e6, (end_s[i] - origin_s_) * 1e6, work[i] / length});
      }
    } while (count == kCapacity);
  }
  void stop() override {
    if (!running_) return;
    running_ = false;
    check(stop_(), "dvfsim_probe_v1_stop");
  }
  std::string description() const override {
    return fmt::format("dvfsim_probe_v1 from {}, {} us bursts", path_, burst_us_);
  }

 private:
  template <typename F>
  void resolve(F& slot, const char* symbol) {
    void* address = dlsym(handle_, symbol);
    if (address == nullptr) {
      throw InputError(
          fmt::format("--probe-library {}: the library does not export {}", path_, symbol));
    }
    slot = reinterpret_cast<F>(address);
  }
  void check(int rc, const char* call) const {
    if (rc != 0)
      throw std::runtime_error(fmt::format("probe {}: {} failed (code {})", path_, call, rc));
  }

  std::string path_;
  unsigned burst_us_;
  void* handle_ = nullptr;
  int (*start_)(unsigned, int, unsigned) = nullptr;
  int (*collect_)(double*, double*, double*, unsigned, unsigned*) = nullptr;
  int (*stop_)() = nullptr;
  bool running_ = false;
  double origin_s_ = 0;
};

// A latency in us for YAML: whole microseconds from 100 us up, else 3 digits.
std::string us_number(double us) {
  return us >= 100 ? fmt::format("{:.0f}", us) : fmt::format("{:.3g}", us);
}

std::string ms(double us) {
  return fmt::format("{:.3g} ms", us * 1e-3);
}

}  // namespace

const char* domain_name(ClockDomain domain) {
  return domain == ClockDomain::core ? "core" : "memory";
}

std::vector<ClockPair> parse_clock_pairs(const std::string& text, const std::string& origin) {
  std::vector<ClockPair> pairs;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    item = trim(item);
    const std::string where = fmt::format("{} '{}'", origin, item);
    const size_t colon = item.find(':');
    const size_t dash = item.find('-', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || dash == std::string::npos) {
      throw InputError(fmt::format(
          "{}: expected DOMAIN:FROM-TO, e.g. core:1980-1410 or memory:3201-2201", where));
    }
    ClockPair pair;
    const std::string domain = trim(item.substr(0, colon));
    if (domain == "core") {
      pair.domain = ClockDomain::core;
    } else if (domain == "memory") {
      pair.domain = ClockDomain::memory;
    } else {
      throw InputError(fmt::format("{}: domain '{}' is not core or memory", where, domain));
    }
    pair.from_mhz = parse_mhz(trim(item.substr(colon + 1, dash - colon - 1)), where);
    pair.to_mhz = parse_mhz(trim(item.substr(dash + 1)), where);
    if (pair.from_mhz == pair.to_mhz) {
      throw InputError(fmt::format("{}: the two clocks are the same", where));
    }
    pairs.push_back(pair);
  }
  if (pairs.empty()) throw InputError(fmt::format("{}: no clock pairs given", origin));
  return pairs;
}

std::vector<ClockPair> default_clock_pairs(const std::vector<unsigned>& core_mhz,
                                           const std::vector<unsigned>& memory_mhz) {
  std::vector<ClockPair> pairs;
  auto add = [&](ClockDomain domain, unsigned from, unsigned to) {
    if (from == to) return;
    for (const ClockPair& p : pairs) {
      if (p.domain == domain &&
          ((p.from_mhz == from && p.to_mhz == to) || (p.from_mhz == to && p.to_mhz == from)))
        return;
    }
    pairs.push_back({domain, from, to});
  };
  if (core_mhz.size() > 1) {
    auto [low_it, high_it] = std::minmax_element(core_mhz.begin(), core_mhz.end());
    const double span = *high_it - *low_it;
    const unsigned high = *high_it;
    const unsigned mid = nearest(core_mhz, *low_it + 0.5 * span);
    const unsigned low = nearest(core_mhz, *low_it + 0.25 * span);
    add(ClockDomain::core, high, mid);
    add(ClockDomain::core, mid, low);
    add(ClockDomain::core, high, low);
  }
  std::set<unsigned> memory(memory_mhz.begin(), memory_mhz.end());
  if (memory.size() > 1) {
    const unsigned high = *memory.rbegin();
    const unsigned next = *std::next(memory.rbegin());
    add(ClockDomain::memory, high, next);
    add(ClockDomain::memory, high, *memory.begin());
  }
  return pairs;
}

std::unique_ptr<ThroughputProbe> open_library_probe(const std::string& path, unsigned duration_us) {
  return std::make_unique<LibraryProbe>(path, duration_us);
}

std::optional<ProbeLanding> find_probe_landing(const std::vector<ProbeBurst>& bursts,
                                               double old_rate, double new_rate, double tolerance) {
  auto near = [&](double rate, double target) {
    return std::abs(rate - target) <= tolerance * target;
  };
  const size_t n = bursts.size();
  size_t first = 0;  // the first burst off the old rate
  while (first < n && near(bursts[first].rate, old_rate)) ++first;
  if (first == n) return std::nullopt;
  size_t settled = first;  // the first of two consecutive bursts at the new rate
  while (settled + 1 < n &&
         !(near(bursts[settled].rate, new_rate) && near(bursts[settled + 1].rate, new_rate)))
    ++settled;
  if (settled + 1 >= n) return std::nullopt;

  const double stall_below = 0.5 * std::min(old_rate, new_rate);
  bool stalled = false;
  for (size_t i = first; i < settled; ++i) stalled = stalled || bursts[i].rate < stall_below;

  // The burst `first` ran the old rate for a fraction of its time, then what
  // followed: a stall (rate 0) or the new rate.
  const ProbeBurst& b = bursts[first];
  const double before_start = first > 0 ? bursts[first - 1].end_us : 0.0;
  const bool then_stalled =
      b.rate < stall_below || (first + 1 < n && bursts[first + 1].rate < stall_below);
  const double after = then_stalled ? 0.0 : new_rate;
  const double old_fraction = std::clamp((b.rate - after) / (old_rate - after), 0.0, 1.0);
  ProbeLanding landing;
  if (old_fraction > 0) {
    landing.land_us = b.start_us + old_fraction * (b.end_us - b.start_us);
    landing.uncertainty_us = then_stalled ? b.end_us - b.start_us : 0.0;
  } else {
    landing.land_us = 0.5 * (before_start + b.start_us);
    landing.uncertainty_us = b.start_us - before_start;
  }
  if (stalled) {
    // The burst before `settled` ran stalled, then at the new rate for part of it
    // (or the stall ended in the gap before `settled`).
    const ProbeBurst& q = bursts[settled - 1];
    const ProbeBurst& s = bursts[settled];
    const double new_fraction = settled - 1 > first ? std::clamp(q.rate / new_rate, 0.0, 1.0) : 0.0;
    const double stall_end = new_fraction > 0 ? q.end_us - new_fraction * (q.end_us - q.start_us)
                                              : 0.5 * (q.end_us + s.start_us);
    landing.stall_us = std::max(0.0, stall_end - landing.land_us);
  }
  return landing;
}

LatencyStats latency_stats(std::vector<double> values_us) {
  LatencyStats s;
  s.n = values_us.size();
  if (values_us.empty()) return s;
  std::sort(values_us.begin(), values_us.end());
  s.median = quantile(values_us, 0.5);
  s.p5 = quantile(values_us, 0.05);
  s.p16 = quantile(values_us, 0.16);
  s.p25 = quantile(values_us, 0.25);
  s.p75 = quantile(values_us, 0.75);
  s.p84 = quantile(values_us, 0.84);
  s.p95 = quantile(values_us, 0.95);
  s.min = values_us.front();
  s.max = values_us.back();
  s.sigma = s.p16 > 0 ? 0.5 * std::log(s.p84 / s.p16) : 0.0;
  return s;
}

std::string switch_latency_yaml(const SwitchLatencyReport& report) {
  std::string out;
  out += fmt::format("# dvfsim hw switch-latency: clock-switch latencies of {} (GPU {})\n",
                     report.gpu_name, report.gpu_index);
  out += fmt::format("# measured {}, driver {}\n", report.date_utc, report.driver);
  out += fmt::format("# command: {}\n", report.command);
  out += fmt::format("# timed by: {}\n", report.probe);
  out += "# Replace the switch_latency block of the device's YAML (models/devices/NAME.yaml)\n";
  out += "# with the block below. Per pair and direction (latency: request to effect):\n";

  // Per domain and per direction: latencies, read-back latencies, stalls.
  struct Group {
    std::vector<double> latency, readback, stall;
    size_t timed_out = 0;
    bool probe = false;
    double max_uncertainty = 0;
  };
  std::map<std::pair<int, std::pair<unsigned, unsigned>>, Group> by_pair;
  std::map<int, Group> by_domain;
  std::vector<std::pair<int, std::pair<unsigned, unsigned>>> order;
  for (const SwitchSample& s : report.samples) {
    const int d = static_cast<int>(s.pair.domain);
    auto key = std::make_pair(d, std::make_pair(s.pair.from_mhz, s.pair.to_mhz));
    if (by_pair.find(key) == by_pair.end()) order.push_back(key);
    for (Group* g : {&by_pair[key], &by_domain[d]}) {
      if (s.timed_out) {
        ++g->timed_out;
        continue;
      }
      g->latency.push_back(s.latency_us());
      g->readback.push_back(s.readback_us);
      if (s.probe_us) g->stall.push_back(s.stall_us);
      g->max_uncertainty = std::max(
          g->max_uncertainty, s.probe_us ? s.probe_uncertainty_us : s.readback_uncertainty_us);
      g->probe = g->probe || s.probe_us.has_value();
    }
  }
  for (const auto& key : order) {
    const Group& g = by_pair[key];
    const LatencyStats l = latency_stats(g.latency);
    const LatencyStats r = latency_stats(g.readback);
    std::string line =
        fmt::format("#   {:<6} {:>5} -> {:<5} MHz: n {}", key.first == 0 ? "core" : "memory",
                    key.second.first, key.second.second, l.n);
    if (l.n > 0) {
      line += fmt::format(", median {}, p5 {}, p95 {}, read-back median {}", ms(l.median), ms(l.p5),
                          ms(l.p95), ms(r.median));
      if (key.first == 1)
        line += fmt::format(", stall median {}", ms(latency_stats(g.stall).median));
    }
    if (g.timed_out > 0) line += fmt::format(", {} timed out", g.timed_out);
    out += line + "\n";
  }

  std::string pairs_text;
  for (const auto& key : order) {
    if (key.second.first > key.second.second) {
      pairs_text +=
          fmt::format("{}{} {}<->{} MHz", pairs_text.empty() ? "" : ", ",
                      key.first == 0 ? "core" : "memory", key.second.first, key.second.second);
    }
  }
  const std::string where = fmt::format("{} (GPU {}), driver {}, {}", report.gpu_name,
                                        report.gpu_index, report.driver, report.date_utc);

  out += "switch_latency:\n";
  for (int d : {0, 1}) {
    const char* name = d == 0 ? "core" : "memory";
    const std::string& not_measured =
        d == 0 ? report.core_not_measured : report.memory_not_measured;
    const Group& g = by_domain[d];
    const LatencyStats l = latency_stats(g.latency);
    if (l.n == 0) {
      std::string why = !not_measured.empty() ? not_measured
                        : g.timed_out > 0 ? fmt::format("all {} switches timed out", g.timed_out)
                                          : std::string("no pairs of this domain were measured");
      const bool never = d == 1 && report.memory_single_clock;
      out += fmt::format(
          "  {}: {{distribution: fixed, value_us: 0, source: {}}}\n", name,
          json_quote(never
                         ? fmt::format("inferred: {}; not timed by dvfsim hw switch-latency on {}",
                                       why, where)
                         : fmt::format("assumption: a placeholder, not a measurement: dvfsim hw "
                                       "switch-latency on {} did not time this domain ({})",
                                       where, why)));
      continue;
    }
    const LatencyStats r = latency_stats(g.readback);
    const std::string source = fmt::format(
        "measured: dvfsim hw switch-latency on {}: {} {} switches ({}), request to effect {}; "
        "median and bounds as measured, sigma from the 16th/84th percentiles; command: {}",
        where, l.n, name, pairs_text,
        g.probe ? "by the throughput probe (" + report.probe + ")" : "by clock read-back",
        report.command);
    std::string note =
        fmt::format("p5 {}, p25 {}, median {}, p75 {}, p95 {} us; clock read-back median {} us",
                    us_number(l.p5), us_number(l.p25), us_number(l.median), us_number(l.p75),
                    us_number(l.p95), us_number(r.median));
    note += fmt::format("; every landing known to within {} us", us_number(g.max_uncertainty));
    if (g.timed_out > 0) {
      note += fmt::format("; {} more switches did not take effect in time and are left out",
                          g.timed_out);
    }
    out += fmt::format(
        "  {}: {{distribution: lognormal, median_us: {}, sigma: {:.3f}, min_us: {}, max_us: {},\n"
        "    source: {},\n    note: {}}}\n",
        name, us_number(l.median), l.sigma, us_number(l.min), us_number(l.max), json_quote(source),
        json_quote(note));
  }
  const Group& memory = by_domain[1];
  if (memory.stall.empty()) {
    out += fmt::format(
        "  memory_stall_us: {{value: 0, source: {}}}\n",
        json_quote(report.memory_single_clock
                       ? fmt::format("inferred: no memory switches, so no stall (one memory "
                                     "clock); not timed by dvfsim hw switch-latency on {}",
                                     where)
                       : fmt::format("assumption: a placeholder, not a measurement: dvfsim hw "
                                     "switch-latency on {} {}",
                                     where,
                                     memory.latency.empty()
                                         ? "timed no memory switch"
                                         : "had no probe to see a stall (read-back only)")));
  } else {
    const LatencyStats st = latency_stats(memory.stall);
    out += fmt::format(
        "  memory_stall_us: {{value: {}, source: {}}}\n", us_number(st.median),
        json_quote(fmt::format(
            "measured: dvfsim hw switch-latency on {}: median over {} memory switches of the time "
            "the probe did no work after the switch landed (p5 {}, p95 {} us)",
            where, st.n, us_number(st.p5), us_number(st.p95))));
  }
  return out;
}

}  // namespace dvfsim::hw
