#pragma once
// Reader for torch.profiler / Kineto Chrome traces (JSON, optionally gzip).
#include <string>
#include <string_view>

#include "sim/workload.h"
#include "traces/trace_options.h"

namespace dvfsim {

// Reads a Kineto trace: GPU activities (kernels, memsets, memcpys) in host
// launch order with their launch calls, owning operators, phases, classes,
// iterations and work; host synchronisation points; cross-stream event waits
// (from `cuda_sync` events, when the trace has them); capture device and
// clocks (see load_capture_clocks). Throws InputError naming the file and the
// event or field on malformed input. docs/trace-format.md describes the rules.
Workload read_kineto(const std::string& path, const TraceOptions& options = {});

// Same, from JSON text already in memory (gzip not allowed); `path` is used
// for messages and for finding sibling files. `json` needs simdjson padding
// (SIMDJSON_PADDING readable bytes past its end) unless `padded` is false.
Workload parse_kineto(std::string_view json, const std::string& path, bool padded = false,
                      const TraceOptions& options = {});

}  // namespace dvfsim
