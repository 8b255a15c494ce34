#include "policies/planning/tables.h"

#include <cmath>
#include <map>
#include <tuple>

#include "sim/gpu_timeline.h"

namespace dvfsim::plan {

// ------------------------------------------------------------------ grid

int Grid::find(std::int32_t core_mhz, std::int32_t memory_mhz) const {
  for (std::size_t m = 0; m + 1 < mem_begin.size(); ++m) {
    if (pairs.empty() || mem_begin[m] == mem_begin[m + 1]) continue;
    if (pairs[mem_begin[m]].memory_mhz != memory_mhz) continue;
    for (auto i = mem_begin[m]; i < mem_begin[m + 1]; ++i)
      if (pairs[i].core_mhz == core_mhz) return static_cast<int>(i);
  }
  return -1;
}

Grid make_grid(const Device& d) {
  Grid g;
  g.mem_begin.push_back(0);
  for (const auto m : d.memory_clocks_mhz) {
    for (const auto c : d.core_clocks_mhz)
      if (d.supports(c, m)) g.pairs.push_back(make_clocks(d, c, m));
    g.mem_begin.push_back(static_cast<std::uint32_t>(g.pairs.size()));
  }
  return g;
}

// ------------------------------------------------------------------ tables

TableOptions default_table_options(const Device& /*d*/) {
  return TableOptions{};
}

double idle_power_w(const PowerModel& pow, const Clocks& c) {
  return pow.power_w(Utilisation{}, c);
}

std::uint64_t Tables::copies() const {
  std::uint64_t n = 0;
  for (auto c : count) n += c;
  return n;
}

Tables build_tables(const Device& d, const LatencyModel& lat, const PowerModel& pow,
                    const std::vector<ItemSpec>& items, const TableOptions& opt) {
  (void)d;
  Tables tb;
  tb.grid = make_grid(d);
  tb.items = items.size();
  tb.pairs = tb.grid.pairs.size();
  tb.time_ns.assign(tb.items * tb.pairs, 0.0);
  tb.energy_j.assign(tb.items * tb.pairs, 0.0);
  tb.count.resize(tb.items);
  std::vector<double> idle(tb.pairs);
  for (std::size_t p = 0; p < tb.pairs; ++p) idle[p] = idle_power_w(pow, tb.grid.pairs[p]);
  const auto& g = tb.grid;
  for (std::size_t i = 0; i < tb.items; ++i) {
    const ItemSpec& it = items[i];
    tb.count[i] = it.count;
    double* trow = &tb.time_ns[i * tb.pairs];
    double* erow = &tb.energy_j[i * tb.pairs];
    for (std::size_t m = 0; m + 1 < g.mem_begin.size(); ++m) {
      const auto b = g.mem_begin[m], e = g.mem_begin[m + 1];
      bool capped = false;
      std::uint32_t last_fit = b;
      for (auto p = b; p < e; ++p) {
        if (!capped && it.max_core_mhz > 0 && g.pairs[p].core_mhz > it.max_core_mhz && p > b)
          capped = true;
        if (capped) {
          trow[p] = trow[last_fit];
          erow[p] = erow[last_fit];
          continue;
        }
        const KernelAtClocks k = kernel_at(lat, pow, it.cost, g.pairs[p]);
        const double tm = k.duration_ns, pw = k.power_w;
        if (opt.cap_w > 0 && pw > opt.cap_w && p > b) {
          // The firmware holds the core at the highest clock that fits.
          capped = true;
          trow[p] = trow[last_fit];
          erow[p] = erow[last_fit];
          continue;
        }
        const double t = tm * it.time_scale;
        trow[p] = t;
        erow[p] = (pw * t + idle[p] * it.gap_ns) * 1e-9;
        last_fit = p;
      }
    }
  }
  return tb;
}

Tables group_tables(const Tables& t, const std::vector<std::uint32_t>& group_of,
                    std::size_t groups) {
  Tables g;
  g.grid = t.grid;
  g.items = groups;
  g.pairs = t.pairs;
  g.time_ns.assign(groups * t.pairs, 0.0);
  g.energy_j.assign(groups * t.pairs, 0.0);
  g.count.assign(groups, 1);
  for (std::size_t i = 0; i < t.items; ++i) {
    const std::size_t gi = group_of[i];
    const double n = t.count[i];
    for (std::size_t p = 0; p < t.pairs; ++p) {
      g.time_ns[gi * t.pairs + p] += n * t.t(i, p);
      g.energy_j[gi * t.pairs + p] += n * t.e(i, p);
    }
  }
  return g;
}

Grouping group_identical(const std::vector<ItemSpec>& kernels) {
  using Key =
      std::tuple<double, double, double, double, double, bool, double, long long, std::int32_t>;
  std::map<Key, std::uint32_t> index;
  Grouping g;
  g.item_of.reserve(kernels.size());
  for (const auto& k : kernels) {
    const Key key{k.cost.fixed_ns,      k.cost.compute_ns_mhz,
                  k.cost.memory_ns_mhz, k.cost.flops,
                  k.cost.dram_bytes,    k.cost.tensor,
                  k.time_scale,         std::llround(k.gap_ns * 10.0),
                  k.max_core_mhz};
    auto [it, fresh] = index.emplace(key, static_cast<std::uint32_t>(g.items.size()));
    if (fresh) {
      g.items.push_back(k);
      g.items.back().count = 0;
    }
    g.items[it->second].count += k.count;
    g.item_of.push_back(it->second);
  }
  return g;
}

std::vector<MemoryMask> memory_masks(const Grid& g) {
  std::vector<MemoryMask> out;
  for (std::size_t m = 0; m + 1 < g.mem_begin.size(); ++m) {
    if (g.mem_begin[m + 1] == g.mem_begin[m]) continue;
    MemoryMask mm{g.pairs[g.mem_begin[m]].memory_mhz, std::vector<char>(g.pairs.size(), 0)};
    for (auto p = g.mem_begin[m]; p < g.mem_begin[m + 1]; ++p) mm.allowed[p] = 1;
    out.push_back(std::move(mm));
  }
  return out;
}

std::size_t memory_clock_count(const Grid& g) {
  std::size_t n = 0;
  for (std::size_t m = 0; m + 1 < g.mem_begin.size(); ++m) n += g.mem_begin[m + 1] > g.mem_begin[m];
  return n;
}

std::int64_t memory_changes(const Grid& g, const std::vector<std::int32_t>& pair_of, bool cyclic) {
  std::int64_t n = 0;
  for (std::size_t i = 1; i < pair_of.size(); ++i)
    if (g.pairs[static_cast<std::size_t>(pair_of[i])].memory_mhz !=
        g.pairs[static_cast<std::size_t>(pair_of[i - 1])].memory_mhz)
      ++n;
  if (cyclic && pair_of.size() > 1 &&
      g.pairs[static_cast<std::size_t>(pair_of.back())].memory_mhz !=
          g.pairs[static_cast<std::size_t>(pair_of.front())].memory_mhz)
    ++n;
  return n;
}

}  // namespace dvfsim::plan
