#pragma once
// The --json forms of `dvfsim trace info` and `dvfsim hw validate`: the
// numbers the text reports print, as one JSON object each (SI units in the
// key names).
#include <string>

#include "apps/validate.h"
#include "traces/stats.h"

namespace dvfsim {

std::string trace_stats_json(const std::string& path, const TraceStats& s);
std::string validation_json(const ValidationSpec& v, const ValidationReport& r,
                            double tolerance_pct);

}  // namespace dvfsim
