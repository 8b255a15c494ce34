#include "policies/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <tuple>

#include "sim/engine.h"
#include "sim/error.h"
#include "sim/model_registry.h"
#include "sim/result.h"

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

// ------------------------------------------------------------------ firmware

GpuModel gpu_model(const PolicyContext& ctx) {
  return GpuModel{&ctx.device(), &ctx.latency(), &ctx.power(), ctx.governor()};
}

Emulation emulate(const GpuModel& m, const std::vector<ItemSpec>& kernels,
                  const std::vector<Clocks>& pairs, const EmulationStart& start) {
  Emulation em;
  const std::size_t n = kernels.size();
  em.cap_mhz.resize(n);
  em.time_of_step.resize(n);
  if (n == 0) return em;
  const Device& d = *m.device;
  // The engine's GPU with switches that land at once, each memory switch
  // charged the stall the engine expects.
  TimelineConfig cfg;
  cfg.memory_stall_ns = static_cast<std::int64_t>(
      std::llround(start.stall_ns >= 0 ? start.stall_ns : d.memory_switch_stall_us * 1e3));
  cfg.stall_within_switch = false;
  cfg.record_switches = false;
  GpuTimeline tl(m, cfg);
  if (start.cap_mhz > 0) {
    tl.set_cap(start.cap_mhz);
  } else {
    // The engine's warm-up: the steady cap for the whole run at the first clocks.
    const Clocks& w = start.warm_pair.core_mhz > 0 ? start.warm_pair : pairs[0];
    tl.set_clocks_now(w.core_mhz, w.memory_mhz);
    std::vector<KernelCost> costs(n);
    std::vector<double> gaps(n);
    for (std::size_t i = 0; i < n; ++i) {
      costs[i] = kernels[i].cost;
      gaps[i] = kernels[i].gap_ns;
    }
    tl.warm_firmware(costs, gaps);
  }
  const Clocks& from = start.from.memory_mhz != 0 ? start.from : pairs[0];
  tl.set_clocks_now(from.core_mhz, from.memory_mhz);
  tl.start(0, start.first_tick_ns >= 0
                  ? static_cast<std::int64_t>(std::llround(start.first_tick_ns))
                  : -1);
  FinishedKernel done;
  for (std::size_t i = 0; i < n; ++i) {
    const Clocks& pair = pairs[i];
    if (!(tl.wanted() == pair)) tl.request(pair.core_mhz, pair.memory_mhz);
    tl.fire_due_events();  // lands at once; a memory switch starts its stall
    if (tl.stalled()) tl.advance(tl.stall_end_ns(), &done);
    em.cap_mhz[i] = tl.cap_mhz();
    const std::int64_t begin = tl.now();
    tl.begin_kernel(kernels[i].cost, kernels[i].time_scale, static_cast<std::int32_t>(i));
    while (!tl.advance(GpuTimeline::kNever, &done)) {
    }
    em.time_of_step[i] = static_cast<double>(tl.now() - begin);
    if (i + 1 < n)
      tl.advance(tl.now() + static_cast<std::int64_t>(std::llround(kernels[i].gap_ns)), &done);
  }
  em.time_ns = static_cast<double>(tl.now());
  em.energy_j = tl.energy_j();
  em.memory_switches = tl.memory_switches();
  return em;
}

// ------------------------------------------------------------------ hulls

namespace {

struct Pt {
  double t, e;
  std::int32_t p;
};

bool before(const Pt& a, const Pt& b) {
  return a.t < b.t || (a.t == b.t && a.e < b.e);
}

// Lower-left convex chain of points sorted by (t, e).
void chain(const std::vector<Pt>& in, std::vector<Pt>& out) {
  out.clear();
  for (const Pt& pt : in) {
    if (!out.empty() && pt.e >= out.back().e) continue;  // dominated
    while (!out.empty() && out.back().t >= pt.t) out.pop_back();
    while (out.size() >= 2) {
      const Pt& a = out[out.size() - 2];
      const Pt& b = out.back();
      const double cross = (b.t - a.t) * (pt.e - a.e) - (b.e - a.e) * (pt.t - a.t);
      if (cross > 0) break;
      out.pop_back();
    }
    out.push_back(pt);
  }
}

void insertion_sort(std::vector<Pt>& v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    Pt x = v[i];
    std::size_t j = i;
    while (j > 0 && before(x, v[j - 1])) {
      v[j] = v[j - 1];
      --j;
    }
    v[j] = x;
  }
}

}  // namespace

