#pragma once
// A GPU as the simulator sees it: clocks, voltage, throughputs, power and
// firmware parameters, switch latencies. Plain data; models/ loads it from YAML
// (where every number carries its source) and the models read it.
#include <cstdint>
#include <string>
#include <vector>

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

struct VoltagePoint {
  std::int32_t core_mhz = 0;
  double volts = 0.0;
};

// Coefficients of the `cmos` power model (DESIGN.md, "Models").
//   P_idle(fc, fm) = const + leak·V + clock·V²·fc + mem_idle·fm
//   P_kernel       = P_idle + (busy + u_c·compute + u_s·simt)·V²·fc + u_m·mem_active·fm
// with u_c the tensor-core utilisation, u_s the SIMT issue utilisation (warp
// instructions / (SMs x warp schedulers x clock x time)), fc and fm in GHz.
struct PowerParams {
  double const_w = 0.0;
  double leak_w_per_v = 0.0;
  double clock_w_per_v2ghz = 0.0;
  double busy_w_per_v2ghz = 0.0;
  double compute_w_per_v2ghz = 0.0;  // tensor-core work
  double simt_w_per_v2ghz = 0.0;     // instruction issue (SIMT pipes)
  double memory_active_w_per_ghz = 0.0;
  double memory_idle_w_per_ghz = 0.0;
  double limit_w = 0.0;
  double deep_idle_w = 0.0;  // no CUDA context, clocks at their floor
  // Share of the memory-active and of the compute (tensor + SIMT) power that
  // comes from data toggling: gone when the data are constant (zeros), all
  // there for random data (the default). 0 when the file gives none.
  double data_share_memory = 0.0;
  double data_share_compute = 0.0;
};

// The firmware governor: samples power every `period_ms`, caps the core clock.
struct GovernorParams {
  double period_ms = 100.0;
  double up_step_mhz = 120.0;     // at most this much up per period
  double target_fraction = 0.99;  // aim at this fraction of the limit
};

// Parameters of the `roofline-overlap` latency model.
struct LatencyParams {
  double kappa = 0.1;               // overlap penalty of the smaller part
  double fixed_ns = 1000.0;         // clock-independent part t0 of a kernel
  double min_kernel_ns = 1500.0;    // floor for any kernel on this device
  double compute_efficiency = 1.0;  // achieved / peak, relative to the capture device
  double memory_efficiency = 1.0;
  // On-chip (L2) bandwidth in bytes per core clock, summed over the GPU. DRAM
  // traffic also crosses L2, so a memory-bound kernel cannot move its bytes
  // faster than l2_bytes_per_clock x core clock: below that knee, lowering
  // the core clock slows memory-bound kernels too.
  double l2_bytes_per_clock = 0.0;
  // DRAM traffic of tensor-core kernels (GEMM, attention) relative to their
  // compulsory bytes (each operand read once, the result written once): > 1
  // when the L2 is too small to hold the operand panels that tiles re-read.
  double tensor_dram_amplification = 1.0;
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
  double dram_bandwidth_gbs = 0.0;             // at `dram_bandwidth_memory_mhz`
  std::int32_t dram_bandwidth_memory_mhz = 0;  // bandwidth scales with the memory clock

  PowerParams power;
  GovernorParams governor;
  LatencyParams latency;
  LatencyDistribution core_switch;
  LatencyDistribution memory_switch;
  double memory_switch_stall_us = 0.0;  // the GPU stops while memory retrains

  // The device running on data whose bits toggle `activity` times as often
  // as random data's (1: random, the calibration's data; 0: constant data):
  // memory-active and compute coefficients lose that share of their
  // data-dependent part. InputError outside [0, 1].
  Device with_data_activity(double activity) const;

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
