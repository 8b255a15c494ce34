#include "policies/planning/solver.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "policies/planning/kernel_plan.h"
#include "policies/planning/lagrangian.h"

namespace dvfsim::plan {

// ------------------------------------------------------------------ hulls

namespace {

struct Pt {
  double t, e;
  std::int32_t p;
};

bool before(const Pt& a, const Pt& b) {
  return a.t < b.t || (a.t == b.t && a.e < b.e);
}

bool by_t_e_pair(const Pt& a, const Pt& b) {
  return before(a, b) || (!before(b, a) && a.p < b.p);
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

// A stable sort by (t, e): insertion sort, for the nearly sorted columns,
// until it has moved more than a few elements per element (a column whose
// pairs share one time, e.g. the host wait a kernel absorbs: sorting them by
// energy reverses them), then a stable merge sort of the rest. Either way
// the order of a stable sort.
void insertion_sort(std::vector<Pt>& v) {
  std::size_t moves = 0;
  const std::size_t budget = 4 * v.size();
  for (std::size_t i = 1; i < v.size(); ++i) {
    Pt x = v[i];
    std::size_t j = i;
    while (j > 0 && before(x, v[j - 1])) {
      v[j] = v[j - 1];
      --j;
    }
    v[j] = x;
    moves += i - j;
    if (moves > budget) {
      std::stable_sort(v.begin(), v.end(), before);
      return;
    }
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

void row_hulls(const Grid& g, const double* time_ns, const double* energy_j, ModeChains& out) {
  const auto& mb = g.mem_begin;
  std::size_t columns = 0;
  for (std::size_t m = 0; m + 1 < mb.size(); ++m) columns += mb[m + 1] > mb[m];
  out.resize(1 + columns);
  // Scratch kept between calls (one row's hulls per distinct table row).
  thread_local std::vector<Pt> col, colh, all, merged;
  all.clear();
  std::size_t c = 0;
  for (std::size_t m = 0; m + 1 < mb.size(); ++m) {
    if (mb[m + 1] == mb[m]) continue;
    col.clear();
    for (auto p = mb[m + 1]; p-- > mb[m];)
      col.push_back({time_ns[p], energy_j[p], static_cast<std::int32_t>(p)});
    insertion_sort(col);
    chain(col, colh);
    // The column chains are each sorted in the merged order (by (t, e), then
    // pair): merging them is sorting their union.
    merged.clear();
    std::merge(all.begin(), all.end(), colh.begin(), colh.end(), std::back_inserter(merged),
               by_t_e_pair);
    all.swap(merged);
    // The column's chain is sorted with strictly increasing time and
    // decreasing energy: lower_hulls with its mask sorts and chains it again
    // to the same vertices.
    auto& fixed = out[1 + c++];
    fixed.resize(colh.size());
    for (std::size_t k = 0; k < colh.size(); ++k) fixed[k] = {colh[k].t, colh[k].e, colh[k].p};
  }
  chain(all, merged);
  out[0].resize(merged.size());
  for (std::size_t k = 0; k < merged.size(); ++k)
    out[0][k] = {merged[k].t, merged[k].e, merged[k].p};
}

Hulls hulls_of_mode(const Grid& g, const std::vector<const ModeChains*>& items, std::size_t mode) {
  Hulls h;
  hulls_of_mode(g, items, mode, h);
  return h;
}

void hulls_of_mode(const Grid& g, const std::vector<const ModeChains*>& items, std::size_t mode,
                   Hulls& h) {
  h.begin.resize(items.size() + 1);
  std::size_t vertices = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    h.begin[i] = static_cast<std::uint32_t>(vertices);
    vertices += (*items[i])[mode].size();
  }
  h.begin[items.size()] = static_cast<std::uint32_t>(vertices);
  h.pair.resize(vertices);
  h.t.resize(vertices);
  h.e.resize(vertices);
  h.source.resize(vertices);
  std::int32_t* pair = h.pair.data();
  double* t = h.t.data();
  double* e = h.e.data();
  const HullVertex** source = h.source.data();
  for (const ModeChains* c : items)
    for (const HullVertex& v : (*c)[mode]) {
      *pair++ = v.pair;
      *t++ = v.t;
      *e++ = v.e;
      *source++ = &v;
    }
  h.allowed.clear();
  if (mode > 0) {
    // The mode's memory clock: the (mode - 1)-th with supported pairs.
    const auto& mb = g.mem_begin;
    h.allowed.assign(g.pairs.size(), 0);
    std::size_t k = 0;
    for (std::size_t m = 0; m + 1 < mb.size(); ++m) {
      if (mb[m + 1] == mb[m]) continue;
      if (++k == mode) std::fill(h.allowed.begin() + mb[m], h.allowed.begin() + mb[m + 1], 1);
    }
  }
}

PlanStore::PlanStore(const GpuModel& m)
    : tables(*m.device, *m.latency, *m.power, default_table_options(*m.device)) {}

PlanCache::PlanCache(const GpuModel& m) : gpu_(m) {
  PlanMemo* memo = PlanMemo::current();
  store_ = memo && memo->admits(m) ? memo->store(m) : std::make_shared<PlanStore>(m);
}

const ModeChains& PlanCache::chains(const TableCache::Row& r) {
  auto& chains = store_->chains;
  if (chains.size() <= r.slot) chains.resize(r.slot + 1);
  if (!chains[r.slot]) {
    chains[r.slot] = std::make_unique<ModeChains>();
    row_hulls(store_->tables.grid(), r.time_ns, r.energy_j, *chains[r.slot]);
    for (const auto& c : *chains[r.slot]) store_->chain_bytes += c.size() * sizeof(HullVertex);
  }
  return *chains[r.slot];
}

std::vector<Hulls> mode_hulls(const Tables& tb) {
  std::vector<ModeChains> chains(tb.items);
  std::vector<const ModeChains*> ptrs(tb.items);
  for (std::size_t i = 0; i < tb.items; ++i) {
    row_hulls(tb.grid, tb.t_row(i), tb.e_row(i), chains[i]);
    ptrs[i] = &chains[i];
  }
  std::vector<Hulls> out;
  const std::size_t modes = 1 + memory_clock_count(tb.grid);
  for (std::size_t m = 0; m < modes; ++m) {
    out.push_back(hulls_of_mode(tb.grid, ptrs, m));
    out.back().source.clear();  // the chains are gone on return
  }
  return out;
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

// The knapsack's bisection: at most 100 halvings, down to a relative width of
// 1e-13 (the multiplier is then exact to the table's precision).
constexpr int kBisectionSteps = 100;
constexpr double kBisectionTolerance = 1e-13;

// Vertex of item i minimising e + lambda t (ties: the faster one), walking
// from vertex `from` (h.begin[i], or the item's pick at a larger lambda: the
// walk's test de + lambda dt < 0 is monotone in lambda in floating point too,
// so every vertex before that pick passes it at this lambda as well).
inline std::uint32_t pick(const Hulls& h, std::size_t i, double lambda, std::uint32_t from) {
  std::uint32_t j = from;
  const std::uint32_t end = h.begin[i + 1];
  while (j + 1 < end && (h.e[j + 1] - h.e[j]) + lambda * (h.t[j + 1] - h.t[j]) < 0) ++j;
  return j;
}

struct Eval {
  double time = 0, energy = 0, lagr = 0;
};

// `from`: each item's pick at a larger lambda (nullptr: the hulls' first
// vertices). `upto` (optional): each item's pick at a smaller lambda, which
// the walk never passes (its test fails there at the larger lambda too, by
// the same monotony): an item whose picks at both agree has that pick here,
// without a walk.
Eval evaluate(const Tables& tb, const Hulls& h, double lambda, std::vector<std::uint32_t>* picks,
              const std::vector<std::uint32_t>* from = nullptr,
              const std::vector<std::uint32_t>* upto = nullptr) {
  Eval ev;
  for (std::size_t i = 0; i < tb.items; ++i) {
    const std::uint32_t f = from ? (*from)[i] : h.begin[i];
    const std::uint32_t j = upto && (*upto)[i] == f ? f : pick(h, i, lambda, f);
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

namespace {

// The greatest float not above x (x not NaN).
float float_at_most(double x) {
  constexpr float kMax = std::numeric_limits<float>::max();
  if (x > kMax) return x == std::numeric_limits<double>::infinity() ? HUGE_VALF : kMax;
  if (x < -kMax) return -HUGE_VALF;
  const auto f = static_cast<float>(x);
  return static_cast<double>(f) > x ? std::nextafter(f, -HUGE_VALF) : f;
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
  std::vector<std::uint32_t> lo_picks = picks;  // each item's pick at lo (below)
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
  // picks: each item's pick at hi, where every evaluation between lo and hi
  // starts its walk (the same picks as from the first vertex, fewer steps),
  // which ends by the pick at lo.
  std::vector<std::uint32_t> mid_picks(tb.items);
  const int iters = bisect_multiplier(
      lo, hi, budget, dual, kBisectionSteps, kBisectionTolerance,
      [&](double lambda) {
        const Eval ev = evaluate(tb, h, lambda, &mid_picks, &picks, &lo_picks);
        if (!(ev.time <= budget)) lo_picks.swap(mid_picks);  // the new lo (bisect_multiplier)
        return ev;
      },
      [&](const Eval&) { picks.swap(mid_picks); });
  auto st = from_picks(picks);
  double left = budget;
  for (std::size_t i = 0; i < tb.items; ++i) left -= tb.count[i] * h.t[picks[i]];

  // Greedy fill along hull edges, most joules saved per ns first (ties: by
  // item, then vertex).
  struct Edge {
    double rate;
    std::uint32_t item, vertex;
  };
  auto first = [](const Edge& a, const Edge& b) {
    if (a.rate != b.rate) return a.rate > b.rate;
    if (a.item != b.item) return a.item < b.item;
    return a.vertex < b.vertex;
  };
  // An edge longer than the budget left now is never taken (what is left only
  // shrinks), nor is any edge after it on its item's hull (the item never
  // reaches it): they are left out. Each item's edges are in order already
  // (along a hull the rate falls; sorted where rounding says otherwise), so
  // the edges in order are a merge of the items' runs: a heap of each item's
  // next edge instead of sorting them all.
  std::vector<Edge> edges;
  struct Head {
    std::uint32_t at, end;  // an item's next edge and the end of its run in `edges`
  };
  std::vector<Head> heads;  // a heap: the next edge of every item that has one
  for (std::size_t i = 0; i < tb.items; ++i) {
    const auto b = static_cast<std::uint32_t>(edges.size());
    for (auto j = picks[i]; j + 1 < h.begin[i + 1]; ++j) {
      if (h.t[j + 1] - h.t[j] > left) break;
      edges.push_back(
          {-(h.e[j + 1] - h.e[j]) / (h.t[j + 1] - h.t[j]), static_cast<std::uint32_t>(i), j});
    }
    if (edges.size() == b) continue;
    if (!std::is_sorted(edges.begin() + b, edges.end(), first))
      std::sort(edges.begin() + b, edges.end(), first);
    heads.push_back({b, static_cast<std::uint32_t>(edges.size())});
  }
  auto later = [&](const Head& a, const Head& b) { return first(edges[b.at], edges[a.at]); };
  std::make_heap(heads.begin(), heads.end(), later);
  while (!heads.empty()) {
    std::pop_heap(heads.begin(), heads.end(), later);
    Head& hd = heads.back();
    const Edge& ed = edges[hd.at];
    auto& v = st[ed.item];
    bool go_on = true;  // whether the item's later edges may still be taken
    if (v.back().vertex == ed.vertex) {
      const double dt = h.t[ed.vertex + 1] - h.t[ed.vertex];
      const auto k =
          dt > left
              ? 0u
              : static_cast<std::uint32_t>(std::min<double>(v.back().count, std::floor(left / dt)));
      if (k == 0) {
        // The item stays at this vertex, which no later edge of it starts
        // from (each vertex starts one edge): none of them is taken.
        go_on = false;
      } else {
        left -= k * dt;
        v.back().count -= k;
        if (v.back().count == 0) v.pop_back();
        v.push_back({ed.vertex + 1, k});
      }
    }
    if (go_on && ++hd.at < hd.end) {
      std::push_heap(heads.begin(), heads.end(), later);
    } else {
      heads.pop_back();
    }
  }
  best = finish(tb, h, st);
  // One pass over every allowed pair with what is left (the allowed pairs lie
  // in [pair_lo, pair_hi)).
  std::size_t pair_lo = 0, pair_hi = tb.pairs;
  if (!h.allowed.empty()) {
    while (pair_lo < tb.pairs && !h.allowed[pair_lo]) ++pair_lo;
    while (pair_hi > pair_lo && !h.allowed[pair_hi - 1]) --pair_hi;
  }
  for (std::size_t i = 0; i < tb.items && left > 0; ++i) {
    auto& choices = best.assignment.items[i];
    const std::size_t nc = choices.size();
    for (std::size_t c = 0; c < nc && left > 0; ++c) {
      const auto cur = static_cast<std::size_t>(choices[c].pair);
      const double t0 = tb.t(i, cur), e0 = tb.e(i, cur);
      // A pair is taken only if it uses less energy than cur and takes at
      // most `left` longer; cur's hull vertex (of the same time and energy)
      // knows the least it takes longer, once one pass found it.
      const HullVertex* hv = nullptr;
      if (!h.source.empty()) {
        auto v = h.begin[i];
        while (v < h.begin[i + 1] && h.pair[v] != choices[c].pair) ++v;
        if (v < h.begin[i + 1] && h.t[v] == t0 && h.e[v] == e0) hv = h.source[v];
      }
      if (hv && hv->cheaper_dt > left) continue;  // (false while NaN)
      std::int32_t bestp = -1;
      double save = 0, cheaper_dt = std::numeric_limits<double>::infinity();
      for (std::size_t p = pair_lo; p < pair_hi; ++p) {
        if (!h.allowed.empty() && !h.allowed[p]) continue;
        const double dt = tb.t(i, p) - t0, de = e0 - tb.e(i, p);
        if (de > 0 && dt < cheaper_dt) cheaper_dt = dt;
        if (de > save && dt <= left) {
          save = de;
          bestp = static_cast<std::int32_t>(p);
        }
      }
      if (hv) hv->cheaper_dt = float_at_most(cheaper_dt);
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

}  // namespace dvfsim::plan
