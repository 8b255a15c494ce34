#pragma once
// A pipeline- and data-parallel training job built from a single-GPU trace
// (docs/parallel.md): the `--parallel` specification, the repeating layer
// structure of one captured step, its partition into pipeline stages, and
// the links between GPUs. Plain data and pure functions; the schedule DAG is
// parallel/dag.h, the replay on the GPU timeline parallel/replay.h.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload.h"

namespace dvfsim {

enum class PipelineSchedule : std::uint8_t { one_f_one_b, gpipe };
std::string_view to_string(PipelineSchedule s);

// A link between two GPUs: per-direction bandwidth and a fixed latency per
// message (parallel/links.cpp says where each number comes from).
struct Link {
  std::string name;
  double bandwidth_gb_s = 0.0;  // GB/s (1e9 bytes per second), one direction
  double latency_us = 0.0;
  // Time for one message of `bytes`: latency + bytes / bandwidth.
  std::int64_t transfer_ns(double bytes) const;
};
// The links dvfsim knows (nvlink3, nvlink4, nvlink5, pcie3, pcie4, pcie5,
// ib-hdr, ib-ndr); InputError listing them for another name.
const Link& find_link(const std::string& name);
std::vector<const Link*> all_links();
// The GPU-to-GPU link of a device inside one node, from its name (A100 SXM:
// nvlink3, H100/H200 SXM: nvlink4, B200: nvlink5, anything else: pcie4).
std::string default_intra_link(const std::string& device_name);

struct ParallelSpec {
  int pp = 1;            // pipeline stages
  int dp = 1;            // data-parallel replicas (pipelines)
  int microbatches = 1;  // per pipeline and iteration
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  // Unit boundaries of each stage: S+1 ascending numbers from 0 to L+2 over
  // the units [prologue (embedding), block 1..L, epilogue (head, loss)].
  // Empty: blocks split evenly, prologue in the first stage, epilogue in the last.
  std::vector<int> partition;
  int gpus_per_node = 8;
  std::string link;                // inside a node; "" = default_intra_link(device)
  std::string network = "ib-hdr";  // between nodes
  double activation_bytes = -1.0;  // per microbatch and stage boundary; < 0: estimated
  double gradient_bytes = -1.0;    // all gradients of the model; < 0: estimated
  // A straggler: this rank runs every kernel `straggler_pct` % slower.
  int straggler_rank = -1;
  double straggler_pct = 0.0;

  int gpus() const { return pp * dp; }
  int rank(int stage, int replica) const { return replica * pp + stage; }
  int node_of(int rank) const { return rank / gpus_per_node; }
  // The text as it would be given again (for outputs).
  std::string text() const;
};

// Parses "pp=S[,dp=D][,microbatches=M][,schedule=1f1b|gpipe][,partition=a:b:...]"
// (partition entries separated by ':' or given last with ','). InputError
// names the bad key.
ParallelSpec parse_parallel(const std::string& text);
// "RANK:PCT" from --set straggler.
void parse_straggler(const std::string& text, ParallelSpec& spec);

// The repeating block structure of one captured training step.
struct LayerStructure {
  std::int32_t iteration = 0;  // the trace iteration it was taken from
  int layers = 0;              // L
  // Per unit (0: prologue, 1..L: blocks, L+1: epilogue): the kernel indices
  // of its forward and its backward, in launch order.
  std::vector<std::vector<std::uint32_t>> forward, backward;
  std::vector<std::uint32_t> optimizer;  // after the last backward kernel
  std::string rule;                      // how it was found, for the user
  int units() const { return layers + 2; }
};
// Finds the blocks: the longest run of a repeating kernel-name sequence in
// the forward part and in the backward part of the last steady iteration.
// InputError when the trace has no backward or no repeating structure.
LayerStructure detect_layers(const Workload& w);

// One pipeline stage's work per microbatch.
struct StageWork {
  int first_unit = 0, end_unit = 0;  // units [first, end)
  std::vector<std::uint32_t> forward, backward, optimizer;
  // The optimizer kernels run on every stage scaled by the stage's share of
  // the model's forward FLOPs (its parameter share).
  double optimizer_scale = 0.0;
  double parameter_share = 0.0;
};

struct PipelineJob {
  ParallelSpec spec;
  LayerStructure layers;
  std::vector<StageWork> stages;
  Link intra, inter;
  double activation_bytes = 0.0;
  double gradient_bytes = 0.0;
  std::vector<std::string> notes;  // estimates made, for the user
};
// Partitions the structure into spec.pp stages and resolves links and sizes.
PipelineJob make_job(const Workload& w, const ParallelSpec& spec, const std::string& device_name);

}  // namespace dvfsim
