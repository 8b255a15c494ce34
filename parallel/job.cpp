#include "parallel/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "sim/error.h"

namespace dvfsim {

std::string_view to_string(PipelineSchedule s) {
  return s == PipelineSchedule::gpipe ? "gpipe" : "1f1b";
}

namespace {

int parse_int(const std::string& key, const std::string& v, int lo, int hi) {
  int x = 0;
  const auto* end = v.data() + v.size();
  const auto r = std::from_chars(v.data(), end, x);
  if (v.empty() || r.ec != std::errc() || r.ptr != end || x < lo || x > hi)
    throw InputError(
        fmt::format("--parallel {}={}: expected an integer in {}..{}", key, v, lo, hi));
  return x;
}

double parse_double(const std::string& what, const std::string& v, double lo, double hi) {
  double x = 0;
  const auto* end = v.data() + v.size();
  const auto r = std::from_chars(v.data(), end, x);
  if (v.empty() || r.ec != std::errc() || r.ptr != end || !(x >= lo && x <= hi))
    throw InputError(fmt::format("{}: '{}' is not a number in {:g}..{:g}", what, v, lo, hi));
  return x;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t b = 0;
  for (;;) {
    const auto e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return out;
    b = e + 1;
  }
}

}  // namespace

std::string ParallelSpec::text() const {
  std::string s = fmt::format("pp={},dp={},microbatches={},schedule={}", pp, dp, microbatches,
                              to_string(schedule));
  if (!partition.empty()) {
    s += ",partition=";
    for (std::size_t i = 0; i < partition.size(); ++i)
      s += (i ? ":" : "") + std::to_string(partition[i]);
  }
  return s;
}

ParallelSpec parse_parallel(const std::string& text) {
  ParallelSpec p;
  bool have_pp = false, in_partition = false;
  for (const std::string& item : split(text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      // "partition=0,8,14,21,27": the numbers after partition= belong to it.
      if (in_partition) {
        p.partition.push_back(parse_int("partition", item, 0, 1'000'000));
        continue;
      }
      throw InputError(fmt::format(
          "--parallel '{}': expected KEY=VALUE (keys: pp, dp, microbatches, schedule, partition, "
          "gpus_per_node, link, network, activation_bytes, gradient_bytes)",
          item));
    }
    const std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    in_partition = false;
    if (k == "pp") {
      p.pp = parse_int(k, v, 1, 1024);
      have_pp = true;
    } else if (k == "dp") {
      p.dp = parse_int(k, v, 1, 65536);
    } else if (k == "microbatches" || k == "m") {
      p.microbatches = parse_int(k, v, 1, 65536);
    } else if (k == "schedule") {
      if (v == "1f1b")
        p.schedule = PipelineSchedule::one_f_one_b;
      else if (v == "gpipe")
        p.schedule = PipelineSchedule::gpipe;
      else
        throw InputError(fmt::format("--parallel schedule={}: expected 1f1b or gpipe", v));
    } else if (k == "partition") {
      p.partition.clear();
      for (const std::string& x : split(v, ':'))
        p.partition.push_back(parse_int(k, x, 0, 1'000'000));
      in_partition = true;
    } else if (k == "gpus_per_node") {
      p.gpus_per_node = parse_int(k, v, 1, 1024);
    } else if (k == "link") {
      p.link = find_link(v).name;
    } else if (k == "network") {
      p.network = find_link(v).name;
    } else if (k == "activation_bytes") {
      p.activation_bytes = parse_double("--parallel activation_bytes", v, 0, 1e15);
    } else if (k == "gradient_bytes") {
      p.gradient_bytes = parse_double("--parallel gradient_bytes", v, 0, 1e15);
    } else {
      throw InputError(fmt::format(
          "--parallel: unknown key '{}' (keys: pp, dp, microbatches, schedule, partition, "
          "gpus_per_node, link, network, activation_bytes, gradient_bytes)",
          k));
    }
  }
  if (!have_pp) throw InputError(fmt::format("--parallel '{}': pp=S is required", text));
  if (!p.partition.empty() && p.partition.size() != static_cast<std::size_t>(p.pp) + 1)
    throw InputError(fmt::format(
        "--parallel partition: {} boundaries given, pp={} needs {} (0, the first unit of each "
        "later stage, and the number of units)",
        p.partition.size(), p.pp, p.pp + 1));
  if (static_cast<long long>(p.pp) * p.dp > 1'048'576)
    throw InputError(fmt::format("--parallel: pp*dp = {} GPUs, at most 1048576",
                                 static_cast<long long>(p.pp) * p.dp));
  return p;
}

void parse_straggler(const std::string& text, ParallelSpec& spec) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw InputError(fmt::format("--set straggler={}: expected RANK:PCT (e.g. 3:20)", text));
  const std::string r = text.substr(0, colon);
  int rank = -1;
  const auto rr = std::from_chars(r.data(), r.data() + r.size(), rank);
  if (r.empty() || rr.ec != std::errc() || rr.ptr != r.data() + r.size() || rank < 0 ||
      rank >= spec.gpus())
    throw InputError(
        fmt::format("--set straggler={}: rank '{}' is not one of 0..{}", text, r, spec.gpus() - 1));
  spec.straggler_rank = rank;
  spec.straggler_pct = parse_double(fmt::format("--set straggler={}: percent", text),
                                    text.substr(colon + 1), 0.0, 1000.0);
}

