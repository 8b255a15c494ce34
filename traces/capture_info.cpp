#include "traces/capture_info.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "models/capture_device.h"
#include "sim/csv.h"
#include "sim/error.h"
#include "traces/gzip_io.h"

namespace dvfsim {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view strip(std::string_view s, std::string_view suffix) {
  return ends_with(s, suffix) ? s.substr(0, s.size() - suffix.size()) : s;
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

struct Window {
  double t0_s = 0, t1_s = 0;
};

double parse_number(std::string_view s, const std::string& where) {
  double v = 0;
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    throw InputError(fmt::format("{}: not a number: '{}'", where, s));
  return v;
}

// A mean clock in MHz as an integer; InputError naming `where` unless in 0..100000.
std::int32_t clock_mhz(double mhz, const std::string& where, std::string_view what) {
  if (!(mhz >= 0 && mhz <= 100000))
    throw InputError(
        fmt::format("{}: {} {} MHz is not a clock in 0..100000 MHz", where, what, mhz));
  return static_cast<std::int32_t>(std::lround(mhz));
}

// Time-weighted means of the SM and memory clock columns over `w`.
std::pair<double, double> mean_clocks_from_csv(const std::string& path, Window w) {
  const std::string text = read_file(path);
  std::size_t pos = 0, line_no = 0;
  int col_t = -1, col_sm = -1, col_mem = -1;
  bool have_header = false;  // the header is the first non-empty line
  struct Sample {
    double t, sm, mem;
  };
  std::vector<Sample> samples;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty() || line == "\r") continue;
    const auto fields = split_csv_line(line);
    if (!have_header) {
      have_header = true;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string& f = fields[i];
        if (f == "t") col_t = static_cast<int>(i);
        if (f == "sm_MHz") col_sm = static_cast<int>(i);
        if (f == "mem_MHz") col_mem = static_cast<int>(i);
      }
      if (col_t < 0 || col_sm < 0)
        throw InputError(fmt::format("{}:{}: header lacks column 't' or 'sm_MHz'", path, line_no));
      continue;
    }
    const int need = std::max({col_t, col_sm, col_mem});
    if (static_cast<int>(fields.size()) <= need)
      throw InputError(fmt::format("{}:{}: expected at least {} fields", path, line_no, need + 1));
    const std::string where = fmt::format("{}:{}", path, line_no);
    samples.push_back({parse_number(fields[col_t], where), parse_number(fields[col_sm], where),
                       col_mem >= 0 ? parse_number(fields[col_mem], where) : 0.0});
  }
  double weight = 0, sm = 0, mem = 0;
  for (std::size_t i = 0; i + 1 < samples.size(); ++i) {
    const double a = std::max(samples[i].t, w.t0_s);
    const double b = std::min(samples[i + 1].t, w.t1_s);
    if (b <= a) continue;
    weight += b - a;
    sm += (b - a) * samples[i].sm;
    mem += (b - a) * samples[i].mem;
  }
  if (weight <= 0)
    throw InputError(
        fmt::format("{}: no samples inside the measured window {}..{} s", path, w.t0_s, w.t1_s));
  return {sm / weight, mem / weight};
}

}  // namespace

std::string device_model_from_name(std::string_view device_name) {
  return device_for_driver_name(device_name);
}

void resolve_capture_device(CaptureInfo& capture, const std::string& override_name_or_path) {
  if (override_name_or_path.empty()) {
    capture.device = device_model_from_name(capture.device_name);
    return;
  }
  try {
    load_capture_device(override_name_or_path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--capture-device {}: {}", override_name_or_path, e.what()));
  }
  capture.device = override_name_or_path;
}

std::string trace_stem(std::string_view trace_path) {
  std::string_view s = strip(trace_path, ".gz");
  s = strip(s, ".json");
  s = strip(s, ".kineto");
  return std::string(s);
}

void load_capture_clocks(const std::string& trace_path, CaptureInfo& capture) {
  capture.clocks_source = "none";
  const std::string stem = trace_stem(trace_path);
  const std::string measured_path = stem + ".measured.json";
  if (!std::filesystem::exists(measured_path)) return;

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string text = read_file(measured_path, simdjson::SIMDJSON_PADDING);
  if (auto err = parser.parse(text.data(), text.size(), false).get(root))
    throw InputError(
        fmt::format("{}: invalid JSON: {}", measured_path, simdjson::error_message(err)));

  double sm_mhz = 0, mem_mhz = 0;
  if (root["mean_sm_mhz"].get(sm_mhz) == simdjson::SUCCESS) {
    if (root["mean_mem_mhz"].get(mem_mhz) != simdjson::SUCCESS) mem_mhz = 0;
    capture.core_mhz = clock_mhz(sm_mhz, measured_path, "mean_sm_mhz");
    capture.memory_mhz = clock_mhz(mem_mhz, measured_path, "mean_mem_mhz");
    capture.clocks_source = fmt::format("{}: mean_sm_mhz", file_name(measured_path));
    return;
  }
  const std::string csv_path = stem + ".nvml_samples.csv";
  if (!std::filesystem::exists(csv_path)) return;
  Window w;
  simdjson::dom::element step0;
  if (root["steps"].at(0).get(step0) != simdjson::SUCCESS ||
      step0["t0"].get(w.t0_s) != simdjson::SUCCESS || step0["t1"].get(w.t1_s) != simdjson::SUCCESS)
    throw InputError(fmt::format("{}: missing field 'steps[0].t0' / 'steps[0].t1'", measured_path));
  const auto [sm, mem] = mean_clocks_from_csv(csv_path, w);
  capture.core_mhz = clock_mhz(sm, csv_path, "time-weighted mean sm_MHz");
  capture.memory_mhz = clock_mhz(mem, csv_path, "time-weighted mean mem_MHz");
  capture.clocks_source = fmt::format(
      "{}: time-weighted mean over {} steps[0] t0..t1 ({:.1f} MHz SM, {:.1f} MHz memory)",
      file_name(csv_path), file_name(measured_path), sm, mem);
}

}  // namespace dvfsim
