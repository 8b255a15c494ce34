#include "parallel/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "sim/error.h"
#include "sim/gpu_timeline.h"
#include "sim/timeline_context.h"

namespace dvfsim {

RunResult ParallelRun::as_run_result() const {
  RunResult r;
  r.policy = policy;
  r.oracle = oracle;
  r.begin_ns = 0;
  r.end_ns = iteration_ns;
  r.energy_j = energy_j;
  r.iterations = 1;
  r.iteration_time_ns = {iteration_ns};
  r.iteration_energy_j = {energy_j};
  r.clock_switches = clock_switches;
  r.coalesced_requests = coalesced_requests;
  r.switch_stall_ns = switch_stall_ns;
  r.off_target_ns = off_target_ns;
  r.power_capped_ns = power_capped_ns;
  return r;
}

namespace {

// The device's idle time between two consecutive kernels of an instruction,
// as the single-GPU replay leaves it (Device::kernel_gaps).
std::int64_t kernel_gap_ns(const ParallelInputs& in, std::uint32_t prev, std::uint32_t next) {
  return in.device->kernel_gaps().between(in.workload->kernels[prev].correlation,
                                          in.workload->kernels[next].correlation);
}

// The kernels of one instruction kind of a stage, with their time scale.
const std::vector<std::uint32_t>& kernels_of(const StageWork& st, InstrKind k) {
  return k == InstrKind::forward ? st.forward
                                 : (k == InstrKind::backward ? st.backward : st.optimizer);
}

// The firmware cap warmed for a stage's forward and backward work, its
// kernels a device gap apart.
void warm_for_stage(GpuTimeline& tl, const ParallelInputs& in, const StageWork& st) {
  std::vector<KernelCost> costs;
  for (auto i : st.forward) costs.push_back((*in.costs)[i]);
  for (auto i : st.backward) costs.push_back((*in.costs)[i]);
  tl.warm_firmware(costs, std::vector<double>(costs.size(), in.device->kernel_gap_ns));
}

class Gpu final : public TimelineContext<PipelineContext> {
 public:
  Gpu(const ParallelInputs& in, const EngineConfig& cfg, int rank, std::unique_ptr<Policy> pol)
      : TimelineContext(
            shared_context_inputs(in, cfg), pol.get(),
            timeline_config(*in.device, cfg, cfg.seed + static_cast<std::uint64_t>(rank), false)),
        in_(in),
        cfg_(cfg),
        rank_(rank),
        policy_(std::move(pol)) {
    const ParallelSpec& sp = in.job->spec;
    stage_ = rank % sp.pp;
    scale_ = rank == sp.straggler_rank ? 1.0 + sp.straggler_pct / 100.0 : 1.0;
    if (!in.graph->program[static_cast<std::size_t>(rank)].empty())
      node_ = in.graph->program[static_cast<std::size_t>(rank)].front();
  }

  // Before the iteration: the policy's first clocks, landed; the firmware
  // cap warm for the stage's work (shared between replicas through `caps`).
  void begin(std::map<std::tuple<int, int, int>, std::int32_t>& caps) {
    policy_->begin(*this);
    tl_.land_pending_now();
    if (cfg_.power_cap && cfg_.warm_firmware) {
      const auto key = std::make_tuple(stage_, tl_.wanted().core_mhz, tl_.wanted().memory_mhz);
      if (auto it = caps.find(key); it != caps.end()) {
        tl_.set_cap(it->second);
      } else {
        warm_for_stage(tl_, in_, in_.job->stages[static_cast<std::size_t>(stage_)]);
        caps.emplace(key, tl_.cap_mhz());
      }
    }
    tl_.start(0);
  }

