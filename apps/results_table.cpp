#include "apps/results_table.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include "apps/files.h"
#include "apps/settings.h"
#include "policies/registry.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// A JSON scalar as a CSV cell: numbers as JsonWriter writes them (shortest
// round trip), strings unquoted, null empty. false: not a scalar.
bool scalar_text(simdjson::dom::element v, std::string& out) {
  switch (v.type()) {
    case simdjson::dom::element_type::STRING:
      out = std::string(std::string_view(v.get_string()));
      return true;
    case simdjson::dom::element_type::INT64:
      out = fmt::format("{}", std::int64_t(v.get_int64()));
      return true;
    case simdjson::dom::element_type::UINT64:
      out = fmt::format("{}", std::uint64_t(v.get_uint64()));
      return true;
    case simdjson::dom::element_type::DOUBLE:
      out = fmt::format("{}", double(v.get_double()));
      return true;
    case simdjson::dom::element_type::BOOL:
      out = bool(v.get_bool()) ? "true" : "false";
      return true;
    case simdjson::dom::element_type::NULL_VALUE:
      out.clear();
      return true;
    default:
      return false;
  }
}

}  // namespace

void ResultsRow::set(const std::string& column, std::string value) {
  auto [it, inserted] = values_.insert_or_assign(column, std::move(value));
  if (inserted) order_.push_back(column);
}

const std::string& ResultsRow::get(const std::string& column) const {
  static const std::string none;
  auto it = values_.find(column);
  return it == values_.end() ? none : it->second;
}

ResultsRow summary_row(std::string_view summary_json) {
  simdjson::dom::parser parser;
  simdjson::dom::object root;
  if (auto err = parser.parse(simdjson::padded_string(summary_json)).get(root); err)
    throw InputError(fmt::format("summary.json: {}", simdjson::error_message(err)));
  ResultsRow row;
  std::string text;
  for (auto [key, value] : root) {
    const std::string k(key);
    if (k == "policy_params" || k == "baseline") {
      simdjson::dom::object o;
      if (value.get(o) != simdjson::SUCCESS) continue;  // baseline: null without one
      for (auto [pk, pv] : o)
        if (scalar_text(pv, text))
          row.set(k == "baseline" ? "baseline_" + std::string(pk) : std::string(pk), text);
    } else if (scalar_text(value, text)) {
      row.set(k, text);
    }
  }
  return row;
}

ResultsRow failed_row(const SweepPoint& p, const std::string& error) {
  ResultsRow r;
  r.set("status", "failed");
  r.set("device", p.device);
  r.set("policy", p.policy);
  for (const auto& [k, v] : p.settings) r.set(k, v);
  r.set("seed", fmt::format("{}", p.seed));
  r.set("baseline_policy", p.baseline);
  r.set("error", one_line(error));
  return r;
}

ResultsRow missing_row(const SweepPoint& p) {
  ResultsRow r;
  r.set("status", "missing");
  r.set("device", p.device);
  r.set("policy", p.policy);
  for (const auto& [k, v] : p.settings) r.set(k, v);
  r.set("seed", fmt::format("{}", p.seed));
  r.set("baseline_policy", p.baseline);
  return r;
}

std::string results_csv(const Experiment& e, const std::vector<SweepPoint>& points,
                        const std::vector<ResultsRow>& rows) {
  std::vector<std::string> cols = {"experiment", "run_id",         "status", "trace", "trace_name",
                                   "device",     "capture_device", "policy", "oracle"};
  auto add = [&cols](const std::string& c) {
    if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
  };
  for (const auto& s : engine_settings()) add(std::string(s.name));
  // Every parameter the experiment's policies declare, in declaration order.
  for (const auto& ep : e.policies)
    for (const auto& spec : find_policy(ep.name).params) add(spec.name);
  // Then the summary's own scalars, in the order it writes them.
  // (complete runs first, so that failed and missing runs do not move columns).
  for (const bool failed : {false, true})
    for (const auto& r : rows)
      if ((r.get("status") == "failed" || r.get("status") == "missing") == failed)
        for (const auto& c : r.columns())
          if (c != "error") add(c);
  add("run_dir");
  add("error");

  std::string csv;
  for (std::size_t c = 0; c < cols.size(); ++c) csv += (c ? "," : "") + cols[c];
  csv += "\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    ResultsRow r = rows[i];
    const SweepPoint& p = points[i];
    r.set("experiment", e.name);
    r.set("run_id", p.id);
    if (r.get("status").empty()) r.set("status", "ok");
    r.set("trace", p.trace->label);
    r.set("trace_name", p.trace->name);
    r.set("device", p.device);
    r.set("run_dir", (std::filesystem::path("runs") / p.id).generic_string());
    for (std::size_t c = 0; c < cols.size(); ++c) csv += (c ? "," : "") + csv_field(r.get(cols[c]));
    csv += "\n";
  }
  return csv;
}

}  // namespace dvfsim