Hulls lower_hulls(const Tables& tb, const std::vector<char>* allowed) {
  Hulls h;
  h.begin.reserve(tb.items + 1);
  h.begin.push_back(0);
  std::vector<Pt> col, colh, all, out;
  const auto& mb = tb.grid.mem_begin;
  for (std::size_t i = 0; i < tb.items; ++i) {
    all.clear();
    for (std::size_t m = 0; m + 1 < mb.size(); ++m) {
      col.clear();
      // Time does not increase with the core clock: walk the column downwards
      // for a nearly sorted list.
      for (auto p = mb[m + 1]; p-- > mb[m];) {
        if (allowed && !(*allowed)[p]) continue;
        col.push_back({tb.t(i, p), tb.e(i, p), static_cast<std::int32_t>(p)});
      }
      insertion_sort(col);
      chain(col, colh);
      all.insert(all.end(), colh.begin(), colh.end());
    }
    std::sort(all.begin(), all.end(), [](const Pt& a, const Pt& b) {
      return before(a, b) || (!before(b, a) && a.p < b.p);
    });
    chain(all, out);
    for (const Pt& pt : out) {
      h.pair.push_back(pt.p);
      h.t.push_back(pt.t);
      h.e.push_back(pt.e);
    }
    h.begin.push_back(static_cast<std::uint32_t>(h.pair.size()));
  }
  if (allowed) h.allowed = *allowed;
  return h;
}

// ------------------------------------------------------------------ solver

std::int32_t Assignment::pair_of(std::size_t item, std::uint32_t r) const {
  const auto& v = items[item];
  for (const Choice& c : v) {
    if (r < c.count) return c.pair;
    r -= c.count;
  }
  return v.empty() ? -1 : v.back().pair;
}

namespace {

// Vertex of item i minimising e + lambda t (ties: the faster one).
inline std::uint32_t pick(const Hulls& h, std::size_t i, double lambda) {
  std::uint32_t j = h.begin[i];
  const std::uint32_t end = h.begin[i + 1];
  while (j + 1 < end && (h.e[j + 1] - h.e[j]) + lambda * (h.t[j + 1] - h.t[j]) < 0) ++j;
  return j;
}

struct Eval {
  double time = 0, energy = 0, lagr = 0;
};

Eval evaluate(const Tables& tb, const Hulls& h, double lambda, std::vector<std::uint32_t>* picks) {
  Eval ev;
  for (std::size_t i = 0; i < tb.items; ++i) {
    const std::uint32_t j = pick(h, i, lambda);
    const double n = tb.count[i];
    ev.time += n * h.t[j];
    ev.energy += n * h.e[j];
    if (picks) (*picks)[i] = j;
  }
  ev.lagr = ev.energy + lambda * ev.time;
  return ev;
}

// Per item: (hull vertex, copies), the copies still movable are in the last entry.
struct VState {
  std::uint32_t vertex;
  std::uint32_t count;
};

Solution finish(const Tables& tb, const Hulls& h, const std::vector<std::vector<VState>>& st) {
  Solution s;
  s.assignment.items.resize(tb.items);
  for (std::size_t i = 0; i < tb.items; ++i)
    for (const VState& v : st[i]) {
      if (v.count == 0) continue;
      s.assignment.items[i].push_back({h.pair[v.vertex], v.count});
      s.time_ns += v.count * h.t[v.vertex];
      s.energy_j += v.count * h.e[v.vertex];
    }
  return s;
}

void totals(const Tables& tb, Solution& s) {
  s.time_ns = s.energy_j = 0;
  for (std::size_t i = 0; i < tb.items; ++i)
    for (const Choice& c : s.assignment.items[i]) {
      s.time_ns += c.count * tb.t(i, static_cast<std::size_t>(c.pair));
      s.energy_j += c.count * tb.e(i, static_cast<std::size_t>(c.pair));
    }
}

}  // namespace

