#pragma once
// The workload's dependency graph on Boost.Graph: stream order, cross-stream
// event waits and host synchronisation (a kernel launched after a host sync
// depends on the work the sync waited for).
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <vector>

#include "sim/workload.h"

namespace dvfsim {

using DependencyGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

DependencyGraph build_dependency_graph(const Workload& w);

// Checks that every edge points forward in launch order (the replay executes
// kernels in that order); throws InputError naming the first bad edge.
void check_launch_order(const Workload& w, const DependencyGraph& g);

// Length of the longest path through the graph, weighting each kernel by its
// traced duration: the least time the GPU work could take at capture clocks.
std::int64_t critical_path_ns(const Workload& w, const DependencyGraph& g);

}  // namespace dvfsim
