#include "parallel/dag.h"

#include <boost/graph/topological_sort.hpp>
#include <iterator>
#include <stdexcept>

namespace dvfsim {

std::string_view to_string(InstrKind k) {
  switch (k) {
    case InstrKind::forward:
      return "forward";
    case InstrKind::backward:
      return "backward";
    case InstrKind::optimizer:
      return "optimizer";
    case InstrKind::allreduce:
      return "allreduce";
  }
  return "?";
}

std::vector<std::pair<InstrKind, int>> stage_order(PipelineSchedule sched, int s, int S, int M) {
  std::vector<std::pair<InstrKind, int>> out;
  out.reserve(2 * static_cast<std::size_t>(M));
  if (sched == PipelineSchedule::gpipe) {
    for (int m = 0; m < M; ++m) out.emplace_back(InstrKind::forward, m);
    for (int m = 0; m < M; ++m) out.emplace_back(InstrKind::backward, m);
    return out;
  }
  const int warm = std::min(S - s - 1, M);
  for (int m = 0; m < warm; ++m) out.emplace_back(InstrKind::forward, m);
  for (int i = 0; i < M - warm; ++i) {
    out.emplace_back(InstrKind::forward, warm + i);
    out.emplace_back(InstrKind::backward, i);
  }
  for (int m = M - warm; m < M; ++m) out.emplace_back(InstrKind::backward, m);
  return out;
}

std::int64_t ring_allreduce_ns(double bytes, int n, const Link& link) {
  if (n <= 1 || bytes <= 0) return 0;
  const double steps = 2.0 * (n - 1);
  return static_cast<std::int64_t>(
      std::llround(steps * link.latency_us * 1e3 + steps / n * bytes / link.bandwidth_gb_s));
}

PipelineGraph build_dag(const PipelineJob& job) {
  const ParallelSpec& sp = job.spec;
  const int S = sp.pp, D = sp.dp, M = sp.microbatches;
  PipelineGraph pg;
  PipelineDag& g = pg.g;
  pg.program.assign(static_cast<std::size_t>(sp.gpus()), {});
  pg.activation_ns_intra = job.intra.transfer_ns(job.activation_bytes);
  pg.activation_ns_inter = job.inter.transfer_ns(job.activation_bytes);
  // node id of (replica, stage, kind, microbatch)
  auto id = [&](int r, int s, InstrKind k, int m) {
    return static_cast<std::uint32_t>(
        ((static_cast<std::size_t>(r) * S + s) * 2 + (k == InstrKind::backward ? 1 : 0)) *
            static_cast<std::size_t>(M) +
        static_cast<std::size_t>(m));
  };
  const std::size_t n_instr = static_cast<std::size_t>(D) * S * 2 * M;
  for (int r = 0; r < D; ++r)
    for (int s = 0; s < S; ++s)
      for (InstrKind k : {InstrKind::forward, InstrKind::backward})
        for (int m = 0; m < M; ++m) {
          DagNode n;
          n.kind = k;
          n.stage = s;
          n.replica = r;
          n.microbatch = m;
          n.rank = sp.rank(s, r);
          add_vertex(n, g);
        }
  (void)n_instr;
  auto link_ns = [&](int rank_a, int rank_b) {
    return sp.node_of(rank_a) == sp.node_of(rank_b) ? pg.activation_ns_intra
                                                    : pg.activation_ns_inter;
  };
  for (int r = 0; r < D; ++r)
    for (int s = 0; s < S; ++s) {
      const int rank = sp.rank(s, r);
      auto& prog = pg.program[static_cast<std::size_t>(rank)];
      for (const auto& [k, m] : stage_order(sp.schedule, s, S, M)) {
        const std::uint32_t v = id(r, s, k, m);
        if (!prog.empty()) add_edge(prog.back(), v, DagEdge{0}, g);
        prog.push_back(v);
      }
      for (int m = 0; m < M; ++m) {
        if (s + 1 < S) {
          const std::int64_t t = link_ns(rank, sp.rank(s + 1, r));
          add_edge(id(r, s, InstrKind::forward, m), id(r, s + 1, InstrKind::forward, m), DagEdge{t},
                   g);
          add_edge(id(r, s + 1, InstrKind::backward, m), id(r, s, InstrKind::backward, m),
                   DagEdge{t}, g);
        }
      }
    }
  // The gradient all-reduce of each stage over the replicas, then each GPU's
  // optimizer step.
  bool spans_nodes = false;
  for (int r = 1; r < D && !spans_nodes; ++r)
    spans_nodes = sp.node_of(sp.rank(0, r)) != sp.node_of(sp.rank(0, 0));
  for (int s = 0; s < S; ++s) {
    const double bytes =
        job.gradient_bytes * job.stages[static_cast<std::size_t>(s)].parameter_share;
    std::uint32_t ar = 0;
    if (D > 1) {
      DagNode n;
      n.kind = InstrKind::allreduce;
      n.stage = s;
      n.replica = -1;
      n.microbatch = -1;
      n.rank = -1;
      n.fixed_ns = ring_allreduce_ns(bytes, D, spans_nodes ? job.inter : job.intra);
      pg.allreduce_ns = std::max(pg.allreduce_ns, n.fixed_ns);
      ar = static_cast<std::uint32_t>(add_vertex(n, g));
    }
    for (int r = 0; r < D; ++r) {
      const int rank = sp.rank(s, r);
      auto& prog = pg.program[static_cast<std::size_t>(rank)];
      DagNode n;
      n.kind = InstrKind::optimizer;
      n.stage = s;
      n.replica = r;
      n.microbatch = -1;
      n.rank = rank;
      const auto v = static_cast<std::uint32_t>(add_vertex(n, g));
      if (D > 1) {
        add_edge(prog.back(), ar, DagEdge{0}, g);
        add_edge(ar, v, DagEdge{0}, g);
      } else {
        add_edge(prog.back(), v, DagEdge{0}, g);
      }
      prog.push_back(v);
    }
  }
  std::vector<std::size_t> rev;
  rev.reserve(num_vertices(g));
  boost::topological_sort(g, std::back_inserter(rev));
  pg.topo.assign(rev.rbegin(), rev.rend());
  return pg;
}

std::int64_t critical_path_ns(const PipelineGraph& pg, const std::vector<std::int64_t>& dur_ns,
                              std::vector<std::uint32_t>* on_path) {
  const PipelineDag& g = pg.g;
  const std::size_t n = num_vertices(g);
  if (dur_ns.size() != n) throw std::logic_error("critical_path_ns: one duration per node");
  std::vector<std::int64_t> finish(n, 0);
  std::vector<std::int64_t> pred(n, -1);
  std::int64_t best = 0;
  std::int64_t last = -1;
  for (const std::uint32_t v : pg.topo) {
    std::int64_t start = 0;
    for (auto [e, end] = in_edges(v, g); e != end; ++e) {
      const auto u = source(*e, g);
      const std::int64_t t = finish[u] + g[*e].delay_ns;
      if (t > start || pred[v] < 0) {
        if (t >= start) {
          start = t;
          pred[v] = static_cast<std::int64_t>(u);
        }
      }
    }
    finish[v] = start + dur_ns[v];
    if (finish[v] > best || last < 0) {
      best = finish[v];
      last = v;
    }
  }
  if (on_path) {
    on_path->clear();
    for (std::int64_t v = last; v >= 0; v = pred[static_cast<std::size_t>(v)])
      on_path->push_back(static_cast<std::uint32_t>(v));
    std::reverse(on_path->begin(), on_path->end());
  }
  return best;
}

}  // namespace dvfsim