Solution solve_budget(const Tables& tb, const Hulls& h, double budget) {
  std::vector<std::uint32_t> picks(tb.items);
  // lambda = 0: every item at its least energy.
  Eval lo_ev = evaluate(tb, h, 0.0, &picks);
  auto from_picks = [&](const std::vector<std::uint32_t>& pk) {
    std::vector<std::vector<VState>> st(tb.items);
    for (std::size_t i = 0; i < tb.items; ++i) st[i].push_back({pk[i], tb.count[i]});
    return st;
  };
  if (!(lo_ev.time > budget)) {
    Solution s = finish(tb, h, from_picks(picks));
    s.dual_bound_j = s.energy_j;
    return s;
  }
  // lambda_hi: steep enough that every item takes its fastest vertex.
  double hi = 0;
  for (std::size_t i = 0; i < tb.items; ++i)
    for (auto j = h.begin[i]; j + 1 < h.begin[i + 1]; ++j)
      hi = std::max(hi, -(h.e[j + 1] - h.e[j]) / (h.t[j + 1] - h.t[j]));
  hi = hi * 1.0001 + 1e-300;
  Eval hi_ev = evaluate(tb, h, hi, &picks);
  Solution best;
  if (hi_ev.time > budget) {
    best = finish(tb, h, from_picks(picks));
    best.feasible = false;
    best.lambda = hi;
    best.dual_bound_j = best.energy_j;
    return best;
  }
  double dual = std::max(lo_ev.lagr - 0.0 * budget, hi_ev.lagr - hi * budget);
  double lo = 0.0;
  int iters = 0;
  for (; iters < 100 && hi - lo > 1e-13 * hi; ++iters) {
    const double mid = 0.5 * (lo + hi);
    const Eval ev = evaluate(tb, h, mid, nullptr);
    dual = std::max(dual, ev.lagr - mid * budget);
    if (ev.time <= budget)
      hi = mid;
    else
      lo = mid;
  }
  evaluate(tb, h, hi, &picks);
  auto st = from_picks(picks);
  double left = budget;
  for (std::size_t i = 0; i < tb.items; ++i) left -= tb.count[i] * h.t[picks[i]];

  // Greedy fill along hull edges, most joules saved per ns first.
  struct Edge {
    double rate;
    std::uint32_t item, vertex;
  };
  std::vector<Edge> edges;
  for (std::size_t i = 0; i < tb.items; ++i)
    for (auto j = picks[i]; j + 1 < h.begin[i + 1]; ++j)
      edges.push_back(
          {-(h.e[j + 1] - h.e[j]) / (h.t[j + 1] - h.t[j]), static_cast<std::uint32_t>(i), j});
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    if (a.rate != b.rate) return a.rate > b.rate;
    if (a.item != b.item) return a.item < b.item;
    return a.vertex < b.vertex;
  });
  for (const Edge& ed : edges) {
    auto& v = st[ed.item];
    if (v.back().vertex != ed.vertex) continue;
    const double dt = h.t[ed.vertex + 1] - h.t[ed.vertex];
    if (dt > left) continue;
    const auto k =
        static_cast<std::uint32_t>(std::min<double>(v.back().count, std::floor(left / dt)));
    if (k == 0) continue;
    left -= k * dt;
    v.back().count -= k;
    if (v.back().count == 0) v.pop_back();
    v.push_back({ed.vertex + 1, k});
  }
  best = finish(tb, h, st);
  // One pass over every allowed pair with what is left.
  for (std::size_t i = 0; i < tb.items && left > 0; ++i) {
    auto& choices = best.assignment.items[i];
    const std::size_t nc = choices.size();
    for (std::size_t c = 0; c < nc && left > 0; ++c) {
      const auto cur = static_cast<std::size_t>(choices[c].pair);
      const double t0 = tb.t(i, cur), e0 = tb.e(i, cur);
      std::int32_t bestp = -1;
      double save = 0;
      for (std::size_t p = 0; p < tb.pairs; ++p) {
        if (!h.allowed.empty() && !h.allowed[p]) continue;
        const double dt = tb.t(i, p) - t0, de = e0 - tb.e(i, p);
        if (de > save && dt <= left) {
          save = de;
          bestp = static_cast<std::int32_t>(p);
        }
      }
      if (bestp < 0) continue;
      const double dt = tb.t(i, static_cast<std::size_t>(bestp)) - t0;
      auto k = choices[c].count;
      if (dt > 0) k = static_cast<std::uint32_t>(std::min<double>(k, std::floor(left / dt)));
      if (k == 0) continue;
      left -= k * dt;
      choices[c].count -= k;
      choices.push_back({bestp, k});
    }
    std::erase_if(choices, [](const Choice& c) { return c.count == 0; });
  }
  totals(tb, best);
  best.lambda = hi;
  best.iterations = iters;
  best.dual_bound_j = std::min(dual, best.energy_j);
  return best;
}

Solution at_pair(const Tables& tb, std::int32_t pair) {
  Solution s;
  s.assignment.items.resize(tb.items);
  for (std::size_t i = 0; i < tb.items; ++i) s.assignment.items[i].push_back({pair, tb.count[i]});
  totals(tb, s);
  s.dual_bound_j = s.energy_j;
  return s;
}

Solution solve_objective(const Tables& tb, const Hulls& h, const Objective& o, double reference_ns,
                         double time_offset_ns, double energy_offset_j) {
  if (o.kind == ObjectiveKind::waste || o.kind == ObjectiveKind::energy)
    return solve_budget(tb, h, o.budget(reference_ns) - time_offset_ns);
  // edp / ed2p: walk the aggregate hull from the fastest assignment, one hull
  // edge at a time in order of joules saved per ns, copy by copy.
  struct Edge {
    double rate;
    std::uint32_t item, vertex;
  };
  std::vector<Edge> edges;
  double T = time_offset_ns, E = energy_offset_j;
  for (std::size_t i = 0; i < tb.items; ++i) {
    T += tb.count[i] * h.t[h.begin[i]];
    E += tb.count[i] * h.e[h.begin[i]];
    for (auto j = h.begin[i]; j + 1 < h.begin[i + 1]; ++j)
      edges.push_back(
          {-(h.e[j + 1] - h.e[j]) / (h.t[j + 1] - h.t[j]), static_cast<std::uint32_t>(i), j});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    if (a.rate != b.rate) return a.rate > b.rate;
    if (a.item != b.item) return a.item < b.item;
    return a.vertex < b.vertex;
  });
  double best = o.score(E, T);
  std::size_t best_edge = 0;  // edges fully applied
  std::uint32_t best_extra = 0;
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const Edge& ed = edges[k];
    const double dt = h.t[ed.vertex + 1] - h.t[ed.vertex];
    const double de = h.e[ed.vertex + 1] - h.e[ed.vertex];
    const std::uint32_t n = tb.count[ed.item];
    for (std::uint32_t x = 1; x <= n; ++x) {
      const double s = o.score(E + x * de, T + x * dt);
      if (s < best) {
        best = s;
        best_edge = x == n ? k + 1 : k;
        best_extra = x == n ? 0 : x;
      }
    }
    E += n * de;
    T += n * dt;
  }
  std::vector<std::vector<VState>> st(tb.items);
  for (std::size_t i = 0; i < tb.items; ++i) st[i].push_back({h.begin[i], tb.count[i]});
  for (std::size_t k = 0; k < best_edge; ++k) st[edges[k].item].back().vertex = edges[k].vertex + 1;
  if (best_extra > 0) {
    auto& v = st[edges[best_edge].item];
    v.back().count -= best_extra;
    v.push_back({edges[best_edge].vertex + 1, best_extra});
  }
  Solution s = finish(tb, h, st);
  s.dual_bound_j = s.energy_j;
  return s;
}

