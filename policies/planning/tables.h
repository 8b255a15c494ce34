#pragma once
// The clock grid (every supported (core, memory) pair of a device) and the
// per-item time/energy tables over it that every planner solves on: computed
// once per policy run from the latency and power models (an item is a kernel,
// a group of identical kernels, or a whole phase), with the firmware power cap
// applied per kernel and the idle power of the gap after a kernel included.
// Also the memory-clock masks of the grid and what a memory switch costs a
// plan (docs/policies.md).
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/models.h"

namespace dvfsim::plan {

// ---------------------------------------------------------------- the grid

// Every supported pair of a device, memory-major, core ascending within one
// memory clock: pairs of memory index m are [mem_begin[m], mem_begin[m + 1]).
struct Grid {
  std::vector<Clocks> pairs;
  std::vector<std::uint32_t> mem_begin;
  // Index of a pair, or -1 when the device does not support it.
  int find(std::int32_t core_mhz, std::int32_t memory_mhz) const;
};
Grid make_grid(const Device& d);

// ---------------------------------------------------------------- tables

// What a table row is built from: one kernel's cost, repeated `count` times.
struct ItemSpec {
  KernelCost cost;
  double time_scale = 1.0;  // measured / modelled time (online policies); 1 = the model
  double gap_ns = 0.0;      // idle time after the kernel, spent at its clocks
  // Host slack: the kernel and the wait for the host after it last at least
  // this long (from its start to the next kernel's launch), so a slower
  // kernel absorbs that wait at no cost in time; 0: none (its gap, if any,
  // is in gap_ns). whole_run_input sets it where the GPU waits for the host.
  double floor_ns = 0.0;
  // Online policies with host slack: when the kernel started in the learned
  // iteration, after its first kernel started (-1: not given). The rehearsal
  // starts a kernel that waited for the host (floor_ns of the one before)
  // then at the earliest, moved by the host's delay, so a delay the GPU ran
  // into before is absorbed by the host's later waits, as on a host that
  // keeps launching. The planners do not read it.
  double observed_start_ns = -1.0;
  // Its launch followed a host synchronisation (the host waited for the GPU
  // between the previous kernel's launch and its own): the one place a GPU
  // running late delays the host's later launches, as in the engine
  // (sim/engine.cpp). The rehearsal moves the host's clock there only.
  bool launched_after_sync = false;
  std::int32_t max_core_mhz = 0;  // the firmware's cap in force for it (0: none)
  std::uint32_t count = 1;
};

// The firmware's power cap enters the tables in two ways: an item's
// max_core_mhz (the cap the governor emulation below predicts for it: a pair
// with a higher core clock runs at the cap), and optionally a per-kernel cap:
struct TableOptions {
  // Per-kernel power cap in W: a pair whose modelled power for the kernel
  // exceeds it runs at the highest core clock that fits. <= 0: none (the
  // default: the firmware caps windows of activity, not kernels, which the
  // governor emulation models).
  double cap_w = 0.0;
};
TableOptions default_table_options(const Device& d);

// time and energy of every item at every grid pair (row-major, item x pair).
// Energy = kernel power x time + context-idle power at the same clocks x gap:
// the whole board power, so a slower kernel pays the static power over the
// time it adds.
struct Tables {
  Grid grid;
  std::size_t items = 0;
  std::size_t pairs = 0;
  std::vector<double> time_ns;
  std::vector<double> energy_j;
  std::vector<std::uint32_t> count;
  // Optional (TableCache::view): item i's rows held elsewhere, time_ns and
  // energy_j then empty.
  std::vector<const double*> time_rows, energy_rows;
  const double* t_row(std::size_t item) const {
    return time_rows.empty() ? &time_ns[item * pairs] : time_rows[item];
  }
  const double* e_row(std::size_t item) const {
    return energy_rows.empty() ? &energy_j[item * pairs] : energy_rows[item];
  }
  double t(std::size_t item, std::size_t pair) const { return t_row(item)[pair]; }
  double e(std::size_t item, std::size_t pair) const { return e_row(item)[pair]; }
  std::uint64_t copies() const;
};
Tables build_tables(const Device& d, const LatencyModel& lat, const PowerModel& pow,
                    const std::vector<ItemSpec>& items, const TableOptions& opt);
// The latency and power models of one kernel at every grid pair, uncapped
// (kernel_at): what a table row is derived from.
struct ModelRow {
  std::vector<double> duration_ns;
  std::vector<double> power_w;
};
ModelRow model_row(const Grid& g, const LatencyModel& lat, const PowerModel& pow,
                   const KernelCost& k);
// One item's table row from its model row: the item's time scale, gap
// (context-idle power `idle_w` per pair) and caps applied as build_tables does.
void table_row(const Grid& g, const std::vector<double>& idle_w, const ItemSpec& it,
               const ModelRow& m, const TableOptions& opt, double* trow, double* erow);

// Table rows reused across calls (plan_kernels' rounds rebuild their tables
// with new caps): the models are evaluated once per distinct kernel cost and a
// row is derived once per distinct item (cost, scale, gap, cap); rows equal
// build_tables' bit for bit.
class TableCache {
 public:
  TableCache(const Device& d, const LatencyModel& lat, const PowerModel& pow,
             const TableOptions& opt);
  const Grid& grid() const { return grid_; }
  // The row of an item (time_ns, energy_j: grid().pairs.size() each) and its
  // slot (a stable id for the distinct item).
  struct Row {
    const double* time_ns;
    const double* energy_j;
    std::size_t slot;
  };
  Row row(const ItemSpec& it);
  // build_tables(items) from the cached rows; `rows` (optional): each item's row.
  Tables tables(const std::vector<ItemSpec>& items, std::vector<Row>* rows = nullptr);
  // The same tables without copying the rows: they point into the cache
  // (valid while it lives).
  Tables view(const std::vector<ItemSpec>& items, std::vector<Row>* rows = nullptr);
  std::size_t slots() const { return rows_t_.size(); }
  // About the memory the rows hold.
  std::size_t bytes() const {
    return (models_.size() + rows_t_.size()) * grid_.pairs.size() * 2 * sizeof(double);
  }

