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
// With options.cache_dir set, a Kineto trace is looked up in the parsed-trace
// cache first (a native file named by the key below) and stored there after a
// miss; a cache that cannot be written is skipped silently. `format`, when
// given, receives the trace's own format (kineto for a cache hit).
Workload read_trace(const std::string& path, const TraceOptions& options = {},
                    TraceFormat* format = nullptr);

// The parsed-trace cache (docs/trace-format.md, "Parsed-trace cache").
// Bump when a reader or the work annotation changes what it produces (the
// executable's size and modification time are part of the key as well, so a
// rebuilt dvfsim never reads an older build's entries).
inline constexpr int kTraceReaderVersion = 1;
// $DVFSIM_CACHE_DIR when set ("off" or "0": no cache), else
// $XDG_CACHE_HOME/dvfsim/traces, else $HOME/.cache/dvfsim/traces, else "".
std::string default_trace_cache_dir();
// The cache file for `path` read with `options`: DIR/<key>.dvfsim, the key a
// hash of the trace's bytes, its sibling files (measured.json,
// nvml_samples.csv, ncu.csv[.gz]), the options, the device files (names,
// sizes, times) and the reader's version. "" when the trace cannot be read.
std::string trace_cache_path(const std::string& path, const TraceOptions& options);

}  // namespace dvfsim
