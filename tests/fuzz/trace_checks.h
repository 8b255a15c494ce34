#pragma once
// What every trace reader's output must survive (docs/fuzzing.md): the
// native round trip (format -> parse -> format gives the same text), the
// statistics of `dvfsim trace info`, and the dependency graph of the replay.
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "sim/graph.h"
#include "tests/fuzz/fuzz_util.h"
#include "traces/native.h"
#include "traces/stats.h"

namespace dvfsim::fuzz {

inline void check_workload(const Workload& w) {
  // Native round trip: exact.
  const std::string text = format_native(w);
  Workload back;
  try {
    back = parse_native(text, "round-trip");
  } catch (const InputError& e) {
    fail(std::string("native round trip refused its own output: ") + e.what());
  }
  check(format_native(back) == text, "native round trip changed the workload");
  check(back.kernels.size() == w.kernels.size(), "native round trip lost kernels");

  // `dvfsim trace info`.
  const TraceStats s = compute_stats(w);
  check(std::isfinite(s.total_flops) && std::isfinite(s.total_dram_bytes) &&
            std::isfinite(s.total_instructions) && std::isfinite(s.total_l2_excess_bytes) &&
            s.gpu_time_ns >= 0,
        "trace statistics are not finite");
  std::ostringstream out;
  print_stats(s, out);

  // The replay's dependency graph. A valid workload whose graph is refused is
  // a reader/graph disagreement (issue 14: blocking cudaMemcpy self edge);
  // DVFSIM_FUZZ_STRICT_GRAPH=1 makes it a failure.
  try {
    const DependencyGraph g = build_dependency_graph(w);
    check_launch_order(w, g);
    check(critical_path_ns(w, g) >= 0, "negative critical path");
  } catch (const InputError& e) {
    static const bool strict = std::getenv("DVFSIM_FUZZ_STRICT_GRAPH") != nullptr;
    if (strict) fail(std::string("valid workload, refused graph: ") + e.what());
  }
}

}  // namespace dvfsim::fuzz