 private:
  const LatencyModel& lat_;
  const PowerModel& pow_;
  TableOptions opt_;
  Grid grid_;
  std::vector<double> idle_;
  // Keys hashed by the bits of their numbers (-0 as 0), compared by value.
  struct KeyHash {
    template <std::size_t N>
    std::size_t operator()(const std::array<double, N>& k) const;
  };
  std::unordered_map<std::array<double, 9>, std::size_t, KeyHash> models_index_;
  std::vector<ModelRow> models_;
  // (model, time scale, gap, cap, floor)
  std::unordered_map<std::array<double, 5>, std::size_t, KeyHash> rows_index_;
  std::vector<std::unique_ptr<double[]>> rows_t_, rows_e_;  // grid().pairs.size() each
};

// Sums rows of `t` into groups: group g's row is the sum of count x row over
// the items with group_of[item] == g (count of every group: 1).
Tables group_tables(const Tables& t, const std::vector<std::uint32_t>& group_of,
                    std::size_t groups);

// Groups identical kernels (same cost, scale and gap to 0.1 us) into items.
struct Grouping {
  std::vector<ItemSpec> items;
  std::vector<std::uint32_t> item_of;  // per input kernel
};
Grouping group_identical(const std::vector<ItemSpec>& kernels);

// One memory clock's columns of the grid: the pairs a plan that holds the
// memory clock there may use.
struct MemoryMask {
  std::int32_t memory_mhz = 0;
  std::vector<char> allowed;  // one flag per grid pair
};
// One mask per memory clock that has supported pairs, in grid order.
std::vector<MemoryMask> memory_masks(const Grid& g);
// Memory clocks of the grid with at least one supported pair.
std::size_t memory_clock_count(const Grid& g);

// Number of memory-clock changes along a sequence of grid pairs (cyclic when
// `cyclic`: the last pair is followed by the first, as in a repeated step).
std::int64_t memory_changes(const Grid& g, const std::vector<std::int32_t>& pair_of, bool cyclic);

// Context-idle power at a pair.
double idle_power_w(const PowerModel& pow, const Clocks& c);

// What the solvers charge for memory switches, which their separable cost
// models cannot see: each stalls the GPU for `ns` at context-idle power `w`
// (the engine's stall, sim/gpu_timeline.h; emulate() checks the plan on it).
struct StallCharge {
  double ns = 0.0;
  double w = 0.0;
  double time_ns(std::int64_t switches) const { return static_cast<double>(switches) * ns; }
  double energy_j(std::int64_t switches) const { return time_ns(switches) * w * 1e-9; }
};

}  // namespace dvfsim::plan