// ---- layer structure

namespace {

// The longest stretch of s that is one block repeated: {start, period,
// repeats}, preferring the shortest period among those covering (nearly) as
// much. repeats = 0 when nothing repeats.
struct Run {
  std::size_t start = 0, period = 0;
  int repeats = 0;
};
Run repeating_run(const std::vector<std::uint32_t>& s) {
  const std::size_t n = s.size();
  std::vector<Run> best_per_p(n / 2 + 1);
  std::size_t best_cover = 0;
  for (std::size_t p = 1; p <= n / 2; ++p) {
    std::size_t run_start = 0, run_len = 0;
    Run best;
    std::size_t cover = 0;
    for (std::size_t j = 0; j + p < n; ++j) {
      if (s[j] == s[j + p]) {
        if (run_len == 0) run_start = j;
        ++run_len;
        const std::size_t reps = (run_len + p) / p;
        if (reps >= 2 && reps * p > cover) {
          cover = reps * p;
          best = {run_start, p, static_cast<int>(reps)};
        }
      } else {
        run_len = 0;
      }
    }
    best_per_p[p] = best;
    best_cover = std::max(best_cover, cover);
  }
  if (best_cover == 0) return {};
  for (std::size_t p = 1; p <= n / 2; ++p) {
    const Run& r = best_per_p[p];
    if (r.repeats >= 2 &&
        static_cast<double>(r.period) * r.repeats >= 0.95 * static_cast<double>(best_cover))
      return r;
  }
  return {};
}

}  // namespace