// ------------------------------------------------------------------ plans

std::vector<ParamSpec> memory_mode_params() {
  return {
      {"memory", ParamSpec::Kind::defaulted, "auto",
       "auto (the better of per-kernel and fixed, stalls charged), per-kernel (memory clock per "
       "kernel, switch stalls ignored by the solver) or fixed (one memory clock for the run)"}};
}

MemoryMode parse_memory_mode(const Params& p, const std::string& policy) {
  const std::string v = p.str("memory");
  if (v == "auto") return MemoryMode::automatic;
  if (v == "per-kernel") return MemoryMode::per_kernel;
  if (v == "fixed") return MemoryMode::fixed;
  throw InputError(fmt::format(
      "policy {}: parameter 'memory': '{}' is not one of auto, per-kernel, fixed", policy, v));
}

std::vector<ParamSpec> aggregation_params() {
  return {{"aggregation", ParamSpec::Kind::defaulted, "global",
           "global (one time budget for the whole run: multiple-choice knapsack) or local (every "
           "step within its own reference time x (1 + max_slowdown/100))"}};
}

Aggregation parse_aggregation(const Params& p, const std::string& policy) {
  const std::string v = p.str("aggregation");
  if (v == "global") return Aggregation::global;
  if (v == "local") return Aggregation::local;
  throw InputError(fmt::format(
      "policy {}: parameter 'aggregation': '{}' is not one of global, local", policy, v));
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

namespace {

double local_score(const Objective& o, double e, double t) {
  switch (o.kind) {
    case ObjectiveKind::edp:
      return e * t;
    case ObjectiveKind::ed2p:
      return e * t * t;
    default:
      return e;
  }
}

}  // namespace

Plan plan_steps(const PlanInput& in) {
  const auto started = std::chrono::steady_clock::now();
  const Tables& tb = *in.tables;
  const Device& d = *in.device;
  const Grid& g = tb.grid;
  const std::size_t steps = in.sequence.size();
  int defp = g.find(d.default_core_mhz, d.default_memory_mhz);
  if (defp < 0) defp = static_cast<int>(g.pairs.size()) - 1;
  const auto def = static_cast<std::size_t>(defp);
  double ref = in.reference_ns;
  if (ref < 0) {
    ref = in.time_offset_ns;
    for (auto i : in.sequence) ref += tb.t(i, def);
  }
  const double budget_total = in.objective.budget(ref);
  const StallCharge stall{
      in.memory_stall_ns >= 0 ? in.memory_stall_ns : d.memory_switch_stall_us * 1e3,
      idle_power_w(*in.power, g.pairs[def])};

  struct Mode {
    std::string name;
    std::vector<char> mask;  // empty: every pair
  };
  std::vector<Mode> modes;
  std::size_t mems = 0;
  for (std::size_t m = 0; m + 1 < g.mem_begin.size(); ++m)
    mems += g.mem_begin[m + 1] > g.mem_begin[m];
  if (in.memory != MemoryMode::fixed || mems <= 1) modes.push_back({"per-kernel memory", {}});
  if (in.memory != MemoryMode::per_kernel && mems > 1)
    for (std::size_t m = 0; m + 1 < g.mem_begin.size(); ++m) {
      if (g.mem_begin[m + 1] == g.mem_begin[m]) continue;
      Mode md{fmt::format("memory fixed at {} MHz", g.pairs[g.mem_begin[m]].memory_mhz),
              std::vector<char>(tb.pairs, 0)};
      for (auto p = g.mem_begin[m]; p < g.mem_begin[m + 1]; ++p) md.mask[p] = 1;
      modes.push_back(std::move(md));
    }

  Plan best;
  bool have = false, best_feasible = false;
  double best_score = 0;
  for (const Mode& mode : modes) {
    const std::vector<char>* mask = mode.mask.empty() ? nullptr : &mode.mask;
    const Hulls h = in.aggregation == Aggregation::global ? lower_hulls(tb, mask) : Hulls{};
    double reserve = 0;
    Plan cand;
    Solution sol;
    for (int round = 0; round < kStallReserveRounds; ++round) {
      std::vector<std::int32_t> pairs(steps, defp);
      std::vector<double> times(steps, 0.0);
      double kt = 0, ke = 0;
      if (in.aggregation == Aggregation::global) {
        sol = solve_objective(tb, h, in.objective, ref, in.time_offset_ns + reserve, 0.0);
        std::vector<std::uint32_t> seen(tb.items, 0);
        for (std::size_t s = 0; s < steps; ++s) {
          const auto i = in.sequence[s];
          pairs[s] = sol.assignment.pair_of(i, seen[i]++);
        }
      } else {
        for (std::size_t s = 0; s < steps; ++s) {
          const auto i = in.sequence[s];
          const double r = s < in.step_reference_ns.size() ? in.step_reference_ns[s] : tb.t(i, def);
          const double bound = in.objective.time_bounded() ? in.objective.budget(r) : HUGE_VAL;
          std::int32_t bp = -1, fastest = -1;
          double bs = 0, bt = 0, ft = 0;
          for (std::size_t p = 0; p < tb.pairs; ++p) {
            if (mask && !(*mask)[p]) continue;
            const double t = tb.t(i, p), e = tb.e(i, p);
            if (fastest < 0 || t < ft) {
              fastest = static_cast<std::int32_t>(p);
              ft = t;
            }
            if (t > bound * (1 + 1e-12)) continue;
            const double sc = local_score(in.objective, e, t);
            if (bp < 0 || sc < bs || (sc == bs && t < bt)) {
              bp = static_cast<std::int32_t>(p);
              bs = sc;
              bt = t;
            }
          }
          pairs[s] = bp >= 0 ? bp : fastest;
        }
      }
      for (std::size_t s = 0; s < steps; ++s) {
        times[s] = tb.t(in.sequence[s], static_cast<std::size_t>(pairs[s]));
        kt += times[s];
        ke += tb.e(in.sequence[s], static_cast<std::size_t>(pairs[s]));
      }
      if (in.aggregation == Aggregation::local) {
        sol = Solution{};
        sol.time_ns = kt;
        sol.energy_j = sol.dual_bound_j = ke;
      }
      cand.pair_of_step = std::move(pairs);
      cand.time_of_step = std::move(times);
      cand.memory_switches =
          mode.mask.empty() ? memory_changes(g, cand.pair_of_step, in.cyclic) : 0;
      const double st = stall.time_ns(cand.memory_switches);
      cand.time_ns = in.time_offset_ns + kt + st;
      cand.energy_j = ke + stall.energy_j(cand.memory_switches);
      if (in.aggregation != Aggregation::global || !in.objective.time_bounded() ||
          cand.time_ns <= budget_total || st <= reserve)
        break;
      reserve = st;  // solve again with the stalls taken out of the budget
    }
    cand.budget_ns = budget_total;
    cand.mode = mode.name;
    const bool feasible = !(cand.time_ns > budget_total * (1 + 1e-12));
    const double score = in.objective.score(cand.energy_j, cand.time_ns);
    const bool better = !have || (feasible && !best_feasible) ||
                        (feasible == best_feasible &&
                         (feasible ? score < best_score : cand.time_ns < best.time_ns));
    if (!better) continue;
    have = true;
    best_feasible = feasible;
    best_score = score;
    cand.report.policy = in.policy;
    cand.report.what = fmt::format("{} ({}, {} {}, {} memory switches)", in.what,
                                   in.aggregation == Aggregation::global ? "global" : "local",
                                   to_string(in.objective.kind), mode.name, cand.memory_switches);
    cand.report.items = tb.items;
    cand.report.copies = steps;
    cand.report.pairs =
        mask ? static_cast<std::size_t>(std::count(mask->begin(), mask->end(), 1)) : tb.pairs;
    cand.report.hull_vertices = h.pair.size();
    cand.report.budget_ns = budget_total;
    cand.report.time_ns = cand.time_ns;
    cand.report.energy_j = sol.energy_j;
    cand.report.dual_bound_j = sol.dual_bound_j;
    cand.report.gap_j = sol.gap_j();
    cand.report.gap_pct = sol.gap_pct();
    cand.report.feasible = feasible;
    best = std::move(cand);
  }
  best.report.solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (in.publish) publish(best.report);
  return best;
}

KernelPlan plan_kernels(const KernelPlanInput& in) {
  const auto started = std::chrono::steady_clock::now();
  const Device& d = *in.gpu.device;
  const std::size_t n = in.kernels.size();
  const bool grouped = !in.group_of_kernel.empty();
  KernelPlan best;
  const Clocks def = make_clocks(d, d.default_core_mhz, d.default_memory_mhz);
  const std::vector<Clocks> defaults(n, def);
  const Emulation em0 = emulate(in.gpu, in.kernels, defaults, in.start);
  const Objective& obj = in.plan.objective;
  best.reference_ns = em0.time_ns;
  best.reference_energy_j = em0.energy_j;
  best.budget_ns = obj.budget(em0.time_ns);
  best.pairs = defaults;
  best.group_pairs.assign(in.groups, def);
  best.emulation = em0;
  double best_score = obj.score(em0.energy_j, em0.time_ns);
  bool have_plan = false;

  double gaps = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) gaps += in.kernels[i].gap_ns;
  std::vector<double> step_ref;
  if (grouped) {
    step_ref.assign(in.groups, 0.0);
    for (std::size_t i = 0; i < n; ++i) step_ref[in.group_of_kernel[i]] += em0.time_of_step[i];
  } else {
    step_ref = em0.time_of_step;
  }
  std::vector<std::int32_t> caps = em0.cap_mhz;
  double tighten = in.extra_tighten_ns;
  std::vector<ItemSpec> items = in.kernels;
  for (int round = 0; round < std::max(1, in.rounds); ++round) {
    for (std::size_t i = 0; i < n; ++i) items[i].max_core_mhz = caps[i];
    Tables tb;
    PlanInput p = in.plan;
    p.memory_stall_ns = in.start.stall_ns;
    p.device = in.gpu.device;
    p.power = in.gpu.power;
    if (grouped) {
      const Tables per_kernel =
          build_tables(d, *in.gpu.latency, *in.gpu.power, items, default_table_options(d));
      tb = group_tables(per_kernel, in.group_of_kernel, in.groups);
      p.sequence.clear();
      for (std::uint32_t g = 0; g < in.groups; ++g) p.sequence.push_back(g);
    } else {
      const Grouping g = group_identical(items);
      tb = build_tables(d, *in.gpu.latency, *in.gpu.power, g.items, default_table_options(d));
      p.sequence = g.item_of;
    }
    p.tables = &tb;
    p.reference_ns = em0.time_ns;
    p.time_offset_ns = gaps + tighten;
    p.step_reference_ns = step_ref;
    if (tighten > 0 && best.budget_ns > 0 && std::isfinite(best.budget_ns)) {
      // Local shares shrink in proportion to the tightening.
      const double f = std::max(0.0, 1.0 - tighten / best.budget_ns);
      for (auto& r : p.step_reference_ns) r *= f;
    }
    p.publish = false;
    const Plan pl = plan_steps(p);
    std::vector<Clocks> pairs(n);
    for (std::size_t i = 0; i < n; ++i)
      pairs[i] = tb.grid.pairs[static_cast<std::size_t>(
          pl.pair_of_step[grouped ? in.group_of_kernel[i] : i])];
    Emulation em = emulate(in.gpu, in.kernels, pairs, in.start);
    const bool feasible = !(em.time_ns > best.budget_ns);
    const double score = obj.score(em.energy_j, em.time_ns);
    if (feasible && score < best_score) {
      best_score = score;
      best.pairs = pairs;
      if (grouped) {
        best.group_pairs.clear();
        for (std::size_t g = 0; g < in.groups; ++g)
          best.group_pairs.push_back(tb.grid.pairs[static_cast<std::size_t>(pl.pair_of_step[g])]);
      }
      best.emulation = em;
      best.report = pl.report;
      have_plan = true;
    } else if (!have_plan) {
      best.report = pl.report;
    }
    if (feasible) {
      if (em.cap_mhz == caps) break;  // fixed point: the next round would repeat this one
      caps = em.cap_mhz;
    } else {
      tighten += tightening_ns(em.time_ns - best.budget_ns, best.budget_ns);
      for (std::size_t i = 0; i < n; ++i) caps[i] = std::min(caps[i], em.cap_mhz[i]);
    }
  }
  SolveReport& r = best.report;
  r.policy = in.plan.policy;
  r.budget_ns = best.budget_ns;
  r.time_ns = best.emulation.time_ns;
  r.feasible = have_plan || !obj.time_bounded();
  r.what += fmt::format("; emulated {:.3f} ms, {:.4f} J vs default clocks {:.3f} ms, {:.4f} J{}",
                        best.emulation.time_ns * 1e-6, best.emulation.energy_j, em0.time_ns * 1e-6,
                        em0.energy_j, have_plan ? "" : " (kept the default clocks)");
  r.solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (in.plan.publish) publish(r);
  return best;
}