  // Runs instruction `v` from `ready_ns` on; returns its end.
  std::int64_t run(std::uint32_t v, std::int64_t ready_ns, double* energy_j) {
    node_ = v;
    FinishedKernel done;
    tl_.advance(std::max(ready_ns, tl_.now()), &done);
    const double e0 = tl_.energy_j();
    const DagNode& n = in_.graph->g[v];
    const StageWork& st = in_.job->stages[static_cast<std::size_t>(n.stage)];
    const double scale = scale_ * (n.kind == InstrKind::optimizer ? st.optimizer_scale : 1.0);
    kpos_ = 0;
    const std::vector<std::uint32_t>& ks = kernels_of(st, n.kind);
    for (const std::uint32_t k : ks) {
      if (kpos_ > 0) {
        const std::int64_t gap = kernel_gap_ns(in_, ks[kpos_ - 1], k);
        if (gap > 0) tl_.advance(tl_.now() + gap, &done);
      }
      tl_.fire_due_events();
      policy_->on_kernel_start(*this, k);
      tl_.fire_due_events();
      tl_.begin_kernel((*in_.costs)[k], scale, static_cast<std::int32_t>(k));
      while (!tl_.advance(GpuTimeline::kNever, &done)) {
      }
      policy_->on_kernel_end(*this, k);
      ++kpos_;
    }
    tl_.fire_due_events();
    *energy_j = tl_.energy_j() - e0;
    return tl_.now();
  }

  void finish(std::int64_t end_ns) {
    FinishedKernel done;
    if (end_ns > tl_.now()) tl_.advance(end_ns, &done);
  }
  const GpuTimeline& timeline() const { return tl_; }

  // PipelineContext
  int rank() const override { return rank_; }
  const PipelineJob& job() const override { return *in_.job; }
  const PipelineGraph& graph() const override { return *in_.graph; }
  std::uint32_t instruction() const override { return node_; }
  const Clocks* planned_clocks() const override { return planned_clocks_of(node_); }
  const Clocks* planned_clocks_of(std::uint32_t v) const override {
    return in_.planned && v < in_.planned->size() ? &(*in_.planned)[v] : nullptr;
  }
  double planned_ns(std::uint32_t v) const override {
    return in_.planned_ns && v < in_.planned_ns->size() ? (*in_.planned_ns)[v] : 0.0;
  }
  const Clocks* planned_kernel_clocks() const override {
    if (!in_.planned_kernels || node_ >= in_.planned_kernels->size()) return nullptr;
    const auto& k = (*in_.planned_kernels)[node_];
    return kpos_ < k.size() ? &k[kpos_] : nullptr;
  }

