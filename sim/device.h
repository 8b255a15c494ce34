#pragma once
// A GPU as the simulator sees it: clocks, voltage, throughputs, switch
// latencies, the board power limit, and which latency, power and governor
// model it uses with their parameters. Plain data; models/ loads it from YAML
// (where every number carries its source) and the models read it.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/params.h"

namespace dvfsim {

// A clock-switch latency distribution for one clock domain, in microseconds.
struct LatencyDistribution {
  enum class Kind : std::uint8_t { fixed, uniform, lognormal };
  Kind kind = Kind::fixed;
  double value_us = 0.0;  // fixed: the latency; lognormal: the median
  double min_us = 0.0;    // uniform: bounds; lognormal: clamp
  double max_us = 0.0;
  double sigma = 0.0;  // lognormal: sigma of ln(latency)
};

// The GPU's idle time between two consecutive kernels of a stream when the
// second was launched in time (Device::kernel_gap_ns, graph_kernel_gap_ns, to
// the nanosecond): the graph gap when both came from one CUDA-graph launch,
// i.e. share its correlation id (Kernel::correlation, -1: unknown).
struct KernelGaps {
  std::int64_t launch_ns = 0;
  std::int64_t graph_ns = 0;
  std::int64_t between(std::int64_t prev_correlation, std::int64_t next_correlation) const {
    return next_correlation >= 0 && next_correlation == prev_correlation ? graph_ns : launch_ns;
  }
};

struct VoltagePoint {
  std::int32_t core_mhz = 0;
  double volts = 0.0;
};

// The model a device uses for one concern (latency, power, governor) and the
// numbers its YAML section gives that model, as declared by the model itself
// (sim/model_registry.h); the model turns them into its own parameters.
struct ModelChoice {
  std::string model;  // registered name, e.g. "cmos"; empty: the file has no such section
  Params params;      // the section's keys, validated against the model's declaration
  bool given() const { return !model.empty(); }
};

struct Device {
  std::string name;          // model name, e.g. "h200"
  std::string display_name;  // e.g. "NVIDIA H200 SXM 141 GB"
  std::string nvml_name;     // as NVML names it
  std::string source_path;   // the YAML it came from

  std::vector<std::int32_t> core_clocks_mhz;    // ascending
  std::vector<std::int32_t> memory_clocks_mhz;  // ascending
  // A memory clock allowed only up to a core clock (e.g. 405 MHz memory only
  // with core <= 420 MHz on the RTX 3080 Ti).
  struct MemoryCoreLimit {
    std::int32_t memory_mhz = 0;
    std::int32_t max_core_mhz = 0;
  };
  std::vector<MemoryCoreLimit> memory_core_limits;
  std::int32_t default_core_mhz = 0;  // what the GPU runs when left alone
  std::int32_t default_memory_mhz = 0;
  std::int32_t deep_idle_core_mhz = 0;

  std::vector<VoltagePoint> voltage_curve;  // ascending in core_mhz

  std::int32_t sm_count = 0;
  double tensor_flops_per_clock_per_sm = 0.0;  // dense bf16/fp16, FP32 accumulate
  double fp32_flops_per_clock_per_sm = 0.0;
  // Warp instructions an SM can issue per clock (one per warp scheduler).
  std::int32_t warp_schedulers_per_sm = 0;
  // The GPU's idle time between the end of a kernel and the start of the next
  // one on the same stream when the next was launched in time (the front end
  // setting up the next grid): after a kernel launched on its own, and between
  // two kernels of one CUDA-graph launch (one correlation id). 0: not modelled.
  double kernel_gap_ns = 0.0;
  double graph_kernel_gap_ns = 0.0;
  // What one SM can hold at once (the CUDA occupancy limits of the GPU's
  // compute capability): threads, thread blocks, 32-bit registers and bytes
  // of shared memory. 0: not given (resident_warp_share then reads 1).
  std::int32_t max_threads_per_sm = 0;
  std::int32_t max_blocks_per_sm = 0;
  std::int32_t registers_per_sm = 0;
  std::int32_t shared_memory_per_sm = 0;
  KernelGaps kernel_gaps() const;
  double dram_bandwidth_gbs = 0.0;             // at `dram_bandwidth_memory_mhz`
  std::int32_t dram_bandwidth_memory_mhz = 0;  // bandwidth scales with the memory clock

  // The board power limit the firmware enforces (0: none); a device fact,
  // read by whichever governor model the device uses.
  double power_limit_w = 0.0;
  // The range the board accepts for its power limit (NVML's constraints;
  // `--set power_limit_w` must lie inside). Both 0 when the file gives none.
  double power_limit_min_w = 0.0;
  double power_limit_max_w = 0.0;
  ModelChoice latency;   // `latency: {model: roofline-overlap, ...}`
  ModelChoice power;     // `power: {model: cmos, ...}`
  ModelChoice governor;  // `governor: {model: native, ...}`
  LatencyDistribution core_switch;
  LatencyDistribution memory_switch;
  double memory_switch_stall_us = 0.0;  // the GPU stops while memory retrains

  // Derived helpers.
  double volts(std::int32_t core_mhz) const;  // linear interpolation, clamped
  bool supports(std::int32_t core_mhz, std::int32_t memory_mhz) const;
  // Empty when allowed, else why not (for error messages).
  std::string why_unsupported(std::int32_t core_mhz, std::int32_t memory_mhz) const;
  double tensor_flops_per_s(std::int32_t core_mhz) const;
  double fp32_flops_per_s(std::int32_t core_mhz) const;
  double issue_per_s(std::int32_t core_mhz) const;  // warp instructions per second, whole GPU
  double dram_bytes_per_s(std::int32_t memory_mhz) const;
  std::int32_t max_core_mhz() const { return core_clocks_mhz.back(); }
  std::int32_t max_memory_mhz() const { return memory_clocks_mhz.back(); }
  // Index of a supported core clock, or -1.
  int core_index(std::int32_t core_mhz) const;
  int memory_index(std::int32_t memory_mhz) const;
};

}  // namespace dvfsim