KernelPlanInput whole_run_input(const PolicyContext& ctx) {
  const Workload& w = ctx.workload();
  const std::size_t n = w.kernels.size();
  const RunResult* base = ctx.baseline();
  if (base && base->kernels.size() != n) base = nullptr;
  KernelPlanInput in;
  in.gpu = gpu_model(ctx);
  in.kernels.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    in.kernels[k].cost = ctx.costs()[k];
    double gap = 0;
    if (k + 1 < n) {
      if (base) {
        gap = static_cast<double>(base->kernels[k + 1].start_ns - base->kernels[k].start_ns -
                                  base->kernels[k].duration_ns);
      } else {
        const Kernel& a = w.kernels[k];
        gap = static_cast<double>(w.kernels[k + 1].traced_start_ns - a.traced_start_ns -
                                  a.work.duration_ns);
      }
    }
    in.kernels[k].gap_ns = std::max(0.0, gap);
  }
  const Device& d = ctx.device();
  in.start.cap_mhz = 0;  // warm-up as the engine does it
  in.start.warm_pair = make_clocks(d, d.default_core_mhz, d.default_memory_mhz);
  in.start.from = in.start.warm_pair;
  in.start.stall_ns = ctx.expected_memory_stall_ns();
  in.plan.cyclic = false;
  return in;
}

