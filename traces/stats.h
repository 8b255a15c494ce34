#pragma once
// Summary statistics of a workload, printed by `dvfsim trace info`.
#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/workload.h"

namespace dvfsim {

struct IterationStats {
  std::uint32_t kernels = 0;  // compute kernels (Kineto cat "kernel")
  std::uint32_t memsets = 0;
  std::uint32_t memcpys = 0;
  std::int64_t gpu_time_ns = 0;  // sum of activity durations
  // First start of the next iteration minus this one's first start; for the
  // last iteration, its last end minus its first start.
  std::int64_t step_time_ns = 0;
  double flops = 0.0;
  double dram_bytes = 0.0;
};

struct TraceStats {
  CaptureInfo capture;
  std::int32_t iterations = 0;
  std::vector<IterationStats> per_iteration;
  std::uint32_t activities = 0;
  std::uint32_t syncs = 0;
  std::uint32_t event_waits = 0;
  std::uint32_t streams = 0;
  std::int64_t overlap_ns = 0;  // traced time with two or more activities at once
  std::int64_t gpu_time_ns = 0;
  std::array<std::int64_t, kKernelClassCount> class_time_ns{};
  std::array<std::uint32_t, kKernelClassCount> class_count{};
  std::array<std::int64_t, kPhaseCount> phase_time_ns{};
  std::array<std::uint32_t, kPhaseCount> phase_count{};
  std::string iteration_rule;                   // how the iterations were found
  std::vector<std::int32_t> steady_iterations;  // per-iteration figures use these
  std::vector<std::string> notes;               // the reader's notes
  std::array<std::int64_t, kKernelClassCount> class_fallback_ns{};  // fallback work, per class
  std::int64_t shapes_time_ns = 0;               // GPU time of kernels with WorkSource::shapes
  double shapes_share = 0.0;                     // shapes_time_ns / gpu_time_ns
  std::int64_t ncu_time_ns = 0;                  // GPU time of kernels with InstructionSource::ncu
  double ncu_share = 0.0;                        // ncu_time_ns / gpu_time_ns
  std::int64_t shapes_instructions_time_ns = 0;  // ... with InstructionSource::shapes
  double shapes_instructions_share = 0.0;        // that over gpu_time_ns
  std::int64_t layout_change_time_ns = 0;        // ... with Work::l2_excess_bytes > 0
  double layout_change_share = 0.0;              // that over gpu_time_ns
  double total_l2_excess_bytes = 0.0;            // Work::l2_excess_bytes, summed
  // FLOPs of gemm and conv kernels, and the shares of them with one and with
  // two operands a ReLU zeroed (Work::zeroed_operands).
  double matrix_flops = 0.0;
  double zeroed1_flops_share = 0.0;
  double zeroed2_flops_share = 0.0;
  double total_instructions = 0.0;  // warp instructions
  double total_flops = 0.0;
  double total_dram_bytes = 0.0;
};

TraceStats compute_stats(const Workload& workload);

// A readable report with units: capture, iterations, time per class and phase.
void print_stats(const TraceStats& stats, std::ostream& out);

}  // namespace dvfsim
