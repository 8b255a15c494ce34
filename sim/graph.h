#pragma once
// The workload's dependency graph: stream order, cross-stream event waits and
// host synchronisation (a kernel launched after a host sync depends on the
// work the sync waited for). `dependencies` lists each kernel's predecessors
// compactly (the replay engine reads it on multi-stream traces); the
// Boost.Graph form is for checks and analyses (docs/design.md, "Concurrent
// streams").
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <vector>

#include "sim/workload.h"

namespace dvfsim {

// Predecessors of every kernel (indices into Workload::kernels), kernel i's in
// preds[begin[i], begin[i + 1]): lower than i, except the capture order's,
// which may name a kernel of another stream launched after i.
struct Dependencies {
  std::vector<std::uint32_t> begin;
  std::vector<std::uint32_t> preds;
};

// True when the workload's kernels run on more than one stream.
bool multi_stream(const Workload& w);

// One stream's kernels in launch order and, for each j, the latest traced end
// among kernels[0..j] (non-decreasing, so it can be searched).
struct StreamKernels {
  std::int32_t id = 0;
  std::vector<std::uint32_t> kernels;
  std::vector<std::int64_t> ended_by;
};
// The workload's streams, in the order of their first kernel.
std::vector<StreamKernels> stream_kernels(const Workload& w);

// Stream order, event waits and host syncs. With `capture_order`, also the
// order the capture shows across streams: a kernel depends on the last
// kernel of every other stream that had ended (in the trace) before it
// started, so kernels on different streams overlap only where the capture
// shows them overlapping. That kernel may have been launched after this one
// (the GPU started a later launch first), but not after a host sync that
// follows this one's launch. The edges follow traced time, so they hold no
// cycle.
Dependencies dependencies(const Workload& w, bool capture_order);
// The same with the workload's streams (stream_kernels(w)) already built.
Dependencies dependencies(const Workload& w, const std::vector<StreamKernels>& streams,
                          bool capture_order);

using DependencyGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

// The graph of dependencies(w, false).
DependencyGraph build_dependency_graph(const Workload& w);

// Checks that every edge points forward in launch order (the replay launches
// kernels in that order); throws InputError naming the first bad edge.
void check_launch_order(const Workload& w, const DependencyGraph& g);

// Length of the longest path through the graph, weighting each kernel by its
// traced duration: the least time the GPU work could take at capture clocks.
std::int64_t critical_path_ns(const Workload& w, const DependencyGraph& g);

// A half-open stretch [start_ns, end_ns) of GPU activity.
struct Interval {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};
// Time during which at least two of the intervals run at once (each instant
// counted once, however many overlap).
std::int64_t overlap_ns(std::vector<Interval> intervals);
// The traced activities' intervals.
std::vector<Interval> traced_intervals(const Workload& w);

}  // namespace dvfsim
