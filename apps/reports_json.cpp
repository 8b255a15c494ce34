#include "apps/reports_json.h"

#include <cmath>

#include "sim/json.h"

namespace dvfsim {
namespace {

double s_of(std::int64_t ns) {
  return static_cast<double>(ns) * 1e-9;
}

void prediction(JsonWriter& j, const char* key, const Prediction& p) {
  j.key(key).begin_object();
  j.field("time_per_iteration_s", p.time_s);
  j.field("energy_per_iteration_j", p.energy_j);
  j.field("power_w", p.power_w);
  j.field("time_error_pct", p.time_error_pct);
  j.field("energy_error_pct", p.energy_error_pct);
  j.field("power_error_pct", p.power_error_pct);
  j.end_object();
}

}  // namespace

std::string trace_stats_json(const std::string& path, const TraceStats& s) {
  JsonWriter j;
  j.begin_object();
  j.field("trace", path);
  j.key("capture").begin_object();
  j.field("device", s.capture.device);
  j.field("gpu", s.capture.device_name);
  j.field("core_mhz", s.capture.core_mhz);
  j.field("memory_mhz", s.capture.memory_mhz);
  j.field("clocks_source", s.capture.clocks_source);
  j.field("instructions_source", s.capture.instructions_source);
  j.end_object();
  j.field("iterations", s.iterations);
  j.field("iteration_rule", s.iteration_rule);
  j.key("steady_iterations").begin_array();
  for (auto i : s.steady_iterations) j.value(i);
  j.end_array();
  j.field("activities", static_cast<std::int64_t>(s.activities));
  j.field("streams", static_cast<std::int64_t>(s.streams));
  j.field("syncs", static_cast<std::int64_t>(s.syncs));
  j.field("event_waits", static_cast<std::int64_t>(s.event_waits));
  j.field("gpu_time_s", s_of(s.gpu_time_ns));
  j.field("flops", s.total_flops);
  j.field("dram_bytes", s.total_dram_bytes);
  j.field("instructions", s.total_instructions);
  j.field("work_from_shapes_share", s.shapes_share);
  j.field("instructions_from_ncu_share", s.ncu_share);
  j.field("instructions_from_shapes_share", s.shapes_instructions_share);
  j.field("layout_change_share", s.layout_change_share);
  j.field("l2_excess_bytes", s.total_l2_excess_bytes);
  j.field("zeroed1_flops_share", s.zeroed1_flops_share);
  j.field("zeroed2_flops_share", s.zeroed2_flops_share);
  j.key("per_iteration").begin_array();
  for (const IterationStats& it : s.per_iteration) {
    j.begin_object();
    j.field("kernels", static_cast<std::int64_t>(it.kernels));
    j.field("memsets", static_cast<std::int64_t>(it.memsets));
    j.field("memcpys", static_cast<std::int64_t>(it.memcpys));
    j.field("gpu_time_s", s_of(it.gpu_time_ns));
    j.field("step_time_s", s_of(it.step_time_ns));
    j.field("flops", it.flops);
    j.field("dram_bytes", it.dram_bytes);
    j.end_object();
  }
  j.end_array();
  j.key("classes").begin_object();
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (s.class_count[i] == 0) continue;
    j.key(to_string(static_cast<KernelClass>(c))).begin_object();
    j.field("count", static_cast<std::int64_t>(s.class_count[i]));
    j.field("gpu_time_s", s_of(s.class_time_ns[i]));
    j.field("fallback_work_gpu_time_s", s_of(s.class_fallback_ns[i]));
    j.end_object();
  }
  j.end_object();
  j.key("phases").begin_object();
  for (int p = 0; p < kPhaseCount; ++p) {
    const auto i = static_cast<std::size_t>(p);
    if (s.phase_count[i] == 0) continue;
    j.key(to_string(static_cast<Phase>(p))).begin_object();
    j.field("count", static_cast<std::int64_t>(s.phase_count[i]));
    j.field("gpu_time_s", s_of(s.phase_time_ns[i]));
    j.end_object();
  }
  j.end_object();
  j.key("notes").begin_array();
  for (const auto& n : s.notes) j.value(n);
  j.end_array();
  j.end_object();
  return j.str() + "\n";
}

std::string validation_json(const ValidationSpec& v, const ValidationReport& r,
                            double tolerance_pct) {
  JsonWriter j;
  j.begin_object();
  j.field("trace", v.trace);
  j.field("measured_file", v.measured);
  j.field("device", v.device);
  j.field("policy", v.policy);
  j.key("settings").begin_object();
  for (const auto& [key, value] : v.settings) j.field(key, value);
  j.end_object();
  j.key("measured").begin_object();
  j.field("time_per_iteration_s", r.measured.time_per_step_s);
  j.field("energy_per_iteration_j", r.measured.energy_per_step_j);
  j.field("power_w", r.measured.mean_power_w);
  j.field("steps", r.measured.steps);
  if (r.measured.paired_host_factor > 0)
    j.field("paired_host_factor", r.measured.paired_host_factor);
  if (!r.measured.board_uuid.empty()) j.field("board_uuid", r.measured.board_uuid);
  if (!r.measured.board_serial.empty()) j.field("board_serial", r.measured.board_serial);
  if (r.measured.power_limit_w > 0) j.field("power_limit_w", r.measured.power_limit_w);
  if (r.measured.clock_event_reasons_mask >= 0)
    j.field("clock_event_reasons_mask", r.measured.clock_event_reasons_mask);
  if (r.measured.mean_sm_mhz > 0) j.field("mean_sm_mhz", r.measured.mean_sm_mhz);
  if (r.measured.parts_time_spread_pct) {
    j.field("parts_time_spread_pct", *r.measured.parts_time_spread_pct);
    j.field("parts_energy_spread_pct", *r.measured.parts_energy_spread_pct);
  }
  if (r.measured.step_result_finite) j.field("step_result_finite", *r.measured.step_result_finite);
  j.end_object();
  j.field("host_overhead", r.host.spec());
  j.field("corrected", r.corrected);
  if (r.power_limit_applied_w > 0) j.field("power_limit_applied_w", r.power_limit_applied_w);
  prediction(j, "predicted", r.predicted);
  prediction(j, "raw", r.raw);
  if (r.paired) prediction(j, "paired", *r.paired);
  if (const auto& b = r.host_band) {
    j.key("host_band").begin_object();
    j.field("slow_factor", b->slow_factor);
    j.field("fast_factor", b->fast_factor);
    prediction(j, "slow", b->slow);
    prediction(j, "fast", b->fast);
    j.field("time_spread_pct", b->time_spread_pct());
    j.field("host_bound", b->host_bound());
    j.field("measured_time_inside", b->time_inside(r.measured.time_per_step_s));
    j.end_object();
  }
  j.field("tolerance_pct", tolerance_pct);
  j.field("pass", std::abs(r.predicted.energy_error_pct) <= tolerance_pct);
  j.end_object();
  return j.str() + "\n";
}

}  // namespace dvfsim
