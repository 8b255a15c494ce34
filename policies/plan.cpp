#include "policies/plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <tuple>

#include <fmt/format.h>

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

TableOptions default_table_options(const Device& d) {
  TableOptions o;
  o.cap_w = d.power.limit_w > 0 ? d.power.limit_w * d.governor.target_fraction : 0.0;
  return o;
}

double idle_power_w(const PowerModel& pow, const Clocks& c) { return pow.power_w(Utilisation{}, c); }

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
        if (capped) {
          trow[p] = trow[last_fit];
          erow[p] = erow[last_fit];
          continue;
        }
        const Clocks& c = g.pairs[p];
        const double tm = std::max(1.0, lat.duration_ns(it.cost, c));
        const Utilisation u = lat.utilisation(it.cost, c, tm);
        const double pw = pow.power_w(u, c);
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

Tables group_tables(const Tables& t, const std::vector<std::uint32_t>& group_of, std::size_t groups) {
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
  using Key = std::tuple<double, double, double, double, double, bool, double, long long>;
  std::map<Key, std::uint32_t> index;
  Grouping g;
  g.item_of.reserve(kernels.size());
  for (const auto& k : kernels) {
    const Key key{k.cost.fixed_ns, k.cost.compute_ns_mhz, k.cost.memory_ns_mhz, k.cost.flops,
                  k.cost.dram_bytes, k.cost.tensor, k.time_scale, std::llround(k.gap_ns * 10.0)};
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

// ------------------------------------------------------------------ hulls

namespace {

struct Pt {
  double t, e;
  std::int32_t p;
};

bool before(const Pt& a, const Pt& b) { return a.t < b.t || (a.t == b.t && a.e < b.e); }

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
    if (ev.time <= budget) hi = mid;
    else lo = mid;
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
      edges.push_back({-(h.e[j + 1] - h.e[j]) / (h.t[j + 1] - h.t[j]), static_cast<std::uint32_t>(i), j});
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
    const auto k = static_cast<std::uint32_t>(std::min<double>(v.back().count, std::floor(left / dt)));
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
      edges.push_back({-(h.e[j + 1] - h.e[j]) / (h.t[j + 1] - h.t[j]), static_cast<std::uint32_t>(i), j});
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
const std::vector<SolveReport>& reports() { return t_reports; }
void clear_reports() { t_reports.clear(); }
void quiet_reports(bool quiet) { t_quiet = quiet; }

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
  o.scale = model > 0 ? std::clamp(o.measured_ns() / model, 0.5, 2.0) : 1.0;
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
  double t = ended_ns >= 0 ? static_cast<double>(ended_ns) + cur.gap_ns
                           : std::max(now, static_cast<double>(start_ns_) + cur.duration_ns) + cur.gap_ns;
  const double horizon =
      std::max(ctx.expected_core_switch_ns(), ctx.expected_memory_switch_ns()) + 1.0;
  Clocks prev = cur.pair;
  for (int k = 1; k <= n; ++k) {
    const Step& s = steps_[static_cast<std::size_t>((pos_ + k) % n)];
    if (!(s.pair == prev)) {
      const double issue = t - lead_ns(ctx, prev, s.pair);
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
