#include "sim/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "sim/error.h"

namespace dvfsim {

DependencyGraph build_dependency_graph(const Workload& w) {
  DependencyGraph g(w.kernels.size());
  std::unordered_map<std::int32_t, std::uint32_t> last_on_stream;
  std::size_t next_sync = 0;
  std::int64_t barrier = -1;  // last kernel a host sync waited for
  for (std::uint32_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    while (next_sync < w.syncs.size() && w.syncs[next_sync].host_begin_ns <= k.host_launch_ns) {
      const auto& s = w.syncs[next_sync++];
      if (s.waits_until_kernel > 0)
        barrier = std::max<std::int64_t>(barrier, s.waits_until_kernel - 1);
    }
    auto it = last_on_stream.find(k.stream);
    if (it != last_on_stream.end()) boost::add_edge(it->second, i, g);
    // A blocking copy's own activity is inside the barrier it starts.
    if (barrier >= 0 && barrier < static_cast<std::int64_t>(i) &&
        (it == last_on_stream.end() || it->second != barrier))
      boost::add_edge(static_cast<std::uint32_t>(barrier), i, g);
    last_on_stream[k.stream] = i;
  }
  for (const EventWait& e : w.event_waits) boost::add_edge(e.after, e.kernel, g);
  return g;
}

void check_launch_order(const Workload& w, const DependencyGraph& g) {
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const auto a = boost::source(*e, g), b = boost::target(*e, g);
    if (a >= b)
      throw InputError(
          fmt::format("{}: dependency from kernel {} to earlier kernel {}", w.source_path, a, b));
  }
}

std::int64_t critical_path_ns(const Workload& w, const DependencyGraph& g) {
  // Vertices are already in a topological order (launch order, checked above).
  std::vector<std::int64_t> finish(w.kernels.size(), 0);
  std::int64_t best = 0;
  for (std::size_t v = 0; v < w.kernels.size(); ++v) {
    std::int64_t ready = 0;
    for (auto [e, end] = boost::in_edges(v, g); e != end; ++e)
      ready = std::max(ready, finish[boost::source(*e, g)]);
    finish[v] = ready + w.kernels[v].work.duration_ns;
    best = std::max(best, finish[v]);
  }
  return best;
}

}  // namespace dvfsim
