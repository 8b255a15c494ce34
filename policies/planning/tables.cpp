#include "policies/planning/tables.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

ModelRow model_row(const Grid& g, const LatencyModel& lat, const PowerModel& pow,
                   const KernelCost& k) {
  ModelRow m;
  m.duration_ns.resize(g.pairs.size());
  m.power_w.resize(g.pairs.size());
  const RooflineForm* lf = lat.inline_form();
  const CmosForm* pf = pow.inline_form();
  for (std::size_t p = 0; p < g.pairs.size(); ++p) {
    const Clocks& c = g.pairs[p];
    // Through the models' inline forms when they have them: each pair's
    // terms looked up once instead of by every call.
    const KernelAtClocks r =
        lf && pf ? kernel_at(*lf, lf->at(c), *pf, pf->at(c), k) : kernel_at(lat, pow, k, c);
    m.duration_ns[p] = r.duration_ns;
    m.power_w[p] = r.power_w;
  }
  return m;
}

void table_row(const Grid& g, const std::vector<double>& idle, const ItemSpec& it,
               const ModelRow& m, const TableOptions& opt, double* trow, double* erow) {
  for (std::size_t c = 0; c + 1 < g.mem_begin.size(); ++c) {
    const auto b = g.mem_begin[c], e = g.mem_begin[c + 1];
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
      const double tm = m.duration_ns[p], pw = m.power_w[p];
      if (opt.cap_w > 0 && pw > opt.cap_w && p > b) {
        // The firmware holds the core at the highest clock that fits.
        capped = true;
        trow[p] = trow[last_fit];
        erow[p] = erow[last_fit];
        continue;
      }
      const double t = tm * it.time_scale;
      const double span = std::max(t, it.floor_ns);  // the kernel and the host wait it absorbs
      trow[p] = span;
      erow[p] = (pw * t + idle[p] * (it.gap_ns + span - t)) * 1e-9;
      last_fit = p;
    }
  }
}

namespace {

std::vector<double> idle_row(const Grid& g, const PowerModel& pow) {
  std::vector<double> idle(g.pairs.size());
  for (std::size_t p = 0; p < g.pairs.size(); ++p) idle[p] = idle_power_w(pow, g.pairs[p]);
  return idle;
}

Tables empty_tables(const Grid& g, std::size_t items) {
  Tables tb;
  tb.grid = g;
  tb.items = items;
  tb.pairs = g.pairs.size();
  tb.time_ns.assign(tb.items * tb.pairs, 0.0);
  tb.energy_j.assign(tb.items * tb.pairs, 0.0);
  tb.count.resize(tb.items);
  return tb;
}

}  // namespace

Tables build_tables(const Device& d, const LatencyModel& lat, const PowerModel& pow,
                    const std::vector<ItemSpec>& items, const TableOptions& opt) {
  Tables tb = empty_tables(make_grid(d), items.size());
  const std::vector<double> idle = idle_row(tb.grid, pow);
  for (std::size_t i = 0; i < tb.items; ++i) {
    tb.count[i] = items[i].count;
    table_row(tb.grid, idle, items[i], model_row(tb.grid, lat, pow, items[i].cost), opt,
              &tb.time_ns[i * tb.pairs], &tb.energy_j[i * tb.pairs]);
  }
  return tb;
}

TableCache::TableCache(const Device& d, const LatencyModel& lat, const PowerModel& pow,
                       const TableOptions& opt)
    : lat_(lat), pow_(pow), opt_(opt), grid_(make_grid(d)), idle_(idle_row(grid_, pow)) {}

template <std::size_t N>
std::size_t TableCache::KeyHash::operator()(const std::array<double, N>& k) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const double x : k) {
    std::uint64_t b;
    const double v = x + 0.0;  // -0 as 0 (they compare equal)
    std::memcpy(&b, &v, sizeof b);
    h ^= b + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return static_cast<std::size_t>(h);
}

TableCache::Row TableCache::row(const ItemSpec& it) {
  const KernelCost& k = it.cost;
  // Every field of the cost (sm_share and drain_ns: the busy power term).
  const std::array<double, 9> mkey{k.fixed_ns, k.compute_ns_mhz,     k.memory_ns_mhz,
                                   k.flops,    k.dram_bytes,         k.instructions,
                                   k.sm_share, k.tensor ? 1.0 : 0.0, k.drain_ns};
  auto [mi, mfresh] = models_index_.try_emplace(mkey, models_.size());
  if (mfresh) models_.push_back(model_row(grid_, lat_, pow_, k));
  // Exact in a double: the model index and the cap are integers far below 2^53.
  const std::array<double, 5> rkey{static_cast<double>(mi->second), it.time_scale, it.gap_ns,
                                   static_cast<double>(it.max_core_mhz), it.floor_ns};
  auto [ri, rfresh] = rows_index_.try_emplace(rkey, rows_t_.size());
  const std::size_t slot = ri->second;
  if (rfresh) {
    // Not zeroed first: table_row writes every pair.
    rows_t_.push_back(std::make_unique_for_overwrite<double[]>(grid_.pairs.size()));
    rows_e_.push_back(std::make_unique_for_overwrite<double[]>(grid_.pairs.size()));
    table_row(grid_, idle_, it, models_[mi->second], opt_, rows_t_.back().get(),
              rows_e_.back().get());
  }
  return {rows_t_[slot].get(), rows_e_[slot].get(), slot};
}

Tables TableCache::tables(const std::vector<ItemSpec>& items, std::vector<Row>* rows) {
  Tables tb = empty_tables(grid_, items.size());
  if (rows) rows->clear();
  for (std::size_t i = 0; i < tb.items; ++i) {
    tb.count[i] = items[i].count;
    const Row r = row(items[i]);
    if (rows) rows->push_back(r);
    std::copy(r.time_ns, r.time_ns + tb.pairs, &tb.time_ns[i * tb.pairs]);
    std::copy(r.energy_j, r.energy_j + tb.pairs, &tb.energy_j[i * tb.pairs]);
  }
  return tb;
}

Tables TableCache::view(const std::vector<ItemSpec>& items, std::vector<Row>* rows) {
  Tables tb;
  tb.grid = grid_;
  tb.items = items.size();
  tb.pairs = grid_.pairs.size();
  tb.count.resize(tb.items);
  tb.time_rows.resize(tb.items);
  tb.energy_rows.resize(tb.items);
  if (rows) rows->clear();
  for (std::size_t i = 0; i < tb.items; ++i) {
    tb.count[i] = items[i].count;
    const Row r = row(items[i]);
    if (rows) rows->push_back(r);
    tb.time_rows[i] = r.time_ns;
    tb.energy_rows[i] = r.energy_j;
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
  using Key = std::tuple<double, double, double, double, double, double, bool, double, double,
                         double, long long, std::int32_t, long long>;
  std::map<Key, std::uint32_t> index;
  Grouping g;
  g.item_of.reserve(kernels.size());
  for (const auto& k : kernels) {
    const Key key{k.cost.fixed_ns,
                  k.cost.compute_ns_mhz,
                  k.cost.memory_ns_mhz,
                  k.cost.flops,
                  k.cost.dram_bytes,
                  k.cost.instructions,
                  k.cost.tensor,
                  k.cost.sm_share,
                  k.cost.drain_ns,
                  k.time_scale,
                  std::llround(k.gap_ns * 10.0),
                  k.max_core_mhz,
                  std::llround(k.floor_ns * 10.0)};
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
