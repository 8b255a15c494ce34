#include "sim/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "sim/error.h"

namespace dvfsim {

bool multi_stream(const Workload& w) {
  for (const Kernel& k : w.kernels)
    if (k.stream != w.kernels.front().stream) return true;
  return false;
}

std::vector<StreamKernels> stream_kernels(const Workload& w) {
  std::vector<StreamKernels> streams;
  for (std::uint32_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    std::size_t s = 0;
    while (s < streams.size() && streams[s].id != k.stream) ++s;
    if (s == streams.size()) streams.emplace_back().id = k.stream;
    StreamKernels& st = streams[s];
    const std::int64_t end = k.traced_start_ns + k.work.duration_ns;
    st.ended_by.push_back(st.kernels.empty() ? end : std::max(st.ended_by.back(), end));
    st.kernels.push_back(i);
  }
  return streams;
}

Dependencies dependencies(const Workload& w, bool capture_order) {
  return dependencies(w, stream_kernels(w), capture_order);
}

Dependencies dependencies(const Workload& w, const std::vector<StreamKernels>& streams,
                          bool capture_order) {
  const std::size_t n = w.kernels.size();
  Dependencies d;
  d.begin.reserve(n + 1);
  d.preds.reserve(n + w.event_waits.size());
  // Each kernel's stream, and how many of each stream's kernels have been
  // launched so far.
  std::vector<std::size_t> stream_of(n), launched(streams.size(), 0);
  for (std::size_t s = 0; s < streams.size(); ++s)
    for (const std::uint32_t i : streams[s].kernels) stream_of[i] = s;
  // The host launch time of the first sync after each kernel's launch: a
  // kernel may wait for one of another stream launched after it, but not
  // across a sync (the host could not have launched that one yet).
  std::vector<std::int64_t> sync_begins;
  for (const SyncPoint& s : w.syncs) sync_begins.push_back(s.host_begin_ns);
  std::sort(sync_begins.begin(), sync_begins.end());
  std::vector<EventWait> waits = w.event_waits;
  std::sort(waits.begin(), waits.end(), [](const EventWait& a, const EventWait& b) {
    return a.kernel < b.kernel || (a.kernel == b.kernel && a.after < b.after);
  });
  std::size_t next_wait = 0, next_sync = 0;
  std::int64_t barrier = -1;  // last kernel a host sync waited for
  auto add = [&](std::uint32_t from) {
    for (auto p = d.begin.back(); p < d.preds.size(); ++p)
      if (d.preds[p] == from) return;
    d.preds.push_back(from);
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    const Kernel& k = w.kernels[i];
    d.begin.push_back(static_cast<std::uint32_t>(d.preds.size()));
    while (next_sync < w.syncs.size() && w.syncs[next_sync].host_begin_ns <= k.host_launch_ns) {
      const auto& s = w.syncs[next_sync++];
      if (s.waits_until_kernel > 0)
        barrier = std::max<std::int64_t>(barrier, s.waits_until_kernel - 1);
    }
    const StreamKernels& own = streams[stream_of[i]];
    std::size_t& own_launched = launched[stream_of[i]];
    if (own_launched > 0) add(own.kernels[own_launched - 1]);
    // A blocking copy's own activity is inside the barrier it starts: the
    // barrier orders the kernels after it, not the copy itself.
    if (barrier >= 0 && barrier < static_cast<std::int64_t>(i))
      add(static_cast<std::uint32_t>(barrier));
    for (; next_wait < waits.size() && waits[next_wait].kernel <= i; ++next_wait)
      if (waits[next_wait].kernel == i && waits[next_wait].after < i) add(waits[next_wait].after);
    if (capture_order) {
      const auto next_sync_at =
          std::upper_bound(sync_begins.begin(), sync_begins.end(), k.host_launch_ns);
      for (std::size_t t = 0; t < streams.size(); ++t) {
        const StreamKernels& s = streams[t];
        if (s.id == k.stream) continue;
        // The last kernel of that stream by which all of it had ended, also
        // one launched after this kernel (the GPU ran them in that order:
        // on several streams a later launch may end before an earlier one
        // starts), unless a host sync lies between the two launches.
        const auto it = std::upper_bound(s.ended_by.begin(), s.ended_by.end(), k.traced_start_ns);
        auto j = static_cast<std::size_t>(it - s.ended_by.begin());
        if (j > launched[t] && next_sync_at != sync_begins.end())
          while (j > launched[t] && w.kernels[s.kernels[j - 1]].host_launch_ns >= *next_sync_at)
            --j;
        if (j > 0) add(s.kernels[j - 1]);
      }
    }
    ++own_launched;
  }
  d.begin.push_back(static_cast<std::uint32_t>(d.preds.size()));
  return d;
}

DependencyGraph build_dependency_graph(const Workload& w) {
  DependencyGraph g(w.kernels.size());
  const Dependencies d = dependencies(w, false);
  for (std::uint32_t i = 0; i < w.kernels.size(); ++i)
    for (auto p = d.begin[i]; p < d.begin[i + 1]; ++p) boost::add_edge(d.preds[p], i, g);
  // Event waits that point backwards are refused by check_launch_order, not
  // dropped: dependencies() leaves them out, so add them here.
  for (const EventWait& e : w.event_waits)
    if (e.after >= e.kernel) boost::add_edge(e.after, e.kernel, g);
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

std::int64_t overlap_ns(std::vector<Interval> intervals) {
  // Sweep the starts (+1) and ends (-1) in time order; an end before a start
  // at the same instant (half-open intervals touching do not overlap).
  std::vector<std::pair<std::int64_t, int>> events;
  events.reserve(2 * intervals.size());
  for (const Interval& iv : intervals) {
    if (iv.end_ns <= iv.start_ns) continue;
    events.emplace_back(iv.start_ns, +1);
    events.emplace_back(iv.end_ns, -1);
  }
  std::sort(events.begin(), events.end());
  std::int64_t total = 0, prev = 0;
  int running = 0;
  for (const auto& [t, delta] : events) {
    if (running >= 2) total += t - prev;
    running += delta;
    prev = t;
  }
  return total;
}

std::vector<Interval> traced_intervals(const Workload& w) {
  std::vector<Interval> out;
  out.reserve(w.kernels.size());
  for (const Kernel& k : w.kernels)
    out.push_back({k.traced_start_ns, k.traced_start_ns + k.work.duration_ns});
  return out;
}

}  // namespace dvfsim