LayerStructure detect_layers(const Workload& w) {
  LayerStructure ls;
  if (w.iterations <= 0 || w.iteration_begin.size() < static_cast<std::size_t>(w.iterations) + 1)
    throw InputError(fmt::format("{}: no iterations to build a pipeline from", w.source_path));
  ls.iteration = w.steady_iterations.empty() ? w.iterations - 1 : w.steady_iterations.back();
  const std::uint32_t b = w.iteration_begin[static_cast<std::size_t>(ls.iteration)];
  const std::uint32_t e = w.iteration_begin[static_cast<std::size_t>(ls.iteration) + 1];
  std::uint32_t first_bwd = e, last_bwd = e;
  for (std::uint32_t i = b; i < e; ++i)
    if (w.kernels[i].phase == Phase::backward) {
      if (first_bwd == e) first_bwd = i;
      last_bwd = i;
    }
  if (first_bwd == e)
    throw InputError(
        fmt::format("{}: iteration {} has no backward kernels: --parallel needs a training step",
                    w.source_path, ls.iteration));
  std::vector<std::uint32_t> fwd_idx, bwd_idx;
  for (std::uint32_t i = b; i < first_bwd; ++i) fwd_idx.push_back(i);
  for (std::uint32_t i = first_bwd; i <= last_bwd; ++i) bwd_idx.push_back(i);
  for (std::uint32_t i = last_bwd + 1; i < e; ++i) ls.optimizer.push_back(i);
  auto names = [&](const std::vector<std::uint32_t>& idx) {
    std::vector<std::uint32_t> s;
    s.reserve(idx.size());
    for (auto i : idx) s.push_back(w.kernels[i].name_id);
    return s;
  };
  const Run f = repeating_run(names(fwd_idx));
  if (f.repeats < 2)
    throw InputError(
        fmt::format("{}: no repeating layer structure in the forward of iteration {} ({} kernels): "
                    "--parallel splits a model into stages at its repeated blocks",
                    w.source_path, ls.iteration, fwd_idx.size()));
  ls.layers = f.repeats;
  const int L = ls.layers;
  ls.forward.assign(static_cast<std::size_t>(L) + 2, {});
  ls.backward.assign(static_cast<std::size_t>(L) + 2, {});
  for (std::size_t j = 0; j < fwd_idx.size(); ++j) {
    std::size_t unit;
    if (j < f.start)
      unit = 0;
    else if (j >= f.start + f.period * static_cast<std::size_t>(L))
      unit = static_cast<std::size_t>(L) + 1;
    else
      unit = 1 + (j - f.start) / f.period;
    ls.forward[unit].push_back(fwd_idx[j]);
  }
  // The backward runs the blocks in reverse: before its run the head's
  // backward, after it the embedding's.
  Run r = repeating_run(names(bwd_idx));
  std::size_t start = r.start, period = r.period;
  if (r.repeats != L) {
    // Not L repeats (fused or split kernels): cut the run into L parts.
    const std::size_t len =
        r.repeats >= 2 ? r.period * static_cast<std::size_t>(r.repeats) : bwd_idx.size();
    if (r.repeats < 2) start = 0;
    period = std::max<std::size_t>(1, len / static_cast<std::size_t>(L));
    ls.rule = fmt::format(
        "{} blocks of {} kernels in the forward; the backward repeats {} times, cut into {} equal "
        "parts",
        L, f.period, r.repeats, L);
  } else {
    ls.rule = fmt::format("{} blocks of {} forward and {} backward kernels (iteration {})", L,
                          f.period, r.period, ls.iteration);
  }
  for (std::size_t j = 0; j < bwd_idx.size(); ++j) {
    std::size_t unit;
    if (j < start)
      unit = static_cast<std::size_t>(L) + 1;
    else if (j >= start + period * static_cast<std::size_t>(L))
      unit = 0;
    else
      unit = static_cast<std::size_t>(L) - (j - start) / period;
    ls.backward[unit].push_back(bwd_idx[j]);
  }
  return ls;
}

// ---- the job

