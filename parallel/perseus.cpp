#include "parallel/perseus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>

#include "sim/error.h"

namespace dvfsim {
namespace {

constexpr double kInf = 1e18;
constexpr double kEps = 1e-12;

// Dinic's maximum flow on doubles, with the residual graph kept so that a
// second flow can continue from the first (lower bounds).
class MaxFlow {
 public:
  explicit MaxFlow(int n) : adj_(static_cast<std::size_t>(n)) {}
  int add(int u, int v, double cap) {
    const int id = static_cast<int>(to_.size());
    to_.push_back(v);
    cap_.push_back(cap);
    adj_[static_cast<std::size_t>(u)].push_back(id);
    to_.push_back(u);
    cap_.push_back(0.0);
    adj_[static_cast<std::size_t>(v)].push_back(id + 1);
    return id;
  }
  double& cap(int e) { return cap_[static_cast<std::size_t>(e)]; }
  double flow(int s, int t) {
    double total = 0;
    while (bfs(s, t)) {
      it_.assign(adj_.size(), 0);
      for (;;) {
        const double f = dfs(s, t, kInf * 4);
        if (f <= kEps) break;
        total += f;
      }
    }
    return total;
  }
  // Nodes reachable from s in the residual graph.
  std::vector<char> reachable(int s) const {
    std::vector<char> seen(adj_.size(), 0);
    std::deque<int> q{s};
    seen[static_cast<std::size_t>(s)] = 1;
    while (!q.empty()) {
      const int u = q.front();
      q.pop_front();
      for (const int e : adj_[static_cast<std::size_t>(u)]) {
        const int v = to_[static_cast<std::size_t>(e)];
        if (cap_[static_cast<std::size_t>(e)] > kEps && !seen[static_cast<std::size_t>(v)]) {
          seen[static_cast<std::size_t>(v)] = 1;
          q.push_back(v);
        }
      }
    }
    return seen;
  }

