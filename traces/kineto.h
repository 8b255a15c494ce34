#pragma once
// Reader for torch.profiler / Kineto Chrome traces (JSON, optionally gzip).
#include <cstddef>
#include <string>
#include <string_view>

#include "sim/workload.h"
#include "traces/trace_options.h"

namespace dvfsim {

// Reads a Kineto trace (streamed: the text is read and parsed in pieces, so
// memory grows with what is kept per event, never with the file's size): GPU activities (kernels,
// memsets, memcpys) in host launch order with their launch calls, owning operators, phases,
// classes, iterations and work; host synchronisation points; cross-stream event waits (from
// `cuda_sync` events, when the trace has them); capture device and clocks (see
// load_capture_clocks). Throws InputError naming the file and the event or field on malformed
// input. docs/trace-format.md describes the rules.
Workload read_kineto(const std::string& path, const TraceOptions& options = {});

// Same, from JSON text already in memory (gzip not allowed); `path` is used
// for messages and for finding sibling files.
Workload parse_kineto(std::string_view json, const std::string& path,
                      const TraceOptions& options = {});

// Same, reading the text `chunk_bytes` at a time and parsing events in
// batches of about `batch_bytes` (read_kineto: 1 MiB and 512 KiB): the
// result never depends on them (tests put the boundaries everywhere).
Workload parse_kineto_in_pieces(std::string_view json, const std::string& path,
                                std::size_t chunk_bytes, std::size_t batch_bytes,
                                const TraceOptions& options = {});

}  // namespace dvfsim