namespace {

class PlanPolicy final : public Policy {
 public:
  explicit PlanPolicy(const std::vector<Clocks>* pairs) : pairs_(pairs) {}
  void on_kernel_start(PolicyContext& ctx, std::uint32_t k) override {
    if (!pairs_) return;
    const Clocks& c = (*pairs_)[k];
    if (!(ctx.wanted() == c)) ctx.request(c.core_mhz, c.memory_mhz);
  }

 private:
  const std::vector<Clocks>* pairs_;
};

}  // namespace

RunResult replay_plan(const PolicyContext& ctx, const std::vector<Clocks>* pairs) {
  EngineInputs in;
  in.workload = &ctx.workload();
  in.device = &ctx.device();
  in.latency = &ctx.latency();
  in.power = &ctx.power();
  in.governor = ctx.governor();
  in.costs = &ctx.costs();
  EngineConfig cfg;
  cfg.record_timeline = false;
  cfg.power_cap = in.governor != nullptr;
  cfg.switch_latency_override_us = ctx.expected_core_switch_ns() * 1e-3;
  PlanPolicy p(pairs);
  return replay(in, p, cfg);
}

// ------------------------------------------------------------------ reports

namespace {
thread_local std::vector<SolveReport> t_reports;
thread_local bool t_quiet = false;
}  // namespace