 private:
  bool bfs(int s, int t) {
    level_.assign(adj_.size(), -1);
    std::deque<int> q{s};
    level_[static_cast<std::size_t>(s)] = 0;
    while (!q.empty()) {
      const int u = q.front();
      q.pop_front();
      for (const int e : adj_[static_cast<std::size_t>(u)]) {
        const int v = to_[static_cast<std::size_t>(e)];
        if (cap_[static_cast<std::size_t>(e)] > kEps && level_[static_cast<std::size_t>(v)] < 0) {
          level_[static_cast<std::size_t>(v)] = level_[static_cast<std::size_t>(u)] + 1;
          q.push_back(v);
        }
      }
    }
    return level_[static_cast<std::size_t>(t)] >= 0;
  }
  double dfs(int u, int t, double f) {
    if (u == t) return f;
    auto& i = it_[static_cast<std::size_t>(u)];
    const auto& a = adj_[static_cast<std::size_t>(u)];
    for (; i < a.size(); ++i) {
      const int e = a[i];
      const int v = to_[static_cast<std::size_t>(e)];
      if (cap_[static_cast<std::size_t>(e)] <= kEps ||
          level_[static_cast<std::size_t>(v)] != level_[static_cast<std::size_t>(u)] + 1)
        continue;
      const double got = dfs(v, t, std::min(f, cap_[static_cast<std::size_t>(e)]));
      if (got > kEps) {
        cap_[static_cast<std::size_t>(e)] -= got;
        cap_[static_cast<std::size_t>(e ^ 1)] += got;
        return got;
      }
    }
    return 0.0;
  }
  std::vector<std::vector<int>> adj_;
  std::vector<int> to_;
  std::vector<double> cap_;
  std::vector<int> level_;
  std::vector<std::size_t> it_;
};

double cost_at(const TimeCostProblem& p, std::size_t i, std::int64_t d) {
  const auto& t = p.times[i];
  const auto& c = p.costs[i];
  if (d <= t.front()) return c.front();
  for (std::size_t k = 0; k + 1 < t.size(); ++k)
    if (d <= t[k + 1])
      return c[k] + (c[k + 1] - c[k]) * static_cast<double>(d - t[k]) /
                        static_cast<double>(t[k + 1] - t[k]);
  return c.back();
}
// Cost of shortening by one unit at d (kInf at the fastest), and saving of
// lengthening by one unit (0 at the slowest).
double shorten_slope(const TimeCostProblem& p, std::size_t i, std::int64_t d) {
  const auto& t = p.times[i];
  const auto& c = p.costs[i];
  for (std::size_t k = 0; k + 1 < t.size(); ++k)
    if (t[k] < d && d <= t[k + 1]) return (c[k] - c[k + 1]) / static_cast<double>(t[k + 1] - t[k]);
  return kInf;
}
double lengthen_slope(const TimeCostProblem& p, std::size_t i, std::int64_t d) {
  const auto& t = p.times[i];
  const auto& c = p.costs[i];
  for (std::size_t k = 0; k + 1 < t.size(); ++k)
    if (t[k] <= d && d < t[k + 1]) return (c[k] - c[k + 1]) / static_cast<double>(t[k + 1] - t[k]);
  return 0.0;
}

}  // namespace

std::vector<TimeCostStep> phillips_dessouky(const TimeCostProblem& p, std::size_t max_steps) {
  const std::size_t n = p.times.size();
  std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> succ(n), pred(n);
  std::vector<int> indeg(n, 0);
  for (const auto& e : p.edges) {
    succ[e.from].push_back({e.to, e.delay});
    pred[e.to].push_back({e.from, e.delay});
    ++indeg[e.to];
  }
  std::vector<std::uint32_t> topo;
  topo.reserve(n);
  for (std::uint32_t v = 0; v < n; ++v)
    if (indeg[v] == 0) topo.push_back(v);
  for (std::size_t k = 0; k < topo.size(); ++k)
    for (const auto& [w, dl] : succ[topo[k]])
      if (--indeg[w] == 0) topo.push_back(w);
  if (topo.size() != n) throw std::logic_error("phillips_dessouky: the graph has a cycle");

  std::vector<std::int64_t> d(n), es(n), lf(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = p.times[i].back();
  auto schedule = [&] {
    std::int64_t T = 0;
    for (const auto v : topo) {
      std::int64_t s = 0;
      for (const auto& [u, dl] : pred[v]) s = std::max(s, es[u] + d[u] + dl);
      es[v] = s;
      T = std::max(T, s + d[v]);
    }
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
      const auto v = *it;
      std::int64_t f = T;
      for (const auto& [w, dl] : succ[v]) f = std::min(f, lf[w] - d[w] - dl);
      lf[v] = f;
    }
    return T;
  };
  auto total_cost = [&] {
    double c = 0;
    for (std::size_t i = 0; i < n; ++i) c += cost_at(p, i, d[i]);
    return c;
  };
  std::vector<TimeCostStep> out;
  std::int64_t T = schedule();
  out.push_back({T, total_cost(), d});
  while (out.size() < max_steps + 1) {
    // The critical subgraph as a flow network: activity i is arc in_i ->
    // out_i with capacity [lengthen, shorten] slope; precedences, source
    // and sink arcs [0, inf).
    const int s = static_cast<int>(2 * n), t = s + 1, ss = s + 2, tt = s + 3;
    MaxFlow mf(static_cast<int>(2 * n) + 4);
    std::vector<double> excess(2 * n + 4, 0.0);
    std::vector<int> act_arc(n, -1);
    auto arc = [&](int u, int v, double lo, double hi) {
      const int e = mf.add(u, v, hi >= kInf ? kInf : hi - lo);
      excess[static_cast<std::size_t>(v)] += lo;
      excess[static_cast<std::size_t>(u)] -= lo;
      return e;
    };
    for (std::size_t i = 0; i < n; ++i) {
      if (es[i] + d[i] != lf[i]) continue;  // not critical
      const double up = shorten_slope(p, i, d[i]);
      const double lo = lengthen_slope(p, i, d[i]);
      act_arc[i] = arc(static_cast<int>(2 * i), static_cast<int>(2 * i + 1), lo, up);
      if (es[i] == 0) arc(s, static_cast<int>(2 * i), 0, kInf);
      if (es[i] + d[i] == T) arc(static_cast<int>(2 * i + 1), t, 0, kInf);
      for (const auto& [w, dl] : succ[i])
        if (es[w] + d[w] == lf[w] && es[i] + d[i] + dl == es[w])
          arc(static_cast<int>(2 * i + 1), static_cast<int>(2 * w), 0, kInf);
    }
    const int back = mf.add(t, s, kInf);
    double need = 0;
    std::vector<int> aux;
    for (int v = 0; v < static_cast<int>(2 * n) + 2; ++v) {
      const double x = excess[static_cast<std::size_t>(v)];
      if (x > kEps) {
        aux.push_back(mf.add(ss, v, x));
        need += x;
      } else if (x < -kEps) {
        aux.push_back(mf.add(v, tt, -x));
      }
    }
    const double feasible = mf.flow(ss, tt);
    if (feasible < need - 1e-9 * std::max(1.0, need)) break;  // cannot happen at an optimum
    const double f0 = mf.cap(back ^ 1);
    mf.cap(back) = mf.cap(back ^ 1) = 0;
    for (const int e : aux) mf.cap(e) = mf.cap(e ^ 1) = 0;
    const double f1 = mf.flow(s, t);
    if (f0 + f1 >= kInf / 2) break;  // no finite cut: the fastest makespan
    const std::vector<char> seen = mf.reachable(s);
    // How far the cut may go at once: until a cut activity reaches a
    // breakpoint of its cost, or a path with float becomes critical (a path
    // may gain the step from a lengthened activity while the makespan loses
    // it: half the float).
    std::int64_t delta = std::numeric_limits<std::int64_t>::max();
    std::vector<int> dir(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (act_arc[i] < 0) {
        const std::int64_t fl = lf[i] - es[i] - d[i];
        if (fl > 0) delta = std::min(delta, std::max<std::int64_t>(1, fl / 2));
        continue;
      }
      const bool a = seen[2 * i], b = seen[2 * i + 1];
      const auto& bt = p.times[i];
      if (a && !b) {  // forward across the cut: shorten
        dir[i] = -1;
        std::int64_t lower = bt.front();
        for (const auto x : bt)
          if (x < d[i]) lower = x;
        delta = std::min(delta, d[i] - lower);
      } else if (!a && b) {  // backward: lengthen
        dir[i] = 1;
        std::int64_t upper = bt.back();
        for (auto it = bt.rbegin(); it != bt.rend(); ++it)
          if (*it > d[i]) upper = *it;
        delta = std::min(delta, upper - d[i]);
      }
    }
    for (const auto& e : p.edges) {
      const std::int64_t fl = es[e.to] - es[e.from] - d[e.from] - e.delay;
      if (fl > 0) delta = std::min(delta, std::max<std::int64_t>(1, fl / 2));
    }
    if (delta <= 0 || delta == std::numeric_limits<std::int64_t>::max()) delta = 1;
    const std::vector<std::int64_t> keep = d;
    std::int64_t nT = T;
    for (const std::int64_t step : {delta, std::int64_t{1}}) {
      for (std::size_t i = 0; i < n; ++i) d[i] = keep[i] + dir[i] * step;
      nT = schedule();
      if (nT == T - step) break;
    }
    if (nT >= T) {  // numerical trouble: stop rather than loop
      d = keep;
      schedule();
      break;
    }
    T = nT;
    out.push_back({T, total_cost(), d});
  }
  return out;
}

namespace {

struct Profile {
  std::vector<std::int32_t> core_mhz;
  std::vector<double> time_ns, cost_j;  // cost: energy - idle power x time
  // inner_kernel: per kernel, per profiled clock (same order as core_mhz)
  std::vector<std::vector<double>> kernel_ns, kernel_cost;
  KernelPlanCurve curve;
};

// Lower convex hull of (time, cost) over the points that save energy when
// slower: breakpoints ascending in time, cost decreasing and convex.
void hull(const std::vector<std::int64_t>& t, const std::vector<double>& c,
          std::vector<std::int64_t>& ht, std::vector<double>& hc) {
  std::vector<std::size_t> idx(t.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(),
            [&](std::size_t a, std::size_t b) { return t[a] != t[b] ? t[a] < t[b] : c[a] < c[b]; });
  std::vector<std::pair<std::int64_t, double>> pts;
  for (const auto i : idx) {
    if (!pts.empty() && t[i] == pts.back().first) continue;
    if (!pts.empty() && c[i] >= pts.back().second) continue;
    pts.emplace_back(t[i], c[i]);
  }
  std::vector<std::pair<std::int64_t, double>> h;
  for (const auto& q : pts) {
    while (h.size() >= 2) {
      const auto& a = h[h.size() - 2];
      const auto& b = h.back();
      const double cross = static_cast<double>(b.first - a.first) * (q.second - a.second) -
                           (b.second - a.second) * static_cast<double>(q.first - a.first);
      if (cross <= 0)
        h.pop_back();  // b is on or above the segment a-q
      else
        break;
    }
    h.push_back(q);
  }
  ht.clear();
  hc.clear();
  for (const auto& [x, y] : h) {
    ht.push_back(x);
    hc.push_back(y);
  }
}

}  // namespace

KernelPlanCurve kernel_plan_curve(const std::vector<std::vector<double>>& time_ns,
                                  const std::vector<std::vector<double>>& cost_j) {
  KernelPlanCurve out;
  struct Seg {
    double dt, dc;
    std::size_t kernel, vertex;
  };
  std::vector<Seg> segs;
  double t = 0, c = 0;
  for (std::size_t k = 0; k < time_ns.size(); ++k) {
    // The kernel's lower convex hull, cost decreasing as time grows.
    std::vector<std::size_t> idx(time_ns[k].size());
    for (std::size_t q = 0; q < idx.size(); ++q) idx[q] = q;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return time_ns[k][a] != time_ns[k][b] ? time_ns[k][a] < time_ns[k][b]
                                            : cost_j[k][a] < cost_j[k][b];
    });
    std::vector<std::size_t> h;
    for (const std::size_t q : idx) {
      if (!h.empty() &&
          (time_ns[k][q] <= time_ns[k][h.back()] || cost_j[k][q] >= cost_j[k][h.back()]))
        continue;  // not faster-cheaper: dominated
      while (h.size() >= 2) {
        const std::size_t a = h[h.size() - 2], b = h.back();
        const double cross = (time_ns[k][b] - time_ns[k][a]) * (cost_j[k][q] - cost_j[k][a]) -
                             (cost_j[k][b] - cost_j[k][a]) * (time_ns[k][q] - time_ns[k][a]);
        if (cross <= 0)
          h.pop_back();
        else
          break;
      }
      h.push_back(q);
    }
    if (h.empty()) throw std::logic_error("kernel_plan_curve: a kernel without options");
    t += time_ns[k][h.front()];
    c += cost_j[k][h.front()];
    for (std::size_t v = 1; v < h.size(); ++v)
      segs.push_back(
          {time_ns[k][h[v]] - time_ns[k][h[v - 1]], cost_j[k][h[v]] - cost_j[k][h[v - 1]], k, v});
    out.hull_option.push_back(std::move(h));
  }
  // The steepest saving per unit of time first; a kernel's own segments
  // get flatter along its hull, so they stay in order (ties: by vertex).
  std::stable_sort(segs.begin(), segs.end(), [](const Seg& a, const Seg& b) {
    const double sa = a.dc / a.dt, sb = b.dc / b.dt;
    return sa != sb ? sa < sb : a.vertex < b.vertex;
  });
  out.time_ns.push_back(t);
  out.cost_j.push_back(c);
  for (const Seg& s : segs) {
    t += s.dt;
    c += s.dc;
    out.time_ns.push_back(t);
    out.cost_j.push_back(c);
    out.segments.push_back({s.kernel, s.vertex});
  }
  return out;
}

