#pragma once
// The iteration of a pipeline-parallel job as a DAG on Boost.Graph
// (docs/parallel.md, "Schedule DAG"): one node per instruction (forward or
// backward of one microbatch on one stage of one replica, the optimizer step
// on each GPU) and per data-parallel all-reduce (one per stage, shared by
// the replicas); an edge is a dependency, with the link's transfer time as
// its delay. Each GPU's instructions are also a list in program order.
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <vector>

#include "parallel/job.h"

namespace dvfsim {

enum class InstrKind : std::uint8_t { forward, backward, optimizer, allreduce };
std::string_view to_string(InstrKind k);

struct DagNode {
  InstrKind kind = InstrKind::forward;
  std::int32_t stage = 0;
  std::int32_t replica = 0;     // -1 for an all-reduce (all replicas)
  std::int32_t microbatch = 0;  // -1 for optimizer and all-reduce
  std::int32_t rank = -1;       // the GPU it runs on; -1: the network (all-reduce)
  std::int64_t fixed_ns = 0;    // duration of an all-reduce
};
struct DagEdge {
  std::int64_t delay_ns = 0;  // transfer between the end of the source and the start of the target
};
using PipelineDag =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, DagNode, DagEdge>;

struct PipelineGraph {
  PipelineDag g;
  // Per rank, its nodes in program order.
  std::vector<std::vector<std::uint32_t>> program;
  std::vector<std::uint32_t> topo;  // every node in a topological order
  std::int64_t activation_ns_intra = 0, activation_ns_inter = 0;
  std::int64_t allreduce_ns = 0;  // per stage (the ring over dp replicas)
};

// The instruction order of stage `s` of `S` for `M` microbatches:
// (kind, microbatch) pairs. 1F1B: S-s-1 warm-up forwards, then one forward
// and one backward alternately, then the remaining backwards. GPipe: all
// forwards, then all backwards.
std::vector<std::pair<InstrKind, int>> stage_order(PipelineSchedule sched, int s, int S, int M);

// Ring all-reduce of `bytes` over `n` GPUs on `link`: 2(n-1) steps, each
// sending bytes/n: 2(n-1)/n * bytes / bandwidth + 2(n-1) latencies.
std::int64_t ring_allreduce_ns(double bytes, int n, const Link& link);

PipelineGraph build_dag(const PipelineJob& job);

// Longest path through the DAG with the given node durations (indexed by
// node) plus edge delays: the iteration's critical path in ns. `on_path`,
// when given, receives the nodes on one longest path.
std::int64_t critical_path_ns(const PipelineGraph& pg, const std::vector<std::int64_t>& dur_ns,
                              std::vector<std::uint32_t>* on_path = nullptr);

}  // namespace dvfsim
