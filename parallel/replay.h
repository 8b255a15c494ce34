#pragma once
// Replays one iteration of a pipeline-parallel job (parallel/dag.h): every
// GPU is one sim/GpuTimeline with its own clocks, switch model, firmware cap
// and policy; an instruction starts when its DAG predecessors have finished
// and their transfers have arrived, and its kernels run back to back on its
// GPU's timeline. GPUs idle at their current clocks while they wait, until
// the last GPU finishes the iteration. Nothing here models the GPU: the
// timeline does (docs/parallel.md, "Replay").
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parallel/dag.h"
#include "parallel/job.h"
#include "sim/engine.h"
#include "sim/policy.h"

namespace dvfsim {

// What a policy sees on a GPU of a pipeline: a PolicyContext (kernel indices
// are those of the single-GPU trace) plus the instruction running.
class PipelineContext : public PolicyContext {
 public:
  virtual int rank() const = 0;
  virtual const PipelineJob& job() const = 0;
  virtual const PipelineGraph& graph() const = 0;
  // The DAG node of the instruction whose kernels run now (or are about to).
  virtual std::uint32_t instruction() const = 0;
  // Clocks a planner chose for that instruction; nullptr when none.
  virtual const Clocks* planned_clocks() const = 0;
  // The same for any node, and the duration the planner expects (0: none).
  virtual const Clocks* planned_clocks_of(std::uint32_t node) const = 0;
  virtual double planned_ns(std::uint32_t node) const = 0;
  // The clock a planner chose for the kernel about to start, when it plans
  // the kernels inside each instruction (perseus inner=kernel); nullptr when
  // none.
  virtual const Clocks* planned_kernel_clocks() const = 0;
};

struct ParallelInputs {
  const Workload* workload = nullptr;
  const Device* device = nullptr;  // every GPU's model
  const LatencyModel* latency = nullptr;
  const PowerModel* power = nullptr;
  const Governor* governor = nullptr;
  const std::vector<KernelCost>* costs = nullptr;
  const PipelineJob* job = nullptr;
  const PipelineGraph* graph = nullptr;
  // Per DAG node, the clocks a planner chose (empty: no plan).
  const std::vector<Clocks>* planned = nullptr;
  const std::vector<double>* planned_ns = nullptr;  // the planner's expected durations
  // Per DAG node, per kernel of its instruction (in order): clocks a
  // per-kernel plan chose (a node's list empty, or no pointer: none).
  const std::vector<std::vector<Clocks>>* planned_kernels = nullptr;
  std::string policy_name = "policy";
  bool oracle = false;
};

struct GpuRun {
  int rank = 0, stage = 0, replica = 0;
  double busy_s = 0.0;  // time running instructions
  double energy_j = 0.0;
  std::int64_t clock_switches = 0;
  std::int64_t switch_stall_ns = 0;
  std::int64_t power_capped_ns = 0;
};

struct ParallelRun {
  std::string policy;
  bool oracle = false;
  std::int64_t iteration_ns = 0;  // the last GPU's end
  double energy_j = 0.0;          // every GPU over [0, iteration_ns]
  std::int64_t critical_path_ns = 0;
  std::vector<GpuRun> gpus;
  // Per DAG node: start, end and energy (all-reduce: no energy).
  std::vector<std::int64_t> start_ns, end_ns;
  std::vector<double> energy_node_j;
  std::int64_t clock_switches = 0, coalesced_requests = 0, switch_stall_ns = 0, off_target_ns = 0,
               power_capped_ns = 0;
  // The aggregate as one RunResult (one iteration, no kernels), for the
  // usual outputs.
  RunResult as_run_result() const;
};

using PolicyFactory = std::function<std::unique_ptr<Policy>()>;
ParallelRun replay_parallel(const ParallelInputs& in, const PolicyFactory& make_policy,
                            const EngineConfig& cfg);

// The time and energy of one instruction (a stage's forward or backward, or
// its optimizer step) alone on a GPU at fixed clocks, with the firmware cap
// warm for the stage: what Perseus profiles per stage and frequency.
struct InstructionProfile {
  double time_ns = 0.0;
  double energy_j = 0.0;
  std::vector<double> kernel_ns, kernel_j;  // each kernel's share, in order
};
InstructionProfile profile_instruction(const ParallelInputs& in, int stage, InstrKind kind,
                                       const Clocks& clocks, const EngineConfig& cfg);

}  // namespace dvfsim
