#pragma once
// The earlier Kineto reader, which parses the whole trace into one simdjson
// DOM: kept only to show that the streaming reader (traces/kineto.h) gives
// identical workloads (tests/traces/streaming_test.cpp).
#include <string>
#include <string_view>

#include "sim/workload.h"
#include "traces/trace_options.h"

namespace dvfsim {

Workload read_kineto_dom(const std::string& path, const TraceOptions& options = {});
Workload parse_kineto_dom(std::string_view json, const std::string& path, bool padded = false,
                          const TraceOptions& options = {});

}  // namespace dvfsim