PipelineJob make_job(const Workload& w, const ParallelSpec& spec, const std::string& device_name) {
  PipelineJob job;
  job.spec = spec;
  job.layers = detect_layers(w);
  const LayerStructure& ls = job.layers;
  const int S = spec.pp, L = ls.layers, U = ls.units();
  std::vector<int> bounds = spec.partition;
  if (bounds.empty()) {
    if (S > L)
      throw InputError(fmt::format(
          "--parallel pp={}: the trace has {} blocks ({}); at most {} stages", S, L, ls.rule, L));
    bounds.push_back(0);
    for (int s = 1; s < S; ++s) bounds.push_back(1 + (s * L) / S);
    bounds.push_back(U);
  } else {
    if (bounds.front() != 0 || bounds.back() != U)
      throw InputError(fmt::format(
          "--parallel partition: must run from 0 to {} (the {} units: embedding, {} blocks, "
          "head)",
          U, U, L));
    for (std::size_t i = 1; i < bounds.size(); ++i)
      if (bounds[i] <= bounds[i - 1])
        throw InputError(fmt::format(
            "--parallel partition: boundaries must increase ({} then {}): every stage needs a unit",
            bounds[i - 1], bounds[i]));
  }
  auto flops = [&](const std::vector<std::uint32_t>& idx) {
    double f = 0, t = 0;
    for (auto i : idx) {
      f += w.kernels[i].work.flops;
      t += static_cast<double>(w.kernels[i].work.duration_ns);
    }
    return std::pair<double, double>(f, t);
  };
  double total_flops = 0, total_time = 0;
  for (int u = 0; u < U; ++u) {
    const auto [f, t] = flops(ls.forward[static_cast<std::size_t>(u)]);
    total_flops += f;
    total_time += t;
  }
  const bool by_flops = total_flops > 0;
  for (int s = 0; s < S; ++s) {
    StageWork st;
    st.first_unit = bounds[static_cast<std::size_t>(s)];
    st.end_unit = bounds[static_cast<std::size_t>(s) + 1];
    double f = 0, t = 0;
    for (int u = st.first_unit; u < st.end_unit; ++u) {
      const auto& fw = ls.forward[static_cast<std::size_t>(u)];
      const auto& bw = ls.backward[static_cast<std::size_t>(u)];
      st.forward.insert(st.forward.end(), fw.begin(), fw.end());
      st.backward.insert(st.backward.end(), bw.begin(), bw.end());
      const auto [uf, ut] = flops(fw);
      f += uf;
      t += ut;
    }
    std::sort(st.forward.begin(), st.forward.end());
    std::sort(st.backward.begin(), st.backward.end());
    st.parameter_share = by_flops ? f / total_flops : (total_time > 0 ? t / total_time : 1.0 / S);
    st.optimizer = ls.optimizer;
    st.optimizer_scale = st.parameter_share;
    if (st.forward.empty() && st.backward.empty())
      throw InputError(fmt::format("--parallel: stage {} (units {}..{}) has no kernels", s,
                                   st.first_unit, st.end_unit - 1));
    job.stages.push_back(std::move(st));
  }
  if (!by_flops)
    job.notes.push_back(
        "no forward FLOPs in the trace: each stage's parameter share is its share of forward time");
  job.intra = find_link(spec.link.empty() ? default_intra_link(device_name) : spec.link);
  job.inter = find_link(spec.network);
  // Activations: the hidden state crossing a stage boundary, read by the
  // first kernel of each block (its normalisation reads it and writes as
  // much): half that kernel's DRAM bytes, the median over the blocks.
  if (spec.activation_bytes >= 0) {
    job.activation_bytes = spec.activation_bytes;
  } else {
    std::vector<double> v;
    for (int u = 1; u <= L; ++u) {
      const auto& fw = ls.forward[static_cast<std::size_t>(u)];
      if (!fw.empty()) v.push_back(0.5 * w.kernels[fw.front()].work.dram_bytes);
    }
    std::sort(v.begin(), v.end());
    job.activation_bytes = v.empty() ? 0.0 : v[v.size() / 2];
    job.notes.push_back(fmt::format(
        "activation per microbatch estimated at {:.3g} MB (half the DRAM traffic of each block's "
        "first kernel; --parallel activation_bytes=B to give it)",
        job.activation_bytes * 1e-6));
  }
  // Gradients: the optimizer step moves each parameter's fp32 value, gradient
  // and two Adam moments in and three of them out: 28 bytes per parameter;
  // gradients are all-reduced in 2 bytes (bf16/fp16).
  if (spec.gradient_bytes >= 0) {
    job.gradient_bytes = spec.gradient_bytes;
  } else {
    double bytes = 0;
    for (auto i : ls.optimizer) bytes += w.kernels[i].work.dram_bytes;
    job.gradient_bytes = bytes / 28.0 * 2.0;
    if (spec.dp > 1)
      job.notes.push_back(fmt::format(
          "gradients estimated at {:.3g} MB ({:.3g} M parameters from the optimizer's DRAM "
          "traffic at 28 B each, reduced in 2 B; --parallel gradient_bytes=B to give it)",
          job.gradient_bytes * 1e-6, bytes / 28.0 * 1e-6));
  }
  return job;
}

}  // namespace dvfsim
