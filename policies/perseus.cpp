// `perseus`: per-instruction SM clocks for a pipeline-parallel job (Chung et
// al., SOSP'24), planned on the iteration time-energy frontier of the DAG
// (parallel/perseus.h): the least-energy plan within max_slowdown of the
// fastest iteration, or matched to a straggler's. The plan is made once per
// job (apps/parallel_run.cpp); on each GPU this policy requests the planned
// clock when an instruction with another clock starts, memory at its highest
// (as Perseus's frequency controller does).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "parallel/replay.h"
#include "policies/registry.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

class PerseusPolicy final : public Policy {
 public:
  void begin(PolicyContext& ctx) override {
    pipe_ = dynamic_cast<PipelineContext*>(&ctx);
    if (!pipe_)
      throw InputError(
          "policy perseus: plans a pipeline-parallel job: run it with --parallel pp=S,... "
          "(docs/parallel.md)");
    apply(ctx);
  }
  void on_kernel_start(PolicyContext& ctx, std::uint32_t) override {
    // inner=kernel: the kernel's own planned clock (switches assumed fast)
    if (const Clocks* k = pipe_->planned_kernel_clocks()) {
      request(ctx, *k);
      return;
    }
    apply(ctx);
  }
  // The next instruction's clock, requested one mean switch latency before
  // the current instruction is expected to end, so that it lands in time.
  void on_timer(PolicyContext& ctx) override {
    if (next_) request(ctx, *next_);
  }

 private:
  void request(PolicyContext& ctx, const Clocks& c) {
    const Clocks w = ctx.wanted();
    if (w.core_mhz != c.core_mhz || w.memory_mhz != c.memory_mhz)
      ctx.request(c.core_mhz, c.memory_mhz);
  }
  void apply(PolicyContext& ctx) {
    const std::uint32_t node = pipe_->instruction();
    if (started_ && node == node_) return;
    started_ = true;
    node_ = node;
    next_ = nullptr;
    const Clocks* c = pipe_->planned_clocks();
    if (!c) return;
    if (!ahead_) request(ctx, *c);  // else the timer asked for it already
    ahead_ = false;
    const auto& prog = pipe_->graph().program[static_cast<std::size_t>(pipe_->rank())];
    while (pos_ < prog.size() && prog[pos_] != node) ++pos_;
    if (pos_ + 1 >= prog.size()) return;
    next_ = pipe_->planned_clocks_of(prog[pos_ + 1]);
    const double dur = pipe_->planned_ns(node);
    if (!next_ || dur <= 0 ||
        (next_->core_mhz == c->core_mhz && next_->memory_mhz == c->memory_mhz))
      return;
    const double lead = ctx.expected_core_switch_ns();
    ahead_ = true;
    ctx.set_timer(ctx.now_ns() + std::max<std::int64_t>(0, std::llround(dur - lead)));
  }
  PipelineContext* pipe_ = nullptr;
  bool started_ = false, ahead_ = false;
  std::uint32_t node_ = 0;
  std::size_t pos_ = 0;
  const Clocks* next_ = nullptr;
};

const bool registered = register_policy({
    "perseus",
    "Pipeline jobs (--parallel): one SM clock per forward/backward instruction from the "
    "iteration time-energy frontier (Phillips-Dessouky on the DAG): least energy within "
    "max_slowdown of the fastest iteration, or matched to a straggler's (--set straggler).",
    false,
    {{"max_slowdown", ParamSpec::Kind::defaulted, "0.01",
      "largest iteration slowdown allowed against the fastest plan (fraction)"},
     {"resolution", ParamSpec::Kind::defaulted, "500",
      "time units the planner divides the shortest instruction into"},
     {"inner", ParamSpec::Kind::defaulted, "none",
      "none (one SM clock per instruction) or kernel (per-kernel clocks inside each instruction, "
      "planned with it: the instruction's time-energy options are its per-kernel plans; follows "
      "them only with fast clock switches)"}},
    [](const Params&) { return std::make_unique<PerseusPolicy>(); },
});

}  // namespace
}  // namespace dvfsim