 private:
  const ParallelInputs& in_;
  const EngineConfig& cfg_;
  int rank_ = 0, stage_ = 0;
  double scale_ = 1.0;
  std::unique_ptr<Policy> policy_;
  std::uint32_t node_ = 0;
  std::size_t kpos_ = 0;  // the kernel's position in the running instruction
};

void check_inputs(const ParallelInputs& in, const EngineConfig& cfg) {
  if (!in.workload || !in.device || !in.latency || !in.power || !in.costs || !in.job || !in.graph ||
      (cfg.power_cap && !in.governor))
    throw std::logic_error("replay_parallel: missing input");
}

}  // namespace

ParallelRun replay_parallel(const ParallelInputs& in, const PolicyFactory& make_policy,
                            const EngineConfig& cfg) {
  check_inputs(in, cfg);
  const PipelineGraph& pg = *in.graph;
  const PipelineDag& g = pg.g;
  const ParallelSpec& sp = in.job->spec;
  ParallelRun out;
  out.policy = in.policy_name;
  out.oracle = in.oracle;
  std::vector<std::unique_ptr<Gpu>> gpus;
  gpus.reserve(static_cast<std::size_t>(sp.gpus()));
  std::map<std::tuple<int, int, int>, std::int32_t> caps;
  for (int r = 0; r < sp.gpus(); ++r) {
    gpus.push_back(std::make_unique<Gpu>(in, cfg, r, make_policy()));
    gpus.back()->begin(caps);
  }
  const std::size_t n = num_vertices(g);
  out.start_ns.assign(n, 0);
  out.end_ns.assign(n, 0);
  out.energy_node_j.assign(n, 0.0);
  for (const std::uint32_t v : pg.topo) {
    std::int64_t ready = 0;
    for (auto [e, end] = in_edges(v, g); e != end; ++e)
      ready = std::max(ready, out.end_ns[source(*e, g)] + g[*e].delay_ns);
    const DagNode& node = g[v];
    if (node.rank < 0) {
      out.start_ns[v] = ready;
      out.end_ns[v] = ready + node.fixed_ns;
      continue;
    }
    Gpu& gpu = *gpus[static_cast<std::size_t>(node.rank)];
    out.start_ns[v] = std::max(ready, gpu.timeline().now());
    out.end_ns[v] = gpu.run(v, ready, &out.energy_node_j[v]);
  }
  for (std::size_t v = 0; v < n; ++v) out.iteration_ns = std::max(out.iteration_ns, out.end_ns[v]);
  std::vector<std::int64_t> dur(n);
  for (std::size_t v = 0; v < n; ++v) dur[v] = out.end_ns[v] - out.start_ns[v];
  out.critical_path_ns = critical_path_ns(pg, dur);
  out.gpus.resize(gpus.size());
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    Gpu& gpu = *gpus[r];
    gpu.finish(out.iteration_ns);
    const GpuTimeline& tl = gpu.timeline();
    GpuRun& gr = out.gpus[r];
    gr.rank = static_cast<int>(r);
    gr.stage = static_cast<int>(r) % sp.pp;
    gr.replica = static_cast<int>(r) / sp.pp;
    std::int64_t busy = 0;
    for (const std::uint32_t v : pg.program[r]) busy += out.end_ns[v] - out.start_ns[v];
    gr.busy_s = static_cast<double>(busy) * 1e-9;
    gr.energy_j = tl.energy_j();
    gr.clock_switches = tl.clock_switches();
    gr.switch_stall_ns = tl.switch_stall_ns();
    gr.power_capped_ns = tl.power_capped_ns();
    out.energy_j += gr.energy_j;
    out.clock_switches += tl.clock_switches();
    out.coalesced_requests += tl.coalesced_requests();
    out.switch_stall_ns += tl.switch_stall_ns();
    out.off_target_ns += tl.off_target_ns();
    out.power_capped_ns += tl.power_capped_ns();
  }
  return out;
}

InstructionProfile profile_instruction(const ParallelInputs& in, int stage, InstrKind kind,
                                       const Clocks& clocks, const EngineConfig& cfg) {
  check_inputs(in, cfg);
  GpuTimeline tl(GpuModel{in.device, in.latency, in.power, cfg.power_cap ? in.governor : nullptr},
                 timeline_config(*in.device, cfg, cfg.seed, false));
  tl.set_clocks_now(clocks.core_mhz, clocks.memory_mhz);
  const StageWork& st = in.job->stages[static_cast<std::size_t>(stage)];
  if (cfg.power_cap && cfg.warm_firmware) warm_for_stage(tl, in, st);
  tl.start(0);
  const double scale = kind == InstrKind::optimizer ? st.optimizer_scale : 1.0;
  FinishedKernel done;
  InstructionProfile out;
  const std::vector<std::uint32_t>& ks = kernels_of(st, kind);
  for (std::size_t j = 0; j < ks.size(); ++j) {
    const std::uint32_t k = ks[j];
    const double t0 = static_cast<double>(tl.now()), e0 = tl.energy_j();
    if (j > 0) {  // the gap before a kernel is charged to it
      const std::int64_t gap = kernel_gap_ns(in, ks[j - 1], k);
      if (gap > 0) tl.advance(tl.now() + gap, &done);
    }
    tl.fire_due_events();
    tl.begin_kernel((*in.costs)[k], scale, static_cast<std::int32_t>(k));
    while (!tl.advance(GpuTimeline::kNever, &done)) {
    }
    out.kernel_ns.push_back(static_cast<double>(tl.now()) - t0);
    out.kernel_j.push_back(tl.energy_j() - e0);
  }
  out.time_ns = static_cast<double>(tl.now());
  out.energy_j = tl.energy_j();
  return out;
}

}  // namespace dvfsim
