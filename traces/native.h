#pragma once
// dvfsim's own trace format: line-oriented text, optionally gzip-compressed.
// docs/trace-format.md specifies it.
#include <string>
#include <string_view>

#include "sim/workload.h"

namespace dvfsim {

// First line of every native trace the writer produces. Version 5 adds how
// many of a matrix kernel's operands a ReLU zeroed (Work::zeroed_operands);
// version 4 each kernel's L2 traffic beyond streaming (Work::l2_excess_bytes);
// version 3 the Kineto correlation id per kernel and the reading's iteration
// rule, steady-state iterations and notes. Versions 2 to 4 are still read
// (what they lack: 0).
inline constexpr std::string_view kNativeHeader = "# dvfsim-trace v5";
inline constexpr std::string_view kNativeHeaderV4 = "# dvfsim-trace v4";
inline constexpr std::string_view kNativeHeaderV3 = "# dvfsim-trace v3";
inline constexpr std::string_view kNativeHeaderV2 = "# dvfsim-trace v2";

// Writes `workload` to `path` atomically; gzip-compressed when the path ends
// in ".gz". Reading it back gives an identical workload (exact round trip).
void write_native(const Workload& workload, const std::string& path);

// The native text of `workload` (what write_native writes before compression).
std::string format_native(const Workload& workload);

// Reads a native trace (plain or gzip). InputError names the file and line.
Workload read_native(const std::string& path);

// Parses native text already in memory; `path` is used in messages.
Workload parse_native(std::string_view text, const std::string& path);

}  // namespace dvfsim
