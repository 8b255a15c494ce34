#pragma once
// Work annotation: FLOPs and DRAM bytes of every kernel, estimated from the
// shapes and dtypes of the operator that launched it (docs/trace-format.md,
// "Work annotation", lists every formula and assumption).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/workload.h"

namespace dvfsim {

// One positional input of an operator call, as the profiler recorded it
// (`Input Dims`, `Input type`, `Concrete Inputs`).
struct OpInput {
  std::vector<std::vector<std::int64_t>> shapes;  // one per tensor; several for a TensorList
  std::string type;                               // "c10::BFloat16", "float", "Scalar", ...
  std::string concrete;                           // recorded scalar value ("True", "[0]"), or ""
};

// An operator call (a Kineto `cpu_op`) that launched GPU work.
struct OpCall {
  std::string name;  // e.g. "aten::addmm"
  std::vector<OpInput> inputs;
};

struct OpWork {
  double flops = 0.0;
  double dram_bytes = 0.0;
};

// Bytes per element of a profiler dtype name; nullopt for non-tensors
// ("Scalar", "TensorList", "") and unknown names.
std::optional<int> dtype_bytes(std::string_view type);

// Work of a whole operator call from its shapes; nullopt when the operator is
// not modelled or its shapes are missing. `list_element_bytes` is the element
// size assumed for TensorList inputs, whose dtype the profiler does not record.
std::optional<OpWork> estimate_op_work(const OpCall& op, int list_element_bytes = 4);

// Per-activity facts the reader knows and the annotation needs, parallel to
// Workload::kernels.
struct ActivityFacts {
  std::int32_t op_call = -1;      // index into the OpCall list; -1 when none
  double activity_bytes = -1.0;   // args.bytes of a memset / memcpy; < 0 when absent
  bool device_to_device = false;  // memcpy within device memory (read + write)
};

struct AnnotateOptions {
  // Peak DRAM bandwidth of the capture device; 0 picks it from capture.device
  // (capture_peak_dram_bytes_per_s).
  double peak_dram_bytes_per_s = 0.0;
  // Fallback for unmodelled kernels: bytes = duration x fraction x peak.
  double fallback_bandwidth_fraction = 0.5;
};

// Nominal peak DRAM bandwidth of a dvfsim device model name (datasheet
// values); 2 TB/s when the name is unknown.
double capture_peak_dram_bytes_per_s(std::string_view device);

// Fills kernels[i].work.flops / dram_bytes / source for every kernel. An
// operator's work is split over its compute kernels (not its memsets or
// memcpys) in proportion to their measured durations.
void annotate_work(Workload& workload, std::span<const OpCall> op_calls,
                   std::span<const ActivityFacts> activities, const AnnotateOptions& options = {});

}  // namespace dvfsim