std::vector<std::size_t> kernel_plan_at(const KernelPlanCurve& c, double duration_ns) {
  std::vector<std::size_t> vertex(c.hull_option.size(), 0);
  for (std::size_t j = 0; j < c.segments.size(); ++j) {
    if (c.time_ns[j + 1] > duration_ns * (1 + 1e-12)) break;
    vertex[c.segments[j].kernel] = c.segments[j].vertex;
  }
  std::vector<std::size_t> q(vertex.size());
  for (std::size_t k = 0; k < vertex.size(); ++k) q[k] = c.hull_option[k][vertex[k]];
  return q;
}

PerseusPlan plan_perseus(const ParallelInputs& in, const EngineConfig& cfg,
                         const PerseusOptions& opt) {
  const PipelineJob& job = *in.job;
  const PipelineGraph& pg = *in.graph;
  const ParallelSpec& sp = job.spec;
  const Device& dev = *in.device;
  const int S = sp.pp, M = sp.microbatches;
  const std::int32_t mem = dev.max_memory_mhz();
  Clocks top;
  top.core_mhz = dev.max_core_mhz();
  top.memory_mhz = mem;
  const double idle_w = in.power->power_w(Utilisation{}, top);
  // Profiles per (stage, kind), from the top clock down; stop once the
  // energy has risen for 3 clocks in a row (Perseus stops once energy keeps
  // rising).
  std::vector<Profile> prof(static_cast<std::size_t>(2 * S));
  for (int s = 0; s < S; ++s)
    for (int k = 0; k < 2; ++k) {
      Profile& pr = prof[static_cast<std::size_t>(2 * s + k)];
      double best = std::numeric_limits<double>::infinity();
      int rising = 0;  // clocks in a row whose energy rose above the least
      for (auto it = dev.core_clocks_mhz.rbegin(); it != dev.core_clocks_mhz.rend(); ++it) {
        if (!dev.supports(*it, mem)) continue;
        Clocks c;
        c.core_mhz = *it;
        c.memory_mhz = mem;
        const InstructionProfile ip =
            profile_instruction(in, s, k == 0 ? InstrKind::forward : InstrKind::backward, c, cfg);
        const double cost = ip.energy_j - idle_w * ip.time_ns * 1e-9;
        pr.core_mhz.push_back(*it);
        pr.time_ns.push_back(ip.time_ns);
        pr.cost_j.push_back(cost);
        if (opt.inner_kernel) {
          pr.kernel_ns.resize(ip.kernel_ns.size());
          pr.kernel_cost.resize(ip.kernel_ns.size());
          for (std::size_t q = 0; q < ip.kernel_ns.size(); ++q) {
            pr.kernel_ns[q].push_back(ip.kernel_ns[q]);
            pr.kernel_cost[q].push_back(ip.kernel_j[q] - idle_w * ip.kernel_ns[q] * 1e-9);
          }
        }
        // Equal energy (clocks above a power cap run capped alike) is not a rise.
        if (ip.energy_j < best * (1 - 1e-9)) {
          best = ip.energy_j;
          rising = 0;
        } else if (ip.energy_j > best * (1 + 1e-6) && ++rising >= 3) {
          break;
        }
      }
    }
  if (opt.inner_kernel)
    for (Profile& pr : prof) pr.curve = kernel_plan_curve(pr.kernel_ns, pr.kernel_cost);
  // At most this many vertices of a per-kernel curve go to the frontier (a
  // subset of a convex curve's vertices is convex and each is a plan; every
  // vertex of a curve of ~230 kernels x clocks would make the trade-off take
  // a step per vertex).
  constexpr std::size_t kCurveVertices = 48;
  const std::size_t per_replica = static_cast<std::size_t>(2 * S * M);
  // Solves one replica's pipeline (straggler scale on its straggling rank).
  struct Solved {
    std::vector<TimeCostStep> steps;
    double unit_ns = 1.0;
    std::vector<std::vector<std::int64_t>> units;  // per activity: profile times in units
    std::size_t chosen = 0;
  };
  auto solve = [&](int r) {
    Solved sv;
    const std::size_t base = static_cast<std::size_t>(r) * per_replica;
    auto scale_of = [&](std::size_t v) {
      return pg.g[v].rank == sp.straggler_rank ? 1.0 + sp.straggler_pct / 100.0 : 1.0;
    };
    auto prof_of = [&](std::size_t v) -> const Profile& {
      const DagNode& nd = pg.g[v];
      return prof[static_cast<std::size_t>(2 * nd.stage +
                                           (nd.kind == InstrKind::backward ? 1 : 0))];
    };
    // The unit: the shortest instruction at the top clock / resolution.
    double shortest = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < per_replica; ++i)
      shortest = std::min(shortest, prof_of(base + i).time_ns.front() * scale_of(base + i));
    sv.unit_ns = std::max(1.0, shortest / std::max(1, opt.resolution));
    TimeCostProblem p;
    p.times.resize(per_replica);
    p.costs.resize(per_replica);
    sv.units.resize(per_replica);
    for (std::size_t i = 0; i < per_replica; ++i) {
      const Profile& pr = prof_of(base + i);
      const double sc = scale_of(base + i);
      std::vector<double> c;
      if (opt.inner_kernel) {
        const std::size_t nv = pr.curve.time_ns.size();
        const std::size_t keep = std::min(nv, kCurveVertices);
        std::vector<std::int64_t> u;
        for (std::size_t j = 0; j < keep; ++j) {
          const std::size_t v = keep == 1 ? 0 : j * (nv - 1) / (keep - 1);
          u.push_back(
              std::max<std::int64_t>(1, std::llround(pr.curve.time_ns[v] * sc / sv.unit_ns)));
          c.push_back(pr.curve.cost_j[v] * sc);
        }
        hull(u, c, p.times[i], p.costs[i]);
        continue;
      }
      for (std::size_t q = 0; q < pr.time_ns.size(); ++q) {
        sv.units[i].push_back(
            std::max<std::int64_t>(1, std::llround(pr.time_ns[q] * sc / sv.unit_ns)));
        c.push_back(pr.cost_j[q] * sc);
      }
      hull(sv.units[i], c, p.times[i], p.costs[i]);
    }
    for (std::size_t i = 0; i < per_replica; ++i)
      for (auto [e, end] = out_edges(base + i, pg.g); e != end; ++e) {
        const std::size_t w = target(*e, pg.g);
        if (w < base || w >= base + per_replica) continue;
        p.edges.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(w - base),
                           std::llround(static_cast<double>(pg.g[*e].delay_ns) / sv.unit_ns)});
      }
    sv.steps = phillips_dessouky(p, 1'000'000);
    return sv;
  };
  auto energy_of = [&](const Solved& sv, const TimeCostStep& st) {
    return st.cost + S * idle_w * static_cast<double>(st.makespan) * sv.unit_ns * 1e-9;
  };
  auto seconds = [](const Solved& sv, std::int64_t units) {
    return static_cast<double>(units) * sv.unit_ns * 1e-9;
  };
  // The least-energy step no longer than `limit_s`.
  auto choose = [&](Solved& sv, double limit_s) {
    std::size_t best = sv.steps.size() - 1;
    for (std::size_t k = 0; k < sv.steps.size(); ++k)
      if (seconds(sv, sv.steps[k].makespan) <= limit_s * (1 + 1e-12) &&
          energy_of(sv, sv.steps[k]) < energy_of(sv, sv.steps[best]))
        best = k;
    sv.chosen = best;
  };
  const int strag_replica = sp.straggler_rank >= 0 ? sp.straggler_rank / S : -1;
  const int main_replica = strag_replica == 0 && sp.dp > 1 ? 1 : 0;
  Solved main = solve(main_replica);
  const double main_fast = seconds(main, main.steps.back().makespan);
  Solved strag;
  const bool separate_straggler = strag_replica >= 0 && strag_replica != main_replica;
  if (separate_straggler) strag = solve(strag_replica);
  // Durations to clocks: the least-cost profiled clock that fits.
  auto assign = [&](PerseusPlan& plan, const Solved& sv, int r) {
    const std::size_t base = static_cast<std::size_t>(r) * per_replica;
    const auto& dur = sv.steps[sv.chosen].durations;
    for (std::size_t i = 0; i < per_replica; ++i) {
      const DagNode& nd = pg.g[base + i];
      const Profile& pr =
          prof[static_cast<std::size_t>(2 * nd.stage + (nd.kind == InstrKind::backward ? 1 : 0))];
      const double sc = nd.rank == sp.straggler_rank ? 1.0 + sp.straggler_pct / 100.0 : 1.0;
      if (opt.inner_kernel) {  // the per-kernel plan of the least cost that fits
        const std::vector<std::size_t> q =
            kernel_plan_at(pr.curve, static_cast<double>(dur[i]) * sv.unit_ns / sc);
        auto& kc = plan.per_node_kernels[base + i];
        double ns = 0;
        for (std::size_t k = 0; k < q.size(); ++k) {
          Clocks c;
          c.core_mhz = pr.core_mhz[q[k]];
          c.memory_mhz = mem;
          kc.push_back(c);
          ns += pr.kernel_ns[k][q[k]];
        }
        plan.per_node[base + i] = kc.empty() ? top : kc.front();
        plan.node_ns[base + i] = ns * sc;
        continue;
      }
      std::size_t pick = 0;
      for (std::size_t q = 0; q < pr.core_mhz.size(); ++q)
        if (sv.units[i][q] <= dur[i] && pr.cost_j[q] < pr.cost_j[pick]) pick = q;
      Clocks c;
      c.core_mhz = pr.core_mhz[pick];
      c.memory_mhz = mem;
      plan.per_node[base + i] = c;
      plan.node_ns[base + i] =
          pr.time_ns[pick] * (nd.rank == sp.straggler_rank ? 1.0 + sp.straggler_pct / 100.0 : 1.0);
    }
  };
  // The plan for a slowdown budget (the frontiers do not depend on it).
  auto make = [&](double budget) {
    PerseusPlan plan;
    double limit = main_fast * (1 + budget);
    if (separate_straggler) {
      const double sf = seconds(strag, strag.steps.back().makespan);
      choose(strag, sf * (1 + budget));
      limit = std::max(limit, seconds(strag, strag.steps[strag.chosen].makespan));
      plan.notes.push_back(fmt::format(
          "straggler rank {} (replica {}, +{:g} %): its pipeline planned at {:.3f} ms; the "
          "others matched to it (extrinsic bloat)",
          sp.straggler_rank, strag_replica, sp.straggler_pct,
          seconds(strag, strag.steps[strag.chosen].makespan) * 1e3));
    }
    choose(main, limit);
    plan.fastest_s = main_fast;
    plan.chosen_s = seconds(main, main.steps[main.chosen].makespan);
    plan.chosen = static_cast<int>(main.chosen);
    for (std::size_t k = 0; k < main.steps.size(); ++k)
      plan.frontier.push_back({static_cast<int>(k), seconds(main, main.steps[k].makespan),
                               energy_of(main, main.steps[k])});
    plan.per_node.assign(num_vertices(pg.g), top);
    plan.node_ns.assign(num_vertices(pg.g), 0.0);
    if (opt.inner_kernel) plan.per_node_kernels.assign(num_vertices(pg.g), {});
    for (int r = 0; r < sp.dp; ++r)
      assign(plan, separate_straggler && r == strag_replica ? strag : main, r);
    plan.notes.push_back(fmt::format(
        "perseus{}: frontier of {} plans from {:.3f} to {:.3f} ms per iteration (unit {:.1f} us); "
        "chose plan {} at {:.3f} ms (planned), within {:.3g} % of the fastest",
        opt.inner_kernel ? " (per-kernel clocks inside each instruction)" : "", main.steps.size(),
        seconds(main, main.steps.front().makespan) * 1e3, main_fast * 1e3, main.unit_ns * 1e-3,
        plan.chosen, plan.chosen_s * 1e3, 100.0 * (plan.chosen_s / main_fast - 1.0)));
    return plan;
  };
  double budget = opt.max_slowdown;
  PerseusPlan plan = make(budget);
  if (!opt.replayed_slowdown) return plan;
  // Closed loop: re-choose with the budget cut by the replayed excess. The
  // plan returned is the one replayed last.
  std::vector<std::string> rounds;
  for (int round = 0;; ++round) {
    const double slow = opt.replayed_slowdown(plan);
    rounds.push_back(
        fmt::format("perseus round {}: planned within {:.3g} %, replayed {:+.3f} % against all-max",
                    round, 100.0 * budget, 100.0 * slow));
    if (slow <= opt.max_slowdown + 1e-12 || budget <= 0 || round >= 7) break;
    budget = std::max(0.0, budget - (slow - opt.max_slowdown));
    plan = make(budget);
  }
  plan.notes.insert(plan.notes.end(), rounds.begin(), rounds.end());
  return plan;
}

}  // namespace dvfsim
