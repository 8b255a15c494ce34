#pragma once
// Solve reports of the planners (the type is sim/result.h's SolveReport: the
// runner copies a policy's reports into its RunResult and summary.json).
#include <string>

#include "sim/result.h"

namespace dvfsim::plan {

using dvfsim::SolveReport;

// One readable line: what was solved, items x pairs, time against budget,
// energy, Lagrangian bound and gap, rounds and solve time.
std::string line(const SolveReport& r);

}  // namespace dvfsim::plan