std::string SolveReport::line() const {
  return fmt::format(
      "{}: {}: {} items ({} kernels) x {} pairs, {} hull vertices; time {:.3f} ms of budget {}; "
      "energy {:.4f} J, Lagrangian bound {:.4f} J, gap {:.4g} J ({:.4f} %){}; {:.1f} ms",
      policy, what, items, copies, pairs, hull_vertices, time_ns * 1e-6,
      std::isfinite(budget_ns) ? fmt::format("{:.3f} ms", budget_ns * 1e-6) : std::string("none"),
      energy_j, dual_bound_j, gap_j, gap_pct, feasible ? "" : " [budget infeasible: fastest pairs]",
      solve_ms);
}

void publish(const SolveReport& r) {
  t_reports.push_back(r);
  if (!t_quiet) std::cerr << "dvfsim: " << r.line() << '\n';
}
const std::vector<SolveReport>& reports() {
  return t_reports;
}
void clear_reports() {
  t_reports.clear();
}
void note(const std::string& line) {
  if (!t_quiet) std::cerr << "dvfsim: " << line << '\n';
}

void quiet_reports(bool quiet) {
  t_quiet = quiet;
}

// ------------------------------------------------------------------ online

std::uint64_t launch_key(const Kernel& k) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  for (int i = 0; i < 3; ++i) mix(k.launch.grid[i]);
  for (int i = 0; i < 3; ++i) mix(k.launch.block[i]);
  mix(k.launch.registers_per_thread);
  mix(k.launch.shared_memory_bytes);
  mix(k.name_id);
  return h;
}

void SequenceLearner::on_start(PolicyContext& ctx, std::uint32_t kernel) {
  const Kernel& k = ctx.workload().kernels[kernel];
  const std::int64_t now = ctx.now_ns();
  just_learned_ = false;
  if (profiling_iteration_ < 0) {
    profiling_iteration_ = k.iteration;
    current_iteration_ = k.iteration;
    first_start_ns_ = now;
  }
  if (!learned_ && k.iteration == profiling_iteration_) {
    if (!seq_.empty()) seq_.back().gap_after_ns = static_cast<double>(now - seq_.back().end_ns);
    Observed o;
    o.name_id = k.name_id;
    o.launch_key = launch_key(k);
    o.phase = k.phase;
    o.cls = k.cls;
    o.cost = ctx.costs()[kernel];  // the kernel being launched: allowed
    o.clocks = ctx.effective();
    o.start_ns = o.end_ns = now;
    seq_.push_back(o);
    return;
  }
  if (!learned_) {
    learned_ = just_learned_ = true;
    iteration_ns_ = static_cast<double>(now - first_start_ns_);
    if (!seq_.empty()) seq_.back().gap_after_ns = static_cast<double>(now - seq_.back().end_ns);
    current_iteration_ = k.iteration;
    pos_ = -1;
  }
  if (seq_.empty()) return;
  int guess;
  if (k.iteration != current_iteration_) {
    current_iteration_ = k.iteration;
    guess = 0;
  } else {
    guess = pos_ >= 0 ? pos_ + 1 : 0;
  }
  if (pos_ < 0 && k.iteration == current_iteration_ && !just_learned_) {
    // Lost earlier in this iteration: look for the kernel anywhere ahead of the
    // last known position.
    guess = lost_from_;
  }
  const std::uint64_t key = launch_key(k);
  const int n = static_cast<int>(seq_.size());
  int found = -1;
  for (int q = guess; q < std::min(n, guess + 64); ++q)
    if (seq_[static_cast<std::size_t>(q)].launch_key == key) {
      found = q;
      break;
    }
  if (found < 0) {
    if (pos_ >= 0) lost_from_ = pos_ + 1;
    pos_ = -1;
  } else {
    pos_ = found;
  }
}

