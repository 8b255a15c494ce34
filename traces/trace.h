#pragma once
// Reads any supported trace file, choosing the reader by content.
#include <string>

#include "sim/workload.h"
#include "traces/trace_options.h"

namespace dvfsim {

enum class TraceFormat { native, kineto, unknown };

// Format of a trace file by its content (after gzip decompression): native
// when it starts with the "# dvfsim-trace" header, Kineto when it is JSON.
TraceFormat detect_trace_format(const std::string& path);

// read_native or read_kineto by content; InputError for anything else.
Workload read_trace(const std::string& path, const TraceOptions& options = {});

}  // namespace dvfsim
