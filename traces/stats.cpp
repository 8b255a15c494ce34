#include "traces/stats.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <limits>
#include <set>

#include "sim/graph.h"

namespace dvfsim {

TraceStats compute_stats(const Workload& w) {
  TraceStats s;
  s.capture = w.capture;
  s.iterations = w.iterations;
  s.iteration_rule = w.iteration_rule;
  s.steady_iterations = w.steady_iterations;
  s.notes = w.notes;
  s.per_iteration.resize(static_cast<std::size_t>(std::max(w.iterations, 0)));
  s.activities = static_cast<std::uint32_t>(w.kernels.size());
  s.syncs = static_cast<std::uint32_t>(w.syncs.size());
  s.event_waits = static_cast<std::uint32_t>(w.event_waits.size());
  std::set<std::int32_t> streams;
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> first_start(s.per_iteration.size(), kMax);
  std::vector<std::int64_t> last_end(s.per_iteration.size(),
                                     std::numeric_limits<std::int64_t>::min());
  double zeroed1_flops = 0, zeroed2_flops = 0;  // matrix FLOPs with one / two zeroed operands
  for (const Kernel& k : w.kernels) {
    streams.insert(k.stream);
    const std::int64_t d = k.work.duration_ns;
    s.gpu_time_ns += d;
    s.class_time_ns[static_cast<std::size_t>(k.cls)] += d;
    s.class_count[static_cast<std::size_t>(k.cls)] += 1;
    s.phase_time_ns[static_cast<std::size_t>(k.phase)] += d;
    s.phase_count[static_cast<std::size_t>(k.phase)] += 1;
    if (k.work.source == WorkSource::shapes)
      s.shapes_time_ns += d;
    else
      s.class_fallback_ns[static_cast<std::size_t>(k.cls)] += d;
    if (k.work.instructions_source == InstructionSource::ncu) s.ncu_time_ns += d;
    if (k.work.instructions_source == InstructionSource::shapes) s.shapes_instructions_time_ns += d;
    if (k.work.l2_excess_bytes > 0) s.layout_change_time_ns += d;
    s.total_l2_excess_bytes += k.work.l2_excess_bytes;
    if (k.cls == KernelClass::gemm || k.cls == KernelClass::conv) {
      s.matrix_flops += k.work.flops;
      if (k.work.zeroed_operands == 1) zeroed1_flops += k.work.flops;
      if (k.work.zeroed_operands == 2) zeroed2_flops += k.work.flops;
    }
    s.total_instructions += k.work.instructions;
    s.total_flops += k.work.flops;
    s.total_dram_bytes += k.work.dram_bytes;
    if (k.iteration < 0 || static_cast<std::size_t>(k.iteration) >= s.per_iteration.size())
      continue;
    const auto it = static_cast<std::size_t>(k.iteration);
    IterationStats& is = s.per_iteration[it];
    if (k.cls == KernelClass::memset)
      ++is.memsets;
    else if (k.cls == KernelClass::memcpy)
      ++is.memcpys;
    else
      ++is.kernels;
    is.gpu_time_ns += d;
    is.flops += k.work.flops;
    is.dram_bytes += k.work.dram_bytes;
    first_start[it] = std::min(first_start[it], k.traced_start_ns);
    last_end[it] = std::max(last_end[it], k.traced_start_ns + d);
  }
  s.streams = static_cast<std::uint32_t>(streams.size());
  s.overlap_ns = overlap_ns(traced_intervals(w));
  const auto share = [&](std::int64_t ns) {
    return s.gpu_time_ns > 0 ? static_cast<double>(ns) / static_cast<double>(s.gpu_time_ns) : 0.0;
  };
  s.shapes_share = share(s.shapes_time_ns);
  s.ncu_share = share(s.ncu_time_ns);
  s.shapes_instructions_share = share(s.shapes_instructions_time_ns);
  s.layout_change_share = share(s.layout_change_time_ns);
  if (s.matrix_flops > 0) {
    s.zeroed1_flops_share = zeroed1_flops / s.matrix_flops;
    s.zeroed2_flops_share = zeroed2_flops / s.matrix_flops;
  }
  for (std::size_t i = 0; i < s.per_iteration.size(); ++i) {
    if (first_start[i] == kMax) continue;
    std::size_t next = i + 1;
    while (next < s.per_iteration.size() && first_start[next] == kMax) ++next;
    s.per_iteration[i].step_time_ns = next < s.per_iteration.size()
                                          ? first_start[next] - first_start[i]
                                          : last_end[i] - first_start[i];
  }
  return s;
}

void print_stats(const TraceStats& s, std::ostream& out) {
  auto ms = [](std::int64_t ns) { return static_cast<double>(ns) * 1e-6; };
  auto share = [&](std::int64_t ns) {
    return s.gpu_time_ns > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(s.gpu_time_ns)
                             : 0.0;
  };
  if (s.capture.device.empty())
    fmt::print(out,
               "capture device   ? ({}): no device file lists this GPU in its nvml_names; `run` "
               "needs --capture-device NAME|FILE (`dvfsim devices --capture`)\n",
               s.capture.device_name.empty() ? "the trace names no GPU" : s.capture.device_name);
  else
    fmt::print(out, "capture device   {} ({})\n", s.capture.device,
               s.capture.device_name.empty() ? "unknown" : s.capture.device_name);
  auto clock = [](std::int32_t mhz) {
    return mhz > 0 ? fmt::format("{} MHz", mhz) : std::string("unknown (device default)");
  };
  fmt::print(out, "capture clocks   SM {}, memory {} ({})\n", clock(s.capture.core_mhz),
             clock(s.capture.memory_mhz),
             s.capture.clocks_source.empty() ? "no clock record beside the trace"
                                             : s.capture.clocks_source);
  fmt::print(out, "activities       {} on {} stream(s); {} sync points, {} event waits\n",
             s.activities, s.streams, s.syncs, s.event_waits);
  fmt::print(out, "GPU time         {:.3f} ms total; {:.1f} TFLOP, {:.2f} GB DRAM\n",
             ms(s.gpu_time_ns), s.total_flops * 1e-12, s.total_dram_bytes * 1e-9);
  if (s.streams > 1)
    fmt::print(out,
               "overlap          {:.3f} ms with two or more activities at once (replayed "
               "concurrently)\n",
               ms(s.overlap_ns));
  fmt::print(out, "work from shapes {:.1f} % of GPU time (rest: fallback estimate)\n",
             100.0 * s.shapes_share);
  {
    std::string parts;
    for (int c = 0; c < kKernelClassCount; ++c)
      if (s.class_fallback_ns[c] > 0)
        parts += fmt::format("{}{} {:.3f} ms", parts.empty() ? "" : ", ",
                             to_string(static_cast<KernelClass>(c)), ms(s.class_fallback_ns[c]));
    if (!parts.empty())
      fmt::print(out,
                 "fallback work    {:.1f} % of GPU time rests on the measured duration against "
                 "the capture roofline: {}\n",
                 100.0 * (1.0 - s.shapes_share), parts);
  }
  fmt::print(
      out, "instructions     {:.3g} warp instructions; measured for {:.1f} % of GPU time ({})\n",
      s.total_instructions, 100.0 * s.ncu_share,
      s.capture.instructions_source.empty() ? "none recorded" : s.capture.instructions_source);
  if (s.shapes_instructions_time_ns > 0)
    fmt::print(out,
               "                 from operator shapes for {:.1f} % of GPU time (depthwise "
               "convolutions)\n",
               100.0 * s.shapes_instructions_share);
  if (s.layout_change_time_ns > 0)
    fmt::print(out,
               "layout changes   {:.1f} % of GPU time: copies that change the memory layout, "
               "{:.2f} GB of L2 traffic beyond streaming\n",
               100.0 * s.layout_change_share, s.total_l2_excess_bytes * 1e-9);
  if (s.zeroed1_flops_share + s.zeroed2_flops_share > 0)
    fmt::print(out,
               "ReLU operands    {:.1f} % of matrix FLOPs read one operand a ReLU zeroed, "
               "{:.1f} % two (on tensor cores: less power)\n",
               100.0 * s.zeroed1_flops_share, 100.0 * s.zeroed2_flops_share);
  fmt::print(out, "\n");

  const auto steady = [&](std::size_t i) {
    return s.steady_iterations.empty() ||
           std::find(s.steady_iterations.begin(), s.steady_iterations.end(),
                     static_cast<std::int32_t>(i)) != s.steady_iterations.end();
  };
  if (!s.iteration_rule.empty()) {
    std::string used = "all";
    if (!s.steady_iterations.empty() && s.steady_iterations.size() < s.per_iteration.size())
      used = fmt::format("{}..{} (steady state; the others are warm-up)",
                         s.steady_iterations.front(), s.steady_iterations.back());
    fmt::print(out, "iterations       {} from {}; per-iteration figures use {}\n", s.iterations,
               s.iteration_rule, used);
  }
  fmt::print(out, "{:>9} {:>8} {:>8} {:>8} {:>12} {:>12} {:>10} {:>10} {:>6}\n", "iteration",
             "kernels", "memsets", "memcpys", "gpu_ms", "step_ms", "TFLOP", "GB", "used");
  for (std::size_t i = 0; i < s.per_iteration.size(); ++i) {
    const IterationStats& it = s.per_iteration[i];
    fmt::print(out, "{:>9} {:>8} {:>8} {:>8} {:>12.3f} {:>12.3f} {:>10.2f} {:>10.2f} {:>6}\n", i,
               it.kernels, it.memsets, it.memcpys, ms(it.gpu_time_ns), ms(it.step_time_ns),
               it.flops * 1e-12, it.dram_bytes * 1e-9, steady(i) ? "yes" : "no");
  }
  std::int64_t busy = 0, steps = 0;
  for (const IterationStats& it : s.per_iteration) {
    busy += it.gpu_time_ns;
    steps += it.step_time_ns;
  }
  if (steps > 0) {
    const double busy_pct = 100.0 * static_cast<double>(busy) / static_cast<double>(steps);
    fmt::print(out, "GPU busy {:.1f} % of the traced step time{}\n", busy_pct,
               busy_pct < 50.0 ? ": launch-bound; host gaps dominate, and a profiler inflates them "
                                 "(docs/validation.md)"
                               : "");
  }

  fmt::print(out, "\n{:<14} {:>8} {:>12} {:>8}\n", "class", "count", "gpu_ms", "share_%");
  for (int c = 0; c < kKernelClassCount; ++c) {
    if (s.class_count[c] == 0) continue;
    fmt::print(out, "{:<14} {:>8} {:>12.3f} {:>8.2f}\n", to_string(static_cast<KernelClass>(c)),
               s.class_count[c], ms(s.class_time_ns[c]), share(s.class_time_ns[c]));
  }
  fmt::print(out, "\n{:<14} {:>8} {:>12} {:>8}\n", "phase", "count", "gpu_ms", "share_%");
  for (int p = 0; p < kPhaseCount; ++p) {
    if (s.phase_count[p] == 0) continue;
    fmt::print(out, "{:<14} {:>8} {:>12.3f} {:>8.2f}\n", to_string(static_cast<Phase>(p)),
               s.phase_count[p], ms(s.phase_time_ns[p]), share(s.phase_time_ns[p]));
  }
}

}  // namespace dvfsim