void SequenceLearner::on_end(PolicyContext& ctx, std::uint32_t kernel) {
  if (learned_ || seq_.empty()) return;
  const Kernel& k = ctx.workload().kernels[kernel];
  if (k.iteration != profiling_iteration_) return;
  Observed& o = seq_.back();
  o.end_ns = ctx.now_ns();
  const double model = ctx.latency().duration_ns(o.cost, o.clocks);
  o.scale = model > 0 ? std::clamp(o.measured_ns() / model, kMinTimeScale, kMaxTimeScale) : 1.0;
}

double SequenceLearner::busy_ns() const {
  double s = 0;
  for (const auto& o : seq_) s += o.measured_ns();
  return s;
}

std::vector<ItemSpec> items_from(const std::vector<Observed>& seq) {
  std::vector<ItemSpec> out(seq.size());
  for (std::size_t i = 0; i < seq.size(); ++i) {
    out[i].cost = seq[i].cost;
    out[i].time_scale = seq[i].scale;
    out[i].gap_ns = seq[i].gap_after_ns;
    out[i].count = 1;
  }
  return out;
}

double Switcher::lead_ns(const PolicyContext& ctx, const Clocks& from, const Clocks& to) const {
  double lead = 0;
  if (from.core_mhz != to.core_mhz) lead = std::max(lead, ctx.expected_core_switch_ns());
  if (from.memory_mhz != to.memory_mhz) lead = std::max(lead, ctx.expected_memory_switch_ns());
  return lead;
}

void Switcher::on_start(PolicyContext& ctx, int position) {
  ++ordinal_;
  running_ = true;
  start_ns_ = ctx.now_ns();
  pos_ = position;
  if (steps_.empty() || position < 0 || position >= static_cast<int>(steps_.size())) {
    pos_ = -1;
    return;
  }
  const bool early_pending = issued_ordinal_ > ordinal_;
  if (issued_ordinal_ >= 0 && issued_ordinal_ <= ordinal_) issued_ordinal_ = -1;
  const Clocks& want = steps_[static_cast<std::size_t>(pos_)].pair;
  if (!early_pending && !(ctx.wanted() == want)) ctx.request(want.core_mhz, want.memory_mhz);
  if (early_) schedule(ctx, -1);
}

void Switcher::on_end(PolicyContext& ctx) {
  running_ = false;
  if (early_ && pos_ >= 0) schedule(ctx, ctx.now_ns());
}

void Switcher::on_timer(PolicyContext& ctx) {
  if (early_ && pos_ >= 0) schedule(ctx, running_ ? -1 : ctx.now_ns());
}

void Switcher::schedule(PolicyContext& ctx, std::int64_t ended_ns) {
  if (pos_ < 0 || issued_ordinal_ > ordinal_) return;  // one early request in flight
  const auto n = static_cast<int>(steps_.size());
  const double now = static_cast<double>(ctx.now_ns());
  const Step& cur = steps_[static_cast<std::size_t>(pos_)];
  // Predicted start of the next kernel.
  double t = ended_ns >= 0
                 ? static_cast<double>(ended_ns) + cur.gap_ns
                 : std::max(now, static_cast<double>(start_ns_) + cur.duration_ns) + cur.gap_ns;
  const double horizon =
      std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) + 1.0;
  Clocks prev = cur.pair;
  for (int k = 1; k <= n; ++k) {
    const Step& s = steps_[static_cast<std::size_t>((pos_ + k) % n)];
    if (!(s.pair == prev)) {
      const double lead = lead_ns(ctx, prev, s.pair);
      // A switch that lands (almost) at once is best requested when its
      // kernel starts: an early one would land inside a late-running kernel.
      if (lead <= kImmediateSwitchNs) return;
      const double issue = t - lead;
      if (issue <= now + 0.5) {
        ctx.request(s.pair.core_mhz, s.pair.memory_mhz);
        issued_ordinal_ = ordinal_ + k;
      } else {
        ctx.set_timer(static_cast<std::int64_t>(std::llround(issue)));
      }
      return;
    }
    if (t - now > horizon) return;
    t += s.duration_ns + s.gap_ns;
  }
}

}  // namespace dvfsim::plan
